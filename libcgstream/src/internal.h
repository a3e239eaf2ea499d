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
 * memory.stat is 1-3 KiB and io.stat ~100 bytes per device: the plain
 * reads of the group and the tree start with a larger buffer and grow it
 * (to CGS_TEXT_MAX) when a read fills it.
 */
#define CGS_READ_BUF		4096
#define CGS_TEXT_BUF		(64u * 1024)
#define CGS_TEXT_MAX		(4u * 1024 * 1024)

/* options after validation, with defaults filled in */
struct cgs_opts {
	int mode;
	uint32_t fallback_interval_ms;
	const char *cgroup_root;
	uint32_t controllers;		/* CGSTREAM_CTRL_*, never 0 */
	bool defaults;			/* CGSTREAM_CTRL_DEFAULT: .controllers where enabled */
	uint32_t report;		/* CGSTREAM_REPORT_* */
};

/* an interval in range (0 is its default: the kernel's off) */
static inline bool cgs_interval_valid(uint32_t ms)
{
	return ms == 0 || (ms >= CGSTREAM_INTERVAL_MIN_MS && ms <= CGSTREAM_INTERVAL_MAX_MS);
}

int cgs_opts_load(const struct cgstream_opts *in, struct cgs_opts *out);

/* the cgroup2 mount point: malloc()ed, or -ENODEV */
int cgs_find_root(const struct cgs_opts *o, char **root);
/* load @opts into @o, then find the root they name: cgs_find_root() */
int cgs_opts_root(const struct cgstream_opts *opts, struct cgs_opts *o,
		  char **root);
/* canonical absolute path of @cgroup under @root: malloc()ed, or -errno */
int cgs_resolve(const char *root, const char *cgroup, char **path);

/* open @file in the cgroup directory @dir: the fd, or -errno (ENOENT) */
int cgs_open_in(const char *dir, const char *file);
/* fallback timer period: option, else @c's kernel interval if set, else 1000 */
uint32_t cgs_fallback_ms(const char *root, uint32_t opt_ms, const struct cgs_controller *c);
/* periodic CLOCK_MONOTONIC timerfd, first expiry at once */
int cgs_timerfd(uint32_t ms);

/* @c's <ctrl>.stat.stream_interval at @root: 0; -EOPNOTSUPP without it */
int cgs_read_interval(const char *root, const struct cgs_controller *c, uint32_t *ms);

uint64_t cgs_now_usec(void);
/* grow the array *@v of *@cap items of @size bytes to hold @want (first
 * @first, then doubling): 0, or -ENOMEM with the array as it was */
int cgs_grow(void **v, size_t *cap, size_t want, size_t size, size_t first);
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
#define CGS_OPTS_SIZE_1_1	cgs_offsetofend(struct cgstream_opts, cgroup_root)
/* a caller of 1.3 or later: a REMOVED event carries the cgroup's values */
#define CGS_EVENT_SIZE_1_3	cgs_offsetofend(struct cgstream_event, reserved2)
/* a caller of 1.4 or later: an event carries pressure */
#define CGS_EVENT_SIZE_1_4	cgs_offsetofend(struct cgstream_event, pressure)
/* the controllers of 1.2 and 1.3 (their CGSTREAM_CTRL_ALL) */
#define CGS_CTRL_ALL_1_3	(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_MEMORY | CGSTREAM_CTRL_IO)

/*
 * Copy a sample or an event into a caller's struct of @size bytes (at
 * least the 1.0 size): the common prefix, zeros beyond ours, and
 * sample.present without the bits of fields the caller's struct lacks
 * (an event's controllers, changed and final without pressure's).
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

/*
 * --- every controller's values (values.c) ---
 *
 * A member keeps each controller's latest values, named by a layout: the
 * names of the kernel's SCHEMA record in SUBTREE mode, the keys of the
 * text elsewhere.  Layouts are shared: a set keeps one per distinct list
 * of names per controller it has seen (in practice one or two each),
 * until it ends, so that the names a member points to stay valid and a
 * layout is compared by its address.  For the API's fixed fields (struct
 * cgstream_sample's, struct cgstream_io_device's) a layout knows where
 * each of the controller's table (fields.c) is among its names.
 */
#define CGS_MAX_FIXED	16	/* the fields of the largest fixed struct */

struct cgs_names {
	struct cgs_names *next;
	const struct cgs_controller *ctrl;
	uint32_t nr;
	const char **names;		/* into blob */
	char *blob;
	/* cpu: by cgs_cpu.fields, io: by its dev_fields; the index among
	 * .names or -1 */
	int16_t fixed[CGS_MAX_FIXED];
	bool dup_fixed;			/* a fixed field's name twice: a bad text */
};

/* one controller's latest values of a member */
struct cgs_vals {
	const struct cgs_names *layout;	/* io: each device's values' names */
	uint64_t *v;			/* io: devices x layout->nr, row by row */
	size_t cap;
	uint32_t n;
	uint64_t seq, time_usec, skipped;	/* the publication they are as of */
	unsigned int pub_present;	/* of CGSTREAM_F_SEQ, _FLUSH_TIME, _FLUSH_MISSED */
};

/* values coming in, to be kept (cgs_cg_take()) */
struct cgs_in {
	const struct cgs_names *layout;
	const void *values;		/* n u64s, any alignment */
	uint32_t n;
	const struct cgstream_io_device *devs;	/* io: its devices' fixed fields */
	uint32_t nr_devices;
	uint64_t seq, time_usec, skipped;
	unsigned int pub_present;	/* which of those three were given */
	bool partial;			/* devices left out */
	bool final;			/* a removed cgroup's, as of its removal */
};

/* one "key value" of a text, before it is matched to a layout */
struct cgs_kv {
	const char *prefix;		/* "events." for memory.events, else "" */
	const char *key;		/* not NUL-terminated: @len bytes */
	uint32_t len;
	uint64_t v;
};

struct cgs_kvs {
	struct cgs_kv *v;
	size_t n, cap;
};

/* the keys a stream's text adds: publication_seq, _time_usec, publications_skipped */
struct cgs_flush {
	uint64_t seq, time_usec, missed;
	unsigned int present;		/* CGSTREAM_F_SEQ | _FLUSH_TIME | _FLUSH_MISSED */
};

/* io devices as parsed, growing */
struct cgs_devs {
	struct cgstream_io_device *v;
	uint32_t n;
	size_t cap;
};

/* one cgroup of a group or a tree */
struct cgs_cg {
	struct cgs_hnode key;		/* group: hash of the path; tree: the id */
	struct cgs_hnode wd_key;	/* tree: the inotify watch of its directory */
	struct cgs_hnode path_key;	/* tree: the hash of its path */
	struct cgs_cg *prev, *next;	/* the live list, in the order linked */
	struct cgs_cg *next_dead;
	char *path;
	void *userdata;
	uint64_t id, parent_id;
	int fds[CGS_NR_FILES];		/* KERNEL, FALLBACK: its files; -1: none */
	bool opened;			/* its files are open (or absent, or transient) */
	bool transient;			/* over the fd budget: opened at each read */
	bool temp_open;			/* transient, and its files open for a read */
	uint8_t held;			/* files counted against the fd budget */
	int wd;				/* tree: inotify watch; -1: none */
	int error;			/* tree: the error last reported, 0 */
	uint64_t cycle;			/* the set's cycle of .got; 0: none */
	uint64_t skip_cycle;		/* KERNEL lead: no new flush in this cycle */
	uint32_t got;			/* controllers read in .cycle */
	uint64_t last_seq;		/* the lead's last publication_seq */
	uint64_t scanned;		/* tree: the snapshot its directory was read in */
	unsigned int reading;		/* io_uring reads in flight */
	bool dead;			/* off the live list */
	bool quiet;			/* removed by the caller: no more events */
	bool announced;			/* ADDED sent (a group's need none) */
	bool in_batch;			/* a REMOVED or ERROR event waits */
	uint32_t have;			/* controllers it has values of */
	uint32_t changed;		/* of them, changed since its last SAMPLE or CHANGED */
	uint32_t final;			/* of them, the kernel's as of its removal */
	bool partial;			/* io: devices left out */
	bool touched;			/* on the set's list of this cycle's members */
	bool removing;			/* SUBTREE: the lead's REMOVED record named it */
	bool awaiting;			/* SUBTREE: removing, on the mode's list of those
					 * awaiting other controllers' REMOVED (not freed) */
	uint64_t removing_cycle;	/* SUBTREE: the cycle its lead's REMOVED came in */
	uint64_t removing_usec;		/* and when */
	uint64_t unlisted_usec;		/* SUBTREE: since when its directory is gone,
					 * unlisted and not yet REMOVED; 0: not */
	uint64_t hold_cycle;		/* tree: held back since (another one at its path) */
	struct cgs_vals vals[CGS_NR_CTRL];	/* each controller's latest */
	struct cgstream_sample sample;	/* cpu's fields the API names, from vals */
	struct cgs_devs devs;		/* io's devices, the API's fields */
	/* what its events point to, made when one is handed out */
	struct cgstream_values out_cpu;
	struct cgstream_memory out_mem;
	struct cgstream_io out_io;
	struct cgstream_values out_psi;
};

struct cgs_ev {
	struct cgs_cg *cg;
	int type;			/* CGSTREAM_EVENT_* */
	int error;
	uint32_t changed;		/* SAMPLE, CHANGED: the member's .changed then */
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
	/* @m, not announced yet, is not to be this cycle (NULL: never held) */
	bool (*hold)(struct cgs_set *s, struct cgs_cg *m);
	/* the tick fd or the whole read failed; returns the errno that ends the set */
	int (*tick_failed)(struct cgs_set *s, int err);
};

/*
 * A mode: where a set's cycle comes from (the lead controller's mode) and
 * how the controllers the set reads in it are read (s->by_mode[mode]).
 * Every slot is called through this table, for every mode the set uses;
 * each mode keeps its own state (init makes it, the other slots get it).
 */
struct cgs_mode {
	int mode;			/* CGSTREAM_MODE_* */
	/* the tick fd of an object at @dir led by @lead: the file its flush
	 * makes readable, or a timer of @ms; -errno */
	int (*open_tick)(const char *dir, uint32_t ms, const struct cgs_controller *lead);
	/* its state (buffers, files) into *@state; 0 or -errno */
	int (*init)(struct cgs_set *s, const char *dir, void **state);
	/* its state freed (it waits, bounded, for reads under way) */
	void (*fini)(struct cgs_set *s, void *state);
	/* the lead's mode: 1: a cycle begins; 0: not yet; -errno: the tick fd
	 * failed.  @reading: the last cycle's reads are still under way */
	int (*tick)(struct cgs_set *s, void *state, bool reading);
	/* this cycle's reads of its controllers, decoded into the members:
	 * true once all are done; -errno in s->err ends the set (cgs_set_end) */
	bool (*read)(struct cgs_set *s, void *state);
	/* reads under way go on: true once all are done */
	bool (*read_more)(struct cgs_set *s, void *state);
	/* reads under way go on only in process calls: the caller is woken */
	bool (*read_needs_calls)(const struct cgs_set *s, const void *state);
};

extern const struct cgs_mode cgs_mode_subtree;
extern const struct cgs_mode cgs_mode_streams;
extern const struct cgs_mode cgs_mode_emulation;

/*
 * --- mode.c: the one place a mode is chosen ---
 * The mode @asked means for controller @c of an object at @dir (a cgroup
 * directory: the tree's, the stream's, or the cgroup2 root for a group):
 * SUBTREE when @subtree_ok and @c's subtree file is there, KERNEL when its
 * stream file is, else FALLBACK.  -EOPNOTSUPP when @asked names a mode
 * whose file is missing, -ENOMEDIUM when @dir lacks @c's *.stat file (the
 * controller is not enabled there), -ENOENT when @dir is no directory.
 */
int cgs_mode_pick(const char *dir, int asked, bool subtree_ok, const struct cgs_controller *c);
/*
 * What an object at @dir with @o reads (cgstream_probe()): every
 * controller's cgs_mode_pick(), the controllers read (with o->defaults,
 * cpu always, the others where enabled and in the mode asked for), and
 * the error opening would fail with.
 */
void cgs_probe(const char *dir, const struct cgs_opts *o, bool subtree_ok,
	       struct cgstream_probe *p);
const struct cgs_mode *cgs_mode_of(int mode);
/* the tick fd polled now (1: readable or in error, 0, -errno) */
int cgs_mode_poll_tick(const struct cgs_set *s);
/* the slots of a mode that reads a cycle within one call */
bool cgs_mode_read_done(struct cgs_set *s, void *state);
bool cgs_mode_no_calls(const struct cgs_set *s, const void *state);

/*
 * Plain reads of text files, for the modes that read each member's files
 * (streams, emulation): each keeps one of these in its state.
 */
struct cgs_reader {
	char *buf;			/* the *.stat(.stream) file: CGS_TEXT_BUF, grows */
	size_t size;
	char *aux;			/* memory's other files: CGS_READ_BUF each */
};

/* a reader's buffers: 0 or -ENOMEM; freed by cgs_reader_fini() */
int cgs_reader_init(struct cgs_reader *rd);
void cgs_reader_fini(struct cgs_reader *rd);
/* pread() of a text file into rd->buf at 0, grown while a read fills it
 * (up to CGS_TEXT_MAX): bytes, or -errno */
ssize_t cgs_reader_pread(struct cgs_reader *rd, int fd);

/* one read of a member's file; .buf NULL: the member has no such file */
struct cgs_text {
	const char *buf;
	ssize_t res;			/* bytes, or -errno */
	size_t size;			/* of the buffer: a full one may be cut */
};

/*
 * Decode controller @c's text of @m (its files' reads in @t, by enum
 * cgs_file; @own NULL: the stream files, whose keys say the flush; else
 * the emulation's own flush the values are as of): 0 (values stored, or
 * none this cycle); 1: a KERNEL lead's flush did not move, @m has no
 * sample this cycle; -errno: told to s->ops->failed() (@m may be dropped).
 */
int cgs_mode_decode_text(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
			 const struct cgs_text t[CGS_NR_FILES], const struct cgs_flush *own);
/* @c's files of @m read with pread() now (@rd's buffers), then decoded: as above */
int cgs_mode_read_plain(struct cgs_set *s, struct cgs_reader *rd, struct cgs_cg *m,
			const struct cgs_controller *c, const struct cgs_flush *own);

enum cgs_phase {
	CGS_PHASE_WAIT,			/* for the tick that begins a cycle */
	CGS_PHASE_READ,			/* the cycle's reads are under way */
	CGS_PHASE_EMIT,			/* its batch is being handed out */
};

struct cgs_uring;

/* what an object's set reads, and where (cgs_set_init) */
struct cgs_set_conf {
	const char *dir;		/* the tick's and the subtree files' cgroup */
	uint32_t ctrls;			/* CGSTREAM_CTRL_* */
	int modes[CGS_NR_CTRL];		/* each asked controller's (cgs_mode_pick) */
	uint32_t fallback_ms;		/* the timer of a FALLBACK lead */
	uint32_t report;		/* CGSTREAM_REPORT_* */
	bool plain;			/* no io_uring (a stream: one cgroup) */
};

/* @conf for an object at @dir (@mount: the cgroup2 root): every asked
 * controller's mode (cgs_mode_pick()), the fallback timer; 0 or -errno */
int cgs_set_conf_pick(struct cgs_set_conf *conf, const char *dir, const char *mount,
		      const struct cgs_opts *o, bool subtree_ok);

struct cgs_set {
	const struct cgs_set_ops *ops;
	const struct cgs_mode *src;	/* the lead's mode: the tick */
	const struct cgs_controller *lead;
	uint32_t ctrls;			/* CGSTREAM_CTRL_* the set reads */
	int modes[CGS_NR_CTRL];		/* per controller read, else 0 */
	uint32_t by_mode[4];		/* controllers per CGSTREAM_MODE_* */
	bool plain;
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
	bool sync;			/* this cycle was begun by a sync */
	int err;			/* the set cannot go on: told after its batch */
	/* the batch: REMOVED and ERROR, then ADDED, then SAMPLE */
	struct cgs_evs first, added, samples;
	size_t emitted;

	/* what a group's and a tree's batches carry: CGSTREAM_REPORT_* */
	uint32_t report;
	/* the members whose values a read of this cycle stored */
	struct cgs_cg **touched;
	size_t n_touched, touched_cap;
	/* SUBTREE: the controllers whose snapshot this cycle read, and of
	 * each the publication (every member it did not list is as of it) */
	uint32_t fresh;
	struct cgs_flush snap_pub[CGS_NR_CTRL];
	/* SUBTREE: snapshots begun, so that a tree reads a directory once
	 * per snapshot at most */
	uint64_t snaps;
	/*
	 * Each controller's latest publication the reads met (the newest a
	 * value, a snapshot or the emulation's cycle was as of; .present 0:
	 * none yet), and (pub) the same as of the last cycle collected: what
	 * cgstream_tree_publication() says, changes or not.
	 */
	struct cgs_flush pub_read[CGS_NR_CTRL];
	struct cgs_flush pub[CGS_NR_CTRL];

	/* values.c */
	struct cgs_names *layouts;
	struct cgs_kvs kvs;
	struct cgs_devs devs;		/* io's devices as a read has them */
	uint64_t *scratch;		/* records' io values, gathered */
	size_t scratch_cap;

	/* each mode's own state (mode-*.c), by CGSTREAM_MODE_* */
	void *mode_state[4];
	/* plain reads (streams, emulation): the next member, moved on by a
	 * drop of the member it names */
	struct cgs_cg *cursor;
};

/* --- cycle.c --- */
/* the set of @conf: its tick, its modes' buffers and files */
int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops,
		 const struct cgs_set_conf *conf);
/* frees every member; a zeroed or finished set is left alone */
void cgs_set_fini(struct cgs_set *s);
/* the set ends with @err: after this cycle's batch, process returns it */
void cgs_set_end(struct cgs_set *s, int err);
/* the event loop's call: cgstream_group_process() and the tree's */
int cgs_set_process(struct cgs_set *s, struct cgstream_event *events, size_t max,
		    size_t event_size);
/* a cycle begun now (cgstream_tree_sync()): 0, -EBUSY, or the end's errno */
int cgs_set_sync(struct cgs_set *s);
/* the mode of controller @bit (a CGSTREAM_CTRL_* bit): -ENOENT if not read */
int cgs_set_ctrl_mode(const struct cgs_set *s, unsigned int bit);
/* controller @c read as of publication @f in this cycle (the newest counts) */
void cgs_set_published(struct cgs_set *s, const struct cgs_controller *c,
		       const struct cgs_flush *f);
/* the publication of controller @bit as of the last cycle collected: 0;
 * -ENOENT if not read, -ENODATA before any, -EINVAL */
int cgs_set_publication(const struct cgs_set *s, unsigned int bit, struct cgs_flush *f);

/* --- members.c --- */
/* a member with its path (copied), no files; NULL without memory */
struct cgs_cg *cgs_cg_new(const char *path, size_t len);
/* a member never linked: its files closed, its memory freed */
void cgs_cg_free(struct cgs_cg *m);
/*
 * Open @m's files for the controllers @s reads in KERNEL and FALLBACK
 * mode, and tell its id (its directory's inode number) in @id: 0; -ENOENT
 * when the cgroup does not exist; -ENOMEDIUM when it has none of the
 * files of @s's controllers; other -errno (EACCES) with nothing left
 * open.  A file the cgroup lacks (its controller is not enabled there,
 * memory.current of the root) is no error: no values of it.  Over the
 * process's fd budget (members.c) the member is transient: its files are
 * checked, not kept open.
 */
int cgs_cg_open(const struct cgs_set *s, struct cgs_cg *m, uint64_t *id);
void cgs_cg_close(struct cgs_cg *m);
/*
 * A transient member's files opened for this cycle's reads (nothing to
 * do for one that keeps them): 0; -ENODEV once its cgroup is gone (its
 * directory, or another cgroup made again under its path); -errno.
 * Closed again by cgs_cg_close_transient() once they are read.
 */
int cgs_cg_open_transient(const struct cgs_set *s, struct cgs_cg *m);
void cgs_cg_close_transient(struct cgs_cg *m);
/* how many transient members may have their files open at once (a read
 * wave of the emulation): within the headroom the budget leaves */
unsigned int cgs_fd_spare_members(const struct cgs_set *s);
/* a member's data for this cycle begins (its .got emptied once per cycle) */
void cgs_cg_touch(const struct cgs_set *s, struct cgs_cg *m);
/* put @m on the live list; -ENOMEM (then @m is the caller's to free) */
int cgs_set_link(struct cgs_set *s, struct cgs_cg *m);
/* off the live list with a REMOVED or ERROR event (none if quiet, or a
 * REMOVED of a member never announced); freed later by the set */
void cgs_set_drop(struct cgs_set *s, struct cgs_cg *m, int type, int err);
/* an ERROR event; the member stays */
void cgs_set_error(struct cgs_set *s, struct cgs_cg *m, int err);
/*
 * Controller @c's values of @m for this cycle (the modes' decoders): kept,
 * compared with those it had (m->changed), m->got and m->have set, and
 * @m on the cycle's list: 0; -ENOMEM; -EBADMSG for a cpu layout without
 * usage_usec or with a field twice (a text that is no cpu.stat).  No
 * values at all of a controller whose table says so (pressure where the
 * cgroup's cgroup.pressure is 0) mean @m has none of it.
 */
int cgs_cg_take(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
		const struct cgs_in *in);
/* @m on the list of the members this cycle collects from (a member held
 * back until another went: cgs_set_ops.hold) */
void cgs_set_list(struct cgs_set *s, struct cgs_cg *m);
/* @m no longer has @c's values (the controller was disabled for it) */
void cgs_cg_lose(struct cgs_cg *m, const struct cgs_controller *c);
/* the same, and @c's files of @m closed: they went (ENODEV) while the
 * cgroup stayed (its controller disabled, its cgroup.pressure set to 0) */
void cgs_cg_lose_files(struct cgs_cg *m, const struct cgs_controller *c);
/* @m's directory is there still, with its id */
bool cgs_cg_alive(const struct cgs_cg *m);
/* whether @m should still have @c's files, by its own cgroup.controllers
 * (cgroup.pressure for pressure; always for cpu): when they answer ENODEV
 * while they should, the cgroup is being removed (its stream files answer
 * so from rmdir's start, before its directory goes) */
bool cgs_cg_keeps_files(const struct cgs_cg *m, const struct cgs_controller *c);
/* the cycle's ADDED (first values of a member), then SAMPLE (every
 * member, CGSTREAM_REPORT_ALL) or CHANGED (those changed) events */
void cgs_set_collect(struct cgs_set *s);
/* the event of @e's member into @ev: its values, as of when they are */
void cgs_event_values(const struct cgs_set *s, const struct cgs_ev *e, struct cgstream_event *ev);
/* the batch handed out: its members may be freed */
void cgs_set_uncollect(struct cgs_set *s);
/* free the dead that no event names and no read writes into */
void cgs_set_reap(struct cgs_set *s);
/* every member dropped and freed, but those a read is still out for */
void cgs_set_free_members(struct cgs_set *s);

/* --- parse.c --- */
/*
 * A read of a text file (@res bytes into a buffer of @size, or -errno)
 * parsed into @smp: 0; -EAGAIN for a read to forget (interrupted,
 * cancelled); -ENODEV once the cgroup is gone; -EOVERFLOW for a full
 * buffer (it may be cut); -EBADMSG.
 */
int cgs_parse_read(const char *buf, ssize_t res, size_t size, struct cgstream_sample *smp);
/* what a read returned, as cgs_parse_read() sees it: 0 to parse; -errno */
int cgs_read_result(ssize_t res, size_t size);
/*
 * Flat-keyed text ("key value" lines: memory.stat, memory.events and
 * memory.stat.stream) appended to @kvs, each key with @prefix; with @fl,
 * the stream's publication_seq, publication_time_usec and
 * publications_skipped go there
 * instead.  A line that is not "key u64" (a blank one, a value that is no
 * decimal u64, a NUL byte) is -EBADMSG; -ENOMEM.  The keys point into @buf.
 */
int cgs_parse_keyed(const char *buf, size_t len, const char *prefix, struct cgs_kvs *kvs,
		    struct cgs_flush *fl);
/* one more key of @kvs: 0 or -ENOMEM */
int cgs_kvs_push(struct cgs_kvs *kvs, const char *prefix, const char *key, size_t len,
		 uint64_t v);
/* a single-value file ("123\n": memory.current): 0 or -EBADMSG */
int cgs_parse_value(const char *buf, size_t len, uint64_t *v);
/*
 * io.stat text: a line per device, "MAJ:MIN" then "key=value" fields, of
 * which the counters of fields.c's io table are read and the rest
 * (policies' fields: cost.*, depth=max, ...) skipped; a device without
 * counts has zeros; a line whose device is no "MAJ:MIN" (io.stat's
 * "(unknown)" for a disk being removed) is skipped.  With @fl the
 * stream's last lines (publication_seq, publication_time_usec,
 * publications_skipped) go there.
 * Devices replace @devs' (which grows, and is kept); -EBADMSG for a line
 * or a counter that is not as above, -ENOMEM.
 */
int cgs_parse_io(const char *buf, size_t len, struct cgs_devs *devs, struct cgs_flush *fl);
/*
 * Pressure text: the lines of a *.pressure file of @resource ("cpu":
 * "some avg10=1.23 avg60=0.00 avg300=0.00 total=12345"), or with
 * @resource NULL those of pressure.stream (each line's resource first:
 * "cpu some avg10=..."; with @fl its publication_seq,
 * publication_time_usec and publications_skipped go there).  Each line's
 * values are appended to @kvs, named "<resource>.<kind>.<key>" (prefix
 * "cpu.some.", key "avg10"), in the key table's order (fields.c: avg10,
 * avg60, avg300 in hundredths of a percent, total in usec).  A key the
 * table lacks is skipped (a later kernel's), and so is the line of a
 * resource it lacks.  -EBADMSG for a kind other than some and full, a
 * line without each of the table's keys or with one twice, a value that
 * is not as its key wants (two decimals; a decimal u64) or overflows, a
 * resource's kind twice, a blank line, a NUL byte; -EINVAL for a
 * @resource this library does not know; -ENOMEM.
 */
int cgs_parse_pressure(const char *buf, size_t len, const char *resource, struct cgs_kvs *kvs,
		       struct cgs_flush *fl);

/* --- values.c --- */
/* the layout of @c named by @kvs (a parsed text): the one @had, another
 * the set has, or a new one; NULL without memory */
const struct cgs_names *cgs_layout_of_kvs(struct cgs_set *s, const struct cgs_controller *c,
					  const struct cgs_names *had, const struct cgs_kvs *kvs);
/* the layout of @c named by @nr @names (a SCHEMA record's); NULL without memory */
const struct cgs_names *cgs_layout_of_names(struct cgs_set *s, const struct cgs_controller *c,
					    const char *const *names, uint32_t nr);
/* @in's values into @v: 1 when they differ from those it had (or it had
 * none), 0 when the same, -ENOMEM */
int cgs_vals_store(struct cgs_vals *v, const struct cgs_in *in);
/* io's devices parsed into s->devs as @in: the io table's counters, by its
 * names: 0 or -ENOMEM */
int cgs_io_text_values(struct cgs_set *s, struct cgs_in *in);
/* an io record's devices as @in (@l: the layout of its device values),
 * gathered into the set's scratch arrays: 0 or -ENOMEM */
int cgs_io_record_values(struct cgs_set *s, const struct cgstream_rec *rec,
			 const struct cgs_names *l, struct cgs_in *in);
/* grow @d to hold @n devices: 0 or -ENOMEM */
int cgs_devs_reserve(struct cgs_devs *d, uint32_t n);
void cgs_values_free_member(struct cgs_cg *m);
void cgs_values_free_set(struct cgs_set *s);

/* --- records.c: what the tree reads of a decoded record --- */
#define CGS_REC_CGROUP		sizeof(struct cgroup_stat_cgroup)
/* bumped each time the decoder's SCHEMA names change */
uint64_t cgs_decoder_schema_gen(const struct cgstream_decoder *d);
/* a CGROUP or REMOVED record's values, and device @i */
static inline const unsigned char *cgs_rec_values(const struct cgstream_rec *r)
{
	return (const unsigned char *)r->data + CGS_REC_CGROUP;
}

static inline const unsigned char *cgs_rec_device_at(const struct cgstream_rec *r, uint32_t i)
{
	return cgs_rec_values(r) + 8 * (size_t)r->nr_values + (size_t)i * r->device_size;
}

#endif
