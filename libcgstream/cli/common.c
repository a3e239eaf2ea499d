// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the cgstream command's subcommands share (cli.h): option values and
 * one message per error of opening a cgroup, so that watch and top say the
 * same things the same way.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "cli.h"

bool cli_parse_u32(const char *s, uint32_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

int cli_parse_mode(const char *name, int *mode)
{
	static const struct {
		const char *name;
		int mode;
	} modes[] = {
		{ "auto", CGSTREAM_MODE_AUTO },
		{ "subtree", CGSTREAM_MODE_SUBTREE },
		{ "kernel", CGSTREAM_MODE_KERNEL },
		{ "fallback", CGSTREAM_MODE_FALLBACK },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(name, modes[i].name)) {
			*mode = modes[i].mode;
			return 0;
		}
	}
	fprintf(stderr, "cgstream: --mode is auto, subtree, kernel or fallback, not '%s'\n", name);
	return EXIT_USAGE;
}

int cli_parse_fallback_interval(const char *arg, uint32_t *ms)
{
	uint32_t v;

	if (!cli_parse_u32(arg, &v) || v < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
	    v > CGROUP_STAT_STREAM_INTERVAL_MAX_MS) {
		fprintf(stderr, "cgstream: --fallback-interval wants %d..%d ms, not '%s'\n",
			CGROUP_STAT_STREAM_INTERVAL_MIN_MS, CGROUP_STAT_STREAM_INTERVAL_MAX_MS, arg);
		return EXIT_USAGE;
	}
	*ms = v;
	return 0;
}

int cli_parse_controllers(const char *opt, const char *arg, uint32_t *mask)
{
	uint32_t m = 0;
	const char *p = arg;

	/* names between commas, none empty: "cpu,,io" and "cpu," are mistakes */
	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned int bit = 0;

		if (len == 3 && !strncmp(p, "all", 3))
			bit = CGSTREAM_CTRL_ALL;
		for (unsigned int b = 1; b & CGSTREAM_CTRL_ALL; b <<= 1)
			if (strlen(cgstream_controller_name(b)) == len &&
			    !strncmp(p, cgstream_controller_name(b), len))
				bit = b;
		if (!bit) {
			fprintf(stderr, "cgstream: --%s is a comma-separated list of cpu, memory and "
				"io, not '%s'\n", opt, arg);
			return EXIT_USAGE;
		}
		m |= bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	*mask = m;
	return 0;
}

/* 1: @path has the controller's <name>.stat; 0: not (ENOENT); -errno: cannot tell */
static int has_stat_file(const char *path, unsigned int ctrl)
{
	char file[PATH_MAX];

	if (ctrl == CGSTREAM_CTRL_CPU)
		return 1;	/* cpu.stat: every cgroup, the root too */
	if (snprintf(file, sizeof(file), "%s/%s.stat", path, cgstream_controller_name(ctrl)) >=
	    (int)sizeof(file))
		return -ENAMETOOLONG;
	if (access(file, F_OK) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

int cli_no_stream(const struct cgstream_opts *opts, unsigned int ctrl, bool subtree)
{
	const char *name = cgstream_controller_name(ctrl);
	char root[PATH_MAX];

	if (!name)
		name = "cpu";
	/* a hybrid host: the controller is on a cgroup v1 hierarchy */
	if (ctrl != CGSTREAM_CTRL_CPU && cgstream_resolve_path("/", opts, root, sizeof(root)) == 0 &&
	    has_stat_file(root, ctrl) == 0) {
		fprintf(stderr, "cgstream: the %s controller is not available "
			"(%s/cgroup.controllers lacks it)\n", name, root);
		return EXIT_NO_KERNEL;
	}
	if (subtree)
		fprintf(stderr, "cgstream: this kernel has no %s.stat.stream.subtree (whole subtrees "
			"in one read); use --mode auto or a kernel with the cgstream patches\n", name);
	else
		fprintf(stderr, "cgstream: this kernel has no %s.stat.stream (cgroup stat streaming); "
			"use --mode fallback or a kernel with the cgstream patches\n", name);
	return EXIT_NO_KERNEL;
}

int cli_controllers(const struct cgstream_opts *opts, uint32_t asked, char *const *paths,
		    size_t n, uint32_t *out)
{
	char root[PATH_MAX];
	uint32_t have = CGSTREAM_CTRL_CPU;

	if (cgstream_resolve_path("/", opts, root, sizeof(root)) < 0)
		root[0] = '\0';
	for (unsigned int b = CGSTREAM_CTRL_MEMORY; b & CGSTREAM_CTRL_ALL; b <<= 1) {
		for (size_t i = 0; i < n; i++) {
			/* < 0, cannot tell (no permission...): opening it will say why */
			int r = has_stat_file(paths[i], b);

			if (r == 1)
				have |= b;
			if (r != 0 || !(asked & b))
				continue;
			if (!root[0] || has_stat_file(root, b) == 0)
				return cli_no_stream(opts, b, false);
			fprintf(stderr, "cgstream: %s: the %s controller is not enabled for this "
				"cgroup (its parent's cgroup.subtree_control lacks it)\n", paths[i],
				cgstream_controller_name(b));
			return EXIT_NO_KERNEL;
		}
	}
	*out = asked ? asked : have;
	return 0;
}

int cli_no_cgroup2(void)
{
	fprintf(stderr, "cgstream: no cgroup2 file system is mounted\n");
	return EXIT_RUNTIME;
}

/*
 * The first controller @opts asks for whose stream (or subtree) file the
 * kernel lacks at the cgroup2 mount: the one to name when a mode cannot
 * be had (cpu when none is missing there).
 */
static unsigned int missing_stream(const struct cgstream_opts *opts)
{
	uint32_t asked = opts->controllers ? opts->controllers : CGSTREAM_CTRL_CPU;
	char root[PATH_MAX], file[PATH_MAX + 64];

	if (cgstream_resolve_path("/", opts, root, sizeof(root)) < 0)
		return CGSTREAM_CTRL_CPU;
	for (unsigned int b = 1; b & CGSTREAM_CTRL_ALL; b <<= 1) {
		if (!(asked & b))
			continue;
		snprintf(file, sizeof(file), "%s/%s.stat.stream%s", root, cgstream_controller_name(b),
			 opts->mode == CGSTREAM_MODE_SUBTREE ? ".subtree" : "");
		if (access(file, F_OK) < 0 && errno == ENOENT)
			return b;
	}
	return CGSTREAM_CTRL_CPU;
}

int cli_open_error(const struct cgstream_opts *opts, const char *arg, int r)
{
	char path[PATH_MAX], mount[PATH_MAX], shown_buf[CGSTREAM_ESCAPED_SIZE(PATH_MAX)];
	const char *shown = "?";

	if (cgstream_resolve_path(arg, opts, path, sizeof(path)) == 0 &&
	    cgstream_resolve_path("/", opts, mount, sizeof(mount)) == 0 &&
	    cgstream_shown_path(path, mount, shown_buf, sizeof(shown_buf)) >= 0)
		shown = shown_buf;
	else if (cgstream_escape_name(arg, shown_buf, sizeof(shown_buf)) >= 0)
		shown = shown_buf;
	switch (r) {
	case -ENOENT:
	case -ENOTDIR:
		fprintf(stderr, "cgstream: %s: no such cgroup\n", shown);
		return EXIT_NO_CGROUP;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "cgstream: %s: permission denied\n", shown);
		return EXIT_PERMISSION;
	case -EINVAL:
		fprintf(stderr, "cgstream: %s: not a cgroup path (\"..\" is not allowed)\n", shown);
		return EXIT_USAGE;
	case -EOPNOTSUPP:
		return cli_no_stream(opts, missing_stream(opts), opts->mode == CGSTREAM_MODE_SUBTREE);
	case -ENODEV:
		return cli_no_cgroup2();
	case -ENOMEDIUM:
		/* a controller asked for is not enabled there (after our check: it went) */
		fprintf(stderr, "cgstream: %s: a controller asked for is not enabled for this cgroup\n",
			shown);
		return EXIT_NO_KERNEL;
	}
	fprintf(stderr, "cgstream: %s: %s\n", shown, strerror(-r));
	return EXIT_RUNTIME;
}

void cli_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
