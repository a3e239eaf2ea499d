// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Names are data: cgstream_escape_name() and cgstream_shown_path() on
 * known cases, then a property check over random names (bytes 1-255,
 * the ones that make the rule work hard drawn often): the result is
 * printable UTF-8 without controls, fits CGSTREAM_ESCAPED_SIZE(), and
 * reads back to the name by the documented rule (the decoder below is
 * this test's own, an oracle written from cgstream.h's text), so that no
 * two names look alike.
 */
#include "testutil.h"

static const char *escaped(const char *name)
{
	static char buf[4096];

	T_ASSERT(cgstream_escape_name(name, buf, sizeof(buf)) >= 0);
	return buf;
}

static void expect(const char *name, const char *want)
{
	const char *got = escaped(name);

	if (strcmp(got, want))
		T_FAIL("escape of \"%s\": \"%s\", want \"%s\"", name, got, want);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* cgstream.h: "\\" is one backslash, "\xHH" naming a byte the rule
 * escapes (a control, DEL, >= 0x80) is that byte, anything else itself */
static size_t unescape(const char *s, char *out)
{
	size_t n = 0;

	while (*s) {
		int hi = s[0] == '\\' && (s[1] == 'x' || s[1] == 'X') ? hexval(s[2]) : -1;
		int lo = hi >= 0 ? hexval(s[3]) : -1;
		int b = hi * 16 + lo;

		if (s[0] == '\\' && s[1] == '\\') {
			out[n++] = '\\';
			s += 2;
		} else if (lo >= 0 && (b < 0x20 || b >= 0x7f)) {
			out[n++] = (char)b;
			s += 4;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
	return n;
}

/* printable UTF-8, no C0, DEL or C1 */
static bool printable_utf8(const unsigned char *p)
{
	while (*p) {
		size_t n = *p < 0x80 ? 1 : *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3 :
			   *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;

		if (!n || (n == 1 && (*p < 0x20 || *p == 0x7f)) || (*p == 0xc2 && p[1] < 0xa0))
			return false;
		for (size_t i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += n;
	}
	return true;
}

static void test_cases(void)
{
	char small[8];

	expect("system.slice", "system.slice");
	expect("/a/b c", "/a/b c");
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	expect("bad\xff", "bad\\xff");
	expect("\x80\xc3", "\\x80\\xc3");			/* a cut sequence */
	expect("\xc0\xaf", "\\xc0\\xaf");			/* overlong '/' */
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");		/* a UTF-16 surrogate */
	expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");	/* beyond U+10FFFF */
	expect("a\nb\tc\x1b[2Jd\x7f", "a\\x0ab\\x09c\\x1b[2Jd\\x7f");
	expect("csi\xc2\x9b", "csi\\xc2\\x9b");			/* C1 CSI, as UTF-8 */
	expect("nbsp\xc2\xa0", "nbsp\xc2\xa0");
	expect("quote\"", "quote\"");
	/* systemd's own escapes stay readable; what would read as ours doubles */
	expect("system-systemd\\x2dfsck.slice", "system-systemd\\x2dfsck.slice");
	expect("a\\b", "a\\b");
	expect("\\xff", "\\\\xff");
	expect("\\x1B", "\\\\x1B");
	expect("\\\\", "\\\\\\");
	expect("\\\xff", "\\\\\\xff");
	expect("end\\", "end\\");
	T_EQ(cgstream_escape_name("abcdefgh", small, sizeof(small)), -ERANGE);
	T_EQ(cgstream_escape_name("abcdefg", small, sizeof(small)), 7);
	T_EQ(cgstream_escape_name("\xff\xff", small, 8), -ERANGE);
	T_EQ(cgstream_escape_name("\xff", small, 5), 4);
	T_EQ(cgstream_escape_name(NULL, small, sizeof(small)), -EINVAL);
	T_EQ(cgstream_escape_name("x", NULL, 1), -EINVAL);
	T_EQ(cgstream_escape_name("", small, 1), 0);
}

static void test_shown_path(void)
{
	char buf[256];

	T_EQ(cgstream_shown_path("/sys/fs/cgroup/a/b", "/sys/fs/cgroup", buf, sizeof(buf)), 4);
	T_ASSERT(!strcmp(buf, "/a/b"));
	T_ASSERT(cgstream_shown_path("/sys/fs/cgroup", "/sys/fs/cgroup", buf, sizeof(buf)) == 1 &&
		 !strcmp(buf, "/"));
	T_ASSERT(cgstream_shown_path("/sys/fs/cgroup/x", "/sys/fs/cgroup/", buf, sizeof(buf)) == 2 &&
		 !strcmp(buf, "/x"));
	/* not below the mount: as it is (escaped) */
	T_ASSERT(cgstream_shown_path("/sys/fs/cgroupx/y", "/sys/fs/cgroup", buf, sizeof(buf)) > 0 &&
		 !strcmp(buf, "/sys/fs/cgroupx/y"));
	T_ASSERT(cgstream_shown_path("/a\nb", "/", buf, sizeof(buf)) > 0 && !strcmp(buf, "/a\\x0ab"));
	T_ASSERT(cgstream_shown_path("/m/bad\xff", "/m", buf, sizeof(buf)) > 0 &&
		 !strcmp(buf, "/bad\\xff"));
	T_EQ(cgstream_shown_path(NULL, "/", buf, sizeof(buf)), -EINVAL);
	T_EQ(cgstream_shown_path("/a", NULL, buf, sizeof(buf)), -EINVAL);
}

/* a byte the rule cares about, often */
static char interesting(unsigned int r)
{
	static const char pick[] = "\\x\\xXf0a9\x7f\x1b\n\x80\xbf\xc2\x9b\xc3\xa9\xe2\x82\xac\xed\xf0\xf4\xff";

	if (r % 3)
		return pick[(r / 3) % (sizeof(pick) - 1)];
	return (char)(1 + (r / 3) % 255);
}

static void test_property(void)
{
	char name[64], esc[CGSTREAM_ESCAPED_SIZE(63)], back[sizeof(esc)];
	unsigned int seed = 12345;

	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand_r(&seed) % 63);
		int n;

		for (size_t k = 0; k < len; k++)
			name[k] = interesting((unsigned int)rand_r(&seed));
		name[len] = '\0';
		n = cgstream_escape_name(name, esc, sizeof(esc));
		T_ASSERT(n >= 0 && (size_t)n == strlen(esc) && (size_t)n < CGSTREAM_ESCAPED_SIZE(len));
		if (!printable_utf8((const unsigned char *)esc))
			T_FAIL("escape of a %zu-byte name is not printable UTF-8: %s", len, esc);
		unescape(esc, back);
		if (strcmp(back, name))
			T_FAIL("\"%s\" does not read back to its name (%zu bytes)", esc, len);
	}
	t_log("ok: 200,000 random names escape to printable UTF-8 that reads back to them");
}

int main(void)
{
	test_cases();
	test_shown_path();
	test_property();
	t_log("names: all passed");
	return 0;
}
