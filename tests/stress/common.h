/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the kernel stress programs in tests/stress (cgstress, scale,
 * interval-fuzz): clocks, a seeded random generator, cgroupfs file helpers,
 * and the formats: the lines of a <ctrl>.stat and <ctrl>.stat.stream text
 * (the controller's, then the publication's), of pressure.stream (the
 * *.pressure files' lines behind their resource's name), and a decoder of
 * the subtree files' snapshots, format 2 (SNAPSHOT, SCHEMA, REMOVED,
 * CGROUP records; include/uapi/linux/cgroup_stat_stream.h).
 *
 * The parsers are these programs' own on purpose: they check the kernel,
 * so they keep an oracle of the formats that does not move with the
 * library users run (libcgstream has its own).  The decoder is strict:
 * every record is validated (size >= 8, a multiple of 8, inside the bytes
 * read, SNAPSHOT then SCHEMA first, REMOVED before CGROUP, known types and
 * flags, zero reserved fields and padding, nr_values at most the
 * SCHEMA's, the devices inside the record, the exact size of the layout),
 * and text or records that do not follow docs/kernel-interface.md are
 * reported as failures by the callers, never skipped.
 */
#ifndef CGSTRESS_COMMON_H
#define CGSTRESS_COMMON_H

#include <linux/cgroup_stat_stream.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A stream's files are its stem + these: cpu.stat.stream,
 * cpu.stat.stream.subtree, cpu.stat.stream_interval (the stems cpu.stat,
 * memory.stat, io.stat: the classic file they stream), pressure.stream ...
 * (the stem pressure: the *.pressure files are streamed together).
 */
#define STREAM_SUFFIX	".stream"
#define SUBTREE_SUFFIX	".stream.subtree"
#define INTERVAL_SUFFIX	".stream_interval"
#define CPU_STEM	"cpu.stat"

/* the intervals the kernel takes: a policy of the kernel's, not of the uapi header */
#define INTERVAL_MIN_MS	10
#define INTERVAL_MAX_MS	3600000

#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

/* exit codes of every program here, as tests/run-suite.sh reads them */
#define EXIT_PASS	0
#define EXIT_FAIL	1
#define EXIT_SKIP	77

/* CLOCK_MONOTONIC in ns: the clock publication_time_usec is on */
int64_t now_ns(void);
void sleep_ms(long ms);

/* xorshift64*: reproducible from the seed every program prints */
struct rng {
	uint64_t s;
};
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* uniform in [0, n), n > 0 */
uint64_t rng_below(struct rng *r, uint64_t n);
/* uniform in [lo, hi] */
int64_t rng_range(struct rng *r, int64_t lo, int64_t hi);
/* true with probability pct/100 */
bool rng_pct(struct rng *r, unsigned int pct);

/* the cgroup2 mount point, from /proc/self/mountinfo: 0 or -ENOENT */
int cgroup2_mount(char *out, size_t len);

/* "@dir/@name" into @out; exits on truncation (paths here are short) */
void path_join(char *out, size_t len, const char *dir, const char *name);

/* whole small files: 0 / bytes read, or -errno */
int write_file(const char *path, const char *text);
ssize_t read_file(const char *path, char *buf, size_t len);

/* the root's <stem>.stream_interval: ms, or -errno */
long interval_get(const char *root, const char *stem);
int interval_set(const char *root, const char *stem, long ms);

/* a decimal number of [p, end): 0, or -1 (not one, or overflowing) */
int parse_u64(const char *p, const char *end, uint64_t *v);

/* the last three lines of every <stem>.stream */
struct pub_tail {
	uint64_t seq;		/* publication_seq */
	uint64_t time_usec;	/* publication_time_usec */
	uint64_t skipped;	/* publications_skipped */
};

/*
 * Splits <stem>.stream text: it ends in a newline and its last three
 * lines are exactly "publication_seq N", "publication_time_usec T" and
 * "publications_skipped K".  *@body: the length of what comes before them
 * (the controller's own lines).  0, or -EINVAL with a reason in @why (at
 * least 128 bytes).
 */
int parse_pub_tail(const char *text, size_t len, struct pub_tail *t, size_t *body, char *why);

/* stat()'s inode number of a directory: a cgroup's id; 0 on error */
uint64_t dir_id(const char *path);

/* removes a cgroup and everything below it, children first: 0 or -errno */
int remove_tree(const char *path);

/* raises RLIMIT_NOFILE to at least @want: 0 or -errno */
int raise_nofile(unsigned long want);

/* ------------------------------------------------------------------ */
/* snapshots, format 2                                                  */

/* the names of a SCHEMA record, copied out of it */
#define SCHEMA_NAMES_MAX	512
struct snap_schema {
	uint32_t nr_values, nr_device_values, device_size;
	uint32_t size;				/* of the record */
	const char *name[SCHEMA_NAMES_MAX];	/* nr_values, then nr_device_values */
	char names[16384];
};

/*
 * A decoder of one snapshot, read in any number of reads: it carries the
 * SNAPSHOT and SCHEMA records from one read to the next.
 */
struct snap_decoder {
	int phase;			/* 0: SNAPSHOT next, 1: SCHEMA next, 2: REMOVED, 3: CGROUP */
	unsigned int controller;	/* the one expected, 0: any */
	struct cgroup_stat_snapshot snap;
	struct snap_schema schema;
};

/* one REMOVED or CGROUP record (SNAPSHOT and SCHEMA land in the decoder) */
struct snap_rec {
	unsigned int type, flags;
	uint32_t size;
	uint64_t id, parent_id;
	uint32_t nr_values, nr_devices;
	const uint64_t *values;		/* nr_values */
	const unsigned char *devices;	/* nr_devices x schema.device_size */
};

void snap_decoder_init(struct snap_decoder *d, unsigned int controller);

/*
 * The next record of @buf[*@off, @len), which holds whole records (a read's
 * bytes, 8-byte aligned): 1 for a REMOVED or CGROUP record (in *@r), 2 for
 * the SNAPSHOT or SCHEMA record (in @d), 0 at the end of the bytes, or
 * -EINVAL with a reason in @why (at least 160 bytes) and *@off at the bad
 * record.
 */
int snap_next(struct snap_decoder *d, const void *buf, size_t len, size_t *off,
	      struct snap_rec *r, char *why);

/* device @k of @r */
const struct cgroup_stat_device *snap_device(const struct snap_decoder *d,
					     const struct snap_rec *r, unsigned int k);

/* the index of value @name in @s (a cgroup's values first), or -1 */
int schema_index(const struct snap_schema *s, const char *name);

/* ------------------------------------------------------------------ */
/* text                                                                 */

#define STAT_DEVICES_MAX	256
#define DEVICE_VALUES_MAX	8

/* the values of a <ctrl>.stat text or of a record, in the order of their names */
struct stat_values {
	uint32_t nr_values, nr_devices;
	uint64_t values[SCHEMA_NAMES_MAX];
	struct {
		uint32_t major, minor;
		uint64_t v[DEVICE_VALUES_MAX];
	} dev[STAT_DEVICES_MAX];
	unsigned int unknown;	/* a classic io.stat's "(unknown)" lines: disks being removed */
};

/*
 * The controller's own lines of a <ctrl>.stat, or of a <ctrl>.stat.stream
 * before its publication lines, into @s: "name value" lines naming
 * @names[0], [1], ... (at most @nr_names) in order; or, with @dev_names
 * (NULL-terminated), one line per device, each device once: "MAJ:MIN "
 * then nothing or "name=value" for each of @dev_names in order; a classic
 * io.stat (@classic) may add policies' key=value fields and name a disk
 * being removed "(unknown)".  0, or -EINVAL with a reason in @why (at
 * least 160 bytes).
 */
int parse_stat_text(const char *text, size_t len, const char *const *names, unsigned int nr_names,
		    const char *const *dev_names, bool classic, struct stat_values *s, char *why);

/*
 * The lines of pressure.stream before its publication lines (or of the
 * *.pressure files, each line behind its resource's name) into @s:
 * "<res> <some|full> avg10=A.AA avg60=A.AA avg300=A.AA total=T", each
 * line the values @names[i] .. [i + 3] = "<res>.<some|full>.avg10", ...
 * ".total" in order (at most @nr_names), the averages with exactly two
 * decimals as hundredths of a percent (at most 100.00), the total in
 * usec.  0, or -EINVAL with a reason in @why (at least 160 bytes).
 */
int parse_pressure_text(const char *text, size_t len, const char *const *names,
			unsigned int nr_names, struct stat_values *s, char *why);

#endif
