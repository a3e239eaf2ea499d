/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What cgstress's parts share: cgstress.c (the roles, the readers and
 * their checks, knowing no controller), ctrls.c (the table: a row per
 * controller) and cases.c (the cases of the format-2 kernel's newer
 * promises: changes, REMOVED accounting, pinning, the unprivileged
 * reader, fd storms).  The functions' comments are at their definitions.
 */
#ifndef CGSTRESS_H
#define CGSTRESS_H

#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <liburing.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* how long a due wake-up (publication, stop, removal) may take to reach a poller */
#define WAKE_MARGIN_NS		(1 * NSEC_PER_SEC)
/*
 * An rmdir must return within this: rmdir never waits for stream readers
 * (SPEC).  What it catches is rmdir held up far longer than a slow kernel
 * takes, which the hung-task detector only sees after minutes: removing a
 * memory and io cgroup took up to 1.21 s on the lockdep kernel under TCG.
 */
#define RMDIR_LIMIT_NS		(2 * NSEC_PER_SEC)
/* a removed cgroup's storm of files must all report EPOLLERR within this */
#define STORM_HANG_NS		(60 * NSEC_PER_SEC)
/* the pin area's dying cgroups must be freed within this once the churn stops */
#define DYING_DRAIN_NS		(20 * NSEC_PER_SEC)
/*
 * --slow N: the kernel runs about N times slower than the lockdep test
 * kernel (KASAN and KCSAN under TCG: 3), and the bounds above, which are
 * about the kernel's speed, are N times longer.
 */
extern int64_t slow;
#define POLL_TIMEOUT_MS		1500
#define FILES_PER_READER	10
#define NR_CHURN		3
#define NR_POLL_READERS		2
#define NR_MIGRANTS		4
#define NR_BURNERS		2
#define MAX_CHAIN		8
#define NR_FIXED		7
#define MAX_CGS			(NR_FIXED + NR_CHURN * MAX_CHAIN)
#define BIG_BUF			(1 << 20)
#define MAX_STOPS		100000
/* the values of a cgroup the table calls monotone, at most */
#define MONO_MAX		16
#define TEXT_MAX		65536
/* what one migrant holds at most: anonymous memory and a memfd's pages */
#define MIGRANT_ANON_MAX_MB	8
#define MIGRANT_MEMFD_MAX_MB	2
/* the loop devices the migrants do I/O on; the last one is removed and re-created */
#define NR_LOOPS		2
#define LOOP_BACKING_MB		8
/* one O_DIRECT read or write: 64 to 512 KiB */
#define IO_MIN_KB		64
#define IO_MAX_KB		512
/* /dev/loop-control, for a node of our own where /dev has none */
#define LOOP_CTRL_MISC_MINOR	237
/* files the pinning reader keeps open at most */
#define PIN_MAX			48
/* cgroups cgstress may make in a run (the shared table of them) */
#define DIRS_CAP		(1 << 17)
#define NOBODY			65534

#define EPOCH_UNSTABLE	UINT64_MAX
#define EPOCH_LOG	65536
/* ------------------------------------------------------------------ */
/* counters, failures                                                   */

/* of the whole run */
#define COUNTERS(X)							\
	X(mkdir) X(rmdir) X(rmdir_ebusy) X(private_dirs) X(limits_set)	\
	X(migrations) X(migrations_to_removed) X(opens_of_removed) X(closes) \
	X(poll_wakes) X(epoll_wakes) X(uring_oneshot_wakes) X(uring_multishot_wakes) \
	X(stale_pri_events) X(stale_in_events) X(err_wakes) X(uring_einval_removed) X(enodev_reads) \
	X(poll_timeouts) X(quick_opens) X(quick_unread_closes)			\
	X(epoch_skips) X(foreign_removed)				\
	X(acct_rounds) X(acct_children) X(acct_removed) X(acct_checks_quiet) \
	X(acct_checks_busy) X(acct_skips_later) X(acct_waits_timed_out) X(acct_lost)	\
	X(pins) X(pins_area) X(pin_resumes) X(pin_resumed_gone)		\
	X(storms) X(storm_fds) X(storm_err_events) X(noperm_snapshots) X(noperm_records) \
	X(mem_maps) X(mem_touches) X(mem_dontneeds) X(mem_unmaps)	\
	X(mem_memfd_fills) X(mem_memfd_closes) X(mem_touched_pages)	\
	X(io_writes) X(io_reads) X(io_kib) X(io_errors) X(io_stat_unknown_lines) \
	X(contended_bursts)						\
	X(loop_removals) X(loop_recreates) X(loop_autoloaded) X(loop_busy)

/* of each controller's stream: "count <ctrl>_<name>" */
#define CTRL_COUNTERS(X)						\
	X(subtree_control) X(text_opens) X(subtree_opens)		\
	X(text_reads) X(text_reads_small) X(enodata_new)		\
	X(snapshots) X(change_snapshots) X(records) X(removed_records)	\
	X(new_records) X(later_records) X(partial_records) X(devices)	\
	X(small_buf_einval) X(bad_offset_einval) X(next_record_einval)	\
	X(einval_checked) X(stopped_snapshots) X(lost_snapshots)	\
	X(wakes) X(pri_wakes) X(gone)					\
	X(interval_valid) X(interval_min) X(interval_zero) X(interval_invalid) \
	X(interval_empty) X(interval_reads) X(stop_checks)		\
	X(classic_reads) X(publications_seen) X(rises) X(cgroup_rises)	\
	X(change_compared) X(change_skipped) X(change_removed_between)	\
	X(change_later) X(change_new_between) X(pins)				\
	X(storm_fds) X(disarm_checks) X(limited)

#define X(n) C_##n,
enum counter { COUNTERS(X) C_NR };
#undef X
#define X(n) CC_##n,
enum ctrl_counter { CTRL_COUNTERS(X) CC_NR };
#undef X
extern atomic_ulong *counters;	/* shared with the forked processes */
#define COUNT_N(c, n) atomic_fetch_add_explicit(&counters[C_##c], (n), memory_order_relaxed)
#define COUNT(c) COUNT_N(c, 1)
#define CCOUNT_N(ctl, c, n) \
	atomic_fetch_add_explicit(&(ctl)->cnt[CC_##c], (n), memory_order_relaxed)
#define CCOUNT(ctl, c) CCOUNT_N(ctl, c, 1)
#define CVAL(ctl, c) atomic_load(&(ctl)->cnt[CC_##c])

#define FAIL(...) report_failure(__func__, __VA_ARGS__)
void __attribute__((format(printf, 2, 3))) report_failure(const char *where, const char *fmt, ...);

/* ------------------------------------------------------------------ */
/* types                                                                */

/* a cgroup as a reader picked it (a copy of a registry entry) */
struct cg_pick {
	char path[PATH_MAX];
	uint64_t id;
	int slot;
	unsigned int on;	/* 1 << row: that controller is on for it (fixed for life) */
	bool known;		/* @on is known (not the root's) */
	bool under_top;
	int64_t t_created;	/* when its mkdir returned (0: before any publication) */
};

struct migrant;
struct ctrl;

struct mon_entry {
	int64_t t_end;		/* the read returned then */
	uint64_t seq;		/* highest publication_seq read up to then */
	uint64_t time_usec;	/* its time */
};

/* the k-th stop of a stream: the write of 0, then the write that restarted it */
enum { STOP_BEGIN, STOP_DONE, RESTART_BEGIN, RESTART_DONE, STOP_NR };

struct ctrl {
	/* the table */
	const char *name;		/* the stream's: messages, counters, --no-<name> */
	/* its files: "<stem>.stream", "<stem>.stream.subtree", "<stem>.stream_interval" */
	const char *stem;
	/* in cgroup.subtree_control; NULL: no controller, its files are cgroup core files */
	const char *controller;
	unsigned int id;		/* CGROUP_STAT_CTRL_* */
	bool files_need_controller;	/* its files exist only where it is on */
	/*
	 * a cgroup may turn its values off (cgroup.pressure 0): none in its
	 * text and records then.  cgstress never does; a cgroup not its own may.
	 */
	bool can_be_off;
	/* the classic file(s) of the values it streams, as messages name them */
	const char *classic;
	/*
	 * the classic values of cgroup @cg as text @parse takes, into @buf
	 * (NUL-terminated): its length, or -errno; NULL: the file @classic
	 */
	ssize_t (*read_classic)(const struct ctrl *c, const char *cg, char *buf, size_t len);
	/*
	 * its lines of a text (@classic: as read_classic() gives them) into
	 * @s: 0, or -EINVAL with why (160 bytes); NULL: parse_stat_text()
	 */
	int (*parse)(const struct ctrl *c, const char *text, size_t len, bool classic,
		     struct stat_values *s, char *why);
	/* the values of a device (io.stat's keys, an oracle of our own); NULL: no devices */
	const char *const *device_names;
	/* cgroup values that never go back */
	bool (*monotone)(const char *name);
	/*
	 * the names of its values, from the classic files of a cgroup @with
	 * every controller and one @without any; its load's setup
	 */
	int (*setup)(struct ctrl *c, const char *with, const char *without);
	void (*teardown)(struct ctrl *c);
	/* one step of its load in a migrant, with this probability; a thread of its load's */
	void (*load)(struct rng *r, struct migrant *m);
	unsigned int load_pct;
	void *(*load_thread)(void *arg);
	/* a limit written to some of the churned cgroups where it is on, a value it moves */
	const char *limit_file, *const *limits, *limit_value;
	/* a value whose parent's = the sum of its children's (REMOVED accounting) */
	const char *acct_value;

	/* found at setup */
	bool on;
	char *names[SCHEMA_NAMES_MAX];	/* a cgroup's values: the SCHEMA's names */
	unsigned int nr_names;
	unsigned int nr_text;		/* of them, the text file's */
	unsigned int nr_short;		/* where the controller is off (cpu: no bandwidth), else 0 */
	unsigned int nr_device_names;
	int mono[MONO_MAX];		/* indexes of the monotone values */
	unsigned int nr_mono;
	int acct_idx, limit_idx;
	long interval_saved;		/* to restore at the end; -1: not read, nothing to restore */
	bool enabled_by_us;		/* +<controller> in the root's subtree_control */
	atomic_uint schema_size;	/* of the SCHEMA record, once seen */

	/* the monitor's timeline, the interval writer's stops */
	struct mon_entry *mon_log;
	size_t mon_nr, mon_cap;
	pthread_mutex_t mon_lock;
	int64_t (*stop_t)[STOP_NR];	/* MAX_STOPS */
	atomic_long stops[STOP_NR];	/* of each, published */

	atomic_ulong cnt[CC_NR];
};

struct dir {
	_Atomic uint64_t id;		/* written last */
	uint64_t parent;		/* its parent's id (top's: the root's) */
	int64_t t_created;		/* when its mkdir returned */
	int64_t t_private;		/* 0700 since then (0: 0755) */
	unsigned int on;		/* its controllers */
	_Atomic int64_t t_rm_start;	/* its rmdir started then (0: not) */
	_Atomic int64_t t_rm_done;	/* and returned */
	atomic_bool enodev;		/* an ENODEV or EPOLLERR was seen for it */
};

struct shared {
	atomic_bool stop;		/* the unprivileged reader's */
	atomic_long child_failures;
	/* cg_mkdir() calls between their mkdir and their entry in dirs */
	atomic_long mkdir_inflight;
	struct dir dirs[DIRS_CAP];
};
/* a cgroup under top a role has to itself */
struct area {
	char path[PATH_MAX];
	uint64_t id;
	unsigned int on;	/* its children's controllers */
};
enum cg_state { CG_FREE, CG_LIVE, CG_REMOVING };

struct cg {
	struct cg_pick p;
	enum cg_state state;
	bool leaf;		/* may hold processes */
};

/* last values of one cgroup (@dev 0) or one of its devices (major:minor + 1) in one open file */
struct idmap_entry {
	uint64_t id, dev;
	uint64_t snap;		/* the snapshot it was last listed in */
	uint64_t removed_snap;	/* the snapshot whose REMOVED record named it, 0: none */
	uint64_t epoch;		/* a device's loop epoch then */
	bool have, later;
	uint64_t v[MONO_MAX];
	struct cgroup_stat_cgroup *rec;	/* a change reader's state: its record */
};
struct idmap {
	struct idmap_entry *e;
	size_t cap, nr;
};

/* what a snapshot's reader learns from its records: the change and accounting readers */
struct snap_hook {
	void (*rec)(void *arg, const struct snap_decoder *d, const struct snap_rec *r);
	void (*done)(void *arg, const struct snap_decoder *d);	/* a complete snapshot */
	void (*abandon)(void *arg);
	void *arg;
};

struct sfile {
	int fd;			/* -1: unused */
	struct ctrl *c;
	bool subtree;
	struct cg_pick cg;
	int64_t t_open;		/* before open() */
	int64_t t_read_end;	/* when the last successful read (or the open) returned */
	long stops_ref;		/* stops done before the last read (or the open) */
	uint64_t wakes;		/* POLLIN wake-ups, each followed by a successful read */
	bool have_seq;
	uint64_t seq_last;	/* publication_seq of the last read */
	uint64_t seq_max, skipped_last, time_last;
	struct idmap ids;	/* per cgroup and device */
	uint64_t snaps;		/* snapshots started */
	uint64_t complete_seq;	/* of the last snapshot read to its end, 0: none yet */
	bool abandoned;		/* a snapshot left unfinished: its REMOVED records come again */
	bool gone;		/* ENODEV/EPOLLERR seen: removed */
	bool replace;		/* ENODATA: nothing to read yet, a new file instead */
	const char *via;	/* how it is waited on */
	struct snap_hook *hook;
	/* io_uring */
	uint32_t gen;
	bool armed, multishot;
	/* epoll */
	bool edge;
};

struct reader {
	struct rng rng;
	char *buf;		/* BIG_BUF, 8-byte aligned */
	struct stat_values *sample;
	struct sfile f[FILES_PER_READER];
};

/* what a role's thread gets: its controller (per-controller roles) and its own seed */
struct role_arg {
	struct ctrl *c;
	uint64_t seed;
	int idx;
	int param;		/* the role's */
};

struct loopdev {
	int index;		/* loop<index> */
	unsigned int major, minor;
	char node[PATH_MAX];	/* its block device node, ours */
	int backing_fd;		/* its backing file on our tmpfs */
	bool bound;		/* configured by us: cleared and removed at the end */
	int64_t epoch_t[EPOCH_LOG];	/* when epoch i + 1 began */
	atomic_ulong epoch;
};

/*
 * What the migrants did, counted where this process can read it
 * (MAP_SHARED, made before the fork); the loop devices as they see them:
 * a migrant counts itself in @users, then uses the device only if it is
 * still @ready; the loop cycler clears @ready, then waits for @users to
 * drop to 0 before it removes the device.
 */
struct load_stats {
	struct {
		atomic_int users, ready;
	} loop[NR_LOOPS];
	atomic_int first_errno, first_error_loop;
};
struct migrant {
	size_t page;
	char *anon;		/* at most MIGRANT_ANON_MAX_MB */
	size_t anon_len;
	int memfd;		/* at most MIGRANT_MEMFD_MAX_MB */
	void *io_buf;
};

#define FFAIL(f, fmt, ...) FAIL("%s/%s: " fmt, (f)->cg.path, file_name((f)->c, (f)->subtree), \
				##__VA_ARGS__)

extern struct loopdev loops[NR_LOOPS];

/* the table (ctrls.c): its rows, those stressed */
#define CTRLS_MAX		8
extern struct ctrl ctrls[];
extern const int nr_ctrls;
#define for_each_ctrl(c)	for (struct ctrl *c = ctrls; c < ctrls + nr_ctrls; c++) if (c->on)
#define CTRL_BIT(c)		(1u << ((c) - ctrls))

/* cgstress.c */
extern long storm_fds;
extern int64_t t_start;
extern uint64_t seed;
extern atomic_long *child_failures;
extern bool in_child;
extern struct shared *sh;
extern char top[PATH_MAX];
extern uint64_t root_id, top_id;
extern struct area pool, pin_area, acct_area, storm_area;
extern struct area park;
extern struct cg cgs[MAX_CGS];
extern atomic_ulong rm_starts, rm_ends;
void note_max(atomic_long *m, long v);
bool running(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
const char *file_name(const struct ctrl *c, bool subtree);
ssize_t classic_text(const struct ctrl *c, const char *cg, char *buf, size_t len);
void ctrl_file(char *out, size_t len, const char *cg, const struct ctrl *c, bool subtree);
bool has_files(const struct ctrl *c, const struct cg_pick *cg);
struct ctrl *pick_ctrl(struct rng *r);
struct dir *dir_find(uint64_t id);
uint64_t cg_mkdir(const char *path, uint64_t parent, unsigned int on, bool private);
unsigned int enable_children(const char *cg, unsigned int on);
bool pick_cg(struct rng *r, bool leaf, bool removing_too, const struct ctrl *c,
	     struct cg_pick *out);
void rm_start(uint64_t id);
void rm_done(uint64_t id);
bool rm_started(uint64_t id, int64_t *t_done, bool enodev);
int timed_rmdir(const char *path, int64_t limit);
bool wait_publication_after(struct ctrl *c, int64_t t, int64_t timeout_ns);
int64_t seq_now(struct ctrl *c);
int parse_body(const struct ctrl *c, const char *text, size_t len, bool classic, int want,
	       struct stat_values *s, char *why);
struct idmap_entry *idmap_get(struct idmap *m, uint64_t id, uint64_t dev, bool make);
void idmap_del(struct idmap *m, uint64_t id);
void idmap_clear(struct idmap *m);
bool pick_for(struct rng *r, struct ctrl *c, int slot, struct cg_pick *cg);
int file_open(struct sfile *f, struct ctrl *c, bool subtree, const struct cg_pick *cg);
void file_close(struct sfile *f);
int read_snapshot(struct reader *rd, struct sfile *f, bool changes);
void reader_init(struct reader *rd, uint64_t rng_seed_value);
void reader_fini(struct reader *rd);
int move_pid(const char *cg, pid_t pid);
void remove_ours(const char *path, uint64_t id);

/* ctrls.c */
extern int nr_loops;
extern struct load_stats *ls;
uint64_t dev_epoch(uint32_t major, uint32_t minor, int64_t from);

/* cases.c */
extern pid_t burners[NR_BURNERS];
extern atomic_long max_storm_rmdir_ns;
extern pid_t noperm_pid;
void burner_main(void);
void *changes_reader(void *arg);
void *accounting(void *arg);
void *pinner(void *arg);
void pins_check(void);
void *stormer(void *arg);
void storm_measure(void);
void noperm_main(void);

#endif
