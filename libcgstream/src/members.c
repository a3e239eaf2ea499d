// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The members of a set: the cgroups a group or a tree reads once per
 * cycle, and the events about them (REMOVED, ERROR, ADDED) that a cycle's
 * batch carries.  Who the members are is the owner's business: a group
 * names them (group.c, found by a hash of the path), a tree discovers
 * them (tree.c, by id).  Reading them is the mode's (mode-*.c).
 *
 * A member that leaves goes to the dead list and is freed only once no
 * event names it any more and no io_uring read writes into its slot:
 * paths handed out stay valid until the next process call.  Joining and
 * leaving are O(1); the event lists are reserved when a member joins, so
 * that recording an event never fails.
 *
 * The fd budget: in KERNEL and FALLBACK mode a member's files (up to six)
 * stay open from cycle to cycle, as long as the process stays within its
 * limit of open files less a headroom left to everything else (the
 * caller's sockets and files, each object's own few): at most
 * RLIMIT_NOFILE - max(256, RLIMIT_NOFILE / 4) member files, counted across
 * every object of the process (under a limit below 512, half of it).  A
 * member beyond that is "transient": its
 * files are opened, read and closed at each cycle by the modes
 * (cgs_cg_open_transient()), so that any number of cgroups can be read and
 * the caller never runs out of fds because of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CGS_FD_HEADROOM_MIN	256u

/* member files held open by every object of the process */
static size_t cgs_fds_held;

/*
 * How many member files may be held open now (@budget), and how many more
 * may be open at once for reads of members over it (@spare: a quarter of
 * what the budget leaves to the rest of the process)
 */
static void cgs_fd_limits(size_t *budget, size_t *spare)
{
	struct rlimit rl;
	size_t lim, headroom;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_cur = 0;
	lim = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)INT32_MAX ?
	      (size_t)INT32_MAX : (size_t)rl.rlim_cur;
	headroom = lim / 4 > CGS_FD_HEADROOM_MIN ? lim / 4 : CGS_FD_HEADROOM_MIN;
	*budget = lim > 2 * headroom ? lim - headroom : lim / 2;
	*spare = (lim - *budget) / 4;
}

/* @n more member files within the budget: true (counted), or false */
static bool cgs_fds_take(size_t n)
{
	size_t budget, spare;

	cgs_fd_limits(&budget, &spare);
	if (__atomic_add_fetch(&cgs_fds_held, n, __ATOMIC_RELAXED) <= budget)
		return true;
	__atomic_sub_fetch(&cgs_fds_held, n, __ATOMIC_RELAXED);
	return false;
}

static void cgs_fds_give(size_t n)
{
	if (n)
		__atomic_sub_fetch(&cgs_fds_held, n, __ATOMIC_RELAXED);
}

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
	for (int i = 0; i < CGS_NR_FILES; i++)
		m->fds[i] = -1;
	m->wd = -1;
	return m;
}

/* the files open now closed (what the budget counted of them given back) */
static void cgs_cg_close_files(struct cgs_cg *m)
{
	for (int i = 0; i < CGS_NR_FILES; i++) {
		if (m->fds[i] >= 0)
			close(m->fds[i]);
		m->fds[i] = -1;
	}
	cgs_fds_give(m->held);
	m->held = 0;
}

void cgs_cg_close(struct cgs_cg *m)
{
	cgs_cg_close_files(m);
	m->opened = false;
	m->transient = false;
	m->temp_open = false;
}

void cgs_cg_free(struct cgs_cg *m)
{
	if (!m)
		return;
	cgs_cg_close(m);
	cgs_memio_free_member(m);
	free(m->path);
	free(m);
}

/* @file in @dfd into *@fd: 1 opened, 0 absent (ENOENT), -errno */
static int cgs_cg_open_one(int dfd, const char *file, int *fd)
{
	int f = openat(dfd, file, O_RDONLY | O_CLOEXEC);

	if (f >= 0) {
		*fd = f;
		return 1;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* the files of @s's KERNEL and FALLBACK controllers (and their aux files) */
static size_t cgs_cg_nr_files(const struct cgs_set *s)
{
	size_t n = 0;

	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (s->modes[i] == CGSTREAM_MODE_KERNEL || s->modes[i] == CGSTREAM_MODE_FALLBACK)
			n += 1 + cgs_controllers[i]->n_aux;
	return n;
}

/*
 * The files of @m's controllers (and their aux files) in directory @dfd
 * into m->fds: 0; 1 when none of them is there; -errno with nothing left
 * open.
 */
static int cgs_cg_open_files(const struct cgs_set *s, struct cgs_cg *m, int dfd)
{
	int r = 0, found = 0, wanted = 0;

	for (int i = 0; i < CGS_NR_CTRL && r >= 0; i++) {
		const struct cgs_controller *c = cgs_controllers[i];
		int mode = s->modes[i];

		if (mode != CGSTREAM_MODE_KERNEL && mode != CGSTREAM_MODE_FALLBACK)
			continue;
		wanted++;
		r = cgs_cg_open_one(dfd, mode == CGSTREAM_MODE_KERNEL ? c->stream_file : c->stat_file,
				    &m->fds[c->slot]);
		if (r <= 0)
			continue;	/* absent: the controller is not enabled there */
		found++;
		for (size_t k = 0; k < c->n_aux && r >= 0; k++)
			r = cgs_cg_open_one(dfd, c->aux[k].file, &m->fds[c->aux[k].slot]);
	}
	if (r < 0) {
		cgs_cg_close_files(m);
		return r;
	}
	return wanted && !found ? 1 : 0;
}

/* a member over the budget: its files there now, none kept open */
static int cgs_cg_probe_files(const struct cgs_set *s, struct cgs_cg *m, int dfd)
{
	int r = cgs_cg_open_files(s, m, dfd);

	cgs_cg_close_files(m);
	return r;
}

unsigned int cgs_fd_spare_members(const struct cgs_set *s)
{
	size_t per = cgs_cg_nr_files(s), budget, spare, n;

	cgs_fd_limits(&budget, &spare);
	n = per ? spare / per : 0;
	return n < 1 ? 1 : n > UINT16_MAX ? UINT16_MAX : (unsigned int)n;
}

int cgs_cg_open(const struct cgs_set *s, struct cgs_cg *m, uint64_t *id)
{
	size_t want = cgs_cg_nr_files(s);
	bool keep = cgs_fds_take(want);
	struct stat st;
	int dfd, r;

	dfd = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd < 0 ? (errno == ENOTDIR ? -ENOENT : -errno) :
	    fstat(dfd, &st) < 0 ? -errno : 0;
	if (r == 0) {
		*id = (uint64_t)st.st_ino;
		r = keep ? cgs_cg_open_files(s, m, dfd) : cgs_cg_probe_files(s, m, dfd);
	}
	if (dfd >= 0)
		close(dfd);
	if (r == 1)	/* none of its files: no such controller here, or the cgroup went */
		r = access(m->path, F_OK) == 0 ? -ENOMEDIUM : -ENOENT;
	if (r < 0 || !keep) {
		cgs_fds_give(keep ? want : 0);
		if (r < 0)
			return r;
	} else {
		m->held = (uint8_t)want;	/* given back when they are closed */
	}
	m->transient = !keep;
	m->opened = true;
	return 0;
}

int cgs_cg_open_transient(const struct cgs_set *s, struct cgs_cg *m)
{
	int dfd, r;

	if (!m->transient || m->temp_open)
		return 0;
	dfd = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
	r = cgs_cg_open_files(s, m, dfd);
	close(dfd);
	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	m->temp_open = true;	/* (with none of its files there: no values) */
	return 0;
}

void cgs_cg_close_transient(struct cgs_cg *m)
{
	if (!m->temp_open)
		return;
	cgs_cg_close_files(m);
	m->temp_open = false;
}

void cgs_cg_touch(const struct cgs_set *s, struct cgs_cg *m)
{
	if (m->cycle != s->cycle) {
		m->cycle = s->cycle;
		m->got = 0;
	}
}

static int cgs_evs_reserve(struct cgs_evs *e, size_t want)
{
	return cgs_grow((void **)&e->v, &e->cap, want, sizeof(*e->v), 64);
}

/* room is reserved when members join: a push never fails */
static void cgs_evs_push(struct cgs_evs *e, struct cgs_cg *m, int type, int err)
{
	if (e->n < e->cap)
		e->v[e->n++] = (struct cgs_ev){ .cg = m, .type = type, .error = err };
}

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

void cgs_set_reap(struct cgs_set *s)
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

void cgs_set_free_members(struct cgs_set *s)
{
	struct cgs_cg *m;

	while (s->head) {
		s->head->quiet = true;
		cgs_set_drop(s, s->head, CGSTREAM_EVENT_REMOVED, 0);
	}
	while ((m = s->dead)) {
		s->dead = m->next_dead;
		if (!m->reading)
			cgs_cg_free(m);
		/* else: a read may still write its slot; the arena leaked too */
	}
	free(s->first.v);
	free(s->added.v);
	free(s->samples.v);
}

void cgs_set_sampled(struct cgs_set *s, struct cgs_cg *m, const struct cgstream_sample *smp)
{
	cgs_cg_touch(s, m);
	m->sample = *smp;
	m->sample.cgroup_id = m->id;
	m->sample.present |= CGSTREAM_F_CGROUP_ID;
	m->got |= CGSTREAM_CTRL_CPU;
}

void cgs_set_collect(struct cgs_set *s)
{
	for (struct cgs_cg *m = s->head; m; m = m->next) {
		if (m->cycle != s->cycle || !m->got || m->quiet || m->skip_cycle == s->cycle)
			continue;
		if (!m->announced) {
			cgs_evs_push(&s->added, m, CGSTREAM_EVENT_ADDED, 0);
			m->announced = true;
		}
		cgs_evs_push(&s->samples, m, CGSTREAM_EVENT_SAMPLE, 0);
	}
}

void cgs_set_uncollect(struct cgs_set *s)
{
	for (size_t i = 0; i < s->first.n; i++)
		s->first.v[i].cg->in_batch = false;
	s->first.n = s->added.n = s->samples.n = 0;
}
