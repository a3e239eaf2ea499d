/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the cgstream command's subcommands share (common.c has them).  The
 * exit statuses, the messages, the shared options' values, what a cgroup
 * offers and the notices at start are libcgstream's (cgstream.h, "what
 * front ends share"): pycgstream's exporter says the same things.
 */
#ifndef CGSTREAM_CLI_H
#define CGSTREAM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cgstream.h"

/* the library's controllers, by bit: for (b = 1; cli_ctrl(b); b <<= 1) */
static inline const char *cli_ctrl(unsigned int bit)
{
	return cgstream_controller_name(bit);
}

/* the index of a controller's bit in arrays of CGSTREAM_CTRL_SLOTS */
static inline unsigned int cli_ctrl_index(unsigned int bit)
{
	return (unsigned int)__builtin_ctz(bit);
}

/* strict decimal: digits only, no sign, no blanks, fits in uint32_t */
bool cli_parse_u32(const char *s, uint32_t *v);
/*
 * Says on stderr why @err came of @what (@arg, @opts: cgstream_explain())
 * and returns the exit status for it.
 */
int cli_fail(int err, int what, const char *arg, const struct cgstream_opts *opts);
/* a shared option's value (cgstream_parse_option()); 0, or said: EXIT_USAGE */
int cli_option(int what, const char *text, uint32_t *value);
/* getopt's 'm' (--mode), 'f' (--fallback-interval) or 'C' (--controllers)
 * into @opts; 0, or said: EXIT_USAGE */
int cli_shared_option(int opt, const char *arg, struct cgstream_opts *opts);
/*
 * Each of the @n cgroups @paths can be opened with @opts (a tree's with
 * @tree), the controllers asked for enabled for every one
 * (cgstream_probe()); 0, or the exit status, said.  @controllers (if not
 * NULL): the controllers the probes picked, for any of them.
 */
int cli_probe(const struct cgstream_opts *opts, char *const *paths, size_t n, bool tree,
	      uint32_t *controllers);
/* the exit statuses, for a usage text: "0 ok, 1 failure, ..." */
void cli_exit_statuses(FILE *f);
/* the library's notices (@which) about a source reading @controllers in @modes */
void cli_notices(uint32_t controllers, const int *modes, const struct cgstream_opts *opts,
		 unsigned int which);
/* the limit of open files raised (trees and groups hold files per cgroup) */
void cli_raise_fd_limit(void);

/*
 * Things kept by cgroup id (each begins with its uint64_t id): a
 * tsearch(3) tree, O(log n) to find, add and remove, and its size.
 */
struct cli_ids {
	void *root;
	size_t count;
};
/* the item with @id, or NULL */
void *cli_ids_find(const struct cli_ids *s, uint64_t id);
/* @item (whose id is not there yet) added: 0, or -ENOMEM */
int cli_ids_add(struct cli_ids *s, void *item);
void cli_ids_del(struct cli_ids *s, void *item);
/* the items into @v (room for s->count), in id order */
void cli_ids_list(const struct cli_ids *s, void **v);
/* every item freed with @free_item, the tree emptied */
void cli_ids_free(struct cli_ids *s, void (*free_item)(void *item));

/* the subcommand `cgstream top` (top.c), run by main() in main.c */
int cmd_top(int argc, char **argv);

#endif
