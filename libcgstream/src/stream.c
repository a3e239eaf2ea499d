// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One cgroup's stream: a set of one member (cycle.c), read by the same
 * modes as a group's, with plain reads (no io_uring for one cgroup).
 *
 * KERNEL: the tick is the cgroup's own stream file of the lead controller:
 * it polls readable once per flush this open file has not read, and
 * EPOLLERR once the cgroup is removed.  FALLBACK: a CLOCK_MONOTONIC
 * timerfd at the interval; a read consumes the expirations and reads the
 * *.stat files (which flush in the kernel, as any reader of them does).
 * The fd is the set's epoll fd, readable when a read would hand out
 * something new.  A read hands out the next event of the set: a SAMPLE,
 * or REMOVED once the cgroup is gone (then -ENODEV for good).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct cgstream {
	struct cgs_set set;
	char *path;
	bool removed;
};

/* gone: a REMOVED event, then the end; else an ERROR, and it stays */
static void cgs_stream_failed(struct cgs_set *s, struct cgs_cg *m, int err)
{
	if (err != -ENODEV) {
		cgs_set_error(s, m, err);
		return;
	}
	cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
	cgs_set_end(s, -ENODEV);
}

static int cgs_stream_tick_failed(struct cgs_set *s, int err)
{
	if (err == -ENODEV && s->head)
		cgs_stream_failed(s, s->head, err);
	return err;
}

static const struct cgs_set_ops cgs_stream_ops = {
	.failed = cgs_stream_failed,
	.tick_failed = cgs_stream_tick_failed,
};

CGS_EXPORT int cgstream_open(const char *cgroup, const struct cgstream_opts *opts,
			     struct cgstream **ret)
{
	struct cgs_set_conf conf;
	struct cgstream *st;
	struct cgs_cg *m = NULL;
	struct cgs_opts o;
	char *root = NULL;
	int r;

	if (!cgroup || !ret)
		return -EINVAL;
	r = cgs_opts_load(opts, &o);
	if (r < 0)
		return r;
	if (o.mode == CGSTREAM_MODE_SUBTREE)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	r = cgs_find_root(&o, &root);
	if (r == 0)
		r = cgs_resolve(root, cgroup, &st->path);
	if (r == 0)
		r = cgs_set_conf_pick(&conf, st->path, root, &o, false);
	if (r < 0)
		goto fail;
	conf.plain = true;
	conf.report = CGSTREAM_REPORT_ALL;	/* a sample per cycle: what a read hands out */
	r = cgs_set_init(&st->set, &cgs_stream_ops, &conf);
	if (r < 0)
		goto fail;
	m = cgs_cg_new(st->path, strlen(st->path));
	if (!m) {
		r = -ENOMEM;
		goto fail;
	}
	m->announced = true;	/* a stream has no ADDED events */
	r = cgs_cg_open(&st->set, m, &m->id);
	if (r == 0)
		r = cgs_set_link(&st->set, m);
	if (r < 0)
		goto fail;
	free(root);
	*ret = st;
	return 0;
fail:
	if (m && !m->prev && st->set.head != m)
		cgs_cg_free(m);
	free(root);
	cgstream_close(st);
	return r;
}

CGS_EXPORT void cgstream_close(struct cgstream *st)
{
	if (!st)
		return;
	cgs_set_fini(&st->set);
	free(st->path);
	free(st);
}

CGS_EXPORT int cgstream_fd(const struct cgstream *st)
{
	return st ? st->set.epoll_fd : -EINVAL;
}

CGS_EXPORT int cgstream_mode(const struct cgstream *st)
{
	return st ? st->set.src->mode : -EINVAL;
}

CGS_EXPORT int cgstream_ctrl_mode(const struct cgstream *st, unsigned int ctrl)
{
	return st ? cgs_set_ctrl_mode(&st->set, ctrl) : -EINVAL;
}

CGS_EXPORT const char *cgstream_path(const struct cgstream *st)
{
	return st ? st->path : NULL;
}

CGS_EXPORT int cgstream_wait(struct cgstream *st, int timeout_ms)
{
	if (!st)
		return -EINVAL;
	if (st->removed)
		return 1;	/* the next read reports -ENODEV at once */
	/* POLLERR of the stream file counts as ready: the read will say -ENODEV */
	return cgs_poll_in(st->set.epoll_fd, timeout_ms);
}

/*
 * The next event into @ev: 0 with a SAMPLE, or the REMOVED of the cgroup
 * (then -ENODEV for good); -EAGAIN; -errno (an ERROR's)
 */
static int cgs_stream_next(struct cgstream *st, struct cgstream_event *ev)
{
	int n;

	if (st->removed)
		return -ENODEV;
	n = cgs_set_process(&st->set, ev, 1, sizeof(*ev));
	if (n == 0)
		return -EAGAIN;
	if (n < 0) {
		st->removed = n == -ENODEV;
		return n;
	}
	if (ev->type == CGSTREAM_EVENT_REMOVED)
		st->removed = true;
	return ev->type == CGSTREAM_EVENT_ERROR ? ev->error : 0;
}

CGS_EXPORT int cgstream_read(struct cgstream *st, struct cgstream_sample *sample,
			     size_t sample_size)
{
	struct cgstream_event ev;
	int r;

	if (!st || !sample || sample_size < CGS_SAMPLE_SIZE_1_0)
		return -EINVAL;
	r = cgs_stream_next(st, &ev);
	if (r == 0 && ev.type == CGSTREAM_EVENT_REMOVED)
		return -ENODEV;
	if (r == 0)
		cgs_copy_sample(sample, sample_size, &ev.sample);
	return r;
}

CGS_EXPORT int cgstream_read_event(struct cgstream *st, struct cgstream_event *event,
				   size_t event_size)
{
	struct cgstream_event ev;
	int r;

	if (!st || !event || event_size < CGS_EVENT_SIZE_1_0)
		return -EINVAL;
	r = cgs_stream_next(st, &ev);
	if (r == 0)
		cgs_copy_event(event, event_size, &ev);
	return r;
}
