/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgstream: read cgroup v2 cpu, memory and io statistics once per
 * kernel flush.
 *
 * On a kernel with the stat streams (cpu.stat.stream, memory.stat.stream,
 * io.stat.stream and their .subtree files) the library polls the stream
 * files and reads what the kernel already flushed; elsewhere it emulates
 * the stream with a timer and reads of cpu.stat, memory.stat (with
 * memory.current and memory.events) and io.stat ("fallback" mode) behind
 * the same API.  Each controller has its own mode.
 *
 * All functions return 0 (or a count) on success and a negative errno on
 * failure; they never print and never exit.  Output arguments are written
 * only on success.
 *
 * Threads: an object (struct cgstream, cgstream_group, cgstream_tree) is
 * not locked; use each one from one thread at a time (different objects
 * from different threads at once are fine).  The functions that take no
 * object (cgstream_parse, cgstream_records_next, cgstream_record_value,
 * cgstream_record_device, cgstream_sample_field, cgstream_memory_get,
 * cgstream_resolve_path, the interval calls, cgstream_mode_name,
 * cgstream_controller_name, cgstream_version) are safe to call from any
 * thread.  The library installs no signal handlers and starts no threads
 * (io_uring's kernel workers are the kernel's).
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
#define CGSTREAM_VERSION_MINOR 2

enum cgstream_mode {
	CGSTREAM_MODE_AUTO = 0,		/* kernel when available, else fallback */
	CGSTREAM_MODE_KERNEL = 1,	/* cpu.stat.stream; -EOPNOTSUPP without it */
	CGSTREAM_MODE_FALLBACK = 2,	/* timer + cpu.stat, on any kernel */
	CGSTREAM_MODE_SUBTREE = 3,	/* a tree through cpu.stat.stream.subtree */
};

/*
 * Since 1.2: the controllers an object reads (cgstream_opts.controllers,
 * cgstream_event.controllers).  One bit each; the lead controller of an
 * object is the first it reads in this order (cpu, memory, io).
 */
enum cgstream_controller {
	CGSTREAM_CTRL_CPU		= 1u << 0,
	CGSTREAM_CTRL_MEMORY		= 1u << 1,
	CGSTREAM_CTRL_IO		= 1u << 2,
};
#define CGSTREAM_CTRL_ALL	(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_MEMORY | CGSTREAM_CTRL_IO)

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
	/*
	 * Since 1.2: CGSTREAM_CTRL_*; 0 (and a 1.1 caller's shorter struct):
	 * cpu only.  .mode applies to each controller: AUTO picks the best
	 * each one's kernel files offer (so cpu may stream while memory is
	 * emulated); any other mode must be available for every controller
	 * asked for (-EOPNOTSUPP).  -EINVAL for bits not defined here.
	 */
	uint32_t controllers;
};

/*
 * --- memory and io (since 1.2) ---
 *
 * A cgroup's memory values and io devices as of one flush of that
 * controller.  They are handed out by pointer in struct cgstream_event and
 * stay valid until the object's next process (or read) call.
 */
struct cgstream_memory {
	uint64_t seq;			/* memory's flush_seq (fallback: the
					 * library's cycle count) */
	uint64_t flush_time_usec;	/* CLOCK_MONOTONIC of that flush */
	uint32_t nr;			/* values (and names) */
	uint32_t reserved;
	/*
	 * names[i] labels values[i]: every key memory.stat prints, spelled
	 * and ordered as it prints them, in its units (bytes, counts); then
	 * "current", "swap.current" where the kernel has swap accounting,
	 * and "events." + each key of memory.events.  The names come from
	 * the kernel's KEYS record in subtree mode, from the text elsewhere;
	 * a cgroup without memory.current (the root) has no "current" and
	 * "events.*" but in subtree mode (whose records carry the root
	 * memcg's own counters).
	 */
	const char *const *names;
	const uint64_t *values;
};

struct cgstream_io_device {
	uint32_t major, minor;
	uint64_t rbytes, wbytes, rios, wios, dbytes, dios;
};

struct cgstream_io {
	uint64_t seq;			/* io's flush_seq (fallback: the
					 * library's cycle count) */
	uint64_t flush_time_usec;	/* CLOCK_MONOTONIC of that flush */
	uint32_t nr_devices;
	uint32_t reserved;
	const struct cgstream_io_device *devices;	/* as io.stat lists them */
};

/* 0 and the value named @name; -ENOENT: @m has no such value */
int cgstream_memory_get(const struct cgstream_memory *m, const char *name,
			uint64_t *value);
/* "cpu", "memory", "io" for one CGSTREAM_CTRL_* bit; NULL for anything else */
const char *cgstream_controller_name(unsigned int ctrl);

/* --- one cgroup --- */
struct cgstream;
struct cgstream_event;

/*
 * @cgroup: absolute path ("/sys/fs/cgroup/a/b") or relative to the cgroup2
 * mount ("a/b", "/a/b" when not under the mount, "" or "/" for the root).
 * -ENOENT: no such cgroup; -EACCES: no permission; -EOPNOTSUPP: kernel
 * mode asked for and the kernel has no cpu.stat.stream (or the stream of
 * another controller asked for); -ENOMEDIUM (since 1.2): the cgroup lacks
 * the *.stat file of a controller asked for (the controller is not enabled
 * for it); -ENODEV: no cgroup2 mount; -EINVAL: mode SUBTREE (a tree's
 * mode), bits in .controllers not defined here.
 */
int cgstream_open(const char *cgroup, const struct cgstream_opts *opts,
		  struct cgstream **ret);
void cgstream_close(struct cgstream *st);
/* pollable fd: readable when a new sample can be read */
int cgstream_fd(const struct cgstream *st);
/* CGSTREAM_MODE_KERNEL or CGSTREAM_MODE_FALLBACK (the lead controller's) */
int cgstream_mode(const struct cgstream *st);
/* since 1.2: the mode of one controller (a CGSTREAM_CTRL_* bit) it reads;
 * -ENOENT for a controller it does not read */
int cgstream_ctrl_mode(const struct cgstream *st, unsigned int ctrl);
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
 * Since 1.2: as cgstream_read(), the whole sample of every controller the
 * stream reads as a SAMPLE event; once the cgroup is removed, 0 with a
 * REMOVED event, then -ENODEV.  .memory and .io stay valid until the next
 * read call.
 */
int cgstream_read_event(struct cgstream *st, struct cgstream_event *event,
			size_t event_size);

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
	/*
	 * Since 1.2.  SAMPLE: the controllers it carries (a cgroup that lacks
	 * a controller's *.stat file, because the controller is not enabled
	 * for it, carries no values of it).  .sample holds cpu's values
	 * (with CGSTREAM_CTRL_CPU; otherwise only the cgroup's id), .memory
	 * and .io the others' (NULL without their bit).  Every controller's
	 * values are as of its own latest completed flush when the cycle
	 * read them: a cycle begins at the lead controller's flush (or the
	 * fallback timer).
	 */
	uint32_t controllers;
	uint32_t reserved;
	const struct cgstream_memory *memory;
	const struct cgstream_io *io;
};

int cgstream_group_new(const struct cgstream_opts *opts,
		       struct cgstream_group **ret);
void cgstream_group_free(struct cgstream_group *g);
/*
 * -EEXIST when already watched, errors as cgstream_open(); a cgroup that
 * lacks some of the group's controllers is watched for the others (its
 * events carry no values of them), one that lacks all is -ENOMEDIUM.
 * cgstream_group_new(): -ENOMEDIUM when the cgroup2 root lacks one.
 */
int cgstream_group_add(struct cgstream_group *g, const char *cgroup,
		       void *userdata);
/* -ENOENT when not watched */
int cgstream_group_remove(struct cgstream_group *g, const char *cgroup);
/* number of cgroups watched */
size_t cgstream_group_size(const struct cgstream_group *g);
int cgstream_group_fd(const struct cgstream_group *g);
int cgstream_group_mode(const struct cgstream_group *g);
/* since 1.2: as cgstream_ctrl_mode() */
int cgstream_group_ctrl_mode(const struct cgstream_group *g, unsigned int ctrl);
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
 * Since 1.2 each controller asked for (opts.controllers) gets its own
 * mode, the best its files offer with AUTO (cgstream_tree_ctrl_mode()),
 * and the lead controller's (cgstream_tree_mode()) paces the cycles; in
 * SUBTREE mode each controller's own *.stat.stream.subtree file is read
 * once per cycle.  A cgroup is listed (ADDED) once it has values of a
 * controller the tree reads (with cpu: every cgroup).
 * KERNEL and FALLBACK hold an fd per cgroup and file (RLIMIT_NOFILE: one
 * for cpu, four for memory, one for io); one that cannot be opened gets an
 * ERROR event and is tried again each cycle.
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
/* CGSTREAM_MODE_SUBTREE, _KERNEL or _FALLBACK (the lead controller's) */
int cgstream_tree_mode(const struct cgstream_tree *t);
/* since 1.2: as cgstream_ctrl_mode() */
int cgstream_tree_ctrl_mode(const struct cgstream_tree *t, unsigned int ctrl);
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
 * Since 1.2: begin a cycle now instead of at the next tick, for callers
 * that want values when they need them (an exporter at a scrape) rather
 * than at every flush: the next process calls hand out a batch of every
 * controller as of its latest completed flush.  SUBTREE: one read of each
 * controller's subtree file, no flush; KERNEL: each cgroup's stream
 * files, no flush; FALLBACK: the *.stat files are read now (the kernel
 * flushes as for any read).  The tree's fd still wakes at its ticks; a
 * caller that only syncs need not poll it.  0; -EBUSY while a batch is
 * still being handed out or read; -errno once the tree cannot go on.
 */
int cgstream_tree_sync(struct cgstream_tree *t);

/*
 * --- the kernel's binary records (since 1.2) ---
 *
 * The *.stat.stream.subtree files return whole records, host byte order,
 * each starting with a 16-bit size and a 16-bit type; a reader steps by
 * the size and skips types it does not know.  The tree reads them for
 * you; these calls are for readers of the files themselves.
 */
enum cgstream_record_type {
	CGSTREAM_RECORD_KEYS = 0,	/* names of the values of the records
					 * of type .for_type that follow */
	CGSTREAM_RECORD_CPU = 1,	/* a cgroup's cpu.stat: .sample */
	CGSTREAM_RECORD_MEMORY = 2,	/* a cgroup's memory values */
	CGSTREAM_RECORD_IO = 3,		/* a cgroup's io devices */
};

struct cgstream_record {
	uint32_t size;			/* bytes of this record in the buffer */
	uint32_t type;			/* the kernel's record type */
	uint32_t flags;			/* the kernel's record flags */
	uint32_t decoded;		/* 1: a type this library decodes (the
					 * fields below); 0: stepped over */
	/* CPU, MEMORY, IO: the common header */
	uint64_t cgroup_id;		/* the cgroup's id (its directory's inode) */
	uint64_t parent_id;		/* the parent's; 0 for the opened cgroup */
	uint64_t seq;			/* the flush it is as of */
	uint64_t flush_time_usec;	/* CLOCK_MONOTONIC of that flush */
	const void *data;		/* the record's bytes, within the buffer */
	/*
	 * KEYS: .count names, NUL-terminated, back to back at .items (each
	 * checked to end within the record), labelling the values of
	 * .for_type records; MEMORY: .count u64 values at .items (use
	 * cgstream_record_value(): they need not be aligned); IO: .count
	 * devices (cgstream_record_device()).
	 */
	uint32_t count;
	uint32_t for_type;		/* KEYS only */
	const void *items;
	struct cgstream_sample sample;	/* CPU: its values, present bits set;
					 * kept last, as it may grow */
};

/*
 * Decode the record at *@off of @buf[0..@len).  Returns 1 with @rec filled
 * and *@off past the record; 0 at the end (*@off == @len, an empty buffer
 * too); -EBADMSG, *@off unchanged, for bytes that are not a valid record
 * there: fewer than 16 bytes left (a cut header), a size below 16 (no
 * record is shorter) or below its type's first size (112 for CPU, 40 for
 * MEMORY, 48 for IO), a size running past @len, a KEYS record whose
 * nr_keys names do not fit in it, a MEMORY record whose values are not a
 * whole number of u64, an IO record whose nr_devices do not fit in it;
 * -EINVAL for bad arguments (*@off > @len, @rec_size below the 1.2
 * struct).  A record of a type the library does not know comes back too,
 * with .decoded 0 and only .size, .type, .flags and .data set, so that
 * callers can count what they skip.  Whether a MEMORY record's count
 * matches its KEYS record is the caller's to check (the tree does).
 * Reads only within @buf; @buf need not be aligned.
 * @rec_size: sizeof(struct cgstream_record) as the caller knows it.
 */
int cgstream_records_next(const void *buf, size_t len, size_t *off,
			  struct cgstream_record *rec, size_t rec_size);
/* MEMORY: the @i-th value; IO: the @i-th device.  0; -EINVAL for another
 * type, -ENOENT for @i >= .count */
int cgstream_record_value(const struct cgstream_record *rec, unsigned int i,
			  uint64_t *value);
int cgstream_record_device(const struct cgstream_record *rec, unsigned int i,
			   struct cgstream_io_device *dev);

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
/*
 * Since 1.2: the same for one controller's <ctrl>.stat.stream_interval
 * (@ctrl one CGSTREAM_CTRL_* bit; -EINVAL otherwise); -EOPNOTSUPP when
 * the kernel does not stream that controller.
 */
int cgstream_get_ctrl_interval(const struct cgstream_opts *opts, unsigned int ctrl,
			       uint32_t *ms);
int cgstream_set_ctrl_interval(const struct cgstream_opts *opts, unsigned int ctrl,
			       uint32_t ms);

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
