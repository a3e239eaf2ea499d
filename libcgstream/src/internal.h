/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcgstream internals shared by the stream, group and interval code. */
#ifndef CGSTREAM_INTERNAL_H
#define CGSTREAM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * Open @path (a resolved cgroup directory) for @mode: the stream file
 * (KERNEL), cpu.stat (FALLBACK), or the stream file when it exists (AUTO).
 * Returns the mode opened, and the cgroup's id (its directory's inode
 * number) in @id; -ENOENT when the cgroup does not exist, -EOPNOTSUPP when
 * kernel mode is asked for and the file is missing.
 */
int cgs_open_data(const char *path, int mode, int *fd, uint64_t *id);
/* AUTO resolved against the root cgroup's files */
int cgs_pick_mode(const char *root, int mode);
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
 * --- set.c: the cycle machinery of the group and the tree ---
 *
 * A set is the cgroups one object reads once per cycle, the tick that
 * starts a cycle, and the batch of events a cycle hands back.  The
 * caller's fd is an epoll fd holding the tick fd and an eventfd the set
 * writes when the caller should call process again.
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

struct cgs_set_ops {
	/*
	 * A cycle begins (s->cycle is its number).  The tree finds new
	 * cgroups here; in SUBTREE mode it reads the whole cycle.  A negative
	 * errno ends the set after this cycle's batch.
	 */
	int (*begin)(struct cgs_set *s);
	/* a member's read failed: @err is -ENODEV once its cgroup is gone */
	void (*failed)(struct cgs_set *s, struct cgs_cg *m, int err);
	/* @m leaves the live list: take it out of the owner's indexes */
	void (*unlinked)(struct cgs_set *s, struct cgs_cg *m);
	/* the tick fd failed; returns the errno that ends the set */
	int (*tick_failed)(struct cgs_set *s, int err);
};

struct cgs_uring;

struct cgs_set {
	const struct cgs_set_ops *ops;
	int mode;			/* SUBTREE, KERNEL or FALLBACK */
	int epoll_fd;			/* the caller's fd */
	int wake_fd;			/* eventfd in epoll_fd */
	int tick_fd;			/* timerfd, or a stream or subtree file */
	struct cgs_uring *uring;	/* fallback reads; NULL: plain syscalls */
	char *buf;			/* CGS_READ_BUF, for plain reads */

	struct cgs_cg *head, *tail;
	size_t n_live, n_all;		/* live; live and dead not freed */
	struct cgs_cg *dead;

	uint64_t cycle;			/* cycles begun */
	bool reading;			/* the cycle's reads are under way */
	bool unreleased;		/* the cycle's batch is not handed out */
	struct cgs_cg *cursor;		/* plain reads: the next member */
	uint64_t seq, missed, tick_usec;	/* fallback: the set's own */
	int err;			/* the set cannot go on */

	/* the batch: REMOVED and ERROR, then ADDED, then SAMPLE */
	struct cgs_evs first, added, samples;
	size_t emitted;
	bool released;
};

/*
 * @tick_fd (taken over, closed on failure too): a timerfd (FALLBACK), the
 * stream file a flush makes readable (KERNEL) or the subtree file.
 * FALLBACK reads go through io_uring unless it cannot be set up or
 * $CGSTREAM_NO_IO_URING is set.
 */
int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops, int mode, int tick_fd);
/* frees every member; a zeroed or finished set is left alone */
void cgs_set_fini(struct cgs_set *s);
/* true when io_uring does the set's reads */
bool cgs_set_uses_uring(const struct cgs_set *s);

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
/* a member's sample for this cycle (SUBTREE mode: the tree's decoder) */
void cgs_set_sampled(struct cgs_set *s, struct cgs_cg *m, const struct cgstream_sample *smp);
/* the set ends with @err: after this cycle's batch, process returns it */
void cgs_set_end(struct cgs_set *s, int err);
/* the event loop's call: cgstream_group_process() and the tree's */
int cgs_set_process(struct cgs_set *s, struct cgstream_event *events, size_t max,
		    size_t event_size);

#endif
