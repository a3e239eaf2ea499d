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
	cgs_values_free_member(m);
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

/* @a is read beside its controller's main file in @mode (KERNEL or FALLBACK) */
static bool cgs_aux_read_in(const struct cgs_aux_file *a, int mode)
{
	return !a->emulation_only || mode == CGSTREAM_MODE_FALLBACK;
}

/* the files of @s's KERNEL and FALLBACK controllers (and their aux files) */
static size_t cgs_cg_nr_files(const struct cgs_set *s)
{
	size_t n = 0;

	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];

		if (s->modes[i] != CGSTREAM_MODE_KERNEL && s->modes[i] != CGSTREAM_MODE_FALLBACK)
			continue;
		n++;
		for (size_t k = 0; k < c->n_aux; k++)
			n += cgs_aux_read_in(&c->aux[k], s->modes[i]);
	}
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
			if (cgs_aux_read_in(&c->aux[k], mode))
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
	struct stat st;
	int dfd, r;

	if (!m->transient || m->temp_open)
		return 0;
	dfd = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
	/* a cgroup made again under its path is another one: this one is gone */
	if (fstat(dfd, &st) < 0 || (uint64_t)st.st_ino != m->id) {
		close(dfd);
		return -ENODEV;
	}
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

/* @m on the list of the cycle's members whose values were read (room for
 * every member is reserved when it joins: this never fails) */
void cgs_set_list(struct cgs_set *s, struct cgs_cg *m)
{
	if (m->touched || s->n_touched >= s->touched_cap)
		return;
	m->touched = true;
	s->touched[s->n_touched++] = m;
}

/* the API's fields of cpu (struct cgstream_sample) from @m's named values */
static void cgs_cg_fill_sample(struct cgs_cg *m)
{
	const struct cgs_vals *v = &m->vals[CGS_CPU];
	struct cgstream_sample smp = { .cgroup_id = m->id, .present = CGSTREAM_F_CGROUP_ID };

	for (size_t k = 0; k < cgs_cpu.n_fields && k < CGS_MAX_FIXED; k++) {
		const struct cgs_field *f = &cgs_cpu.fields[k];
		int idx = v->layout->fixed[k];
		uint64_t val;

		if (f->pub) {
			val = f->bit == CGSTREAM_F_SEQ ? v->seq :
			      f->bit == CGSTREAM_F_FLUSH_TIME ? v->time_usec : v->skipped;
			if (!(v->pub_present & f->bit))
				continue;
		} else if (idx >= 0 && (uint32_t)idx < v->n) {
			val = v->v[idx];
		} else {
			continue;	/* the id (set above), or a key this kernel lacks */
		}
		memcpy((char *)&smp + f->sample_off, &val, sizeof(val));
		smp.present |= f->bit;
	}
	m->sample = smp;
}

/* io's devices as the API names their counters: 1 when they changed, 0, -ENOMEM */
static int cgs_cg_take_devs(struct cgs_cg *m, const struct cgs_in *in)
{
	size_t bytes = (size_t)in->nr_devices * sizeof(*in->devs);

	if (m->devs.n == in->nr_devices && !memcmp(m->devs.v, in->devs, bytes))
		return 0;
	if (cgs_devs_reserve(&m->devs, in->nr_devices ? in->nr_devices : 1) < 0)
		return -ENOMEM;
	memcpy(m->devs.v, in->devs, bytes);
	m->devs.n = in->nr_devices;
	return 1;
}

/* a cpu layout whose values have usage_usec, each fixed field once */
static bool cgs_cpu_values_ok(const struct cgs_in *in)
{
	const struct cgs_names *l = in->layout;

	if (l->dup_fixed)
		return false;
	for (size_t k = 0; k < cgs_cpu.n_fields && k < CGS_MAX_FIXED; k++)
		if (cgs_cpu.fields[k].bit == CGSTREAM_F_USAGE)
			return l->fixed[k] >= 0 && (uint32_t)l->fixed[k] < in->n;
	return false;
}

int cgs_cg_take(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
		const struct cgs_in *in)
{
	int r, rd = 0;

	if (c == &cgs_cpu && !cgs_cpu_values_ok(in))
		return -EBADMSG;
	if (c->empty_is_none && in->n == 0) {
		/* published without values: the cgroup has none of @c (its
		 * cgroup.pressure is 0), not zeros; a change if it had some */
		cgs_cg_lose(m, c);
		cgs_cg_touch(s, m);
		cgs_set_list(s, m);
		return 0;
	}
	r = cgs_vals_store(&m->vals[c->index], in);
	if (r >= 0 && c == &cgs_io)
		rd = cgs_cg_take_devs(m, in);
	if (r < 0 || rd < 0)
		return -ENOMEM;
	if (r || rd || !(m->have & c->bit))
		m->changed |= c->bit;
	if (c == &cgs_cpu)
		cgs_cg_fill_sample(m);
	if (c == &cgs_io)
		m->partial = in->partial;
	if (in->final)
		m->final |= c->bit;
	cgs_set_published(s, c, &(struct cgs_flush){ in->seq, in->time_usec, in->skipped,
						     in->pub_present });
	cgs_cg_touch(s, m);
	cgs_set_list(s, m);
	m->have |= c->bit;
	m->got |= c->bit;
	return 0;
}

void cgs_cg_lose(struct cgs_cg *m, const struct cgs_controller *c)
{
	if (!(m->have & c->bit))
		return;
	m->have &= ~c->bit;
	m->final &= ~c->bit;
	m->changed |= c->bit;	/* its values went: a change too */
}

bool cgs_cg_alive(const struct cgs_cg *m)
{
	struct stat st;

	return stat(m->path, &st) == 0 && (uint64_t)st.st_ino == m->id;
}

/* the first bytes of @m's file @name, NUL-terminated; -errno */
static int cgs_cg_read_small(const struct cgs_cg *m, const char *name, char *buf, size_t size)
{
	int fd = cgs_open_in(m->path, name);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

bool cgs_cg_keeps_files(const struct cgs_cg *m, const struct cgs_controller *c)
{
	char buf[512];
	size_t len = strlen(c->name);

	if (c == &cgs_cpu)
		return true;	/* on every cgroup: its files go with the cgroup */
	if (c->core)
		return cgs_cg_read_small(m, "cgroup.pressure", buf, sizeof(buf)) < 0 ||
		       buf[0] != '0';
	if (cgs_cg_read_small(m, "cgroup.controllers", buf, sizeof(buf)) < 0)
		return true;
	for (const char *w = buf; (w = strstr(w, c->name)); w += len)
		if ((w == buf || w[-1] == ' ') && (w[len] == ' ' || w[len] == '\n' || !w[len]))
			return true;
	return false;
}

void cgs_cg_lose_files(struct cgs_cg *m, const struct cgs_controller *c)
{
	int *fd = &m->fds[c->slot];

	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	for (size_t k = 0; k < c->n_aux; k++) {
		fd = &m->fds[c->aux[k].slot];
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	cgs_cg_lose(m, c);
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

	/* at most a REMOVED and an ERROR, an ADDED and a SAMPLE per member,
	 * and a place on the list of the cycle's */
	if (cgs_evs_reserve(&s->first, 2 * n) < 0 || cgs_evs_reserve(&s->added, n) < 0 ||
	    cgs_evs_reserve(&s->samples, n) < 0 ||
	    cgs_grow((void **)&s->touched, &s->touched_cap, n, sizeof(*s->touched), 64) < 0)
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

		if (!m->reading && !m->in_batch && !m->touched && !m->awaiting) {
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
	free(s->touched);
}

/* @m's SAMPLE or CHANGED (and ADDED first, with its first values) */
static void cgs_collect_one(struct cgs_set *s, struct cgs_cg *m, int type)
{
	if (!m->announced) {
		if (s->ops->hold && s->ops->hold(s, m))
			return;	/* not yet: its values wait */
		cgs_evs_push(&s->added, m, CGSTREAM_EVENT_ADDED, 0);
		m->announced = true;
	}
	cgs_evs_push(&s->samples, m, type, 0);
	s->samples.v[s->samples.n - 1].changed = m->changed;
	m->changed = 0;
}

/* a member has values this cycle: read now, or (SUBTREE) listed by none
 * of the snapshots read, so as of them; not a KERNEL lead's without a
 * new publication */
static bool cgs_current(const struct cgs_set *s, const struct cgs_cg *m)
{
	/* removing: its REMOVED, with its final values, is the next event */
	if (!m->have || m->quiet || m->removing || m->skip_cycle == s->cycle)
		return false;
	return (m->cycle == s->cycle && m->got) || (m->have & s->fresh);
}

void cgs_set_collect(struct cgs_set *s)
{
	if (s->report == CGSTREAM_REPORT_CHANGES) {
		/* what the cycle read: its cost is what changed */
		for (size_t i = 0; i < s->n_touched; i++) {
			struct cgs_cg *m = s->touched[i];

			if (!m->dead && m->changed && cgs_current(s, m))
				cgs_collect_one(s, m, CGSTREAM_EVENT_CHANGED);
		}
	} else {
		for (struct cgs_cg *m = s->head; m; m = m->next)
			if (cgs_current(s, m))
				cgs_collect_one(s, m, CGSTREAM_EVENT_SAMPLE);
	}
	for (size_t i = 0; i < s->n_touched; i++)
		s->touched[i]->touched = false;
	s->n_touched = 0;
}

/* @v's values as the API hands them out: as of the later of their own
 * publication and (@fresh) the snapshot that did not list them */
static void cgs_pub_of(const struct cgs_vals *v, const struct cgs_flush *fresh, uint64_t *seq,
		       uint64_t *time_usec, uint64_t *skipped)
{
	*seq = v->seq;
	*time_usec = v->time_usec;
	*skipped = v->skipped;
	if (fresh && fresh->seq > v->seq) {
		*seq = fresh->seq;
		*time_usec = fresh->time_usec;
		*skipped = fresh->missed;
	}
}

/* what @m's events point to, as of now */
static void cgs_cg_out(const struct cgs_set *s, struct cgs_cg *m, bool current)
{
	const struct cgs_vals *v;
	uint64_t seq, t, skipped;

	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];

		if (!(m->have & c->bit))
			continue;
		v = &m->vals[i];
		cgs_pub_of(v, current && (s->fresh & c->bit) ? &s->snap_pub[i] : NULL, &seq, &t,
			   &skipped);
		if (c == &cgs_cpu) {
			m->out_cpu = (struct cgstream_values){ seq, t, v->n, 0, v->layout->names, v->v };
			m->sample.seq = seq;
			m->sample.flush_time_usec = t;
			m->sample.flush_missed = skipped;
		} else if (c == &cgs_memory) {
			m->out_mem = (struct cgstream_memory){ seq, t, v->n, 0, v->layout->names, v->v };
		} else if (c == &cgs_pressure) {
			m->out_psi = (struct cgstream_values){ seq, t, v->n, 0, v->layout->names, v->v };
		} else {
			m->out_io = (struct cgstream_io){
				.seq = seq, .flush_time_usec = t, .nr_devices = m->devs.n,
				.devices = m->devs.v, .nr_values = v->layout->nr,
				.names = v->layout->names, .values = v->v,
			};
		}
	}
}

void cgs_event_values(const struct cgs_set *s, const struct cgs_ev *e, struct cgstream_event *ev)
{
	struct cgs_cg *m = e->cg;

	cgs_cg_out(s, m, e->type != CGSTREAM_EVENT_REMOVED);
	ev->controllers = m->have;
	ev->changed = e->type == CGSTREAM_EVENT_REMOVED ? 0 : e->changed;
	ev->final = e->type == CGSTREAM_EVENT_REMOVED ? m->final : 0;
	ev->flags = (m->have & CGSTREAM_CTRL_IO) && m->partial ? CGSTREAM_EVENT_F_PARTIAL : 0;
	if (m->have & CGSTREAM_CTRL_CPU) {
		ev->sample = m->sample;
		ev->cpu = &m->out_cpu;
	}
	ev->memory = m->have & CGSTREAM_CTRL_MEMORY ? &m->out_mem : NULL;
	ev->io = m->have & CGSTREAM_CTRL_IO ? &m->out_io : NULL;
	ev->pressure = m->have & CGSTREAM_CTRL_PRESSURE ? &m->out_psi : NULL;
}

void cgs_set_uncollect(struct cgs_set *s)
{
	for (size_t i = 0; i < s->first.n; i++)
		s->first.v[i].cg->in_batch = false;
	s->first.n = s->added.n = s->samples.n = 0;
}
