// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one parser of cpu.stat / cpu.stat.stream text; the keys it knows
 * are the cpu field table's (fields.c).  The binary records have their
 * own decoder, records.c.
 *
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

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *sp = memchr(p, ' ', (size_t)(eol - p));
		const struct cgs_field *f;
		uint64_t v;
		int r;

		if (!sp || sp == p)
			return -EBADMSG;	/* no value, or no key */
		f = cgs_field_by_key(&cgs_cpu, p, (size_t)(sp - p));
		if (f) {
			r = cgs_parse_u64(sp + 1, (size_t)(eol - sp - 1), &v);
			if (r < 0)
				return r;
			if (s.present & f->bit)
				return -EBADMSG;
			memcpy((char *)&s + f->sample_off, &v, sizeof(v));
			s.present |= f->bit;
		} else if (sp + 1 == eol) {
			return -EBADMSG;	/* unknown key, empty value */
		}
		p = nl ? nl + 1 : end;
	}
	if (!(s.present & CGSTREAM_F_USAGE))
		return -EBADMSG;

	cgs_copy_sample(sample, sample_size, &s);
	return 0;
}

int cgs_parse_read(const char *buf, ssize_t res, size_t size, struct cgstream_sample *smp)
{
	if (res == -EINTR || res == -EAGAIN || res == -ECANCELED)
		return -EAGAIN;
	if (res < 0)
		return cgs_read_errno((int)-res);
	if ((size_t)res >= size)
		return -EOVERFLOW;
	return cgstream_parse(buf, (size_t)res, smp, sizeof(*smp));
}
