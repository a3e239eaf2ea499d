/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the cgstream command's subcommands share (common.c has them):
 * exit statuses, option values, and one message per error of opening a
 * cgroup, so that watch and top say the same things the same way.
 */
#ifndef CGSTREAM_CLI_H
#define CGSTREAM_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "cgstream.h"

enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_NO_CGROUP = 3,
	EXIT_PERMISSION = 4,
	EXIT_NO_KERNEL = 5,
};

/* strict decimal: digits only, no sign, no blanks, fits in uint32_t */
bool cli_parse_u32(const char *s, uint32_t *v);
/* --mode NAME into *mode; 0, or EXIT_USAGE after saying why */
int cli_parse_mode(const char *name, int *mode);
/* --fallback-interval MS into *ms; 0, or EXIT_USAGE after saying why */
int cli_parse_fallback_interval(const char *arg, uint32_t *ms);
/*
 * Says why @arg (a cgroup as the user wrote it) could not be opened with
 * @opts (r = -errno) and returns the exit status for it.
 */
int cli_open_error(const struct cgstream_opts *opts, const char *arg, int r);
/* says there is no cgroup2 mount; returns the exit status for it */
int cli_no_cgroup2(void);
/*
 * Says the kernel lacks the stream file of @ctrl (a CGSTREAM_CTRL_* bit;
 * @subtree: its subtree file), with a way out, or that the cgroup2
 * hierarchy of @opts lacks the controller itself; returns the exit status.
 */
int cli_no_stream(const struct cgstream_opts *opts, unsigned int ctrl, bool subtree);
/* --OPT LIST ("cpu,memory,io", "all") into *mask; 0, or EXIT_USAGE after saying why */
int cli_parse_controllers(const char *opt, const char *arg, uint32_t *mask);
/*
 * The controllers to read for the cgroups @paths (absolute, as resolved):
 * @asked (CGSTREAM_CTRL_*) when the user named them, each of which must be
 * enabled for every one of them (else said: EXIT_NO_KERNEL); with @asked
 * 0, cpu and whichever of memory and io are enabled for any of them (a
 * cgroup has a controller's <name>.stat).  0 or an exit status.
 */
int cli_controllers(const struct cgstream_opts *opts, uint32_t asked, char *const *paths,
		    size_t n, uint32_t *out);
/* trees in the kernel and fallback modes, and groups, hold an fd per cgroup */
void cli_raise_fd_limit(void);

/* the subcommand `cgstream top` (top.c), run by main() in main.c */
int cmd_top(int argc, char **argv);

#endif
