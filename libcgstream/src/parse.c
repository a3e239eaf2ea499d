// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parsers of the text files: cpu.stat / cpu.stat.stream (the keys it
 * knows are the cpu field table's, fields.c), memory's flat-keyed files
 * (every key is a value: its names are the text's), single values
 * (memory.current), io.stat / io.stat.stream (a line per device) and the
 * *.pressure files / pressure.stream (a line per resource and kind of
 * stall; the resources and keys are fields.c's).  The binary records have
 * their own decoder, records.c.  A stream's text ends
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

/* "12.34" at @s[0..@len): 1234, hundredths; -EBADMSG unless digits, a dot,
 * two digits (the kernel's "%lu.%02lu"), within 64 bits */
static int cgs_parse_hundredths(const char *s, size_t len, uint64_t *v)
{
	uint64_t whole, frac;

	if (len < 4 || s[len - 3] != '.' || cgs_parse_u64(s, len - 3, &whole) < 0 ||
	    cgs_parse_u64(s + len - 2, 2, &frac) < 0 || whole > (UINT64_MAX - frac) / 100)
		return -EBADMSG;
	*v = whole * 100 + frac;
	return 0;
}

/* the index of the pressure key @key[0..@len) in cgs_psi_keys; -1: another */
static int cgs_psi_key_index(const char *key, size_t len)
{
	for (int k = 0; k < CGS_PSI_NR_KEYS; k++)
		if (strlen(cgs_psi_keys[k].name) == len && !memcmp(cgs_psi_keys[k].name, key, len))
			return k;
	return -1;
}

/* one "key=value" of a pressure line into @v (a key of the table; others
 * are skipped): 0, or -EBADMSG for junk, a key twice or a bad value */
static int cgs_psi_field(const char *p, const char *end, uint64_t v[CGS_PSI_NR_KEYS],
			 unsigned int *seen)
{
	const char *eq = memchr(p, '=', (size_t)(end - p));
	size_t vlen;
	int k, r;

	if (!eq || eq == p || eq + 1 == end)
		return -EBADMSG;
	k = cgs_psi_key_index(p, (size_t)(eq - p));
	if (k < 0)
		return 0;	/* a key a later kernel adds */
	if (*seen & (1u << k))
		return -EBADMSG;
	vlen = (size_t)(end - eq - 1);
	r = cgs_psi_keys[k].percent ? cgs_parse_hundredths(eq + 1, vlen, &v[k]) :
	    cgs_parse_u64(eq + 1, vlen, &v[k]);
	*seen |= 1u << k;
	return r;
}

/* "some avg10=... total=N" at [@p, @eol): its kind and values (every key
 * of the table there once); -EBADMSG */
static int cgs_psi_line(const char *p, const char *eol, int *kind, uint64_t v[CGS_PSI_NR_KEYS])
{
	const char *sp = memchr(p, ' ', (size_t)(eol - p));
	unsigned int seen = 0;
	int r;

	if (!sp || sp - p != 4)
		return -EBADMSG;
	if (!memcmp(p, "some", 4))
		*kind = CGS_PSI_SOME;
	else if (!memcmp(p, "full", 4))
		*kind = CGS_PSI_FULL;
	else
		return -EBADMSG;
	for (p = sp + 1;; p = sp + 1) {
		sp = memchr(p, ' ', (size_t)(eol - p));
		r = cgs_psi_field(p, sp ? sp : eol, v, &seen);
		if (r < 0)
			return r;
		if (!sp)
			break;
	}
	return seen == (1u << CGS_PSI_NR_KEYS) - 1 ? 0 : -EBADMSG;
}

/* a resource's name as pressure.stream writes one: [a-z0-9_]+ */
static bool cgs_psi_name_ok(const char *p, const char *end)
{
	if (p == end)
		return false;
	for (; p < end; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* the values of one line of @res (NULL: a resource skipped) appended to
 * @kvs, unless @seen has its kind already (-EBADMSG): 0 or -errno */
static int cgs_psi_push(struct cgs_kvs *kvs, const struct cgs_psi_resource *res, int kind,
			const uint64_t v[CGS_PSI_NR_KEYS], uint32_t *seen)
{
	uint32_t bit;
	int r = 0;

	if (!res)
		return 0;
	bit = 1u << ((uint32_t)(res - cgs_psi_resources) * CGS_PSI_NR_KINDS + (uint32_t)kind);
	if (*seen & bit)
		return -EBADMSG;
	*seen |= bit;
	for (int k = 0; k < CGS_PSI_NR_KEYS && r == 0; k++)
		r = cgs_kvs_push(kvs, res->prefix[kind], cgs_psi_keys[k].name,
				 strlen(cgs_psi_keys[k].name), v[k]);
	return r;
}

int cgs_parse_pressure(const char *buf, size_t len, const char *resource, struct cgs_kvs *kvs,
		       struct cgs_flush *fl)
{
	const struct cgs_psi_resource *file_res = NULL;
	const char *p = buf, *end = buf + len;
	uint32_t seen = 0;

	if (resource && !(file_res = cgs_psi_resource_by_name(resource, strlen(resource))))
		return -EINVAL;
	if (len && memchr(buf, '\0', len))
		return -EBADMSG;
	for (struct cgs_line l; cgs_next_line(&p, end, &l);) {
		const struct cgs_psi_resource *res = file_res;
		const char *q = l.start;
		uint64_t v[CGS_PSI_NR_KEYS];
		int kind, r;

		if (!l.sp || l.sp == l.start)
			return -EBADMSG;	/* a blank line, one starting with a blank */
		if (!resource) {
			/* pressure.stream: the publication's lines, or a resource's */
			r = fl ? cgs_parse_flush_key(l.start, (size_t)(l.sp - l.start), l.sp + 1,
						     (size_t)(l.eol - l.sp - 1), fl) : 0;
			if (r < 0)
				return r;
			if (r > 0)
				continue;
			if (!cgs_psi_name_ok(l.start, l.sp))
				return -EBADMSG;
			res = cgs_psi_resource_by_name(l.start, (size_t)(l.sp - l.start));
			q = l.sp + 1;
		}
		r = cgs_psi_line(q, l.eol, &kind, v);
		if (r == 0)
			r = cgs_psi_push(kvs, res, kind, v, &seen);
		if (r < 0)
			return r;
	}
	return 0;
}
