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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

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

void cgs_cg_close(struct cgs_cg *m)
{
	for (int i = 0; i < CGS_NR_FILES; i++) {
		if (m->fds[i] >= 0)
			close(m->fds[i]);
		m->fds[i] = -1;
	}
	m->opened = false;
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

int cgs_cg_open(const struct cgs_set *s, struct cgs_cg *m, uint64_t *id)
{
	int dfd, r = 0, found = 0, wanted = 0;
	struct stat st;

	dfd = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (fstat(dfd, &st) < 0) {
		r = -errno;
		goto out;
	}
	*id = (uint64_t)st.st_ino;
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
	if (r >= 0 && wanted && !found)
		/* none of its files: no such controller here, or the cgroup went */
		r = access(m->path, F_OK) == 0 ? -ENOMEDIUM : -ENOENT;
out:
	close(dfd);
	if (r < 0) {
		cgs_cg_close(m);
		return r;
	}
	m->opened = true;
	return 0;
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
