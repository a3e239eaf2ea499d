// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FALLBACK mode: the stream emulated on any kernel, with a timer and reads
 * of each member's *.stat files (cpu.stat; memory.stat with
 * memory.current, memory.swap.current and memory.events; io.stat), which
 * flush, as any reader of them does.
 *
 * tick:   a timerfd at the interval (when the lead controller is
 *         emulated).  The library counts its own cycles as the seq and
 *         stamps them with the monotonic clock; ticks that come while a
 *         cycle is still read count as missed.
 * read:   with io_uring the reads run in the kernel's workers, in
 *         parallel, and the caller never waits for them.  They go in
 *         waves of up to CGS_WAVE_BYTES of slots, each file kind into an arena of
 *         small slots of its own size (not a 4 KiB buffer per file),
 *         followed by an IOSQE_IO_DRAIN write to the cycle's eventfd that
 *         runs once every read of the wave completed: the caller wakes at
 *         the tick (process queues the reads and returns 0), at each wave
 *         (decoded, the next queued) and when the batch is ready.  Waves
 *         bound the arenas and the completions in flight whatever the
 *         number of cgroups.  Without io_uring (kernel.io_uring_disabled,
 *         seccomp, $CGSTREAM_NO_IO_URING, a single stream) process
 *         pread()s the members itself, for at most CGS_PLAIN_BUDGET_US per
 *         call, and the caller is woken again to go on.
 * decode: the text parsers (cgs_mode_decode_text()), then the library's
 *         own seq (the cycle), flush_time_usec and flush_missed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "internal.h"

#define CGS_PLAIN_BUDGET_US	10000	/* plain fallback reads per process call */
#define CGS_SQ_ENTRIES		256	/* submissions beyond this are flushed early */
#define CGS_CQ_ENTRIES		4096	/* more completions wait in the kernel (NODROP) */
#define CGS_WAVE_BYTES		(8u << 20)	/* the arenas of one wave */
#define CGS_WAVE_MIN		256	/* cgroups per wave, whatever their texts */
#define CGS_SLOT_MIN		256	/* io_uring read slot: twice the longest read */
#define CGS_SLOT_MAX		8192	/* longer texts (a root's io.stat of many disks)
					 * are read again plainly: the arena stays small */
#define CGS_FREE_WAIT_MS	2000	/* bound on waiting for reads at teardown */
#define CGS_FENCE		UINT64_MAX	/* user_data of the eventfd write */
#define CGS_NOT_READ		INT_MIN	/* a slot no read went to */

/* the slots of one file kind: wave_cap of slot_size bytes */
struct cgs_arena {
	char *mem;
	size_t slot_size, longest;	/* the longest read of the last wave */
	int *res;			/* each slot's read: bytes, -errno, CGS_NOT_READ */
};

struct cgs_uring {
	struct io_uring ring;
	unsigned int files;		/* the file kinds read: cgs_emu_files() */
	struct cgs_arena arenas[CGS_NR_FILES];
	struct cgs_cg **wave;		/* slot -> member */
	size_t wave_n, wave_cap;	/* cgroups per wave: CGS_WAVE_BYTES of slots */
	unsigned int reads;		/* READs in flight */
	unsigned int fences;		/* eventfd writes in flight */
	unsigned int transient;		/* members of the wave over the fd budget */
	uint64_t one;			/* what the fence writes */
};

/* the file kinds (1 << enum cgs_file) of @c: its *.stat and aux files */
static unsigned int cgs_ctrl_files(const struct cgs_controller *c)
{
	unsigned int mask = 1u << c->slot;

	for (size_t k = 0; k < c->n_aux; k++)
		mask |= 1u << c->aux[k].slot;
	return mask;
}

/* the file kinds of the emulated controllers */
static unsigned int cgs_emu_files(const struct cgs_set *s)
{
	unsigned int mask = 0;

	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (s->modes[i] == CGSTREAM_MODE_FALLBACK)
			mask |= cgs_ctrl_files(cgs_controllers[i]);
	return mask;
}

/* the mode's own */
struct cgs_emu {
	struct cgs_reader rd;		/* plain reads, and full io_uring slots again */
	struct cgs_uring *uring;	/* NULL: plain syscalls */
	struct cgs_flush own;		/* the cycle's: seq, time of its reads, missed ticks */
	unsigned int transient_max;	/* members over the fd budget per wave */
};

static bool cgs_emu_read_plain(struct cgs_set *s, struct cgs_emu *e);

/* --- reads through io_uring --- */

static struct io_uring_sqe *cgs_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe && io_uring_submit(ring) >= 0)
		sqe = io_uring_get_sqe(ring);
	return sqe;
}

static struct cgs_uring *cgs_uring_new(const struct cgs_set *s)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
		.cq_entries = CGS_CQ_ENTRIES,
	};
	const char *off = getenv("CGSTREAM_NO_IO_URING");
	struct cgs_uring *u;

	if (s->plain || (off && *off && strcmp(off, "0") != 0))
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
	for (int f = 0; f < CGS_NR_FILES; f++)
		u->arenas[f].slot_size = CGS_SLOT_MIN;
	u->files = cgs_emu_files(s);
	u->one = 1;
	return u;
}

/* a completion: its slot's result kept, the member's read count down */
static void cgs_uring_complete(struct cgs_uring *u, struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	struct cgs_arena *a;
	size_t i;

	if (ud == CGS_FENCE) {
		u->fences--;
		return;
	}
	a = &u->arenas[ud >> 32];
	i = (size_t)(ud & 0xffffffffu);
	a->res[i] = cqe->res;
	if (cqe->res > 0 && (size_t)cqe->res > a->longest)
		a->longest = (size_t)cqe->res;
	u->wave[i]->reading--;
	u->reads--;
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
		cgs_uring_complete(u, cqe);
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
		return false;	/* the kernel may still write the arenas */
	for (int f = 0; f < CGS_NR_FILES; f++) {
		free(u->arenas[f].mem);
		free(u->arenas[f].res);
	}
	free(u->wave);
	free(u);
	return true;
}

/*
 * The arenas of the emulated files, at the slot sizes the last wave
 * needed, and as many cgroups per wave as CGS_WAVE_BYTES of slots hold
 * (cpu alone: 32,768; with memory.stat's ~4 KiB slots about 1,500): the
 * memory stays bounded whatever the number of cgroups, and few waves
 * (each a round trip through the caller) are needed.
 */
static bool cgs_uring_arenas(struct cgs_uring *u)
{
	size_t sizes[CGS_NR_FILES] = { 0 }, per = 0, cap;
	bool changed = !u->wave;

	for (int f = 0; f < CGS_NR_FILES; f++) {
		struct cgs_arena *a = &u->arenas[f];

		if (!(u->files & (1u << f)))
			continue;
		/* twice the longest text seen: a full slot is read again, plainly */
		sizes[f] = a->slot_size;
		while (sizes[f] < 2 * a->longest && sizes[f] < CGS_SLOT_MAX)
			sizes[f] *= 2;
		a->longest = 0;
		changed |= sizes[f] != a->slot_size;
		per += sizes[f];
	}
	cap = per ? CGS_WAVE_BYTES / per : CGS_WAVE_MIN;
	cap = cap < CGS_WAVE_MIN ? CGS_WAVE_MIN : cap;
	if (!changed && cap == u->wave_cap)
		return true;
	free(u->wave);
	u->wave = calloc(cap, sizeof(*u->wave));
	if (!u->wave)
		return false;
	u->wave_cap = cap;
	for (int f = 0; f < CGS_NR_FILES; f++) {
		struct cgs_arena *a = &u->arenas[f];

		if (!sizes[f])
			continue;
		free(a->mem);
		free(a->res);
		/* zeroed: defined bytes for tools that do not see the kernel write them */
		a->mem = calloc(cap, sizes[f]);
		a->res = malloc(cap * sizeof(*a->res));
		if (!a->mem || !a->res)
			return false;
		a->slot_size = sizes[f];
	}
	return true;
}

/*
 * Queue a READ of each emulated file of @m into slot @i: 1 queued, 0
 * nothing to read, -1 the ring is broken.  u->wave[@i] names @m before
 * any read goes out: a completion finds its member there.
 */
static int cgs_uring_queue(struct cgs_uring *u, struct cgs_cg *m, size_t i)
{
	struct io_uring_sqe *sqe;
	int queued = 0;

	u->wave[i] = m;
	for (int f = 0; f < CGS_NR_FILES; f++) {
		struct cgs_arena *a = &u->arenas[f];

		if (!(u->files & (1u << f)))
			continue;
		a->res[i] = CGS_NOT_READ;
		if (m->fds[f] < 0)
			continue;
		sqe = cgs_sqe(&u->ring);
		if (!sqe)
			return -1;
		io_uring_prep_read(sqe, m->fds[f], a->mem + i * a->slot_size,
				   (unsigned int)a->slot_size, 0);
		/* straight to a kernel worker: the caller's thread does not read */
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		io_uring_sqe_set_data64(sqe, ((uint64_t)f << 32) | i);
		m->reading++;
		u->reads++;
		queued = 1;
	}
	return queued;
}

/* the wave's transient members' files closed again (their reads are in) */
static void cgs_uring_close_transient(struct cgs_uring *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cgs_cg_close_transient(u->wave[i]);
	u->transient = 0;
}

/*
 * Queue a READ of every emulated file of the next members from s->cursor
 * (up to a wave; members over the fd budget, whose files are opened for
 * the wave, up to the spare fds) and the fence; false if it could not be
 * (then the reads go on plainly).
 */
static bool cgs_uring_wave(struct cgs_set *s, struct cgs_emu *e)
{
	struct cgs_uring *u = e->uring;
	struct io_uring_sqe *sqe;
	int r;

	u->wave_n = 0;
	if (!cgs_uring_arenas(u))
		goto fail;
	while (s->cursor && u->wave_n < u->wave_cap) {
		struct cgs_cg *m = s->cursor;

		if (m->transient && u->transient >= e->transient_max)
			break;	/* the next wave: the spare fds are in use */
		s->cursor = m->next;	/* (a drop of @m below moves it on too) */
		if (m->skip_cycle == s->cycle)
			continue;
		if ((r = cgs_cg_open_transient(s, m)) < 0) {
			s->ops->failed(s, m, r);
			continue;
		}
		u->transient += m->transient;
		r = cgs_uring_queue(u, m, u->wave_n);
		if (r > 0) {
			u->wave_n++;
			continue;
		}
		cgs_cg_close_transient(m);
		if (r < 0)
			goto fail;	/* the ring is broken: plain reads */
	}
	sqe = cgs_sqe(&u->ring);
	if (sqe) {
		io_uring_prep_write(sqe, s->wake_fd, &u->one, sizeof(u->one), 0);
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
		io_uring_sqe_set_data64(sqe, CGS_FENCE);
		u->fences++;
	}
	if (io_uring_submit(&u->ring) >= 0 && sqe)
		return true;
fail:
	/*
	 * Nothing would wake the caller: collect what was queued and go on
	 * with plain syscalls (a read that never completes keeps its member
	 * and the arenas, leaked rather than freed under it; the kernel holds
	 * the files it reads, closed here or not).
	 */
	cgs_uring_close_transient(u, u->wave_n);
	cgs_uring_free(u);
	e->uring = NULL;
	return false;
}

/* the wave's reads, decoded */
static void cgs_uring_decode(struct cgs_set *s, struct cgs_emu *e)
{
	struct cgs_uring *u = e->uring;

	for (size_t i = 0; i < u->wave_n; i++) {
		struct cgs_cg *m = u->wave[i];

		if (m->dead)
			continue;
		for (int c = 0; c < CGS_NR_CTRL; c++) {
			const struct cgs_controller *ctl = cgs_controllers[c];
			struct cgs_text t[CGS_NR_FILES] = { { 0 } };
			unsigned int files = cgs_ctrl_files(ctl);
			bool cut = false;
			int r;

			if (s->modes[c] != CGSTREAM_MODE_FALLBACK || m->fds[ctl->slot] < 0)
				continue;
			for (int f = 0; f < CGS_NR_FILES; f++) {
				struct cgs_arena *a = &u->arenas[f];

				if (!(files & (1u << f)) || a->res[i] == CGS_NOT_READ)
					continue;
				t[f] = (struct cgs_text){ a->mem + i * a->slot_size, a->res[i],
							  a->slot_size };
				cut |= a->res[i] > 0 && (size_t)a->res[i] >= a->slot_size;
			}
			if (!t[ctl->slot].buf)
				continue;	/* its read could not be queued */
			/* a full slot may be cut: read it again with the full buffer */
			r = cut ? cgs_mode_read_plain(s, &e->rd, m, ctl, &e->own)
				: cgs_mode_decode_text(s, m, ctl, t, &e->own);
			if (r != 0)
				break;
		}
	}
	cgs_uring_close_transient(u, u->wave_n);
	u->wave_n = 0;
}

/* the completions so far; true once the cycle's last wave is decoded */
static bool cgs_uring_harvest(struct cgs_set *s, struct cgs_emu *e)
{
	struct cgs_uring *u = e->uring;
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		cgs_uring_complete(u, cqe);
		io_uring_cqe_seen(&u->ring, cqe);
	}
	if (u->reads || u->fences)
		return false;
	cgs_uring_decode(s, e);
	if (!s->cursor)
		return true;
	if (cgs_uring_wave(s, e))
		return false;	/* the next wave */
	return cgs_emu_read_plain(s, e);	/* io_uring failed: the rest plainly */
}

/* --- plain reads --- */

/* from s->cursor on, within the budget; true once every member is read */
/* @m's emulated controllers read plainly (its files opened for it when
 * it is over the fd budget) */
static void cgs_emu_read_member(struct cgs_set *s, struct cgs_emu *e, struct cgs_cg *m)
{
	int r = cgs_cg_open_transient(s, m);

	if (r < 0) {
		s->ops->failed(s, m, r);
		return;
	}
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (s->modes[i] != CGSTREAM_MODE_FALLBACK)
			continue;
		if (cgs_mode_read_plain(s, &e->rd, m, cgs_controllers[i], &e->own) != 0)
			break;
	}
	cgs_cg_close_transient(m);
}

/* from s->cursor on, within the budget; true once every member is read */
static bool cgs_emu_read_plain(struct cgs_set *s, struct cgs_emu *e)
{
	uint64_t deadline = cgs_now_usec() + CGS_PLAIN_BUDGET_US;
	unsigned int k = 0;

	while (s->cursor) {
		struct cgs_cg *m = s->cursor;

		s->cursor = m->next;	/* a drop of @m moves it on too */
		if (m->skip_cycle != s->cycle)
			cgs_emu_read_member(s, e, m);
		if ((++k % 16) == 0 && cgs_now_usec() >= deadline)
			break;
	}
	return !s->cursor;
}

/* --- the mode --- */

static int cgs_emu_open_tick(const char *dir, uint32_t ms, const struct cgs_controller *lead)
{
	(void)dir;
	(void)lead;
	return cgs_timerfd(ms);
}

static int cgs_emu_init(struct cgs_set *s, const char *dir, void **state)
{
	struct cgs_emu *e = calloc(1, sizeof(*e));

	(void)dir;
	if (!e || cgs_reader_init(&e->rd) < 0) {
		free(e);
		return -ENOMEM;
	}
	e->uring = cgs_uring_new(s);	/* NULL: plain syscalls */
	e->transient_max = cgs_fd_spare_members(s);
	*state = e;
	return 0;
}

/*
 * When reads are still in flight after the bounded wait, the ring's arenas
 * and the members they write into leak (cgs_set_free_members() keeps the
 * members whose reads are out) rather than being freed under the kernel.
 */
static void cgs_emu_fini(struct cgs_set *s, void *state)
{
	struct cgs_emu *e = state;

	(void)s;
	if (!cgs_uring_free(e->uring))
		return;
	cgs_reader_fini(&e->rd);
	free(e);
}

static int cgs_emu_tick(struct cgs_set *s, void *state, bool reading)
{
	struct cgs_emu *e = state;
	uint64_t expirations;

	if (read(s->tick_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (reading) {
		e->own.missed += expirations;	/* the last cycle is still out */
		return 0;
	}
	e->own.missed += expirations - 1;
	return 1;
}

static bool cgs_emu_read(struct cgs_set *s, void *state)
{
	struct cgs_emu *e = state;

	/* the library's own flush: the cycle, as of now */
	e->own.seq = s->cycle;
	e->own.time_usec = cgs_now_usec();
	e->own.present = CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED;
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (s->modes[i] == CGSTREAM_MODE_FALLBACK)
			cgs_set_published(s, cgs_controllers[i], &e->own);
	s->cursor = s->head;
	if (e->uring && cgs_uring_wave(s, e))
		return false;	/* the fence wakes the caller when the wave is in */
	s->cursor = s->head;
	return cgs_emu_read_plain(s, e);
}

static bool cgs_emu_read_more(struct cgs_set *s, void *state)
{
	struct cgs_emu *e = state;

	if (!e->uring)
		return cgs_emu_read_plain(s, e);
	return cgs_uring_harvest(s, e);
}

static bool cgs_emu_read_needs_calls(const struct cgs_set *s, const void *state)
{
	const struct cgs_emu *e = state;

	(void)s;
	return e->uring == NULL;
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
