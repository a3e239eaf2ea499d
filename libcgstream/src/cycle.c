// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cycle of a group or a tree, in named phases (internal.h):
 *
 *   WAIT --tick--> READ --all read and decoded--> EMIT --handed out--> WAIT
 *
 * tick:    the mode's tick fd says a cycle begins (a flush, or the timer);
 *          the owner refreshes its membership (a tree finds new cgroups);
 * read:    each mode the set's controllers are in reads every member and
 *          decodes the values into it (mode-subtree.c: one snapshot of
 *          records per controller; mode-streams.c: each stream file;
 *          mode-emulation.c: each *.stat file, io_uring or plain), in that
 *          order, the lead controller first within a mode; members whose
 *          read says they are gone are dropped (members.c);
 * collect: the batch: REMOVED and ERROR (with the members' last values),
 *          ADDED for members seen the first time, then a SAMPLE per member
 *          with values this cycle (CGSTREAM_REPORT_ALL) or a CHANGED per
 *          member whose values a read of this cycle changed (_CHANGES:
 *          the members the reads touched, not all of them);
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

/* the modes that read, in the order they read: snapshots, streams, emulation */
static const int cgs_read_order[] = {
	CGSTREAM_MODE_SUBTREE, CGSTREAM_MODE_KERNEL, CGSTREAM_MODE_FALLBACK,
};
#define CGS_NR_MODES	(sizeof(cgs_read_order) / sizeof(cgs_read_order[0]))

/* the @i-th mode in read order, when the set reads some controller in it */
static const struct cgs_mode *cgs_used_mode(const struct cgs_set *s, size_t i)
{
	return s->by_mode[cgs_read_order[i]] && s->mode_state[cgs_read_order[i]] ?
	       cgs_mode_of(cgs_read_order[i]) : NULL;
}

static void *cgs_state(const struct cgs_set *s, const struct cgs_mode *mode)
{
	return s->mode_state[mode->mode];
}

/* phase READ begins: the owner's refresh, then the modes' reads; true
 * when the cycle is read (or ended) already */
static bool cgs_cycle_begin(struct cgs_set *s, bool sync)
{
	bool done = true;
	int r;

	s->cycle++;
	s->sync = sync;
	s->phase = CGS_PHASE_READ;
	s->fresh = 0;
	r = s->ops->refresh ? s->ops->refresh(s) : 0;
	if (r < 0) {
		cgs_set_end(s, r);
		return true;
	}
	for (size_t i = 0; i < CGS_NR_MODES && !s->err; i++) {
		const struct cgs_mode *mode = cgs_used_mode(s, i);

		if (mode)
			done &= mode->read(s, cgs_state(s, mode));
	}
	return done || s->err;
}

/* each mode's reads under way go on; true once all are done */
static bool cgs_cycle_read_more(struct cgs_set *s)
{
	bool done = true;

	for (size_t i = 0; i < CGS_NR_MODES; i++) {
		const struct cgs_mode *mode = cgs_used_mode(s, i);

		if (mode)
			done &= mode->read_more(s, cgs_state(s, mode));
	}
	return done;
}

static bool cgs_cycle_read_needs_calls(const struct cgs_set *s)
{
	for (size_t i = 0; i < CGS_NR_MODES; i++) {
		const struct cgs_mode *mode = cgs_used_mode(s, i);

		if (mode && mode->read_needs_calls(s, cgs_state(s, mode)))
			return true;
	}
	return false;
}

/* the end of phase READ: the batch */
static void cgs_cycle_collect(struct cgs_set *s)
{
	cgs_set_collect(s);
	memcpy(s->pub, s->pub_read, sizeof(s->pub));	/* as of this cycle */
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
		ev.sample.cgroup_id = m->id;
		ev.sample.present = CGSTREAM_F_CGROUP_ID;
		/* a REMOVED with values for callers that know it may have them */
		if (e->type == CGSTREAM_EVENT_SAMPLE || e->type == CGSTREAM_EVENT_CHANGED ||
		    (e->type == CGSTREAM_EVENT_REMOVED && event_size >= CGS_EVENT_SIZE_1_3))
			cgs_event_values(s, e, &ev);
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
		read_done = cgs_cycle_read_more(s);
	/*
	 * A cycle read to the end is handed out before the next one begins
	 * (its tick waits); while an emulated cycle is still read, its ticks
	 * count as missed.
	 */
	if (!read_done) {
		bool reading = s->phase == CGS_PHASE_READ;

		r = s->err ? 0 : s->src->tick(s, cgs_state(s, s->src), reading);
		if (r < 0) {
			cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
			read_done = !reading;	/* what the cycle has is told */
		} else if (r > 0) {
			read_done = cgs_cycle_begin(s, false);
		}
	}
	if (read_done)
		cgs_cycle_collect(s);
	if (s->phase == CGS_PHASE_EMIT)
		n = cgs_cycle_emit(s, events, max, event_size);
out:
	/* more to hand out, reads to go on with, or the end to tell */
	if (cgs_batch_left(s) || s->err ||
	    (s->phase == CGS_PHASE_READ && cgs_cycle_read_needs_calls(s)))
		cgs_wake(s);
	else if (s->phase != CGS_PHASE_READ)
		eventfd_read(s->wake_fd, &wakes);	/* quiet until the next cycle */
	if (n == 0 && s->err && !cgs_batch_left(s))
		return s->err;
	return (int)n;
}

int cgs_set_sync(struct cgs_set *s)
{
	if (s->phase == CGS_PHASE_READ || cgs_batch_left(s))
		return -EBUSY;
	if (s->err)
		return s->err;
	if (s->phase == CGS_PHASE_EMIT)
		cgs_set_uncollect(s);	/* handed out: its paths may go now */
	s->phase = CGS_PHASE_WAIT;
	cgs_set_reap(s);
	if (cgs_cycle_begin(s, true))
		cgs_cycle_collect(s);
	cgs_wake(s);	/* the batch, or the reads to go on with */
	return 0;
}

int cgs_set_ctrl_mode(const struct cgs_set *s, unsigned int bit)
{
	const struct cgs_controller *c = cgs_controller_of_bit(bit);

	if (!c)
		return -EINVAL;
	return s->modes[c->index] ? s->modes[c->index] : -ENOENT;
}

/* a publication needs its seq and its time; the newest one counts (a
 * removed cgroup's final values may be as of an older one) */
#define CGS_PUB_NEEDS	(CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME)

void cgs_set_published(struct cgs_set *s, const struct cgs_controller *c,
		       const struct cgs_flush *f)
{
	struct cgs_flush *p = &s->pub_read[c->index];

	if ((f->present & CGS_PUB_NEEDS) != CGS_PUB_NEEDS)
		return;
	if ((p->present & CGS_PUB_NEEDS) != CGS_PUB_NEEDS || f->seq > p->seq)
		*p = *f;
}

int cgs_set_publication(const struct cgs_set *s, unsigned int bit, struct cgs_flush *f)
{
	const struct cgs_controller *c = cgs_controller_of_bit(bit);

	if (!c)
		return -EINVAL;
	if (!s->modes[c->index])
		return -ENOENT;
	if ((s->pub[c->index].present & CGS_PUB_NEEDS) != CGS_PUB_NEEDS)
		return -ENODATA;
	*f = s->pub[c->index];
	return 0;
}

/* --- setup --- */

static int cgs_epoll_add(int epfd, int fd)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops,
		 const struct cgs_set_conf *conf)
{
	int r, tick_fd;

	*s = (struct cgs_set){ .ops = ops, .epoll_fd = -1, .wake_fd = -1, .tick_fd = -1,
			       .ctrls = conf->ctrls, .plain = conf->plain, .report = conf->report };
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];

		if (!(conf->ctrls & c->bit))
			continue;
		s->modes[i] = conf->modes[i];
		s->by_mode[conf->modes[i] & 3] |= c->bit;
		if (!s->lead)
			s->lead = c;
	}
	if (!s->lead)
		return -EINVAL;
	s->src = cgs_mode_of(s->modes[s->lead->index]);
	tick_fd = s->src->open_tick(conf->dir, conf->fallback_ms, s->lead);
	if (tick_fd < 0) {
		*s = (struct cgs_set){ 0 };
		return tick_fd;
	}
	s->tick_fd = tick_fd;
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epoll_fd < 0 || s->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = cgs_epoll_add(s->epoll_fd, s->wake_fd);
	if (r == 0)
		r = cgs_epoll_add(s->epoll_fd, tick_fd);
	for (size_t i = 0; i < CGS_NR_MODES && r == 0; i++) {
		int mode = cgs_read_order[i];

		if (s->by_mode[mode])
			r = cgs_mode_of(mode)->init(s, conf->dir, &s->mode_state[mode]);
	}
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
	for (size_t i = 0; i < CGS_NR_MODES; i++) {
		const struct cgs_mode *mode = cgs_used_mode(s, i);

		if (mode)	/* waits, bounded, for reads under way */
			mode->fini(s, cgs_state(s, mode));
	}
	/* a member whose read is still out (the mode could not wait it out) leaks */
	cgs_set_free_members(s);
	cgs_values_free_set(s);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->tick_fd >= 0)
		close(s->tick_fd);
	*s = (struct cgs_set){ 0 };
}
