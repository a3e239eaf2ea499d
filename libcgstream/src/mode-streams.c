// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * KERNEL mode: per-cgroup stream files (cpu.stat.stream,
 * memory.stat.stream with memory.current, memory.swap.current and
 * memory.events, io.stat.stream), on a kernel that has them but no
 * subtree file (or for a group of named cgroups, or one stream).
 *
 * tick:   one stream file of the lead controller (the group's: the
 *         cgroup2 root's; the tree's: its root's; a stream's: its own).
 *         The sequence is the controller's: one flush makes every one of
 *         its streams readable.  It is pread() at once so that it polls
 *         quiet until the next flush.  No per-member poll: the flusher's
 *         wake-up walks one waiter per object, not one per cgroup.
 * read:   a pread() of every member's files at offset 0, which copies
 *         published values and never flushes or blocks; the lead's first.
 *         (Not an io_uring READ: io_uring completes a short read of a
 *         regular file only at EOF or a full buffer, and for a pollable
 *         file it waits for POLLIN before reading on; the first read has
 *         marked the flush seen, so the READ would complete at the next
 *         flush, a whole interval late.)
 * decode: the text parsers (parse.c, through cgs_mode_decode_text()); a
 *         member whose lead's publication_seq did not move has no sample this
 *         cycle (but in a cycle begun by a sync); the other controllers'
 *         values are those of their own latest flush.  A removed cgroup's
 *         stream answers ENODEV: REMOVED in that cycle's batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* the mode's own: its plain reads' buffers */
struct cgs_streams {
	struct cgs_reader rd;
};

static int cgs_streams_open_tick(const char *dir, uint32_t ms, const struct cgs_controller *lead)
{
	int fd;

	(void)ms;
	fd = cgs_open_in(dir, lead->stream_file);
	return fd == -ENOENT ? -EOPNOTSUPP : fd;
}

static int cgs_streams_init(struct cgs_set *s, const char *dir, void **state)
{
	struct cgs_streams *st = calloc(1, sizeof(*st));

	(void)s;
	(void)dir;
	if (!st || cgs_reader_init(&st->rd) < 0) {
		free(st);
		return -ENOMEM;
	}
	*state = st;
	return 0;
}

static void cgs_streams_fini(struct cgs_set *s, void *state)
{
	struct cgs_streams *st = state;

	(void)s;
	cgs_reader_fini(&st->rd);
	free(st);
}

static int cgs_streams_tick(struct cgs_set *s, void *state, bool reading)
{
	struct cgs_streams *st = state;
	int r = cgs_mode_poll_tick(s);

	(void)reading;	/* a cycle is read within one call */
	if (r <= 0)
		return r;
	/*
	 * The read marks the publication seen, so that the fd polls quiet
	 * again.  ENODATA: the tick's cgroup is newer than the publication
	 * (the kernel still polls it readable): no cycle until the next one.
	 */
	if (pread(s->tick_fd, st->rd.buf, st->rd.size, 0) < 0)
		return errno == EINTR || errno == ENODATA ? 0 : cgs_read_errno(errno);
	return 1;
}

static bool cgs_streams_read(struct cgs_set *s, void *state)
{
	struct cgs_streams *st = state;
	int r;

	s->cursor = s->head;
	while (s->cursor) {
		struct cgs_cg *m = s->cursor;

		s->cursor = m->next;	/* a drop of @m moves it on too */
		if (m->skip_cycle == s->cycle)
			continue;
		/* a member over the fd budget: its files for this read only */
		if ((r = cgs_cg_open_transient(s, m)) < 0) {
			s->ops->failed(s, m, r);
			continue;
		}
		for (int i = 0; i < CGS_NR_CTRL; i++) {
			if (s->modes[i] != CGSTREAM_MODE_KERNEL)
				continue;
			if (cgs_mode_read_plain(s, &st->rd, m, cgs_controllers[i], NULL) != 0)
				break;	/* no new flush of the lead, or dropped */
		}
		cgs_cg_close_transient(m);
	}
	return true;
}

const struct cgs_mode cgs_mode_streams = {
	.mode = CGSTREAM_MODE_KERNEL,
	.open_tick = cgs_streams_open_tick,
	.init = cgs_streams_init,
	.fini = cgs_streams_fini,
	.tick = cgs_streams_tick,
	.read = cgs_streams_read,
	.read_more = cgs_mode_read_done,
	.read_needs_calls = cgs_mode_no_calls,
};
