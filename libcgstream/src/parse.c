// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parsers of the text files: cpu.stat / cpu.stat.stream (the keys it
 * knows are the cpu field table's, fields.c), memory's flat-keyed files
 * (every key is a value: its names are the text's), single values
 * (memory.current) and io.stat / io.stat.stream (a line per device).  The
 * binary records have their own decoder, records.c.  A stream's text ends
 * in the publication's keys (publication_seq, publication_time_usec,
 * publications_skipped: the cpu table's publication fields); the previous
 * series' flush_seq, flush_time_usec and flush_missed are not read: no
 * kernel but its own development ones had them, and a stream without
 * publication_seq fails (-EBADMSG) rather than pass for one.
 *
 * cpu's text:
 * The format is flat-keyed: "key value\n" lines, one space between key and
 * value, the value a decimal u64.  The rules, strict because a silent zero
 * is worse than an error:
 *  - unknown keys are skipped (their value is not checked beyond being
 *    there), so new kernel keys do not break old readers;
 *  - a known key whose value is empty, non-decimal, signed, or does not fit
 *    in 64 bits is -EBADMSG, and so is a known key given twice;
 *  - a line without a value, a blank line, and any NUL byte are -EBADMSG;
 *  - empty input and input without usage_usec are -EBADMSG;
 *  - the last line may lack its '\n' and is then accepted when its value
 *    is complete digits.  A number cut in the middle of its digits cannot
 *    be told from a shorter number by the text alone; the library's own
 *    reads guard against that by reading with a buffer larger than any
 *    cpu.stat and treating a full buffer as -EOVERFLOW.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int cgs_parse_u64(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		d = (unsigned int)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EBADMSG;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* one line of a text: [start, eol), the first blank in it (or NULL) */
struct cgs_line {
	const char *start, *eol, *sp;
};

/* the line at *@p before @end, and *@p past it; false at the end */
static bool cgs_next_line(const char **p, const char *end, struct cgs_line *l)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	l->start = *p;
	l->eol = nl ? nl : end;
	l->sp = memchr(l->start, ' ', (size_t)(l->eol - l->start));
	*p = nl ? nl + 1 : end;
	return true;
}

CGS_EXPORT int cgstream_parse(const char *buf, size_t len,
			      struct cgstream_sample *sample, size_t sample_size)
{
	struct cgstream_sample s = { 0 };
	const char *p = buf, *end = buf + len;

	if ((!buf && len) || !sample)
		return -EINVAL;
	if (sample_size < CGS_SAMPLE_SIZE_1_0)
		return -EINVAL;
	if (len == 0 || memchr(buf, '\0', len))
		return -EBADMSG;

	for (struct cgs_line l; cgs_next_line(&p, end, &l);) {
		const struct cgs_field *f;
		uint64_t v;
		int r;

		if (!l.sp || l.sp == l.start)
			return -EBADMSG;	/* no value, or no key */
		f = cgs_field_by_key(&cgs_cpu, l.start, (size_t)(l.sp - l.start));
		if (f) {
			r = cgs_parse_u64(l.sp + 1, (size_t)(l.eol - l.sp - 1), &v);
			if (r < 0)
				return r;
			if (s.present & f->bit)
				return -EBADMSG;
			memcpy((char *)&s + f->sample_off, &v, sizeof(v));
			s.present |= f->bit;
		} else if (l.sp + 1 == l.eol) {
			return -EBADMSG;	/* unknown key, empty value */
		}
	}
	if (!(s.present & CGSTREAM_F_USAGE))
		return -EBADMSG;

	cgs_copy_sample(sample, sample_size, &s);
	return 0;
}

int cgs_read_result(ssize_t res, size_t size)
{
	/* ENODATA: the kernel published nothing yet (a cgroup newer than its
	 * latest publication): no sample this cycle, not an error */
	if (res == -EINTR || res == -EAGAIN || res == -ECANCELED || res == -ENODATA)
		return -EAGAIN;
	if (res < 0)
		return cgs_read_errno((int)-res);
	if ((size_t)res >= size)
		return -EOVERFLOW;
	return 0;
}

int cgs_parse_read(const char *buf, ssize_t res, size_t size, struct cgstream_sample *smp)
{
	int r = cgs_read_result(res, size);

	return r < 0 ? r : cgstream_parse(buf, (size_t)res, smp, sizeof(*smp));
}

/* where a publication's key of the cpu table goes in @fl */
static uint64_t *cgs_flush_slot(struct cgs_flush *fl, uint64_t bit)
{
	return bit == CGSTREAM_F_SEQ ? &fl->seq : bit == CGSTREAM_F_FLUSH_TIME ? &fl->time_usec :
	       &fl->missed;
}

/* a stream's own key (the cpu table's publication fields): 1 (stored in
 * @fl), 0 (another key), -EBADMSG */
static int cgs_parse_flush_key(const char *key, size_t klen, const char *val, size_t vlen,
			       struct cgs_flush *fl)
{
	const struct cgs_field *f = cgs_field_by_key(&cgs_cpu, key, klen);
	uint64_t v;

	if (!f || !f->pub)
		return 0;
	if (cgs_parse_u64(val, vlen, &v) < 0 || (fl->present & f->bit))
		return -EBADMSG;
	*cgs_flush_slot(fl, f->bit) = v;
	fl->present |= (unsigned int)f->bit;
	return 1;
}

int cgs_kvs_push(struct cgs_kvs *kvs, const char *prefix, const char *key, size_t len,
			uint64_t v)
{
	if (cgs_grow((void **)&kvs->v, &kvs->cap, kvs->n + 1, sizeof(*kvs->v), 128) < 0)
		return -ENOMEM;
	kvs->v[kvs->n++] = (struct cgs_kv){ .prefix = prefix, .key = key, .len = (uint32_t)len,
					    .v = v };
	return 0;
}

int cgs_parse_keyed(const char *buf, size_t len, const char *prefix, struct cgs_kvs *kvs,
		    struct cgs_flush *fl)
{
	const char *p = buf, *end = buf + len;

	if (len && memchr(buf, '\0', len))
		return -EBADMSG;
	for (struct cgs_line l; cgs_next_line(&p, end, &l);) {
		size_t klen, vlen;
		uint64_t v;
		int r;

		if (!l.sp || l.sp == l.start)
			return -EBADMSG;	/* no value, or no key */
		klen = (size_t)(l.sp - l.start);
		vlen = (size_t)(l.eol - l.sp - 1);
		r = fl ? cgs_parse_flush_key(l.start, klen, l.sp + 1, vlen, fl) : 0;
		if (r < 0)
			return r;
		if (r == 0) {
			if (cgs_parse_u64(l.sp + 1, vlen, &v) < 0 || klen > UINT16_MAX)
				return -EBADMSG;
			r = cgs_kvs_push(kvs, prefix, l.start, klen, v);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int cgs_parse_value(const char *buf, size_t len, uint64_t *v)
{
	if (len && buf[len - 1] == '\n')
		len--;
	return cgs_parse_u64(buf, len, v);
}

/* "MAJ:MIN" at @p[0..@len): 1; 0: not a device ("(unknown)") */
static int cgs_parse_devno(const char *p, size_t len, uint32_t *major, uint32_t *minor)
{
	const char *colon = memchr(p, ':', len);
	uint64_t a, b;

	if (!colon || cgs_parse_u64(p, (size_t)(colon - p), &a) < 0 ||
	    cgs_parse_u64(colon + 1, len - (size_t)(colon - p) - 1, &b) < 0 ||
	    a > UINT32_MAX || b > UINT32_MAX)
		return 0;
	*major = (uint32_t)a;
	*minor = (uint32_t)b;
	return 1;
}

/* one "key=value" of a device's line: its counter set (fields.c's io
 * table), or skipped */
static int cgs_parse_io_field(const char *p, size_t len, struct cgstream_io_device *d)
{
	const char *eq = memchr(p, '=', len);
	const struct cgs_io_field *f;
	size_t klen;
	uint64_t v;

	if (!eq || eq == p)
		return -EBADMSG;
	klen = (size_t)(eq - p);
	f = cgs_io_field_by_key(p, klen);
	if (!f)
		return 0;	/* a policy's field: "cost.vrate=1.00", "depth=max" */
	if (cgs_parse_u64(eq + 1, len - klen - 1, &v) < 0)
		return -EBADMSG;
	memcpy((char *)d + f->dev_off, &v, sizeof(v));
	return 0;
}

int cgs_parse_io(const char *buf, size_t len, struct cgs_devs *devs, struct cgs_flush *fl)
{
	const char *p = buf, *end = buf + len;

	devs->n = 0;
	if (len && memchr(buf, '\0', len))
		return -EBADMSG;
	for (struct cgs_line l; cgs_next_line(&p, end, &l);) {
		const char *tok_end = l.sp ? l.sp : l.eol;
		struct cgstream_io_device d = { 0 };
		int r;

		if (tok_end == l.start)
			return -EBADMSG;	/* a blank line, or one starting with a blank */
		if (fl && l.sp) {
			r = cgs_parse_flush_key(l.start, (size_t)(l.sp - l.start), l.sp + 1,
						(size_t)(l.eol - l.sp - 1), fl);
			if (r < 0)
				return r;
			if (r > 0)
				continue;
		}
		if (!cgs_parse_devno(l.start, (size_t)(tok_end - l.start), &d.major, &d.minor)) {
			/* "(unknown)": a disk being removed; anything else is junk */
			if (*l.start != '(')
				return -EBADMSG;
			continue;
		}
		for (const char *f = tok_end, *fe; f < l.eol; f = fe) {
			if (*f == ' ') {
				fe = f + 1;	/* io.stat puts two blanks before some policies */
				continue;
			}
			for (fe = f; fe < l.eol && *fe != ' '; fe++)
				;
			r = cgs_parse_io_field(f, (size_t)(fe - f), &d);
			if (r < 0)
				return r;
		}
		r = cgs_devs_reserve(devs, devs->n + 1);
		if (r < 0)
			return r;
		devs->v[devs->n++] = d;
	}
	return 0;
}
