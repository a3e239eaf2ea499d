// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: any bytes -> the subtree record decoder the library
 * exports, cgstream_records_next(), called until it reports the end or an
 * error, as the tree does.  The input is copied to an odd address in a
 * buffer that ends where it ends, so an unaligned field read or a read
 * past the buffer is caught by the sanitizers.  Its oracle is its own
 * reading of the record layout (the uapi struct), not the library's field
 * table.  It asserts:
 *  - the result is 1, 0 or -EBADMSG, and the walk ends: at most
 *    len / 16 + 1 calls (no record is shorter than 16 bytes);
 *  - with 1 the offset strictly increases by the record's size field and
 *    stays within the buffer; a type-1 record is at least the first CPU
 *    size, and its fields, present bits and bandwidth flag are what the
 *    bytes say; a KEYS record's nr_keys names all end within it, and
 *    .items, .count, .for_type say so; a MEMORY record's values are whole
 *    u64s, each as cgstream_record_value() reads it; an IO record's
 *    nr_devices fit in it, each device as cgstream_record_device() reads
 *    it; the header (ids, seq, flush time) of CPU, MEMORY and IO records
 *    is the bytes'; any other type comes back undecoded, with no present
 *    bits;
 *  - with 0 the offset is the buffer's end; with -EBADMSG it is unchanged,
 *    and the bytes there are indeed no record: fewer than 16 left, a size
 *    below 16 (112 for CPU, 40 for MEMORY, 48 for IO) or past the end, a
 *    KEYS record whose names do not fit, a MEMORY record of a cut value,
 *    an IO record whose devices do not fit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "check.h"

typedef struct cgroup_stat_stream_record rec_t;

#define BASE_BITS (CGSTREAM_F_CGROUP_ID | CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | \
		   CGSTREAM_F_USAGE | CGSTREAM_F_USER | CGSTREAM_F_SYSTEM | CGSTREAM_F_NICE)
#define BW_BITS (CGSTREAM_F_NR_PERIODS | CGSTREAM_F_NR_THROTTLED | CGSTREAM_F_THROTTLED | \
		 CGSTREAM_F_NR_BURSTS | CGSTREAM_F_BURST)

#define MIN_SIZE 16u

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

#define HDR_SIZE	sizeof(struct cgroup_stat_stream_header)
#define IO_SIZE		sizeof(struct cgroup_stat_stream_io)
#define DEV_SIZE	sizeof(struct cgroup_stat_stream_io_device)

/* the end of @nr names from @p within @end, or NULL where one does not end */
static const unsigned char *names_end(const unsigned char *p, const unsigned char *end,
				      unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		while (p < end && *p)
			p++;
		if (p == end)
			return NULL;
		p++;
	}
	return p;
}

/* KEYS, MEMORY, IO: what the bytes say */
static void check_memio(const unsigned char *rec, uint16_t size, uint16_t type,
			const struct cgstream_record *out)
{
	struct cgstream_io_device dev;
	uint64_t v;

	CHECK(out->decoded == 1 && !out->sample.present);
	if (type == CGROUP_STAT_STREAM_RECORD_KEYS) {
		struct cgroup_stat_stream_keys k;

		memcpy(&k, rec, sizeof(k));
		CHECK(out->count == k.nr_keys && out->for_type == k.for_type);
		CHECK(out->items == rec + sizeof(k));
		CHECK(names_end(rec + sizeof(k), rec + size, k.nr_keys) != NULL);
		CHECK(cgstream_record_value(out, 0, &v) == -EINVAL);
		return;
	}
	{
		struct cgroup_stat_stream_header h;

		memcpy(&h, rec, sizeof(h));
		CHECK(out->cgroup_id == h.cgroup_id && out->parent_id == h.parent_id);
		CHECK(out->seq == h.flush_seq && out->flush_time_usec == h.flush_time_usec);
	}
	if (type == CGROUP_STAT_STREAM_RECORD_MEMORY) {
		CHECK(size >= HDR_SIZE && (size - HDR_SIZE) % 8 == 0);
		CHECK(out->count == (size - HDR_SIZE) / 8 && out->items == rec + HDR_SIZE);
		for (uint32_t i = 0; i < out->count; i++) {
			uint64_t want;

			memcpy(&want, rec + HDR_SIZE + 8 * i, 8);
			CHECK(cgstream_record_value(out, i, &v) == 0 && v == want);
		}
		CHECK(cgstream_record_value(out, out->count, &v) == -ENOENT);
		CHECK(cgstream_record_device(out, 0, &dev) == -EINVAL);
		return;
	}
	CHECK(size >= IO_SIZE);
	CHECK(out->count == u32_at(rec + HDR_SIZE) && out->items == rec + IO_SIZE);
	CHECK(out->count <= (size - IO_SIZE) / DEV_SIZE);
	for (uint32_t i = 0; i < out->count; i++) {
		struct cgroup_stat_stream_io_device d;

		memcpy(&d, rec + IO_SIZE + DEV_SIZE * i, sizeof(d));
		CHECK(cgstream_record_device(out, i, &dev) == 0);
		CHECK(dev.major == d.major && dev.minor == d.minor && dev.rbytes == d.rbytes &&
		      dev.wbytes == d.wbytes && dev.rios == d.rios && dev.wios == d.wios &&
		      dev.dbytes == d.dbytes && dev.dios == d.dios);
	}
	CHECK(cgstream_record_device(out, out->count, &dev) == -ENOENT);
	CHECK(cgstream_record_value(out, 0, &v) == -EINVAL);
}

/* the record at @buf[@from..), returned as @out */
static void check_record(const unsigned char *buf, size_t from, size_t end,
			 const struct cgstream_record *out)
{
	const struct cgstream_sample *s = &out->sample;
	uint16_t size = u16_at(buf + from), type = u16_at(buf + from + 2);
	rec_t r;

	CHECK(from + size == end && size >= MIN_SIZE);
	CHECK(out->size == size && out->type == type);
	CHECK(out->data == buf + from);
	if (type == CGROUP_STAT_STREAM_RECORD_KEYS || type == CGROUP_STAT_STREAM_RECORD_MEMORY ||
	    type == CGROUP_STAT_STREAM_RECORD_IO) {
		check_memio(buf + from, size, type, out);
		return;
	}
	if (type != CGROUP_STAT_STREAM_RECORD_CPU) {
		CHECK(!out->decoded && !s->present && !out->cgroup_id && !out->parent_id);
		CHECK(!out->count && !out->items && !out->seq);
		return;
	}
	CHECK(size >= CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
	memcpy(&r, buf + from, sizeof(r));
	CHECK(out->decoded == 1 && out->flags == r.flags);
	CHECK(out->cgroup_id == r.cgroup_id && out->parent_id == r.parent_id);
	CHECK(s->cgroup_id == r.cgroup_id && s->seq == r.flush_seq);
	CHECK(out->seq == r.flush_seq && out->flush_time_usec == r.flush_time_usec);
	CHECK(s->flush_time_usec == r.flush_time_usec && s->usage_usec == r.usage_usec);
	CHECK(s->user_usec == r.user_usec && s->system_usec == r.system_usec);
	CHECK(s->nice_usec == r.nice_usec && s->flush_missed == 0);
	if (r.flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) {
		CHECK(s->present == (BASE_BITS | BW_BITS));
		CHECK(s->nr_periods == r.nr_periods && s->nr_throttled == r.nr_throttled);
		CHECK(s->throttled_usec == r.throttled_usec);
		CHECK(s->nr_bursts == r.nr_bursts && s->burst_usec == r.burst_usec);
	} else {
		CHECK(s->present == BASE_BITS);
		CHECK(!s->nr_periods && !s->nr_throttled && !s->throttled_usec &&
		      !s->nr_bursts && !s->burst_usec);
	}
}

/* -EBADMSG at @pos: the bytes there are no record */
static void check_bad(const unsigned char *buf, size_t pos, size_t len)
{
	uint16_t size, type;

	if (len - pos < MIN_SIZE)
		return;
	size = u16_at(buf + pos);
	type = u16_at(buf + pos + 2);
	if (size < MIN_SIZE || size > len - pos)
		return;
	switch (type) {
	case CGROUP_STAT_STREAM_RECORD_CPU:
		CHECK(size < CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
		break;
	case CGROUP_STAT_STREAM_RECORD_KEYS:
		CHECK(!names_end(buf + pos + 16, buf + pos + size, u16_at(buf + pos + 10)));
		break;
	case CGROUP_STAT_STREAM_RECORD_MEMORY:
		CHECK(size < HDR_SIZE || (size - HDR_SIZE) % 8);
		break;
	case CGROUP_STAT_STREAM_RECORD_IO:
		CHECK(size < IO_SIZE || u32_at(buf + pos + HDR_SIZE) > (size - IO_SIZE) / DEV_SIZE);
		break;
	default:
		CHECK(0);	/* an unknown kind is never bad */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *mem = malloc(size + 1), *buf = mem + 1;
	size_t off = 0, calls = 0;
	int r;

	CHECK(mem);
	if (size)
		memcpy(buf, data, size);
	for (;;) {
		struct cgstream_record rec;
		size_t old = off;

		CHECK(++calls <= size / MIN_SIZE + 1);
		r = cgstream_records_next(buf, size, &off, &rec, sizeof(rec));
		CHECK(r == 1 || r == 0 || r == -EBADMSG);
		if (r == 1) {
			CHECK(off > old && off <= size);
			check_record(buf, old, off, &rec);
			continue;
		}
		CHECK(r == 0 ? off == size : off == old);
		if (r < 0)
			check_bad(buf, old, size);
		break;
	}
	free(mem);
	return 0;
}
