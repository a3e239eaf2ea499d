/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcgstream internals: options and paths, the field tables, the read path. */
#ifndef CGSTREAM_INTERNAL_H
#define CGSTREAM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgstream.h"
#include "fields.h"
#include "hash.h"
#include <linux/cgroup_stat_stream.h>

#define CGS_EXPORT __attribute__((visibility("default")))

#define CGS_DEFAULT_FALLBACK_MS	1000u

/*
 * cpu.stat is a few hundred bytes; a read that fills the whole buffer may
 * have been cut, and is reported as -EOVERFLOW rather than parsed.
 */
#define CGS_READ_BUF		4096

/* options after validation, with defaults filled in */
struct cgs_opts {
	int mode;
	uint32_t fallback_interval_ms;
	const char *cgroup_root;
};

int cgs_opts_load(const struct cgstream_opts *in, struct cgs_opts *out);

/* the cgroup2 mount point: malloc()ed, or -ENODEV */
int cgs_find_root(const struct cgs_opts *o, char **root);
/* load @opts into @o, then find the root they name: cgs_find_root() */
int cgs_opts_root(const struct cgstream_opts *opts, struct cgs_opts *o,
		  char **root);
/* canonical absolute path of @cgroup under @root: malloc()ed, or -errno */
int cgs_resolve(const char *root, const char *cgroup, char **path);

/*
 * Open @path (a resolved cgroup directory) for @mode (as picked by
 * cgs_mode_pick()): the stream file (KERNEL) or cpu.stat (FALLBACK).
 * Returns @mode, and the cgroup's id (its directory's inode number) in
 * @id; -ENOENT when the cgroup does not exist, -EOPNOTSUPP when the
 * stream file is missing.
 */
int cgs_open_data(const char *path, int mode, int *fd, uint64_t *id);
/* fallback timer period: option, else kernel interval if set, else 1000 */
uint32_t cgs_fallback_ms(const char *root, uint32_t opt_ms);
/* periodic CLOCK_MONOTONIC timerfd, first expiry at once */
int cgs_timerfd(uint32_t ms);

int cgs_read_interval(const char *root, uint32_t *ms);

uint64_t cgs_now_usec(void);
/* poll @fd for POLLIN: 1 ready (or in error), 0 timeout, -errno; < 0 waits */
int cgs_poll_in(int fd, int timeout_ms);
/* errno of a read of a removed cgroup's file, as the library reports it */
static inline int cgs_read_errno(int err)
{
	return (err == ENOENT || err == ENODEV) ? -ENODEV : -err;
}

/*
 * The 1.0 sizes of the structs that carry their size: the least a caller
 * may pass.  Fields were only ever appended after these.
 */
#define cgs_offsetofend(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
#define CGS_SAMPLE_SIZE_1_0	cgs_offsetofend(struct cgstream_sample, flush_missed)
#define CGS_EVENT_SIZE_1_0	(offsetof(struct cgstream_event, sample) + CGS_SAMPLE_SIZE_1_0)

/*
 * Copy a sample or an event into a caller's struct of @size bytes (at
 * least the 1.0 size): the common prefix, zeros beyond ours, and
 * sample.present without the bits of fields the caller's struct lacks.
 */
void cgs_copy_sample(void *dst, size_t size, const struct cgstream_sample *s);
void cgs_copy_event(void *dst, size_t size, const struct cgstream_event *e);

/*
 * --- the read path of the group and the tree ---
 *
 * An object (group, tree) holds a set: its members (members.c), the mode
 * that reads them (mode-subtree.c, mode-streams.c, mode-emulation.c; picked
 * in mode.c) and the cycle (cycle.c), whose phases are
 *
 *   WAIT   for the mode's tick;
 *   READ   the mode reads and decodes every member's values (the
 *          emulation's reads may go on over several process calls);
 *   EMIT   the batch (REMOVED and ERROR, then ADDED, then SAMPLE) is
 *          handed out, over as many process calls as the caller needs.
 *
 * The caller's fd is an epoll fd holding the tick fd and an eventfd the
 * set writes when the caller should call process again.
 */

/* one cgroup of a group or a tree */
struct cgs_cg {
	struct cgs_hnode key;		/* group: hash of the path; tree: the id */
	struct cgs_hnode wd_key;	/* tree: the inotify watch of its directory */
	struct cgs_cg *prev, *next;	/* the live list, in the order linked */
	struct cgs_cg *next_dead;
	char *path;
	void *userdata;
	uint64_t id, parent_id;
	int fd;				/* cpu.stat.stream or cpu.stat; -1: none */
	int wd;				/* tree: inotify watch; -1: none */
	int error;			/* tree: the error last reported, 0 */
	uint64_t cycle;			/* the set's cycle of .sample; 0: none */
	uint64_t last_seq;
	uint64_t scanned;		/* tree: the cycle its directory was read */
	bool reading;			/* an io_uring read is in flight */
	bool dead;			/* off the live list */
	bool quiet;			/* removed by the caller: no more events */
	bool announced;			/* ADDED sent (a group's need none) */
	bool in_batch;			/* a REMOVED or ERROR event waits */
	struct cgstream_sample sample;
};

struct cgs_ev {
	struct cgs_cg *cg;
	int type;			/* CGSTREAM_EVENT_* */
	int error;
};

struct cgs_evs {
	struct cgs_ev *v;
	size_t n, cap;
};

struct cgs_set;

/* what the object that owns a set does for it */
struct cgs_set_ops {
	/*
	 * A cycle begins (s->cycle is its number), before the reads: a tree
	 * finds the cgroups that appeared.  A negative errno ends the set
	 * after this cycle's batch.
	 */
	int (*refresh)(struct cgs_set *s);
	/* the member a subtree record names (@id, below @parent_id); NULL: none */
	struct cgs_cg *(*find)(struct cgs_set *s, uint64_t id, uint64_t parent_id);
	/* a member's read failed: @err is -ENODEV once its cgroup is gone */
	void (*failed)(struct cgs_set *s, struct cgs_cg *m, int err);
	/* @m leaves the live list: take it out of the owner's indexes */
	void (*unlinked)(struct cgs_set *s, struct cgs_cg *m);
	/* the tick fd or the whole read failed; returns the errno that ends the set */
	int (*tick_failed)(struct cgs_set *s, int err);
};

/* a mode: where a set's cycle comes from and how its members are read */
struct cgs_mode {
	int mode;			/* CGSTREAM_MODE_* */
	/* the tick fd of an object at @dir: the file a flush makes readable,
	 * or a timer of @ms; -errno */
	int (*open_tick)(const char *dir, uint32_t ms);
	/* its buffers; 0 or -ENOMEM */
	int (*init)(struct cgs_set *s);
	void (*fini)(struct cgs_set *s);
	/* 1: a cycle begins; 0: not yet; -errno: the tick fd failed.
	 * @reading: the last cycle's reads are still under way */
	int (*tick)(struct cgs_set *s, bool reading);
	/* the cycle's reads, decoded into the members: true once all are
	 * done; -errno in s->err ends the set (cgs_set_end) */
	bool (*read)(struct cgs_set *s);
	/* reads under way go on: true once all are done */
	bool (*read_more)(struct cgs_set *s);
	/* reads go on only in process calls: the caller is woken for them */
	bool (*read_needs_calls)(const struct cgs_set *s);
};

extern const struct cgs_mode cgs_mode_subtree;
extern const struct cgs_mode cgs_mode_streams;
extern const struct cgs_mode cgs_mode_emulation;

/*
 * --- mode.c: the one place a mode is chosen ---
 * The mode @asked means for an object at @dir (a cgroup directory: the
 * tree's, the stream's, or the cgroup2 root for a group): SUBTREE when
 * @subtree_ok and the subtree file is there, KERNEL when the stream file
 * is, else FALLBACK.  -EOPNOTSUPP when @asked names a mode whose file is
 * missing, -ENOENT when @dir is no directory.
 */
int cgs_mode_pick(const char *dir, int asked, bool subtree_ok);
const struct cgs_mode *cgs_mode_of(int mode);
/* what the modes share: s->buf of @size; the tick fd polled now (1:
 * readable or in error, 0, -errno); read_needs_calls() of a mode that
 * reads a whole cycle in one call */
int cgs_mode_buf_init(struct cgs_set *s, size_t size);
void cgs_mode_buf_fini(struct cgs_set *s);
int cgs_mode_poll_tick(const struct cgs_set *s);
bool cgs_mode_reads_at_once(const struct cgs_set *s);

enum cgs_phase {
	CGS_PHASE_WAIT,			/* for the tick that begins a cycle */
	CGS_PHASE_READ,			/* the cycle's reads are under way */
	CGS_PHASE_EMIT,			/* its batch is being handed out */
};

struct cgs_uring;

struct cgs_set {
	const struct cgs_set_ops *ops;
	const struct cgs_mode *src;	/* the mode that reads the members */
	int epoll_fd;			/* the caller's fd */
	int wake_fd;			/* eventfd in epoll_fd */
	int tick_fd;			/* timerfd, or a stream or subtree file */

	/* members.c */
	struct cgs_cg *head, *tail;
	size_t n_live, n_all;		/* live; live and dead not freed */
	struct cgs_cg *dead;

	/* cycle.c */
	enum cgs_phase phase;
	uint64_t cycle;			/* cycles begun */
	int err;			/* the set cannot go on: told after its batch */
	/* the batch: REMOVED and ERROR, then ADDED, then SAMPLE */
	struct cgs_evs first, added, samples;
	size_t emitted;

	/* the mode's own (mode-*.c) */
	char *buf;			/* text reads; subtree: the snapshot */
	size_t buf_size;
	struct cgs_cg *cursor;		/* plain reads: the next member */
	struct cgs_uring *uring;	/* emulation: NULL: plain syscalls */
	uint64_t seq, missed, tick_usec;	/* emulation: its own flush count */
};

/* --- cycle.c --- */
/*
 * @tick_fd (taken over, closed on failure too): from @src->open_tick().
 */
int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops, const struct cgs_mode *src,
		 int tick_fd);
/* frees every member; a zeroed or finished set is left alone */
void cgs_set_fini(struct cgs_set *s);
/* the set ends with @err: after this cycle's batch, process returns it */
void cgs_set_end(struct cgs_set *s, int err);
/* the event loop's call: cgstream_group_process() and the tree's */
int cgs_set_process(struct cgs_set *s, struct cgstream_event *events, size_t max,
		    size_t event_size);

/* --- members.c --- */
/* a member with its path (copied), fd -1; NULL without memory */
struct cgs_cg *cgs_cg_new(const char *path, size_t len);
/* a member never linked: its fd closed, its memory freed */
void cgs_cg_free(struct cgs_cg *m);
/* put @m on the live list; -ENOMEM (then @m is the caller's to free) */
int cgs_set_link(struct cgs_set *s, struct cgs_cg *m);
/* off the live list with a REMOVED or ERROR event (none if quiet, or a
 * REMOVED of a member never announced); freed later by the set */
void cgs_set_drop(struct cgs_set *s, struct cgs_cg *m, int type, int err);
/* an ERROR event; the member stays */
void cgs_set_error(struct cgs_set *s, struct cgs_cg *m, int err);
/* a member's sample for this cycle (the modes' decoders) */
void cgs_set_sampled(struct cgs_set *s, struct cgs_cg *m, const struct cgstream_sample *smp);
/* the cycle's ADDED (first sample of a member) and SAMPLE events */
void cgs_set_collect(struct cgs_set *s);
/* the batch handed out: its members may be freed */
void cgs_set_uncollect(struct cgs_set *s);
/* free the dead that no event names and no read writes into */
void cgs_set_reap(struct cgs_set *s);
/* every member dropped and freed (@quiet: no read is in flight) */
void cgs_set_free_members(struct cgs_set *s, bool quiet);

/* --- parse.c --- */
/*
 * A read of a text file (@res bytes into a buffer of @size, or -errno)
 * parsed into @smp: 0; -EAGAIN for a read to forget (interrupted,
 * cancelled); -ENODEV once the cgroup is gone; -EOVERFLOW for a full
 * buffer (it may be cut); -EBADMSG.
 */
int cgs_parse_read(const char *buf, ssize_t res, size_t size, struct cgstream_sample *smp);

#endif
