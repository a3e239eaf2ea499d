// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the cgstream command's subcommands share (cli.h): the library's
 * messages on stderr with the program's name, the shared options' values,
 * the probe of the cgroups named before anything is opened.
 */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cli_fail(int err, int what, const char *arg, const struct cgstream_opts *opts)
{
	char msg[1024];
	int status = cgstream_explain(err, what, arg, opts, msg, sizeof(msg));

	if (status < 0) {
		snprintf(msg, sizeof(msg), "%s", strerror(-err));
		status = CGSTREAM_EXIT_FAILURE;
	}
	fprintf(stderr, "cgstream: %s\n", msg);
	return status;
}

int cli_option(int what, const char *text, uint32_t *value)
{
	int r = cgstream_parse_option(what, text, value);

	return r < 0 ? cli_fail(r, what, text, NULL) : 0;
}

int cli_shared_option(int opt, const char *arg, struct cgstream_opts *opts)
{
	int what = opt == 'm' ? CGSTREAM_WHAT_MODE : opt == 'f' ? CGSTREAM_WHAT_FALLBACK_INTERVAL :
		   CGSTREAM_WHAT_CONTROLLERS;
	uint32_t v;

	if (cli_option(what, arg, &v))
		return CGSTREAM_EXIT_USAGE;
	if (opt == 'm')
		opts->mode = (int)v;
	else if (opt == 'f')
		opts->fallback_interval_ms = v;
	else
		opts->controllers = v;
	return 0;
}

int cli_probe(const struct cgstream_opts *opts, char *const *paths, size_t n, bool tree,
	      uint32_t *controllers)
{
	struct cgstream_probe p;
	int r;

	if (controllers)
		*controllers = 0;
	for (size_t i = 0; i < n; i++) {
		r = cgstream_probe(paths[i], opts, tree ? CGSTREAM_PROBE_TREE : 0, &p, sizeof(p));
		if (r < 0)
			return cli_fail(r, CGSTREAM_WHAT_OPEN, paths[i], opts);
		if (p.error)
			return cli_fail(p.error, CGSTREAM_WHAT_OPEN, paths[i], opts);
		if (controllers)
			*controllers |= p.controllers;
	}
	return 0;
}

void cli_exit_statuses(FILE *f)
{
	struct cgstream_exit_info e;

	fputs("Exit status:", f);
	for (unsigned int i = 0; cgstream_exit_status(i, &e, sizeof(e)) == 0; i++)
		fprintf(f, "%s %d %s", i ? "," : "", e.status, e.text);
	fputs(".\n", f);
}

void cli_notices(uint32_t controllers, const int *modes, const struct cgstream_opts *opts,
		 unsigned int which)
{
	char buf[4096];
	int n = cgstream_notices(controllers, modes, opts, which, buf, sizeof(buf));

	for (char *line = buf, *nl; n > 0 && (nl = strchr(line, '\n')); line = nl + 1)
		fprintf(stderr, "cgstream: %.*s\n", (int)(nl - line), line);
}

void cli_raise_fd_limit(void)
{
	(void)cgstream_raise_fd_limit(NULL);	/* as it is, where it cannot be raised */
}

/* --- things kept by cgroup id --- */

static int cli_ids_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void *cli_ids_find(const struct cli_ids *s, uint64_t id)
{
	void *const *node = tfind(&id, &s->root, cli_ids_cmp);

	return node ? *node : NULL;
}

int cli_ids_add(struct cli_ids *s, void *item)
{
	if (!tsearch(item, &s->root, cli_ids_cmp))
		return -ENOMEM;
	s->count++;
	return 0;
}

void cli_ids_del(struct cli_ids *s, void *item)
{
	if (tdelete(item, &s->root, cli_ids_cmp))
		s->count--;
}

struct cli_ids_walk {
	void **v;
	size_t n;
};

static void cli_ids_visit(const void *node, VISIT which, void *arg)
{
	struct cli_ids_walk *w = arg;

	if (which == postorder || which == leaf)
		w->v[w->n++] = *(void *const *)node;
}

void cli_ids_list(const struct cli_ids *s, void **v)
{
	struct cli_ids_walk w = { v, 0 };

	twalk_r(s->root, cli_ids_visit, &w);
}

void cli_ids_free(struct cli_ids *s, void (*free_item)(void *item))
{
	tdestroy(s->root, free_item);
	*s = (struct cli_ids){ 0 };
}
