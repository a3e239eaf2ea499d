// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SUBTREE mode: a tree through its root's *.stat.stream.subtree files, one
 * snapshot of each per cycle whatever the number of cgroups, and in it
 * only what changed.
 *
 * tick:   the lead controller's subtree file itself polls readable once
 *         per publication; the other controllers' files are read as of
 *         their own latest publication when the lead's cycle begins.
 * read:   a change snapshot (pread() at CGROUP_STAT_STREAM_CHANGES, then
 *         on at the running offset until a read returns 0, which is what
 *         completes it for the kernel) into a buffer kept from cycle to
 *         cycle, which grows (by doubling) until a snapshot takes one read
 *         and the 0 that ends it.  A full snapshot (at offset 0) instead
 *         at the first cycle (the kernel's first change snapshot of an
 *         open file is a full one anyway), when the kernel's base is not
 *         the snapshot the tree read last, when it says it dropped
 *         removals the tree had not read (F_LOST: read at once, in the
 *         same cycle), and every CGS_FULL_EVERY cycles: a directory made
 *         unsearchable for the reader hides what changes below it, and
 *         its removal (the kernel checks the directories as they were
 *         then); only a full snapshot finds those gone.
 * decode: cgstream_decoder_next() (records.c), record by record as the
 *         reads come; the SCHEMA's names become the set's layouts (once
 *         per new SCHEMA).  Each record's id names a member through the
 *         owner's find() (a tree reads the parent's directory of an id it
 *         does not know, once per snapshot at most), whichever
 *         controller's record names it first: a change snapshot lists a
 *         new cgroup once, in the first publication after it was made,
 *         and each controller publishes at its own time; a REMOVED record's
 *         values are the member's final ones.
 * diff:   the lead's REMOVED records drop their members, with the other
 *         controllers' final values: a member whose other controllers'
 *         REMOVED records have not come yet (each controller publishes at
 *         its own time, and memory's and io's css go offline a grace
 *         period after the rmdir) waits for them, as long as each of those
 *         publishes twice more, CGS_REMOVED_WAIT_USEC at most, and is then
 *         dropped with what came (cgs_subtree_drop_removed());
 *         after a full snapshot, a member it did not list is gone if its
 *         directory is (one that is there is newer than the publication,
 *         or lacks the lead controller), and a member another
 *         controller's full snapshot did not list lost that controller.  Members a
 *         change snapshot did not list are as they were, as of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CGS_SNAP_SLACK		(1u << 16)	/* a read leaving less: grow */
#define CGS_SNAP_MIN		(1u << 17)
#define CGS_SNAP_MAX		(1u << 28)	/* beyond: several reads per cycle */
#define CGS_FULL_EVERY		64	/* cycles between full snapshots at most */
/* an unlisted member whose directory is gone: its REMOVED awaited this long */
#define CGS_REMOVED_WAIT_USEC	(5 * 1000000ull)

/* one controller's subtree file */
struct cgs_subtree_ctl {
	int fd;				/* -1: the lead's, the set's tick fd */
	struct cgstream_decoder *dec;
	uint64_t base;			/* the last complete snapshot's publication */
	uint64_t schema_gen;		/* of the decoder's SCHEMA the layouts are */
	const struct cgs_names *layout;	/* its values' names */
	const struct cgs_names *dev_layout;	/* its devices' values' (io) */
	uint64_t last_full;		/* the cycle of the last full snapshot */
	bool resync;			/* the next one is a full one */
	uint64_t new_cycle[2];		/* the cycles its two newest were read in */
	uint64_t lost_cycle;		/* the last cycle it said removals were lost */
};

/* the mode's own: a snapshot's buffer, each controller's file */
struct cgs_subtree {
	char *snap;
	size_t snap_size;
	bool full_always;		/* $CGSTREAM_SUBTREE_FULL */
	size_t n_unlisted;		/* members awaiting their REMOVED */
	struct cgs_cg **awaiting;	/* removing, awaiting other controllers' */
	size_t n_awaiting, cap_awaiting;
	struct cgs_subtree_ctl ctl[CGS_NR_CTRL];
};

/* one snapshot as it is read */
struct cgs_snap_read {
	const struct cgs_controller *c;
	struct cgs_subtree_ctl *ctl;
	struct cgs_flush pub;		/* its publication (.present: its SNAPSHOT came) */
	bool schema;			/* its SCHEMA came */
	bool full, lost;
	bool stale;			/* a change snapshot whose base is not ours */
};

static int cgs_subtree_open(const char *dir, const struct cgs_controller *c)
{
	int fd = cgs_open_in(dir, c->subtree_file);

	return fd == -ENOENT ? -EOPNOTSUPP : fd;
}

static int cgs_subtree_open_tick(const char *dir, uint32_t ms, const struct cgs_controller *lead)
{
	(void)ms;
	return cgs_subtree_open(dir, lead);
}

static void cgs_subtree_fini(struct cgs_set *s, void *state)
{
	struct cgs_subtree *st = state;

	(void)s;
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (st->ctl[i].fd >= 0)
			close(st->ctl[i].fd);
		cgstream_decoder_free(st->ctl[i].dec);
	}
	free(st->snap);
	free(st->awaiting);	/* its members are the set's to free */
	free(st);
}

static int cgs_subtree_init(struct cgs_set *s, const char *dir, void **state)
{
	struct cgs_subtree *st = calloc(1, sizeof(*st));
	const char *full = getenv("CGSTREAM_SUBTREE_FULL");

	if (!st)
		return -ENOMEM;
	for (int i = 0; i < CGS_NR_CTRL; i++)
		st->ctl[i].fd = -1;
	*state = st;
	st->full_always = full && *full && strcmp(full, "0") != 0;
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		struct cgs_subtree_ctl *ctl = &st->ctl[i];

		if (s->modes[i] != CGSTREAM_MODE_SUBTREE)
			continue;
		if (cgstream_decoder_new(&ctl->dec) < 0)
			return -ENOMEM;	/* the set's fini frees it */
		if (cgs_controllers[i] == s->lead)
			continue;	/* the set's tick fd */
		ctl->fd = cgs_subtree_open(dir, cgs_controllers[i]);
		if (ctl->fd < 0)
			return ctl->fd;
	}
	st->snap_size = CGS_SNAP_MIN;
	st->snap = malloc(st->snap_size);
	return st->snap ? 0 : -ENOMEM;
}

static int cgs_subtree_tick(struct cgs_set *s, void *state, bool reading)
{
	(void)state;
	(void)reading;	/* a cycle is read within one call */
	return cgs_mode_poll_tick(s);	/* POLLERR: the read hears of it */
}

/* SNAPSHOT: which kind, relative to what; 1: a change snapshot to drop */
static int cgs_snap_begin(struct cgs_snap_read *sr, const struct cgstream_rec *rec)
{
	if (rec->controller != sr->c->bit)
		return -EBADMSG;	/* another controller's file */
	sr->pub = (struct cgs_flush){ rec->seq, rec->time_usec, rec->skipped,
				      CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
				      CGSTREAM_F_FLUSH_MISSED };
	sr->full = !(rec->snapshot_flags & CGSTREAM_SNAPSHOT_F_CHANGES);
	sr->lost = rec->snapshot_flags & CGSTREAM_SNAPSHOT_F_LOST;
	/* changes since a snapshot the tree did not read to its end */
	sr->stale = !sr->full && rec->base_seq != sr->ctl->base;
	return sr->stale ? 1 : 0;
}

/* SCHEMA: its names as the set's layouts (when they are new) */
static int cgs_snap_schema(struct cgs_set *s, struct cgs_snap_read *sr,
			   const struct cgstream_rec *rec)
{
	struct cgs_subtree_ctl *ctl = sr->ctl;
	uint64_t gen = cgs_decoder_schema_gen(ctl->dec);

	if (ctl->layout && gen == ctl->schema_gen) {
		sr->schema = true;
		return 0;
	}
	ctl->layout = cgs_layout_of_names(s, sr->c, rec->names, rec->schema_values);
	ctl->dev_layout = cgs_layout_of_names(s, sr->c, rec->device_names, rec->device_values);
	if (!ctl->layout || !ctl->dev_layout) {
		ctl->layout = NULL;
		return -ENOMEM;
	}
	ctl->schema_gen = gen;
	sr->schema = true;
	return 0;
}

/* a CGROUP or REMOVED record's values into the member it names */
static int cgs_snap_cgroup(struct cgs_set *s, struct cgs_snap_read *sr,
			   const struct cgstream_rec *rec)
{
	bool removed = rec->type == CGSTREAM_REC_REMOVED, lead = sr->c == s->lead;
	struct cgs_in in = { .seq = sr->pub.seq, .time_usec = sr->pub.time_usec,
			     .skipped = sr->pub.missed, .pub_present = sr->pub.present,
			     .final = removed };
	struct cgs_cg *m;
	int r;

	/*
	 * Any controller's record may find a new cgroup: the first change
	 * snapshot after its creation lists it (NEW) and the next ones only
	 * when its values change, so a record dropped here for a cgroup the
	 * lead has not listed yet would leave its values out until the
	 * controller's next full snapshot.
	 */
	m = s->ops->find(s, rec->id, removed ? 0 : rec->parent_id);
	if (!m || (m->removing && !removed))
		return 0;	/* not found where it should be (next cycle), or gone */
	if (removed && !lead && !m->removing && cgs_cg_alive(m)) {
		cgs_cg_lose(m, sr->c);	/* the controller was disabled for it */
		return 0;
	}
	if (sr->c == &cgs_io) {
		r = cgs_io_record_values(s, rec, sr->ctl->dev_layout, &in);
		if (r < 0)
			return r;
	} else {
		in.layout = sr->ctl->layout;
		in.values = cgs_rec_values(rec);
		in.n = rec->nr_values;
	}
	r = cgs_cg_take(s, m, sr->c, &in);
	if (r < 0)
		return r;
	if (!removed)
		m->parent_id = rec->parent_id;
	if (removed && lead && !m->removing) {
		/* dropped once every snapshot is read, or the others' come */
		m->removing = true;
		m->removing_cycle = s->cycle;
		m->removing_usec = cgs_now_usec();
	}
	return 0;
}

/* @buf[0..@len): records of the snapshot being read; 1: a stale one */
static int cgs_snap_decode(struct cgs_set *s, struct cgs_snap_read *sr, const char *buf,
			   size_t len)
{
	struct cgstream_rec rec;
	size_t off = 0;
	int r;

	while ((r = cgstream_decoder_next(sr->ctl->dec, buf, len, &off, &rec, sizeof(rec))) > 0) {
		switch (rec.type) {
		case CGSTREAM_REC_SNAPSHOT:
			r = cgs_snap_begin(sr, &rec);
			break;
		case CGSTREAM_REC_SCHEMA:
			r = cgs_snap_schema(s, sr, &rec);
			break;
		case CGSTREAM_REC_CGROUP:
		case CGSTREAM_REC_REMOVED:
			r = cgs_snap_cgroup(s, sr, &rec);
			break;
		default:
			r = 0;	/* a kind this library does not read */
		}
		if (r)
			return r;
	}
	return r;
}

/* a larger buffer for the next reads (the old one's bytes are not kept) */
static bool cgs_snap_grow(struct cgs_subtree *st)
{
	char *b;

	if (st->snap_size >= CGS_SNAP_MAX)
		return false;
	b = malloc(st->snap_size * 2);
	if (!b)
		return false;
	free(st->snap);
	st->snap = b;
	st->snap_size *= 2;
	return true;
}

/*
 * One snapshot of @sr->c read to its end (a read that returns 0) and
 * decoded: 0; 1 when there is none to read (nothing published yet) or it
 * was a stale change snapshot (read a full one); -errno
 */
static int cgs_snap_read(struct cgs_set *s, struct cgs_subtree *st, struct cgs_snap_read *sr,
			 int fd, bool full)
{
	off_t start = full ? 0 : (off_t)CGROUP_STAT_STREAM_CHANGES, pos = start;

	for (;;) {
		ssize_t n = pread(fd, st->snap, st->snap_size, pos);
		int r;

		if (n < 0 && errno == EINVAL && cgs_snap_grow(st))
			continue;	/* the next record did not fit: again, larger */
		if (n < 0 && errno == ENODATA && pos == start)
			return 1;	/* nothing published yet: no values this cycle */
		if (n < 0)
			return errno == ENODEV || errno == ENOENT ? -ENODEV : -errno;
		if (n == 0)	/* complete: the kernel's next base; no snapshot lacks
				 * its SNAPSHOT and SCHEMA records */
			return sr->pub.present && sr->schema ? 0 : -EBADMSG;
		r = cgs_snap_decode(s, sr, st->snap, (size_t)n);
		if (r)
			return r;
		pos += n;
		if (st->snap_size - (size_t)n < CGS_SNAP_SLACK)
			cgs_snap_grow(st);	/* the next cycles read it at once */
	}
}

/*
 * After a full snapshot of @c: what it did not list.  A member the lead's
 * did not list is gone if its directory is (or the reader may no longer
 * search its way to it); one whose directory is there is newer than the
 * publication (the kernel lists a cgroup from the first publication after
 * its creation), or, with a lead other than cpu, lacks the controller: it
 * stays.  A member another controller's did not list lost that one.
 *
 * A cgroup is unlisted from its rmdir on, but its REMOVED record, with its
 * final values, comes only in the first publication after its css went
 * offline, an RCU grace period and a work item later: a full snapshot in
 * between lists neither.  Such a member waits for its REMOVED
 * (cgs_subtree_expire()), unless removals were lost (@lost: the kernel
 * dropped records this reader had not read).
 */
static void cgs_snap_sweep(struct cgs_set *s, struct cgs_subtree *st,
			   const struct cgs_controller *c, bool lost)
{
	for (struct cgs_cg *m = s->tail, *prev; m; m = prev) {
		bool listed = m->cycle == s->cycle && (m->got & c->bit);

		prev = m->prev;
		if (listed || m->removing)
			continue;
		if (c == s->lead && !cgs_cg_alive(m)) {
			if (lost) {
				cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
			} else if (!m->unlisted_usec) {
				m->unlisted_usec = cgs_now_usec();
				st->n_unlisted++;
			}
		} else if (c != s->lead && (m->have & c->bit) && cgs_cg_alive(m)) {
			cgs_cg_lose(m, c);
		}
	}
}

/*
 * The members awaiting their REMOVED (cgs_snap_sweep()): those it named
 * are dropped already (cgs_subtree_drop_removed()); one whose REMOVED has
 * not come in CGS_REMOVED_WAIT_USEC is gone without final values (the
 * kernel tells no REMOVED below a directory the reader may no longer
 * search).
 */
static void cgs_subtree_expire(struct cgs_set *s, struct cgs_subtree *st)
{
	uint64_t now;
	size_t left = 0;

	if (!st->n_unlisted)
		return;
	now = cgs_now_usec();
	for (struct cgs_cg *m = s->tail, *prev; m; m = prev) {
		prev = m->prev;
		if (!m->unlisted_usec || m->dead)
			continue;
		if (now - m->unlisted_usec >= CGS_REMOVED_WAIT_USEC)
			cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
		else
			left++;
	}
	st->n_unlisted = left;
}

/* whether the next snapshot of @ctl is a full one */
static bool cgs_snap_full(const struct cgs_set *s, const struct cgs_subtree *st,
			  const struct cgs_subtree_ctl *ctl)
{
	return st->full_always || !ctl->base || ctl->resync ||
	       s->cycle - ctl->last_full >= CGS_FULL_EVERY;
}

/* controller @c's snapshot of this cycle (and a full one when it asks) */
static int cgs_subtree_ctrl(struct cgs_set *s, struct cgs_subtree *st,
			    const struct cgs_controller *c)
{
	struct cgs_subtree_ctl *ctl = &st->ctl[c->index];
	int fd = ctl->fd >= 0 ? ctl->fd : s->tick_fd;
	bool full = cgs_snap_full(s, st, ctl);
	struct cgs_snap_read sr;
	bool lost = false;
	int r;

	for (int tries = 0; tries < 2; tries++) {
		sr = (struct cgs_snap_read){ .c = c, .ctl = ctl };
		s->snaps++;
		r = cgs_snap_read(s, st, &sr, fd, full);
		if (r < 0)
			return r;
		if (r == 1 && !sr.stale)
			return 0;	/* nothing published */
		ctl->resync = sr.stale || sr.lost;
		lost |= sr.lost;
		if (sr.lost)
			ctl->lost_cycle = s->cycle;
		if (!sr.stale) {
			if (sr.pub.seq > ctl->base) {	/* a new publication */
				ctl->new_cycle[1] = ctl->new_cycle[0];
				ctl->new_cycle[0] = s->cycle;
			}
			ctl->base = sr.pub.seq;
			s->fresh |= c->bit;
			s->snap_pub[c->index] = sr.pub;
			cgs_set_published(s, c, &sr.pub);
			if (sr.full) {
				ctl->last_full = s->cycle;
				cgs_snap_sweep(s, st, c, lost);
			}
		}
		if (!ctl->resync)
			return 0;
		full = true;	/* at once: this cycle's batch tells it */
	}
	return 0;
}

/*
 * Whether removing member @m still awaits a REMOVED record of another
 * controller the kernel keeps final values of (SUBTREE mode, and @m had
 * its values): none came yet, the controller has not published twice
 * since the lead's came (the second publication after the cycle it came
 * in holds a removal captured up to an interval after the lead's), nor
 * said that removals were lost, and CGS_REMOVED_WAIT_USEC have not passed.
 */
static bool cgs_removing_awaits(const struct cgs_set *s, const struct cgs_subtree *st,
				const struct cgs_cg *m, uint64_t now)
{
	if (now - m->removing_usec >= CGS_REMOVED_WAIT_USEC)
		return false;
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];
		const struct cgs_subtree_ctl *ctl = &st->ctl[i];

		if (c == s->lead || s->modes[i] != CGSTREAM_MODE_SUBTREE ||
		    !(m->have & c->bit) || (m->final & c->bit))
			continue;
		if (ctl->new_cycle[1] > m->removing_cycle || ctl->lost_cycle >= m->removing_cycle)
			continue;
		return true;
	}
	return false;
}

/*
 * The members the lead's REMOVED records named, every snapshot read: each
 * is dropped once its other controllers' final values came (or will not,
 * cgs_removing_awaits()); until then it is on the mode's list, touched by
 * none of the lead's snapshots, and reported by no event (cgs_current()).
 * The cost is the removals': the list holds only those waiting.
 */
static void cgs_subtree_drop_removed(struct cgs_set *s, struct cgs_subtree *st)
{
	uint64_t now = cgs_now_usec();
	size_t n = 0;

	/* those already waiting (one whose last REMOVED came now among them) */
	for (size_t i = 0; i < st->n_awaiting; i++) {
		struct cgs_cg *m = st->awaiting[i];

		if (!m->dead && cgs_removing_awaits(s, st, m, now)) {
			st->awaiting[n++] = m;
			continue;
		}
		m->awaiting = false;	/* the set's to free from now on */
		cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
	}
	st->n_awaiting = n;
	/* those the lead's REMOVED named now */
	for (size_t i = 0; i < s->n_touched; i++) {
		struct cgs_cg *m = s->touched[i];

		if (!m->removing || m->dead || m->awaiting)
			continue;
		if (!cgs_removing_awaits(s, st, m, now)) {
			cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
			continue;
		}
		if (st->n_awaiting == st->cap_awaiting) {
			size_t cap = st->cap_awaiting ? 2 * st->cap_awaiting : 16;
			struct cgs_cg **v = realloc(st->awaiting, cap * sizeof(*v));

			if (!v) {	/* no memory: without the others' values */
				cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
				continue;
			}
			st->awaiting = v;
			st->cap_awaiting = cap;
		}
		m->awaiting = true;
		st->awaiting[st->n_awaiting++] = m;
	}
}

static bool cgs_subtree_read(struct cgs_set *s, void *state)
{
	struct cgs_subtree *st = state;

	for (int i = 0; i < CGS_NR_CTRL; i++) {
		int r;

		if (s->modes[i] != CGSTREAM_MODE_SUBTREE)
			continue;
		r = cgs_subtree_ctrl(s, st, cgs_controllers[i]);
		if (r < 0) {
			/* no cgroup is taken for gone on a bad read */
			cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
			return true;
		}
	}
	cgs_subtree_drop_removed(s, st);
	cgs_subtree_expire(s, st);
	return true;
}

const struct cgs_mode cgs_mode_subtree = {
	.mode = CGSTREAM_MODE_SUBTREE,
	.open_tick = cgs_subtree_open_tick,
	.init = cgs_subtree_init,
	.fini = cgs_subtree_fini,
	.tick = cgs_subtree_tick,
	.read = cgs_subtree_read,
	.read_more = cgs_mode_read_done,
	.read_needs_calls = cgs_mode_no_calls,
};
