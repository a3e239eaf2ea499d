// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one parser of cpu.stat / cpu.stat.stream text, and the decoder of
 * cpu.stat.stream.subtree's binary records (at the end).
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

struct cgs_key {
	const char *name;
	size_t off;
	uint64_t bit;
};

#define K(n, field, b) { n, offsetof(struct cgstream_sample, field), b }
static const struct cgs_key cgs_keys[] = {
	K("usage_usec", usage_usec, CGSTREAM_F_USAGE),
	K("user_usec", user_usec, CGSTREAM_F_USER),
	K("system_usec", system_usec, CGSTREAM_F_SYSTEM),
	K("nice_usec", nice_usec, CGSTREAM_F_NICE),
	K("nr_periods", nr_periods, CGSTREAM_F_NR_PERIODS),
	K("nr_throttled", nr_throttled, CGSTREAM_F_NR_THROTTLED),
	K("throttled_usec", throttled_usec, CGSTREAM_F_THROTTLED),
	K("nr_bursts", nr_bursts, CGSTREAM_F_NR_BURSTS),
	K("burst_usec", burst_usec, CGSTREAM_F_BURST),
	K(CGROUP_STAT_STREAM_KEY_SEQ, seq, CGSTREAM_F_SEQ),
	K(CGROUP_STAT_STREAM_KEY_TIME, flush_time_usec, CGSTREAM_F_FLUSH_TIME),
	K(CGROUP_STAT_STREAM_KEY_MISSED, flush_missed, CGSTREAM_F_FLUSH_MISSED),
};
#undef K

static const struct cgs_key *cgs_lookup(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(cgs_keys) / sizeof(cgs_keys[0]); i++)
		if (strlen(cgs_keys[i].name) == len &&
		    memcmp(cgs_keys[i].name, key, len) == 0)
			return &cgs_keys[i];
	return NULL;
}

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
		const struct cgs_key *k;
		uint64_t v;
		int r;

		if (!sp || sp == p)
			return -EBADMSG;	/* no value, or no key */
		k = cgs_lookup(p, (size_t)(sp - p));
		if (k) {
			r = cgs_parse_u64(sp + 1, (size_t)(eol - sp - 1), &v);
			if (r < 0)
				return r;
			if (s.present & k->bit)
				return -EBADMSG;
			memcpy((char *)&s + k->off, &v, sizeof(v));
			s.present |= k->bit;
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

/*
 * cpu.stat.stream.subtree: struct cgroup_stat_stream_record, host byte
 * order.  Records only grow at the end and new kinds come as new types,
 * so the decoder steps by each record's size, reads the fields it knows
 * and skips types it does not.  It never trusts a size: one below the
 * header would loop forever, one past the buffer would read beyond it.
 * Fields are copied out with memcpy(): a future record size need not keep
 * the next record 8-byte aligned.
 */
static uint64_t cgs_rec_u64(const unsigned char *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, rec + off, sizeof(v));
	return v;
}

#define CGS_REC_FIELD(p, f) cgs_rec_u64(p, offsetof(struct cgroup_stat_stream_record, f))

int cgs_subtree_next(const void *buf, size_t len, size_t *off, struct cgs_subtree_rec *out)
{
	size_t pos = *off;

	while (pos < len) {
		const unsigned char *p = (const unsigned char *)buf + pos;
		struct cgstream_sample *s = &out->sample;
		__u16 size, type;
		__u32 flags;

		if (len - pos < sizeof(size) + sizeof(type) + sizeof(flags))
			return -EBADMSG;
		memcpy(&size, p, sizeof(size));
		memcpy(&type, p + 2, sizeof(type));
		memcpy(&flags, p + 4, sizeof(flags));
		if (size < sizeof(size) + sizeof(type) + sizeof(flags) || size > len - pos)
			return -EBADMSG;
		if (type != CGROUP_STAT_STREAM_RECORD_CPU) {
			pos += size;
			continue;
		}
		if (size < CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0)
			return -EBADMSG;

		memset(out, 0, sizeof(*out));
		out->cgroup_id = CGS_REC_FIELD(p, cgroup_id);
		out->parent_id = CGS_REC_FIELD(p, parent_id);
		s->cgroup_id = out->cgroup_id;
		s->seq = CGS_REC_FIELD(p, flush_seq);
		s->flush_time_usec = CGS_REC_FIELD(p, flush_time_usec);
		s->usage_usec = CGS_REC_FIELD(p, usage_usec);
		s->user_usec = CGS_REC_FIELD(p, user_usec);
		s->system_usec = CGS_REC_FIELD(p, system_usec);
		s->nice_usec = CGS_REC_FIELD(p, nice_usec);
		s->present = CGSTREAM_F_CGROUP_ID | CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
			     CGSTREAM_F_USAGE | CGSTREAM_F_USER | CGSTREAM_F_SYSTEM |
			     CGSTREAM_F_NICE;
		if (flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) {
			s->nr_periods = CGS_REC_FIELD(p, nr_periods);
			s->nr_throttled = CGS_REC_FIELD(p, nr_throttled);
			s->throttled_usec = CGS_REC_FIELD(p, throttled_usec);
			s->nr_bursts = CGS_REC_FIELD(p, nr_bursts);
			s->burst_usec = CGS_REC_FIELD(p, burst_usec);
			s->present |= CGSTREAM_F_NR_PERIODS | CGSTREAM_F_NR_THROTTLED |
				      CGSTREAM_F_THROTTLED | CGSTREAM_F_NR_BURSTS |
				      CGSTREAM_F_BURST;
		}
		*off = pos + size;
		return 1;
	}
	*off = pos;
	return 0;
}
