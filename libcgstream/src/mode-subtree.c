// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SUBTREE mode: a tree through its root's *.stat.stream.subtree files, one
 * read of each per cycle whatever the number of cgroups.
 *
 * tick:   the lead controller's subtree file itself polls readable once
 *         per flush; the other controllers' files are read as of their
 *         own latest flush when the lead's cycle begins.
 * read:   pread()s from offset 0 into a buffer kept from cycle to cycle
 *         (it grows, by doubling, to hold a whole snapshot with room for
 *         one more record of any size, so that a read that leaves that
 *         much room is known to be the last); every live cgroup's record
 *         (memory: a KEYS record first), the root first, parents before
 *         children.
 * decode: cgstream_records_next() (records.c), the whole read checked
 *         before any record is used; each record's id names a member
 *         through the owner's find() (a tree reads the parent's directory
 *         of an id it does not know, once per cycle at most).  Memory's
 *         names come from the KEYS record, shared (memio.c).
 * diff:   a member missing from the lead's snapshot is gone (a snapshot
 *         has every cgroup alive throughout it that has the controller):
 *         REMOVED.  With a lead other than cpu, a cgroup may also lack the
 *         controller: one whose directory is still there stays.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* a read leaving this much room ended the snapshot: no record is larger */
#define CGS_SNAP_SLACK		(1u << 16)
#define CGS_SNAP_MIN		(1u << 17)
#define CGS_SNAP_MAX		(1u << 28)	/* beyond: several reads per cycle */

/* the mode's own: a snapshot's buffer, the other controllers' files */
struct cgs_subtree {
	char *snap;
	size_t snap_size;
	int fds[CGS_NR_CTRL];		/* subtree files but the lead's (the tick) */
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
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (st->fds[i] >= 0)
			close(st->fds[i]);
	free(st->snap);
	free(st);
}

static int cgs_subtree_init(struct cgs_set *s, const char *dir, void **state)
{
	struct cgs_subtree *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	for (int i = 0; i < CGS_NR_CTRL; i++)
		st->fds[i] = -1;
	*state = st;
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (s->modes[i] != CGSTREAM_MODE_SUBTREE || cgs_controllers[i] == s->lead)
			continue;
		st->fds[i] = cgs_subtree_open(dir, cgs_controllers[i]);
		if (st->fds[i] < 0)
			return st->fds[i];	/* the set's fini frees it */
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

/* one record's values into the member it names */
static int cgs_subtree_record(struct cgs_set *s, const struct cgstream_record *rec,
			      const struct cgs_names **layout)
{
	struct cgs_cg *m;
	int r = 0;

	if (rec->type == CGSTREAM_RECORD_KEYS)
		return cgs_memory_layout(s, rec, layout);
	if (!rec->decoded)
		return 0;	/* a kind this library does not read */
	/* only the lead's records find new cgroups: the others' join them */
	m = s->ops->find(s, rec->cgroup_id,
			 rec->type == s->lead->record_type ? rec->parent_id : 0);
	if (!m)
		return 0;	/* not found where it should be: next cycle */
	m->parent_id = rec->parent_id;
	switch (rec->type) {
	case CGSTREAM_RECORD_CPU:
		cgs_set_sampled(s, m, &rec->sample);
		return 0;
	case CGSTREAM_RECORD_MEMORY:
		r = cgs_memory_record(m, rec, *layout);
		break;
	case CGSTREAM_RECORD_IO:
		r = cgs_io_record(m, rec);
		break;
	}
	if (r < 0)
		return r;
	cgs_cg_touch(s, m);
	m->got |= rec->type == CGSTREAM_RECORD_MEMORY ? CGSTREAM_CTRL_MEMORY : CGSTREAM_CTRL_IO;
	return 0;
}

/* @buf[0..@len): records, all valid (checked before any is used), of @c */
static int cgs_subtree_decode(struct cgs_set *s, const struct cgs_controller *c,
			      const char *buf, size_t len, const struct cgs_names **layout)
{
	struct cgstream_record rec;
	size_t off = 0;
	int r;

	while ((r = cgstream_records_next(buf, len, &off, &rec, sizeof(rec))) > 0)
		;
	if (r < 0)
		return r;
	for (off = 0; cgstream_records_next(buf, len, &off, &rec, sizeof(rec)) > 0;) {
		if (rec.type != c->record_type && rec.type != CGSTREAM_RECORD_KEYS)
			continue;	/* a kind this file does not carry */
		r = cgs_subtree_record(s, &rec, layout);
		if (r < 0)
			return r;
	}
	return 0;
}

static int cgs_subtree_snapshot(struct cgs_set *s, struct cgs_subtree *st,
				const struct cgs_controller *c, int fd)
{
	const struct cgs_names *layout = NULL;
	off_t pos = 0;

	for (;;) {
		ssize_t n = pread(fd, st->snap, st->snap_size, pos);
		int r;

		if (n < 0)
			return errno == ENODEV || errno == ENOENT ? -ENODEV : -errno;
		if (n == 0)
			return 0;
		r = cgs_subtree_decode(s, c, st->snap, (size_t)n, &layout);
		if (r < 0)
			return r;
		pos += n;
		if (st->snap_size - (size_t)n >= CGS_SNAP_SLACK)
			return 0;	/* the next record would have fit */
		if (st->snap_size < CGS_SNAP_MAX) {
			/* the next cycles read it all at once */
			char *b = malloc(st->snap_size * 2);

			if (b) {
				free(st->snap);
				st->snap = b;
				st->snap_size *= 2;
			}
		}
	}
}

/* a member the lead's snapshot did not name: gone, or without the lead */
static bool cgs_subtree_gone(const struct cgs_set *s, const struct cgs_cg *m)
{
	struct stat st;

	if (s->lead == &cgs_cpu)
		return true;	/* every cgroup has cpu.stat */
	return stat(m->path, &st) < 0 || (uint64_t)st.st_ino != m->id;
}

static bool cgs_subtree_read(struct cgs_set *s, void *state)
{
	struct cgs_subtree *st = state;

	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];
		int r;

		if (s->modes[i] != CGSTREAM_MODE_SUBTREE)
			continue;
		r = cgs_subtree_snapshot(s, st, c, c == s->lead ? s->tick_fd : st->fds[i]);
		if (r < 0) {
			/* no cgroup is taken for gone on a bad read */
			cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
			return true;
		}
	}
	if (s->modes[s->lead->index] != CGSTREAM_MODE_SUBTREE)
		return true;	/* the members' reads tell who is gone */
	for (struct cgs_cg *m = s->tail, *prev; m; m = prev) {
		prev = m->prev;
		if ((m->cycle != s->cycle || !(m->got & s->lead->bit)) && cgs_subtree_gone(s, m))
			cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
	}
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
