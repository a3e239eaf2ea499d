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

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "cli.h"

const char cli_msg_no_kernel[] =
	"cgstream: this kernel has no cpu.stat.stream (cgroup stat streaming); "
	"use --mode fallback or a kernel with the cgstream patches\n";
static const char msg_no_subtree[] =
	"cgstream: this kernel has no cpu.stat.stream.subtree (whole subtrees in one read); "
	"use --mode auto or a kernel with the cgstream patches\n";

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

int cli_no_cgroup2(void)
{
	fprintf(stderr, "cgstream: no cgroup2 file system is mounted\n");
	return EXIT_RUNTIME;
}

int cli_open_error(const struct cgstream_opts *opts, const char *arg, int r)
{
	char path[PATH_MAX];
	const char *shown = arg;

	if (cgstream_resolve_path(arg, opts, path, sizeof(path)) == 0)
		shown = path;
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
		fprintf(stderr, "cgstream: %s: not a cgroup path (\"..\" is not allowed)\n", arg);
		return EXIT_USAGE;
	case -EOPNOTSUPP:
		fputs(opts->mode == CGSTREAM_MODE_SUBTREE ? msg_no_subtree : cli_msg_no_kernel, stderr);
		return EXIT_NO_KERNEL;
	case -ENODEV:
		return cli_no_cgroup2();
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
