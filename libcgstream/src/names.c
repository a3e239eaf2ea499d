// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Names are data: a cgroup may be named with any bytes a directory may
 * have, and any local user who may make a cgroup chooses them.  Every
 * output of cgstream (the command's lines, JSON and table, top, Python,
 * the exporter's labels, messages) shows a cgroup's path through the one
 * rule here, so that no name can break a format, reach a terminal as a
 * control sequence, or make two cgroups look the same:
 *
 *  - valid UTF-8 that is printable passes through as it is;
 *  - a byte that is not part of valid UTF-8, a C0 control (U+0000-001F),
 *    DEL (U+007F) and each of the two bytes of a C1 control (U+0080-009F)
 *    becomes "\xHH" (two lowercase hex digits);
 *  - a backslash is doubled when what follows it would otherwise read as
 *    one of those escapes or as "\\" (so systemd's "\x2d" stays as it is).
 *
 * Read back: "\\" is one backslash, "\xHH" naming a byte the rule escapes
 * is that byte, any other character is itself.  The result is printable
 * UTF-8; each output then applies its own syntax (JSON's \" and \\,
 * Prometheus' label escaping).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"

/* the bytes of a valid, printable UTF-8 sequence at @p; 0: escape @p[0] */
static size_t cgs_utf8_printable(const unsigned char *p)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;	/* controls, DEL, continuations, overlongs, > U+10FFFF */
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (c == 0xed)
		hi = 0x9f;	/* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90;	/* overlong */
	else if (c == 0xf4)
		hi = 0x8f;	/* beyond U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	if (c == 0xc2 && p[1] <= 0x9f)
		return 0;	/* a C1 control */
	return n;
}

/* a byte the rule writes as \xHH */
static bool cgs_escaped_byte(unsigned int b)
{
	return b < 0x20 || b >= 0x7f;
}

static int cgs_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* does the text at @p start as an escape would ("\\" or "\xHH" of an
 * escaped byte) once written out? */
static bool cgs_reads_as_escape(const unsigned char *p)
{
	int hi, lo;

	if (p[0] == '\\' || (p[0] && !cgs_utf8_printable(p)))
		return true;	/* written as "\\..." or "\x.." */
	if (p[0] != 'x' && p[0] != 'X')
		return false;
	hi = cgs_hex(p[1]);
	lo = hi < 0 ? -1 : cgs_hex(p[2]);
	return lo >= 0 && cgs_escaped_byte((unsigned int)(hi * 16 + lo));
}

/* the escaped form of @name into @out (NULL: only count); its length */
static size_t cgs_escape(const unsigned char *name, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = 0;

	for (const unsigned char *p = name; *p;) {
		size_t n = cgs_utf8_printable(p);

		if (*p == '\\') {
			n = cgs_reads_as_escape(p + 1) ? 2 : 1;
			if (out)
				memcpy(out + len, "\\\\", n);
			len += n;
			p++;
		} else if (n) {
			if (out)
				memcpy(out + len, p, n);
			len += n;
			p += n;
		} else {
			if (out) {
				out[len] = '\\';
				out[len + 1] = 'x';
				out[len + 2] = hex[*p >> 4];
				out[len + 3] = hex[*p & 15];
			}
			len += 4;
			p++;
		}
	}
	return len;
}

CGS_EXPORT int cgstream_escape_name(const char *name, char *buf, size_t size)
{
	size_t len;

	if (!name || (!buf && size))
		return -EINVAL;
	len = cgs_escape((const unsigned char *)name, NULL);
	if (len >= size || len > INT32_MAX)
		return -ERANGE;
	cgs_escape((const unsigned char *)name, buf);
	buf[len] = '\0';
	return (int)len;
}

/* @path below @mount ("/" for the mount itself), or @path when it is not */
static const char *cgs_below(const char *path, const char *mount)
{
	size_t n = strlen(mount);

	if (n == 1 && mount[0] == '/')
		return path;	/* cgroup2 mounted on / */
	while (n > 1 && mount[n - 1] == '/')
		n--;
	if (strncmp(path, mount, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return path;
	return path[n] ? path + n : "/";
}

CGS_EXPORT int cgstream_shown_path(const char *path, const char *mount, char *buf, size_t size)
{
	if (!path || !mount)
		return -EINVAL;
	return cgstream_escape_name(cgs_below(path, mount), buf, size);
}
