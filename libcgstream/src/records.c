// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one decoder of the kernel's binary records (the *.stat.stream.subtree
 * files), exported as cgstream_records_next(): the tree reads its
 * snapshots with it, and so do the stress tool and the benchmark, so that
 * they test and measure the reader users run.
 *
 * Records are host byte order and only grow at the end; new kinds come as
 * new types.  So the decoder steps by each record's size, reads what its
 * controller's table (fields.c) describes and skips types it does not
 * know.  It never trusts a size or a count: a size below the smallest
 * header would never move on, one past the buffer would read beyond it,
 * and a KEYS record's names and an IO record's devices must lie within
 * the record.  Fields are copied out with memcpy(): a record need not be
 * 8-byte aligned (nor its values).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define CGS_RECORD_SIZE_1_2	sizeof(struct cgstream_record)
#define CGS_REC_HDR(p, f)	cgs_rec_u64(p, offsetof(struct cgroup_stat_stream_header, f))
#define CGS_KEYS_NAMES		offsetof(struct cgroup_stat_stream_keys, names)
#define CGS_IO_DEVICES		offsetof(struct cgroup_stat_stream_io, devices)
#define CGS_IO_DEVICE_SIZE	sizeof(struct cgroup_stat_stream_io_device)

static uint64_t cgs_rec_u64(const unsigned char *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, rec + off, sizeof(v));
	return v;
}

/* CPU: its fields as a sample */
static void cgs_record_cpu(const unsigned char *p, struct cgstream_record *rec)
{
	struct cgstream_sample *s = &rec->sample;

	for (size_t i = 0; i < cgs_cpu.n_fields; i++) {
		const struct cgs_field *f = &cgs_cpu.fields[i];
		uint64_t v;

		if (!f->record_off || (f->record_flag && !(rec->flags & f->record_flag)))
			continue;
		v = cgs_rec_u64(p, f->record_off);
		memcpy((char *)s + f->sample_off, &v, sizeof(v));
		s->present |= f->bit;
	}
}

/* KEYS: nr_keys NUL-terminated names, each ending within the record */
static int cgs_record_keys(const unsigned char *p, size_t size, struct cgstream_record *rec)
{
	uint16_t for_type, nr;
	size_t off = CGS_KEYS_NAMES;

	memcpy(&for_type, p + offsetof(struct cgroup_stat_stream_keys, for_type), 2);
	memcpy(&nr, p + offsetof(struct cgroup_stat_stream_keys, nr_keys), 2);
	for (unsigned int i = 0; i < nr; i++) {
		const unsigned char *nul = memchr(p + off, '\0', size - off);

		if (!nul)
			return -EBADMSG;	/* a name running past the record */
		off = (size_t)(nul - p) + 1;
	}
	rec->count = nr;
	rec->for_type = for_type;
	rec->items = p + CGS_KEYS_NAMES;
	return 0;
}

/* the type's own part, past the common header; -EBADMSG when it lies */
static int cgs_record_body(const unsigned char *p, size_t size, struct cgstream_record *rec)
{
	uint32_t nr;

	switch (rec->type) {
	case CGROUP_STAT_STREAM_RECORD_CPU:
		cgs_record_cpu(p, rec);
		return 0;
	case CGROUP_STAT_STREAM_RECORD_MEMORY:
		if ((size - CGS_RECORD_HDR_SIZE) % sizeof(uint64_t))
			return -EBADMSG;
		rec->count = (uint32_t)((size - CGS_RECORD_HDR_SIZE) / sizeof(uint64_t));
		rec->items = p + CGS_RECORD_HDR_SIZE;
		return 0;
	case CGROUP_STAT_STREAM_RECORD_IO:
		memcpy(&nr, p + offsetof(struct cgroup_stat_stream_io, nr_devices), sizeof(nr));
		if (nr > (size - CGS_IO_DEVICES) / CGS_IO_DEVICE_SIZE)
			return -EBADMSG;
		rec->count = nr;
		rec->items = p + CGS_IO_DEVICES;
		return 0;
	}
	return 0;
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
	int r = 0;

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
	if (type == CGROUP_STAT_STREAM_RECORD_KEYS) {
		r = cgs_record_keys(p, size, &rec);
		rec.decoded = 1;
	} else if (c) {
		rec.cgroup_id = CGS_REC_HDR(p, cgroup_id);
		rec.parent_id = CGS_REC_HDR(p, parent_id);
		rec.seq = CGS_REC_HDR(p, flush_seq);
		rec.flush_time_usec = CGS_REC_HDR(p, flush_time_usec);
		r = cgs_record_body(p, size, &rec);
		rec.decoded = 1;
	}
	if (r < 0)
		return r;
	/* the caller's struct may be older: the prefix, its sample cut to fit */
	memcpy(out, &rec, offsetof(struct cgstream_record, sample));
	cgs_copy_sample(&out->sample, out_size - offsetof(struct cgstream_record, sample),
			&rec.sample);
	*off = pos + size;
	return 1;
}

CGS_EXPORT int cgstream_record_value(const struct cgstream_record *rec, unsigned int i,
				     uint64_t *value)
{
	if (!rec || !value || rec->type != CGROUP_STAT_STREAM_RECORD_MEMORY || !rec->decoded)
		return -EINVAL;
	if (i >= rec->count)
		return -ENOENT;
	memcpy(value, (const unsigned char *)rec->items + (size_t)i * sizeof(*value),
	       sizeof(*value));
	return 0;
}

CGS_EXPORT int cgstream_record_device(const struct cgstream_record *rec, unsigned int i,
				      struct cgstream_io_device *dev)
{
	struct cgroup_stat_stream_io_device d;
	struct cgstream_io_device out = { 0 };

	if (!rec || !dev || rec->type != CGROUP_STAT_STREAM_RECORD_IO || !rec->decoded)
		return -EINVAL;
	if (i >= rec->count)
		return -ENOENT;
	memcpy(&d, (const unsigned char *)rec->items + (size_t)i * sizeof(d), sizeof(d));
	out.major = d.major;
	out.minor = d.minor;
	/* the counters by fields.c's io table */
	for (size_t k = 0; k < cgs_io.n_dev_fields; k++)
		memcpy((char *)&out + cgs_io.dev_fields[k].dev_off,
		       (const char *)&d + cgs_io.dev_fields[k].record_off, sizeof(uint64_t));
	*dev = out;
	return 0;
}
