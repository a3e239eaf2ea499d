// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Many cgroups through one io_uring.
 *
 * Both modes are paced by one "tick" fd with a POLL_ADD (POLLIN) in flight;
 * each tick reads every cgroup once, so that one cycle comes back as one
 * batch.
 *
 * Kernel mode: the tick is the group root's own cpu.stat.stream (the
 * sequence is global: one flush makes every stream readable), read at once
 * so that it waits for the next flush.  Each tick then pread()s every
 * cgroup's stream at offset 0: a stream read copies published values and
 * never flushes or blocks.  (Not an io_uring READ: io_uring completes a
 * short read of a regular file only at EOF or a full buffer, and for a
 * pollable file it waits for POLLIN before reading on; the first read has
 * marked the flush seen, so the READ completed at the next flush, a whole
 * interval late.  cpu.stat always polls readable, so fallback's READs do
 * not wait.)  Every cgroup's stream fd also has a
 * POLL_ADD for POLLERR | POLLHUP only: the flusher's POLLIN-keyed wake-ups
 * pass it by, and a removed cgroup's file answers EPOLLERR.  A cgroup
 * added between ticks is read by the next process call.
 *
 * Fallback mode: the tick is a timerfd; each tick queues an io_uring READ
 * of every cgroup's cpu.stat (which flushes, so the reads run in parallel
 * and the caller never blocks on one), all stamped with the group's cycle
 * number and tick time.  The same parser and error path as kernel mode.
 *
 * The group's fd is an eventfd registered with the ring: it becomes
 * readable when a completion is posted.  cgstream_group_process() drains
 * what completed, reads the tick's cgroups (fallback: waits, bounded, only
 * for the reads it issued itself), re-arms the polls with one submission,
 * then returns one event per cgroup.  When nothing completed it returns 0
 * and leaves the eventfd unreadable: no spinning.
 *
 * Lifetime: io_uring holds a member's address (user_data) and buffer while
 * one of its requests is in flight.  A dropped member (removed by the
 * kernel or by the caller, or failed) is moved to the dead list, its
 * requests are cancelled, and it is freed only once every request has
 * completed and the caller has had its last event (paths stay valid until
 * the next process call).  cgstream_group_free() cancels and waits; if the
 * kernel does not complete a request in time the memory is leaked rather
 * than freed under io_uring's feet.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "internal.h"

/* user_data: a member's address with the operation in the low bits */
enum {
	CGS_OP_POLL = 1,
	CGS_OP_READ = 2,
	CGS_OP_CANCEL = 3,	/* cancellation of a member's request */
	CGS_OP_TICK = 4,	/* the tick fd's poll; no member */
	CGS_OP_TICK_CANCEL = 5,
	CGS_OP_MASK = 7,
};

#define CGS_SQ_ENTRIES	256	/* submissions beyond this are flushed early */
#define CGS_CQ_ENTRIES	4096	/* completions; kernels since 5.5 never drop */
#define CGS_READ_WAIT_MS 1000	/* bound on waiting for our own reads */
#define CGS_FREE_WAIT_MS 2000	/* bound on waiting for cancellations */

struct cgs_member {
	struct cgs_member *next_dead;
	char *path;
	void *userdata;
	int fd;			/* cpu.stat.stream or cpu.stat */
	uint64_t id;		/* the cgroup's: its directory's inode */
	unsigned int inflight;	/* requests not completed */
	bool polling;		/* POLL_ADD (kernel mode: errors only) in flight */
	bool reading;		/* READ in flight (fallback) */
	bool needs_arm;		/* re-arm the poll at the end of process */
	bool fresh;		/* added since the last tick: not read yet */
	bool dead;
	bool pending;		/* .ev waits to be returned */
	uint64_t last_seq;
	struct cgstream_event ev;
	char buf[CGS_READ_BUF];
} __attribute__((aligned(8)));

struct cgstream_group {
	struct io_uring ring;
	bool ring_ready;
	int mode;
	int event_fd;
	char *root;

	struct cgs_member **members;	/* live, in the order added */
	size_t n_members, cap_members;
	struct cgs_member *dead;

	unsigned int reads_inflight;

	/* the pace: a timerfd (fallback) or the root's cpu.stat.stream */
	int tick_fd;
	unsigned int tick_inflight;
	bool tick_polling;
	bool tick;		/* read every member in this process call */
	bool fresh;		/* some member is fresh */
	int tick_err;		/* the tick fd failed: process returns it */

	/* fallback: the group's own cycle */
	uint64_t seq, missed, tick_usec;
};

static inline uint64_t cgs_ud(struct cgs_member *m, int op)
{
	return (uint64_t)(uintptr_t)m | (uint64_t)op;
}

/* an SQE, flushing the submission queue first when it is full */
static struct io_uring_sqe *cgs_sqe(struct cgstream_group *g)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&g->ring);

	if (!sqe && io_uring_submit(&g->ring) >= 0)
		sqe = io_uring_get_sqe(&g->ring);
	return sqe;
}

/* kernel mode: a member's poll reports only its removal (or an error) */
static int cgs_arm_poll(struct cgstream_group *g, struct cgs_member *m)
{
	struct io_uring_sqe *sqe = cgs_sqe(g);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, m->fd, POLLERR | POLLHUP);
	io_uring_sqe_set_data64(sqe, cgs_ud(m, CGS_OP_POLL));
	m->polling = true;
	m->needs_arm = false;
	m->inflight++;
	return 0;
}

static int cgs_arm_read(struct cgstream_group *g, struct cgs_member *m)
{
	struct io_uring_sqe *sqe;

	if (m->reading)
		return 0;
	sqe = cgs_sqe(g);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, m->fd, m->buf, sizeof(m->buf), 0);
	io_uring_sqe_set_data64(sqe, cgs_ud(m, CGS_OP_READ));
	m->reading = true;
	m->inflight++;
	g->reads_inflight++;
	return 0;
}

static int cgs_arm_tick(struct cgstream_group *g)
{
	struct io_uring_sqe *sqe = cgs_sqe(g);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, g->tick_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, cgs_ud(NULL, CGS_OP_TICK));
	g->tick_polling = true;
	g->tick_inflight++;
	return 0;
}

static void cgs_cancel(struct cgstream_group *g, struct cgs_member *m, int op)
{
	struct io_uring_sqe *sqe = cgs_sqe(g);

	if (!sqe)
		return;	/* the request completes on its own; we wait for it */
	io_uring_prep_cancel64(sqe, cgs_ud(m, op), 0);
	io_uring_sqe_set_data64(sqe, cgs_ud(m, m ? CGS_OP_CANCEL : CGS_OP_TICK_CANCEL));
	if (m)
		m->inflight++;
	else
		g->tick_inflight++;
}

static void cgs_cancel_member(struct cgstream_group *g, struct cgs_member *m)
{
	if (m->polling)
		cgs_cancel(g, m, CGS_OP_POLL);
	if (m->reading)
		cgs_cancel(g, m, CGS_OP_READ);
}

static void cgs_member_free(struct cgs_member *m)
{
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m);
}

/* take @m out of the live list and onto the dead list */
static void cgs_unlink(struct cgstream_group *g, struct cgs_member *m)
{
	for (size_t i = 0; i < g->n_members; i++) {
		if (g->members[i] != m)
			continue;
		memmove(&g->members[i], &g->members[i + 1],
			(g->n_members - i - 1) * sizeof(g->members[0]));
		g->n_members--;
		break;
	}
	m->dead = true;
	m->needs_arm = false;
	m->next_dead = g->dead;
	g->dead = m;
	cgs_cancel_member(g, m);
}

/* the kernel or a failed read dropped @m: tell the caller once */
static void cgs_drop(struct cgstream_group *g, struct cgs_member *m, int type, int err)
{
	memset(&m->ev, 0, sizeof(m->ev));
	m->ev.type = type;
	m->ev.error = err;
	m->ev.sample.cgroup_id = m->id;
	m->ev.sample.present = CGSTREAM_F_CGROUP_ID;
	m->ev.path = m->path;
	m->ev.userdata = m->userdata;
	m->pending = true;
	cgs_unlink(g, m);
}

static void cgs_read_done(struct cgstream_group *g, struct cgs_member *m, int res)
{
	struct cgstream_sample s;
	int r;

	if (res == -ECANCELED || res == -EINTR || res == -EAGAIN)
		return;	/* no sample this cycle; the next tick reads again */
	if (res < 0) {
		r = cgs_read_errno(-res);
		cgs_drop(g, m, r == -ENODEV ? CGSTREAM_EVENT_REMOVED : CGSTREAM_EVENT_ERROR, r);
		return;
	}
	if ((size_t)res >= sizeof(m->buf)) {
		cgs_drop(g, m, CGSTREAM_EVENT_ERROR, -EOVERFLOW);
		return;
	}
	r = cgstream_parse(m->buf, (size_t)res, &s, sizeof(s));
	if (r == 0 && g->mode == CGSTREAM_MODE_KERNEL && !(s.present & CGSTREAM_F_SEQ))
		r = -EBADMSG;
	if (r < 0) {
		cgs_drop(g, m, CGSTREAM_EVENT_ERROR, r);
		return;
	}
	if (g->mode == CGSTREAM_MODE_KERNEL) {
		if (s.seq == m->last_seq)
			return;	/* nothing new: no flush since we last read */
	} else {
		s.seq = g->seq;
		s.flush_time_usec = g->tick_usec;
		s.flush_missed = g->missed;
		s.present |= CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED;
	}
	m->last_seq = s.seq;
	s.cgroup_id = m->id;
	s.present |= CGSTREAM_F_CGROUP_ID;
	memset(&m->ev, 0, sizeof(m->ev));
	m->ev.type = CGSTREAM_EVENT_SAMPLE;
	m->ev.path = m->path;
	m->ev.userdata = m->userdata;
	m->ev.sample = s;
	m->pending = true;
}

/* kernel mode, one member: read the published stats now */
static void cgs_read_stream(struct cgstream_group *g, struct cgs_member *m)
{
	ssize_t n = pread(m->fd, m->buf, sizeof(m->buf), 0);

	m->fresh = false;
	cgs_read_done(g, m, n < 0 ? -errno : (int)n);
}

static void cgs_tick_done(struct cgstream_group *g, int res)
{
	char buf[CGS_READ_BUF];
	uint64_t expirations;

	g->tick_polling = false;
	if (res == -ECANCELED || res == -EINTR || res == -EAGAIN)
		return;	/* re-armed at the end of process */
	if (res < 0 || (res & (POLLERR | POLLHUP | POLLNVAL))) {
		/* not re-armed: a failing fd would spin */
		g->tick_err = res < 0 ? res : -EIO;
		return;
	}
	if (!(res & POLLIN))
		return;
	if (g->mode == CGSTREAM_MODE_FALLBACK) {
		if (read(g->tick_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
			return;
		g->seq++;
		g->missed += expirations - 1;
		g->tick_usec = cgs_now_usec();
	} else if (pread(g->tick_fd, buf, sizeof(buf), 0) < 0 && errno != EINTR) {
		/* the read marks the flush seen, so the next poll waits */
		g->tick_err = -errno;
		return;
	}
	g->tick = true;
}

static void cgs_complete(struct cgstream_group *g, uint64_t ud, int res)
{
	struct cgs_member *m = (struct cgs_member *)(uintptr_t)(ud & ~(uint64_t)CGS_OP_MASK);
	int op = (int)(ud & CGS_OP_MASK);

	switch (op) {
	case CGS_OP_TICK:
		g->tick_inflight--;
		cgs_tick_done(g, res);
		return;
	case CGS_OP_TICK_CANCEL:
		g->tick_inflight--;
		return;
	case CGS_OP_CANCEL:
		m->inflight--;
		return;
	case CGS_OP_POLL:
		m->inflight--;
		m->polling = false;
		if (m->dead)
			return;
		if (res == -ECANCELED || res == -EINTR || res == -EAGAIN) {
			m->needs_arm = true;
		} else if (res < 0) {
			cgs_drop(g, m, CGSTREAM_EVENT_ERROR, res);
		} else if (res & (POLLERR | POLLHUP | POLLNVAL)) {
			/* kernfs' answer for a removed cgroup's file */
			cgs_drop(g, m, CGSTREAM_EVENT_REMOVED, 0);
		} else {
			m->needs_arm = true;	/* nothing it asked for */
		}
		return;
	case CGS_OP_READ:
		m->inflight--;
		m->reading = false;
		g->reads_inflight--;
		if (!m->dead)
			cgs_read_done(g, m, res);
		return;
	}
}

static unsigned int cgs_drain_cq(struct cgstream_group *g)
{
	struct io_uring_cqe *cqe;
	unsigned int n = 0;

	while (io_uring_peek_cqe(&g->ring, &cqe) == 0) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&g->ring, cqe);
		cgs_complete(g, ud, res);
		n++;
	}
	return n;
}

static void cgs_drain_eventfd(struct cgstream_group *g)
{
	uint64_t v;

	while (read(g->event_fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* free dead members that io_uring and the caller are done with */
static void cgs_reap(struct cgstream_group *g)
{
	struct cgs_member **pp = &g->dead;

	while (*pp) {
		struct cgs_member *m = *pp;

		if (m->inflight == 0 && !m->pending) {
			*pp = m->next_dead;
			cgs_member_free(m);
		} else {
			pp = &m->next_dead;
		}
	}
}

static void cgs_group_teardown(struct cgstream_group *g)
{
	struct cgs_member *m;
	bool busy = false;

	if (g->ring_ready) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 100 * 1000000LL };
		struct io_uring_cqe *cqe;
		uint64_t deadline = cgs_now_usec() + CGS_FREE_WAIT_MS * 1000ull;

		while (g->n_members)
			cgs_unlink(g, g->members[g->n_members - 1]);
		if (g->tick_polling)
			cgs_cancel(g, NULL, CGS_OP_TICK);
		io_uring_submit(&g->ring);
		for (;;) {
			cgs_drain_cq(g);
			busy = g->tick_inflight > 0;
			for (m = g->dead; m; m = m->next_dead)
				busy |= m->inflight > 0;
			if (!busy || cgs_now_usec() >= deadline)
				break;
			io_uring_wait_cqe_timeout(&g->ring, &cqe, &ts);
		}
		io_uring_queue_exit(&g->ring);
	}
	while ((m = g->dead)) {
		g->dead = m->next_dead;
		if (m->inflight == 0)
			cgs_member_free(m);
		/* else: the kernel may still write m->buf; leak it */
	}
	for (size_t i = 0; i < g->n_members; i++)
		cgs_member_free(g->members[i]);	/* only when the ring never started */
	free(g->members);
	if (g->event_fd >= 0)
		close(g->event_fd);
	if (g->tick_fd >= 0)
		close(g->tick_fd);
	free(g->root);
	free(g);
}

CGS_EXPORT int cgstream_group_new(const struct cgstream_opts *opts,
				  struct cgstream_group **ret)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
		.cq_entries = CGS_CQ_ENTRIES,
	};
	struct cgstream_group *g;
	struct cgs_opts o;
	int r;

	if (!ret)
		return -EINVAL;
	r = cgs_opts_load(opts, &o);
	if (r < 0)
		return r;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->event_fd = g->tick_fd = -1;

	r = cgs_find_root(&o, &g->root);
	if (r < 0)
		goto fail;
	r = o.mode == CGSTREAM_MODE_SUBTREE ? -EINVAL : cgs_pick_mode(g->root, o.mode);
	if (r < 0)
		goto fail;
	g->mode = r;

	r = io_uring_queue_init_params(CGS_SQ_ENTRIES, &g->ring, &p);
	if (r < 0)
		goto fail;
	g->ring_ready = true;

	g->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->event_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = io_uring_register_eventfd(&g->ring, g->event_fd);
	if (r < 0)
		goto fail;

	if (g->mode == CGSTREAM_MODE_FALLBACK) {
		r = cgs_timerfd(cgs_fallback_ms(g->root, o.fallback_interval_ms));
		if (r < 0)
			goto fail;
		g->tick_fd = r;
	} else {
		uint64_t id;

		r = cgs_open_data(g->root, CGSTREAM_MODE_KERNEL, &g->tick_fd, &id);
		if (r < 0)
			goto fail;
	}
	r = cgs_arm_tick(g);
	if (r < 0)
		goto fail;
	r = io_uring_submit(&g->ring);
	if (r < 0)
		goto fail;
	*ret = g;
	return 0;
fail:
	cgs_group_teardown(g);
	return r;
}

CGS_EXPORT void cgstream_group_free(struct cgstream_group *g)
{
	if (g)
		cgs_group_teardown(g);
}

static struct cgs_member *cgs_find(struct cgstream_group *g, const char *path)
{
	for (size_t i = 0; i < g->n_members; i++)
		if (strcmp(g->members[i]->path, path) == 0)
			return g->members[i];
	return NULL;
}

CGS_EXPORT int cgstream_group_add(struct cgstream_group *g, const char *cgroup,
				  void *userdata)
{
	struct cgs_member *m;
	char *path = NULL;
	int r;

	if (!g || !cgroup)
		return -EINVAL;
	r = cgs_resolve(g->root, cgroup, &path);
	if (r < 0)
		return r;
	if (cgs_find(g, path)) {
		free(path);
		return -EEXIST;
	}
	if (g->n_members == g->cap_members) {
		size_t cap = g->cap_members ? g->cap_members * 2 : 16;
		struct cgs_member **v = realloc(g->members, cap * sizeof(*v));

		if (!v) {
			free(path);
			return -ENOMEM;
		}
		g->members = v;
		g->cap_members = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(path);
		return -ENOMEM;
	}
	m->path = path;
	m->userdata = userdata;
	r = cgs_open_data(path, g->mode, &m->fd, &m->id);
	if (r < 0) {
		m->fd = -1;
		cgs_member_free(m);
		return r;
	}
	if (g->mode == CGSTREAM_MODE_KERNEL) {
		r = cgs_arm_poll(g, m);
		if (r == 0)
			r = io_uring_submit(&g->ring);
		if (r < 0) {
			if (m->inflight) {	/* queued: cancel, reap later */
				m->dead = true;
				m->next_dead = g->dead;
				g->dead = m;
				cgs_cancel_member(g, m);
				io_uring_submit(&g->ring);
			} else {
				cgs_member_free(m);
			}
			return r;
		}
	}
	if (g->mode == CGSTREAM_MODE_KERNEL) {
		/* its first sample: the next process call reads it */
		m->fresh = g->fresh = true;
		eventfd_write(g->event_fd, 1);
	}
	g->members[g->n_members++] = m;
	return 0;
}

CGS_EXPORT int cgstream_group_remove(struct cgstream_group *g, const char *cgroup)
{
	struct cgs_member *m;
	char *path = NULL;
	int r;

	if (!g || !cgroup)
		return -EINVAL;
	r = cgs_resolve(g->root, cgroup, &path);
	if (r < 0)
		return r;
	m = cgs_find(g, path);
	free(path);
	if (!m)
		return -ENOENT;
	m->pending = false;	/* the caller asked: no event for it */
	cgs_unlink(g, m);
	io_uring_submit(&g->ring);
	return 0;
}

CGS_EXPORT size_t cgstream_group_size(const struct cgstream_group *g)
{
	return g ? g->n_members : 0;
}

CGS_EXPORT int cgstream_group_fd(const struct cgstream_group *g)
{
	return g ? g->event_fd : -EINVAL;
}

CGS_EXPORT int cgstream_group_mode(const struct cgstream_group *g)
{
	return g ? g->mode : -EINVAL;
}

CGS_EXPORT int cgstream_group_wait(struct cgstream_group *g, int timeout_ms)
{
	struct pollfd pfd;
	int r;

	if (!g)
		return -EINVAL;
	pfd.fd = g->event_fd;
	pfd.events = POLLIN;
	r = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
	if (r < 0)
		return -errno;
	return r > 0 ? 1 : 0;
}

/* wait, bounded, for the reads this process call issued */
static void cgs_wait_reads(struct cgstream_group *g)
{
	uint64_t deadline = cgs_now_usec() + CGS_READ_WAIT_MS * 1000ull;

	while (g->reads_inflight > 0) {
		struct io_uring_cqe *cqe;
		uint64_t now = cgs_now_usec();
		struct __kernel_timespec ts;
		int r;

		if (now >= deadline)
			break;	/* late reads complete into a later batch */
		ts.tv_sec = (long long)((deadline - now) / 1000000u);
		ts.tv_nsec = (long long)((deadline - now) % 1000000u) * 1000;
		r = io_uring_submit_and_wait_timeout(&g->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN)
			break;
		cgs_drain_cq(g);
	}
}

static int cgs_emit(struct cgs_member *m,
		    struct cgstream_event *events, size_t max, size_t event_size,
		    size_t *n)
{
	if (!m->pending)
		return 0;
	if (*n >= max)
		return 1;	/* left for the next call */
	cgs_copy_event((char *)events + *n * event_size, event_size, &m->ev);
	m->pending = false;
	(*n)++;
	return 0;
}

CGS_EXPORT int cgstream_group_process(struct cgstream_group *g,
				      struct cgstream_event *events, size_t max,
				      size_t event_size)
{
	struct cgs_member *m;
	size_t n = 0;
	int left = 0;

	if (!g || (!events && max) || event_size < CGS_EVENT_SIZE_1_0)
		return -EINVAL;

	cgs_reap(g);
	cgs_drain_eventfd(g);
	cgs_drain_cq(g);
	if (g->mode == CGSTREAM_MODE_KERNEL && (g->tick || g->fresh)) {
		/* a read that fails drops its member from the array */
		for (size_t i = 0; i < g->n_members;) {
			m = g->members[i];
			if (g->tick || m->fresh)
				cgs_read_stream(g, m);
			if (i < g->n_members && g->members[i] == m)
				i++;
		}
		g->tick = g->fresh = false;
	} else if (g->tick) {
		g->tick = false;
		for (size_t i = 0; i < g->n_members; i++)
			if (cgs_arm_read(g, g->members[i]) < 0)
				break;	/* SQ unusable: this tick is skipped */
	}
	cgs_wait_reads(g);

	for (size_t i = 0; i < g->n_members; i++) {
		m = g->members[i];
		if (m->needs_arm && !m->polling && !m->reading)
			cgs_arm_poll(g, m);
	}
	if (!g->tick_polling && !g->tick_err)
		cgs_arm_tick(g);
	io_uring_submit(&g->ring);

	/*
	 * Our own reads signalled the eventfd; clear it so that the caller
	 * sleeps until the next cycle, unless completions are already queued.
	 */
	cgs_drain_eventfd(g);

	for (size_t i = 0; i < g->n_members; i++)
		left |= cgs_emit(g->members[i], events, max, event_size, &n);
	for (m = g->dead; m; m = m->next_dead)
		left |= cgs_emit(m, events, max, event_size, &n);

	if (left || io_uring_cq_ready(&g->ring) || g->tick)
		eventfd_write(g->event_fd, 1);
	if (n == 0 && g->tick_err)
		return g->tick_err;
	return (int)n;
}
