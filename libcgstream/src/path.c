// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one path finder: where cgroup2 is mounted (from the caller's sized
 * options, or mountinfo) and what a user's cgroup name means under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"

/* mountinfo escapes blanks, tabs, newlines and backslashes as \ooo */
static void cgs_unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

static void cgs_strip_slashes(char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

/*
 * The first cgroup2 mount in /proc/self/mountinfo whose root is the
 * hierarchy's root (in a cgroup namespace that is the namespace's root);
 * failing that, the first cgroup2 mount.
 */
static int cgs_mountinfo_root(char **root)
{
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	bool found_is_root = false;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -ENODEV;
	while (getline(&line, &cap, f) > 0) {
		char *fields[5], *sep, *fstype, *save = NULL, *tok;
		int n = 0;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		fstype = strtok_r(sep + 3, " \n", &save);
		if (!fstype || strcmp(fstype, "cgroup2") != 0)
			continue;
		save = NULL;
		for (tok = strtok_r(line, " ", &save); tok && n < 5;
		     tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		if (n < 5)
			continue;
		if (found && (found_is_root || strcmp(fields[3], "/") != 0))
			continue;
		free(found);
		found = strdup(fields[4]);
		if (!found)
			break;
		cgs_unescape(found);
		found_is_root = strcmp(fields[3], "/") == 0;
	}
	free(line);
	fclose(f);
	if (!found)
		return -ENODEV;
	cgs_strip_slashes(found);
	*root = found;
	return 0;
}

/*
 * libbpf-style sized options: a caller built against a newer, larger
 * struct is accepted as long as the fields this version does not know
 * are zero.
 */
int cgs_opts_load(const struct cgstream_opts *in, struct cgs_opts *out)
{
	struct cgs_opts o = { .mode = CGSTREAM_MODE_AUTO };

	if (in) {
		if (in->sz < sizeof(in->sz))
			return -EINVAL;
		if (in->sz > sizeof(*in)) {
			const unsigned char *tail = (const unsigned char *)(in + 1);

			for (size_t i = 0; i < in->sz - sizeof(*in); i++)
				if (tail[i])
					return -EINVAL;
		}
#define HAS(f) (in->sz >= offsetof(struct cgstream_opts, f) + sizeof(in->f))
		if (HAS(mode))
			o.mode = in->mode;
		if (HAS(fallback_interval_ms))
			o.fallback_interval_ms = in->fallback_interval_ms;
		if (HAS(cgroup_root))
			o.cgroup_root = in->cgroup_root;
		if (HAS(controllers))
			o.controllers = in->controllers;
		if (HAS(report))
			o.report = in->report;
#undef HAS
	}
	if (o.controllers == CGSTREAM_CTRL_DEFAULT || o.controllers == CGSTREAM_CTRL_DEFAULT_1_3) {
		o.defaults = true;	/* those not enabled are left out (cgs_probe) */
		/* a 1.3 caller's: the set 1.3 had, which its events can carry */
		o.controllers = o.controllers == CGSTREAM_CTRL_DEFAULT ? CGSTREAM_CTRL_ALL :
				CGS_CTRL_ALL_1_3;
	}
	if (o.controllers & ~(uint32_t)CGSTREAM_CTRL_ALL)
		return -EINVAL;
	if (!o.controllers)
		o.controllers = CGSTREAM_CTRL_CPU;	/* 1.1's behaviour */
	if (!cgs_interval_valid(o.fallback_interval_ms) ||
	    (o.report != CGSTREAM_REPORT_ALL && o.report != CGSTREAM_REPORT_CHANGES))
		return -EINVAL;
	/* SUBTREE is a tree's mode: the stream and the group refuse it */
	if (o.mode != CGSTREAM_MODE_AUTO && o.mode != CGSTREAM_MODE_KERNEL &&
	    o.mode != CGSTREAM_MODE_FALLBACK && o.mode != CGSTREAM_MODE_SUBTREE)
		return -EINVAL;
	*out = o;
	return 0;
}

int cgs_opts_root(const struct cgstream_opts *opts, struct cgs_opts *o,
		  char **root)
{
	int r = cgs_opts_load(opts, o);

	return r < 0 ? r : cgs_find_root(o, root);
}

int cgs_find_root(const struct cgs_opts *o, char **root)
{
	struct statfs sfs;
	char *r;

	if (!o->cgroup_root)
		return cgs_mountinfo_root(root);

	if (o->cgroup_root[0] != '/')
		return -EINVAL;
	if (statfs(o->cgroup_root, &sfs) < 0 ||
	    sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -ENODEV;
	r = strdup(o->cgroup_root);
	if (!r)
		return -ENOMEM;
	cgs_strip_slashes(r);
	*root = r;
	return 0;
}

int cgs_resolve(const char *root, const char *cgroup, char **path)
{
	size_t rootlen = strlen(root), cap, len;
	const char *rel = cgroup, *p;
	char *out;

	if (!cgroup)
		return -EINVAL;
	if (strcmp(root, "/") == 0)
		rootlen = 0;	/* cgroup2 mounted on / itself */
	if (cgroup[0] == '/' && strncmp(cgroup, root, rootlen) == 0 &&
	    (cgroup[rootlen] == '/' || cgroup[rootlen] == '\0'))
		rel = cgroup + rootlen;

	cap = rootlen + strlen(rel) + 2;
	if (cap > PATH_MAX)
		return -ENAMETOOLONG;
	out = malloc(cap);
	if (!out)
		return -ENOMEM;
	memcpy(out, root, rootlen);
	len = rootlen;

	for (p = rel; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			free(out);
			return -EINVAL;	/* would leave the mount, or be ambiguous */
		}
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	*path = out;
	return 0;
}

CGS_EXPORT int cgstream_resolve_path(const char *cgroup,
				     const struct cgstream_opts *opts,
				     char *buf, size_t size)
{
	struct cgs_opts o;
	char *root = NULL, *path = NULL;
	int r;

	if (!cgroup || (!buf && size))
		return -EINVAL;
	r = cgs_opts_root(opts, &o, &root);
	if (r < 0)
		return r;
	r = cgs_resolve(root, cgroup, &path);
	if (r == 0) {
		if (strlen(path) + 1 > size)
			r = -ERANGE;
		else
			memcpy(buf, path, strlen(path) + 1);
	}
	free(path);
	free(root);
	return r;
}

int cgs_open_in(const char *dir, const char *file)
{
	int dfd, f, err;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return (errno == ENOTDIR) ? -ENOENT : -errno;
	f = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	err = errno;
	close(dfd);
	return f < 0 ? -err : f;
}
