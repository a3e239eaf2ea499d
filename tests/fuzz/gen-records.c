// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The seed corpus of fuzz_records and fuzz_tree: snapshots of format 2 as
 * the kernel returns them (cpu, memory, io, pressure; full and change snapshots,
 * REMOVED records), as a later kernel might (longer records, types of its
 * own), and lying ones: sizes of 0, not a multiple of 8 or past the end,
 * a cut buffer, a SCHEMA that disagrees with a record (more values, a
 * device size that is not its values'), names that do not end, a change
 * snapshot without a base, a version 3, records out of their order,
 * REMOVED records of ids no snapshot listed.  Written with the tests'
 * snapshot writer (libcgstream/tests/snapshot-writer.h) into the folder
 * given; deterministic: the same files on every run.  With TREE_DIR, the
 * seeds of fuzz_tree too: cycles of those snapshots (each read, then the
 * read that returns 0) in its input's framing.
 *
 * usage: gen-records DIR [TREE_DIR]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "snapshot-writer.h"

static const char *const cpu_names[] = {
	"usage_usec", "user_usec", "system_usec", "nice_usec", "core_sched.force_idle_usec",
	"nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec",
};
static const char *const mem_names[] = {
	"anon", "file", "kernel", "shmem", "pgfault", "current", "swap.current",
	"events.low", "events.high", "events.max", "events.oom", "events.oom_kill",
};
static const char *const io_names[] = { "rbytes", "wbytes", "rios", "wios", "dbytes", "dios" };
#define PSI(r)	r ".some.avg10", r ".some.avg60", r ".some.avg300", r ".some.total", \
		r ".full.avg10", r ".full.avg60", r ".full.avg300", r ".full.total"
static const char *const psi_names[] = {
	PSI("cpu"), PSI("memory"), PSI("io"),
	"irq.full.avg10", "irq.full.avg60", "irq.full.avg300", "irq.full.total",
};

static const char *dir;

static void save(const char *name, const struct sw *w)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(w->p, 1, w->len, f) != w->len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* a cpu snapshot of a small tree (ids 1..5), @flags and @base its SNAPSHOT's */
static void cpu_tree(struct sw *w, uint16_t flags, uint64_t base, uint32_t pad)
{
	uint64_t v[10];

	sw_snapshot(w, CGROUP_STAT_CTRL_CPU, flags, 40, 5000000, base, 1);
	sw_schema(w, cpu_names, 10, NULL, 0);
	for (uint64_t k = 0; k < 10; k++)
		v[k] = 100 * (k + 1);
	sw_cgroup(w, CGROUP_STAT_REC_REMOVED, 0, 9, 1, v, 4, NULL, 0, 0, 0);
	for (uint64_t id = 1; id <= 5; id++) {
		v[0] = 1000 * id;
		sw_cgroup(w, CGROUP_STAT_REC_CGROUP, id == 5 ? CGROUP_STAT_CGROUP_F_NEW : 0, id,
			  id == 1 ? 0 : id / 2, v, id % 2 ? 10 : 5, NULL, 0, 0, pad);
		if (pad && id == 3)
			sw_other(w, 42, 32);
	}
}

static void good(void)
{
	const uint64_t mv[12] = { 4096, 8192, 12, 0, 77, 12288, 0, 0, 3, 0, 0, 0 };
	const uint64_t d0[6] = { 1, 2, 3, 4, 5, 6 }, d1[6] = { 10, 20, 30, 40, 50, 60 };
	const struct sw_dev devs[2] = { { 8, 0, d0 }, { 259, 1, d1 } };
	uint64_t pv[28];
	struct sw w = { 0 };

	for (uint64_t k = 0; k < 28; k++)
		pv[k] = k % 4 == 3 ? 1000000 * k : 25 * k;	/* totals in usec, averages */

	cpu_tree(&w, 0, 0, 0);
	save("cpu-full", &w);
	w.len = 0;
	cpu_tree(&w, CGROUP_STAT_SNAPSHOT_F_CHANGES, 39, 0);
	save("cpu-changes", &w);
	w.len = 0;
	cpu_tree(&w, CGROUP_STAT_SNAPSHOT_F_CHANGES | CGROUP_STAT_SNAPSHOT_F_LOST, 30, 16);
	save("cpu-later-kernel-lost", &w);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_MEMORY, CGROUP_STAT_SNAPSHOT_F_STOPPED, 7, 1, 0, 0);
	sw_schema(&w, mem_names, 12, NULL, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, mv, 12, NULL, 0, 0, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 2, 1, mv, 5, NULL, 0, 0, 0);
	save("memory", &w);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_IO, 0, 3, 1, 0, 0);
	sw_schema(&w, NULL, 0, io_names, 6);
	sw_cgroup(&w, CGROUP_STAT_REC_REMOVED, CGROUP_STAT_CGROUP_F_PARTIAL, 4, 1, NULL, 0, devs, 1,
		  6, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, NULL, 0, devs, 2, 6, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 2, 1, NULL, 0, NULL, 0, 6, 0);
	save("io", &w);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_PRESSURE, 0, 5, 1, 0, 0);
	sw_schema(&w, psi_names, 28, NULL, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, pv, 28, NULL, 0, 0, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 2, 1, pv, 24, NULL, 0, 0, 0);
	save("pressure", &w);
	free(w.p);
}

/* the offset of record @i (0: the SNAPSHOT) of @w */
static size_t rec_at(const struct sw *w, unsigned int i)
{
	size_t off = 0;

	while (i--) {
		uint32_t size;

		memcpy(&size, w->p + off, sizeof(size));
		off += size;
	}
	return off;
}

/* a good cpu snapshot with the u32 at @field of its record @i (0: the
 * SNAPSHOT, 1: the SCHEMA, 2: a REMOVED, 3: the first CGROUP) set to @v,
 * cut after @cut bytes of record @i when @cut */
static void lie(const char *name, unsigned int i, size_t field, uint32_t v, size_t cut)
{
	struct sw w = { 0 };
	size_t at;

	cpu_tree(&w, 0, 0, 0);
	at = rec_at(&w, i);
	memcpy(w.p + at + field, &v, sizeof(v));
	if (cut)
		w.len = at + cut;
	save(name, &w);
	free(w.p);
}

static void lies(void)
{
	const uint64_t v[4] = { 1, 2, 3, 4 };
	struct sw w = { 0 };

	lie("bad-size-0", 3, 0, 0, 0);
	lie("bad-size-odd", 3, 0, 67, 0);
	lie("bad-size-past-end", 3, 0, 1u << 20, 0);
	lie("bad-cut", 3, 0, 112, 20);
	lie("bad-more-values-than-schema", 3, 24, 11, 0);
	lie("bad-devices-without-device-size", 3, 28, 1, 0);
	lie("bad-schema-names-past-record", 1, 8, 400, 0);
	lie("bad-schema-device-size", 1, 16, 16, 0);
	lie("bad-version-3", 0, 8, 3 | (CGROUP_STAT_CTRL_CPU << 16), 0);
	lie("bad-changes-without-base", 0, 4, CGROUP_STAT_REC_SNAPSHOT |
	    (CGROUP_STAT_SNAPSHOT_F_CHANGES << 16), 0);
	lie("bad-type-0", 3, 4, 0, 0);
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 2, 1, 0, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, v, 4, NULL, 0, 0, 0);
	save("bad-cgroup-before-schema", &w);
	w.len = 0;
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 2, 1, 0, 0);
	sw_schema(&w, cpu_names, 4, NULL, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, v, 4, NULL, 0, 0, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_REMOVED, 0, 77, 1, v, 4, NULL, 0, 0, 0);
	save("bad-removed-after-cgroup", &w);
	w.len = 0;
	/* REMOVED records of ids no snapshot listed: valid bytes, unknown ids */
	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, CGROUP_STAT_SNAPSHOT_F_CHANGES, 9, 1, 8, 0);
	sw_schema(&w, cpu_names, 4, NULL, 0);
	for (uint64_t id = 1000; id < 1004; id++)
		sw_cgroup(&w, CGROUP_STAT_REC_REMOVED, 0, id, id - 1, v, 4, NULL, 0, 0, 0);
	save("removed-unknown-ids", &w);
	free(w.p);
}

/* fuzz_tree's framing: a u16 length, then the bytes (0: a read of 0) */
static void chunk(struct sw *t, const struct sw *w)
{
	uint16_t len = (uint16_t)w->len;

	sw_put(t, &len, 2);
	sw_put(t, w->p, w->len);
}

/* fuzz_tree: @flags (bit 0: changes), cycles of the cpu snapshots */
static void tree_seed(const char *name, uint8_t flags, uint16_t error)
{
	struct sw t = { 0 }, w = { 0 }, end = { 0 };

	sw_put(&t, &flags, 1);
	cpu_tree(&w, 0, 0, 0);
	chunk(&t, &w);
	chunk(&t, &end);
	w.len = 0;
	cpu_tree(&w, CGROUP_STAT_SNAPSHOT_F_CHANGES, 40, 16);
	chunk(&t, &w);
	if (error)
		sw_put(&t, &error, 2);
	chunk(&t, &end);
	w.len = 0;
	cpu_tree(&w, CGROUP_STAT_SNAPSHOT_F_CHANGES | CGROUP_STAT_SNAPSHOT_F_LOST, 40, 0);
	chunk(&t, &w);
	chunk(&t, &end);
	save(name, &t);
	free(t.p);
	free(w.p);
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: gen-records DIR [TREE_DIR]\n");
		return 2;
	}
	dir = argv[1];
	good();
	lies();
	if (argc == 3) {
		dir = argv[2];
		tree_seed("tree-all", 0, 0);
		tree_seed("tree-changes", 1, 0);
		tree_seed("tree-changes-enodata", 1, 0xffff);
		tree_seed("tree-changes-einval", 1, 0xfffe);
		tree_seed("tree-all-enodev", 0, 0xfffd);
	}
	return 0;
}
