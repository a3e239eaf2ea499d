/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgstream: read cgroup v2 cpu, memory and io statistics and pressure
 * stall information once per kernel publication (what the kernel calls the
 * statistics it flushed and published at its interval).
 *
 * On a kernel with the stat streams (cpu.stat.stream, memory.stat.stream,
 * io.stat.stream, pressure.stream and their .subtree files) the library
 * polls the stream files and reads what the kernel already published;
 * elsewhere it emulates the stream with a timer and reads of cpu.stat,
 * memory.stat (with memory.current and memory.events), io.stat and the
 * cpu, memory, io and irq .pressure files ("fallback" mode) behind the
 * same API.  Each controller (pressure counts as one) has its own mode.
 *
 * All functions return 0 (or a count) on success and a negative errno on
 * failure; they never print and never exit.  Output arguments are written
 * only on success.
 *
 * Threads: an object (struct cgstream, cgstream_group, cgstream_tree,
 * cgstream_decoder) is not locked; use each one from one thread at a time
 * (different objects from different threads at once are fine).  The
 * functions that take no object (cgstream_parse, cgstream_records_next,
 * cgstream_record_value, cgstream_record_device, cgstream_rec_value,
 * cgstream_rec_get, cgstream_rec_device, cgstream_rec_io_device,
 * cgstream_sample_field, cgstream_memory_get, cgstream_values_get,
 * cgstream_resolve_path, the interval calls, cgstream_mode_name,
 * cgstream_controller_name, cgstream_controller_file, cgstream_version,
 * cgstream_escape_name, cgstream_shown_path, cgstream_io_field, cgstream_probe,
 * cgstream_exit_status, cgstream_explain, cgstream_parse_option,
 * cgstream_notices, cgstream_distinct_subtrees) are safe to call from any
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
#define CGSTREAM_VERSION_MINOR 4

enum cgstream_mode {
	CGSTREAM_MODE_AUTO = 0,		/* kernel when available, else fallback */
	CGSTREAM_MODE_KERNEL = 1,	/* cpu.stat.stream; -EOPNOTSUPP without it */
	CGSTREAM_MODE_FALLBACK = 2,	/* timer + cpu.stat, on any kernel */
	CGSTREAM_MODE_SUBTREE = 3,	/* a tree through cpu.stat.stream.subtree */
};

/*
 * Since 1.2: the controllers an object reads (cgstream_opts.controllers,
 * cgstream_event.controllers).  One bit each; the lead controller of an
 * object is the first it reads in this order (cpu, memory, io, pressure).
 *
 * Since 1.4, pressure: pressure stall information, the cgroup's
 * cpu.pressure, memory.pressure, io.pressure and irq.pressure (cgroup core
 * files, there wherever the kernel has PSI, was not booted with psi=0 and
 * the cgroup's cgroup.pressure is 1), read as one "controller" with the
 * others' modes: pressure.stream.subtree (SUBTREE), pressure.stream
 * (KERNEL), the *.pressure files on a timer (FALLBACK).  Its values
 * (cgstream_event.pressure) are named "<resource>.<some|full>.<key>":
 * "cpu.some.avg10", "memory.full.total", ...; the avg10, avg60 and avg300
 * keys in hundredths of a percent (the text's "avg10=1.23" is 123), total
 * in microseconds.  irq has "full" values only, and only where the kernel
 * has irq.pressure.
 */
enum cgstream_controller {
	CGSTREAM_CTRL_CPU		= 1u << 0,
	CGSTREAM_CTRL_MEMORY		= 1u << 1,
	CGSTREAM_CTRL_IO		= 1u << 2,
	CGSTREAM_CTRL_PRESSURE		= 1u << 3,	/* since 1.4 */
};
/* every controller of this header (1.2, 1.3: cpu, memory and io) */
#define CGSTREAM_CTRL_ALL	(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_MEMORY | CGSTREAM_CTRL_IO | \
				 CGSTREAM_CTRL_PRESSURE)
/*
 * Alone in cgstream_opts.controllers: the default set every front end
 * reads unless told otherwise: cpu, and memory, io and (since 1.4)
 * pressure where the cgroup has them (a stream's and a tree's cgroup has
 * their *.stat or *.pressure files; a group: the cgroup2 root has them)
 * and, with a mode other than AUTO, the kernel has their files of that
 * mode (since 1.4).  cgstream_probe() says which.
 *
 * A binary built against 1.3 passes 1.3's value, CGSTREAM_CTRL_DEFAULT_1_3,
 * and gets 1.3's set (cpu, and memory and io where enabled): no pressure,
 * which its events could not carry.
 */
#define CGSTREAM_CTRL_DEFAULT		(1u << 30)	/* since 1.4 */
#define CGSTREAM_CTRL_DEFAULT_1_3	(1u << 31)	/* 1.3's CGSTREAM_CTRL_DEFAULT */
/* Since 1.3: room in arrays indexed by a controller's bit number */
#define CGSTREAM_CTRL_SLOTS	8
/*
 * Since 1.3: the range of an interval in ms, the kernel's (0: streaming
 * off) and cgstream_opts.fallback_interval_ms (0: its default); outside
 * it -EINVAL.
 */
#define CGSTREAM_INTERVAL_MIN_MS	10u
#define CGSTREAM_INTERVAL_MAX_MS	3600000u

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
 * One sample: a cgroup's cpu.stat as of one publication (1.2: "flush")
 * of the kernel.  A field whose bit is not in @present was not in the file
 * (or the kernel's records) and is 0.  In fallback mode @seq is
 * the library's own cycle count and @flush_time_usec the CLOCK_MONOTONIC
 * time of its read.  @cgroup_id is the inode number of the cgroup's
 * directory (the kernel's cgroup id): a cgroup removed and created again
 * under the same path gets a new one.
 */
struct cgstream_sample {
	uint64_t present;		/* CGSTREAM_F_* */
	uint64_t seq;			/* publication_seq */
	uint64_t flush_time_usec;	/* publication_time_usec, CLOCK_MONOTONIC */
	uint64_t usage_usec;
	uint64_t user_usec;
	uint64_t system_usec;
	uint64_t nice_usec;
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_usec;
	uint64_t nr_bursts;
	uint64_t burst_usec;
	uint64_t flush_missed;		/* publications_skipped: the kernel's
					 * skipped cycles, total */
	uint64_t cgroup_id;		/* since 1.1: CGSTREAM_F_CGROUP_ID */
};

/* Options; may grow: set .sz = sizeof(struct cgstream_opts), zero the rest. */
struct cgstream_opts {
	size_t sz;
	int mode;			/* enum cgstream_mode */
	uint32_t fallback_interval_ms;	/* 0: the kernel's interval if set, else 1000;
					 * since 1.3 else CGSTREAM_INTERVAL_MIN_MS..MAX_MS */
	const char *cgroup_root;	/* NULL: the cgroup2 mount from mountinfo */
	/*
	 * Since 1.2: CGSTREAM_CTRL_*; 0 (and a 1.1 caller's shorter struct):
	 * cpu only; CGSTREAM_CTRL_DEFAULT (alone): cpu, and the others where
	 * the cgroup has them.  .mode applies to each controller: AUTO picks the best
	 * each one's kernel files offer (so cpu may stream while memory is
	 * emulated); any other mode must be available for every controller
	 * asked for (-EOPNOTSUPP).  -EINVAL for bits not defined here.
	 */
	uint32_t controllers;
	/*
	 * Since 1.3: what the batches of a group and a tree carry (a
	 * stream hands out a SAMPLE per cycle whatever this says).
	 * CGSTREAM_REPORT_ALL (0, and an older caller's): a SAMPLE for every
	 * cgroup each cycle, as 1.2 did, with .changed saying whose values
	 * moved.  CGSTREAM_REPORT_CHANGES: the ADDED, REMOVED and ERROR
	 * events as always, and a CHANGED event only for the cgroups whose
	 * values changed since their previous event, or that are read again
	 * after an ERROR event (then with every controller in .changed,
	 * whatever its values): the tree keeps every cgroup's values, and in
	 * SUBTREE mode reads only what changed (the kernel's change
	 * snapshots).  -EINVAL for any other value.
	 */
	uint32_t report;
};

/* Since 1.3: cgstream_opts.report */
enum cgstream_report {
	CGSTREAM_REPORT_ALL = 0,
	CGSTREAM_REPORT_CHANGES = 1,
};

/*
 * --- memory and io (since 1.2), every controller's values by name (1.3) ---
 *
 * A cgroup's values of one controller as of one publication of that
 * controller (the kernel's "publication": what 1.2 called a flush).  They
 * are handed out by pointer in struct cgstream_event and stay valid until
 * the object's next process (or read) call.
 *
 * The names are the kernel's: in SUBTREE mode those of the snapshot's
 * SCHEMA record, in KERNEL mode the keys of the <ctrl>.stat.stream text,
 * in FALLBACK mode the keys of the *.stat text (pressure's: see
 * CGSTREAM_CTRL_PRESSURE).  So a statistic a kernel adds (cpu.stat's
 * core_sched.force_idle_usec, a memory.stat key) shows up under its own
 * name without a new library; the fields of struct
 * cgstream_sample and struct cgstream_io_device are the ones the API
 * promises, filled from these by name (0 and no present bit where a
 * kernel lacks one).
 */
struct cgstream_memory {
	uint64_t seq;			/* memory's publication (fallback: the
					 * library's cycle count) */
	uint64_t flush_time_usec;	/* CLOCK_MONOTONIC of that publication */
	uint32_t nr;			/* values (and names) */
	uint32_t reserved;
	/*
	 * names[i] labels values[i]: every key memory.stat prints, spelled
	 * and ordered as it prints them, in its units (bytes, counts); then
	 * "current", "swap.current" where the kernel has swap accounting,
	 * and "events." + each key of memory.events.  A cgroup without
	 * memory.current (the root) has no "current" and "events.*" but in
	 * subtree mode (whose records carry the root memcg's own counters).
	 */
	const char *const *names;
	const uint64_t *values;
};

/*
 * Since 1.3: one controller's values by name, laid out as struct
 * cgstream_memory (which is memory's, by its 1.2 name): cpu's in
 * cgstream_event.cpu, every key of cpu.stat as the kernel names it;
 * since 1.4 pressure's in cgstream_event.pressure.
 */
struct cgstream_values {
	uint64_t seq;			/* the controller's publication (fallback:
					 * the library's cycle count) */
	uint64_t time_usec;		/* CLOCK_MONOTONIC of that publication */
	uint32_t nr;			/* values (and names) */
	uint32_t reserved;
	const char *const *names;	/* names[i] labels values[i] */
	const uint64_t *values;
};

struct cgstream_io_device {
	uint32_t major, minor;
	uint64_t rbytes, wbytes, rios, wios, dbytes, dios;
};

struct cgstream_io {
	uint64_t seq;			/* io's publication (fallback: the
					 * library's cycle count) */
	uint64_t flush_time_usec;	/* CLOCK_MONOTONIC of that publication */
	uint32_t nr_devices;
	uint32_t reserved;
	const struct cgstream_io_device *devices;	/* as io.stat lists them */
	/*
	 * Since 1.3: each device's values by the kernel's names (rbytes,
	 * wbytes, ... and any it adds): device i's are values[i * nr_values]
	 * to values[i * nr_values + nr_values - 1], labelled by names[].
	 */
	uint32_t nr_values;
	uint32_t reserved2;
	const char *const *names;
	const uint64_t *values;
};

/* 0 and the value named @name; -ENOENT: @m has no such value */
int cgstream_memory_get(const struct cgstream_memory *m, const char *name,
			uint64_t *value);
/* since 1.3: the same for any controller's values */
int cgstream_values_get(const struct cgstream_values *v, const char *name, uint64_t *value);
/* "cpu", "memory", "io", "pressure" for one CGSTREAM_CTRL_* bit; NULL for anything else */
const char *cgstream_controller_name(unsigned int ctrl);

/* Since 1.4: cgstream_controller_file()'s @which */
enum cgstream_file {
	CGSTREAM_FILE_STAT = 0,		/* what FALLBACK mode reads, as messages name it:
					 * "cpu.stat", "memory.stat", "io.stat", "*.pressure" */
	CGSTREAM_FILE_STREAM = 1,	/* KERNEL mode's: "cpu.stat.stream", "pressure.stream" */
	CGSTREAM_FILE_SUBTREE = 2,	/* SUBTREE mode's: "cpu.stat.stream.subtree" */
	CGSTREAM_FILE_INTERVAL = 3,	/* the root's interval: "cpu.stat.stream_interval" */
};
/*
 * Since 1.4: the kernel file (@which: enum cgstream_file) of one
 * CGSTREAM_CTRL_* bit, for front ends that name it to the user; NULL for
 * anything else.
 */
const char *cgstream_controller_file(unsigned int ctrl, unsigned int which);

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
	CGSTREAM_EVENT_CHANGED = 5,	/* since 1.3, with CGSTREAM_REPORT_CHANGES: a
					 * SAMPLE of a cgroup whose values changed */
};

/* Since 1.3: cgstream_event.flags */
#define CGSTREAM_EVENT_F_PARTIAL	(1u << 0)	/* io: devices left out (the
							 * kernel was out of memory) */

/*
 * For ADDED and ERROR events .sample holds only the cgroup's id
 * (.sample.present == CGSTREAM_F_CGROUP_ID) and .path its path; REMOVED
 * events (since 1.3) carry its values too (below).
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
	 * Since 1.2.  SAMPLE, CHANGED (and REMOVED since 1.3): the
	 * controllers it carries values of (a cgroup that lacks a
	 * controller's *.stat file, because the controller is not enabled
	 * for it, carries none of it; one without pressure (no *.pressure
	 * files, a pressure.stream or record without values: its
	 * cgroup.pressure is 0), none of pressure: never zeros).  .sample holds cpu's values (with
	 * CGSTREAM_CTRL_CPU; otherwise only the cgroup's id), .memory, .io
	 * and .pressure the others' (NULL without their bit).  Every controller's
	 * values are as of its own latest publication when the cycle read
	 * them: a cycle begins at the lead controller's publication (or the
	 * fallback timer).
	 */
	uint32_t controllers;
	uint32_t reserved;
	const struct cgstream_memory *memory;
	const struct cgstream_io *io;
	/*
	 * Since 1.3.  SAMPLE and CHANGED: the controllers (of .controllers)
	 * whose values changed since the cgroup's previous SAMPLE or CHANGED
	 * event (every one in its first).
	 */
	uint32_t changed;
	/*
	 * Since 1.3.  REMOVED: the controllers (of .controllers) whose
	 * values are final: the kernel's as of the removal, after the
	 * cgroup's last task left (SUBTREE mode's REMOVED records; the
	 * event waits for each controller's, up to two publications of it
	 * after the lead's, 5 s at most).  The
	 * others' are the last the object read before the cgroup went:
	 * what it used between then and its removal is lost (KERNEL and
	 * FALLBACK modes; a cgroup whose removal the kernel no longer kept,
	 * see CGSTREAM_REPORT_CHANGES, or whose REMOVED did not come within
	 * 5 s of a full snapshot that no longer listed it).
	 */
	uint32_t final;
	/* Since 1.3: cpu's values by name (with CGSTREAM_CTRL_CPU), else NULL */
	const struct cgstream_values *cpu;
	uint32_t flags;			/* since 1.3: CGSTREAM_EVENT_F_* */
	uint32_t reserved2;
	/*
	 * Since 1.4: pressure's values by name (with CGSTREAM_CTRL_PRESSURE:
	 * the cgroup has pressure files), else NULL.  A caller whose struct
	 * ends before it gets no pressure (nor could it ask for it).
	 */
	const struct cgstream_values *pressure;
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
 * KERNEL and FALLBACK read files per cgroup (one for cpu, four for memory,
 * one for io, one for pressure in KERNEL mode and up to four, its
 * *.pressure files, in FALLBACK mode; a group's too): they keep them open for as many cgroups as
 * the limit of open files allows, less a headroom left to the rest of the
 * process (a quarter of RLIMIT_NOFILE, at least 256; since 1.3), and
 * open, read and close the others' at each cycle, so any number of
 * cgroups is read without taking the caller's fds.  One that cannot be
 * opened gets an ERROR event and is tried again each cycle.
 * Paths come from the directories: a cgroup's id is its directory's inode
 * number (d_ino), so ids become paths by reading only the directory of
 * the parent of an id not seen before.
 *
 * Changes (since 1.3): the tree keeps every cgroup's latest values.  In
 * SUBTREE mode it reads a change snapshot each cycle (the cgroups whose
 * values changed, those created, and the REMOVED records of those removed,
 * with their final values), so that a cycle costs what changed, not what
 * there is; a full snapshot at the first cycle, when the kernel says it
 * dropped removals the tree had not read yet (resynchronised at once),
 * and every 64th cycle (a directory made unsearchable for the reader
 * hides later changes and the removal of what is below it: the full
 * snapshot is what finds them gone).  $CGSTREAM_SUBTREE_FULL set to
 * anything but "0" reads full snapshots every cycle (for comparisons).
 * KERNEL and FALLBACK modes read every cgroup and compare the values.
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
 * cgroups gone since the last cycle, with their values (final ones where
 * the kernel gave them: .final), and ERROR for those that cannot be read,
 * ADDED for cgroups seen for the first time, then a SAMPLE for every
 * cgroup of the subtree (CGSTREAM_REPORT_ALL) or a CHANGED for each one
 * whose values changed (CGSTREAM_REPORT_CHANGES; every new one's first
 * values too); a cgroup removed and created again under the same path:
 * REMOVED with the old id, ADDED with the new.  Parents are ADDED before
 * their children.  Returns the number of events written
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
 * Since 1.3: one controller's latest publication as of the tree's last
 * cycle (the last batch it began to hand out, SAMPLE or CHANGED events
 * or none): SUBTREE mode the snapshot's, KERNEL the newest its stream
 * files had, FALLBACK the emulation's cycle (seq its count, time when
 * its reads began, skipped the ticks missed).  With
 * CGSTREAM_REPORT_CHANGES a cycle hands out nothing of the cgroups that
 * did not change: this is how a caller knows how fresh the values it
 * holds are (an exporter's flush age) when none did.
 */
struct cgstream_publication {
	uint64_t seq;			/* publication_seq (fallback: the cycle count) */
	uint64_t time_usec;		/* its CLOCK_MONOTONIC time */
	uint64_t skipped;		/* publications skipped since boot (fallback:
					 * the timer's ticks missed) */
};
/*
 * 0 and *@pub for @ctrl (one CGSTREAM_CTRL_* bit); -ENOENT: the tree
 * does not read @ctrl; -ENODATA: no cycle read a publication of it yet
 * (none handed out yet, or the kernel published none: its interval is
 * 0); -EINVAL for bad arguments.  @pub_size: sizeof(struct
 * cgstream_publication) as the caller knows it.
 */
int cgstream_tree_publication(const struct cgstream_tree *t, unsigned int ctrl,
			      struct cgstream_publication *pub, size_t pub_size);

/*
 * --- the kernel's snapshots (since 1.3: format 2) ---
 *
 * The <ctrl>.stat.stream.subtree files return snapshots of whole records
 * (the kernel's <linux/cgroup_stat_stream.h>): a SNAPSHOT record (the
 * controller, the publication, for a change snapshot the one it is
 * relative to), a SCHEMA record (the names of the values), the REMOVED
 * records of cgroups removed since the reader's previous snapshot (their
 * values as of the removal), then a CGROUP record per listed cgroup.  A
 * snapshot may take several reads: a decoder keeps what its SNAPSHOT and
 * SCHEMA records said from one buffer to the next.  The tree reads them
 * for you; this is the one decoder, for readers of the files themselves
 * (tests, benchmarks, tools).
 */
enum cgstream_rec_type {
	CGSTREAM_REC_SNAPSHOT = 1,
	CGSTREAM_REC_SCHEMA = 2,
	CGSTREAM_REC_CGROUP = 3,
	CGSTREAM_REC_REMOVED = 4,
};

/* SNAPSHOT flags (cgstream_rec.snapshot_flags): the kernel's */
#define CGSTREAM_SNAPSHOT_F_STOPPED	(1u << 0)	/* the interval is 0 */
#define CGSTREAM_SNAPSHOT_F_CHANGES	(1u << 1)	/* a change snapshot: .base_seq */
#define CGSTREAM_SNAPSHOT_F_LOST	(1u << 2)	/* removals since the base dropped:
							 * read a full snapshot */
/* CGROUP and REMOVED flags (cgstream_rec.flags): the kernel's */
#define CGSTREAM_CGROUP_F_LATER		(1u << 0)	/* values of a later publication */
#define CGSTREAM_CGROUP_F_PARTIAL	(1u << 1)	/* devices left out (no memory) */
#define CGSTREAM_CGROUP_F_NEW		(1u << 2)	/* created since the base */

struct cgstream_decoder;

/* a decoder, with no snapshot begun: 0 or -ENOMEM */
int cgstream_decoder_new(struct cgstream_decoder **ret);
void cgstream_decoder_free(struct cgstream_decoder *d);

/* one record, as cgstream_decoder_next() gives it; may grow at the end */
struct cgstream_rec {
	uint32_t size;			/* bytes of this record */
	uint16_t type;			/* the kernel's: CGSTREAM_REC_*, or one
					 * this library does not know */
	uint16_t flags;			/* the kernel's flags of the record */
	uint32_t decoded;		/* 1: a type this library decodes; 0:
					 * stepped over (only the 4 fields above
					 * and .data are set) */
	uint32_t controller;		/* the snapshot's: CGSTREAM_CTRL_* (0: a
					 * controller this library does not know) */
	const void *data;		/* the record's bytes, within the buffer */
	/* the snapshot's (its SNAPSHOT record), in every record of it */
	uint16_t version;		/* 2 */
	uint16_t snapshot_flags;	/* CGSTREAM_SNAPSHOT_F_* */
	uint32_t reserved;
	uint64_t seq;			/* the publication */
	uint64_t time_usec;		/* its CLOCK_MONOTONIC time */
	uint64_t base_seq;		/* a change snapshot's base; else 0 */
	uint64_t skipped;		/* publications skipped since boot */
	/*
	 * The snapshot's SCHEMA (SCHEMA, CGROUP, REMOVED): names[i] labels
	 * value i of every cgroup, device_names[i] value i of every device;
	 * valid until the decoder reads the next SCHEMA record (or is freed).
	 */
	uint32_t schema_values;		/* values per cgroup */
	uint32_t device_values;		/* values per device */
	uint32_t device_size;		/* bytes per device: 8 + 8 x device_values */
	uint32_t reserved2;
	const char *const *names;
	const char *const *device_names;
	/* CGROUP, REMOVED */
	uint64_t id;			/* the cgroup's id (its directory's inode) */
	uint64_t parent_id;		/* its parent's; 0 in a snapshot's first
					 * CGROUP record */
	uint32_t nr_values;		/* its values: the SCHEMA's first ones */
	uint32_t nr_devices;		/* its devices (io) */
};

/*
 * Decode the record at *@off of @buf[0..@len) with @d.  Returns 1 with
 * @rec filled and *@off past the record; 0 at the end (*@off == @len);
 * with *@off and @d unchanged: -EBADMSG for bytes that are not a valid
 * record there, or not one that may come there (a cut header, a size
 * below 8, not a multiple of 8 or past @len; type 0: a zeroed buffer;
 * a snapshot that does not begin with its SNAPSHOT record, a second
 * SCHEMA, a CGROUP or REMOVED record before the SCHEMA, a REMOVED one
 * after a CGROUP one; a SNAPSHOT whose change flag and base disagree or
 * whose base is not before it; a SCHEMA whose names do not all end, one
 * empty, or whose device size is not 8 + 8 x its device values; a CGROUP
 * or REMOVED record with more values than the SCHEMA, or whose values
 * and devices do not fit in it), -EPROTONOSUPPORT for a SNAPSHOT of a
 * format version other than 2, -EINVAL for bad arguments, -ENOMEM.  A
 * SNAPSHOT record begins a snapshot (whatever came before); a record of
 * a type the library does not know comes back with .decoded 0, to be
 * skipped.  Reads only within @buf; @buf need not be aligned.
 * @rec_size: sizeof(struct cgstream_rec) as the caller knows it.
 */
int cgstream_decoder_next(struct cgstream_decoder *d, const void *buf, size_t len, size_t *off,
			  struct cgstream_rec *rec, size_t rec_size);
/* CGROUP, REMOVED: value @i (labelled names[i]): 0; -ENOENT for @i >=
 * .nr_values; -EINVAL for another type */
int cgstream_rec_value(const struct cgstream_rec *rec, unsigned int i, uint64_t *value);
/* the same by name: 0; -ENOENT when the record has no such value */
int cgstream_rec_get(const struct cgstream_rec *rec, const char *name, uint64_t *value);
/*
 * CGROUP, REMOVED: device @i's major and minor, and its first @nr values
 * (labelled device_names[]; those beyond .device_values are 0) into
 * @values (NULL when @nr is 0): 0; -ENOENT for @i >= .nr_devices
 */
int cgstream_rec_device(const struct cgstream_rec *rec, unsigned int i, uint32_t *major,
			uint32_t *minor, uint64_t *values, unsigned int nr);
/* device @i as struct cgstream_io_device: its counters found by name,
 * those the SCHEMA lacks 0: 0; -ENOENT, -EINVAL as above */
int cgstream_rec_io_device(const struct cgstream_rec *rec, unsigned int i,
			   struct cgstream_io_device *dev);

/*
 * --- format 1 (1.2's records): gone ---
 *
 * The kernel's subtree files no longer return format 1 (a KEYS record,
 * then CPU, MEMORY or IO records of fixed layouts); its calls stay for
 * binaries built against 1.2, and fail rather than misread format 2:
 * cgstream_records_next() returns 0 at the end of @buf and
 * -EPROTONOSUPPORT for any record; cgstream_record_value() and
 * cgstream_record_device() -EINVAL.  Use cgstream_decoder_next().
 */
enum cgstream_record_type {
	CGSTREAM_RECORD_KEYS = 0,
	CGSTREAM_RECORD_CPU = 1,
	CGSTREAM_RECORD_MEMORY = 2,
	CGSTREAM_RECORD_IO = 3,
};

struct cgstream_record {
	uint32_t size;
	uint32_t type;
	uint32_t flags;
	uint32_t decoded;
	uint64_t cgroup_id;
	uint64_t parent_id;
	uint64_t seq;
	uint64_t flush_time_usec;
	const void *data;
	uint32_t count;
	uint32_t for_type;
	const void *items;
	struct cgstream_sample sample;
};

int cgstream_records_next(const void *buf, size_t len, size_t *off,
			  struct cgstream_record *rec, size_t rec_size);
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

/* Since 1.3: an io device's counter (struct cgstream_io_device, after major and minor) */
struct cgstream_io_field_info {
	const char *name;		/* its member and its key in io.stat: "rbytes" */
	const char *unit;		/* "bytes" or "count" */
	size_t offset;			/* of its uint64_t in struct cgstream_io_device */
};
/* the @i-th counter, in the struct's order: 0, or -ENOENT past the last */
int cgstream_io_field(unsigned int i, struct cgstream_io_field_info *info, size_t info_size);

/* --- the kernel's flush interval (root's cpu.stat.stream_interval) --- */
/* -EOPNOTSUPP without the feature */
int cgstream_get_interval(const struct cgstream_opts *opts, uint32_t *ms);
/* 0 turns streaming off; -EINVAL out of range, -EPERM/-EACCES unprivileged */
int cgstream_set_interval(const struct cgstream_opts *opts, uint32_t ms);
/*
 * Since 1.2: the same for one controller's <ctrl>.stat.stream_interval
 * (pressure's: pressure.stream_interval)
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

/*
 * --- what front ends share (since 1.3) ---
 *
 * The cgstream command, pycgstream and its exporter say the same things
 * the same way: these are the one copy of what a cgroup offers, of the
 * exit statuses and messages, and of the options they share (--mode,
 * --controllers, --fallback-interval, an interval to set).
 */

/* what an object would read at a cgroup (cgstream_probe()) */
struct cgstream_probe {
	/* 0: an object opened with these options works here; else the
	 * -errno its open would fail with (cgstream_explain() says why) */
	int error;
	/* the controllers it would read (CGSTREAM_CTRL_DEFAULT resolved) */
	uint32_t controllers;
	/*
	 * By the bit number of every controller this library knows (cpu 0,
	 * memory 1, io 2, pressure 3), whether asked for or not: the mode it
	 * would be read in here (CGSTREAM_MODE_SUBTREE, _KERNEL, _FALLBACK),
	 * or -ENOMEDIUM (the cgroup lacks its *.stat: not enabled for it, or
	 * not in the cgroup2 hierarchy at all; pressure: no cpu.pressure, PSI
	 * is off for it), -EOPNOTSUPP (the kernel lacks
	 * the file of the mode asked for), -ENOENT, -EACCES, ...; 0 beyond.
	 */
	int32_t modes[CGSTREAM_CTRL_SLOTS];
};
#define CGSTREAM_PROBE_TREE	(1u << 0)	/* for a tree: SUBTREE counts */
/*
 * What @cgroup offers an object opened with @opts (@flags: PROBE_TREE
 * for a tree): the same choices cgstream_open(), cgstream_group_new()
 * (the cgroup2 root) and cgstream_tree_open() make, without opening
 * anything that stays open.  0 with @out filled; -EINVAL for bad
 * arguments (@out_size below the 1.3 struct).
 */
int cgstream_probe(const char *cgroup, const struct cgstream_opts *opts, unsigned int flags,
		   struct cgstream_probe *out, size_t out_size);

/* the front ends' exit statuses */
enum cgstream_exit {
	CGSTREAM_EXIT_OK = 0,
	CGSTREAM_EXIT_FAILURE = 1,
	CGSTREAM_EXIT_USAGE = 2,
	CGSTREAM_EXIT_NO_CGROUP = 3,
	CGSTREAM_EXIT_PERMISSION = 4,
	CGSTREAM_EXIT_NO_KERNEL = 5,
};

struct cgstream_exit_info {
	int status;			/* enum cgstream_exit */
	const char *name;		/* "ok", "failure", "usage", "no-cgroup", ... */
	const char *text;		/* for --help: "no such cgroup" */
};
/* the @i-th exit status (from 0): 0, or -ENOENT past the last */
int cgstream_exit_status(unsigned int i, struct cgstream_exit_info *info, size_t info_size);

/* what a front end was doing when it failed (cgstream_explain()) */
enum cgstream_what {
	CGSTREAM_WHAT_OPEN = 0,		/* opening @arg (a cgroup) with @opts */
	CGSTREAM_WHAT_GET_INTERVAL = 1,	/* reading opts->controllers' interval */
	CGSTREAM_WHAT_SET_INTERVAL = 2,	/* setting it to @arg */
	CGSTREAM_WHAT_MODE = 3,		/* --mode @arg */
	CGSTREAM_WHAT_CONTROLLERS = 4,	/* --controllers @arg */
	CGSTREAM_WHAT_FALLBACK_INTERVAL = 5,	/* --fallback-interval @arg */
	CGSTREAM_WHAT_INTERVAL = 6,	/* @arg as an interval to set */
};
/*
 * Why @err (a -errno of the library, or of cgstream_parse_option()) came
 * of @what: a one-line message for the user into @buf (no program name,
 * no newline; cut to @size, NUL-terminated), naming the cgroup as
 * cgstream_shown_path() does, saying which controller the kernel or the
 * cgroup lacks and the way out.  Returns the exit status for it (enum
 * cgstream_exit; 0 for @err 0), -EINVAL for an unknown @what.
 */
int cgstream_explain(int err, int what, const char *arg, const struct cgstream_opts *opts,
		     char *buf, size_t size);
/*
 * The shared options' values: @what MODE ("auto", "subtree", "kernel",
 * "fallback": an enum cgstream_mode), CONTROLLERS ("cpu,memory,io,pressure",
 * names between commas, or "all": a mask), FALLBACK_INTERVAL
 * (CGSTREAM_INTERVAL_MIN_MS..MAX_MS), INTERVAL (0 or that range); strict
 * decimal.  0 and *@value; -EINVAL (cgstream_explain() says why).
 */
int cgstream_parse_option(int what, const char *text, uint32_t *value);

/* the notices cgstream_notices() gives */
#define CGSTREAM_NOTICE_EMULATION	(1u << 0)	/* a controller is emulated */
#define CGSTREAM_NOTICE_STREAMING_OFF	(1u << 1)	/* a streamed one's interval is 0 */
/*
 * What a front end says once when it starts reading @controllers, each
 * in @modes[bit number] (as cgstream_*_ctrl_mode() give them): of
 * @which, that some are emulated (fallback mode: their *.stat read on a
 * timer, at what period) and that the kernel's interval of a streamed
 * one is 0 (no new values until it is set).  Lines, each ending in '\n',
 * into @buf (NUL-terminated); their length (0: nothing to say); -ERANGE
 * when @size cannot hold them; -ENODEV without a cgroup2 mount, -EINVAL.
 */
int cgstream_notices(uint32_t controllers, const int *modes, const struct cgstream_opts *opts,
		     unsigned int which, char *buf, size_t size);
/*
 * Of the canonical absolute paths @paths (cgstream_resolve_path()), the
 * roots of distinct subtrees: @keep[i] is 1 unless paths[i] is below
 * another one, or the same as an earlier one.  Returns how many are kept.
 */
size_t cgstream_distinct_subtrees(const char *const *paths, size_t n, uint8_t *keep);
/*
 * The soft limit of open files raised to the hard one (trees and groups
 * in kernel and fallback mode hold files per cgroup, within a budget):
 * 0 and the limit now in *@limit, or -errno.
 */
int cgstream_raise_fd_limit(uint64_t *limit);
/*
 * systemd's sd_notify(): @state ("READY=1", "STOPPING=1", ...) in one
 * datagram to $NOTIFY_SOCKET.  1 sent; 0 when $NOTIFY_SOCKET is not set
 * (not run by systemd); -errno.
 */
int cgstream_sd_notify(const char *state);

/*
 * --- names are data (since 1.3) ---
 *
 * A cgroup may be named with any bytes a directory may have, chosen by
 * any user who may make a cgroup.  Whatever shows a cgroup's path to a
 * person or a program (the cgstream command's lines, JSON and tables,
 * top, pycgstream, the exporter's labels, messages) shows it through
 * this one rule, so that no name breaks a format, reaches a terminal as a
 * control sequence, or makes two cgroups look alike:
 *
 *  - printable, valid UTF-8 passes through as it is;
 *  - each byte that is not part of valid UTF-8, each C0 control
 *    (U+0000-001F), DEL, and each of the two bytes of a C1 control
 *    (U+0080-009F) becomes "\xHH" (two lowercase hex digits);
 *  - a backslash is doubled when what follows it would otherwise read as
 *    such an escape or as "\\" ("\x2d" in systemd's names stays as it is).
 *
 * To read it back: "\\" is one backslash, "\xHH" naming a byte the rule
 * escapes is that byte, any other character is itself.  The result is
 * printable UTF-8 without controls; each format then applies its own
 * syntax on top (JSON's \" and \\, Prometheus' label escaping).
 */
/* the escaped form of one name, at most 4 x its length + 1 bytes */
#define CGSTREAM_ESCAPED_SIZE(len)	(4 * (len) + 1)
/*
 * @name escaped by the rule above into @buf (NUL-terminated): its length;
 * -ERANGE when @size cannot hold it, -EINVAL for a NULL @name.
 */
int cgstream_escape_name(const char *name, char *buf, size_t size);
/*
 * The one form in which a cgroup's path is shown: relative to the cgroup2
 * mount @mount ("/" for the mount's root, "/a/b" below it; @path as it is
 * when it is not below @mount), escaped as cgstream_escape_name() does.
 * @path as the library hands it out (events, cgstream_tree_path()), @mount
 * as cgstream_resolve_path("/") gives it.  Returns as cgstream_escape_name().
 */
int cgstream_shown_path(const char *path, const char *mount, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CGSTREAM_H */
