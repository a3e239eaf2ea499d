/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one printer of cgstream's samples and events, for every way of
 * watching (a group of named cgroups, trees) and every output (JSON lines,
 * plain lines, the live table).  It keeps each cgroup's last printed
 * sample, by cgroup id, for the CPU percentages, the io rates, the
 * pressure percentages and --every; cgstream top takes its numbers from
 * here too (FMT_NONE).
 */
#ifndef CGSTREAM_FORMAT_H
#define CGSTREAM_FORMAT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgstream.h"
#include "cli.h"

enum fmt_style {
	FMT_JSON,	/* one JSON object per sample or event per line */
	FMT_LINES,	/* "seq N /path: cpu ...; memory ...; io ...; pressure ..." */
	FMT_TABLE,	/* a table redrawn per cycle (a terminal) */
	FMT_NONE,	/* keep the numbers, print nothing: cgstream top draws */
};

/*
 * Where a batch of events comes from: what it reads, in which modes (by
 * the bit number of each controller: cli_ctrl_index())
 */
struct fmt_src {
	uint32_t controllers;		/* CGSTREAM_CTRL_* read */
	const char *mode;		/* the lead controller's mode's name */
	int modes[CGSTREAM_CTRL_SLOTS];	/* each controller's mode, 0 if not read */
	const char *ctrl_mode[CGSTREAM_CTRL_SLOTS]; /* its name, NULL if not read */
	bool changes;			/* CGSTREAM_REPORT_CHANGES: CHANGED events only */
	/* its batches: how many ended, the publication time of the last one
	 * and of this one (a cgroup without an event in the last was as of
	 * it: the base of its rates) */
	uint64_t batches, prev_time, cur_time;
};

/* @src's modes from an object's ctrl_mode call (@obj: the object) */
void fmt_src_modes(struct fmt_src *src, int mode, int (*ctrl_mode)(const void *, unsigned int),
		   const void *obj);

/*
 * The pressure columns, those of below's pressure view: the share of the
 * time some task of the cgroup (some) or all of its tasks (full) waited
 * for the CPU, memory, io, in percent over the last interval, from the
 * deltas of the kernel's totals (by their names among pressure's values).
 */
enum fmt_psi {
	FMT_PSI_CPU_SOME,
	FMT_PSI_MEM_SOME,
	FMT_PSI_MEM_FULL,
	FMT_PSI_IO_SOME,
	FMT_PSI_IO_FULL,
	FMT_PSI_NR,
};

struct fmt_psi_column {
	const char *heading;	/* the tables': "MEM-FULL" */
	const char *name;	/* lines', top's --sort: "mem-full" */
	const char *total;	/* its total among pressure's values: "memory.full.total" */
};
extern const struct fmt_psi_column fmt_psi_columns[FMT_PSI_NR];

/*
 * A cgroup's numbers: its last printed cycle (with FMT_NONE: its last
 * sample).  CPU in percent of one CPU over the time between that sample's
 * flush and the one before it (with --every: the last printed one); io
 * in bytes per second and pressure in percent over their own
 * publications' times; memory as it is.
 */
struct fmt_cg {
	uint64_t id;			/* the cgroup's id: first, as cli_ids wants */
	char *path;			/* absolute, as the library gives it */
	char *shown;			/* as shown: cgstream_shown_path() */
	uint64_t last_batch;		/* its source's batch of its last sample */
	bool removed;			/* gone: its last numbers, shown one table more */
	uint64_t removed_batch;		/* in which batch (the drawing's count) */
	bool have_prev, have_delta;	/* have_delta: two cpu samples, the numbers below */
	struct cgstream_sample prev;	/* the last printed sample (or the first seen) */
	uint64_t window;		/* --every: lead seq / N of prev */
	double cpu, user, sys;
	bool has_thr;			/* the cpu controller's fields, in both samples */
	uint64_t thr_periods;		/* nr_periods in the cycle */
	uint64_t thr_n, thr_usec;	/* nr_throttled, throttled_usec in the cycle */
	/* memory: the last sample's (have_mem) */
	bool have_mem;
	uint64_t mem_current, mem_anon, mem_file;
	bool mem_has_current;		/* the root has no memory.current but in subtree mode */
	/* io: all devices summed; rates once two samples came (have_io_delta) */
	bool have_io, have_io_delta;
	uint64_t io_rbytes, io_wbytes, io_time;
	double io_rbps, io_wbps;
	/* pressure: the totals of fmt_psi_columns and their time (have_psi);
	 * the percentages of those in psi_ok (bits by enum fmt_psi) */
	bool have_psi;
	uint32_t psi_has, psi_ok;
	uint64_t psi_total[FMT_PSI_NR], psi_time;
	double psi_pct[FMT_PSI_NR];
};

struct fmt {
	FILE *out;
	enum fmt_style style;
	uint64_t every;		/* print one cycle in N (0, 1: all) */
	bool parents;		/* JSON: parent_id (trees) */
	uint32_t controllers;	/* of every source: the table's columns */
	const char *mount;	/* the cgroup2 mount: paths are shown below it */
	struct cli_ids by_id;		/* the cgroups known now: by_id.count */
	char shown[CGSTREAM_ESCAPED_SIZE(PATH_MAX)];	/* an event's path as shown */
	uint64_t tables;	/* batches ended: removed cgroups stay one table */
};

/* 0 or -ENOMEM; @mount (cgstream_resolve_path("/")) is kept, not copied */
int fmt_init(struct fmt *f, FILE *out, enum fmt_style style, uint64_t every, bool parents,
	     uint32_t controllers, const char *mount);
void fmt_fini(struct fmt *f);
/*
 * One event of a batch from @src; true when it printed a sample (--every
 * may skip one).  A SAMPLE or CHANGED is a sample (JSON: "changed" lists
 * the controllers whose values moved; a CHANGED line says "event":
 * "changed"); a REMOVED prints the cgroup's last values ("final" lists the
 * controllers whose values are the kernel's as of its removal), and in a
 * table its row stays, marked, until the next batch ends.
 */
bool fmt_event(struct fmt *f, const struct cgstream_event *ev, struct fmt_src *src);
/* the sequence number a sample is counted by: its lead controller's */
uint64_t fmt_event_seq(const struct cgstream_event *ev);
/* @src's batch ended: the cgroups removed in an earlier one are forgotten,
 * the table is redrawn (FMT_TABLE) */
void fmt_batch_end(struct fmt *f, struct fmt_src *src, uint64_t seq);
/*
 * The cgroups known now, in no order: a malloc'd array (free it) of
 * f->by_id.count pointers, valid until the next fmt_event(); NULL when there
 * is no memory.
 */
struct fmt_cg **fmt_cgroups(const struct fmt *f);
/*
 * @bytes as at most 5 characters, powers of 1024: "512B", "1.50K",
 * "12.3M", "123G"; into @buf, returned.
 */
const char *fmt_bytes(char *buf, size_t size, double bytes);
/* the sum of the io devices' reads and writes, in bytes per second */
static inline double fmt_io_bps(const struct fmt_cg *c)
{
	return c->io_rbps + c->io_wbps;
}

/* @c's pressure column @k (enum fmt_psi) in percent: true, or false
 * without one (no pressure of the cgroup, or one sample only) */
static inline bool fmt_psi(const struct fmt_cg *c, unsigned int k, double *pct)
{
	if (!(c->psi_ok & (1u << k)))
		return false;
	*pct = c->psi_pct[k];
	return true;
}

#endif
