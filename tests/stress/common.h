/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the kernel stress programs in tests/stress (cgstress, scale,
 * interval-fuzz): clocks, a seeded random generator, cgroupfs file helpers,
 * and the cpu.stat.stream text parser.  The records of the cpu, memory and
 * io subtree files (CPU; KEYS and MEMORY; IO) are decoded by libcgstream's
 * cgstream_records_next(), cgstream_record_value() and
 * cgstream_record_device(), the decoder users run (the programs link the
 * library's static archive); cgstress checks the layout's exact sizes,
 * padding and reserved fields on top.  These programs
 * check the kernel, so they are strict: text or records that do not follow
 * docs/kernel-interface.md are reported as failures by the callers, never
 * skipped.
 */
#ifndef CGSTRESS_COMMON_H
#define CGSTRESS_COMMON_H

#include <linux/cgroup_stat_stream.h>
#include "cgstream.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define INTERVAL_FILE	"cpu.stat.stream_interval"
#define STREAM_FILE	"cpu.stat.stream"
#define SUBTREE_FILE	"cpu.stat.stream.subtree"

#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

/* exit codes of every program here, as tests/run-suite.sh reads them */
#define EXIT_PASS	0
#define EXIT_FAIL	1
#define EXIT_SKIP	77

/* CLOCK_MONOTONIC in ns: the clock flush_time_usec is on */
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

/* the root's cpu.stat.stream_interval: ms, or -errno */
long interval_get(const char *root);
int interval_set(const char *root, long ms);

/* the keys of cpu.stat.stream, in the order the kernel prints them */
enum stream_key {
	K_USAGE, K_USER, K_SYSTEM, K_NICE,
	K_NR_PERIODS, K_NR_THROTTLED, K_THROTTLED_USEC, K_NR_BURSTS, K_BURST_USEC,
	K_FLUSH_SEQ, K_FLUSH_TIME, K_FLUSH_MISSED,
	K_NR,
};
#define STREAM_KEYS_REQUIRED	((1u << K_USAGE) | (1u << K_USER) | (1u << K_SYSTEM) | \
				 (1u << K_NICE) | (1u << K_FLUSH_SEQ) | \
				 (1u << K_FLUSH_TIME) | (1u << K_FLUSH_MISSED))
#define STREAM_KEYS_BANDWIDTH	((1u << K_NR_PERIODS) | (1u << K_NR_THROTTLED) | \
				 (1u << K_THROTTLED_USEC) | (1u << K_NR_BURSTS) | \
				 (1u << K_BURST_USEC))

struct stream_sample {
	uint64_t v[K_NR];
	unsigned int present;	/* 1 << enum stream_key */
};

/*
 * Parses cpu.stat.stream text: "key value\n" lines, every required key
 * once, the five bandwidth keys all or none, unknown keys (e.g.
 * core_sched.force_idle_usec) skipped.  0, or -EINVAL with a reason in
 * @why (at least 128 bytes).
 */
int parse_stream(const char *text, size_t len, struct stream_sample *s, char *why);

/* stat()'s inode number of a directory: a cgroup's id; 0 on error */
uint64_t dir_id(const char *path);

/* removes a cgroup and everything below it, children first: 0 or -errno */
int remove_tree(const char *path);

/* raises RLIMIT_NOFILE to at least @want: 0 or -errno */
int raise_nofile(unsigned long want);

#endif
