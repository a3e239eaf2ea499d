// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: any bytes -> cgstream_parse(), with the full sample
 * size and with the 1.0 size.  Besides the sanitizers' checks (the input
 * sits in a buffer of exactly its length, so reading past it is caught),
 * it asserts what the parser promises:
 *  - the result is 0 or -EBADMSG (the arguments are always valid), the
 *    same both times and for both sizes;
 *  - on success usage_usec is present, @present has only defined bits and
 *    never the cgroup id, a field without its bit is 0, every present
 *    field's key starts a line of the input, and the sample printed back
 *    as "key value" lines parses to the same sample;
 *  - a 1.0-sized caller gets the same prefix and nothing is written past
 *    its size; on failure the output is untouched.
 * The same bytes go to the library's memory and io text parsers
 * (memory.stat(.stream), memory.events; io.stat(.stream)): 0 or -EBADMSG
 * (-ENOMEM never, here), each key within the input and of its length,
 * never more devices than lines.  And to its pressure parser, as a
 * *.pressure file of each resource and as pressure.stream: 0 or -EBADMSG;
 * on success four values a line at most, named "<resource>.<kind>.<key>"
 * with the resource the file's (or one of cpu, memory, io, irq), the kind
 * some or full and the keys avg10, avg60, avg300 and total in that order
 * (this file's own list: the oracle), a resource's kind once; and the
 * values printed back as the kernel prints them parse to the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "check.h"

/* the keys of cpu.stat and cpu.stat.stream as the header documents them */
#define F(n, field, b) { n, offsetof(struct cgstream_sample, field), b }
static const struct field {
	const char *key;
	size_t off;
	uint64_t bit;
} fields[] = {
	F("usage_usec", usage_usec, CGSTREAM_F_USAGE),
	F("user_usec", user_usec, CGSTREAM_F_USER),
	F("system_usec", system_usec, CGSTREAM_F_SYSTEM),
	F("nice_usec", nice_usec, CGSTREAM_F_NICE),
	F("nr_periods", nr_periods, CGSTREAM_F_NR_PERIODS),
	F("nr_throttled", nr_throttled, CGSTREAM_F_NR_THROTTLED),
	F("throttled_usec", throttled_usec, CGSTREAM_F_THROTTLED),
	F("nr_bursts", nr_bursts, CGSTREAM_F_NR_BURSTS),
	F("burst_usec", burst_usec, CGSTREAM_F_BURST),
	F("publication_seq", seq, CGSTREAM_F_SEQ),
	F("publication_time_usec", flush_time_usec, CGSTREAM_F_FLUSH_TIME),
	F("publications_skipped", flush_missed, CGSTREAM_F_FLUSH_MISSED),
};
#undef F
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static uint64_t value_of(const struct cgstream_sample *s, const struct field *f)
{
	uint64_t v;

	memcpy(&v, (const char *)s + f->off, sizeof(v));
	return v;
}

/* does "@key " start a line of @buf? */
static int key_starts_line(const char *buf, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen < len; i++)
		if ((i == 0 || buf[i - 1] == '\n') && memcmp(buf + i, key, klen) == 0 &&
		    buf[i + klen] == ' ')
			return 1;
	return 0;
}

static void check_sample(const char *buf, size_t len, const struct cgstream_sample *s)
{
	uint64_t known = 0;
	char text[NFIELDS * 48];
	size_t n = 0;
	struct cgstream_sample again;

	for (size_t i = 0; i < NFIELDS; i++) {
		const struct field *f = &fields[i];

		known |= f->bit;
		if (!(s->present & f->bit)) {
			CHECK(value_of(s, f) == 0);
			continue;
		}
		CHECK(key_starts_line(buf, len, f->key));
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s %llu\n", f->key,
				      (unsigned long long)value_of(s, f));
	}
	CHECK(s->present & CGSTREAM_F_USAGE);
	CHECK((s->present & ~known) == 0);
	CHECK(s->cgroup_id == 0);

	CHECK(cgstream_parse(text, n, &again, sizeof(again)) == 0);
	CHECK(memcmp(&again, s, sizeof(again)) == 0);
}

/* memory's and io's text parsers on the same bytes */
static void check_memio(const char *buf, size_t size)
{
	static struct cgs_kvs kvs;
	static struct cgs_devs devs;
	struct cgs_flush fl = { 0 };
	size_t lines = 1;
	int r;

	for (int stream = 0; stream < 2; stream++) {
		kvs.n = 0;
		r = cgs_parse_keyed(buf, size, "events.", &kvs, stream ? &fl : NULL);
		CHECK(r == 0 || r == -EBADMSG);
		for (size_t i = 0; r == 0 && i < kvs.n; i++) {
			CHECK(kvs.v[i].key >= buf && kvs.v[i].key + kvs.v[i].len <= buf + size);
			CHECK(kvs.v[i].len > 0 && !memchr(kvs.v[i].key, ' ', kvs.v[i].len));
		}
		r = cgs_parse_io(buf, size, &devs, stream ? &fl : NULL);
		CHECK(r == 0 || r == -EBADMSG);
	}
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	CHECK(r < 0 || devs.n <= lines);
}

/* the pressure lines' resources and keys as SPEC.md states them */
static const char *const psi_resources[] = { "cpu", "memory", "io", "irq" };
static const char *const psi_keys[] = { "avg10", "avg60", "avg300", "total" };

/* the resource (its index in psi_resources) and kind @kv's name begins
 * with ("cpu.some."); -1: neither is one */
static int psi_name(const struct cgs_kv *kv, int *full)
{
	const char *dot = strchr(kv->prefix, '.');

	if (!dot || (strcmp(dot, ".some.") && strcmp(dot, ".full.")))
		return -1;
	*full = dot[1] == 'f';
	for (int r = 0; r < 4; r++)
		if (strlen(psi_resources[r]) == (size_t)(dot - kv->prefix) &&
		    !strncmp(kv->prefix, psi_resources[r], (size_t)(dot - kv->prefix)))
			return r;
	return -1;
}

/* @k's lines printed back ("[resource ]kind avg10=X.XX ... total=N") */
static size_t psi_print(const struct cgs_kvs *k, bool stream, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i + 4 <= k->n; i += 4) {
		int full, r = psi_name(&k->v[i], &full);

		CHECK(r >= 0);
		n += (size_t)snprintf(out + n, size - n, "%s%s%s", stream ? psi_resources[r] : "",
				      stream ? " " : "", full ? "full" : "some");
		for (size_t j = 0; j < 3; j++)
			n += (size_t)snprintf(out + n, size - n, " %s=%llu.%02llu", psi_keys[j],
					      (unsigned long long)(k->v[i + j].v / 100),
					      (unsigned long long)(k->v[i + j].v % 100));
		n += (size_t)snprintf(out + n, size - n, " total=%llu\n",
				      (unsigned long long)k->v[i + 3].v);
		CHECK(n < size);
	}
	return n;
}

/* the pressure parser on @buf as a *.pressure file of @resource (or, NULL,
 * pressure.stream) */
static void check_pressure_as(const char *buf, size_t size, const char *resource)
{
	static struct cgs_kvs kvs, again;
	static char text[1 << 16];
	struct cgs_flush fl = { 0 };
	size_t lines = 1, n;
	uint32_t seen = 0;
	int r;

	kvs.n = 0;
	r = cgs_parse_pressure(buf, size, resource, &kvs, resource ? NULL : &fl);
	CHECK(r == 0 || r == -EBADMSG);
	if (r < 0)
		return;
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	CHECK(kvs.n % 4 == 0 && kvs.n <= 4 * lines);
	for (size_t i = 0; i < kvs.n; i++) {
		int full, res = psi_name(&kvs.v[i], &full);

		CHECK(res >= 0);
		CHECK(!resource || !strcmp(psi_resources[res], resource));
		CHECK(kvs.v[i].len == strlen(psi_keys[i % 4]) &&
		      !memcmp(kvs.v[i].key, psi_keys[i % 4], kvs.v[i].len));
		/* a line's four values share its resource and kind */
		CHECK(!strcmp(kvs.v[i - i % 4].prefix, kvs.v[i].prefix));
		if (i % 4 == 0) {
			uint32_t bit = 1u << (2 * res + full);

			CHECK(!(seen & bit));	/* a resource's kind once */
			seen |= bit;
		}
	}
	if (kvs.n * 48 >= sizeof(text))
		return;
	n = psi_print(&kvs, !resource, text, sizeof(text));
	again.n = 0;
	CHECK(cgs_parse_pressure(text, n, resource, &again, NULL) == 0);
	CHECK(again.n == kvs.n);
	for (size_t i = 0; i < kvs.n; i++)
		CHECK(again.v[i].v == kvs.v[i].v && !strcmp(again.v[i].prefix, kvs.v[i].prefix));
}

static void check_pressure(const char *buf, size_t size)
{
	for (size_t r = 0; r < 4; r++)
		check_pressure_as(buf, size, psi_resources[r]);
	check_pressure_as(buf, size, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct cgstream_sample full, twice;
	/* a 1.0 caller's sample, then bytes it does not own */
	unsigned char old[CGS_SAMPLE_SIZE_1_0 + 16];
	int r;

	check_memio(buf, size);
	check_pressure(buf, size);
	memset(&full, 0xa5, sizeof(full));
	memset(old, 0x5a, sizeof(old));
	r = cgstream_parse(buf, size, &full, sizeof(full));
	CHECK(r == 0 || r == -EBADMSG);
	CHECK(cgstream_parse(buf, size, (struct cgstream_sample *)old,
			     CGS_SAMPLE_SIZE_1_0) == r);
	for (size_t i = CGS_SAMPLE_SIZE_1_0; i < sizeof(old); i++)
		CHECK(old[i] == 0x5a);
	if (r < 0) {
		for (size_t i = 0; i < sizeof(full); i++)
			CHECK(((unsigned char *)&full)[i] == 0xa5);
		for (size_t i = 0; i < CGS_SAMPLE_SIZE_1_0; i++)
			CHECK(old[i] == 0x5a);
		return 0;
	}

	CHECK(size > 0 && !memchr(buf, '\0', size));
	CHECK(memcmp(old, &full, CGS_SAMPLE_SIZE_1_0) == 0);
	CHECK(cgstream_parse(buf, size, &twice, sizeof(twice)) == 0);
	CHECK(memcmp(&twice, &full, sizeof(full)) == 0);
	check_sample(buf, size, &full);
	return 0;
}
