// SPDX-License-Identifier: GPL-2.0
/*
 * cgstress: randomized stress of cpu.stat.stream, cpu.stat.stream.subtree
 * and the root's cpu.stat.stream_interval, and of their memory and io
 * counterparts (memory.stat.stream, memory.stat.stream.subtree,
 * memory.stat.stream_interval; io.stat.stream, io.stat.stream.subtree,
 * io.stat.stream_interval) while memory is charged and uncharged and
 * I/O is done in the cgroups it churns, with invariants checked as it
 * goes.  Runs, concurrently, for --seconds:
 *
 *   churn (3 threads)  nested mkdir / rmdir of small random trees under a
 *                      private subtree, +cpu, +memory and +io in some
 *                      subtree_control, cpu.max on some; every rmdir timed
 *   migrator           moves 4 CPU-burning child processes between leaves;
 *                      they also mmap, touch, partly drop and munmap up to
 *                      8 MiB of anonymous memory and fill and close memfds
 *                      of up to 2 MiB (at most 40 MiB in all), so pages are
 *                      charged in one cgroup and uncharged after a move, or
 *                      after their cgroup was removed; and they read and
 *                      write 64-512 KiB with O_DIRECT on two loop devices
 *                      (backed by files on a tmpfs of cgstress's own), so
 *                      that io.stat lists devices whose counters move
 *   poll (2), epoll, io_uring readers
 *                      keep ~10 stream and subtree files each open on random
 *                      cgroups (removed ones too), cpu, memory and io ones,
 *                      replace them, wait for flushes (POLLIN|POLLPRI; epoll
 *                      level and edge triggered; io_uring one-shot and
 *                      multishot) and read with small and large buffers
 *   walker             reads cpu, memory and io subtree snapshots without
 *                      waiting, in pieces from one record to 1 MiB, bad
 *                      sizes and offsets too
 *   quick              open/read/close of stream, subtree and classic
 *                      cpu.stat, memory.stat and io.stat files (each of
 *                      which flushes on its own path), opens closed unread
 *   interval, memory interval, io interval
 *                      each writes valid intervals (the minimum 10 ms
 *                      often), invalid ones and 0 (streaming stops for a
 *                      moment) to its own knob, independently of the others
 *   monitor, memory monitor, io monitor
 *                      the root's cpu.stat.stream, memory.stat.stream and
 *                      io.stat.stream, read at every flush of their stream:
 *                      the timelines the wake-up checks of each kind of
 *                      file compare against
 *   loop cycler        every 1-4 s, once no migrant uses it, removes the
 *                      second loop device (LOOP_CLR_FD, LOOP_CTL_REMOVE)
 *                      while readers read, and re-creates it (LOOP_CTL_ADD,
 *                      LOOP_CONFIGURE): a new disk under the same number
 *
 * Invariants (each violation prints a FAIL line, the first three again at
 * the end, where a log's tail shows them; the run fails), for the
 * cpu, memory and io files alike, each against its own stream's flushes,
 * stops and interval:
 *   - flush_seq never goes back for one open file, nor do usage/user/
 *     system/nice (cpu), pgfault and the sum of the events.* (memory),
 *     a device's rbytes, wbytes, rios, wios, dbytes and dios (io; while it
 *     is one disk: not across a loop device's removal)
 *     (subtree: per cgroup within one open file);
 *   - no read, poll or open error except ENODEV / EPOLLERR / ENOENT once the
 *     cgroup's rmdir has started (and then: EPOLLERR with ENODEV reads; an
 *     io_uring poll fails with EINVAL; a subtree read at offset 0 never
 *     returns 0 bytes);
 *   - an rmdir returns within 2 s (times --slow);
 *   - at most one POLLIN wake-up per completed flush per open file: over its
 *     life a file gets at most 1 + (flush_seq it last read) - (flushes
 *     completed before it was opened) (missed flushes, flush_missed, are
 *     not flushes);
 *   - EPOLLPRI only after streaming was stopped (interval 0), and a poller
 *     sleeping through a completed flush, a stop or its cgroup's removal
 *     for more than a second (times --slow) is a missed wake-up;
 *   - while a stream is stopped its flush_seq stays put (one cycle that
 *     was under way may still complete): the other streams' flushes are
 *     not its own;
 *   - subtree snapshots: the opened cgroup first with parent_id 0, every
 *     other record's parent before it, no cgroup twice, the cgroups that
 *     live through the whole run present, bandwidth flag where the cpu
 *     controller is on (cpu); a KEYS record first, well formed (flags,
 *     for_type, padding), naming memory.stat's keys in its order, then
 *     "current", then only MEMORY records of 40 + 8 * nr_keys bytes, none
 *     for a cgroup without the memory controller (memory); only IO records
 *     of exactly 48 + 56 * nr_devices bytes, flags and reserved 0, no
 *     device twice, none for a cgroup without the io controller (io);
 *     every read returns whole records (io: each read's bytes on their
 *     own, no record past them), a buffer smaller than the next record (or
 *     the KEYS record) and an offset inside one fail with EINVAL (io: a
 *     read with room then returns a record larger than the buffer, unless
 *     an rmdir or a device's removal came between);
 *   - memory.stat.stream: memory.stat's keys in its order, then flush_seq,
 *     flush_time_usec and flush_missed;
 *   - io.stat.stream and io.stat: "MAJ:MIN" lines, each device once, with
 *     no counters or rbytes= .. dios= in order (then any policy's
 *     key=value); io.stat.stream then exactly flush_seq and
 *     flush_time_usec as its last two lines;
 *   - the migrants' I/O never fails, and in a run of 30 s or more some
 *     device counter of a cgroup below the root rises between two reads;
 *   - interval writes: valid values read back, invalid ones -EINVAL with
 *     the old value kept.
 *
 * usage: cgstress [--seconds N] [--seed S] [--max-failures N] [--no-zero-interval]
 *                 [--no-memory] [--no-io] [--help]
 *        (--no-zero-interval: streaming is never stopped, to look past a
 *        failure that stops cause; --no-memory, --no-io: without that
 *        stream's files, and without the memory charged or the I/O done)
 * Exit: 0 pass, 1 fail, 77 skip (not root, no cgroup2, no cpu.stat.stream).
 * A kernel without memory.stat.stream, or a root where the memory
 * controller cannot be enabled, runs without the memory part; one without
 * io.stat.stream, without the io controller or without loop devices
 * (CONFIG_BLK_DEV_LOOP, /dev/loop-control) without the io part (each with
 * a message).
 * Everything runs under <cgroup2>/cgstress.<pid>, removed at the end (also
 * after a failure or SIGINT/SIGTERM); the intervals and the root's
 * subtree_control are restored, the loop devices cleared and removed, the
 * tmpfs (/tmp/cgstress-io.*) unmounted.
 */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <liburing.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* how long a due wake-up (flush, stop, removal) may take to reach a poller */
#define WAKE_MARGIN_NS		(1 * NSEC_PER_SEC)
/*
 * An rmdir must return within this: rmdir never waits for stream readers
 * (SPEC).  A reader that slept until the next flush would hold it up by
 * up to an interval (10-1000 ms here), which neither this bound nor the
 * old 1 s one tells from a slow rmdir; what it catches is rmdir held up
 * for longer, which the hung-task detector only sees after minutes.  Was
 * 1 s: on the lockdep kernel under TCG, removing a memory and io cgroup
 * took up to 1.21 s (make check, 2026-11-25; 888 ms at most in a
 * 10-minute make stress).
 */
#define RMDIR_LIMIT_NS		(2 * NSEC_PER_SEC)
/*
 * --slow N: the kernel runs about N times slower than the lockdep test
 * kernel (KASAN and KCSAN under TCG: 3; removing a memory and io cgroup
 * took up to 4.1 s on KASAN, 2026-11-26), and the two bounds above, which
 * are about the kernel's speed, are N times longer.
 */
static int64_t rmdir_limit_ns = RMDIR_LIMIT_NS, wake_margin_ns = WAKE_MARGIN_NS;
#define POLL_TIMEOUT_MS		1500
#define FILES_PER_READER	10
#define NR_CHURN		3
#define NR_POLL_READERS		2
#define NR_MIGRANTS		4
#define MAX_CHAIN		8
#define NR_FIXED		7
#define MAX_CGS			(NR_FIXED + NR_CHURN * MAX_CHAIN)
#define BIG_BUF			(1 << 20)
#define MAX_STOPS		100000

/* the memory stream's files, beside common.h's cpu ones */
#define MEM_INTERVAL_FILE	"memory.stat.stream_interval"
#define MEM_STREAM_FILE		"memory.stat.stream"
#define MEM_SUBTREE_FILE	"memory.stat.stream.subtree"
/* a read of memory.stat.stream: its text is about 2 KB */
#define MEM_TEXT_MAX		16384
/* memory.stat's keys, "key\n" each, as read at the start */
#define MEM_KEYS_MAX		8192
/* what one migrant holds at most: anonymous memory and a memfd's pages */
#define MIGRANT_ANON_MAX_MB	8
#define MIGRANT_MEMFD_MAX_MB	2

/* the io stream's files */
#define IO_INTERVAL_FILE	"io.stat.stream_interval"
#define IO_STREAM_FILE		"io.stat.stream"
#define IO_SUBTREE_FILE		"io.stat.stream.subtree"
/* a read of io.stat.stream or io.stat: a line per device */
#define IO_TEXT_MAX		16384
/* the devices one io.stat line or IO record may list here (the root: every disk) */
#define IO_DEVS_MAX		256
/* an IO record: 48 bytes, then 56 per device */
#define IO_REC_MIN		sizeof(struct cgroup_stat_stream_io)
#define IO_DEV_SIZE		sizeof(struct cgroup_stat_stream_io_device)
/* rbytes wbytes rios wios dbytes dios */
#define IO_NR_VALS		6
/* the loop devices the migrants do I/O on; the last one is removed and re-created */
#define NR_LOOPS		2
#define LOOP_BACKING_MB		8
/* one O_DIRECT read or write: 64 to 512 KiB */
#define IO_MIN_KB		64
#define IO_MAX_KB		512
/* /dev/loop-control, for a node of our own where /dev has none */
#define LOOP_CTRL_MISC_MINOR	237

/* ------------------------------------------------------------------ */
/* counters, failures                                                   */

#define COUNTERS(X)							\
	X(mkdir) X(rmdir) X(rmdir_ebusy) X(subtree_control_cpu) X(cpu_max_set) \
	X(migrations) X(migrations_to_removed)				\
	X(stream_opens) X(subtree_opens) X(opens_of_removed) X(closes)	\
	X(stream_reads_large) X(stream_reads_small)			\
	X(subtree_snapshots) X(subtree_records) X(subtree_small_buf_einval) \
	X(subtree_bad_offset_einval)	\
	X(poll_wakes) X(epoll_wakes) X(uring_oneshot_wakes) X(uring_multishot_wakes) \
	X(pri_wakes) X(stale_pri_events) X(err_wakes) X(uring_einval_removed) X(enodev_reads) X(poll_timeouts) \
	X(interval_valid) X(interval_min) X(interval_zero) X(interval_invalid) \
	X(interval_empty)						\
	X(cpustat_reads) X(quick_opens) X(quick_unread_closes) X(interval_reads) \
	X(flushes_seen) X(throttled_cgroups_seen) X(interval_stop_checks)	\
	X(subtree_control_memory)					\
	X(mem_stream_opens) X(mem_subtree_opens)			\
	X(mem_stream_reads_large) X(mem_stream_reads_small)		\
	X(mem_subtree_snapshots) X(mem_subtree_records)			\
	X(mem_subtree_small_buf_einval) X(mem_subtree_bad_offset_einval) \
	X(mem_subtree_record_reads)					\
	X(mem_wakes) X(mem_pri_wakes) X(mem_gone)			\
	X(mem_interval_valid) X(mem_interval_min) X(mem_interval_zero)	\
	X(mem_interval_invalid) X(mem_interval_empty) X(mem_interval_reads) \
	X(mem_interval_stop_checks)					\
	X(memstat_reads) X(mem_flushes_seen)				\
	X(mem_maps) X(mem_touches) X(mem_dontneeds) X(mem_unmaps)	\
	X(mem_memfd_fills) X(mem_memfd_closes) X(mem_touched_mib)	\
	X(subtree_control_io)						\
	X(io_stream_opens) X(io_subtree_opens) X(io_stat_unknown_lines)	\
	X(io_stream_reads_large) X(io_stream_reads_small)		\
	X(io_subtree_snapshots) X(io_subtree_records) X(io_subtree_devices) \
	X(io_subtree_small_buf_einval) X(io_subtree_bad_offset_einval)	\
	X(io_subtree_next_record_einval) X(io_subtree_einval_checked)	\
	X(io_wakes) X(io_pri_wakes) X(io_gone)				\
	X(io_interval_valid) X(io_interval_min) X(io_interval_zero)	\
	X(io_interval_invalid) X(io_interval_empty) X(io_interval_reads) \
	X(io_interval_stop_checks)					\
	X(iostat_reads) X(io_flushes_seen) X(io_devices_read)		\
	X(io_counter_rises) X(io_cgroup_counter_rises) X(io_epoch_skips)	\
	X(io_writes) X(io_reads) X(io_kib) X(io_errors)			\
	X(loop_removals) X(loop_recreates) X(loop_autoloaded) X(loop_busy)

enum counter {
#define X(n) C_##n,
	COUNTERS(X)
#undef X
	C_NR
};
static const char *const counter_names[C_NR] = {
#define X(n) #n,
	COUNTERS(X)
#undef X
};
static atomic_ulong counters[C_NR];
#define COUNT(c) atomic_fetch_add_explicit(&counters[C_##c], 1, memory_order_relaxed)
#define COUNT_IDX(i) atomic_fetch_add_explicit(&counters[i], 1, memory_order_relaxed)

static atomic_long max_rmdir_ns, max_read_ns;
/* --no-zero-interval: never stop streaming (to look past a stop-related failure) */
static bool zero_interval = true;
/* the memory stream is stressed too: --no-memory, or a kernel without it, clear it */
static bool mem_on = true;
/* the io stream too: --no-io, a kernel without it, no io controller or no loop devices clear it */
static bool io_on = true;
/* one loop device is removed and re-created now and then (there are two) */
static bool loop_cycling;
static atomic_long failures;
static long max_failures = 20;
static int64_t t_start;
static volatile sig_atomic_t stop_signal;
static atomic_bool stopping;

static void note_max(atomic_long *m, long v)
{
	long cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

static bool running(void)
{
	return !stop_signal && !atomic_load(&stopping);
}

static double elapsed(void)
{
	return (now_ns() - t_start) / 1e9;
}

/* the first failures, said again at the end: a log's tail then names them */
#define FIRST_FAILURES	3
static char first_failures[FIRST_FAILURES][1024];
static atomic_int nr_first_failures;	/* of them kept */

#define FAIL(...) report_failure(__func__, __VA_ARGS__)
static void __attribute__((format(printf, 2, 3)))
report_failure(const char *where, const char *fmt, ...)
{
	long n = atomic_fetch_add(&failures, 1) + 1;
	va_list ap;

	if (n <= max_failures) {
		char line[sizeof(first_failures[0])];
		int len;

		len = snprintf(line, sizeof(line), "FAIL [%8.3f s] %s: ", elapsed(), where);
		va_start(ap, fmt);
		if (len >= 0 && (size_t)len < sizeof(line))
			vsnprintf(line + len, sizeof(line) - len, fmt, ap);
		va_end(ap);
		flockfile(stdout);
		puts(line);
		fflush(stdout);
		funlockfile(stdout);
		if (n <= FIRST_FAILURES) {
			memcpy(first_failures[n - 1], line, sizeof(line));
			atomic_fetch_add(&nr_first_failures, 1);
		}
	}
	if (n >= max_failures)
		atomic_store(&stopping, true);
}

/* ------------------------------------------------------------------ */
/* the cgroups: fixed ones and the churn threads' trees                 */

static char root[PATH_MAX];	/* the cgroup2 mount */
static char top[PATH_MAX];	/* <root>/cgstress.<pid> */

enum cg_state { CG_FREE, CG_LIVE, CG_REMOVING };

struct cg {
	char path[PATH_MAX];
	uint64_t id;
	enum cg_state state;
	bool fixed;		/* lives through the whole run */
	bool leaf;		/* may hold processes */
	int cpu;		/* cpu controller on: 1, off: 0, unknown: -1 */
	bool mem;		/* memory controller on: it has memory.stat (fixed for life) */
	bool io;		/* io controller on: it has io.stat (fixed for life) */
	bool under_top;
};

static struct cg cgs[MAX_CGS];
static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static int fixed_leaf_a = -1;	/* where processes go when evacuated */

/* a copy of a registry entry, taken under cg_lock */
struct cg_pick {
	char path[PATH_MAX];
	uint64_t id;
	int slot;
	int cpu;
	bool mem;
	bool io;
	bool under_top;
};

/* what a cgroup must have for a file: pick_cg()'s @need */
#define NEED_MEM	(1u << 0)
#define NEED_IO		(1u << 1)

/*
 * A random live (or being removed) cgroup; leaves only if @leaf, ones with
 * the memory or io controller only if @need says so.
 */
static bool pick_cg(struct rng *r, bool leaf, bool removing_too, unsigned int need,
		    struct cg_pick *out)
{
	int cand[MAX_CGS], n = 0, i;

	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < MAX_CGS; i++) {
		if (cgs[i].state == CG_FREE || (leaf && !cgs[i].leaf) ||
		    ((need & NEED_MEM) && !cgs[i].mem) || ((need & NEED_IO) && !cgs[i].io))
			continue;
		if (cgs[i].state == CG_REMOVING && !removing_too)
			continue;
		cand[n++] = i;
	}
	if (n) {
		i = cand[rng_below(r, n)];
		strcpy(out->path, cgs[i].path);
		out->id = cgs[i].id;
		out->slot = i;
		out->cpu = cgs[i].cpu;
		out->mem = cgs[i].mem;
		out->io = cgs[i].io;
		out->under_top = cgs[i].under_top;
	}
	pthread_mutex_unlock(&cg_lock);
	return n > 0;
}

/*
 * Removals, by cgroup id: when rmdir started and returned.  An ENODEV,
 * EPOLLERR or ENOENT is only fine for a cgroup whose rmdir has started.
 */
struct removal {
	uint64_t id;
	int64_t t_start, t_done;
	bool enodev;
};
static struct removal *rm_tab;
static size_t rm_cap, rm_nr;
/*
 * rmdirs started: a cgroup may have gone offline between two reads when it
 * moved; and returned: while the two differ, one is under way
 */
static atomic_ulong rm_starts, rm_ends;
static pthread_mutex_t rm_lock = PTHREAD_MUTEX_INITIALIZER;

static struct removal *rm_slot(uint64_t id)
{
	size_t i = (id * 0x9e3779b97f4a7c15ULL) & (rm_cap - 1);

	while (rm_tab[i].id && rm_tab[i].id != id)
		i = (i + 1) & (rm_cap - 1);
	return &rm_tab[i];
}

static void rm_start(uint64_t id)
{
	struct removal *e;

	pthread_mutex_lock(&rm_lock);
	if (2 * (rm_nr + 1) > rm_cap) {
		struct removal *old = rm_tab;
		size_t old_cap = rm_cap, i;

		rm_cap = rm_cap ? 2 * rm_cap : 1024;
		rm_tab = calloc(rm_cap, sizeof(*rm_tab));
		if (!rm_tab) {
			perror("calloc");
			exit(EXIT_FAIL);
		}
		for (i = 0; i < old_cap; i++)
			if (old[i].id)
				*rm_slot(old[i].id) = old[i];
		free(old);
	}
	e = rm_slot(id);
	if (!e->id) {
		e->id = id;
		rm_nr++;
	}
	e->t_start = now_ns();
	e->t_done = 0;
	pthread_mutex_unlock(&rm_lock);
	atomic_fetch_add(&rm_starts, 1);
}

static void rm_done(uint64_t id)
{
	pthread_mutex_lock(&rm_lock);
	rm_slot(id)->t_done = now_ns();
	pthread_mutex_unlock(&rm_lock);
}

/* has @id's rmdir started?  *@t_done: when it returned, 0 if not yet */
static bool rm_started(uint64_t id, int64_t *t_done)
{
	struct removal *e;
	bool ret = false;

	pthread_mutex_lock(&rm_lock);
	if (rm_cap) {
		e = rm_slot(id);
		ret = e->id == id;
		if (ret && t_done)
			*t_done = e->t_done;
	}
	pthread_mutex_unlock(&rm_lock);
	return ret;
}

/* an ENODEV was seen for @id: returns false when its rmdir had not started */
static bool rm_note_enodev(uint64_t id)
{
	struct removal *e;
	bool ret = false;

	pthread_mutex_lock(&rm_lock);
	if (rm_cap) {
		e = rm_slot(id);
		ret = e->id == id;
		if (ret)
			e->enodev = true;
	}
	pthread_mutex_unlock(&rm_lock);
	return ret;
}

static bool rm_enodev_seen(uint64_t id)
{
	bool ret;

	pthread_mutex_lock(&rm_lock);
	ret = rm_slot(id)->id == id && rm_slot(id)->enodev;
	pthread_mutex_unlock(&rm_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* per stream (cpu, memory, io): its monitor's timeline, its stops, its knob */

struct mon_entry {
	int64_t t_end;		/* the read returned then */
	uint64_t seq_max;	/* highest flush_seq read up to then */
};

/*
 * Stops: the stream's interval thread numbers each write of 0 over a
 * running interval; entries are written before the counter that publishes
 * them.
 */
struct track {
	const char *what;		/* in messages: "interval", "memory interval", "io interval" */
	const char *interval_file;	/* the root's knob */
	const char *stream_file;	/* what its monitor reads */
	struct mon_entry *mon_log;
	size_t mon_nr, mon_cap;
	pthread_mutex_t mon_lock;
	int64_t stop_t_start[MAX_STOPS], stop_t_done[MAX_STOPS];
	atomic_long stops_started, stops_done;
	/* the interval writer's counters */
	enum counter c_valid, c_min, c_zero, c_invalid, c_empty, c_stop_checks;
};

enum { T_CPU, T_MEM, T_IO, T_NR };
static struct track tracks[T_NR] = {
	[T_CPU] = {
		.what = "interval", .interval_file = INTERVAL_FILE, .stream_file = STREAM_FILE,
		.mon_lock = PTHREAD_MUTEX_INITIALIZER,
		.c_valid = C_interval_valid, .c_min = C_interval_min, .c_zero = C_interval_zero,
		.c_invalid = C_interval_invalid, .c_empty = C_interval_empty,
		.c_stop_checks = C_interval_stop_checks,
	},
	[T_MEM] = {
		.what = "memory interval", .interval_file = MEM_INTERVAL_FILE,
		.stream_file = MEM_STREAM_FILE, .mon_lock = PTHREAD_MUTEX_INITIALIZER,
		.c_valid = C_mem_interval_valid, .c_min = C_mem_interval_min,
		.c_zero = C_mem_interval_zero, .c_invalid = C_mem_interval_invalid,
		.c_empty = C_mem_interval_empty, .c_stop_checks = C_mem_interval_stop_checks,
	},
	[T_IO] = {
		.what = "io interval", .interval_file = IO_INTERVAL_FILE,
		.stream_file = IO_STREAM_FILE, .mon_lock = PTHREAD_MUTEX_INITIALIZER,
		.c_valid = C_io_interval_valid, .c_min = C_io_interval_min,
		.c_zero = C_io_interval_zero, .c_invalid = C_io_interval_invalid,
		.c_empty = C_io_interval_empty, .c_stop_checks = C_io_interval_stop_checks,
	},
};

static void mon_append(struct track *t, int64_t t_end, uint64_t seq)
{
	pthread_mutex_lock(&t->mon_lock);
	if (t->mon_nr == t->mon_cap) {
		t->mon_cap = t->mon_cap ? 2 * t->mon_cap : 4096;
		t->mon_log = realloc(t->mon_log, t->mon_cap * sizeof(*t->mon_log));
		if (!t->mon_log) {
			perror("realloc");
			exit(EXIT_FAIL);
		}
	}
	if (t->mon_nr && t->mon_log[t->mon_nr - 1].seq_max > seq)
		seq = t->mon_log[t->mon_nr - 1].seq_max;
	t->mon_log[t->mon_nr++] = (struct mon_entry){ t_end, seq };
	pthread_mutex_unlock(&t->mon_lock);
}

/*
 * The highest flush_seq @t's monitor had read by @when.  A read labels
 * values with a flush that is at most one ahead of the completed one (a
 * cycle publishes before it completes), so at least this minus one
 * flushes had completed by @when.
 */
static uint64_t mon_seq_by(struct track *t, int64_t when)
{
	size_t lo = 0, hi;
	uint64_t ret = 0;

	pthread_mutex_lock(&t->mon_lock);
	hi = t->mon_nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->mon_log[mid].t_end <= when)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		ret = t->mon_log[lo - 1].seq_max;
	pthread_mutex_unlock(&t->mon_lock);
	return ret;
}

/* flushes of @t's stream that had certainly completed by @when */
static uint64_t completed_by(struct track *t, int64_t when)
{
	uint64_t s = mon_seq_by(t, when);

	return s ? s - 1 : 0;
}

/* the root's <ctrl>.stat.stream_interval: ms, or -errno (common.h's interval_get, any knob) */
static long track_interval_get(const struct track *t)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t n;
	long ms;

	path_join(path, sizeof(path), root, t->interval_file);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	errno = 0;
	ms = strtol(buf, &end, 10);
	if (errno || end == buf || strcmp(end, "\n"))
		return -EINVAL;
	return ms;
}

static int track_interval_set(const struct track *t, long ms)
{
	char path[PATH_MAX], text[32];

	path_join(path, sizeof(path), root, t->interval_file);
	snprintf(text, sizeof(text), "%ld\n", ms);
	return write_file(path, text);
}

/*
 * The flush_seq the root's stream file of @t prints now, through a file
 * opened for this read only: -1 if it cannot be had (reported).
 */
static int64_t track_seq_now(const struct track *t, char *buf, size_t len)
{
	char path[PATH_MAX];
	const char *p;
	ssize_t n;

	path_join(path, sizeof(path), root, t->stream_file);
	n = read_file(path, buf, len);
	if (n < 0) {
		FAIL("read %s: %s", path, strerror(-n));
		return -1;
	}
	/* io.stat.stream without devices starts with it */
	if (!strncmp(buf, CGROUP_STAT_STREAM_KEY_SEQ " ", strlen(CGROUP_STAT_STREAM_KEY_SEQ) + 1))
		p = buf;
	else if ((p = strstr(buf, "\n" CGROUP_STAT_STREAM_KEY_SEQ " ")))
		p++;
	if (!p) {
		FAIL("%s: no %s: %.60s", path, CGROUP_STAT_STREAM_KEY_SEQ, buf);
		return -1;
	}
	return strtoll(p + strlen(CGROUP_STAT_STREAM_KEY_SEQ) + 1, NULL, 10);
}

/* ------------------------------------------------------------------ */
/* per-file state of the readers                                        */

/*
 * Last label and values of one cgroup in one open subtree file, or (io)
 * of one device of a cgroup in one open io file: keyed by @id and @dev.
 */
struct idmap_entry {
	uint64_t id, dev, label, usage, user, system, nice;
	uint64_t pgfault, events;	/* memory: pgfault, the sum of the events.* */
	uint64_t io[IO_NR_VALS];	/* io: one device's counters */
	uint64_t epoch;		/* io: its loop device's epoch (loop_epoch) then */
	uint64_t snap;		/* the snapshot it was last seen in */
};
struct idmap {
	struct idmap_entry *e;
	size_t cap, nr;
};

static size_t idmap_hash(const struct idmap *m, uint64_t id, uint64_t dev)
{
	return ((id ^ dev * 0xff51afd7ed558ccdULL) * 0x9e3779b97f4a7c15ULL) & (m->cap - 1);
}

/* @id's entry (@dev 0), or that of its device @dev (io), made if new (*@fresh) */
static struct idmap_entry *idmap_get_dev(struct idmap *m, uint64_t id, uint64_t dev, bool *fresh)
{
	size_t i;

	if (2 * (m->nr + 1) > m->cap) {
		struct idmap old = *m;

		m->cap = m->cap ? 2 * m->cap : 64;
		m->e = calloc(m->cap, sizeof(*m->e));
		if (!m->e) {
			perror("calloc");
			exit(EXIT_FAIL);
		}
		m->nr = 0;
		for (i = 0; i < old.cap; i++)
			if (old.e[i].id) {
				bool f;

				*idmap_get_dev(m, old.e[i].id, old.e[i].dev, &f) = old.e[i];
			}
		free(old.e);
	}
	i = idmap_hash(m, id, dev);
	while (m->e[i].id && (m->e[i].id != id || m->e[i].dev != dev))
		i = (i + 1) & (m->cap - 1);
	*fresh = !m->e[i].id;
	if (*fresh) {
		m->e[i].id = id;
		m->e[i].dev = dev;
		m->nr++;
	}
	return &m->e[i];
}

static struct idmap_entry *idmap_get(struct idmap *m, uint64_t id, bool *fresh)
{
	return idmap_get_dev(m, id, 0, fresh);
}

enum file_kind { F_STREAM, F_SUBTREE, F_MEM_STREAM, F_MEM_SUBTREE, F_IO_STREAM, F_IO_SUBTREE };

/* the last events of an open file, printed when an invariant breaks */
#define HIST 16
struct hist {
	char what;		/* o open, b read unwoken, w read after POLLIN, p EPOLLPRI, a armed */
	uint64_t seq;
	int64_t t;
};

struct sfile {
	int fd;			/* -1: unused */
	enum file_kind kind;
	struct cg_pick cg;
	int64_t t_open;		/* before open() */
	int64_t t_read_end;	/* when the last successful read (or the open) returned */
	long stops_done_ref;	/* stops_done before the last read (or the open) */
	uint64_t wakes;		/* POLLIN wake-ups, each followed by a successful read */
	bool have_seq;
	uint64_t seq_last;	/* flush_seq of the last read (subtree: opened cgroup's record) */
	uint64_t seq_max;
	struct stream_sample last;
	bool mem_have_last;	/* memory.stat.stream: the last read's */
	uint64_t mem_pgfault, mem_missed;
	struct idmap ids;	/* subtree */
	struct idmap devs;	/* io: per cgroup and device */
	uint64_t snaps;
	bool gone;		/* ENODEV/EPOLLERR seen: removed */
	const char *via;	/* how it is waited on */
	struct hist hist[HIST];
	unsigned int nhist;
	/* io_uring */
	uint32_t gen;
	bool armed, multishot;
	/* epoll */
	bool edge;
};

struct reader {
	struct rng rng;
	char *buf;		/* BIG_BUF */
	char *snap;		/* a subtree snapshot being assembled */
	size_t snap_cap;
	struct sfile f[FILES_PER_READER];
};

static const char *kind_name(enum file_kind k)
{
	switch (k) {
	case F_STREAM: return STREAM_FILE;
	case F_SUBTREE: return SUBTREE_FILE;
	case F_MEM_STREAM: return MEM_STREAM_FILE;
	case F_MEM_SUBTREE: return MEM_SUBTREE_FILE;
	case F_IO_STREAM: return IO_STREAM_FILE;
	default: return IO_SUBTREE_FILE;
	}
}

static bool kind_mem(enum file_kind k)
{
	return k == F_MEM_STREAM || k == F_MEM_SUBTREE;
}

static bool kind_io(enum file_kind k)
{
	return k == F_IO_STREAM || k == F_IO_SUBTREE;
}

/* what a cgroup needs for a file of @k (pick_cg()'s @need) */
static unsigned int kind_need(enum file_kind k)
{
	return kind_mem(k) ? NEED_MEM : kind_io(k) ? NEED_IO : 0;
}

/* the stream whose flushes, stops and interval @f's wake-ups follow */
static struct track *file_track(const struct sfile *f)
{
	return &tracks[kind_mem(f->kind) ? T_MEM : kind_io(f->kind) ? T_IO : T_CPU];
}

/*
 * @subtree or not; cpu, or memory and io when stressed (35% each with
 * both, 40% with one): the cost of the run stays that of the cpu stream's
 */
static enum file_kind pick_kind(struct rng *r, bool subtree)
{
	unsigned int what = rng_below(r, 100), share = mem_on && io_on ? 35 : 40;

	if (mem_on && what < share)
		return subtree ? F_MEM_SUBTREE : F_MEM_STREAM;
	if (io_on && what >= 100 - share)
		return subtree ? F_IO_SUBTREE : F_IO_STREAM;
	return subtree ? F_SUBTREE : F_STREAM;
}

static void hist_add(struct sfile *f, char what, uint64_t seq)
{
	f->hist[f->nhist++ % HIST] = (struct hist){ what, seq, now_ns() };
}

static void hist_print(struct sfile *f)
{
	unsigned int i = f->nhist > HIST ? f->nhist - HIST : 0;

	flockfile(stdout);
	printf("  %s/%s via %s, opened at %.3f s; last events (flush_seq@s):", f->cg.path,
	       kind_name(f->kind), f->via ? f->via : "-", (f->t_open - t_start) / 1e9);
	for (; i < f->nhist; i++) {
		struct hist *h = &f->hist[i % HIST];

		printf(" %c%llu@%.3f", h->what, (unsigned long long)h->seq, (h->t - t_start) / 1e9);
	}
	putchar('\n');
	funlockfile(stdout);
}

/* An ENODEV/ENOENT/EPOLLERR for @f's cgroup: fine once its rmdir started. */
static void check_gone(struct sfile *f, const char *what)
{
	if (!rm_note_enodev(f->cg.id))
		FAIL("%s on %s/%s, a cgroup whose rmdir had not started",
		     what, f->cg.path, kind_name(f->kind));
	if (kind_mem(f->kind) && !f->gone)
		COUNT(mem_gone);
	if (kind_io(f->kind) && !f->gone)
		COUNT(io_gone);
	f->gone = true;
}

/*
 * Opens @kind of a random cgroup (or of registry slot @slot), a removed one
 * too: 0, or -errno (failures other than a removal are reported).
 */
static int reader_open(struct reader *rd, struct sfile *f, enum file_kind kind, int slot)
{
	uint32_t gen = f->gen;	/* completions of earlier files carry older ones */
	int dfd, fd;
	struct stat st;
	int64_t t0;

	memset(f, 0, sizeof(*f));
	f->gen = gen;
	f->fd = -1;
	f->kind = kind;
	if (slot >= 0) {
		pthread_mutex_lock(&cg_lock);
		strcpy(f->cg.path, cgs[slot].path);
		f->cg.id = cgs[slot].id;
		f->cg.slot = slot;
		f->cg.cpu = cgs[slot].cpu;
		f->cg.mem = cgs[slot].mem;
		f->cg.io = cgs[slot].io;
		f->cg.under_top = cgs[slot].under_top;
		pthread_mutex_unlock(&cg_lock);
	} else if (!pick_cg(&rd->rng, false, true, kind_need(kind), &f->cg)) {
		return -ENOENT;
	}
	f->stops_done_ref = atomic_load(&file_track(f)->stops_done);
	t0 = now_ns();
	dfd = open(f->cg.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT && rm_started(f->cg.id, NULL)) {
			COUNT(opens_of_removed);
			return -ENOENT;
		}
		FAIL("open %s: %s", f->cg.path, strerror(errno));
		return -errno;
	}
	/* the path may name a new cgroup by now: only the picked one counts */
	if (fstat(dfd, &st) || (uint64_t)st.st_ino != f->cg.id) {
		close(dfd);
		return -ESTALE;
	}
	fd = openat(dfd, kind_name(kind), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV) {
			check_gone(f, "open failing with ENOENT/ENODEV");
			COUNT(opens_of_removed);
			return -ENOENT;
		}
		FAIL("open %s/%s: %s", f->cg.path, kind_name(kind), strerror(errno));
		return -errno;
	}
	f->fd = fd;
	f->t_open = t0;
	f->t_read_end = now_ns();
	f->gen++;
	hist_add(f, 'o', 0);
	switch (kind) {
	case F_STREAM: COUNT(stream_opens); break;
	case F_SUBTREE: COUNT(subtree_opens); break;
	case F_MEM_STREAM: COUNT(mem_stream_opens); break;
	case F_MEM_SUBTREE: COUNT(mem_subtree_opens); break;
	case F_IO_STREAM: COUNT(io_stream_opens); break;
	case F_IO_SUBTREE: COUNT(io_subtree_opens); break;
	}
	return 0;
}

/*
 * At most one wake-up per flush: wake-up i was followed by a read that
 * marked flush F_i seen, and wake-up i+1 needs a flush after F_i, so the
 * F_i strictly grow from at least the flushes completed at the open.
 */
static void reader_close(struct sfile *f)
{
	if (f->fd < 0)
		return;
	if (f->wakes && f->have_seq) {
		uint64_t before = completed_by(file_track(f), f->t_open);
		uint64_t limit = 1 + (f->seq_max > before ? f->seq_max - before : 0);

		if (f->wakes > limit) {
			FAIL("%s/%s: %llu POLLIN wake-ups, more than one per flush: "
			     "flush_seq %llu at the last read, %llu flushes completed before the open",
			     f->cg.path, kind_name(f->kind), (unsigned long long)f->wakes,
			     (unsigned long long)f->seq_max, (unsigned long long)before);
			hist_print(f);
		}
	}
	close(f->fd);
	f->fd = -1;
	free(f->ids.e);
	f->ids = (struct idmap){ 0 };
	free(f->devs.e);
	f->devs = (struct idmap){ 0 };
	COUNT(closes);
}

/* one flush label read through @f: it never goes back */
static void check_label(struct sfile *f, uint64_t seq, const char *what)
{
	if (f->have_seq && seq < f->seq_last)
		FAIL("%s/%s: flush_seq went back from %llu to %llu (%s)", f->cg.path,
		     kind_name(f->kind), (unsigned long long)f->seq_last,
		     (unsigned long long)seq, what);
	f->have_seq = true;
	f->seq_last = seq;
	if (seq > f->seq_max)
		f->seq_max = seq;
}

static void note_read_time(int64_t t0)
{
	note_max(&max_read_ns, now_ns() - t0);
}

/* 0, -ENODEV (removed, checked), or -EIO (a failure, reported) */
static int read_stream(struct reader *rd, struct sfile *f)
{
	struct stream_sample s;
	char why[128];
	ssize_t len = 0, n;
	int64_t t0 = now_ns();
	bool small = rng_pct(&rd->rng, 40);
	int k;

	if (!small) {
		len = pread(f->fd, rd->buf, 4096, 0);
		n = len;
		COUNT(stream_reads_large);
	} else {
		/* a seq_file read in pieces: one show(), handed out piecewise */
		size_t chunk = rng_range(&rd->rng, 1, 64);

		n = lseek(f->fd, 0, SEEK_SET);
		while (n >= 0 && len < 4095) {
			n = read(f->fd, rd->buf + len, chunk < 4095 - (size_t)len ? chunk : 4095 - (size_t)len);
			if (n <= 0)
				break;
			len += n;
		}
		COUNT(stream_reads_small);
	}
	note_read_time(t0);
	if (n < 0) {
		if (errno == ENODEV) {
			check_gone(f, "read failing with ENODEV");
			COUNT(enodev_reads);
			return -ENODEV;
		}
		FAIL("read %s/%s: %s", f->cg.path, STREAM_FILE, strerror(errno));
		return -EIO;
	}
	if (parse_stream(rd->buf, len, &s, why)) {
		FAIL("%s/%s: %s: %.*s", f->cg.path, STREAM_FILE, why, (int)len, rd->buf);
		return -EIO;
	}
	check_label(f, s.v[K_FLUSH_SEQ], small ? "small reads" : "pread");
	if (f->last.present) {
		for (k = K_USAGE; k <= K_NICE; k++)
			if (s.v[k] < f->last.v[k])
				FAIL("%s/%s: key %d went back from %llu to %llu (flush_seq %llu -> %llu)",
				     f->cg.path, STREAM_FILE, k, (unsigned long long)f->last.v[k],
				     (unsigned long long)s.v[k],
				     (unsigned long long)f->last.v[K_FLUSH_SEQ],
				     (unsigned long long)s.v[K_FLUSH_SEQ]);
		if (s.v[K_FLUSH_MISSED] < f->last.v[K_FLUSH_MISSED])
			FAIL("%s: flush_missed went back", f->cg.path);
	}
	if (f->cg.cpu >= 0 && !!(s.present & STREAM_KEYS_BANDWIDTH) != f->cg.cpu)
		FAIL("%s/%s: bandwidth keys %s, cpu controller %s", f->cg.path, STREAM_FILE,
		     s.present & STREAM_KEYS_BANDWIDTH ? "present" : "absent",
		     f->cg.cpu ? "on" : "off");
	if (s.v[K_FLUSH_SEQ] && (int64_t)s.v[K_FLUSH_TIME] * 1000 > now_ns())
		FAIL("%s: flush_time_usec %llu is in the future", f->cg.path,
		     (unsigned long long)s.v[K_FLUSH_TIME]);
	if (s.v[K_NR_THROTTLED])
		COUNT(throttled_cgroups_seen);
	f->last = s;
	return 0;
}

/*
 * An empty read at offset 0 is always wrong: a snapshot holds at least the
 * opened cgroup's record, and once its rmdir has taken it offline reads
 * fail with ENODEV, also before its files are gone.
 */
static int subtree_empty(struct sfile *f, const char *what)
{
	FAIL("%s/%s: %s (rmdir %s)", f->cg.path, kind_name(f->kind), what,
	     rm_started(f->cg.id, NULL) ? "started" : "not started");
	return -EIO;
}

/*
 * The fixed cgroups under top must appear in every snapshot of top (of
 * memory or io: those with the controller @need names).
 */
static void check_fixed_present(struct sfile *f, uint64_t snap, unsigned int need)
{
	bool fresh;
	int i;

	for (i = 0; i < NR_FIXED; i++) {
		struct idmap_entry *e;

		if (!cgs[i].fixed || !cgs[i].under_top || ((need & NEED_MEM) && !cgs[i].mem) ||
		    ((need & NEED_IO) && !cgs[i].io))
			continue;
		e = idmap_get(&f->ids, cgs[i].id, &fresh);
		if (fresh || e->snap != snap)
			FAIL("snapshot %llu of %s/%s lacks %s, alive all along",
			     (unsigned long long)snap, f->cg.path, kind_name(f->kind), cgs[i].path);
	}
}

static int check_snapshot(struct sfile *f, const char *buf, size_t len)
{
	struct cgstream_record rec;
	size_t off = 0, nr = 0;
	uint64_t snap = ++f->snaps;
	int ret;

	while ((ret = cgstream_records_next(buf, len, &off, &rec, sizeof(rec))) > 0) {
		const struct cgstream_sample *s = &rec.sample;
		struct idmap_entry *e;
		bool fresh;

		if (rec.type != CGSTREAM_RECORD_CPU)
			continue;
		nr++;
		if (nr == 1) {
			if (rec.cgroup_id != f->cg.id || rec.parent_id)
				FAIL("%s/%s: first record is cgroup %llu parent %llu, not the opened %llu",
				     f->cg.path, SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id, (unsigned long long)f->cg.id);
			check_label(f, s->seq, "subtree");
		} else {
			struct idmap_entry *p = idmap_get(&f->ids, rec.parent_id, &fresh);

			if (fresh || p->snap != snap)
				FAIL("%s/%s: record of %llu before (or without) its parent %llu",
				     f->cg.path, SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id);
		}
		e = idmap_get(&f->ids, rec.cgroup_id, &fresh);
		if (!fresh && e->snap == snap)
			FAIL("%s/%s: cgroup %llu twice in one snapshot", f->cg.path, SUBTREE_FILE,
			     (unsigned long long)rec.cgroup_id);
		if (!fresh && (s->seq < e->label || s->usage_usec < e->usage ||
			       s->user_usec < e->user || s->system_usec < e->system ||
			       s->nice_usec < e->nice))
			FAIL("%s/%s: cgroup %llu went back: flush_seq %llu -> %llu, usage %llu -> %llu, "
			     "user %llu -> %llu, system %llu -> %llu", f->cg.path, SUBTREE_FILE,
			     (unsigned long long)rec.cgroup_id, (unsigned long long)e->label,
			     (unsigned long long)s->seq, (unsigned long long)e->usage,
			     (unsigned long long)s->usage_usec, (unsigned long long)e->user,
			     (unsigned long long)s->user_usec, (unsigned long long)e->system,
			     (unsigned long long)s->system_usec);
		e->label = s->seq;
		e->usage = s->usage_usec;
		e->user = s->user_usec;
		e->system = s->system_usec;
		e->nice = s->nice_usec;
		e->snap = snap;
		if (s->nr_throttled)
			COUNT(throttled_cgroups_seen);
		/* the fixed cgroups' cpu controller state is known */
		for (int i = 0; i < NR_FIXED; i++)
			if (cgs[i].id == rec.cgroup_id && cgs[i].cpu >= 0 &&
			    !!(rec.flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) != cgs[i].cpu)
				FAIL("%s: bandwidth flag %u, cpu controller %s", cgs[i].path,
				     rec.flags, cgs[i].cpu ? "on" : "off");
	}
	if (ret < 0) {
		FAIL("%s/%s: a malformed record at offset %zu of %zu (%s)", f->cg.path,
		     SUBTREE_FILE, off, len, strerror(-ret));
		return -EIO;
	}
	if (!nr)
		return subtree_empty(f, "an empty snapshot");
	if (f->cg.id == cgs[0].id || f->cg.id == cgs[6].id)
		check_fixed_present(f, snap, 0);
	COUNT(subtree_snapshots);
	atomic_fetch_add(&counters[C_subtree_records], nr);
	return 0;
}

static int subtree_error(struct sfile *f, const char *what)
{
	if (errno == ENODEV) {
		check_gone(f, "subtree read failing with ENODEV");
		COUNT(enodev_reads);
		return -ENODEV;
	}
	FAIL("%s %s/%s: %s", what, f->cg.path, kind_name(f->kind), strerror(errno));
	return -EIO;
}

/* one whole snapshot, in pieces of random size: 0, -ENODEV or -EIO */
static int read_subtree(struct reader *rd, struct sfile *f)
{
	const size_t rsize = CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0;
	size_t len = 0, chunk;
	int mode = rng_below(&rd->rng, 3);
	int64_t t0;
	ssize_t n;

	/* a buffer smaller than the next record: EINVAL */
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, rng_range(&rd->rng, 1, rsize - 1), 0);
		if (!n)
			return subtree_empty(f, "a read smaller than a record returned 0");
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "small-buffer pread of");
			FAIL("%s/%s: a %zd-byte read of a smaller buffer than a record", f->cg.path,
			     SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(subtree_small_buf_einval);
	}
	/* an offset that continues no snapshot: EINVAL (records are 112 bytes) */
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, 4096, rng_range(&rd->rng, 1, rsize - 1));
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "bad-offset pread of");
			FAIL("%s/%s: pread at an offset inside a record returned %zd", f->cg.path,
			     SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(subtree_bad_offset_einval);
	}
	chunk = mode == 0 ? BIG_BUF : (size_t)rng_range(&rd->rng, rsize, 16384);
	do {
		if (len + chunk > rd->snap_cap) {
			rd->snap_cap = 2 * (len + chunk);
			rd->snap = realloc(rd->snap, rd->snap_cap);
			if (!rd->snap) {
				perror("realloc");
				exit(EXIT_FAIL);
			}
		}
		t0 = now_ns();
		/* modes: 0 pread 1 MiB, 1 pread then read() on, 2 pread at the running offset */
		if (!len || mode != 1)
			n = pread(f->fd, rd->snap + len, chunk, len);
		else
			n = read(f->fd, rd->snap + len, chunk);
		note_read_time(t0);
		if (n < 0)
			return subtree_error(f, len ? "continued read of" : "read of");
		if (n % rsize) {
			FAIL("%s/%s: a read returned %zd bytes, not whole records", f->cg.path,
			     SUBTREE_FILE, n);
			return -EIO;
		}
		/* read() goes on from the file position pread() did not move */
		if (!len && mode == 1 && n && lseek(f->fd, n, SEEK_SET) != n)
			return subtree_error(f, "lseek of");
		len += n;
	} while (n > 0);
	return check_snapshot(f, rd->snap, len);
}

/* ------------------------------------------------------------------ */
/* memory.stat.stream and memory.stat.stream.subtree                    */

/* memory.stat's keys ("key\n" each) as read at the start, then with the flush keys */
static char mem_keys[MEM_KEYS_MAX];
static char mem_stream_keys[MEM_KEYS_MAX + 64];
static int mem_nr_keys;
/* sizes of the KEYS and MEMORY records, from the last well-formed snapshot */
static atomic_uint mem_keys_size, mem_rec_size;

struct mem_sample {
	uint64_t seq, time_usec, missed, pgfault;
	bool have_pgfault;
};

/*
 * Parses memory.stat.stream: "key value\n" lines, exactly memory.stat's
 * keys in its order, then flush_seq, flush_time_usec, flush_missed.  0, or
 * -EINVAL with a reason in @why (at least 128 bytes).
 */
static int parse_mem_stream(const char *text, size_t len, struct mem_sample *s, char *why)
{
	const char *want = mem_stream_keys;	/* the keys still to come */
	size_t pos = 0;

	memset(s, 0, sizeof(*s));
	if (!len || text[len - 1] != '\n') {
		snprintf(why, 128, "%zu bytes not ending in a newline", len);
		return -EINVAL;
	}
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		const char *sp = memchr(line, ' ', nl - line);
		size_t klen, wlen;
		uint64_t v = 0;
		int digits = 0;

		if (!sp || sp == line) {
			snprintf(why, 128, "line %.40s has no 'key value'", line);
			return -EINVAL;
		}
		klen = sp - line;
		for (const char *p = sp + 1; p < nl; p++, digits++) {
			if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) {
				snprintf(why, 128, "bad value in %.*s", (int)(nl - line), line);
				return -EINVAL;
			}
			v = v * 10 + (*p - '0');
		}
		if (!digits) {
			snprintf(why, 128, "no value in %.*s", (int)(nl - line), line);
			return -EINVAL;
		}
		if (!*want) {
			snprintf(why, 128, "key %.*s after %s", (int)klen, line,
				 CGROUP_STAT_STREAM_KEY_MISSED);
			return -EINVAL;
		}
		wlen = strchr(want, '\n') - want;
		if (wlen != klen || memcmp(want, line, klen)) {
			snprintf(why, 128, "key %.*s where memory.stat (then the flush keys) has %.*s",
				 (int)klen, line, (int)wlen, want);
			return -EINVAL;
		}
		want += wlen + 1;
		if (klen == 7 && !memcmp(line, "pgfault", 7)) {
			s->pgfault = v;
			s->have_pgfault = true;
		} else if (!*want) {
			s->missed = v;
		} else if (!strcmp(want, CGROUP_STAT_STREAM_KEY_MISSED "\n")) {
			s->time_usec = v;
		} else if (!strcmp(want, CGROUP_STAT_STREAM_KEY_TIME "\n"
					 CGROUP_STAT_STREAM_KEY_MISSED "\n")) {
			s->seq = v;
		}
		pos = nl - text + 1;
	}
	if (*want) {
		snprintf(why, 128, "keys missing from %.*s on", (int)strcspn(want, "\n"), want);
		return -EINVAL;
	}
	return 0;
}

/* memory.stat.stream, read whole or in pieces: 0, -ENODEV (removed, checked), or -EIO */
static int read_mem_stream(struct reader *rd, struct sfile *f)
{
	struct mem_sample s;
	char why[128];
	ssize_t len = 0, n;
	int64_t t0 = now_ns();
	bool small = rng_pct(&rd->rng, 40);

	if (!small) {
		len = pread(f->fd, rd->buf, MEM_TEXT_MAX, 0);
		n = len;
		COUNT(mem_stream_reads_large);
	} else {
		size_t chunk = rng_range(&rd->rng, 1, 256), room;

		n = lseek(f->fd, 0, SEEK_SET);
		while (n >= 0 && len < MEM_TEXT_MAX) {
			room = MEM_TEXT_MAX - len;
			n = read(f->fd, rd->buf + len, chunk < room ? chunk : room);
			if (n <= 0)
				break;
			len += n;
		}
		COUNT(mem_stream_reads_small);
	}
	note_read_time(t0);
	if (n < 0) {
		if (errno == ENODEV) {
			check_gone(f, "read failing with ENODEV");
			COUNT(enodev_reads);
			return -ENODEV;
		}
		FAIL("read %s/%s: %s", f->cg.path, MEM_STREAM_FILE, strerror(errno));
		return -EIO;
	}
	if (len >= MEM_TEXT_MAX) {
		FAIL("%s/%s: more than %d bytes", f->cg.path, MEM_STREAM_FILE, MEM_TEXT_MAX);
		return -EIO;
	}
	if (parse_mem_stream(rd->buf, len, &s, why)) {
		FAIL("%s/%s: %s", f->cg.path, MEM_STREAM_FILE, why);
		return -EIO;
	}
	check_label(f, s.seq, small ? "small reads" : "pread");
	if (f->mem_have_last) {
		if (s.have_pgfault && s.pgfault < f->mem_pgfault)
			FAIL("%s/%s: pgfault went back from %llu to %llu (flush_seq %llu)",
			     f->cg.path, MEM_STREAM_FILE, (unsigned long long)f->mem_pgfault,
			     (unsigned long long)s.pgfault, (unsigned long long)s.seq);
		if (s.missed < f->mem_missed)
			FAIL("%s/%s: flush_missed went back", f->cg.path, MEM_STREAM_FILE);
	}
	if (s.seq && (int64_t)s.time_usec * 1000 > now_ns())
		FAIL("%s/%s: flush_time_usec %llu is in the future", f->cg.path, MEM_STREAM_FILE,
		     (unsigned long long)s.time_usec);
	f->mem_have_last = true;
	f->mem_pgfault = s.pgfault;
	f->mem_missed = s.missed;
	return 0;
}

/* what a memory snapshot's KEYS record says */
struct mem_keys_info {
	size_t size;		/* of the KEYS record */
	size_t rec_size;	/* of every MEMORY record: 40 + 8 * nr_keys */
	unsigned int nr;
	int pgfault;		/* index of "pgfault", -1 if none */
	int events_first;	/* the events.* are the names from here on, -1 if none */
};

/*
 * Checks the KEYS record at the start of a snapshot (as the library's
 * decoder returned it: its names end within it): its header, zero padding
 * to a multiple of 8; the names: memory.stat's keys in its order,
 * "current", maybe "swap.current", then only "events.*".  0, or -EINVAL
 * with a reason in @why (at least 128 bytes).
 */
static int parse_mem_keys(const struct cgstream_record *rec, struct mem_keys_info *k, char *why)
{
	struct cgroup_stat_stream_keys h;
	const char *want = mem_keys, *buf = rec->data;
	bool current = false;
	unsigned int i;
	size_t off;

	memcpy(&h, buf, sizeof(h));
	if (rec->type != CGSTREAM_RECORD_KEYS || rec->flags ||
	    rec->for_type != CGROUP_STAT_STREAM_RECORD_MEMORY || h.reserved || !rec->count) {
		snprintf(why, 128, "first record: type %u flags %u for_type %u nr_keys %u reserved %u, "
			 "not KEYS for MEMORY", rec->type, rec->flags, rec->for_type, rec->count,
			 h.reserved);
		return -EINVAL;
	}
	if (rec->size % 8 || rec->size < sizeof(h) + 8) {
		snprintf(why, 128, "KEYS record of %u bytes", rec->size);
		return -EINVAL;
	}
	k->size = rec->size;
	k->nr = rec->count;
	k->rec_size = sizeof(struct cgroup_stat_stream_header) + 8 * (size_t)rec->count;
	k->pgfault = k->events_first = -1;
	off = (size_t)((const char *)rec->items - buf);
	for (i = 0; i < rec->count; i++) {
		const char *name = buf + off;
		size_t nlen = strlen(name);

		if (!nlen) {
			snprintf(why, 128, "KEYS: name %u of %u is empty", i, rec->count);
			return -EINVAL;
		}
		if (*want) {
			size_t wlen = strchr(want, '\n') - want;

			if (wlen != nlen || memcmp(want, name, nlen)) {
				snprintf(why, 128, "KEYS: name %u is %.40s where memory.stat has %.*s",
					 i, name, (int)(wlen < 40 ? wlen : 40), want);
				return -EINVAL;
			}
			want += wlen + 1;
		} else if (!current) {
			if (strcmp(name, "current")) {
				snprintf(why, 128, "KEYS: %.40s after memory.stat's keys, not current",
					 name);
				return -EINVAL;
			}
			current = true;
		} else if (!strncmp(name, "events.", 7)) {
			if (k->events_first < 0)
				k->events_first = i;
		} else if (k->events_first >= 0 || strcmp(name, "swap.current")) {
			snprintf(why, 128, "KEYS: name %u, %.40s, is not current, swap.current or events.*",
				 i, name);
			return -EINVAL;
		}
		if (!strcmp(name, "pgfault"))
			k->pgfault = i;
		off += nlen + 1;
	}
	if (*want || !current) {
		snprintf(why, 128, "KEYS: %u names, not all of memory.stat's and current", rec->count);
		return -EINVAL;
	}
	if (rec->size - off >= 8) {
		snprintf(why, 128, "KEYS: %zu bytes of padding after the names", rec->size - off);
		return -EINVAL;
	}
	for (; off < rec->size; off++)
		if (buf[off]) {
			snprintf(why, 128, "KEYS: padding byte at %zu is %#x", off, (unsigned char)buf[off]);
			return -EINVAL;
		}
	return 0;
}

static struct idmap_entry *idmap_find(struct idmap *m, uint64_t id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = idmap_hash(m, id, 0);
	while (m->e[i].id && (m->e[i].id != id || m->e[i].dev))
		i = (i + 1) & (m->cap - 1);
	return m->e[i].id ? &m->e[i] : NULL;
}

/*
 * One memory snapshot: KEYS, then MEMORY records of one size, the opened
 * cgroup first, parents before children, no cgroup twice, none without
 * the memory controller; per cgroup, flush_seq, pgfault and the events.*
 * never go back in one open file.
 */
static int check_mem_snapshot(struct sfile *f, const char *buf, size_t len)
{
	struct mem_keys_info k;
	uint64_t snap = ++f->snaps, nomem[MAX_CGS], time_max = 0;
	struct cgstream_record rec;
	size_t off = 0, nr = 0;
	int i, nnomem = 0, ret;
	char why[128];

	/* the library's decoder: records within the bytes, names within KEYS */
	ret = cgstream_records_next(buf, len, &off, &rec, sizeof(rec));
	if (ret <= 0) {
		FAIL("%s/%s: %s at offset 0 of %zu", f->cg.path, MEM_SUBTREE_FILE,
		     ret ? "a malformed record" : "no record", len);
		return -EIO;
	}
	if (parse_mem_keys(&rec, &k, why)) {
		FAIL("%s/%s: %s", f->cg.path, MEM_SUBTREE_FILE, why);
		return -EIO;
	}
	atomic_store(&mem_keys_size, k.size);
	atomic_store(&mem_rec_size, k.rec_size);
	while ((ret = cgstream_records_next(buf, len, &off, &rec, sizeof(rec))) > 0) {
		struct idmap_entry *e;
		uint64_t pgfault = 0, events = 0, v;
		bool fresh;

		if (rec.size != k.rec_size || rec.type != CGSTREAM_RECORD_MEMORY || rec.flags ||
		    rec.count != k.nr) {
			FAIL("%s/%s: record at offset %zu of %zu: size %u type %u flags %u, "
			     "not a MEMORY record of %zu bytes (%u keys)", f->cg.path, MEM_SUBTREE_FILE,
			     off - rec.size, len, rec.size, rec.type, rec.flags, k.rec_size, k.nr);
			return -EIO;
		}
		nr++;
		if (nr == 1) {
			if (rec.cgroup_id != f->cg.id || rec.parent_id)
				FAIL("%s/%s: first record is cgroup %llu parent %llu, not the opened %llu",
				     f->cg.path, MEM_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id, (unsigned long long)f->cg.id);
			check_label(f, rec.seq, "subtree");
		} else {
			struct idmap_entry *p = idmap_get(&f->ids, rec.parent_id, &fresh);

			if (fresh || p->snap != snap)
				FAIL("%s/%s: record of %llu before (or without) its parent %llu",
				     f->cg.path, MEM_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id);
		}
		if (rec.flush_time_usec > time_max)
			time_max = rec.flush_time_usec;
		if (k.pgfault >= 0)
			cgstream_record_value(&rec, (unsigned int)k.pgfault, &pgfault);
		for (i = k.events_first; i >= 0 && i < (int)k.nr; i++) {
			cgstream_record_value(&rec, (unsigned int)i, &v);
			events += v;
		}
		e = idmap_get(&f->ids, rec.cgroup_id, &fresh);
		if (!fresh && e->snap == snap)
			FAIL("%s/%s: cgroup %llu twice in one snapshot", f->cg.path, MEM_SUBTREE_FILE,
			     (unsigned long long)rec.cgroup_id);
		if (!fresh && (rec.seq < e->label || pgfault < e->pgfault || events < e->events))
			FAIL("%s/%s: cgroup %llu went back: flush_seq %llu -> %llu, pgfault %llu -> %llu, "
			     "events.* %llu -> %llu", f->cg.path, MEM_SUBTREE_FILE,
			     (unsigned long long)rec.cgroup_id, (unsigned long long)e->label,
			     (unsigned long long)rec.seq, (unsigned long long)e->pgfault,
			     (unsigned long long)pgfault, (unsigned long long)e->events,
			     (unsigned long long)events);
		e->label = rec.seq;
		e->pgfault = pgfault;
		e->events = events;
		e->snap = snap;
	}
	if (ret < 0) {
		FAIL("%s/%s: a malformed record at offset %zu of %zu (%s)", f->cg.path,
		     MEM_SUBTREE_FILE, off, len, strerror(-ret));
		return -EIO;
	}
	if (!nr)
		return subtree_empty(f, "a snapshot of the KEYS record only");
	if ((int64_t)time_max * 1000 > now_ns())
		FAIL("%s/%s: flush_time_usec %llu is in the future", f->cg.path, MEM_SUBTREE_FILE,
		     (unsigned long long)time_max);
	if (f->cg.id == cgs[0].id || f->cg.id == cgs[6].id)
		check_fixed_present(f, snap, NEED_MEM);
	/* no record for a cgroup of ours without memory.stat */
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < MAX_CGS; i++)
		if (cgs[i].state != CG_FREE && !cgs[i].mem && cgs[i].id)
			nomem[nnomem++] = cgs[i].id;
	pthread_mutex_unlock(&cg_lock);
	for (i = 0; i < nnomem; i++) {
		struct idmap_entry *e = idmap_find(&f->ids, nomem[i]);

		if (e && e->snap == snap)
			FAIL("%s/%s: a record of cgroup %llu, which has no memory controller",
			     f->cg.path, MEM_SUBTREE_FILE, (unsigned long long)nomem[i]);
	}
	COUNT(mem_subtree_snapshots);
	atomic_fetch_add(&counters[C_mem_subtree_records], nr);
	return 0;
}

/*
 * A read at @off, where a snapshot goes on with a @rec-byte record, into a
 * smaller buffer: EINVAL.  0, -ENODEV or -EIO.
 */
static int mem_small_read(struct reader *rd, struct sfile *f, size_t off, size_t rec)
{
	ssize_t n = pread(f->fd, rd->buf, rng_range(&rd->rng, 1, rec - 1), off);

	if (n >= 0 || errno != EINVAL) {
		if (n < 0)
			return subtree_error(f, "small-buffer continued pread of");
		FAIL("%s/%s: a read smaller than the record after KEYS returned %zd",
		     f->cg.path, MEM_SUBTREE_FILE, n);
		return -EIO;
	}
	COUNT(mem_subtree_small_buf_einval);
	return 0;
}

/*
 * One whole memory snapshot, in pieces of random size: 0, -ENODEV or
 * -EIO.  Each read returns whole records: the first, at offset 0, the KEYS
 * record and whole MEMORY records, the others whole MEMORY records.
 */
static int read_mem_subtree(struct reader *rd, struct sfile *f)
{
	size_t ksize = atomic_load(&mem_keys_size), rsize = atomic_load(&mem_rec_size);
	size_t len = 0, chunk = BIG_BUF, want, rec = 0, lo, hi;
	/* modes: 0 pread 1 MiB, 1 pread then read() on, 2 pread at the running offset,
	 * 3 the KEYS record alone, then one record per read (sizes known only) */
	int mode = ksize && rsize ? (int)rng_below(&rd->rng, 4) : 0;
	int64_t t0;
	ssize_t n;

	/* a buffer smaller than the KEYS record at offset 0: EINVAL */
	if (ksize && rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, rng_range(&rd->rng, 1, ksize - 1), 0);
		if (!n)
			return subtree_empty(f, "a read smaller than the KEYS record returned 0");
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "small-buffer pread of");
			FAIL("%s/%s: a %zd-byte read of a smaller buffer than the KEYS record",
			     f->cg.path, MEM_SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(mem_subtree_small_buf_einval);
	}
	/* an offset inside the KEYS record continues no snapshot: EINVAL */
	if (ksize && rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, 4096, rng_range(&rd->rng, 1, ksize - 1));
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "bad-offset pread of");
			FAIL("%s/%s: pread at an offset inside the KEYS record returned %zd",
			     f->cg.path, MEM_SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(mem_subtree_bad_offset_einval);
	}
	lo = ksize > rsize ? ksize : rsize;
	hi = lo > 16384 ? lo : 16384;
	if (mode == 1 || mode == 2)
		chunk = rng_range(&rd->rng, lo, hi);
	/* mode 3: room for KEYS and less than one record */
	want = mode == 3 ? ksize + rng_below(&rd->rng, rsize) : chunk;
	do {
		if (len + want > rd->snap_cap) {
			rd->snap_cap = 2 * (len + want);
			rd->snap = realloc(rd->snap, rd->snap_cap);
			if (!rd->snap) {
				perror("realloc");
				exit(EXIT_FAIL);
			}
		}
		t0 = now_ns();
		if (!len || mode != 1)
			n = pread(f->fd, rd->snap + len, want, len);
		else
			n = read(f->fd, rd->snap + len, want);
		note_read_time(t0);
		if (n < 0)
			return subtree_error(f, len ? "continued read of" : "read of");
		if (!len) {
			struct cgstream_record keys;
			size_t o = 0;
			unsigned int ks, nk;

			if (!n)
				return subtree_empty(f, "a read at offset 0 returned 0 bytes");
			if (cgstream_records_next(rd->snap, (size_t)n, &o, &keys, sizeof(keys)) != 1 ||
			    keys.type != CGSTREAM_RECORD_KEYS) {
				FAIL("%s/%s: a read at offset 0 returned %zd bytes, not starting with a "
				     "whole KEYS record", f->cg.path, MEM_SUBTREE_FILE, n);
				return -EIO;
			}
			ks = keys.size;
			nk = keys.count;
			rec = sizeof(struct cgroup_stat_stream_header) + 8 * (size_t)nk;
			if (ks > n || (n - ks) % rec) {
				FAIL("%s/%s: a read at offset 0 returned %zd bytes: not a KEYS record "
				     "(%u bytes) and whole %zu-byte records", f->cg.path,
				     MEM_SUBTREE_FILE, n, ks, rec);
				return -EIO;
			}
			if (mode == 3 && ks == ksize && n != ks) {
				FAIL("%s/%s: a %zu-byte read at offset 0 returned %zd bytes, not the "
				     "%u-byte KEYS record alone", f->cg.path, MEM_SUBTREE_FILE, want,
				     n, ks);
				return -EIO;
			}
			if (mode == 3) {
				/* the opened cgroup's record is next */
				if (n == ks && rng_pct(&rd->rng, 50)) {
					int ret = mem_small_read(rd, f, n, rec);

					if (ret)
						return ret;
				}
				/* from now on room for one record and less than two */
				want = rec + rng_below(&rd->rng, rec);
				COUNT(mem_subtree_record_reads);
			}
		} else if (n % rec) {
			FAIL("%s/%s: a read returned %zd bytes, not whole %zu-byte records", f->cg.path,
			     MEM_SUBTREE_FILE, n, rec);
			return -EIO;
		}
		/* read() goes on from the file position pread() did not move */
		if (!len && mode == 1 && n && lseek(f->fd, n, SEEK_SET) != n)
			return subtree_error(f, "lseek of");
		len += n;
	} while (n > 0);
	return check_mem_snapshot(f, rd->snap, len);
}

/* ------------------------------------------------------------------ */
/* io.stat.stream and io.stat.stream.subtree                            */

/*
 * The loop devices the migrants do I/O on (set up before any thread, the
 * index and number never change).  A device removed and re-created is a
 * new disk whose counters start at 0: its epoch moves on before the
 * removal and before the re-creation (odd while the removal is under
 * way), and a device's counters are only compared between reads that saw
 * the same epoch from start to end.
 */
struct loopdev {
	int index;		/* loop<index> */
	unsigned int major, minor;
	char node[PATH_MAX];	/* its block device node */
	bool made_node;		/* ours, in io_dir: removed at the end */
	int backing_fd;		/* its backing file on our tmpfs */
	bool bound;		/* configured by us: cleared and removed at the end */
};
static struct loopdev loops[NR_LOOPS];
static int nr_loops;
static atomic_ulong loop_epoch[NR_LOOPS];
#define IO_EPOCH_UNSTABLE	UINT64_MAX

static void loop_epochs(uint64_t *e)
{
	for (int k = 0; k < nr_loops; k++)
		e[k] = atomic_load(&loop_epoch[k]);
}

/*
 * Changes that may shrink the next record of a snapshot: an rmdir, a
 * device removed.  The same stamp before and after a read proves none came
 * between, unless one was under way at the first: IO_CHANGING then (an
 * rmdir started and not returned, an odd epoch: a removal between its two
 * steps).  Without @rmdirs, rmdirs under way do not count: the opened
 * cgroup's record, at offset 0, only an rmdir of that cgroup can shrink
 * (the caller asks rm_started()).
 */
#define IO_CHANGING	UINT64_MAX
static uint64_t io_change_stamp(bool rmdirs)
{
	/* returned before started: an rmdir under way makes them differ */
	uint64_t e[NR_LOOPS], ends = atomic_load(&rm_ends), sum = atomic_load(&rm_starts);

	if (rmdirs && sum != ends)
		return IO_CHANGING;
	loop_epochs(e);
	for (int k = 0; k < nr_loops; k++) {
		if (e[k] & 1)
			return IO_CHANGING;
		sum += e[k];
	}
	return sum;
}

/* one device of io.stat(.stream) or of an IO record */
struct io_dev {
	uint32_t major, minor;
	uint64_t v[IO_NR_VALS];
};
static const char *const io_val_names[IO_NR_VALS] = {
	"rbytes", "wbytes", "rios", "wios", "dbytes", "dios",
};

struct io_sample {
	uint64_t seq, time_usec;
	unsigned int nr;
	struct io_dev dev[IO_DEVS_MAX];
};

/* a decimal number of [p, end): 0, or -1 (not one, or overflowing) */
static int parse_u64(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || *v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (*p - '0');
	}
	return 0;
}

/*
 * One device line of io.stat (without its newline): "MAJ:MIN ", then
 * either nothing (no I/O) or rbytes= wbytes= rios= wios= dbytes= dios= in
 * that order, then any key=value fields of io policies.  0, or -EINVAL
 * with a reason in @why (at least 128 bytes).
 */
static int parse_io_line(const char *line, const char *nl, struct io_dev *d, char *why)
{
	const char *colon = memchr(line, ':', nl - line), *sp, *p;
	uint64_t maj, min;
	int i = 0;

	memset(d, 0, sizeof(*d));
	sp = colon ? memchr(colon, ' ', nl - colon) : NULL;
	if (!sp || parse_u64(line, colon, &maj) || parse_u64(colon + 1, sp, &min) ||
	    maj > UINT32_MAX || min > UINT32_MAX) {
		snprintf(why, 128, "line '%.*s' is not 'MAJ:MIN ...'", (int)(nl - line), line);
		return -EINVAL;
	}
	d->major = maj;
	d->minor = min;
	for (p = sp + 1; p < nl; p = sp + 1) {
		const char *eq;

		sp = memchr(p, ' ', nl - p);
		if (!sp)
			sp = nl;
		if (sp == p)	/* no counters, then a policy's " key=value" */
			continue;
		eq = memchr(p, '=', sp - p);
		if (!eq || eq == p || eq + 1 == sp) {
			snprintf(why, 128, "field '%.*s' of '%.*s' is not key=value", (int)(sp - p), p,
				 (int)(nl - line), line);
			return -EINVAL;
		}
		if (i < IO_NR_VALS && (size_t)(eq - p) == strlen(io_val_names[i]) &&
		    !memcmp(p, io_val_names[i], eq - p)) {
			if (parse_u64(eq + 1, sp, &d->v[i])) {
				snprintf(why, 128, "bad value in '%.*s'", (int)(nl - line), line);
				return -EINVAL;
			}
			i++;
		} else if (i && i < IO_NR_VALS) {
			snprintf(why, 128, "'%.*s' has %s but not the other counters in order",
				 (int)(nl - line), line, io_val_names[0]);
			return -EINVAL;
		} else {
			i = IO_NR_VALS;	/* a policy's field: the counters are behind */
		}
	}
	return 0;
}

/*
 * Parses io.stat (@stream false) or io.stat.stream: device lines, no
 * device twice, then (stream) exactly "flush_seq N" and "flush_time_usec T"
 * as the last two lines.  0, or -EINVAL with a reason in @why.
 */
static int parse_io_text(const char *text, size_t len, bool stream, struct io_sample *s,
			 char *why)
{
	static const char seq_key[] = CGROUP_STAT_STREAM_KEY_SEQ " ";
	static const char time_key[] = CGROUP_STAT_STREAM_KEY_TIME " ";
	size_t pos = 0;
	int flush_lines = 0;

	s->nr = 0;
	s->seq = s->time_usec = 0;
	if (len && text[len - 1] != '\n') {
		snprintf(why, 128, "%zu bytes not ending in a newline", len);
		return -EINVAL;
	}
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t llen = nl - line;

		pos = nl - text + 1;
		if (stream && !flush_lines && llen > sizeof(seq_key) - 1 &&
		    !memcmp(line, seq_key, sizeof(seq_key) - 1)) {
			if (parse_u64(line + sizeof(seq_key) - 1, nl, &s->seq)) {
				snprintf(why, 128, "bad %s line", CGROUP_STAT_STREAM_KEY_SEQ);
				return -EINVAL;
			}
			flush_lines = 1;
			continue;
		}
		if (flush_lines == 1 && llen > sizeof(time_key) - 1 &&
		    !memcmp(line, time_key, sizeof(time_key) - 1)) {
			if (parse_u64(line + sizeof(time_key) - 1, nl, &s->time_usec)) {
				snprintf(why, 128, "bad %s line", CGROUP_STAT_STREAM_KEY_TIME);
				return -EINVAL;
			}
			flush_lines = 2;
			continue;
		}
		if (flush_lines) {
			snprintf(why, 128, "'%.*s' after %s", (int)(llen < 60 ? llen : 60), line,
				 flush_lines == 1 ? CGROUP_STAT_STREAM_KEY_SEQ :
				 CGROUP_STAT_STREAM_KEY_TIME);
			return -EINVAL;
		}
		/*
		 * Classic io.stat names a disk being removed (its bdi
		 * unregistered, its blkgs not yet gone) "(unknown)"; the
		 * stream lists only devices that exist.
		 */
		if (!stream && llen >= 10 && !memcmp(line, "(unknown) ", 10)) {
			COUNT(io_stat_unknown_lines);
			continue;
		}
		if (s->nr == IO_DEVS_MAX) {
			snprintf(why, 128, "more than %d devices", IO_DEVS_MAX);
			return -EINVAL;
		}
		if (parse_io_line(line, nl, &s->dev[s->nr], why))
			return -EINVAL;
		for (unsigned int i = 0; i < s->nr; i++)
			if (s->dev[i].major == s->dev[s->nr].major &&
			    s->dev[i].minor == s->dev[s->nr].minor) {
				snprintf(why, 128, "device %u:%u twice", s->dev[i].major, s->dev[i].minor);
				return -EINVAL;
			}
		s->nr++;
	}
	if (stream && flush_lines != 2) {
		snprintf(why, 128, "no %s and %s as the last two lines", CGROUP_STAT_STREAM_KEY_SEQ,
			 CGROUP_STAT_STREAM_KEY_TIME);
		return -EINVAL;
	}
	return 0;
}

/*
 * Device @d of cgroup @id, as read through @f between the loop epochs @e0
 * and @e1: its counters never go back while it is one device (in one
 * epoch); rises are counted, as proof that the I/O shows.
 */
static void io_check_dev(struct sfile *f, uint64_t id, const struct io_dev *d,
			 const uint64_t *e0, const uint64_t *e1, const char *what)
{
	uint64_t epoch = 0, dev = (uint64_t)d->major << 32 | d->minor;
	struct idmap_entry *e;
	bool fresh, rose = false;
	int k, i;

	for (k = 0; k < nr_loops; k++)
		if (loops[k].major == d->major && loops[k].minor == d->minor)
			epoch = e0[k] == e1[k] ? e0[k] : IO_EPOCH_UNSTABLE;
	COUNT(io_devices_read);
	/* dev + 1: the cgroup's own entry has dev 0 */
	e = idmap_get_dev(&f->devs, id, dev + 1, &fresh);
	if (!fresh && (e->epoch != epoch || epoch == IO_EPOCH_UNSTABLE)) {
		COUNT(io_epoch_skips);
	} else if (!fresh) {
		for (i = 0; i < IO_NR_VALS; i++) {
			if (d->v[i] < e->io[i]) {
				FAIL("%s/%s (%s): cgroup %llu device %u:%u: %s went back from %llu to %llu",
				     f->cg.path, kind_name(f->kind), what, (unsigned long long)id,
				     d->major, d->minor, io_val_names[i],
				     (unsigned long long)e->io[i], (unsigned long long)d->v[i]);
				break;
			}
			rose |= d->v[i] > e->io[i];
		}
		if (rose) {
			COUNT(io_counter_rises);
			if (id != cgs[6].id)
				COUNT(io_cgroup_counter_rises);
		}
	}
	memcpy(e->io, d->v, sizeof(e->io));
	e->epoch = epoch;
}

/* io.stat.stream, read whole or in pieces: 0, -ENODEV (removed, checked), or -EIO */
static int read_io_stream(struct reader *rd, struct sfile *f)
{
	struct io_sample *s = malloc(sizeof(*s));
	uint64_t e0[NR_LOOPS], e1[NR_LOOPS];
	char why[128];
	ssize_t len = 0, n;
	int64_t t0 = now_ns();
	bool small = rng_pct(&rd->rng, 40);
	int ret = -EIO;

	if (!s) {
		perror("malloc");
		exit(EXIT_FAIL);
	}
	loop_epochs(e0);
	if (!small) {
		len = pread(f->fd, rd->buf, IO_TEXT_MAX, 0);
		n = len;
		COUNT(io_stream_reads_large);
	} else {
		size_t chunk = rng_range(&rd->rng, 1, 128), room;

		n = lseek(f->fd, 0, SEEK_SET);
		while (n >= 0 && len < IO_TEXT_MAX) {
			room = IO_TEXT_MAX - len;
			n = read(f->fd, rd->buf + len, chunk < room ? chunk : room);
			if (n <= 0)
				break;
			len += n;
		}
		COUNT(io_stream_reads_small);
	}
	note_read_time(t0);
	loop_epochs(e1);
	if (n < 0) {
		if (errno == ENODEV) {
			check_gone(f, "read failing with ENODEV");
			COUNT(enodev_reads);
			ret = -ENODEV;
		} else {
			FAIL("read %s/%s: %s", f->cg.path, IO_STREAM_FILE, strerror(errno));
		}
		goto out;
	}
	if (len >= IO_TEXT_MAX) {
		FAIL("%s/%s: more than %d bytes", f->cg.path, IO_STREAM_FILE, IO_TEXT_MAX);
		goto out;
	}
	if (parse_io_text(rd->buf, len, true, s, why)) {
		FAIL("%s/%s: %s: %.*s", f->cg.path, IO_STREAM_FILE, why, (int)(len < 300 ? len : 300),
		     rd->buf);
		goto out;
	}
	check_label(f, s->seq, small ? "small reads" : "pread");
	for (unsigned int i = 0; i < s->nr; i++)
		io_check_dev(f, f->cg.id, &s->dev[i], e0, e1, "text");
	if (s->seq && (int64_t)s->time_usec * 1000 > now_ns())
		FAIL("%s/%s: flush_time_usec %llu is in the future", f->cg.path, IO_STREAM_FILE,
		     (unsigned long long)s->time_usec);
	ret = 0;
out:
	free(s);
	return ret;
}

/*
 * One io snapshot: IO records only, each exactly 48 + 56 * nr_devices
 * bytes, flags and reserved 0, no device twice; the opened cgroup first,
 * parents before children, no cgroup twice, none without the io
 * controller; per cgroup and device, flush_seq and the counters never go
 * back in one open file (between reads of one loop device epoch).
 */
static int check_io_snapshot(struct sfile *f, const char *buf, size_t len,
			     const uint64_t *e0, const uint64_t *e1)
{
	struct cgstream_record rec;
	uint64_t snap = ++f->snaps, noio[MAX_CGS], time_max = 0;
	size_t off = 0, nr = 0, devices = 0;
	int i, nnoio = 0, ret;

	while ((ret = cgstream_records_next(buf, len, &off, &rec, sizeof(rec))) > 0) {
		struct io_dev d[IO_DEVS_MAX];
		struct idmap_entry *e;
		uint32_t reserved = 0;
		unsigned int k, j;
		bool fresh;

		/* the library checked that nr_devices fit; the layout is exact here */
		if (rec.size >= IO_REC_MIN)
			memcpy(&reserved, (const char *)rec.data + offsetof(struct cgroup_stat_stream_io,
									  reserved), 4);
		if (rec.type != CGSTREAM_RECORD_IO || rec.flags || reserved ||
		    rec.size != IO_REC_MIN + IO_DEV_SIZE * (size_t)rec.count) {
			FAIL("%s/%s: record at offset %zu of %zu: size %u type %u flags %u nr_devices %u "
			     "reserved %u, not an IO record of 48 + 56 * nr_devices bytes", f->cg.path,
			     IO_SUBTREE_FILE, off - rec.size, len, rec.size, rec.type, rec.flags,
			     rec.count, reserved);
			return -EIO;
		}
		if (rec.count > IO_DEVS_MAX) {
			FAIL("%s/%s: cgroup %llu has %u devices, more than this test takes (%d)",
			     f->cg.path, IO_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
			     rec.count, IO_DEVS_MAX);
			return -EIO;
		}
		nr++;
		if (nr == 1) {
			if (rec.cgroup_id != f->cg.id || rec.parent_id)
				FAIL("%s/%s: first record is cgroup %llu parent %llu, not the opened %llu",
				     f->cg.path, IO_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id, (unsigned long long)f->cg.id);
			check_label(f, rec.seq, "subtree");
		} else {
			struct idmap_entry *pe = idmap_get(&f->ids, rec.parent_id, &fresh);

			if (fresh || pe->snap != snap)
				FAIL("%s/%s: record of %llu before (or without) its parent %llu",
				     f->cg.path, IO_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
				     (unsigned long long)rec.parent_id);
		}
		if (rec.flush_time_usec > time_max)
			time_max = rec.flush_time_usec;
		e = idmap_get(&f->ids, rec.cgroup_id, &fresh);
		if (!fresh && e->snap == snap)
			FAIL("%s/%s: cgroup %llu twice in one snapshot", f->cg.path, IO_SUBTREE_FILE,
			     (unsigned long long)rec.cgroup_id);
		if (!fresh && rec.seq < e->label)
			FAIL("%s/%s: cgroup %llu went back: flush_seq %llu -> %llu", f->cg.path,
			     IO_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
			     (unsigned long long)e->label, (unsigned long long)rec.seq);
		e->label = rec.seq;
		e->snap = snap;
		for (k = 0; k < rec.count; k++) {
			struct cgstream_io_device dv;

			cgstream_record_device(&rec, k, &dv);
			d[k] = (struct io_dev){ dv.major, dv.minor,
				{ dv.rbytes, dv.wbytes, dv.rios, dv.wios, dv.dbytes, dv.dios } };
			for (j = 0; j < k; j++)
				if (d[j].major == d[k].major && d[j].minor == d[k].minor)
					FAIL("%s/%s: cgroup %llu lists device %u:%u twice", f->cg.path,
					     IO_SUBTREE_FILE, (unsigned long long)rec.cgroup_id,
					     d[k].major, d[k].minor);
			io_check_dev(f, rec.cgroup_id, &d[k], e0, e1, "record");
		}
		devices += rec.count;
	}
	if (ret < 0) {
		FAIL("%s/%s: a malformed record at offset %zu of %zu (%s)", f->cg.path,
		     IO_SUBTREE_FILE, off, len, strerror(-ret));
		return -EIO;
	}
	if (!nr)
		return subtree_empty(f, "an empty snapshot");
	if ((int64_t)time_max * 1000 > now_ns())
		FAIL("%s/%s: flush_time_usec %llu is in the future", f->cg.path, IO_SUBTREE_FILE,
		     (unsigned long long)time_max);
	if (f->cg.id == cgs[0].id || f->cg.id == cgs[6].id)
		check_fixed_present(f, snap, NEED_IO);
	/* no record for a cgroup of ours without io.stat */
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < MAX_CGS; i++)
		if (cgs[i].state != CG_FREE && !cgs[i].io && cgs[i].id)
			noio[nnoio++] = cgs[i].id;
	pthread_mutex_unlock(&cg_lock);
	for (i = 0; i < nnoio; i++) {
		struct idmap_entry *e = idmap_find(&f->ids, noio[i]);

		if (e && e->snap == snap)
			FAIL("%s/%s: a record of cgroup %llu, which has no io controller",
			     f->cg.path, IO_SUBTREE_FILE, (unsigned long long)noio[i]);
	}
	COUNT(io_subtree_snapshots);
	atomic_fetch_add(&counters[C_io_subtree_records], nr);
	atomic_fetch_add(&counters[C_io_subtree_devices], devices);
	return 0;
}

/* room for @want more bytes after @len in the snapshot buffer */
static void snap_reserve(struct reader *rd, size_t len, size_t want)
{
	if (len + want <= rd->snap_cap)
		return;
	rd->snap_cap = 2 * (len + want);
	rd->snap = realloc(rd->snap, rd->snap_cap);
	if (!rd->snap) {
		perror("realloc");
		exit(EXIT_FAIL);
	}
}

/*
 * One whole io snapshot, in pieces of random size: 0, -ENODEV or -EIO.
 * Records differ in size (by their devices), so every read must return
 * whole records, each read checked on its own; a buffer smaller than the
 * next record fails with EINVAL, which a read with room then confirms
 * (unless an rmdir or a device's removal may have shrunk the next one).
 */
static int read_io_subtree(struct reader *rd, struct sfile *f)
{
	uint64_t e0[NR_LOOPS], e1[NR_LOOPS];
	size_t len = 0, chunk = BIG_BUF;
	/* modes: 0 pread 1 MiB, 1 pread then read() on, 2 pread at the running offset,
	 * 3 tight: room for one to four records without devices per read */
	int mode = rng_below(&rd->rng, 4);
	int64_t t0;
	ssize_t n;

	/* a buffer smaller than any record: EINVAL */
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, rng_range(&rd->rng, 1, IO_REC_MIN - 1), 0);
		if (!n)
			return subtree_empty(f, "a read smaller than a record returned 0");
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "small-buffer pread of");
			FAIL("%s/%s: a %zd-byte read of a buffer smaller than any record", f->cg.path,
			     IO_SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(io_subtree_small_buf_einval);
	}
	/* an offset inside the opened cgroup's record continues no snapshot: EINVAL */
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, 4096, rng_range(&rd->rng, 1, IO_REC_MIN - 1));
		if (n >= 0 || errno != EINVAL) {
			if (n < 0)
				return subtree_error(f, "bad-offset pread of");
			FAIL("%s/%s: pread at an offset inside a record returned %zd", f->cg.path,
			     IO_SUBTREE_FILE, n);
			return -EIO;
		}
		COUNT(io_subtree_bad_offset_einval);
	}
	if (mode == 1 || mode == 2)
		chunk = rng_range(&rd->rng, IO_REC_MIN + 4 * IO_DEV_SIZE, 16384);
	else if (mode == 3)
		chunk = rng_range(&rd->rng, IO_REC_MIN, 4 * IO_REC_MIN);
	loop_epochs(e0);
	do {
		/* at offset 0 the next record is the opened cgroup's */
		bool rmdirs = len || rm_started(f->cg.id, NULL);
		uint64_t stamp = io_change_stamp(rmdirs);
		struct cgstream_record rec;
		size_t off = 0;
		int ret;

		snap_reserve(rd, len, chunk);
		t0 = now_ns();
		if (!len || mode != 1)
			n = pread(f->fd, rd->snap + len, chunk, len);
		else
			n = read(f->fd, rd->snap + len, chunk);
		note_read_time(t0);
		if (n < 0 && errno == EINVAL && chunk < BIG_BUF) {
			uint16_t size;

			/* the next record is larger than @chunk: with room, the same read works */
			COUNT(io_subtree_next_record_einval);
			snap_reserve(rd, len, BIG_BUF);
			if (!len || mode != 1)
				n = pread(f->fd, rd->snap + len, BIG_BUF, len);
			else
				n = read(f->fd, rd->snap + len, BIG_BUF);
			if (n > 0 && stamp != IO_CHANGING && stamp == io_change_stamp(rmdirs)) {
				memcpy(&size, rd->snap + len, sizeof(size));
				if (size <= chunk)
					FAIL("%s/%s: a %zu-byte read at offset %zu failed with EINVAL, "
					     "yet the next record has %u bytes", f->cg.path,
					     IO_SUBTREE_FILE, chunk, len, size);
				COUNT(io_subtree_einval_checked);
			}
		}
		if (n < 0)
			return subtree_error(f, len ? "continued read of" : "read of");
		if (!len && !n)
			return subtree_empty(f, "a read at offset 0 returned 0 bytes");
		/* this read's bytes alone: whole records */
		while ((ret = cgstream_records_next(rd->snap + len, n, &off, &rec, sizeof(rec))) > 0)
			;
		if (ret < 0) {
			FAIL("%s/%s: a read at offset %zu returned %zd bytes, not whole records "
			     "(one cut at %zu)", f->cg.path, IO_SUBTREE_FILE, len, n, off);
			return -EIO;
		}
		/* read() goes on from the file position pread() did not move */
		if (!len && mode == 1 && n && lseek(f->fd, n, SEEK_SET) != n)
			return subtree_error(f, "lseek of");
		len += n;
	} while (n > 0);
	loop_epochs(e1);
	return check_io_snapshot(f, rd->snap, len, e0, e1);
}

/* a read after a wake-up or just like that; updates the stop bookkeeping */
static int reader_read(struct reader *rd, struct sfile *f)
{
	long ref = atomic_load(&file_track(f)->stops_done);
	int ret;

	switch (f->kind) {
	case F_STREAM: ret = read_stream(rd, f); break;
	case F_SUBTREE: ret = read_subtree(rd, f); break;
	case F_MEM_STREAM: ret = read_mem_stream(rd, f); break;
	case F_MEM_SUBTREE: ret = read_mem_subtree(rd, f); break;
	case F_IO_STREAM: ret = read_io_stream(rd, f); break;
	default: ret = read_io_subtree(rd, f); break;
	}

	if (!ret) {
		f->stops_done_ref = ref;
		f->t_read_end = now_ns();
	}
	return ret;
}

/*
 * What poll/epoll/io_uring reported for @f: EPOLLERR only once removed
 * (and reads then fail with ENODEV), EPOLLPRI only after a stop, EPOLLIN
 * counted as a wake-up once the read after it worked.
 */
static void reader_event(struct reader *rd, struct sfile *f, unsigned int revents,
			 enum counter wake_counter)
{
	struct track *t = file_track(f);
	int ret;

	if (revents & POLLNVAL) {
		FAIL("POLLNVAL on %s: the test lost track of its fds", f->cg.path);
		return;
	}
	if (revents & POLLERR) {
		COUNT(err_wakes);
		check_gone(f, "EPOLLERR");
		if (pread(f->fd, rd->buf, kind_mem(f->kind) ? MEM_TEXT_MAX :
			  kind_io(f->kind) ? IO_TEXT_MAX : 4096, 0) >= 0 ||
		    errno != ENODEV)
			FAIL("%s/%s: EPOLLERR but a read did not fail with ENODEV (%s)",
			     f->cg.path, kind_name(f->kind), strerror(errno));
		return;
	}
	if (revents & POLLPRI) {
		hist_add(f, 'p', 0);
		COUNT(pri_wakes);
		if (kind_mem(f->kind))
			COUNT(mem_pri_wakes);
		if (kind_io(f->kind))
			COUNT(io_pri_wakes);
		if (atomic_load(&t->stops_started) <= f->stops_done_ref) {
			/*
			 * An epoll or io_uring event is the file's state when it
			 * was queued: one queued for a stop that a read has
			 * taken since is stale.  Only a POLLPRI the file still
			 * reports now, with no stop since its last read, is wrong;
			 * unless it comes with POLLERR: the cgroup was removed
			 * since the event was queued (checked at the next event).
			 */
			struct pollfd p = { .fd = f->fd, .events = POLLPRI };

			if (poll(&p, 1, 0) == 1 && (p.revents & POLLPRI) &&
			    !(p.revents & POLLERR) &&
			    atomic_load(&t->stops_started) <= f->stops_done_ref)
				FAIL("%s/%s: EPOLLPRI but streaming was not stopped since its last read "
				     "(the %s was not set to 0)", f->cg.path, kind_name(f->kind), t->what);
			else
				COUNT(stale_pri_events);
		}
	}
	if (!(revents & (POLLIN | POLLPRI))) {
		FAIL("%s/%s: poll mask %#x", f->cg.path, kind_name(f->kind), revents);
		return;
	}
	ret = reader_read(rd, f);
	if (ret == -ENODEV) {
		/* removed meanwhile: from now on polls say EPOLLERR */
		struct pollfd p = { .fd = f->fd, .events = POLLIN | POLLPRI };

		if (poll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
			FAIL("%s/%s: reads fail with ENODEV, poll says %#x", f->cg.path,
			     kind_name(f->kind), p.revents);
		return;
	}
	/* only a wake-up followed by a read of a flush counts */
	if (!ret && (revents & POLLIN)) {
		hist_add(f, 'w', f->seq_last);
		f->wakes++;
		atomic_fetch_add_explicit(&counters[wake_counter], 1, memory_order_relaxed);
		if (kind_mem(f->kind))
			COUNT(mem_wakes);
		if (kind_io(f->kind))
			COUNT(io_wakes);
	}
}

/*
 * A wait on @f timed out at @t1: nothing it must be woken for may
 * have happened more than wake_margin_ns before @t1.
 */
static void reader_timeout(struct sfile *f, int64_t t1)
{
	int64_t by = t1 - wake_margin_ns, t_done = 0;
	struct track *t;
	long k;

	if (f->fd < 0 || f->gone)
		return;
	t = file_track(f);
	if (rm_started(f->cg.id, &t_done) && t_done && t_done <= by)
		FAIL("%s/%s: a poller slept through the removal of its cgroup (rmdir returned "
		     "%.3f s before the wait timed out)", f->cg.path, kind_name(f->kind),
		     (t1 - t_done) / 1e9);
	for (k = atomic_load(&t->stops_done) - 1; k >= 0 && t->stop_t_start[k] > f->t_read_end; k--)
		if (t->stop_t_done[k] <= by) {
			FAIL("%s/%s: a poller slept through a stop of streaming (EPOLLPRI)",
			     f->cg.path, kind_name(f->kind));
			break;
		}
	if (f->have_seq && completed_by(t, by) > f->seq_last)
		FAIL("%s/%s: a poller slept through a flush: it last read flush_seq %llu, "
		     "flush %llu had completed %.1f s before the wait timed out",
		     f->cg.path, kind_name(f->kind), (unsigned long long)f->seq_last,
		     (unsigned long long)completed_by(t, by), wake_margin_ns / 1e9);
}

/* (re)fill slot @i with a new open file, read once; false if none opened */
static bool reader_refill(struct reader *rd, int i)
{
	struct sfile *f = &rd->f[i];

	reader_close(f);
	if (reader_open(rd, f, pick_kind(&rd->rng, !rng_pct(&rd->rng, 70)), -1))
		return false;
	/* a first read, not a wake-up; half the files stay unread until woken */
	if (rng_pct(&rd->rng, 50) && !reader_read(rd, f))
		hist_add(f, 'b', f->seq_last);
	return f->fd >= 0;
}

static void reader_init(struct reader *rd, uint64_t seed)
{
	int i;

	rng_seed(&rd->rng, seed);
	rd->buf = malloc(BIG_BUF);
	if (!rd->buf) {
		perror("malloc");
		exit(EXIT_FAIL);
	}
	rd->snap = NULL;
	rd->snap_cap = 0;
	for (i = 0; i < FILES_PER_READER; i++) {
		memset(&rd->f[i], 0, sizeof(rd->f[i]));
		rd->f[i].fd = -1;
	}
}

static void reader_fini(struct reader *rd)
{
	for (int i = 0; i < FILES_PER_READER; i++)
		reader_close(&rd->f[i]);
	free(rd->buf);
	free(rd->snap);
}

/* files of removed cgroups are closed; some others are replaced */
static bool reader_should_replace(struct reader *rd, struct sfile *f)
{
	return f->fd < 0 || f->gone || rng_pct(&rd->rng, 3);
}

static uint64_t seed;

/* ------------------------------------------------------------------ */
/* poll() reader                                                         */

static void *poll_reader(void *arg)
{
	struct reader rd;
	struct pollfd p[FILES_PER_READER];
	int idx[FILES_PER_READER];

	reader_init(&rd, seed ^ (uintptr_t)arg);
	while (running()) {
		int n = 0, i, r;
		int64_t t1;

		for (i = 0; i < FILES_PER_READER; i++) {
			if (reader_should_replace(&rd, &rd.f[i]) && reader_refill(&rd, i))
				rd.f[i].via = "poll";
			if (rd.f[i].fd < 0)
				continue;
			p[n] = (struct pollfd){ .fd = rd.f[i].fd, .events = POLLIN | POLLPRI };
			idx[n++] = i;
		}
		if (!n) {
			sleep_ms(10);
			continue;
		}
		r = poll(p, n, POLL_TIMEOUT_MS);
		t1 = now_ns();
		if (r < 0) {
			if (errno != EINTR)
				FAIL("poll: %s", strerror(errno));
			continue;
		}
		if (!r) {
			COUNT(poll_timeouts);
			for (i = 0; i < n; i++)
				reader_timeout(&rd.f[idx[i]], t1);
			continue;
		}
		for (i = 0; i < n; i++)
			if (p[i].revents)
				reader_event(&rd, &rd.f[idx[i]], p[i].revents, C_poll_wakes);
	}
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* epoll reader: level and edge triggered                               */

static void *epoll_reader(void *arg)
{
	struct reader rd;
	struct epoll_event ev[FILES_PER_READER];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	reader_init(&rd, seed ^ (uintptr_t)arg);
	if (ep < 0) {
		FAIL("epoll_create1: %s", strerror(errno));
		return NULL;
	}
	while (running()) {
		int i, r, n = 0;
		int64_t t1;

		for (i = 0; i < FILES_PER_READER; i++) {
			struct sfile *f = &rd.f[i];

			if (reader_should_replace(&rd, f) && reader_refill(&rd, i)) {
				struct epoll_event e = { .events = EPOLLIN | EPOLLPRI };

				f->edge = rng_pct(&rd.rng, 50);
				f->via = f->edge ? "epoll edge-triggered" : "epoll";
				if (f->edge)
					e.events |= EPOLLET;
				e.data.u64 = (uint64_t)f->gen << 32 | i;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, f->fd, &e))
					FAIL("epoll_ctl ADD: %s", strerror(errno));
			}
			n += f->fd >= 0;
		}
		if (!n) {
			sleep_ms(10);
			continue;
		}
		r = epoll_wait(ep, ev, FILES_PER_READER, POLL_TIMEOUT_MS);
		t1 = now_ns();
		if (r < 0) {
			if (errno != EINTR)
				FAIL("epoll_wait: %s", strerror(errno));
			continue;
		}
		if (!r) {
			COUNT(poll_timeouts);
			for (i = 0; i < FILES_PER_READER; i++)
				reader_timeout(&rd.f[i], t1);
			continue;
		}
		for (i = 0; i < r; i++) {
			struct sfile *f = &rd.f[ev[i].data.u64 & 0xffffffff];

			if (f->fd < 0 || f->gen != ev[i].data.u64 >> 32)
				continue;
			reader_event(&rd, f, ev[i].events, C_epoll_wakes);
		}
	}
	reader_fini(&rd);
	close(ep);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* io_uring reader: one-shot and multishot polls                        */

#define URING_CANCEL_UD	(~0ULL)

static void uring_arm(struct io_uring *ring, struct sfile *f, int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (f->multishot)
		io_uring_prep_poll_multishot(sqe, f->fd, POLLIN | POLLPRI);
	else
		io_uring_prep_poll_add(sqe, f->fd, POLLIN | POLLPRI);
	io_uring_sqe_set_data64(sqe, (uint64_t)f->gen << 32 | i);
	f->armed = true;
	hist_add(f, 'a', 0);
}

/* a replaced file's poll is cancelled; its last completions are ignored */
static void uring_cancel(struct io_uring *ring, struct sfile *f, int i)
{
	struct io_uring_sqe *sqe;

	if (!f->armed)
		return;
	sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	io_uring_prep_poll_remove(sqe, (uint64_t)f->gen << 32 | i);
	io_uring_sqe_set_data64(sqe, URING_CANCEL_UD);
	f->armed = false;
}

static void *uring_reader(void *arg)
{
	struct reader rd;
	struct io_uring ring;
	int ret, i;

	reader_init(&rd, seed ^ (uintptr_t)arg);
	ret = io_uring_queue_init(4 * FILES_PER_READER, &ring, 0);
	if (ret) {
		FAIL("io_uring_queue_init: %s", strerror(-ret));
		reader_fini(&rd);
		return NULL;
	}
	while (running()) {
		struct __kernel_timespec ts = { POLL_TIMEOUT_MS / 1000,
						(POLL_TIMEOUT_MS % 1000) * NSEC_PER_MSEC };
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		int64_t t1;
		int n = 0;

		for (i = 0; i < FILES_PER_READER; i++) {
			struct sfile *f = &rd.f[i];

			if (reader_should_replace(&rd, f)) {
				uring_cancel(&ring, f, i);
				if (reader_refill(&rd, i)) {
					f->multishot = rng_pct(&rd.rng, 50);
					f->via = f->multishot ? "io_uring multishot" : "io_uring one-shot";
				}
			}
			if (f->fd >= 0 && !f->armed)
				uring_arm(&ring, f, i);
			n += f->fd >= 0;
		}
		io_uring_submit(&ring);
		if (!n) {
			sleep_ms(10);
			continue;
		}
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		t1 = now_ns();
		if (ret == -ETIME) {
			COUNT(poll_timeouts);
			for (i = 0; i < FILES_PER_READER; i++)
				reader_timeout(&rd.f[i], t1);
			continue;
		}
		if (ret == -EINTR)
			continue;
		if (ret) {
			FAIL("io_uring_wait_cqe_timeout: %s", strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			struct sfile *f;

			seen++;
			if (ud == URING_CANCEL_UD)
				continue;
			f = &rd.f[ud & 0xffffffff];
			if (f->fd < 0 || f->gen != ud >> 32)
				continue;	/* a replaced file's */
			if (!(cqe->flags & IORING_CQE_F_MORE))
				f->armed = false;
			/*
			 * A kernfs file whose active reference cannot be had
			 * adds no wait queue to a poll (it answers EPOLLERR),
			 * and io_uring fails such a poll with EINVAL instead of
			 * passing the mask on.  Seen only for cgroups whose
			 * rmdir had begun (reads then still worked at times):
			 * fine then; the file is replaced.
			 */
			if (cqe->res == -EINVAL && rm_started(f->cg.id, NULL)) {
				COUNT(uring_einval_removed);
				f->gone = true;
				continue;
			}
			if (cqe->res < 0) {
				FAIL("io_uring poll of %s/%s: %s", f->cg.path, kind_name(f->kind),
				     strerror(-cqe->res));
				continue;
			}
			reader_event(&rd, f, cqe->res,
				     f->multishot ? C_uring_multishot_wakes : C_uring_oneshot_wakes);
		}
		io_uring_cq_advance(&ring, seen);
	}
	reader_fini(&rd);
	io_uring_queue_exit(&ring);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* walker: subtree snapshots without waiting                            */

static void *walker(void *arg)
{
	enum file_kind kinds[3] = { F_SUBTREE };
	int i, nkinds = 1;
	struct reader rd;

	if (mem_on)
		kinds[nkinds++] = F_MEM_SUBTREE;
	if (io_on)
		kinds[nkinds++] = F_IO_SUBTREE;
	reader_init(&rd, seed ^ (uintptr_t)arg);
	while (running()) {
		for (i = 0; i < 2 * nkinds; i++) {
			struct sfile *f = &rd.f[i];

			/*
			 * cpu, then memory, then io: one on top (the fixed
			 * cgroups must be in it), one anywhere
			 */
			if (f->fd < 0 || f->gone || rng_pct(&rd.rng, 2)) {
				reader_close(f);
				reader_open(&rd, f, kinds[i / 2], i & 1 ? -1 : 0);
			}
			if (f->fd >= 0)
				reader_read(&rd, f);
		}
		sleep_ms(rng_range(&rd.rng, 0, 20));
	}
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* quick: open, read, close                                              */

static void *quick(void *arg)
{
	struct reader rd;
	struct sfile *f;
	char path[PATH_MAX + 32];

	reader_init(&rd, seed ^ (uintptr_t)arg);
	f = &rd.f[0];
	while (running()) {
		struct cg_pick cg;
		unsigned int op = rng_below(&rd.rng, 5);
		ssize_t n;
		long ms;

		switch (op) {
		case 0:	/* stream, read once */
		case 1:	/* subtree, one snapshot */
			if (!reader_open(&rd, f, pick_kind(&rd.rng, op), -1)) {
				COUNT(quick_opens);
				reader_read(&rd, f);
				reader_close(f);
			}
			break;
		case 2:	/* opened and closed unread: open/release against rmdir */
			if (!reader_open(&rd, f, pick_kind(&rd.rng, rng_pct(&rd.rng, 50)), -1)) {
				COUNT(quick_unread_closes);
				reader_close(f);
			}
			break;
		case 3:	/* classic cpu.stat, memory.stat or io.stat: a flush of its own */
			if (io_on && rng_pct(&rd.rng, mem_on ? 33 : 50)) {
				struct io_sample *s = malloc(sizeof(*s));
				char why[128];

				if (!s || !pick_cg(&rd.rng, false, true, NEED_IO, &cg)) {
					free(s);
					break;
				}
				snprintf(path, sizeof(path), "%s/io.stat", cg.path);
				n = read_file(path, rd.buf, IO_TEXT_MAX);
				if (n < 0 && (n == -ENOENT || n == -ENODEV) && rm_started(cg.id, NULL)) {
					free(s);
					break;
				}
				if (n < 0)
					FAIL("read %s: %s", path, strerror(-n));
				else if (parse_io_text(rd.buf, n, false, s, why))
					FAIL("%s: %s", path, why);
				else
					COUNT(iostat_reads);
				free(s);
				break;
			}
			if (mem_on && rng_pct(&rd.rng, 50)) {
				if (!pick_cg(&rd.rng, false, true, true, &cg))
					break;
				snprintf(path, sizeof(path), "%s/memory.stat", cg.path);
				n = read_file(path, rd.buf, MEM_TEXT_MAX);
				if (n < 0 && (n == -ENOENT || n == -ENODEV) && rm_started(cg.id, NULL))
					break;
				if (n < 0)
					FAIL("read %s: %s", path, strerror(-n));
				else if (strncmp(rd.buf, "anon ", 5))
					FAIL("%s: %.60s", path, rd.buf);
				else
					COUNT(memstat_reads);
				break;
			}
			if (!pick_cg(&rd.rng, false, true, false, &cg))
				break;
			snprintf(path, sizeof(path), "%s/cpu.stat", cg.path);
			n = read_file(path, rd.buf, 4096);
			if (n < 0 && (n == -ENOENT || n == -ENODEV) && rm_started(cg.id, NULL))
				break;
			if (n < 0)
				FAIL("read %s: %s", path, strerror(-n));
			else if (strncmp(rd.buf, "usage_usec ", 11))
				FAIL("%s: %.60s", path, rd.buf);
			else
				COUNT(cpustat_reads);
			break;
		case 4:
			if (io_on && rng_pct(&rd.rng, mem_on ? 33 : 50)) {
				ms = track_interval_get(&tracks[T_IO]);
				if (ms < 0 || (ms && (ms < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
						      ms > CGROUP_STAT_STREAM_INTERVAL_MAX_MS)))
					FAIL("%s/%s reads %ld", root, IO_INTERVAL_FILE, ms);
				else
					COUNT(io_interval_reads);
				break;
			}
			if (mem_on && rng_pct(&rd.rng, 50)) {
				ms = track_interval_get(&tracks[T_MEM]);
				if (ms < 0 || (ms && (ms < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
						      ms > CGROUP_STAT_STREAM_INTERVAL_MAX_MS)))
					FAIL("%s/%s reads %ld", root, MEM_INTERVAL_FILE, ms);
				else
					COUNT(mem_interval_reads);
				break;
			}
			ms = interval_get(root);
			if (ms < 0 || (ms && (ms < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
					      ms > CGROUP_STAT_STREAM_INTERVAL_MAX_MS)))
				FAIL("%s/%s reads %ld", root, INTERVAL_FILE, ms);
			else
				COUNT(interval_reads);
			break;
		}
		sleep_ms(rng_range(&rd.rng, 0, 5));
	}
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* monitors: the root's stream files, read at every flush               */

/* the root's @kind (a stream file), read at every flush: @t's timeline */
static void monitor_run(uint64_t rng_seed_value, enum file_kind kind, struct track *t,
			enum counter flushes_seen)
{
	struct reader rd;
	struct sfile *f;
	uint64_t first = 0;

	reader_init(&rd, rng_seed_value);
	f = &rd.f[0];
	f->kind = kind;
	snprintf(f->cg.path, sizeof(f->cg.path), "%s", root);
	f->cg.id = dir_id(root);
	f->cg.cpu = -1;		/* whether the root shows bandwidth keys is not ours to say */
	f->cg.mem = true;
	f->cg.io = true;
	f->t_open = now_ns();
	f->fd = open(f->cg.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->fd >= 0) {
		int dfd = f->fd;

		f->fd = openat(dfd, kind_name(kind), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		close(dfd);
	}
	if (f->fd < 0) {
		FAIL("open %s/%s: %s", root, kind_name(kind), strerror(errno));
		reader_fini(&rd);
		return;
	}
	while (running()) {
		struct pollfd p = { .fd = f->fd, .events = POLLIN | POLLPRI };
		int r = poll(&p, 1, POLL_TIMEOUT_MS);

		if (r < 0 && errno != EINTR)
			FAIL("poll: %s", strerror(errno));
		if (r <= 0)
			continue;
		if (reader_read(&rd, f))
			continue;
		if (p.revents & POLLIN)
			f->wakes++;
		if (!first)
			first = f->seq_last;
		mon_append(t, now_ns(), f->seq_last);
	}
	atomic_store(&counters[flushes_seen], f->seq_last - first);
	reader_fini(&rd);
}

static void *monitor(void *arg)
{
	monitor_run(seed ^ (uintptr_t)arg, F_STREAM, &tracks[T_CPU], C_flushes_seen);
	return NULL;
}

static void *mem_monitor(void *arg)
{
	monitor_run(seed ^ (uintptr_t)arg, F_MEM_STREAM, &tracks[T_MEM], C_mem_flushes_seen);
	return NULL;
}

static void *io_monitor(void *arg)
{
	monitor_run(seed ^ (uintptr_t)arg, F_IO_STREAM, &tracks[T_IO], C_io_flushes_seen);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* interval writers, one per stream                                      */

/* random writes to @t's knob, valid, invalid, and 0 for a moment */
static void interval_run(struct track *t, uint64_t rng_seed_value)
{
	static const char *const invalid[] = {
		"9", "3600001", "-5", "+5", "0x10", "abc", "\n", " ", "\t\n", "10 10",
		"10abc", "4294967296", "99999999999999999999", "1e3", "010x", "-0",
		"4294967306", " 5\n",
	};
	struct rng rng;
	long cur = track_interval_get(t);
	char interval_path[PATH_MAX], buf[MEM_TEXT_MAX];

	path_join(interval_path, sizeof(interval_path), root, t->interval_file);
	rng_seed(&rng, rng_seed_value);
	while (running()) {
		char text[64];
		long want = -1, got;
		int ret;
		unsigned int what = rng_below(&rng, 100);
		bool stop = false;

		sleep_ms(rng_range(&rng, 100, 600));
		if (what < 30) {
			want = CGROUP_STAT_STREAM_INTERVAL_MIN_MS;
		} else if (what < 75) {
			want = rng_range(&rng, 11, 100);
		} else if (what < 82) {
			want = rng_range(&rng, 101, 1000);
		} else if (what < 90) {
			want = zero_interval ? 0 : CGROUP_STAT_STREAM_INTERVAL_MIN_MS;
		} else {
			want = -1;
		}
		if (want >= 0) {
			/* leading zeros and a missing or doubled newline are fine too */
			switch (rng_below(&rng, 4)) {
			case 0: snprintf(text, sizeof(text), "%ld", want); break;
			case 1: snprintf(text, sizeof(text), "%ld\n", want); break;
			case 2: snprintf(text, sizeof(text), "000%ld\n", want); break;
			default: snprintf(text, sizeof(text), "  %ld  \n", want); break;
			}
		} else if (rng_pct(&rng, 10)) {
			text[0] = '\0';		/* a zero-byte write: 0, nothing changes */
		} else {
			snprintf(text, sizeof(text), "%s",
				 invalid[rng_below(&rng, sizeof(invalid) / sizeof(invalid[0]))]);
		}

		stop = want == 0 && cur > 0;
		if (stop) {
			long k = atomic_load(&t->stops_started);

			if (k == MAX_STOPS)
				continue;
			t->stop_t_start[k] = now_ns();
			atomic_store(&t->stops_started, k + 1);
		}
		ret = write_file(interval_path, text);
		if (stop) {
			long k = atomic_load(&t->stops_done);

			t->stop_t_done[k] = now_ns();
			atomic_store(&t->stops_done, k + 1);
		}
		got = track_interval_get(t);
		if (want >= 0) {
			if (ret)
				FAIL("writing '%s' to the %s: %s", text, t->what, strerror(-ret));
			else if (got != want)
				FAIL("wrote %s '%s', reads %ld", t->what, text, got);
			if (want == 0)
				COUNT_IDX(t->c_zero);
			else if (want == CGROUP_STAT_STREAM_INTERVAL_MIN_MS)
				COUNT_IDX(t->c_min);
			else
				COUNT_IDX(t->c_valid);
		} else if (!text[0]) {
			if (ret || got != cur)
				FAIL("a zero-byte %s write: %s, %s %ld -> %ld", t->what,
				     strerror(-ret), t->what, cur, got);
			COUNT_IDX(t->c_empty);
		} else {
			if (ret != -EINVAL)
				FAIL("writing invalid '%s' to the %s: %s", text, t->what,
				     ret ? strerror(-ret) : "accepted");
			if (got != cur)
				FAIL("invalid '%s' changed the %s from %ld to %ld", text, t->what,
				     cur, got);
			COUNT_IDX(t->c_invalid);
		}
		if (got >= 0)
			cur = got;
		/*
		 * Streaming stays off only briefly: the flusher runs most of
		 * the time.  Meanwhile this stream's flush_seq stays put: a
		 * cycle under way at the stop may still complete, and a read
		 * labels at most one flush ahead of the completed ones; the
		 * other streams' flushes go on and must not count here.
		 */
		if (cur == 0) {
			int64_t s0 = track_seq_now(t, buf, sizeof(buf)), s1;
			long ms = rng_range(&rng, 50, 300);

			sleep_ms(ms);
			s1 = track_seq_now(t, buf, sizeof(buf));
			if (s0 >= 0 && s1 >= 0) {
				if (s1 > s0 + 2)
					FAIL("%s/%s: flush_seq went from %lld to %lld in %ld ms while the "
					     "%s was 0", root, t->stream_file, (long long)s0,
					     (long long)s1, ms, t->what);
				COUNT_IDX(t->c_stop_checks);
			}
			ret = track_interval_set(t, CGROUP_STAT_STREAM_INTERVAL_MIN_MS);
			if (ret)
				FAIL("setting the %s back: %s", t->what, strerror(-ret));
			else
				cur = CGROUP_STAT_STREAM_INTERVAL_MIN_MS;
			COUNT_IDX(t->c_min);
		}
	}
}

static void *interval_writer(void *arg)
{
	interval_run(&tracks[T_CPU], seed ^ (uintptr_t)arg);
	return NULL;
}

static void *mem_interval_writer(void *arg)
{
	interval_run(&tracks[T_MEM], seed ^ (uintptr_t)arg);
	return NULL;
}

static void *io_interval_writer(void *arg)
{
	interval_run(&tracks[T_IO], seed ^ (uintptr_t)arg);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* migrants and the migrator                                             */

static pid_t migrants[NR_MIGRANTS];

/*
 * What the migrants did to memory, counted where the parent can read it
 * (MAP_SHARED, made before the fork): copied into counters[] at the end.
 */
struct migrant_stats {
	atomic_ulong maps, touches, dontneeds, unmaps, memfd_fills, memfd_closes;
	atomic_ulong touched_pages;
};
static struct migrant_stats *mstats;

/* one migrant's memory: at most MIGRANT_ANON_MAX_MB + MIGRANT_MEMFD_MAX_MB */
struct migrant_mem {
	char *anon;
	size_t anon_len;
	int memfd;
	size_t memfd_len;
	size_t page;
};

/* a write to every page of [@p, @p + @len): charged to the cgroup the task is in now */
static void migrant_touch(struct migrant_mem *m, char *p, size_t len)
{
	volatile char *v = p;
	size_t off;

	for (off = 0; off < len; off += m->page)
		v[off] = (char)(off >> 12 | 1);
	atomic_fetch_add(&mstats->touched_pages, len / m->page);
}

/*
 * One step of charging and uncharging: map and touch some MiB, touch them
 * again (after a move: pages dropped since are charged to the new cgroup),
 * drop part with MADV_DONTNEED, unmap (uncharging the cgroup that was
 * charged, which may be another one by now, or removed); fill a memfd
 * (shmem, "file" and "shmem" in memory.stat) and close it.
 */
static void migrant_memory(struct rng *rng, struct migrant_mem *m)
{
	static char chunk[65536];
	unsigned int what = rng_below(rng, 100);

	if (what < 80) {
		if (!m->anon) {
			size_t len = rng_range(rng, 1, MIGRANT_ANON_MAX_MB) << 20;
			void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return;
			m->anon = p;
			m->anon_len = len;
			migrant_touch(m, m->anon, m->anon_len);
			atomic_fetch_add(&mstats->maps, 1);
		} else if (what < 30) {
			munmap(m->anon, m->anon_len);
			m->anon = NULL;
			atomic_fetch_add(&mstats->unmaps, 1);
		} else if (what < 55) {
			size_t pages = m->anon_len / m->page;
			size_t first = rng_below(rng, pages), nr = rng_range(rng, 1, pages - first);

			madvise(m->anon + first * m->page, nr * m->page, MADV_DONTNEED);
			atomic_fetch_add(&mstats->dontneeds, 1);
		} else {
			migrant_touch(m, m->anon, m->anon_len);
			atomic_fetch_add(&mstats->touches, 1);
		}
		return;
	}
	if (m->memfd >= 0) {
		close(m->memfd);
		m->memfd = -1;
		atomic_fetch_add(&mstats->memfd_closes, 1);
		return;
	}
	m->memfd = memfd_create("cgstress", MFD_CLOEXEC);
	if (m->memfd < 0)
		return;
	m->memfd_len = rng_range(rng, 1, MIGRANT_MEMFD_MAX_MB * 16) * sizeof(chunk);
	memset(chunk, 0x5a, sizeof(chunk));
	for (size_t off = 0; off < m->memfd_len; off += sizeof(chunk))
		if (pwrite(m->memfd, chunk, sizeof(chunk), off) != sizeof(chunk))
			break;
	atomic_fetch_add(&mstats->memfd_fills, 1);
}

/*
 * The loop devices as the migrants see them (MAP_SHARED, made before the
 * fork): a migrant counts itself in @users, then uses the device only if
 * it is still @ready; the loop cycler clears @ready, then waits for
 * @users to drop to 0 before it removes the device (both sequentially
 * consistent: one of the two sees the other).
 */
struct loop_shared {
	atomic_int users;
	atomic_int ready;
};
struct io_stats {
	struct loop_shared loop[NR_LOOPS];
	atomic_ulong writes, reads, kib, errors;
	atomic_int first_errno;		/* of the first failed open, read or write */
	atomic_int first_error_loop;
};
static struct io_stats *iostats;

/*
 * One O_DIRECT read or write of 64-512 KiB on a random loop device, from
 * the cgroup the migrant is in now (where its io.stat counts it), through
 * a file opened for it alone: the loop cycler can remove the device
 * whenever no migrant is using it.
 */
static void migrant_io(struct rng *rng, void **buf)
{
	int k = rng_below(rng, nr_loops), fd, err = 0;
	struct loop_shared *l = &iostats->loop[k];
	size_t len = rng_range(rng, IO_MIN_KB / 4, IO_MAX_KB / 4) * 4096;
	off_t off = rng_below(rng, ((size_t)LOOP_BACKING_MB << 20) / 4096 - len / 4096 + 1) * 4096;
	bool wr = rng_pct(rng, 50);
	ssize_t n;

	if (!*buf) {
		*buf = mmap(NULL, IO_MAX_KB << 10, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (*buf == MAP_FAILED) {
			*buf = NULL;
			return;
		}
		memset(*buf, 0xa5, IO_MAX_KB << 10);
	}
	if (!atomic_load(&l->ready))
		return;
	atomic_fetch_add(&l->users, 1);
	if (atomic_load(&l->ready)) {
		fd = open(loops[k].node, (wr ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
		} else {
			n = wr ? pwrite(fd, *buf, len, off) : pread(fd, *buf, len, off);
			if (n != (ssize_t)len)
				err = n < 0 ? errno : EIO;
			else if (wr && rng_pct(rng, 20) && fdatasync(fd))
				err = errno;
			close(fd);
		}
		if (err) {
			int none = 0;

			if (atomic_compare_exchange_strong(&iostats->first_errno, &none, err))
				atomic_store(&iostats->first_error_loop, k);
			atomic_fetch_add(&iostats->errors, 1);
		} else {
			atomic_fetch_add(wr ? &iostats->writes : &iostats->reads, 1);
			atomic_fetch_add(&iostats->kib, len >> 10);
		}
	}
	atomic_fetch_sub(&l->users, 1);
}

/*
 * A child that burns CPU in bursts (user and system time), niced for some;
 * with the memory stream stressed, it charges and uncharges memory too,
 * and with the io stream, it reads and writes loop devices.
 */
static void migrant_main(int i)
{
	struct migrant_mem m = { .memfd = -1, .page = sysconf(_SC_PAGESIZE) };
	void *io_buf = NULL;
	struct rng rng;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rng_seed(&rng, seed + i);
	if (i == 0 && nice(10) < 0)
		_exit(1);
	for (;;) {
		int64_t until = now_ns() + rng_range(&rng, 1, 4) * NSEC_PER_MSEC;
		volatile uint64_t x = 0;

		while (now_ns() < until)
			x += getppid();		/* a syscall: some system time */
		if (getppid() == 1)
			_exit(0);
		if (mem_on && rng_pct(&rng, 5))
			migrant_memory(&rng, &m);
		if (io_on && rng_pct(&rng, 2))
			migrant_io(&rng, &io_buf);
		sleep_ms(rng_range(&rng, 2, 6));
	}
}

static int move_pid(const char *cg, pid_t pid)
{
	char path[PATH_MAX + 16], text[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(text, sizeof(text), "%d\n", pid);
	return write_file(path, text);
}

static void *migrator(void *arg)
{
	struct rng rng;

	rng_seed(&rng, seed ^ (uintptr_t)arg);
	while (running()) {
		struct cg_pick cg;
		pid_t pid = migrants[rng_below(&rng, NR_MIGRANTS)];
		int ret;

		sleep_ms(rng_range(&rng, 2, 20));
		if (!pick_cg(&rng, true, true, false, &cg))
			continue;
		ret = move_pid(cg.path, pid);
		if (!ret) {
			COUNT(migrations);
		} else if ((ret == -ENOENT || ret == -ENODEV) && rm_started(cg.id, NULL)) {
			COUNT(migrations_to_removed);
		} else {
			FAIL("moving %d to %s: %s", pid, cg.path, strerror(-ret));
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* churn: nested mkdir / rmdir                                           */

struct churn_node {
	char path[PATH_MAX];
	int parent, depth, slot;
	bool cpu, children_cpu, leaf;
	bool mem, children_mem;
	bool io, children_io;
	uint64_t id;
};

/* moves the processes of @path to the fixed leaf, so it can be removed */
static void evacuate_to_fixed(const char *path)
{
	char procs[PATH_MAX + 16], buf[4096], *line, *save;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	if (read_file(procs, buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		move_pid(cgs[fixed_leaf_a].path, atoi(line));
}

/* rmdir, timed, retried while a migrant is inside: true once removed */
static bool churn_rmdir(struct churn_node *n)
{
	int tries;

	for (tries = 0; tries < 200; tries++) {
		int64_t t0 = now_ns(), dt;
		int r = rmdir(n->path), err = errno;

		dt = now_ns() - t0;
		note_max(&max_rmdir_ns, dt);
		if (dt > rmdir_limit_ns)
			FAIL("rmdir %s took %.3f s", n->path, dt / 1e9);
		if (!r) {
			COUNT(rmdir);
			rm_done(n->id);
			return true;
		}
		if (err != EBUSY) {
			FAIL("rmdir %s: %s", n->path, strerror(err));
			return false;
		}
		COUNT(rmdir_ebusy);
		/* a failed rmdir has not deactivated anything */
		if (rm_enodev_seen(n->id))
			FAIL("ENODEV/EPOLLERR seen for %s, yet its rmdir failed with EBUSY", n->path);
		evacuate_to_fixed(n->path);
		sleep_ms(2);
	}
	FAIL("rmdir %s: still busy after 200 tries", n->path);
	return false;
}

static void churn_round(struct rng *rng, int w, unsigned long gen)
{
	struct churn_node nodes[MAX_CHAIN];
	int nr = 1, maxdepth = rng_range(rng, 1, 4), i, j;
	char path[PATH_MAX], name[64];

	memset(nodes, 0, sizeof(nodes));
	snprintf(name, sizeof(name), "pool/w%d-%lu", w, gen);
	path_join(nodes[0].path, sizeof(nodes[0].path), top, name);
	nodes[0].parent = -1;
	nodes[0].depth = 1;
	nodes[0].cpu = true;		/* pool has +cpu */
	nodes[0].mem = mem_on;		/* and +memory, when stressed */
	nodes[0].io = io_on;		/* and +io */
	nodes[0].leaf = true;

	/* breadth first: a parent exists, and has its controllers, before its children */
	for (i = 0; i < nr; i++) {
		struct churn_node *p = &nodes[i];
		int kids = p->depth < maxdepth ? rng_range(rng, 0, 2) : 0;

		if (!running() || mkdir(p->path, 0755)) {
			if (running())
				FAIL("mkdir %s: %s", p->path, strerror(errno));
			nr = i;	/* the ones made so far */
			break;
		}
		COUNT(mkdir);
		p->id = dir_id(p->path);
		if (p->cpu && rng_pct(rng, 30)) {
			path_join(path, sizeof(path), p->path, "cpu.max");
			if (write_file(path, rng_pct(rng, 50) ? "20000 100000" : "5000 10000"))
				FAIL("write %s: %s", path, strerror(errno));
			else
				COUNT(cpu_max_set);
		}
		if (!kids || nr + kids > MAX_CHAIN)
			continue;
		if (p->cpu && rng_pct(rng, 50)) {
			path_join(path, sizeof(path), p->path, "cgroup.subtree_control");
			if (write_file(path, "+cpu"))
				FAIL("+cpu in %s: %s", path, strerror(errno));
			else {
				p->children_cpu = true;
				COUNT(subtree_control_cpu);
			}
		}
		if (p->mem && rng_pct(rng, 50)) {
			int err;

			path_join(path, sizeof(path), p->path, "cgroup.subtree_control");
			err = write_file(path, "+memory");
			if (err)
				FAIL("+memory in %s: %s", path, strerror(-err));
			else {
				p->children_mem = true;
				COUNT(subtree_control_memory);
			}
		}
		if (p->io && rng_pct(rng, 50)) {
			int err;

			path_join(path, sizeof(path), p->path, "cgroup.subtree_control");
			err = write_file(path, "+io");
			if (err)
				FAIL("+io in %s: %s", path, strerror(-err));
			else {
				p->children_io = true;
				COUNT(subtree_control_io);
			}
		}
		p->leaf = false;
		for (j = 0; j < kids; j++) {
			struct churn_node *c = &nodes[nr];

			snprintf(name, sizeof(name), "c%d", j);
			path_join(c->path, sizeof(c->path), p->path, name);
			c->parent = i;
			c->depth = p->depth + 1;
			c->cpu = p->children_cpu;
			c->mem = p->children_mem;
			c->io = p->children_io;
			c->leaf = true;
			nr++;
		}
	}

	/* published only once complete: leaves stay leaves */
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++) {
		int s = NR_FIXED + w * MAX_CHAIN + i;

		nodes[i].slot = s;
		strcpy(cgs[s].path, nodes[i].path);
		cgs[s].id = nodes[i].id;
		cgs[s].state = CG_LIVE;
		cgs[s].fixed = false;
		cgs[s].leaf = nodes[i].leaf;
		cgs[s].cpu = nodes[i].cpu;
		cgs[s].mem = nodes[i].mem;
		cgs[s].io = nodes[i].io;
		cgs[s].under_top = true;
	}
	pthread_mutex_unlock(&cg_lock);

	sleep_ms(rng_range(rng, 20, 400));

	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++)
		cgs[nodes[i].slot].state = CG_REMOVING;
	pthread_mutex_unlock(&cg_lock);
	for (i = 0; i < nr; i++)
		rm_start(nodes[i].id);
	/* children first; a node whose rmdir failed keeps its parent too */
	for (i = nr - 1; i >= 0; i--) {
		churn_rmdir(&nodes[i]);
		atomic_fetch_add(&rm_ends, 1);
	}
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++) {
		cgs[nodes[i].slot].state = CG_FREE;
		cgs[nodes[i].slot].id = 0;
	}
	pthread_mutex_unlock(&cg_lock);
}

static void *churn(void *arg)
{
	struct rng rng;
	int w = (int)(uintptr_t)arg;
	unsigned long gen = 0;

	rng_seed(&rng, seed ^ (0x1000 + w));
	while (running())
		churn_round(&rng, w, gen++);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* setup, teardown                                                      */

static bool root_cpu_enabled_by_us, root_mem_enabled_by_us, root_io_enabled_by_us;
static long interval_saved = -1, mem_interval_saved = -1, io_interval_saved = -1;

/* is @word one of the blank-separated words of @list? */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (!p[len] || p[len] == ' ' || p[len] == '\n'))
			return true;
		p += len;
	}
	return false;
}

/* @ctrl's part (memory, io) is left out, which is no failure: says why, clears *@on */
static void __attribute__((format(printf, 3, 4)))
part_skip(bool *on, const char *ctrl, const char *fmt, ...)
{
	va_list ap;

	printf("cgstress: the %s stream is not stressed: ", ctrl);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	*on = false;
}

/*
 * The root's @ctrl controller (memory, io) for our subtree: 0, or -1
 * (the part left out, said why, *@on cleared).  @subtree_control: the
 * root's, as read.
 */
static int ctrl_setup_root(const char *subtree_control, const char *ctrl, bool *on,
			   bool *enabled_by_us)
{
	char path[PATH_MAX + 32], buf[512], plus[32];
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0 || !has_word(buf, ctrl)) {
		part_skip(on, ctrl, "no %s controller in %s", ctrl, path);
		return -1;
	}
	if (has_word(subtree_control, ctrl))
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	snprintf(plus, sizeof(plus), "+%s", ctrl);
	err = write_file(path, plus);
	if (err) {
		part_skip(on, ctrl, "%s in %s: %s", plus, path, strerror(-err));
		return -1;
	}
	*enabled_by_us = true;
	return 0;
}

/* +@ctrl in @cg's cgroup.subtree_control: 0, or -1 (the part left out, said why) */
static int ctrl_enable_children(const char *cg, const char *ctrl, bool *on)
{
	char path[PATH_MAX + 32], plus[32];
	int err;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg);
	snprintf(plus, sizeof(plus), "+%s", ctrl);
	err = write_file(path, plus);
	if (err) {
		part_skip(on, ctrl, "%s in %s: %s", plus, path, strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * The loop devices: backing files on a tmpfs of our own (in /tmp), the
 * devices got with LOOP_CTL_GET_FREE and bound with LOOP_CONFIGURE;
 * device nodes of our own there (loop_find() says why; loop-control's
 * only when /dev lacks it).
 */
static char io_dir[PATH_MAX];
static bool io_dir_mounted;
static char loop_control[PATH_MAX];
static bool made_loop_control;
static int loop_ctl_fd = -1;

/*
 * a node of @type and @dev: @dflt if it is one, else (and with @dflt NULL)
 * made in io_dir as @name: 0 or -errno
 */
static int dev_node(char *path, size_t len, const char *dflt, const char *name, mode_t type,
		    dev_t dev, bool *made)
{
	struct stat st;

	if (dflt && !stat(dflt, &st) && (st.st_mode & S_IFMT) == type && st.st_rdev == dev) {
		snprintf(path, len, "%s", dflt);
		return 0;
	}
	path_join(path, len, io_dir, name);
	if (mknod(path, type | 0600, dev))
		return -errno;
	*made = true;
	return 0;
}

/*
 * loop<index>'s device numbers (sysfs says; 7:index without it) and a node
 * of our own for it in io_dir, never /dev's.  devtmpfs removes a device's
 * node in device_del(), matching by numbers only; when the legacy autoload
 * brings loop<index> back before the old disk's del_gendisk() reaches
 * device_del() (see loop_cycler()), the new disk finds the old node and
 * makes none, and the old disk's removal then takes that node: the
 * re-created loop1 could not be opened to bind it (ENOENT), once in a
 * 10-minute run, with one autoload counted.
 */
static int loop_find(struct loopdev *l)
{
	char path[64], buf[32], name[32];
	unsigned int maj = 7, min = l->index;

	snprintf(path, sizeof(path), "/sys/block/loop%d/dev", l->index);
	if (read_file(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	l->major = maj;
	l->minor = min;
	snprintf(name, sizeof(name), "loop%d", l->index);
	return dev_node(l->node, sizeof(l->node), NULL, name, S_IFBLK, makedev(maj, min),
			&l->made_node);
}

static int loop_bind(struct loopdev *l)
{
	struct loop_config cfg;
	int fd = open(l->node, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = l->backing_fd;
	if (ioctl(fd, LOOP_CONFIGURE, &cfg))
		err = -errno;
	close(fd);
	l->bound = !err;
	return err;
}

/* LOOP_CLR_FD: done when our file, the last one open, is closed */
static int loop_unbind(struct loopdev *l)
{
	int fd = open(l->node, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, LOOP_CLR_FD, 0))
		err = -errno;
	close(fd);
	if (!err)
		l->bound = false;
	return err;
}

/* LOOP_CTL_REMOVE, retried while another opener (udev probing it) holds it: 0 or -errno */
static int loop_remove(struct loopdev *l)
{
	for (int tries = 0; tries < 100; tries++) {
		if (ioctl(loop_ctl_fd, LOOP_CTL_REMOVE, l->index) >= 0)
			return 0;
		if (errno != EBUSY)
			return -errno;
		sleep_ms(20);
	}
	return -EBUSY;
}

/* two bound loop devices: 0, or -1 (io left out, said why; io_teardown_loops() cleans up) */
static int io_setup_loops(void)
{
	char path[PATH_MAX], name[32];
	int k, err;

	for (k = 0; k < NR_LOOPS; k++) {
		loops[k].index = -1;
		loops[k].backing_fd = -1;
	}
	snprintf(io_dir, sizeof(io_dir), "/tmp/cgstress-io.XXXXXX");
	if (!mkdtemp(io_dir)) {
		part_skip(&io_on, "io", "mkdtemp %s: %s", io_dir, strerror(errno));
		io_dir[0] = '\0';
		return -1;
	}
	if (!mount("cgstress", io_dir, "tmpfs", MS_NOSUID, "size=32m,mode=0700"))
		io_dir_mounted = true;
	else
		printf("cgstress: no tmpfs on %s (%s): the loop devices' backing files are in /tmp\n",
		       io_dir, strerror(errno));
	err = dev_node(loop_control, sizeof(loop_control), "/dev/loop-control", "loop-control",
		       S_IFCHR, makedev(10, LOOP_CTRL_MISC_MINOR), &made_loop_control);
	if (!err) {
		loop_ctl_fd = open(loop_control, O_RDWR | O_CLOEXEC);
		err = loop_ctl_fd < 0 ? -errno : 0;
	}
	if (err) {
		part_skip(&io_on, "io", "no loop devices: %s: %s", loop_control, strerror(-err));
		return -1;
	}
	for (k = 0; k < NR_LOOPS; k++) {
		struct loopdev *l = &loops[k];

		snprintf(name, sizeof(name), "loop%d.img", k);
		path_join(path, sizeof(path), io_dir, name);
		l->backing_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (l->backing_fd < 0 || ftruncate(l->backing_fd, (off_t)LOOP_BACKING_MB << 20)) {
			part_skip(&io_on, "io", "backing file %s: %s", path, strerror(errno));
			return -1;
		}
		l->index = ioctl(loop_ctl_fd, LOOP_CTL_GET_FREE);
		if (l->index < 0) {
			part_skip(&io_on, "io", "no free loop device: %s", strerror(errno));
			return -1;
		}
		err = loop_find(l);
		if (!err)
			err = loop_bind(l);
		if (err) {
			part_skip(&io_on, "io", "loop%d (%s): %s", l->index, l->node, strerror(-err));
			return -1;
		}
		nr_loops++;
	}
	return 0;
}

/* the loop devices unbound and removed, their nodes, files and tmpfs gone */
static void io_teardown_loops(void)
{
	char path[PATH_MAX], name[32];
	int k, err;

	for (k = 0; k < NR_LOOPS && io_dir[0]; k++) {
		struct loopdev *l = &loops[k];

		if (l->bound && (err = loop_unbind(l)))
			fprintf(stderr, "cgstress: LOOP_CLR_FD of loop%d: %s\n", l->index, strerror(-err));
		if (l->index >= 0 && loop_ctl_fd >= 0 && (err = loop_remove(l)) && err != -ENODEV)
			fprintf(stderr, "cgstress: LOOP_CTL_REMOVE of loop%d: %s\n", l->index,
				strerror(-err));
		if (l->backing_fd >= 0)
			close(l->backing_fd);
		if (l->made_node)
			unlink(l->node);
		snprintf(name, sizeof(name), "loop%d.img", k);
		path_join(path, sizeof(path), io_dir, name);
		unlink(path);
	}
	if (loop_ctl_fd >= 0)
		close(loop_ctl_fd);
	if (made_loop_control)
		unlink(loop_control);
	if (io_dir_mounted && umount2(io_dir, MNT_DETACH))
		fprintf(stderr, "cgstress: umount %s: %s\n", io_dir, strerror(errno));
	if (io_dir[0] && rmdir(io_dir))
		fprintf(stderr, "cgstress: rmdir %s: %s\n", io_dir, strerror(errno));
	io_dir[0] = '\0';
}

/*
 * Now and then the last loop device goes away while readers read (its
 * blkgs with it: io.stat and the records stop listing it, the kernel must
 * not trip over what it held) and comes back as a new disk with the same
 * number and counters from 0.  Its epoch moves on before the removal and
 * before the re-creation: counters are compared within one epoch only.
 */
static void *loop_cycler(void *arg)
{
	struct loopdev *l = &loops[nr_loops - 1];
	struct loop_shared *sh = &iostats->loop[nr_loops - 1];
	atomic_ulong *epoch = &loop_epoch[nr_loops - 1];
	struct rng rng;
	int err, waited;

	rng_seed(&rng, seed ^ (uintptr_t)arg);
	while (running()) {
		sleep_ms(rng_range(&rng, 1000, 4000));
		if (!running())
			break;
		atomic_store(&sh->ready, 0);
		for (waited = 0; atomic_load(&sh->users) && waited < 2000; waited++)
			sleep_ms(1);
		if (atomic_load(&sh->users)) {
			COUNT(loop_busy);
			atomic_store(&sh->ready, 1);
			continue;
		}
		atomic_fetch_add(epoch, 1);
		err = loop_unbind(l);
		if (!err)
			err = loop_remove(l);
		atomic_fetch_add(epoch, 1);
		if (err == -EBUSY) {
			/* held open by someone else: not ours to fight over */
			COUNT(loop_busy);
			printf("cgstress: loop%d stays busy: no more removals (and no I/O on it)\n",
			       l->index);
			break;
		}
		if (err) {
			FAIL("removing loop%d: %s", l->index, strerror(-err));
			break;
		}
		COUNT(loop_removals);
		/*
		 * EEXIST (seen once in 8 runs): loop<index> is back already.
		 * An open of its node between del_gendisk()'s bdev_unhash() and
		 * its device_del() (udev probing the disk after LOOP_CLR_FD's
		 * change event, most likely) finds no disk and re-creates it
		 * through the legacy autoload (CONFIG_BLOCK_LEGACY_AUTOLOAD): an
		 * unbound new disk all the same
		 */
		if (ioctl(loop_ctl_fd, LOOP_CTL_ADD, l->index) != l->index) {
			if (errno != EEXIST) {
				FAIL("re-creating loop%d: %s", l->index, strerror(errno));
				break;
			}
			COUNT(loop_autoloaded);
		}
		err = loop_bind(l);
		if (err) {
			FAIL("binding the re-created loop%d: %s", l->index, strerror(-err));
			break;
		}
		COUNT(loop_recreates);
		atomic_store(&sh->ready, 1);
	}
	return NULL;
}

/*
 * memory.stat's keys, "key\n" each, into mem_keys (and with the flush
 * keys into mem_stream_keys): what memory.stat.stream and the KEYS record
 * must name.  0, or -1 (said why).
 */
static int mem_read_keys(const char *cg)
{
	char path[PATH_MAX + 32], *buf, *line, *save, *sp;
	size_t used = 0;
	ssize_t n;
	int ret = -1;

	buf = malloc(MEM_TEXT_MAX);
	if (!buf) {
		perror("malloc");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	n = read_file(path, buf, MEM_TEXT_MAX);
	if (n < 0) {
		fprintf(stderr, "cgstress: read %s: %s\n", path, strerror(-n));
		goto out;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sp = strchr(line, ' ');
		if (!sp || sp == line || used + (sp - line) + 2 > sizeof(mem_keys)) {
			fprintf(stderr, "cgstress: %s: cannot take '%.60s'\n", path, line);
			goto out;
		}
		memcpy(mem_keys + used, line, sp - line);
		used += sp - line;
		mem_keys[used++] = '\n';
		mem_nr_keys++;
	}
	mem_keys[used] = '\0';
	if (strncmp(mem_keys, "anon\n", 5)) {
		fprintf(stderr, "cgstress: %s does not start with anon\n", path);
		goto out;
	}
	snprintf(mem_stream_keys, sizeof(mem_stream_keys), "%s%s\n%s\n%s\n", mem_keys,
		 CGROUP_STAT_STREAM_KEY_SEQ, CGROUP_STAT_STREAM_KEY_TIME,
		 CGROUP_STAT_STREAM_KEY_MISSED);
	ret = 0;
out:
	free(buf);
	return ret;
}

static int add_fixed(int slot, const char *rel, bool leaf, int cpu, bool create)
{
	struct cg *c = &cgs[slot];

	if (rel)
		path_join(c->path, sizeof(c->path), top, rel);
	else
		strcpy(c->path, top);
	if (create && mkdir(c->path, 0755)) {
		fprintf(stderr, "cgstress: mkdir %s: %s\n", c->path, strerror(errno));
		return -1;
	}
	c->id = dir_id(c->path);
	c->state = CG_LIVE;
	c->fixed = true;
	c->leaf = leaf;
	c->cpu = cpu;
	c->under_top = true;
	return 0;
}

static int setup(void)
{
	char path[PATH_MAX + 32], buf[512];
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (read_file(path, buf, sizeof(buf)) < 0) {
		fprintf(stderr, "cgstress: read %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!strstr(buf, "cpu")) {
		if (write_file(path, "+cpu")) {
			fprintf(stderr, "cgstress: +cpu in %s: %s\n", path, strerror(errno));
			return -1;
		}
		root_cpu_enabled_by_us = true;
	}
	if (mem_on)
		ctrl_setup_root(buf, "memory", &mem_on, &root_mem_enabled_by_us);
	/* the io controller, and devices to do I/O on */
	if (io_on && !ctrl_setup_root(buf, "io", &io_on, &root_io_enabled_by_us))
		io_setup_loops();
	snprintf(buf, sizeof(buf), "cgstress.%d", getpid());
	path_join(top, sizeof(top), root, buf);
	/* slot 0 must be top: snapshots of it are checked for the fixed ones */
	if (add_fixed(0, NULL, false, 1, true))
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", top);
	if (write_file(path, "+cpu")) {
		fprintf(stderr, "cgstress: +cpu in %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (mem_on)
		ctrl_enable_children(top, "memory", &mem_on);
	if (io_on)
		ctrl_enable_children(top, "io", &io_on);
	fixed_leaf_a = 1;
	if (add_fixed(1, "fixed-a", true, 1, true) || add_fixed(2, "fixed-b", true, 1, true) ||
	    add_fixed(3, "inner", false, 1, true) || add_fixed(4, "inner/nocpu", true, 0, true) ||
	    add_fixed(5, "pool", false, 1, true))
		return -1;
	snprintf(path, sizeof(path), "%s/fixed-a/cpu.max", top);
	if (write_file(path, "10000 100000")) {
		fprintf(stderr, "cgstress: write %s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/pool/cgroup.subtree_control", top);
	if (write_file(path, "+cpu")) {
		fprintf(stderr, "cgstress: +cpu in %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (mem_on)
		ctrl_enable_children(cgs[5].path, "memory", &mem_on);
	if (io_on)
		ctrl_enable_children(cgs[5].path, "io", &io_on);
	/* the real root: read, never removed, processes never moved there */
	snprintf(cgs[6].path, sizeof(cgs[6].path), "%s", root);
	cgs[6].id = dir_id(root);
	cgs[6].state = CG_LIVE;
	cgs[6].fixed = true;
	cgs[6].cpu = -1;
	/* memory.stat: the root, top and its children but inner/nocpu (inner has no +memory) */
	if (mem_on && mem_read_keys(top))
		return -1;
	/* io.stat likewise: inner has no +io either */
	for (i = 0; i < NR_FIXED; i++) {
		cgs[i].mem = mem_on && i != 4;
		cgs[i].io = io_on && i != 4;
	}
	for (i = 0; i < NR_FIXED; i++)
		if (!cgs[i].id) {
			fprintf(stderr, "cgstress: no id for %s\n", cgs[i].path);
			return -1;
		}
	return 0;
}

static void teardown(void)
{
	char path[PATH_MAX + 32];
	int i, status;

	for (i = 0; i < NR_MIGRANTS; i++)
		if (migrants[i] > 0) {
			kill(migrants[i], SIGKILL);
			waitpid(migrants[i], &status, 0);
		}
	if (top[0] && remove_tree(top))
		fprintf(stderr, "cgstress: could not remove %s\n", top);
	if (interval_saved >= 0 && interval_set(root, interval_saved))
		fprintf(stderr, "cgstress: could not restore the interval %ld\n", interval_saved);
	if (mem_interval_saved >= 0 && track_interval_set(&tracks[T_MEM], mem_interval_saved))
		fprintf(stderr, "cgstress: could not restore the memory interval %ld\n",
			mem_interval_saved);
	if (io_interval_saved >= 0 && track_interval_set(&tracks[T_IO], io_interval_saved))
		fprintf(stderr, "cgstress: could not restore the io interval %ld\n",
			io_interval_saved);
	/* the migrants, which did I/O on them, are gone */
	io_teardown_loops();
	/* busy if other cgroups use them meanwhile: then they stay */
	if (root_cpu_enabled_by_us) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
		write_file(path, "-cpu");
	}
	if (root_mem_enabled_by_us) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
		write_file(path, "-memory");
	}
	if (root_io_enabled_by_us) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
		write_file(path, "-io");
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: cgstress [--seconds N] [--seed S] [--max-failures N] "
		"[--slow N] [--no-zero-interval] [--no-memory] [--no-io]\n"
		"  --slow N            the kernel is about N (1-10) times slower than the lockdep\n"
		"                      test kernel: the rmdir bound and the wake-up margin are N\n"
		"                      times longer (KASAN, KCSAN: 3)\n"
		"  --no-zero-interval  never set an interval to 0 (streaming never stops)\n"
		"  --no-memory         do not stress memory.stat.stream* (nor charge memory)\n"
		"  --no-io             do not stress io.stat.stream* (nor set up loop devices)\n"
		"exit: 0 pass, 1 fail, 77 skip (not root, no cgroup2, no cpu.stat.stream)\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "max-failures", required_argument, NULL, 'm' },
		{ "slow", required_argument, NULL, 'S' },
		{ "no-zero-interval", no_argument, NULL, 'z' },
		{ "no-memory", no_argument, NULL, 'M' },
		{ "no-io", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct {
		void *(*fn)(void *);
		const char *name;
		const bool *on;		/* run only if *on (NULL: always) */
	} roles[] = {
		{ monitor, "monitor", NULL }, { interval_writer, "interval", NULL },
		{ churn, "churn", NULL }, { churn, "churn", NULL }, { churn, "churn", NULL },
		{ migrator, "migrator", NULL }, { poll_reader, "poll", NULL },
		{ poll_reader, "poll", NULL }, { epoll_reader, "epoll", NULL },
		{ uring_reader, "io_uring", NULL }, { walker, "walker", NULL }, { quick, "quick", NULL },
		/* the memory and io streams': left out without them */
		{ mem_monitor, "memory monitor", &mem_on },
		{ mem_interval_writer, "memory interval", &mem_on },
		{ io_monitor, "io monitor", &io_on }, { io_interval_writer, "io interval", &io_on },
		{ loop_cycler, "loop cycler", &loop_cycling },
	};
	enum { NR_ROLES = sizeof(roles) / sizeof(roles[0]) };
	pthread_t th[NR_ROLES];
	struct sigaction sa = { .sa_handler = on_signal };
	long seconds = 60;
	char path[PATH_MAX + 32];
	int c, i, k, err, nchurn = 0, nr_threads = 0;
	long slow = 1;
	int64_t end, next_note;

	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *e;

		switch (c) {
		case 's': seconds = strtol(optarg, &e, 10); if (*e || seconds <= 0) usage(2); break;
		case 'r': seed = strtoull(optarg, &e, 0); if (*e) usage(2); break;
		case 'm': max_failures = strtol(optarg, &e, 10); if (*e || max_failures <= 0) usage(2); break;
		case 'S': slow = strtol(optarg, &e, 10); if (*e || slow < 1 || slow > 10) usage(2); break;
		case 'z': zero_interval = false; break;
		case 'M': mem_on = false; break;
		case 'I': io_on = false; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid()) {
		printf("SKIP: cgstress needs root\n");
		return EXIT_SKIP;
	}
	if (cgroup2_mount(root, sizeof(root))) {
		printf("SKIP: no cgroup2 mount\n");
		return EXIT_SKIP;
	}
	snprintf(path, sizeof(path), "%s/%s", root, STREAM_FILE);
	if (access(path, R_OK)) {
		printf("SKIP: no %s: not a cgstream kernel\n", path);
		return EXIT_SKIP;
	}
	rmdir_limit_ns *= slow;
	wake_margin_ns *= slow;
	printf("cgstress: %ld s, seed %#llx (--seed to repeat the choices; the timing differs)\n",
	       seconds, (unsigned long long)seed);
	printf("cgstress: bounds: rmdir %.0f s, wake-up margin %.0f s (--slow %ld)\n",
	       rmdir_limit_ns / 1e9, wake_margin_ns / 1e9, slow);
	snprintf(path, sizeof(path), "%s/%s", root, MEM_INTERVAL_FILE);
	if (mem_on && access(path, W_OK))
		part_skip(&mem_on, "memory", "no %s: a kernel without it", path);
	snprintf(path, sizeof(path), "%s/%s", root, IO_INTERVAL_FILE);
	if (io_on && access(path, W_OK))
		part_skip(&io_on, "io", "no %s: a kernel without it", path);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	t_start = now_ns();
	interval_saved = interval_get(root);
	if (interval_saved < 0) {
		printf("FAIL: read %s/%s: %s\n", root, INTERVAL_FILE, strerror(-interval_saved));
		return EXIT_FAIL;
	}
	if (mem_on) {
		mem_interval_saved = track_interval_get(&tracks[T_MEM]);
		if (mem_interval_saved < 0) {
			printf("FAIL: read %s/%s: %s\n", root, MEM_INTERVAL_FILE,
			       strerror(-mem_interval_saved));
			return EXIT_FAIL;
		}
	}
	if (io_on) {
		io_interval_saved = track_interval_get(&tracks[T_IO]);
		if (io_interval_saved < 0) {
			printf("FAIL: read %s/%s: %s\n", root, IO_INTERVAL_FILE,
			       strerror(-io_interval_saved));
			return EXIT_FAIL;
		}
	}
	if (setup()) {
		teardown();
		printf("cgstress: FAIL (setup)\n");
		return EXIT_FAIL;
	}
	if (mem_on) {
		mstats = mmap(NULL, sizeof(*mstats), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (mstats == MAP_FAILED) {
			perror("mmap");
			mstats = NULL;
			teardown();
			return EXIT_FAIL;
		}
		printf("cgstress: the memory stream too (%s, %s, %s; memory.stat has %d keys); "
		       "%d migrants charge up to %d MiB each\n", MEM_INTERVAL_FILE, MEM_STREAM_FILE,
		       MEM_SUBTREE_FILE, mem_nr_keys, NR_MIGRANTS,
		       MIGRANT_ANON_MAX_MB + MIGRANT_MEMFD_MAX_MB);
	}
	if (io_on) {
		iostats = mmap(NULL, sizeof(*iostats), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (iostats == MAP_FAILED) {
			perror("mmap");
			iostats = NULL;
			teardown();
			return EXIT_FAIL;
		}
		for (k = 0; k < nr_loops; k++)
			atomic_store(&iostats->loop[k].ready, 1);
		loop_cycling = nr_loops == NR_LOOPS;
		printf("cgstress: the io stream too (%s, %s, %s); the migrants read and write "
		       "%d-%d KiB with O_DIRECT on loop%d (%u:%u) and loop%d (%u:%u), which is "
		       "removed and re-created every 1-4 s\n", IO_INTERVAL_FILE, IO_STREAM_FILE,
		       IO_SUBTREE_FILE, IO_MIN_KB, IO_MAX_KB, loops[0].index, loops[0].major,
		       loops[0].minor, loops[1].index, loops[1].major, loops[1].minor);
	}
	/* before any thread: fork() of a threaded process copies one thread */
	fflush(NULL);
	for (i = 0; i < NR_MIGRANTS; i++) {
		migrants[i] = fork();
		if (migrants[i] < 0) {
			perror("fork");
			teardown();
			return EXIT_FAIL;
		}
		if (!migrants[i])
			migrant_main(i);
		err = move_pid(cgs[fixed_leaf_a + (i & 1)].path, migrants[i]);
		if (err)
			FAIL("moving migrant %d: %s", migrants[i], strerror(-err));
	}
	err = interval_set(root, 20);
	if (err)
		FAIL("setting the interval to 20 ms: %s", strerror(-err));
	if (mem_on) {
		err = track_interval_set(&tracks[T_MEM], 20);
		if (err)
			FAIL("setting the memory interval to 20 ms: %s", strerror(-err));
	}
	if (io_on) {
		err = track_interval_set(&tracks[T_IO], 20);
		if (err)
			FAIL("setting the io interval to 20 ms: %s", strerror(-err));
	}

	for (i = 0; i < NR_ROLES; i++) {
		uintptr_t arg = roles[i].fn == churn ? (uintptr_t)nchurn++ : (uintptr_t)(i + 1) << 20;

		if (roles[i].on && !*roles[i].on)
			continue;
		err = pthread_create(&th[nr_threads], NULL, roles[i].fn, (void *)arg);
		if (err) {
			FAIL("pthread_create %s: %s", roles[i].name, strerror(err));
			atomic_store(&stopping, true);
			while (nr_threads-- > 0)
				pthread_join(th[nr_threads], NULL);
			teardown();
			return EXIT_FAIL;
		}
		nr_threads++;
	}
	end = t_start + seconds * NSEC_PER_SEC;
	next_note = t_start + 30 * NSEC_PER_SEC;
	while (running() && now_ns() < end) {
		sleep_ms(200);
		if (now_ns() < next_note)
			continue;
		next_note += 30 * NSEC_PER_SEC;
		printf("cgstress: %.0f s: %lu mkdir, %lu rmdir, %lu stream reads, %lu snapshots, "
			       "%lu wake-ups, %ld failures\n", elapsed(),
			       atomic_load(&counters[C_mkdir]), atomic_load(&counters[C_rmdir]),
			       atomic_load(&counters[C_stream_reads_large]) +
			       atomic_load(&counters[C_stream_reads_small]),
			       atomic_load(&counters[C_subtree_snapshots]),
			       atomic_load(&counters[C_poll_wakes]) + atomic_load(&counters[C_epoll_wakes]) +
			       atomic_load(&counters[C_uring_oneshot_wakes]) +
			       atomic_load(&counters[C_uring_multishot_wakes]),
			       atomic_load(&failures));
		if (mem_on)
			printf("cgstress: %.0f s: memory: %lu stream reads, %lu snapshots, %lu wake-ups, "
			       "%lu memory.stat reads, %lu flushes\n", elapsed(),
			       atomic_load(&counters[C_mem_stream_reads_large]) +
			       atomic_load(&counters[C_mem_stream_reads_small]),
			       atomic_load(&counters[C_mem_subtree_snapshots]),
			       atomic_load(&counters[C_mem_wakes]),
			       atomic_load(&counters[C_memstat_reads]),
			       atomic_load(&counters[C_mem_flushes_seen]));
		if (io_on)
			printf("cgstress: %.0f s: io: %lu stream reads, %lu snapshots, %lu wake-ups, "
			       "%lu io.stat reads, %lu flushes, %lu counter rises, %lu loop removals\n",
			       elapsed(), atomic_load(&counters[C_io_stream_reads_large]) +
			       atomic_load(&counters[C_io_stream_reads_small]),
			       atomic_load(&counters[C_io_subtree_snapshots]),
			       atomic_load(&counters[C_io_wakes]),
			       atomic_load(&counters[C_iostat_reads]),
			       atomic_load(&counters[C_io_flushes_seen]),
			       atomic_load(&counters[C_io_counter_rises]),
			       atomic_load(&counters[C_loop_removals]));
	}
	if (stop_signal)
		FAIL("interrupted by a signal after %.1f s", elapsed());
	atomic_store(&stopping, true);
	for (i = 0; i < nr_threads; i++)
		pthread_join(th[i], NULL);
	teardown();
	if (mstats) {
		atomic_store(&counters[C_mem_maps], atomic_load(&mstats->maps));
		atomic_store(&counters[C_mem_touches], atomic_load(&mstats->touches));
		atomic_store(&counters[C_mem_dontneeds], atomic_load(&mstats->dontneeds));
		atomic_store(&counters[C_mem_unmaps], atomic_load(&mstats->unmaps));
		atomic_store(&counters[C_mem_memfd_fills], atomic_load(&mstats->memfd_fills));
		atomic_store(&counters[C_mem_memfd_closes], atomic_load(&mstats->memfd_closes));
		atomic_store(&counters[C_mem_touched_mib],
			     atomic_load(&mstats->touched_pages) * sysconf(_SC_PAGESIZE) >> 20);
	}
	if (iostats) {
		atomic_store(&counters[C_io_writes], atomic_load(&iostats->writes));
		atomic_store(&counters[C_io_reads], atomic_load(&iostats->reads));
		atomic_store(&counters[C_io_kib], atomic_load(&iostats->kib));
		atomic_store(&counters[C_io_errors], atomic_load(&iostats->errors));
		/* on a device that was ready and no migrant's to remove meanwhile */
		if (atomic_load(&iostats->errors))
			FAIL("%lu O_DIRECT opens, reads or writes of the loop devices failed, the "
			     "first on loop%d with %s", atomic_load(&iostats->errors),
			     loops[atomic_load(&iostats->first_error_loop)].index,
			     strerror(atomic_load(&iostats->first_errno)));
		/* the I/O must show: top's counters, at least, rise as the migrants work */
		if (seconds >= 30 && atomic_load(&iostats->kib) &&
		    !atomic_load(&counters[C_io_cgroup_counter_rises]))
			FAIL("%lu KiB of I/O in %ld s, yet no io counter of a cgroup below the root "
			     "ever rose between two reads", atomic_load(&iostats->kib), seconds);
	}

	printf("cgstress: ran %.1f s, seed %#llx\n", elapsed(), (unsigned long long)seed);
	for (i = 0; i < C_NR; i++)
		printf("count %s %lu\n", counter_names[i], atomic_load(&counters[i]));
	printf("count max_rmdir_usec %ld\n", atomic_load(&max_rmdir_ns) / 1000);
	printf("count max_read_usec %ld\n", atomic_load(&max_read_ns) / 1000);
	if (atomic_load(&failures)) {
		for (i = 0; i < atomic_load(&nr_first_failures); i++)
			printf("cgstress: failure %d: %s\n", i + 1, first_failures[i]);
		printf("cgstress: FAIL: %ld invariant violations (the first %ld printed above)\n",
		       atomic_load(&failures), max_failures);
		return EXIT_FAIL;
	}
	printf("cgstress: PASS\n");
	return EXIT_PASS;
}
