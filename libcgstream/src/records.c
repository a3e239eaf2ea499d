// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one decoder of the kernel's snapshots (the <ctrl>.stat.stream.subtree
 * files, format 2), exported as cgstream_decoder_next(): the tree reads
 * its snapshots with it, and so do the stress tool and the benchmark, so
 * that they test and measure the reader users run.
 *
 * Every record starts with an 8-byte header (size, type, flags); a
 * snapshot is a SNAPSHOT record, a SCHEMA record naming the values, the
 * REMOVED records, then the CGROUP records.  One controller is like
 * another: the SCHEMA says what the values are, so the decoder has no
 * per-controller layout.  A snapshot may span several reads: the decoder
 * keeps its SNAPSHOT's fields and a copy of its SCHEMA from one buffer to
 * the next.
 *
 * It never trusts a size or a count: a size below the header would never
 * move on, one past the buffer would read beyond it, a CGROUP record's
 * values and devices must lie within it and agree with the SCHEMA, and
 * the order of the records is checked, since a reader that applied a
 * CGROUP record without its SCHEMA would label values with the wrong
 * names.  Fields are copied out with memcpy(): a record need not be
 * 8-byte aligned in the caller's buffer.  On an error nothing changes,
 * neither the offset nor the decoder.
 *
 * Format 1 (1.2's cgstream_records_next()) is gone from the kernel: its
 * calls stay for 1.2's binaries and fail rather than misread format 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* what the library's names of the kernel's numbers are */
_Static_assert(CGSTREAM_REC_SNAPSHOT == CGROUP_STAT_REC_SNAPSHOT &&
	       CGSTREAM_REC_SCHEMA == CGROUP_STAT_REC_SCHEMA &&
	       CGSTREAM_REC_CGROUP == CGROUP_STAT_REC_CGROUP &&
	       CGSTREAM_REC_REMOVED == CGROUP_STAT_REC_REMOVED, "record types");
_Static_assert(CGSTREAM_SNAPSHOT_F_CHANGES == CGROUP_STAT_SNAPSHOT_F_CHANGES &&
	       CGSTREAM_SNAPSHOT_F_LOST == CGROUP_STAT_SNAPSHOT_F_LOST &&
	       CGSTREAM_SNAPSHOT_F_STOPPED == CGROUP_STAT_SNAPSHOT_F_STOPPED, "snapshot flags");
_Static_assert(CGSTREAM_CGROUP_F_NEW == CGROUP_STAT_CGROUP_F_NEW &&
	       CGSTREAM_CGROUP_F_LATER == CGROUP_STAT_CGROUP_F_LATER &&
	       CGSTREAM_CGROUP_F_PARTIAL == CGROUP_STAT_CGROUP_F_PARTIAL, "cgroup flags");

#define CGS_REC_HDR		sizeof(struct cgroup_stat_rec)
#define CGS_REC_SNAPSHOT	sizeof(struct cgroup_stat_snapshot)
#define CGS_REC_SCHEMA		offsetof(struct cgroup_stat_schema, names)
#define CGS_REC_SIZE_1_3	sizeof(struct cgstream_rec)
#define CGS_FIELD(p, type, f)	(p + offsetof(type, f))

/* where the decoder is in a snapshot: the records that may come next */
enum cgs_dec_phase {
	CGS_DEC_NONE,		/* a SNAPSHOT */
	CGS_DEC_SNAPSHOT,	/* its SCHEMA */
	CGS_DEC_SCHEMA,		/* REMOVED or CGROUP records */
	CGS_DEC_REMOVED,	/* more of them */
	CGS_DEC_CGROUPS,	/* CGROUP records only */
};

struct cgstream_decoder {
	enum cgs_dec_phase phase;
	struct cgstream_rec snap;	/* the SNAPSHOT's and SCHEMA's fields */
	uint64_t schema_gen;		/* bumped when the SCHEMA's names change */
	char *blob;			/* the SCHEMA's names, as the kernel wrote them */
	size_t blob_len, blob_cap;
	uint64_t blob_nr;		/* how many */
	uint32_t blob_nv;		/* of which the cgroups' values */
	const char **names;		/* into blob: values', then devices' */
	size_t names_cap;
};

static uint16_t cgs_u16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t cgs_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t cgs_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

CGS_EXPORT int cgstream_decoder_new(struct cgstream_decoder **ret)
{
	struct cgstream_decoder *d;

	if (!ret)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*ret = d;
	return 0;
}

CGS_EXPORT void cgstream_decoder_free(struct cgstream_decoder *d)
{
	if (!d)
		return;
	free(d->blob);
	free(d->names);
	free(d);
}

uint64_t cgs_decoder_schema_gen(const struct cgstream_decoder *d)
{
	return d->schema_gen;
}

/* SNAPSHOT: a new snapshot begins */
static int cgs_dec_snapshot(struct cgstream_decoder *d, const unsigned char *p, uint32_t size,
			    uint16_t flags)
{
	typedef struct cgroup_stat_snapshot S;
	uint16_t version, ctrl;
	uint64_t seq, base;
	const struct cgs_controller *c;

	if (size < CGS_REC_SNAPSHOT)
		return -EBADMSG;
	version = cgs_u16(CGS_FIELD(p, S, version));
	if (version != CGROUP_STAT_STREAM_VERSION)
		return -EPROTONOSUPPORT;
	seq = cgs_u64(CGS_FIELD(p, S, seq));
	base = cgs_u64(CGS_FIELD(p, S, base_seq));
	/* a change snapshot has a base, before (or at) its publication */
	if (!!(flags & CGROUP_STAT_SNAPSHOT_F_CHANGES) != !!base || base > seq)
		return -EBADMSG;
	ctrl = cgs_u16(CGS_FIELD(p, S, controller));
	c = cgs_controller_of_kernel(ctrl);
	d->snap = (struct cgstream_rec){
		.decoded = 1,
		.controller = c ? c->bit : 0,
		.version = version,
		.snapshot_flags = flags,
		.seq = seq,
		.time_usec = cgs_u64(CGS_FIELD(p, S, time_usec)),
		.base_seq = base,
		.skipped = cgs_u64(CGS_FIELD(p, S, skipped)),
	};
	d->phase = CGS_DEC_SNAPSHOT;
	return 0;
}

/* the end of @nr names from @p within @end, each at least one byte; NULL
 * where one does not end there or is empty */
static const unsigned char *cgs_names_end(const unsigned char *p, const unsigned char *end,
					  uint64_t nr)
{
	for (uint64_t i = 0; i < nr; i++) {
		const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul || nul == p)
			return NULL;
		p = nul + 1;
	}
	return p;
}

/* the SCHEMA's names copied (unless they are the ones the decoder has) */
static int cgs_dec_keep_names(struct cgstream_decoder *d, const unsigned char *names, size_t len,
			      uint64_t nr, uint32_t nv)
{
	const char *q;

	if (d->blob && nr == d->blob_nr && nv == d->blob_nv && len == d->blob_len &&
	    !memcmp(d->blob, names, len))
		return 0;	/* the same as the last snapshot's */
	if (cgs_grow((void **)&d->blob, &d->blob_cap, len ? len : 1, 1, 1024) < 0 ||
	    cgs_grow((void **)&d->names, &d->names_cap, nr ? (size_t)nr : 1, sizeof(*d->names),
		     64) < 0)
		return -ENOMEM;
	memcpy(d->blob, names, len);
	d->blob_len = len;
	d->blob_nr = nr;
	d->blob_nv = nv;
	q = d->blob;
	for (uint64_t i = 0; i < nr; i++) {
		d->names[i] = q;
		q += strlen(q) + 1;
	}
	d->schema_gen++;
	return 1;
}

/* SCHEMA: the names of the values */
static int cgs_dec_schema(struct cgstream_decoder *d, const unsigned char *p, uint32_t size)
{
	typedef struct cgroup_stat_schema S;
	uint32_t nv, ndv, dsize;
	const unsigned char *end;
	int r;

	if (d->phase != CGS_DEC_SNAPSHOT || size < CGS_REC_SCHEMA)
		return -EBADMSG;
	nv = cgs_u32(CGS_FIELD(p, S, nr_values));
	ndv = cgs_u32(CGS_FIELD(p, S, nr_device_values));
	dsize = cgs_u32(CGS_FIELD(p, S, device_size));
	if (dsize ? (ndv > (UINT32_MAX - 8) / 8 || dsize != 8 + 8 * ndv) : ndv != 0)
		return -EBADMSG;	/* the stride the devices' values say */
	/* each name takes 2 bytes at least: no count can lie past that */
	if ((uint64_t)nv + ndv > (size - CGS_REC_SCHEMA) / 2)
		return -EBADMSG;
	end = cgs_names_end(p + CGS_REC_SCHEMA, p + size, (uint64_t)nv + ndv);
	if (!end)
		return -EBADMSG;
	r = cgs_dec_keep_names(d, p + CGS_REC_SCHEMA, (size_t)(end - p - CGS_REC_SCHEMA),
			       (uint64_t)nv + ndv, nv);
	if (r < 0)
		return r;
	d->snap.schema_values = nv;
	d->snap.device_values = ndv;
	d->snap.device_size = dsize;
	d->snap.names = d->names;
	d->snap.device_names = d->names + nv;
	d->phase = CGS_DEC_SCHEMA;
	return 0;
}

/* CGROUP, REMOVED: the id, the counts, within the record and the SCHEMA */
static int cgs_dec_cgroup(struct cgstream_decoder *d, const unsigned char *p, uint32_t size,
			  uint16_t type, struct cgstream_rec *rec)
{
	typedef struct cgroup_stat_cgroup C;
	uint32_t nv, nd;
	uint64_t bytes;

	if (d->phase < CGS_DEC_SCHEMA ||
	    (type == CGROUP_STAT_REC_REMOVED && d->phase == CGS_DEC_CGROUPS))
		return -EBADMSG;	/* no SCHEMA yet; a REMOVED after a CGROUP */
	if (size < CGS_REC_CGROUP)
		return -EBADMSG;
	nv = cgs_u32(CGS_FIELD(p, C, nr_values));
	nd = cgs_u32(CGS_FIELD(p, C, nr_devices));
	if (nv > d->snap.schema_values || (nd && !d->snap.device_size))
		return -EBADMSG;
	bytes = CGS_REC_CGROUP + 8ull * nv + (uint64_t)nd * d->snap.device_size;
	if (bytes > size)
		return -EBADMSG;
	rec->id = cgs_u64(CGS_FIELD(p, C, id));
	rec->parent_id = cgs_u64(CGS_FIELD(p, C, parent_id));
	rec->nr_values = nv;
	rec->nr_devices = nd;
	d->phase = type == CGROUP_STAT_REC_REMOVED ? CGS_DEC_REMOVED : CGS_DEC_CGROUPS;
	return 0;
}

/* the record at @p (its header checked) into @rec, @d moved on: 0 or -errno */
static int cgs_dec_record(struct cgstream_decoder *d, const unsigned char *p, uint32_t size,
			  uint16_t type, uint16_t flags, struct cgstream_rec *rec)
{
	struct cgstream_rec cg = { 0 };
	int r;

	switch (type) {
	case CGROUP_STAT_REC_SNAPSHOT:
		r = cgs_dec_snapshot(d, p, size, flags);
		break;
	case CGROUP_STAT_REC_SCHEMA:
		r = cgs_dec_schema(d, p, size);
		break;
	case CGROUP_STAT_REC_CGROUP:
	case CGROUP_STAT_REC_REMOVED:
		r = cgs_dec_cgroup(d, p, size, type, &cg);
		break;
	default:
		/* a type of a later kernel, within a snapshot: stepped over */
		if (d->phase == CGS_DEC_NONE)
			return -EBADMSG;
		*rec = (struct cgstream_rec){ 0 };
		return 0;
	}
	if (r < 0)
		return r;
	*rec = d->snap;
	rec->id = cg.id;
	rec->parent_id = cg.parent_id;
	rec->nr_values = cg.nr_values;
	rec->nr_devices = cg.nr_devices;
	return 0;
}

CGS_EXPORT int cgstream_decoder_next(struct cgstream_decoder *d, const void *buf, size_t len,
				     size_t *off, struct cgstream_rec *out, size_t out_size)
{
	struct cgstream_decoder saved;
	struct cgstream_rec rec;
	const unsigned char *p;
	uint32_t size;
	uint16_t type, flags;
	int r;

	if (!d || !off || !out || out_size < CGS_REC_SIZE_1_3 || (!buf && len) || *off > len)
		return -EINVAL;
	if (*off == len)
		return 0;
	p = (const unsigned char *)buf + *off;
	if (len - *off < CGS_REC_HDR)
		return -EBADMSG;	/* a cut header */
	size = cgs_u32(p);
	type = cgs_u16(p + offsetof(struct cgroup_stat_rec, type));
	flags = cgs_u16(p + offsetof(struct cgroup_stat_rec, flags));
	if (size < CGS_REC_HDR || size % 8 || size > len - *off || type == 0)
		return -EBADMSG;
	saved = *d;	/* a failed record leaves the snapshot as it was */
	r = cgs_dec_record(d, p, size, type, flags, &rec);
	if (r < 0) {
		d->phase = saved.phase;
		d->snap = saved.snap;
		return r;
	}
	rec.size = size;
	rec.type = type;
	rec.flags = flags;
	rec.data = p;
	memcpy(out, &rec, sizeof(rec));
	if (out_size > sizeof(rec))
		memset((char *)out + sizeof(rec), 0, out_size - sizeof(rec));
	*off += size;
	return 1;
}

/* CGROUP, REMOVED: that its fields are the decoder's */
static bool cgs_rec_is_cgroup(const struct cgstream_rec *rec)
{
	return rec && rec->decoded && rec->data &&
	       (rec->type == CGROUP_STAT_REC_CGROUP || rec->type == CGROUP_STAT_REC_REMOVED);
}

CGS_EXPORT int cgstream_rec_value(const struct cgstream_rec *rec, unsigned int i,
				  uint64_t *value)
{
	if (!cgs_rec_is_cgroup(rec) || !value)
		return -EINVAL;
	if (i >= rec->nr_values)
		return -ENOENT;
	*value = cgs_u64(cgs_rec_values(rec) + 8 * (size_t)i);
	return 0;
}

CGS_EXPORT int cgstream_rec_get(const struct cgstream_rec *rec, const char *name,
				uint64_t *value)
{
	if (!cgs_rec_is_cgroup(rec) || !name || !value)
		return -EINVAL;
	for (uint32_t i = 0; i < rec->nr_values; i++)
		if (!strcmp(rec->names[i], name))
			return cgstream_rec_value(rec, i, value);
	return -ENOENT;
}

CGS_EXPORT int cgstream_rec_device(const struct cgstream_rec *rec, unsigned int i,
				   uint32_t *major, uint32_t *minor, uint64_t *values,
				   unsigned int nr)
{
	const unsigned char *dev;

	if (!cgs_rec_is_cgroup(rec) || !major || !minor || (nr && !values))
		return -EINVAL;
	if (i >= rec->nr_devices)
		return -ENOENT;
	dev = cgs_rec_device_at(rec, i);
	*major = cgs_u32(dev + offsetof(struct cgroup_stat_device, major));
	*minor = cgs_u32(dev + offsetof(struct cgroup_stat_device, minor));
	for (unsigned int k = 0; k < nr; k++)
		values[k] = k < rec->device_values ?
			    cgs_u64(dev + offsetof(struct cgroup_stat_device, values) + 8 * (size_t)k) :
			    0;
	return 0;
}

CGS_EXPORT int cgstream_rec_io_device(const struct cgstream_rec *rec, unsigned int i,
				      struct cgstream_io_device *dev)
{
	struct cgstream_io_device out = { 0 };
	uint64_t v;
	int r;

	if (!dev)
		return -EINVAL;
	r = cgstream_rec_device(rec, i, &out.major, &out.minor, NULL, 0);
	if (r < 0)
		return r;
	for (uint32_t k = 0; k < rec->device_values; k++) {
		const struct cgs_io_field *f = cgs_io_field_by_key(rec->device_names[k],
								   strlen(rec->device_names[k]));

		if (!f)
			continue;	/* a counter struct cgstream_io_device has no room for */
		v = cgs_u64(cgs_rec_device_at(rec, i) + 8 + 8 * (size_t)k);
		memcpy((char *)&out + f->dev_off, &v, sizeof(v));
	}
	*dev = out;
	return 0;
}

/* --- format 1: gone (cgstream.h) --- */

CGS_EXPORT int cgstream_records_next(const void *buf, size_t len, size_t *off,
				     struct cgstream_record *rec, size_t rec_size)
{
	(void)rec_size;
	if (!off || !rec || (!buf && len) || *off > len)
		return -EINVAL;
	return *off == len ? 0 : -EPROTONOSUPPORT;
}

CGS_EXPORT int cgstream_record_value(const struct cgstream_record *rec, unsigned int i,
				     uint64_t *value)
{
	(void)rec;
	(void)i;
	(void)value;
	return -EINVAL;	/* no record was decoded */
}

CGS_EXPORT int cgstream_record_device(const struct cgstream_record *rec, unsigned int i,
				      struct cgstream_io_device *dev)
{
	(void)rec;
	(void)i;
	(void)dev;
	return -EINVAL;
}
