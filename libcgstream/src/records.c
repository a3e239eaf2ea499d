// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one decoder of the kernel's binary records (cpu.stat.stream.subtree),
 * exported as cgstream_records_next(): the tree reads its snapshots with
 * it, and so do the stress tool and the benchmark, so that they test and
 * measure the reader users run.
 *
 * Records are host byte order and only grow at the end; new kinds come as
 * new types.  So the decoder steps by each record's size, reads the
 * fields its controller's table (fields.c) names and skips types it does
 * not know.  It never trusts a size: one below the smallest header would
 * never move on, one past the buffer would read beyond it.  Fields are
 * copied out with memcpy(): a future record size need not keep the next
 * record 8-byte aligned.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define CGS_RECORD_SIZE_1_2	sizeof(struct cgstream_record)
#define CGS_REC_HDR(p, f)	cgs_rec_u64(p, offsetof(struct cgroup_stat_stream_record, f))

static uint64_t cgs_rec_u64(const unsigned char *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, rec + off, sizeof(v));
	return v;
}

/* a record of @c's type, at least its first size: its fields as a sample */
static void cgs_record_decode(const struct cgs_controller *c, const unsigned char *p,
			      struct cgstream_record *rec)
{
	struct cgstream_sample *s = &rec->sample;

	rec->decoded = 1;
	rec->cgroup_id = CGS_REC_HDR(p, cgroup_id);
	rec->parent_id = CGS_REC_HDR(p, parent_id);
	for (size_t i = 0; i < c->n_fields; i++) {
		const struct cgs_field *f = &c->fields[i];
		uint64_t v;

		if (!f->record_off || (f->record_flag && !(rec->flags & f->record_flag)))
			continue;
		v = cgs_rec_u64(p, f->record_off);
		memcpy((char *)s + f->sample_off, &v, sizeof(v));
		s->present |= f->bit;
	}
}

CGS_EXPORT int cgstream_records_next(const void *buf, size_t len, size_t *off,
				     struct cgstream_record *out, size_t out_size)
{
	const struct cgs_controller *c;
	struct cgstream_record rec = { 0 };
	const unsigned char *p;
	size_t pos, hdr;
	uint16_t size, type;
	uint32_t flags;

	if (!off || !out || out_size < CGS_RECORD_SIZE_1_2 || (!buf && len) || *off > len)
		return -EINVAL;
	pos = *off;
	if (pos == len)
		return 0;
	p = (const unsigned char *)buf + pos;
	if (len - pos < CGS_RECORD_MIN_SIZE)
		return -EBADMSG;	/* a cut header */
	memcpy(&size, p, sizeof(size));
	memcpy(&type, p + 2, sizeof(type));
	memcpy(&flags, p + 4, sizeof(flags));
	c = cgs_controller_of_record(type);
	hdr = c ? c->record_min_size : CGS_RECORD_MIN_SIZE;
	if (size < hdr || size > len - pos)
		return -EBADMSG;

	rec.size = size;
	rec.type = type;
	rec.flags = flags;
	rec.data = p;
	if (c)
		cgs_record_decode(c, p, &rec);
	/* the caller's struct may be older: the prefix, its sample cut to fit */
	memcpy(out, &rec, offsetof(struct cgstream_record, sample));
	cgs_copy_sample(&out->sample, out_size - offsetof(struct cgstream_record, sample),
			&rec.sample);
	*off = pos + size;
	return 1;
}
