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
#include <stdlib.h>
#include <string.h>
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

void cgs_set_free_members(struct cgs_set *s, bool quiet)
{
	struct cgs_cg *m;

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
}

void cgs_set_sampled(struct cgs_set *s, struct cgs_cg *m, const struct cgstream_sample *smp)
{
	m->sample = *smp;
	m->sample.cgroup_id = m->id;
	m->sample.present |= CGSTREAM_F_CGROUP_ID;
	m->last_seq = smp->seq;
	m->cycle = s->cycle;
}

void cgs_set_collect(struct cgs_set *s)
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
}

void cgs_set_uncollect(struct cgs_set *s)
{
	for (size_t i = 0; i < s->first.n; i++)
		s->first.v[i].cg->in_batch = false;
	s->first.n = s->added.n = s->samples.n = 0;
}
