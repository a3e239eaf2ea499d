// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SUBTREE mode: a tree through its root's cpu.stat.stream.subtree, one
 * read per cycle whatever the number of cgroups.
 *
 * tick:   the subtree file itself polls readable once per flush.
 * read:   pread()s from offset 0 into a buffer kept from cycle to cycle
 *         (it grows, by doubling, to hold the whole snapshot with room for
 *         one more record of any size, so that a read that leaves that
 *         much room is known to be the last); every live cgroup's record,
 *         the root first, parents before children.
 * decode: cgstream_records_next() (records.c); each record's id names a
 *         member through the owner's find() (a tree reads the parent's
 *         directory of an id it does not know, once per cycle at most).
 * diff:   a member missing from the snapshot is gone (a snapshot has
 *         every cgroup alive throughout it): REMOVED.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* a read leaving this much room ended the snapshot: no record is larger */
#define CGS_SNAP_SLACK		(1u << 16)
#define CGS_SNAP_MIN		(1u << 17)
#define CGS_SNAP_MAX		(1u << 28)	/* beyond: several reads per cycle */

static int cgs_subtree_open_tick(const char *dir, uint32_t ms)
{
	char path[PATH_MAX];
	int fd;

	(void)ms;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, cgs_cpu.subtree_file) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	return fd;
}

static int cgs_subtree_init(struct cgs_set *s)
{
	return cgs_mode_buf_init(s, CGS_SNAP_MIN);
}

static int cgs_subtree_tick(struct cgs_set *s, bool reading)
{
	(void)reading;	/* a cycle is read within one call */
	return cgs_mode_poll_tick(s);	/* POLLERR: the read hears of it */
}

/* @buf[0..@len): records, all valid (checked before any is used) */
static int cgs_subtree_decode(struct cgs_set *s, const char *buf, size_t len)
{
	struct cgstream_record rec;
	size_t off = 0;
	int r;

	while ((r = cgstream_records_next(buf, len, &off, &rec, sizeof(rec))) > 0)
		;
	if (r < 0)
		return r;
	for (off = 0; cgstream_records_next(buf, len, &off, &rec, sizeof(rec)) > 0;) {
		struct cgs_cg *m;

		if (rec.type != CGSTREAM_RECORD_CPU)
			continue;	/* a kind this mode does not read */
		m = s->ops->find(s, rec.cgroup_id, rec.parent_id);
		if (!m)
			continue;	/* not found where it should be: next cycle */
		m->parent_id = rec.parent_id;
		cgs_set_sampled(s, m, &rec.sample);
	}
	return 0;
}

static int cgs_subtree_snapshot(struct cgs_set *s)
{
	off_t pos = 0;

	for (;;) {
		ssize_t n = pread(s->tick_fd, s->buf, s->buf_size, pos);
		int r;

		if (n < 0)
			return errno == ENODEV || errno == ENOENT ? -ENODEV : -errno;
		if (n == 0)
			return 0;
		r = cgs_subtree_decode(s, s->buf, (size_t)n);
		if (r < 0)
			return r;
		pos += n;
		if (s->buf_size - (size_t)n >= CGS_SNAP_SLACK)
			return 0;	/* the next record would have fit */
		if (s->buf_size < CGS_SNAP_MAX) {
			/* the next cycles read it all at once */
			char *b = malloc(s->buf_size * 2);

			if (b) {
				free(s->buf);
				s->buf = b;
				s->buf_size *= 2;
			}
		}
	}
}

static bool cgs_subtree_read(struct cgs_set *s)
{
	int r = cgs_subtree_snapshot(s);

	if (r < 0) {
		/* no cgroup is taken for gone on a bad read */
		cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
		return true;
	}
	for (struct cgs_cg *m = s->tail, *prev; m; m = prev) {
		prev = m->prev;
		if (m->cycle != s->cycle)
			cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
	}
	return true;
}

const struct cgs_mode cgs_mode_subtree = {
	.mode = CGSTREAM_MODE_SUBTREE,
	.open_tick = cgs_subtree_open_tick,
	.init = cgs_subtree_init,
	.fini = cgs_mode_buf_fini,
	.tick = cgs_subtree_tick,
	.read = cgs_subtree_read,
	.read_more = cgs_subtree_read,
	.read_needs_calls = cgs_mode_reads_at_once,
};
