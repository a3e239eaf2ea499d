/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgstream: read cgroup v2 CPU statistics once per kernel flush.
 *
 * On a kernel with cpu.stat.stream the library polls the stream files and
 * reads what the kernel already flushed; elsewhere it emulates the stream
 * with a timer and reads of cpu.stat ("fallback" mode) behind the same API.
 *
 * All functions return 0 (or a count) on success and a negative errno on
 * failure; they never print and never exit.  Output arguments are written
 * only on success.
 *
 * Threads: an object (struct cgstream, cgstream_group, cgstream_tree) is
 * not locked; use each one from one thread at a time (different objects
 * from different threads at once are fine).  The functions that take no
 * object (cgstream_parse, cgstream_records_next, cgstream_sample_field,
 * cgstream_resolve_path, cgstream_get_interval, cgstream_set_interval,
 * cgstream_mode_name, cgstream_version) are safe to call from any thread.  The library installs no signal handlers and
 * starts no threads (io_uring's kernel workers are the kernel's).
 *
 * ABI: structs that may grow only grow at the end.  The calls that fill a
 * struct the caller provides take its size (sizeof as the caller's header
 * has it): a smaller size from an older header gets the common prefix,
 * and @present never names a field beyond it; a size below the 1.0 struct
 * is -EINVAL.  Arrays of events are strided by the caller's size.
 */
#ifndef CGSTREAM_H
#define CGSTREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGSTREAM_VERSION_MAJOR 1
#define CGSTREAM_VERSION_MINOR 1

enum cgstream_mode {
	CGSTREAM_MODE_AUTO = 0,		/* kernel when available, else fallback */
	CGSTREAM_MODE_KERNEL = 1,	/* cpu.stat.stream; -EOPNOTSUPP without it */
	CGSTREAM_MODE_FALLBACK = 2,	/* timer + cpu.stat, on any kernel */
	CGSTREAM_MODE_SUBTREE = 3,	/* a tree through cpu.stat.stream.subtree */
};

/* bits of cgstream_sample.present: which fields the kernel reported */
enum cgstream_field {
	CGSTREAM_F_SEQ			= 1u << 0,
	CGSTREAM_F_FLUSH_TIME		= 1u << 1,
	CGSTREAM_F_USAGE		= 1u << 2,
	CGSTREAM_F_USER			= 1u << 3,
	CGSTREAM_F_SYSTEM		= 1u << 4,
	CGSTREAM_F_NICE			= 1u << 5,
	CGSTREAM_F_NR_PERIODS		= 1u << 6,
	CGSTREAM_F_NR_THROTTLED		= 1u << 7,
	CGSTREAM_F_THROTTLED		= 1u << 8,
	CGSTREAM_F_NR_BURSTS		= 1u << 9,
	CGSTREAM_F_BURST		= 1u << 10,
	CGSTREAM_F_FLUSH_MISSED		= 1u << 11,
	CGSTREAM_F_CGROUP_ID		= 1u << 12,	/* since 1.1 */
};

/*
 * One sample: a cgroup's cpu.stat as of one flush.  A field whose bit is
 * not in @present was not in the file and is 0.  In fallback mode @seq is
 * the library's own cycle count and @flush_time_usec the CLOCK_MONOTONIC
 * time of its read.  @cgroup_id is the inode number of the cgroup's
 * directory (the kernel's cgroup id): a cgroup removed and created again
 * under the same path gets a new one.
 */
struct cgstream_sample {
	uint64_t present;		/* CGSTREAM_F_* */
	uint64_t seq;			/* flush_seq */
	uint64_t flush_time_usec;	/* flush_time_usec, CLOCK_MONOTONIC */
	uint64_t usage_usec;
	uint64_t user_usec;
	uint64_t system_usec;
	uint64_t nice_usec;
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_usec;
	uint64_t nr_bursts;
	uint64_t burst_usec;
	uint64_t flush_missed;		/* cycles the kernel skipped, total */
	uint64_t cgroup_id;		/* since 1.1: CGSTREAM_F_CGROUP_ID */
};

/* Options; may grow: set .sz = sizeof(struct cgstream_opts), zero the rest. */
struct cgstream_opts {
	size_t sz;
	int mode;			/* enum cgstream_mode */
	uint32_t fallback_interval_ms;	/* 0: the kernel's interval if set, else 1000 */
	const char *cgroup_root;	/* NULL: the cgroup2 mount from mountinfo */
};

/* --- one cgroup --- */
struct cgstream;

/*
 * @cgroup: absolute path ("/sys/fs/cgroup/a/b") or relative to the cgroup2
 * mount ("a/b", "/a/b" when not under the mount, "" or "/" for the root).
 * -ENOENT: no such cgroup; -EACCES: no permission; -EOPNOTSUPP: kernel
 * mode asked for and the kernel has no cpu.stat.stream; -ENODEV: no
 * cgroup2 mount; -EINVAL: mode SUBTREE (a tree's mode).
 */
int cgstream_open(const char *cgroup, const struct cgstream_opts *opts,
		  struct cgstream **ret);
void cgstream_close(struct cgstream *st);
/* pollable fd: readable when a new sample can be read */
int cgstream_fd(const struct cgstream *st);
/* CGSTREAM_MODE_KERNEL or CGSTREAM_MODE_FALLBACK */
int cgstream_mode(const struct cgstream *st);
/* canonical absolute path of the cgroup */
const char *cgstream_path(const struct cgstream *st);
/* 1: a sample is ready, 0: timeout, -errno; timeout_ms < 0 waits forever */
int cgstream_wait(struct cgstream *st, int timeout_ms);
/*
 * Non-blocking: 0 and a sample from a cycle not returned before, -EAGAIN
 * when there is none yet, -ENODEV once the cgroup is removed.
 * @sample_size: sizeof(struct cgstream_sample) as the caller knows it.
 */
int cgstream_read(struct cgstream *st, struct cgstream_sample *sample,
		  size_t sample_size);

/*
 * --- many cgroups the caller names, one batch per cycle ---
 *
 * Kernel mode reads every member's stream once per flush.  Fallback mode
 * reads every member's cpu.stat once per tick, through io_uring where it
 * can be set up: the reads then run in the kernel's workers, never in the
 * caller's process call, and the fd is readable at the tick (the call
 * queues the reads and returns 0) and when the batch is ready.  Where
 * io_uring is refused (kernel.io_uring_disabled, seccomp, or
 * $CGSTREAM_NO_IO_URING set to anything but "0") the process call reads
 * with plain syscalls, at most ~10 ms per call, and the fd stays readable
 * until the batch is complete.  A removed cgroup is reported in the next
 * cycle's batch.  Adding, removing and looking up cost O(1) whatever the
 * group's size.
 */
struct cgstream_group;

enum cgstream_event_type {
	CGSTREAM_EVENT_SAMPLE = 1,	/* .sample is valid */
	CGSTREAM_EVENT_REMOVED = 2,	/* cgroup is gone; dropped from the group */
	CGSTREAM_EVENT_ERROR = 3,	/* .error = -errno; dropped from the group */
	CGSTREAM_EVENT_ADDED = 4,	/* since 1.1: a cgroup appeared in a tree */
};

/*
 * For ADDED, REMOVED and ERROR events .sample holds only the cgroup's id
 * (.sample.present == CGSTREAM_F_CGROUP_ID) and .path its path.
 */
struct cgstream_event {
	int type;			/* enum cgstream_event_type */
	int error;
	const char *path;		/* valid until the next process call */
	void *userdata;			/* as given to cgstream_group_add() */
	struct cgstream_sample sample;
	uint64_t parent_id;		/* since 1.1: tree: the parent's id (0 for
					 * the tree's root); group: 0 */
};

int cgstream_group_new(const struct cgstream_opts *opts,
		       struct cgstream_group **ret);
void cgstream_group_free(struct cgstream_group *g);
/* -EEXIST when already watched, errors as cgstream_open() */
int cgstream_group_add(struct cgstream_group *g, const char *cgroup,
		       void *userdata);
/* -ENOENT when not watched */
int cgstream_group_remove(struct cgstream_group *g, const char *cgroup);
/* number of cgroups watched */
size_t cgstream_group_size(const struct cgstream_group *g);
int cgstream_group_fd(const struct cgstream_group *g);
int cgstream_group_mode(const struct cgstream_group *g);
/* 1: events are ready, 0: timeout, -errno */
int cgstream_group_wait(struct cgstream_group *g, int timeout_ms);
/*
 * Non-blocking: fill up to @max events of one cycle's batch (REMOVED and
 * ERROR events first, then one SAMPLE per cgroup read in that cycle) and
 * return how many; when the batch is larger than @max the rest comes from
 * the next calls, before any new cycle.  0 when there is nothing new;
 * -errno (with no events) once the group cannot tick any more (its timer
 * or the root's stream failed).
 * @event_size: sizeof(struct cgstream_event) as the caller knows it.
 */
int cgstream_group_process(struct cgstream_group *g,
			   struct cgstream_event *events, size_t max,
			   size_t event_size);

/*
 * --- a whole subtree, one batch per cycle (since 1.1) ---
 *
 * A tree watches a cgroup and every cgroup below it, those that appear
 * while it is watched included.  Its mode (opts.mode):
 *  SUBTREE   cpu.stat.stream.subtree: one read per cycle, whatever the
 *            number of cgroups; -EOPNOTSUPP on a kernel without it;
 *  KERNEL    each cgroup's cpu.stat.stream, new cgroups found through
 *            inotify (or a walk of the directories each cycle);
 *  FALLBACK  a timer and each cgroup's cpu.stat (io_uring or plain
 *            syscalls, as the group);
 *  AUTO      the first of these the kernel has.
 * KERNEL and FALLBACK hold an fd per cgroup (RLIMIT_NOFILE); one that
 * cannot be opened gets an ERROR event and is tried again each cycle.
 * Paths come from the directories: a cgroup's id is its directory's inode
 * number (d_ino), so ids become paths by reading only the directory of
 * the parent of an id not seen before.
 */
struct cgstream_tree;

/* @cgroup as for cgstream_open(); errors as cgstream_open() */
int cgstream_tree_open(const char *cgroup, const struct cgstream_opts *opts,
		       struct cgstream_tree **ret);
void cgstream_tree_close(struct cgstream_tree *t);
/* pollable: readable once per cycle (fallback with io_uring: also at the
 * tick), and while a batch is not all handed out */
int cgstream_tree_fd(const struct cgstream_tree *t);
/* CGSTREAM_MODE_SUBTREE, _KERNEL or _FALLBACK */
int cgstream_tree_mode(const struct cgstream_tree *t);
/* canonical absolute path of the tree's root */
const char *cgstream_tree_path(const struct cgstream_tree *t);
/* cgroups the tree knows now */
size_t cgstream_tree_size(const struct cgstream_tree *t);
/* 1: events are ready, 0: timeout, -errno; timeout_ms < 0 waits forever */
int cgstream_tree_wait(struct cgstream_tree *t, int timeout_ms);
/*
 * Non-blocking.  Hands back the current cycle's batch: REMOVED for
 * cgroups gone since the last cycle (and ERROR for those that cannot be
 * read), ADDED for cgroups seen for the first time, then a SAMPLE for
 * every cgroup of the subtree (a cgroup removed and created again under
 * the same path: REMOVED with the old id, ADDED with the new).  Parents
 * are ADDED before their children.  Returns the number of events written
 * (<= @max); when the batch is larger than @max the rest comes from the
 * next calls, before any new cycle; 0 when there is nothing new; -errno
 * when the tree cannot go on (-ENODEV: its root cgroup was removed, told
 * after the batch with a REMOVED event for it).  .path is valid until the
 * next process call; .userdata is NULL; .parent_id names the parent.
 * @event_size: sizeof(struct cgstream_event) as the caller knows it.
 */
int cgstream_tree_process(struct cgstream_tree *t, struct cgstream_event *events,
			  size_t max, size_t event_size);

/*
 * --- the kernel's binary records (since 1.2) ---
 *
 * cpu.stat.stream.subtree returns whole records, host byte order, each
 * starting with a 16-bit size and a 16-bit type; a reader steps by the
 * size and skips types it does not know.  The tree reads them for you;
 * these calls are for readers of the file itself.
 */
enum cgstream_record_type {
	CGSTREAM_RECORD_CPU = 1,	/* a cgroup's cpu.stat: .sample */
};

struct cgstream_record {
	uint32_t size;			/* bytes of this record in the buffer */
	uint32_t type;			/* the kernel's record type */
	uint32_t flags;			/* the kernel's record flags */
	uint32_t decoded;		/* 1: a type this library decodes (the
					 * fields below); 0: stepped over */
	uint64_t cgroup_id;		/* the cgroup's id (its directory's inode) */
	uint64_t parent_id;		/* the parent's; 0 for the opened cgroup */
	const void *data;		/* the record's bytes, within the buffer */
	struct cgstream_sample sample;	/* CPU: its values, present bits set;
					 * kept last, as it may grow */
};

/*
 * Decode the record at *@off of @buf[0..@len).  Returns 1 with @rec filled
 * and *@off past the record; 0 at the end (*@off == @len, an empty buffer
 * too); -EBADMSG, *@off unchanged, for bytes that are not a valid record
 * there: fewer than 16 bytes left (a cut header), a size below 16 (no
 * record is shorter) or below its type's first size (112 for CPU), or a
 * size running past @len; -EINVAL for bad arguments (*@off > @len,
 * @rec_size below the 1.2 struct).  A record of a type the library does
 * not know comes back too, with .decoded 0 and only .size, .type, .flags
 * and .data set, so that callers can count what they skip.  Reads only
 * within @buf; @buf need not be aligned.
 * @rec_size: sizeof(struct cgstream_record) as the caller knows it.
 */
int cgstream_records_next(const void *buf, size_t len, size_t *off,
			  struct cgstream_record *rec, size_t rec_size);

/*
 * --- what a sample's fields are (since 1.2) ---
 *
 * For printers and bindings that would rather not list the fields of
 * struct cgstream_sample themselves.
 */
struct cgstream_field_info {
	const char *name;		/* its member in struct cgstream_sample */
	const char *key;		/* its key in cpu.stat(.stream) text;
					 * NULL: not in the text */
	const char *unit;		/* "usec", "count", "seq" or "id" */
	uint64_t bit;			/* CGSTREAM_F_* in .present */
	size_t offset;			/* of its uint64_t in struct cgstream_sample */
};

/*
 * The @i-th field of struct cgstream_sample, in the struct's order (@i
 * from 0; .present is not one): 0, or -ENOENT past the last one.
 * @info_size: sizeof(struct cgstream_field_info) as the caller knows it.
 */
int cgstream_sample_field(unsigned int i, struct cgstream_field_info *info,
			  size_t info_size);

/* --- the kernel's flush interval (root's cpu.stat.stream_interval) --- */
/* -EOPNOTSUPP without the feature */
int cgstream_get_interval(const struct cgstream_opts *opts, uint32_t *ms);
/* 0 turns streaming off; -EINVAL out of range, -EPERM/-EACCES unprivileged */
int cgstream_set_interval(const struct cgstream_opts *opts, uint32_t ms);

/* --- helpers --- */
/* parse cpu.stat / cpu.stat.stream text; unknown keys are skipped */
int cgstream_parse(const char *buf, size_t len,
		   struct cgstream_sample *sample, size_t sample_size);
/* "kernel", "fallback", "auto", "subtree" */
const char *cgstream_mode_name(int mode);
/* since 1.1: the library's version at run time, "MAJOR.MINOR.PATCH" */
const char *cgstream_version(void);
/*
 * Resolve @cgroup the way cgstream_open() does, without opening it, and
 * write its canonical absolute path (NUL-terminated) to @buf.  Returns 0;
 * -EINVAL for a path with a ".." component, -ERANGE when @size is too
 * small, -ENODEV without a cgroup2 mount.  Does not check that it exists.
 */
int cgstream_resolve_path(const char *cgroup, const struct cgstream_opts *opts,
			  char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CGSTREAM_H */
