// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: any bytes -> the snapshot decoder the library exports,
 * cgstream_decoder_next(), called until it reports the end or an error,
 * as the tree does.  The input is copied to an odd address in a buffer
 * that ends where it ends, so an unaligned field read or a read past the
 * buffer is caught by the sanitizers.  Its oracle is its own reading of
 * format 2 (the uapi structs and the rules of <linux/cgroup_stat_stream.h>
 * and cgstream.h), written again here on purpose, not the library's code:
 *  - each record's verdict is the oracle's: 1 with the record's fields as
 *    the bytes say (a SNAPSHOT's, carried into every record after it; a
 *    SCHEMA's names; a CGROUP or REMOVED record's id, counts, every value
 *    through cgstream_rec_value() and cgstream_rec_get(), every device
 *    through cgstream_rec_device() and cgstream_rec_io_device()), or
 *    -EBADMSG for bytes that lie (a cut header, a size below 8, not a
 *    multiple of 8 or past the end, type 0, records out of their order, a
 *    change flag without a base, a base after the snapshot, a SCHEMA whose
 *    names do not end or whose device size is not 8 + 8 x its values, a
 *    cgroup with more values than the SCHEMA or whose devices do not fit),
 *    or -EPROTONOSUPPORT for a version other than 2;
 *  - the walk ends: at most len / 8 + 1 calls; 0 only at the end; an
 *    error leaves the offset and the decoder unchanged (the same call
 *    fails the same way again);
 *  - the same bytes cut in two at a record boundary, through one decoder,
 *    decode the same (a snapshot over two reads);
 *  - format 1's cgstream_records_next() never decodes them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "check.h"

#define MAX_NAMES 4096

/* the oracle's own state of a snapshot */
struct oracle {
	int phase;		/* 0 none, 1 SNAPSHOT, 2 SCHEMA, 3 REMOVED, 4 CGROUP */
	struct cgroup_stat_snapshot snap;
	uint32_t nv, ndv, dsize;
	const char *names[MAX_NAMES];	/* into the input */
	uint32_t nr_names;
};

static uint16_t u16_at(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* SCHEMA: 0 and its names into @o, or -EBADMSG */
static int oracle_schema(struct oracle *o, const unsigned char *p, uint32_t size)
{
	struct cgroup_stat_schema s;
	const unsigned char *q, *end = p + size;
	uint64_t n;

	if (o->phase != 1 || size < sizeof(s))
		return -EBADMSG;
	memcpy(&s, p, sizeof(s));
	if (s.device_size ? (uint64_t)s.device_size != 8 + 8 * (uint64_t)s.nr_device_values
			  : s.nr_device_values != 0)
		return -EBADMSG;
	n = (uint64_t)s.nr_values + s.nr_device_values;
	q = p + sizeof(s);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *nul = memchr(q, 0, (size_t)(end - q));

		if (!nul || nul == q)
			return -EBADMSG;
		if (i < MAX_NAMES)
			o->names[i] = (const char *)q;
		q = nul + 1;
	}
	o->nv = s.nr_values;
	o->ndv = s.nr_device_values;
	o->dsize = s.device_size;
	o->nr_names = n < MAX_NAMES ? (uint32_t)n : MAX_NAMES;
	o->phase = 2;
	return 0;
}

/* the verdict on the record at @p (@left bytes on): 1, -EBADMSG or
 * -EPROTONOSUPPORT, @o moved on when 1 */
static int oracle_next(struct oracle *o, const unsigned char *p, size_t left)
{
	uint32_t size;
	uint16_t type;

	if (left < 8)
		return -EBADMSG;
	size = u32_at(p);
	type = u16_at(p + 4);
	if (size < 8 || size % 8 || size > left || type == 0)
		return -EBADMSG;
	if (type == CGROUP_STAT_REC_SNAPSHOT) {
		struct cgroup_stat_snapshot s;
		bool changes;

		if (size < sizeof(s))
			return -EBADMSG;
		memcpy(&s, p, sizeof(s));
		if (s.version != CGROUP_STAT_STREAM_VERSION)
			return -EPROTONOSUPPORT;
		changes = s.hdr.flags & CGROUP_STAT_SNAPSHOT_F_CHANGES;
		if (changes != (s.base_seq != 0) || s.base_seq > s.seq)
			return -EBADMSG;
		o->snap = s;
		o->phase = 1;
		return 1;
	}
	if (type == CGROUP_STAT_REC_SCHEMA)
		return oracle_schema(o, p, size) < 0 ? -EBADMSG : 1;
	if (type == CGROUP_STAT_REC_CGROUP || type == CGROUP_STAT_REC_REMOVED) {
		struct cgroup_stat_cgroup c;

		if (o->phase < 2 || (type == CGROUP_STAT_REC_REMOVED && o->phase == 4))
			return -EBADMSG;
		if (size < sizeof(c))
			return -EBADMSG;
		memcpy(&c, p, sizeof(c));
		if (c.nr_values > o->nv || (c.nr_devices && !o->dsize) ||
		    sizeof(c) + 8 * (uint64_t)c.nr_values + (uint64_t)c.nr_devices * o->dsize > size)
			return -EBADMSG;
		o->phase = type == CGROUP_STAT_REC_REMOVED ? 3 : 4;
		return 1;
	}
	return o->phase ? 1 : -EBADMSG;	/* a later kernel's type: within a snapshot */
}

static uint32_t ctrl_bit(uint16_t c)
{
	return c == CGROUP_STAT_CTRL_CPU ? CGSTREAM_CTRL_CPU :
	       c == CGROUP_STAT_CTRL_MEMORY ? CGSTREAM_CTRL_MEMORY :
	       c == CGROUP_STAT_CTRL_IO ? CGSTREAM_CTRL_IO :
	       c == CGROUP_STAT_CTRL_PRESSURE ? CGSTREAM_CTRL_PRESSURE : 0;
}

/* a CGROUP or REMOVED record's values and devices, as the bytes have them */
static void check_cgroup(const struct oracle *o, const unsigned char *p,
			 const struct cgstream_rec *r)
{
	const unsigned char *vals = p + sizeof(struct cgroup_stat_cgroup);
	uint64_t v, dv[8];
	uint32_t major, minor;

	CHECK(r->id == u64_at(p + 8) && r->parent_id == u64_at(p + 16));
	CHECK(r->nr_values == u32_at(p + 24) && r->nr_devices == u32_at(p + 28));
	for (uint32_t i = 0; i < r->nr_values; i++) {
		CHECK(cgstream_rec_value(r, i, &v) == 0 && v == u64_at(vals + 8 * i));
		if (i < o->nr_names)	/* found: the first value of that name */
			CHECK(cgstream_rec_get(r, o->names[i], &v) == 0);
	}
	CHECK(cgstream_rec_value(r, r->nr_values, &v) == -ENOENT);
	for (uint32_t d = 0; d < r->nr_devices && d < 64; d++) {
		const unsigned char *dev = vals + 8 * (size_t)r->nr_values + (size_t)d * o->dsize;
		struct cgstream_io_device io;

		CHECK(cgstream_rec_device(r, d, &major, &minor, dv, 8) == 0);
		CHECK(major == u32_at(dev) && minor == u32_at(dev + 4));
		for (uint32_t k = 0; k < 8; k++)
			CHECK(dv[k] == (k < o->ndv ? u64_at(dev + 8 + 8 * k) : 0));
		CHECK(cgstream_rec_io_device(r, d, &io) == 0 && io.major == major);
	}
	CHECK(cgstream_rec_device(r, r->nr_devices, &major, &minor, NULL, 0) == -ENOENT);
}

/* a record the decoder gave: what the bytes and the oracle's state say */
static void check_record(const struct oracle *o, const unsigned char *p,
			 const struct cgstream_rec *r)
{
	uint16_t type = u16_at(p + 4);

	CHECK(r->size == u32_at(p) && r->type == type && r->flags == u16_at(p + 6));
	CHECK(r->data == p);
	if (type > CGROUP_STAT_REC_REMOVED) {
		CHECK(r->decoded == 0);
		return;
	}
	CHECK(r->decoded == 1 && r->version == CGROUP_STAT_STREAM_VERSION);
	CHECK(r->controller == ctrl_bit(o->snap.controller));
	CHECK(r->seq == o->snap.seq && r->time_usec == o->snap.time_usec);
	CHECK(r->base_seq == o->snap.base_seq && r->skipped == o->snap.skipped);
	CHECK(r->snapshot_flags == o->snap.hdr.flags);
	if (type == CGROUP_STAT_REC_SNAPSHOT)
		return;
	CHECK(r->schema_values == o->nv && r->device_values == o->ndv && r->device_size == o->dsize);
	for (uint32_t i = 0; i < o->nr_names; i++)
		CHECK(!strcmp(i < o->nv ? r->names[i] : r->device_names[i - o->nv], o->names[i]));
	if (type != CGROUP_STAT_REC_SCHEMA)
		check_cgroup(o, p, r);
}

/*
 * Decode @buf[0..@len) with @d (and @o, its oracle), checking each record;
 * the boundaries into @ends (the offsets after each record), their count
 * returned.
 */
static size_t walk(struct cgstream_decoder *d, struct oracle *o, const unsigned char *buf,
		   size_t len, size_t *ends, size_t max_ends)
{
	size_t off = 0, calls = 0, n = 0;

	for (;;) {
		struct cgstream_rec rec;
		struct oracle before = *o;
		int want = off == len ? 0 : oracle_next(o, buf + off, len - off);
		size_t old = off;
		int r;

		CHECK(++calls <= len / 8 + 2);
		r = cgstream_decoder_next(d, buf, len, &off, &rec, sizeof(rec));
		CHECK(r == want);
		if (r == 1) {
			CHECK(off == old + u32_at(buf + old) && off <= len);
			check_record(o, buf + old, &rec);
			if (n < max_ends)
				ends[n++] = off;
			continue;
		}
		CHECK(off == old);
		if (r < 0) {
			/* nothing moved: the same call fails the same way */
			*o = before;
			CHECK(cgstream_decoder_next(d, buf, len, &off, &rec, sizeof(rec)) == r);
			CHECK(off == old);
		}
		return n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *mem = malloc(size + 1), *buf = mem + 1;
	static size_t ends[1 << 16];
	struct cgstream_decoder *d, *d2;
	struct cgstream_record old;
	struct oracle o = { 0 }, o2 = { 0 };
	size_t n, cut, off = 0;

	CHECK(mem);
	if (size)
		memcpy(buf, data, size);
	CHECK(cgstream_decoder_new(&d) == 0 && cgstream_decoder_new(&d2) == 0);
	n = walk(d, &o, buf, size, ends, sizeof(ends) / sizeof(ends[0]));
	/* the same, cut at the boundary nearest the middle: two reads */
	cut = 0;
	for (size_t i = 0; i < n; i++)
		if (ends[i] <= size / 2)
			cut = ends[i];
	walk(d2, &o2, buf, cut, ends, 0);
	walk(d2, &o2, buf + cut, size - cut, ends, 0);
	CHECK(cgstream_records_next(buf, size, &off, &old, sizeof(old)) ==
	      (size ? -EPROTONOSUPPORT : 0));
	cgstream_decoder_free(d);
	cgstream_decoder_free(d2);
	free(mem);
	return 0;
}
