// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * KERNEL mode: per-cgroup stream files (cpu.stat.stream), on a kernel
 * that has them but no subtree file (or for a group of named cgroups).
 *
 * tick:   one stream file (the group's: the cgroup2 root's; the tree's:
 *         its root's).  The sequence is global: one flush makes every
 *         stream readable.  It is pread() at once so that it polls quiet
 *         until the next flush.  No per-member poll: the flusher's
 *         wake-up walks one waiter per object, not one per cgroup.
 * read:   a pread() of every member's stream at offset 0, which copies
 *         published values and never flushes or blocks.  (Not an io_uring
 *         READ: io_uring completes a short read of a regular file only at
 *         EOF or a full buffer, and for a pollable file it waits for
 *         POLLIN before reading on; the first read has marked the flush
 *         seen, so the READ would complete at the next flush, a whole
 *         interval late.)
 * decode: the text parser (parse.c); a member whose flush_seq did not
 *         move has no sample this cycle.  A removed cgroup's stream
 *         answers ENODEV: REMOVED in that cycle's batch.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

static int cgs_streams_open_tick(const char *dir, uint32_t ms)
{
	uint64_t id;
	int fd, r;

	(void)ms;
	r = cgs_open_data(dir, CGSTREAM_MODE_KERNEL, &fd, &id);
	return r < 0 ? r : fd;
}

static int cgs_streams_init(struct cgs_set *s)
{
	return cgs_mode_buf_init(s, CGS_READ_BUF);
}

static int cgs_streams_tick(struct cgs_set *s, bool reading)
{
	int r = cgs_mode_poll_tick(s);

	(void)reading;	/* a cycle is read within one call */
	if (r <= 0)
		return r;
	/* the read marks the flush seen, so that the fd polls quiet again */
	if (pread(s->tick_fd, s->buf, s->buf_size, 0) < 0)
		return errno == EINTR ? 0 : cgs_read_errno(errno);
	return 1;
}

static void cgs_streams_decode(struct cgs_set *s, struct cgs_cg *m, ssize_t res)
{
	struct cgstream_sample smp;
	int r = cgs_parse_read(s->buf, res, s->buf_size, &smp);

	if (r == -EAGAIN)
		return;	/* no sample this cycle */
	if (r == 0 && !(smp.present & CGSTREAM_F_SEQ))
		r = -EBADMSG;
	if (r < 0) {
		s->ops->failed(s, m, r);
		return;
	}
	if (smp.seq == m->last_seq)
		return;	/* no flush since its last read */
	m->error = 0;
	cgs_set_sampled(s, m, &smp);
}

static bool cgs_streams_read(struct cgs_set *s)
{
	s->cursor = s->head;
	while (s->cursor) {
		struct cgs_cg *m = s->cursor;

		s->cursor = m->next;	/* a drop of @m moves it on too */
		if (m->fd >= 0) {
			ssize_t n = pread(m->fd, s->buf, s->buf_size, 0);

			cgs_streams_decode(s, m, n < 0 ? -errno : n);
		}
	}
	return true;
}

const struct cgs_mode cgs_mode_streams = {
	.mode = CGSTREAM_MODE_KERNEL,
	.open_tick = cgs_streams_open_tick,
	.init = cgs_streams_init,
	.fini = cgs_mode_buf_fini,
	.tick = cgs_streams_tick,
	.read = cgs_streams_read,
	.read_more = cgs_streams_read,
	.read_needs_calls = cgs_mode_reads_at_once,
};
