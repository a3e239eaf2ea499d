// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgstream_parse: valid input, every rejection rule, and a fuzz loop. */
#include "testutil.h"

static const char stream_text[] =
	"usage_usec 1234\n"
	"user_usec 1000\n"
	"system_usec 234\n"
	"nice_usec 7\n"
	"nr_periods 10\n"
	"nr_throttled 3\n"
	"throttled_usec 4500\n"
	"nr_bursts 1\n"
	"burst_usec 99\n"
	"core_sched.force_idle_usec 5\n"
	"publication_seq 17\n"
	"publication_time_usec 123456789\n"
	"publications_skipped 2\n";

static int parse(const char *s, struct cgstream_sample *out)
{
	return cgstream_parse(s, strlen(s), out, sizeof(*out));
}

static int parse_str(const char *s)
{
	struct cgstream_sample smp;

	return parse(s, &smp);
}

static void test_valid(void)
{
	struct cgstream_sample s;

	T_EQ(parse(stream_text, &s), 0);
	T_EQ(s.usage_usec, 1234);
	T_EQ(s.user_usec, 1000);
	T_EQ(s.system_usec, 234);
	T_EQ(s.nice_usec, 7);
	T_EQ(s.nr_periods, 10);
	T_EQ(s.nr_throttled, 3);
	T_EQ(s.throttled_usec, 4500);
	T_EQ(s.nr_bursts, 1);
	T_EQ(s.burst_usec, 99);
	T_EQ(s.seq, 17);
	T_EQ(s.flush_time_usec, 123456789);
	T_EQ(s.flush_missed, 2);
	T_EQ(s.present, 0xfff);

	/* plain cpu.stat of a cgroup without the cpu controller */
	T_EQ(parse("usage_usec 5\nuser_usec 3\nsystem_usec 2\nnice_usec 0\n", &s), 0);
	T_EQ(s.present, CGSTREAM_F_USAGE | CGSTREAM_F_USER | CGSTREAM_F_SYSTEM | CGSTREAM_F_NICE);
	T_EQ(s.seq, 0);
	T_EQ(s.nr_throttled, 0);

	/* a final line without '\n' is fine when its value is whole digits */
	T_EQ(parse("usage_usec 5\npublication_seq 9", &s), 0);
	T_EQ(s.seq, 9);
	T_EQ(parse("usage_usec 42", &s), 0);
	T_EQ(s.usage_usec, 42);

	/* unknown keys: skipped, whatever their value */
	T_EQ(parse("foo.bar x y z\nusage_usec 1\nnew_key 99999999999999999999999\n", &s), 0);
	T_EQ(s.present, CGSTREAM_F_USAGE);

	/* limits */
	T_EQ(parse("usage_usec 18446744073709551615\n", &s), 0);
	T_EQ(s.usage_usec, UINT64_MAX);
	T_EQ(parse("usage_usec 0000000000000000000000000001\n", &s), 0);
	T_EQ(s.usage_usec, 1);
}

static void test_rejected(void)
{
	static const char *const bad[] = {
		"",				/* empty: never a silent all-zero sample */
		"\n",
		"\n\n",
		" \n",
		"user_usec 5\n",		/* no usage_usec */
		"publication_seq 3\npublication_time_usec 4\n",
		"usage_usec\n",			/* no value */
		"usage_usec \n",
		"usage_usec",
		"usage_usec ",
		"usage_us",			/* cut in the key */
		"usage_usec 12\nuser_us",
		"usage_usec 12\nuser_usec",
		"usage_usec 12\nuser_usec ",
		"usage_usec 12\n\nuser_usec 3\n",	/* blank line */
		"usage_usec abc\n",
		"usage_usec -5\n",
		"usage_usec +5\n",
		"usage_usec 0x10\n",
		"usage_usec 1 2\n",
		"usage_usec 12 \n",
		"usage_usec  12\n",
		"usage_usec 1.5\n",
		"usage_usec 18446744073709551616\n",	/* 2^64 */
		"usage_usec 99999999999999999999999\n",
		"usage_usec 1\nusage_usec 2\n",	/* twice */
		"usage_usec 1\nunknown\n",	/* line without value */
		"usage_usec 1\nunknown \n",
		" usage_usec 1\n",
		"garbage\x01\x02\xff\n",
		"usage_usec 1\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse_str(bad[i]);

		if (r != -EBADMSG)
			T_FAIL("bad[%zu] \"%s\" parsed as %d, want -EBADMSG", i, bad[i], r);
	}

	/* embedded NUL: in a value, in a key, at the end */
	{
		static const char a[] = "usage_usec 1\0 2\n";
		static const char b[] = "usage_usec 12\nus\0r_usec 3\n";
		static const char c[] = "usage_usec 12\n\0";
		struct cgstream_sample s;

		T_EQ(cgstream_parse(a, sizeof(a) - 1, &s, sizeof(s)), -EBADMSG);
		T_EQ(cgstream_parse(b, sizeof(b) - 1, &s, sizeof(s)), -EBADMSG);
		T_EQ(cgstream_parse(c, sizeof(c) - 1, &s, sizeof(s)), -EBADMSG);
	}
}

/* every prefix of a valid text: a complete line boundary or cut digits parse, others fail */
static void test_truncations(void)
{
	size_t len = strlen(stream_text);

	for (size_t n = 0; n <= len; n++) {
		struct cgstream_sample s;
		const char *last_nl = NULL;
		int r = cgstream_parse(stream_text, n, &s, sizeof(s));
		bool ok_expected;

		for (size_t i = 0; i < n; i++)
			if (stream_text[i] == '\n')
				last_nl = &stream_text[i];
		if (n == 0) {
			ok_expected = false;
		} else {
			/* the tail after the last newline: empty, or "key digits" */
			const char *tail = last_nl ? last_nl + 1 : stream_text;
			size_t tl = (size_t)(stream_text + n - tail);
			const char *sp = memchr(tail, ' ', tl);

			ok_expected = n >= strlen("usage_usec 1") &&
				      (tl == 0 || (sp && sp + 1 < tail + tl));
			/* the unknown key's tail "core_sched.force_idle_usec 5" is fine too */
		}
		if (ok_expected ? r != 0 : r != -EBADMSG)
			T_FAIL("prefix of %zu bytes: got %d, want %s", n, r,
			       ok_expected ? "0" : "-EBADMSG");
	}
}

static void test_api(void)
{
	struct cgstream_sample s;
	unsigned char big[sizeof(s) + 64];
	const char *t = "usage_usec 1\n";

	/* failures never clobber the caller's struct */
	memset(&s, 0xaa, sizeof(s));
	T_EQ(parse_str("usage_usec x\n"), -EBADMSG);
	T_EQ(cgstream_parse("usage_usec x\n", 13, &s, sizeof(s)), -EBADMSG);
	for (size_t i = 0; i < sizeof(s); i++)
		T_ASSERT(((unsigned char *)&s)[i] == 0xaa);

	T_EQ(cgstream_parse(NULL, 3, &s, sizeof(s)), -EINVAL);
	T_EQ(cgstream_parse(t, strlen(t), NULL, sizeof(s)), -EINVAL);
	/* smaller than the 1.0 struct (104 bytes): refused (15-abi-1.0 tests 104) */
	T_EQ(cgstream_parse(t, strlen(t), &s, 104 - 8), -EINVAL);
	T_EQ(cgstream_parse(NULL, 0, &s, sizeof(s)), -EBADMSG);

	/* a caller with a larger (future) struct gets the rest zeroed */
	memset(big, 0xaa, sizeof(big));
	T_EQ(cgstream_parse(t, strlen(t), (struct cgstream_sample *)big, sizeof(big)), 0);
	for (size_t i = sizeof(s); i < sizeof(big); i++)
		T_ASSERT(big[i] == 0);
}

static unsigned int rnd(unsigned int *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static void test_fuzz(void)
{
	static const char alphabet[] = "0123456789 \n\0_abcusertmp-+x\xff";
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	unsigned int st = seed ? seed : 1;
	int iterations = getenv("CGSTREAM_TEST_FAST") ? 3000 : 50000;
	int ok = 0, bad = 0;

	t_log("fuzz: seed %u, %d iterations", seed, iterations);
	for (int it = 0; it < iterations; it++) {
		size_t len = strlen(stream_text), cap = 2 * len + 64;
		char *buf = malloc(cap);
		struct cgstream_sample s;
		int muts = 1 + (int)(rnd(&st) % 6), r;

		T_ASSERT(buf);
		memcpy(buf, stream_text, len);
		for (int m = 0; m < muts; m++) {
			size_t pos = len ? rnd(&st) % len : 0;

			switch (rnd(&st) % 6) {
			case 0:	/* replace a byte */
				if (len)
					buf[pos] = alphabet[rnd(&st) % (sizeof(alphabet) - 1)];
				break;
			case 1:	/* insert a byte */
				if (len + 1 < cap) {
					memmove(buf + pos + 1, buf + pos, len - pos);
					buf[pos] = alphabet[rnd(&st) % (sizeof(alphabet) - 1)];
					len++;
				}
				break;
			case 2:	/* delete a byte */
				if (len) {
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
				}
				break;
			case 3:	/* truncate */
				len = pos;
				break;
			case 4:	/* random bit flip */
				if (len)
					buf[pos] ^= (char)(1u << (rnd(&st) % 8));
				break;
			case 5:	/* long run of digits */
				while (len + 1 < cap && rnd(&st) % 8) {
					memmove(buf + pos + 1, buf + pos, len - pos);
					buf[pos] = (char)('0' + rnd(&st) % 10);
					len++;
				}
				break;
			}
		}
		/* the exact length: a read past it would show under valgrind/ASan */
		{
			char *exact = malloc(len ? len : 1);

			T_ASSERT(exact);
			memcpy(exact, buf, len);
			r = cgstream_parse(exact, len, &s, sizeof(s));
			free(exact);
		}
		if (r == 0) {
			T_ASSERT(s.present & CGSTREAM_F_USAGE);
			ok++;
		} else if (r == -EBADMSG) {
			bad++;
		} else {
			T_FAIL("fuzz iteration %d (seed %u): returned %d", it, seed, r);
		}
		free(buf);
	}
	t_log("fuzz: %d accepted, %d rejected", ok, bad);
	T_ASSERT(ok > 0 && bad > 0);	/* the mutations hit both sides */
}

int main(void)
{
	test_valid();
	test_rejected();
	test_truncations();
	test_api();
	test_fuzz();
	t_log("parse: all passed");
	return 0;
}
