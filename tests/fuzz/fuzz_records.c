// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: any bytes -> the cpu.stat.stream.subtree decoder,
 * cgs_subtree_next(), called until it reports the end or an error, as
 * the tree does.  The input is copied to an odd address in a buffer that
 * ends where it ends, so an unaligned field read or a read past the
 * buffer is caught by the sanitizers.  It asserts:
 *  - the result is 1, 0 or -EBADMSG, and the walk ends: at most
 *    len / CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0 + 1 calls (each record
 *    it returns is at least that long);
 *  - with 1 the offset strictly increases and stays within the buffer;
 *    the record it returned is the first CPU record at or after the old
 *    offset when stepping by the size fields, lies within [old, new), is
 *    at least the first CPU size, and its fields, present bits and
 *    bandwidth flag are what the bytes say;
 *  - with 0 the offset is the buffer's end; with -EBADMSG it is unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "check.h"

typedef struct cgroup_stat_stream_record rec_t;

#define BASE_BITS (CGSTREAM_F_CGROUP_ID | CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | \
		   CGSTREAM_F_USAGE | CGSTREAM_F_USER | CGSTREAM_F_SYSTEM | CGSTREAM_F_NICE)
#define BW_BITS (CGSTREAM_F_NR_PERIODS | CGSTREAM_F_NR_THROTTLED | CGSTREAM_F_THROTTLED | \
		 CGSTREAM_F_NR_BURSTS | CGSTREAM_F_BURST)

/* the returned record ends at @end: find its start by the size fields */
static void check_record(const unsigned char *buf, size_t from, size_t end,
			 const struct cgs_subtree_rec *out)
{
	const struct cgstream_sample *s = &out->sample;
	size_t pos = from;
	rec_t r;

	for (;;) {
		uint16_t size, type;

		CHECK(pos + 4 <= end);
		memcpy(&size, buf + pos, 2);
		memcpy(&type, buf + pos + 2, 2);
		CHECK(size >= 8 && pos + size <= end);
		if (type == CGROUP_STAT_STREAM_RECORD_CPU) {
			CHECK(pos + size == end);
			CHECK(size >= CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
			break;
		}
		pos += size;
	}
	memcpy(&r, buf + pos, sizeof(r));

	CHECK(out->cgroup_id == r.cgroup_id && out->parent_id == r.parent_id);
	CHECK(s->cgroup_id == r.cgroup_id && s->seq == r.flush_seq);
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
		struct cgs_subtree_rec rec;
		size_t old = off;

		CHECK(++calls <= size / CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0 + 1);
		r = cgs_subtree_next(buf, size, &off, &rec);
		CHECK(r == 1 || r == 0 || r == -EBADMSG);
		if (r == 1) {
			CHECK(off > old && off <= size);
			CHECK(off - old >= CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
			check_record(buf, old, off, &rec);
			continue;
		}
		CHECK(r == 0 ? off == size : off == old);
		break;
	}
	free(mem);
	return 0;
}
