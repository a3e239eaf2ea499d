// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cycle of a group or a tree, in named phases (internal.h):
 *
 *   WAIT --tick--> READ --all read and decoded--> EMIT --handed out--> WAIT
 *
 * tick:    the mode's tick fd says a cycle begins (a flush, or the timer);
 *          the owner refreshes its membership (a tree finds new cgroups);
 * read:    the mode reads every member and decodes the values into it
 *          (mode-subtree.c: one snapshot of records; mode-streams.c: each
 *          stream file; mode-emulation.c: each cpu.stat, io_uring or plain);
 *          members whose read says they are gone are dropped (members.c);
 * collect: the batch: REMOVED and ERROR, ADDED for members seen the first
 *          time, a SAMPLE per member read in this cycle;
 * emit:    the batch is handed out over as many process calls as the
 *          caller's array needs, before any new cycle begins.
 *
 * The caller's fd is an epoll fd holding the tick fd and an eventfd that
 * the cycle writes when the caller should call process again (more of
 * the batch, plain reads to go on with, the end to tell).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

static void cgs_wake(struct cgs_set *s)
{
	eventfd_write(s->wake_fd, 1);
}

void cgs_set_end(struct cgs_set *s, int err)
{
	if (s->err)
		return;
	s->err = err;
	/* a failed tick fd would keep the caller's fd readable */
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->tick_fd, NULL);
}

/* phase READ begins: the owner's refresh, then the mode's reads; true
 * when the cycle is read (or ended) already */
static bool cgs_cycle_begin(struct cgs_set *s)
{
	int r;

	s->cycle++;
	s->phase = CGS_PHASE_READ;
	r = s->ops->refresh ? s->ops->refresh(s) : 0;
	if (r < 0) {
		cgs_set_end(s, r);
		return true;
	}
	return s->src->read(s) || s->err;
}

/* the end of phase READ: the batch */
static void cgs_cycle_collect(struct cgs_set *s)
{
	cgs_set_collect(s);
	s->phase = CGS_PHASE_EMIT;
	s->emitted = 0;
}

static size_t cgs_batch_size(const struct cgs_set *s)
{
	return s->first.n + s->added.n + s->samples.n;
}

static const struct cgs_ev *cgs_batch_at(const struct cgs_set *s, size_t i)
{
	if (i < s->first.n)
		return &s->first.v[i];
	i -= s->first.n;
	if (i < s->added.n)
		return &s->added.v[i];
	return &s->samples.v[i - s->added.n];
}

static size_t cgs_cycle_emit(struct cgs_set *s, struct cgstream_event *events, size_t max,
			     size_t event_size)
{
	size_t total = cgs_batch_size(s), n = 0;

	while (s->emitted < total && n < max) {
		const struct cgs_ev *e = cgs_batch_at(s, s->emitted++);
		const struct cgs_cg *m = e->cg;
		struct cgstream_event ev = {
			.type = e->type,
			.error = e->error,
			.path = m->path,
			.userdata = m->userdata,
			.parent_id = m->parent_id,
		};

		if (m->quiet)
			continue;	/* the caller removed it meanwhile */
		if (e->type == CGSTREAM_EVENT_SAMPLE) {
			ev.sample = m->sample;
		} else {
			ev.sample.cgroup_id = m->id;
			ev.sample.present = CGSTREAM_F_CGROUP_ID;
		}
		cgs_copy_event((char *)events + n * event_size, event_size, &ev);
		n++;
	}
	return n;
}

static bool cgs_batch_left(const struct cgs_set *s)
{
	return s->phase == CGS_PHASE_EMIT && s->emitted < cgs_batch_size(s);
}

int cgs_set_process(struct cgs_set *s, struct cgstream_event *events, size_t max,
		    size_t event_size)
{
	bool read_done = false;
	eventfd_t wakes;
	size_t n = 0;
	int r;

	if ((!events && max) || event_size < CGS_EVENT_SIZE_1_0)
		return -EINVAL;

	if (s->phase == CGS_PHASE_EMIT) {
		if (cgs_batch_left(s)) {
			n = cgs_cycle_emit(s, events, max, event_size);
			goto out;
		}
		cgs_set_uncollect(s);	/* handed out: its paths may go now */
		s->phase = CGS_PHASE_WAIT;
	}
	cgs_set_reap(s);
	if (s->err && s->phase == CGS_PHASE_WAIT)
		goto out;	/* the end, told after the last batch */

	/* our own wake-ups: whatever comes after this read is seen */
	eventfd_read(s->wake_fd, &wakes);

	if (s->phase == CGS_PHASE_READ)
		read_done = s->src->read_more(s);
	/*
	 * A cycle read to the end is handed out before the next one begins
	 * (its tick waits); while an emulated cycle is still read, its ticks
	 * count as missed.
	 */
	if (!read_done) {
		bool reading = s->phase == CGS_PHASE_READ;

		r = s->err ? 0 : s->src->tick(s, reading);
		if (r < 0) {
			cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
			read_done = !reading;	/* what the cycle has is told */
		} else if (r > 0) {
			read_done = cgs_cycle_begin(s);
		}
	}
	if (read_done)
		cgs_cycle_collect(s);
	if (s->phase == CGS_PHASE_EMIT)
		n = cgs_cycle_emit(s, events, max, event_size);
out:
	/* more to hand out, reads to go on with, or the end to tell */
	if (cgs_batch_left(s) || s->err ||
	    (s->phase == CGS_PHASE_READ && s->src->read_needs_calls(s)))
		cgs_wake(s);
	else if (s->phase != CGS_PHASE_READ)
		eventfd_read(s->wake_fd, &wakes);	/* quiet until the next cycle */
	if (n == 0 && s->err && !cgs_batch_left(s))
		return s->err;
	return (int)n;
}

/* --- setup --- */

static int cgs_epoll_add(int epfd, int fd)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops, const struct cgs_mode *src,
		 int tick_fd)
{
	int r;

	*s = (struct cgs_set){ .ops = ops, .src = src, .tick_fd = tick_fd,
			       .epoll_fd = -1, .wake_fd = -1 };
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epoll_fd < 0 || s->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = cgs_epoll_add(s->epoll_fd, s->wake_fd);
	if (r == 0)
		r = cgs_epoll_add(s->epoll_fd, tick_fd);
	if (r == 0)
		r = src->init(s);
	if (r < 0)
		goto fail;
	return 0;
fail:
	cgs_set_fini(s);
	return r;
}

void cgs_set_fini(struct cgs_set *s)
{
	if (!s->ops)
		return;	/* never set up, or finished */
	s->src->fini(s);	/* waits, bounded, for reads in flight */
	cgs_set_free_members(s, s->uring == NULL);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->tick_fd >= 0)
		close(s->tick_fd);
	*s = (struct cgs_set){ 0 };
}
