// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cycle machinery of the group and the tree: the cgroups an object
 * reads once per cycle, what starts a cycle, and the batch it hands back.
 *
 * The caller's fd is an epoll fd holding two fds: the tick and an eventfd
 * ("call process again").  The tick is
 *  - KERNEL mode: a cpu.stat.stream file (the sequence is global: one
 *    flush makes every stream readable), pread() at once so that it polls
 *    quiet until the next flush; then a pread() of every member's stream
 *    at offset 0, which copies published values and never flushes or
 *    blocks.  (Not an io_uring READ: io_uring completes a short read of a
 *    regular file only at EOF or a full buffer, and for a pollable file it
 *    waits for POLLIN before reading on; the first read has marked the
 *    flush seen, so the READ would complete at the next flush, a whole
 *    interval late.)  A removed cgroup's stream answers ENODEV: REMOVED in
 *    that cycle's batch.  No per-member poll: the flusher's wake-up walks
 *    one waiter per object, not one per cgroup.
 *  - SUBTREE mode: the tree's cpu.stat.stream.subtree; the tree reads the
 *    whole cycle in its begin() hook.
 *  - FALLBACK mode: a timerfd.  Each cycle reads every member's cpu.stat,
 *    which flushes (as any cpu.stat reader does).  With io_uring the reads
 *    run in the kernel's workers, in parallel, and the caller never waits
 *    for them: they go into one arena of small slots (not a 4 KiB buffer
 *    per cgroup), followed by an IOSQE_IO_DRAIN write to the eventfd that
 *    runs once every read completed: the caller wakes at the tick (process
 *    queues the reads and returns 0) and when the batch is ready.  Without
 *    io_uring (kernel.io_uring_disabled, seccomp, $CGSTREAM_NO_IO_URING)
 *    process pread()s the members itself, for at most CGS_PLAIN_BUDGET_US
 *    per call, and wakes the caller again to go on.
 *
 * A batch is a cycle's REMOVED and ERROR events, then ADDED, then one
 * SAMPLE per member read in that cycle; it is handed out over as many
 * process calls as the caller's array needs, before any new cycle
 * begins.  Paths stay valid until the next process call: a member that
 * leaves is freed only once no event names it any more and no io_uring
 * read writes into its slot.  Lookups by path or id are the owner's (hash
 * tables); the set's own lists are O(1) to join and leave.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <liburing.h>

#include "internal.h"

#define CGS_PLAIN_BUDGET_US	10000	/* plain fallback reads per process call */
#define CGS_SQ_ENTRIES		256	/* submissions beyond this are flushed early */
#define CGS_CQ_ENTRIES		4096	/* more completions wait in the kernel (NODROP) */
#define CGS_SLOT_MIN		256	/* io_uring read slot: twice the longest read */
#define CGS_FREE_WAIT_MS	2000	/* bound on waiting for reads at teardown */
#define CGS_FENCE		UINT64_MAX	/* user_data of the eventfd write */

struct cgs_uring {
	struct io_uring ring;
	char *arena;			/* n_slots slots of slot_size bytes */
	struct cgs_cg **slots;		/* slot -> member */
	size_t n_slots, slot_size, arena_size;
	size_t longest;			/* the longest read of the last cycle */
	unsigned int reads;		/* READs in flight */
	unsigned int fences;		/* eventfd writes in flight */
	uint64_t one;			/* what the fence writes */
};

struct cgs_cg *cgs_cg_new(const char *path, size_t len)
{
	struct cgs_cg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strndup(path, len);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->fd = m->wd = -1;
	return m;
}

void cgs_cg_free(struct cgs_cg *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m);
}

static int cgs_evs_reserve(struct cgs_evs *e, size_t want)
{
	struct cgs_ev *v;
	size_t cap;

	if (want <= e->cap)
		return 0;
	cap = e->cap ? e->cap : 64;
	while (cap < want)
		cap *= 2;
	v = realloc(e->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->v = v;
	e->cap = cap;
	return 0;
}

/* room is reserved when members join: a push never fails */
static void cgs_evs_push(struct cgs_evs *e, struct cgs_cg *m, int type, int err)
{
	if (e->n < e->cap)
		e->v[e->n++] = (struct cgs_ev){ .cg = m, .type = type, .error = err };
}

static void cgs_wake(struct cgs_set *s)
{
	eventfd_write(s->wake_fd, 1);
}

/* --- io_uring reads (fallback) --- */

static struct io_uring_sqe *cgs_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe && io_uring_submit(ring) >= 0)
		sqe = io_uring_get_sqe(ring);
	return sqe;
}

static struct cgs_uring *cgs_uring_new(void)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
		.cq_entries = CGS_CQ_ENTRIES,
	};
	const char *off = getenv("CGSTREAM_NO_IO_URING");
	struct cgs_uring *u;

	if (off && *off && strcmp(off, "0") != 0)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	/* EPERM (io_uring_disabled, seccomp), ENOSYS, ENOMEM: plain syscalls */
	if (io_uring_queue_init_params(CGS_SQ_ENTRIES, &u->ring, &p) < 0) {
		free(u);
		return NULL;
	}
	if (!(p.features & IORING_FEAT_NODROP)) {
		/* a dropped completion would leave a cycle unfinished */
		io_uring_queue_exit(&u->ring);
		free(u);
		return NULL;
	}
	u->slot_size = CGS_SLOT_MIN;
	u->one = 1;
	return u;
}

/* wait, bounded, for what is in flight; false if some is still out */
static bool cgs_uring_quiesce(struct cgs_uring *u)
{
	uint64_t deadline = cgs_now_usec() + CGS_FREE_WAIT_MS * 1000ull;
	struct io_uring_cqe *cqe;

	while (u->reads + u->fences > 0 && cgs_now_usec() < deadline) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000000LL };

		if (io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts) < 0)
			continue;
		if (io_uring_cqe_get_data64(cqe) == CGS_FENCE) {
			u->fences--;
		} else {
			u->slots[io_uring_cqe_get_data64(cqe)]->reading = false;
			u->reads--;
		}
		io_uring_cqe_seen(&u->ring, cqe);
	}
	return u->reads + u->fences == 0;
}

/* false when reads are still in flight: their slots and members leak */
static bool cgs_uring_free(struct cgs_uring *u)
{
	bool quiet;

	if (!u)
		return true;
	quiet = cgs_uring_quiesce(u);
	io_uring_queue_exit(&u->ring);
	if (!quiet)
		return false;	/* the kernel may still write the arena */
	free(u->arena);
	free(u->slots);
	free(u);
	return true;
}

static void cgs_set_result(struct cgs_set *s, struct cgs_cg *m, const char *buf,
			   ssize_t res, size_t size);

/* queue a READ of every member and the fence; false if it could not be */
static bool cgs_uring_start(struct cgs_set *s)
{
	struct cgs_uring *u = s->uring;
	struct io_uring_sqe *sqe;
	size_t i = 0;

	/* twice the longest text seen: a full slot is read again, plainly */
	while (u->slot_size < 2 * u->longest && u->slot_size < CGS_READ_BUF)
		u->slot_size *= 2;
	u->longest = 0;
	if (s->n_live > u->n_slots || !u->slots) {
		size_t n = s->n_live > 16 ? s->n_live : 16;
		struct cgs_cg **slots = realloc(u->slots, n * sizeof(*slots));

		if (!slots)
			return false;
		u->slots = slots;
		u->n_slots = n;
	}
	if (u->n_slots * u->slot_size > u->arena_size) {
		size_t size = u->n_slots * u->slot_size;
		char *arena = realloc(u->arena, size);

		if (!arena)
			return false;
		/* defined bytes, for tools that do not see the kernel write them */
		memset(arena + u->arena_size, 0, size - u->arena_size);
		u->arena = arena;
		u->arena_size = size;
	}
	for (struct cgs_cg *m = s->head; m; m = m->next) {
		if (m->fd < 0)
			continue;
		sqe = cgs_sqe(&u->ring);
		if (!sqe)
			break;	/* the rest miss this cycle */
		io_uring_prep_read(sqe, m->fd, u->arena + i * u->slot_size,
				   (unsigned int)u->slot_size, 0);
		/* straight to a kernel worker: the caller's thread does not read */
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		io_uring_sqe_set_data64(sqe, i);
		u->slots[i++] = m;
		m->reading = true;
		u->reads++;
	}
	sqe = cgs_sqe(&u->ring);
	if (sqe) {
		io_uring_prep_write(sqe, s->wake_fd, &u->one, sizeof(u->one), 0);
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
		io_uring_sqe_set_data64(sqe, CGS_FENCE);
		u->fences++;
	}
	if (io_uring_submit(&u->ring) < 0 || !sqe) {
		/*
		 * Nothing would wake the caller: collect what was queued and go
		 * on with plain syscalls (a read that never completes keeps its
		 * member and the arena, leaked rather than freed under it).
		 */
		cgs_uring_free(u);
		s->uring = NULL;
		return false;
	}
	return true;
}

static void cgs_uring_harvest(struct cgs_set *s)
{
	struct cgs_uring *u = s->uring;
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		struct cgs_cg *m;
		char *buf;

		io_uring_cqe_seen(&u->ring, cqe);
		if (ud == CGS_FENCE) {
			u->fences--;
			continue;
		}
		m = u->slots[ud];
		buf = u->arena + ud * u->slot_size;
		m->reading = false;
		u->reads--;
		if (m->dead)
			continue;
		if (res > 0 && (size_t)res > u->longest)
			u->longest = (size_t)res;
		if (res > 0 && (size_t)res >= u->slot_size) {
			/* may be cut: read it again with the full buffer */
			ssize_t n = pread(m->fd, s->buf, CGS_READ_BUF, 0);

			cgs_set_result(s, m, s->buf, n < 0 ? -errno : n, CGS_READ_BUF);
			continue;
		}
		cgs_set_result(s, m, buf, res, u->slot_size);
	}
	if (u->reads == 0)
		s->reading = false;
}

/* --- members --- */

int cgs_set_link(struct cgs_set *s, struct cgs_cg *m)
{
	size_t n = s->n_all + 1;

	/* at most a REMOVED and an ERROR, an ADDED and a SAMPLE per member */
	if (cgs_evs_reserve(&s->first, 2 * n) < 0 || cgs_evs_reserve(&s->added, n) < 0 ||
	    cgs_evs_reserve(&s->samples, n) < 0)
		return -ENOMEM;
	m->prev = s->tail;
	m->next = NULL;
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	s->n_live++;
	s->n_all++;
	return 0;
}

void cgs_set_error(struct cgs_set *s, struct cgs_cg *m, int err)
{
	if (m->quiet)
		return;
	cgs_evs_push(&s->first, m, CGSTREAM_EVENT_ERROR, err);
	m->in_batch = true;
}

void cgs_set_drop(struct cgs_set *s, struct cgs_cg *m, int type, int err)
{
	if (m->dead)
		return;
	if (type == CGSTREAM_EVENT_ERROR)
		cgs_set_error(s, m, err);
	else if (m->announced && !m->quiet) {
		cgs_evs_push(&s->first, m, type, err);
		m->in_batch = true;
	}
	if (s->cursor == m)
		s->cursor = m->next;
	if (m->prev)
		m->prev->next = m->next;
	else
		s->head = m->next;
	if (m->next)
		m->next->prev = m->prev;
	else
		s->tail = m->prev;
	m->prev = m->next = NULL;
	s->n_live--;
	m->dead = true;
	m->next_dead = s->dead;
	s->dead = m;
	if (s->ops->unlinked)
		s->ops->unlinked(s, m);
}

/* free the dead that no event names and no read writes into */
static void cgs_set_reap(struct cgs_set *s)
{
	struct cgs_cg **pp = &s->dead;

	while (*pp) {
		struct cgs_cg *m = *pp;

		if (!m->reading && !m->in_batch) {
			*pp = m->next_dead;
			cgs_cg_free(m);
			s->n_all--;
		} else {
			pp = &m->next_dead;
		}
	}
}

void cgs_set_sampled(struct cgs_set *s, struct cgs_cg *m, const struct cgstream_sample *smp)
{
	m->sample = *smp;
	m->sample.cgroup_id = m->id;
	m->sample.present |= CGSTREAM_F_CGROUP_ID;
	m->last_seq = smp->seq;
	m->cycle = s->cycle;
}

static void cgs_set_result(struct cgs_set *s, struct cgs_cg *m, const char *buf,
			   ssize_t res, size_t size)
{
	struct cgstream_sample smp;
	int r;

	if (res == -EINTR || res == -EAGAIN || res == -ECANCELED)
		return;	/* no sample this cycle */
	if (res < 0)
		r = cgs_read_errno((int)-res);
	else if ((size_t)res >= size)
		r = -EOVERFLOW;
	else
		r = cgstream_parse(buf, (size_t)res, &smp, sizeof(smp));
	if (r == 0 && s->mode == CGSTREAM_MODE_KERNEL && !(smp.present & CGSTREAM_F_SEQ))
		r = -EBADMSG;
	if (r < 0) {
		s->ops->failed(s, m, r);
		return;
	}
	if (s->mode == CGSTREAM_MODE_KERNEL) {
		if (smp.seq == m->last_seq)
			return;	/* no flush since its last read */
	} else {
		smp.seq = s->seq;
		smp.flush_time_usec = s->tick_usec;
		smp.flush_missed = s->missed;
		smp.present |= CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED;
	}
	m->error = 0;
	cgs_set_sampled(s, m, &smp);
}

/* KERNEL: every member; FALLBACK without io_uring: within the budget */
static void cgs_set_read_plain(struct cgs_set *s)
{
	uint64_t deadline = cgs_now_usec() + CGS_PLAIN_BUDGET_US;
	unsigned int k = 0;

	while (s->cursor) {
		struct cgs_cg *m = s->cursor;

		s->cursor = m->next;
		if (m->fd >= 0) {
			ssize_t n = pread(m->fd, s->buf, CGS_READ_BUF, 0);

			cgs_set_result(s, m, s->buf, n < 0 ? -errno : n, CGS_READ_BUF);
		}
		if (s->mode == CGSTREAM_MODE_FALLBACK && (++k % 16) == 0 &&
		    cgs_now_usec() >= deadline)
			break;
	}
	if (!s->cursor)
		s->reading = false;
}

/* --- the cycle --- */

/* 1: a cycle begins; 0: not yet; -errno: the tick fd failed */
static int cgs_set_tick(struct cgs_set *s)
{
	struct pollfd pfd = { .fd = s->tick_fd, .events = POLLIN };
	uint64_t expirations;

	if (s->mode == CGSTREAM_MODE_FALLBACK) {
		if (read(s->tick_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (s->reading) {
			s->missed += expirations;	/* the last cycle is still out */
			return 0;
		}
		s->seq++;
		s->missed += expirations - 1;
		s->tick_usec = cgs_now_usec();
		return 1;
	}
	if (poll(&pfd, 1, 0) < 0)
		return errno == EINTR ? 0 : -errno;
	if (!pfd.revents)
		return 0;
	/* the read marks the flush seen, so that the fd polls quiet again */
	if (s->mode == CGSTREAM_MODE_KERNEL && pread(s->tick_fd, s->buf, CGS_READ_BUF, 0) < 0)
		return errno == EINTR ? 0 : cgs_read_errno(errno);
	return 1;	/* SUBTREE: begin() reads it, and hears of POLLERR */
}

void cgs_set_end(struct cgs_set *s, int err)
{
	if (s->err)
		return;
	s->err = err;
	/* a failed tick fd would keep the caller's fd readable */
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->tick_fd, NULL);
}

static void cgs_set_begin(struct cgs_set *s)
{
	int r;

	s->cycle++;
	s->unreleased = true;
	r = s->ops->begin ? s->ops->begin(s) : 0;
	if (r < 0) {
		cgs_set_end(s, r);
		return;
	}
	if (s->mode == CGSTREAM_MODE_SUBTREE)
		return;
	s->reading = true;
	if (s->uring && cgs_uring_start(s))
		return;
	s->cursor = s->head;
	cgs_set_read_plain(s);
}

static void cgs_set_release(struct cgs_set *s)
{
	for (struct cgs_cg *m = s->head; m; m = m->next) {
		if (m->cycle != s->cycle || m->quiet)
			continue;
		if (!m->announced) {
			cgs_evs_push(&s->added, m, CGSTREAM_EVENT_ADDED, 0);
			m->announced = true;
		}
		cgs_evs_push(&s->samples, m, CGSTREAM_EVENT_SAMPLE, 0);
	}
	s->unreleased = false;
	s->released = true;
	s->emitted = 0;
}

static size_t cgs_set_batch_size(const struct cgs_set *s)
{
	return s->first.n + s->added.n + s->samples.n;
}

static const struct cgs_ev *cgs_set_batch_at(const struct cgs_set *s, size_t i)
{
	if (i < s->first.n)
		return &s->first.v[i];
	i -= s->first.n;
	if (i < s->added.n)
		return &s->added.v[i];
	return &s->samples.v[i - s->added.n];
}

static void cgs_set_batch_reset(struct cgs_set *s)
{
	for (size_t i = 0; i < s->first.n; i++)
		s->first.v[i].cg->in_batch = false;
	s->first.n = s->added.n = s->samples.n = 0;
	s->emitted = 0;
	s->released = false;
}

static size_t cgs_set_emit(struct cgs_set *s, struct cgstream_event *events, size_t max,
			   size_t event_size)
{
	size_t total = cgs_set_batch_size(s), n = 0;

	while (s->emitted < total && n < max) {
		const struct cgs_ev *e = cgs_set_batch_at(s, s->emitted++);
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

int cgs_set_process(struct cgs_set *s, struct cgstream_event *events, size_t max,
		    size_t event_size)
{
	eventfd_t wakes;
	size_t n = 0;
	bool left;
	int r;

	if ((!events && max) || event_size < CGS_EVENT_SIZE_1_0)
		return -EINVAL;

	if (s->released && s->emitted < cgs_set_batch_size(s)) {
		n = cgs_set_emit(s, events, max, event_size);
		goto out;
	}
	if (s->released)
		cgs_set_batch_reset(s);	/* handed out: its paths may go now */
	cgs_set_reap(s);
	if (s->err && !s->unreleased)
		goto out;	/* the end, told after the last batch */

	/* our own wake-ups: whatever comes after this read is seen */
	eventfd_read(s->wake_fd, &wakes);

	if (s->reading && s->uring)
		cgs_uring_harvest(s);
	else if (s->reading)
		cgs_set_read_plain(s);
	/*
	 * A cycle read to the end is handed out before the next one begins
	 * (its tick waits); while a fallback cycle is still read, its ticks
	 * count as missed.
	 */
	if (!s->unreleased || s->reading) {
		r = s->err ? 0 : cgs_set_tick(s);
		if (r < 0) {
			s->unreleased = true;
			cgs_set_end(s, s->ops->tick_failed ? s->ops->tick_failed(s, r) : r);
		} else if (r > 0) {
			cgs_set_begin(s);
		}
	}
	if (s->unreleased && !s->reading)
		cgs_set_release(s);
	if (s->released)
		n = cgs_set_emit(s, events, max, event_size);
out:
	left = s->released && s->emitted < cgs_set_batch_size(s);
	/* more to hand out, plain reads to go on with, or the end to tell */
	if (left || s->err || (s->reading && !s->uring))
		cgs_wake(s);
	else if (!s->reading)
		eventfd_read(s->wake_fd, &wakes);	/* quiet until the next cycle */
	if (n == 0 && s->err && !left)
		return s->err;
	return (int)n;
}

/* --- setup --- */

bool cgs_set_uses_uring(const struct cgs_set *s)
{
	return s->uring != NULL;
}

static int cgs_epoll_add(int epfd, int fd)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

int cgs_set_init(struct cgs_set *s, const struct cgs_set_ops *ops, int mode, int tick_fd)
{
	int r;

	*s = (struct cgs_set){ .ops = ops, .mode = mode, .tick_fd = tick_fd,
			       .epoll_fd = -1, .wake_fd = -1 };
	s->buf = malloc(CGS_READ_BUF);
	if (!s->buf) {
		r = -ENOMEM;
		goto fail;
	}
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epoll_fd < 0 || s->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = cgs_epoll_add(s->epoll_fd, s->wake_fd);
	if (r == 0)
		r = cgs_epoll_add(s->epoll_fd, tick_fd);
	if (r < 0)
		goto fail;
	if (mode == CGSTREAM_MODE_FALLBACK)
		s->uring = cgs_uring_new();	/* NULL: plain syscalls */
	return 0;
fail:
	cgs_set_fini(s);
	return r;
}

void cgs_set_fini(struct cgs_set *s)
{
	struct cgs_cg *m;
	bool quiet;

	if (!s->ops)
		return;	/* never set up, or finished */
	quiet = cgs_uring_free(s->uring);
	while (s->head) {
		s->head->quiet = true;
		cgs_set_drop(s, s->head, CGSTREAM_EVENT_REMOVED, 0);
	}
	while ((m = s->dead)) {
		s->dead = m->next_dead;
		if (quiet || !m->reading)
			cgs_cg_free(m);
		/* else: a read may still write its slot; the arena leaked too */
	}
	free(s->first.v);
	free(s->added.v);
	free(s->samples.v);
	free(s->buf);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->tick_fd >= 0)
		close(s->tick_fd);
	*s = (struct cgs_set){ 0 };
}
