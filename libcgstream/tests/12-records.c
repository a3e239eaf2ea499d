// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The exported snapshot decoder, cgstream_decoder_next() and its record
 * calls, on format-2 snapshots written by hand (snapshot-writer.h): a cpu
 * snapshot, an io one with devices and a device value the API has no
 * field for, a snapshot over two buffers, records of a later kernel
 * (longer, unknown types), an odd address; every rejection rule, each
 * leaving the offset and the decoder as they were (the rest still
 * decodes); format 1's calls failing on format 2.
 */
#include "testutil.h"
#include "snapshot-writer.h"

static const char *const cpu_names[] = {
	"usage_usec", "user_usec", "system_usec", "nice_usec", "nr_periods",
	"nr_throttled", "throttled_usec", "nr_bursts", "burst_usec",
};
static const char *const io_dev_names[] = {
	"rbytes", "wbytes", "rios", "wios", "dbytes", "dios", "later_kernels_value",
};

static struct cgstream_decoder *dec(void)
{
	struct cgstream_decoder *d;

	T_EQ(cgstream_decoder_new(&d), 0);
	return d;
}

static int next(struct cgstream_decoder *d, const struct sw *w, size_t *off,
		struct cgstream_rec *r)
{
	return cgstream_decoder_next(d, w->p, w->len, off, r, sizeof(*r));
}

/* a cpu snapshot: the root with bandwidth values, a child without */
static void cpu_snapshot(struct sw *w, uint16_t flags, uint64_t base)
{
	const uint64_t root[9] = { 100, 60, 40, 0, 5, 1, 300, 0, 0 }, child[4] = { 7, 5, 2, 0 };

	sw_snapshot(w, CGROUP_STAT_CTRL_CPU, flags, 12, 5000000, base, 3);
	sw_schema(w, cpu_names, 9, NULL, 0);
	sw_cgroup(w, CGROUP_STAT_REC_REMOVED, 0, 77, 10, child, 4, NULL, 0, 0, 0);
	sw_cgroup(w, CGROUP_STAT_REC_CGROUP, 0, 10, 0, root, 9, NULL, 0, 0, 0);
	sw_other(w, 99, 24);	/* a kind of a later kernel */
	sw_cgroup(w, CGROUP_STAT_REC_CGROUP, CGROUP_STAT_CGROUP_F_NEW, 11, 10, child, 4, NULL, 0,
		  0, 16);
}

static void test_cpu(void)
{
	struct cgstream_decoder *d = dec();
	struct sw w = { 0 };
	struct cgstream_rec r;
	size_t off = 0;
	uint64_t v;

	cpu_snapshot(&w, CGROUP_STAT_SNAPSHOT_F_CHANGES | CGROUP_STAT_SNAPSHOT_F_LOST, 9);
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.type, CGSTREAM_REC_SNAPSHOT);
	T_EQ(r.size, 48);
	T_EQ(r.controller, CGSTREAM_CTRL_CPU);
	T_EQ(r.version, 2);
	T_EQ(r.seq, 12);
	T_EQ(r.time_usec, 5000000);
	T_EQ(r.base_seq, 9);
	T_EQ(r.skipped, 3);
	T_EQ(r.snapshot_flags, CGSTREAM_SNAPSHOT_F_CHANGES | CGSTREAM_SNAPSHOT_F_LOST);
	T_EQ(cgstream_rec_value(&r, 0, &v), -EINVAL);	/* not a cgroup's */
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.type, CGSTREAM_REC_SCHEMA);
	T_EQ(r.schema_values, 9);
	T_EQ(r.device_values, 0);
	T_ASSERT(!strcmp(r.names[8], "burst_usec"));
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.type, CGSTREAM_REC_REMOVED);
	T_EQ(r.id, 77);
	T_EQ(r.seq, 12);	/* the snapshot's, in every record */
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.type, CGSTREAM_REC_CGROUP);
	T_EQ(r.id, 10);
	T_EQ(r.parent_id, 0);
	T_EQ(r.nr_values, 9);
	T_EQ(cgstream_rec_value(&r, 6, &v), 0);
	T_EQ(v, 300);
	T_EQ(cgstream_rec_value(&r, 9, &v), -ENOENT);
	T_EQ(cgstream_rec_get(&r, "throttled_usec", &v), 0);
	T_EQ(v, 300);
	T_EQ(cgstream_rec_get(&r, "core_sched.force_idle_usec", &v), -ENOENT);
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.type, 99);	/* stepped over */
	T_EQ(r.decoded, 0);
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(r.id, 11);
	T_EQ(r.flags, CGSTREAM_CGROUP_F_NEW);
	T_EQ(r.nr_values, 4);
	T_EQ(r.size, 32 + 32 + 16);	/* a later kernel's longer record */
	T_EQ(cgstream_rec_get(&r, "nr_periods", &v), -ENOENT);	/* not this cgroup's */
	T_EQ(cgstream_rec_get(&r, "user_usec", &v), 0);
	T_EQ(v, 5);
	T_EQ(next(d, &w, &off, &r), 0);
	T_EQ(off, w.len);
	T_EQ(next(d, &w, &off, &r), 0);
	cgstream_decoder_free(d);
	free(w.p);
}

/* io: devices, a value struct cgstream_io_device has no field for, odd address */
static void test_io(void)
{
	const uint64_t d0[7] = { 1, 2, 3, 4, 5, 6, 7 }, d1[7] = { 10, 20, 30, 40, 50, 60, 70 };
	const struct sw_dev devs[2] = { { 8, 0, d0 }, { 259, 1, d1 } };
	struct cgstream_decoder *d = dec();
	struct cgstream_io_device dev;
	struct sw w = { 0 };
	struct cgstream_rec r;
	uint32_t major, minor;
	uint64_t vals[8];
	unsigned char *odd;
	size_t off = 0;

	sw_snapshot(&w, CGROUP_STAT_CTRL_IO, 0, 4, 1, 0, 0);
	sw_schema(&w, NULL, 0, io_dev_names, 7);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, CGROUP_STAT_CGROUP_F_PARTIAL, 5, 0, NULL, 0, devs, 2,
		  7, 0);
	odd = malloc(w.len + 1);
	memcpy(odd + 1, w.p, w.len);
	T_EQ(cgstream_decoder_next(d, odd + 1, w.len, &off, &r, sizeof(r)), 1);
	T_EQ(r.controller, CGSTREAM_CTRL_IO);
	T_EQ(cgstream_decoder_next(d, odd + 1, w.len, &off, &r, sizeof(r)), 1);
	T_EQ(r.device_values, 7);
	T_EQ(r.device_size, 64);
	T_ASSERT(!strcmp(r.device_names[6], "later_kernels_value"));
	T_EQ(cgstream_decoder_next(d, odd + 1, w.len, &off, &r, sizeof(r)), 1);
	T_EQ(r.nr_devices, 2);
	T_EQ(r.flags, CGSTREAM_CGROUP_F_PARTIAL);
	T_EQ(cgstream_rec_device(&r, 1, &major, &minor, vals, 8), 0);
	T_EQ(major, 259);
	T_EQ(minor, 1);
	T_EQ(vals[6], 70);
	T_EQ(vals[7], 0);	/* past the SCHEMA's: 0 */
	T_EQ(cgstream_rec_device(&r, 2, &major, &minor, NULL, 0), -ENOENT);
	T_EQ(cgstream_rec_io_device(&r, 0, &dev), 0);
	T_EQ(dev.major, 8);
	T_EQ(dev.rbytes, 1);
	T_EQ(dev.dios, 6);
	T_EQ(cgstream_decoder_next(d, odd + 1, w.len, &off, &r, sizeof(r)), 0);
	free(odd);
	cgstream_decoder_free(d);
	free(w.p);
}

/* one snapshot in two reads: the SCHEMA from the first, kept */
static void test_two_buffers(void)
{
	struct cgstream_decoder *d = dec();
	struct sw w = { 0 };
	struct cgstream_rec r;
	size_t off = 0, cut;
	uint64_t v;

	cpu_snapshot(&w, 0, 0);
	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(next(d, &w, &off, &r), 1);
	cut = off;
	T_EQ(cgstream_decoder_next(d, w.p, cut, &off, &r, sizeof(r)), 0);	/* read 1 ends */
	off = 0;
	T_EQ(cgstream_decoder_next(d, w.p + cut, w.len - cut, &off, &r, sizeof(r)), 1);
	T_EQ(r.type, CGSTREAM_REC_REMOVED);
	T_EQ(r.seq, 12);
	T_EQ(cgstream_decoder_next(d, w.p + cut, w.len - cut, &off, &r, sizeof(r)), 1);
	T_EQ(cgstream_rec_get(&r, "usage_usec", &v), 0);
	T_EQ(v, 100);
	cgstream_decoder_free(d);
	free(w.p);
}

/* @w[@at] holds bytes no decoder may take: -@err, nothing moves; then the
 * same decoder goes on with @good */
static void rejected(const char *what, const struct sw *w, size_t at, int err, bool prefix)
{
	struct cgstream_decoder *d = dec();
	struct cgstream_rec r;
	size_t off = 0;
	int ret;

	while (prefix && off < at)
		T_EQ(next(d, w, &off, &r), 1);
	ret = next(d, w, &off, &r);
	if (ret != err)
		T_FAIL("%s: %d (%s), want %d", what, ret, strerror(-ret), err);
	T_EQ(off, at);
	cgstream_decoder_free(d);
}

/* a good snapshot's first records, then @tail */
static struct sw head_and(void)
{
	struct sw w = { 0 };

	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 2, 1, 0, 0);
	sw_schema(&w, cpu_names, 4, NULL, 0);
	return w;
}

static void test_rejected_headers(void)
{
	const uint64_t vals[4] = { 1, 2, 3, 4 };
	struct sw w = head_and();
	size_t at = w.len;
	uint32_t bad;

	/* a cut header, sizes that never move on or run past the end */
	w.len = at + 4;
	rejected("cut header", &w, at, -EBADMSG, true);
	w.len = at;
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	for (uint32_t i = 0; i < 4; i++) {
		const uint32_t sizes[4] = { 0, 4, 60, 72 };

		memcpy(w.p + at, &sizes[i], 4);
		rejected("size", &w, at, -EBADMSG, true);
	}
	bad = 64;
	memcpy(w.p + at, &bad, 4);
	w.len = at + 56;	/* cut in the middle */
	rejected("cut record", &w, at, -EBADMSG, true);
	memset(w.p + at, 0, 64);
	w.len = at + 64;
	rejected("a zeroed buffer", &w, at, -EBADMSG, true);
	free(w.p);
}

static void test_rejected_order(void)
{
	const uint64_t vals[4] = { 1, 2, 3, 4 };
	struct sw w = { 0 };
	size_t at;

	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	rejected("CGROUP first", &w, 0, -EBADMSG, false);
	w.len = 0;
	sw_other(&w, 99, 16);
	rejected("an unknown type before the SNAPSHOT", &w, 0, -EBADMSG, false);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 2, 1, 0, 0);
	at = w.len;
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	rejected("CGROUP before the SCHEMA", &w, at, -EBADMSG, true);
	free(w.p);
	w = head_and();
	at = w.len;
	sw_schema(&w, cpu_names, 4, NULL, 0);
	rejected("a second SCHEMA", &w, at, -EBADMSG, true);
	w.len = at;
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	at = w.len;
	sw_cgroup(&w, CGROUP_STAT_REC_REMOVED, 0, 2, 1, vals, 4, NULL, 0, 0, 0);
	rejected("REMOVED after CGROUP", &w, at, -EBADMSG, true);
	free(w.p);
}

static void test_rejected_snapshot(void)
{
	struct sw w = { 0 };
	uint16_t version = 3;

	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, CGROUP_STAT_SNAPSHOT_F_CHANGES, 5, 1, 0, 0);
	rejected("a change snapshot without a base", &w, 0, -EBADMSG, false);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 5, 1, 4, 0);
	rejected("a base without the flag", &w, 0, -EBADMSG, false);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, CGROUP_STAT_SNAPSHOT_F_CHANGES, 5, 1, 6, 0);
	rejected("a base after the snapshot", &w, 0, -EBADMSG, false);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 5, 1, 0, 0);
	memcpy(w.p + offsetof(struct cgroup_stat_snapshot, version), &version, 2);
	rejected("version 3", &w, 0, -EPROTONOSUPPORT, false);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 5, 1, 0, 0);
	((struct cgroup_stat_rec *)(void *)w.p)->size = 40;
	w.len = 40;
	rejected("a short SNAPSHOT", &w, 0, -EBADMSG, false);
	free(w.p);
}

static void test_rejected_schema(void)
{
	static const char *const empty[] = { "usage_usec", "" };
	struct sw w = { 0 };
	uint32_t v;
	size_t at;

	sw_snapshot(&w, CGROUP_STAT_CTRL_IO, 0, 2, 1, 0, 0);
	at = w.len;
	sw_schema(&w, NULL, 0, io_dev_names, 6);
	v = 48;	/* device_size is not 8 + 8 x 6 */
	memcpy(w.p + at + offsetof(struct cgroup_stat_schema, device_size), &v, 4);
	rejected("device size", &w, at, -EBADMSG, true);
	v = 0;	/* no devices, yet device values */
	memcpy(w.p + at + offsetof(struct cgroup_stat_schema, device_size), &v, 4);
	rejected("no device size", &w, at, -EBADMSG, true);
	w.len = at;
	sw_schema(&w, cpu_names, 4, NULL, 0);
	v = 40;	/* more names than the record holds */
	memcpy(w.p + at + offsetof(struct cgroup_stat_schema, nr_values), &v, 4);
	rejected("names past the record", &w, at, -EBADMSG, true);
	v = 5;	/* one more: its name runs into the padding, NULs: empty */
	memcpy(w.p + at + offsetof(struct cgroup_stat_schema, nr_values), &v, 4);
	rejected("an empty name in the padding", &w, at, -EBADMSG, true);
	w.len = at;
	sw_schema(&w, empty, 2, NULL, 0);
	rejected("an empty name", &w, at, -EBADMSG, true);
	free(w.p);
}

static void test_rejected_cgroup(void)
{
	const uint64_t vals[6] = { 1, 2, 3, 4, 5, 6 }, dv[6] = { 0 };
	const struct sw_dev devs[1] = { { 8, 0, dv } };
	struct sw w = head_and();	/* 4 values */
	size_t at = w.len;
	uint32_t n;

	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 5, NULL, 0, 0, 0);
	rejected("more values than the SCHEMA", &w, at, -EBADMSG, true);
	w.len = at;
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	n = 1;	/* a device, with a SCHEMA of none */
	memcpy(w.p + at + offsetof(struct cgroup_stat_cgroup, nr_devices), &n, 4);
	rejected("devices without a device size", &w, at, -EBADMSG, true);
	free(w.p);
	w = (struct sw){ 0 };
	sw_snapshot(&w, CGROUP_STAT_CTRL_IO, 0, 2, 1, 0, 0);
	sw_schema(&w, NULL, 0, io_dev_names, 6);
	at = w.len;
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, NULL, 0, devs, 1, 6, 0);
	n = 2;	/* the devices do not fit */
	memcpy(w.p + at + offsetof(struct cgroup_stat_cgroup, nr_devices), &n, 4);
	rejected("devices past the record", &w, at, -EBADMSG, true);
	n = UINT32_MAX;
	memcpy(w.p + at + offsetof(struct cgroup_stat_cgroup, nr_devices), &n, 4);
	rejected("a huge device count", &w, at, -EBADMSG, true);
	free(w.p);
}

/* a failed record leaves the decoder as it was: the good one after it goes */
static void test_error_keeps_state(void)
{
	const uint64_t vals[4] = { 1, 2, 3, 4 };
	struct cgstream_decoder *d = dec();
	struct sw w = head_and(), bad = { 0 };
	struct cgstream_rec r;
	size_t off = 0, at;
	uint64_t v;

	T_EQ(next(d, &w, &off, &r), 1);
	T_EQ(next(d, &w, &off, &r), 1);
	at = off;
	sw_snapshot(&bad, CGROUP_STAT_CTRL_CPU, CGROUP_STAT_SNAPSHOT_F_CHANGES, 5, 1, 0, 0);
	T_EQ(cgstream_decoder_next(d, bad.p, bad.len, &(size_t){ 0 }, &r, sizeof(r)), -EBADMSG);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, vals, 4, NULL, 0, 0, 0);
	T_EQ(next(d, &w, &off, &r), 1);	/* the SCHEMA is still the one before */
	T_EQ(r.seq, 2);
	T_EQ(cgstream_rec_get(&r, "nice_usec", &v), 0);
	T_EQ(v, 4);
	T_ASSERT(off > at);
	T_EQ(cgstream_decoder_next(d, w.p, w.len, &off, &r, 8), -EINVAL);	/* too small */
	cgstream_decoder_free(d);
	free(w.p);
	free(bad.p);
}

/* 1.2's calls: no misreading of format 2 */
static void test_format1_gone(void)
{
	struct sw w = { 0 };
	struct cgstream_record old;
	struct cgstream_io_device dev;
	size_t off = 0;
	uint64_t v;

	cpu_snapshot(&w, 0, 0);
	T_EQ(cgstream_records_next(w.p, w.len, &off, &old, sizeof(old)), -EPROTONOSUPPORT);
	T_EQ(off, 0);
	off = w.len;
	T_EQ(cgstream_records_next(w.p, w.len, &off, &old, sizeof(old)), 0);
	memset(&old, 0, sizeof(old));
	T_EQ(cgstream_record_value(&old, 0, &v), -EINVAL);
	T_EQ(cgstream_record_device(&old, 0, &dev), -EINVAL);
	free(w.p);
}

int main(void)
{
	test_cpu();
	test_io();
	test_two_buffers();
	test_rejected_headers();
	test_rejected_order();
	test_rejected_snapshot();
	test_rejected_schema();
	test_rejected_cgroup();
	test_error_keeps_state();
	test_format1_gone();
	t_log("records: all passed");
	return 0;
}
