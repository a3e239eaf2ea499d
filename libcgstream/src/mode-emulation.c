// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FALLBACK mode: the stream emulated on any kernel, with a timer and reads
 * of each member's cpu.stat (which flushes, as any cpu.stat reader does).
 *
 * tick:   a timerfd at the interval.  The library counts its own cycles
 *         as flush_seq and stamps them with the monotonic clock; ticks
 *         that come while a cycle is still read count as missed.
 * read:   with io_uring the reads run in the kernel's workers, in
 *         parallel, and the caller never waits for them: they go into one
 *         arena of small slots (not a 4 KiB buffer per cgroup), followed by
 *         an IOSQE_IO_DRAIN write to the cycle's eventfd that runs once
 *         every read completed: the caller wakes at the tick (process
 *         queues the reads and returns 0) and when the batch is ready.
 *         Without io_uring (kernel.io_uring_disabled, seccomp,
 *         $CGSTREAM_NO_IO_URING) process pread()s the members itself, for
 *         at most CGS_PLAIN_BUDGET_US per call, and the caller is woken
 *         again to go on.
 * decode: the text parser (parse.c), then the library's own flush_seq,
 *         flush_time_usec and flush_missed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

/* --- reads through io_uring --- */

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

static void cgs_emu_decode(struct cgs_set *s, struct cgs_cg *m, const char *buf, ssize_t res,
			   size_t size);

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

/* the completed reads, decoded */
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

			cgs_emu_decode(s, m, s->buf, n < 0 ? -errno : n, CGS_READ_BUF);
			continue;
		}
		cgs_emu_decode(s, m, buf, res, u->slot_size);
	}
}

/* --- plain reads --- */

/* from s->cursor on, within the budget; true once every member is read */
static bool cgs_emu_read_plain(struct cgs_set *s)
{
	uint64_t deadline = cgs_now_usec() + CGS_PLAIN_BUDGET_US;
	unsigned int k = 0;

	while (s->cursor) {
		struct cgs_cg *m = s->cursor;

		s->cursor = m->next;
		if (m->fd >= 0) {
			ssize_t n = pread(m->fd, s->buf, CGS_READ_BUF, 0);

			cgs_emu_decode(s, m, s->buf, n < 0 ? -errno : n, CGS_READ_BUF);
		}
		if ((++k % 16) == 0 && cgs_now_usec() >= deadline)
			break;
	}
	return !s->cursor;
}

/* --- the mode --- */

static void cgs_emu_decode(struct cgs_set *s, struct cgs_cg *m, const char *buf, ssize_t res,
			   size_t size)
{
	struct cgstream_sample smp;
	int r = cgs_parse_read(buf, res, size, &smp);

	if (r == -EAGAIN)
		return;	/* no sample this cycle */
	if (r < 0) {
		s->ops->failed(s, m, r);
		return;
	}
	smp.seq = s->seq;
	smp.flush_time_usec = s->tick_usec;
	smp.flush_missed = s->missed;
	smp.present |= CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED;
	m->error = 0;
	cgs_set_sampled(s, m, &smp);
}

static int cgs_emu_open_tick(const char *dir, uint32_t ms)
{
	(void)dir;
	return cgs_timerfd(ms);
}

static int cgs_emu_init(struct cgs_set *s)
{
	int r = cgs_mode_buf_init(s, CGS_READ_BUF);

	if (r == 0)
		s->uring = cgs_uring_new();	/* NULL: plain syscalls */
	return r;
}

/* s->uring stays set when reads are still in flight: their members leak */
static void cgs_emu_fini(struct cgs_set *s)
{
	if (cgs_uring_free(s->uring))
		s->uring = NULL;
	cgs_mode_buf_fini(s);
}

static int cgs_emu_tick(struct cgs_set *s, bool reading)
{
	uint64_t expirations;

	if (read(s->tick_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (reading) {
		s->missed += expirations;	/* the last cycle is still out */
		return 0;
	}
	s->seq++;
	s->missed += expirations - 1;
	s->tick_usec = cgs_now_usec();
	return 1;
}

static bool cgs_emu_read(struct cgs_set *s)
{
	if (s->uring && cgs_uring_start(s))
		return false;	/* the fence wakes the caller when all are in */
	s->cursor = s->head;
	return cgs_emu_read_plain(s);
}

static bool cgs_emu_read_more(struct cgs_set *s)
{
	if (!s->uring)
		return cgs_emu_read_plain(s);
	cgs_uring_harvest(s);
	return s->uring->reads == 0;
}

static bool cgs_emu_read_needs_calls(const struct cgs_set *s)
{
	return s->uring == NULL;
}

const struct cgs_mode cgs_mode_emulation = {
	.mode = CGSTREAM_MODE_FALLBACK,
	.open_tick = cgs_emu_open_tick,
	.init = cgs_emu_init,
	.fini = cgs_emu_fini,
	.tick = cgs_emu_tick,
	.read = cgs_emu_read,
	.read_more = cgs_emu_read_more,
	.read_needs_calls = cgs_emu_read_needs_calls,
};
