/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one printer of cgstream's samples and events, for every way of
 * watching (a group of named cgroups, trees) and every output (JSON lines,
 * plain lines, the live table).  It keeps each cgroup's last printed
 * sample, by cgroup id, for the CPU percentages and --every; cgstream top
 * takes its numbers from here too (FMT_NONE).
 */
#ifndef CGSTREAM_FORMAT_H
#define CGSTREAM_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgstream.h"
#include "hash.h"

enum fmt_style {
	FMT_JSON,	/* one JSON object per sample or event per line */
	FMT_LINES,	/* "seq N /path: cpu ..." */
	FMT_TABLE,	/* a table redrawn per cycle (a terminal) */
	FMT_NONE,	/* keep the numbers, print nothing: cgstream top draws */
};

/*
 * A cgroup's numbers: its last printed cycle (with FMT_NONE: its last
 * sample), in percent of one CPU over the time between that sample's
 * flush and the one before it (with --every: the last printed one).
 */
struct fmt_cg {
	struct cgs_hnode node;		/* by cgroup id: node.key */
	char *path;			/* absolute */
	bool have_prev, have_delta;	/* have_delta: two samples, the numbers below */
	struct cgstream_sample prev;	/* the last printed sample (or the first seen) */
	uint64_t window;		/* --every: flush_seq / N of prev */
	double cpu, user, sys;
	bool has_thr;			/* the cpu controller's fields, in both samples */
	uint64_t thr_periods;		/* nr_periods in the cycle */
	uint64_t thr_n, thr_usec;	/* nr_throttled, throttled_usec in the cycle */
};

struct fmt {
	FILE *out;
	enum fmt_style style;
	uint64_t every;		/* print one cycle in N (0, 1: all) */
	bool parents;		/* JSON: parent_id (trees) */
	size_t rootlen;		/* the cgroup2 mount, cut from shown paths */
	struct cgs_hash by_id;
	size_t n_cgroups;
	char removed_note[512];	/* table: removed since the last draw */
};

/* 0 or -ENOMEM */
int fmt_init(struct fmt *f, FILE *out, enum fmt_style style, uint64_t every, bool parents,
	     size_t rootlen);
void fmt_fini(struct fmt *f);
/*
 * One event of a batch from a source in @mode; true when it printed a
 * sample (--every may skip one).
 */
bool fmt_event(struct fmt *f, const struct cgstream_event *ev, const char *mode);
/* a batch ended: the table is redrawn */
void fmt_batch_end(struct fmt *f, const char *mode, uint64_t seq);
/*
 * The cgroups known now, in no order: a malloc'd array (free it) of
 * f->n_cgroups pointers, valid until the next fmt_event(); NULL when there
 * is no memory.
 */
struct fmt_cg **fmt_cgroups(const struct fmt *f);

#endif
