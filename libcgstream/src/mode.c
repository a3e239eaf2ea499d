// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one place a mode is chosen, for a stream, a group and a tree alike,
 * and for each controller they read: the best the kernel offers at the
 * object's directory, or the mode the caller asked for when the kernel
 * has it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* @kmode if its @file opens in @dfd and @asked takes it; 0: try the next */
static int cgs_mode_try(int dfd, const char *file, int kmode, int asked)
{
	int fd;

	if (asked != CGSTREAM_MODE_AUTO && asked != kmode)
		return 0;
	fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return kmode;
	}
	if (errno == ENOENT)
		return asked == kmode ? -EOPNOTSUPP : 0;
	return -errno;
}

int cgs_mode_pick(const char *dir, int asked, bool subtree_ok, const struct cgs_controller *c)
{
	int dfd, fd, r = 0;

	if (asked == CGSTREAM_MODE_SUBTREE && !subtree_ok)
		return -EINVAL;	/* a tree's mode */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	/* the controller is there at all: its *.stat file */
	fd = openat(dfd, c->stat_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		r = errno == ENOENT ? -ENOMEDIUM : -errno;
	else
		close(fd);
	if (r == 0 && subtree_ok)
		r = cgs_mode_try(dfd, c->subtree_file, CGSTREAM_MODE_SUBTREE, asked);
	if (r == 0)
		r = cgs_mode_try(dfd, c->stream_file, CGSTREAM_MODE_KERNEL, asked);
	close(dfd);
	return r ? r : CGSTREAM_MODE_FALLBACK;
}

void cgs_probe(const char *dir, const struct cgs_opts *o, bool subtree_ok,
	       struct cgstream_probe *p)
{
	*p = (struct cgstream_probe){ .controllers = o->controllers };
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		const struct cgs_controller *c = cgs_controllers[i];

		p->modes[i] = cgs_mode_pick(dir, o->mode, subtree_ok, c);
		/* the default set: a controller not enabled here is left out */
		if (o->defaults && c != &cgs_cpu && p->modes[i] == -ENOMEDIUM)
			p->controllers &= ~c->bit;
	}
	for (int i = 0; i < CGS_NR_CTRL && !p->error; i++)
		if ((p->controllers & cgs_controllers[i]->bit) && p->modes[i] < 0)
			p->error = p->modes[i];
}

int cgs_set_conf_pick(struct cgs_set_conf *conf, const char *dir, const char *mount,
		      const struct cgs_opts *o, bool subtree_ok)
{
	const struct cgs_controller *lead = NULL;
	struct cgstream_probe p;

	cgs_probe(dir, o, subtree_ok, &p);
	if (p.error)
		return p.error;
	*conf = (struct cgs_set_conf){ .dir = dir, .ctrls = p.controllers };
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (!(p.controllers & cgs_controllers[i]->bit))
			continue;
		conf->modes[i] = p.modes[i];
		if (!lead)
			lead = cgs_controllers[i];
	}
	if (!lead)
		return -EINVAL;
	conf->fallback_ms = cgs_fallback_ms(mount, o->fallback_interval_ms, lead);
	return 0;
}

#define CGS_PROBE_SIZE_1_3	sizeof(struct cgstream_probe)

CGS_EXPORT int cgstream_probe(const char *cgroup, const struct cgstream_opts *opts,
			      unsigned int flags, struct cgstream_probe *out, size_t out_size)
{
	struct cgstream_probe p = { 0 };
	char *mount = NULL, *path = NULL;
	struct cgs_opts o;
	bool tree = flags & CGSTREAM_PROBE_TREE;
	int r;

	if (!cgroup || !out || out_size < CGS_PROBE_SIZE_1_3 || (flags & ~CGSTREAM_PROBE_TREE))
		return -EINVAL;
	r = cgs_opts_root(opts, &o, &mount);
	if (r == 0)
		r = cgs_resolve(mount, cgroup, &path);
	if (r == 0 && !tree && o.mode == CGSTREAM_MODE_SUBTREE)
		r = -EINVAL;	/* a tree's mode */
	if (r == 0)
		cgs_probe(path, &o, tree, &p);
	else
		p.error = r;
	free(mount);
	free(path);
	memcpy(out, &p, sizeof(p));
	if (out_size > sizeof(p))
		memset((char *)out + sizeof(p), 0, out_size - sizeof(p));
	return 0;
}

const struct cgs_mode *cgs_mode_of(int mode)
{
	switch (mode) {
	case CGSTREAM_MODE_SUBTREE:
		return &cgs_mode_subtree;
	case CGSTREAM_MODE_KERNEL:
		return &cgs_mode_streams;
	default:
		return &cgs_mode_emulation;
	}
}

/* what the modes share */

int cgs_mode_poll_tick(const struct cgs_set *s)
{
	struct pollfd pfd = { .fd = s->tick_fd, .events = POLLIN };

	if (poll(&pfd, 1, 0) < 0)
		return errno == EINTR ? 0 : -errno;
	return pfd.revents ? 1 : 0;	/* POLLERR too: the read hears of it */
}

bool cgs_mode_read_done(struct cgs_set *s, void *state)
{
	(void)s;
	(void)state;
	return true;	/* read() read the whole cycle */
}

bool cgs_mode_no_calls(const struct cgs_set *s, const void *state)
{
	(void)s;
	(void)state;
	return false;
}

int cgs_reader_init(struct cgs_reader *rd)
{
	rd->size = CGS_TEXT_BUF;
	rd->buf = malloc(rd->size);
	rd->aux = malloc(CGS_READ_BUF * CGS_NR_FILES);
	if (rd->buf && rd->aux)
		return 0;
	cgs_reader_fini(rd);
	return -ENOMEM;
}

void cgs_reader_fini(struct cgs_reader *rd)
{
	free(rd->buf);
	free(rd->aux);
	*rd = (struct cgs_reader){ 0 };
}

ssize_t cgs_reader_pread(struct cgs_reader *rd, int fd)
{
	for (;;) {
		ssize_t n = pread(fd, rd->buf, rd->size, 0);
		char *b;

		if (n < 0)
			return -errno;
		if ((size_t)n < rd->size || rd->size >= CGS_TEXT_MAX)
			return n;	/* all of it, or -EOVERFLOW for the decoder */
		b = malloc(2 * rd->size);
		if (!b)
			return n;
		free(rd->buf);
		rd->buf = b;
		rd->size *= 2;
	}
}

/* the stream's own keys, or the emulation's: the flush the values are as of */
static int cgs_text_flush(const struct cgs_flush *own, const struct cgs_flush *fl,
			  uint64_t *seq, uint64_t *time_usec)
{
	if (own) {
		*seq = own->seq;
		*time_usec = own->time_usec;
		return 0;
	}
	if (!(fl->present & CGSTREAM_F_SEQ))
		return -EBADMSG;
	*seq = fl->seq;
	*time_usec = fl->time_usec;
	return 0;
}

static int cgs_decode_cpu(struct cgs_set *s, struct cgs_cg *m, const struct cgs_text *t,
			  const struct cgs_flush *own)
{
	struct cgstream_sample smp;
	int r = cgs_parse_read(t->buf, t->res, t->size, &smp);

	if (r < 0)
		return r;
	if (!own) {
		if (!(smp.present & CGSTREAM_F_SEQ))
			return -EBADMSG;
		if (s->lead == &cgs_cpu && smp.seq == m->last_seq && !s->sync)
			return 1;	/* no flush since its last read */
		m->last_seq = smp.seq;
	} else {
		smp.seq = own->seq;
		smp.flush_time_usec = own->time_usec;
		smp.flush_missed = own->missed;
		smp.present |= CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED;
	}
	cgs_set_sampled(s, m, &smp);
	return 0;
}

static int cgs_decode_memory(struct cgs_set *s, struct cgs_cg *m,
			     const struct cgs_text t[CGS_NR_FILES], const struct cgs_flush *own)
{
	const struct cgs_text *main = &t[CGS_FILE_MEMORY];
	struct cgs_flush fl = { 0 };
	uint64_t seq = 0, time_usec = 0;
	int r = cgs_read_result(main->res, main->size);

	s->kvs.n = 0;
	if (r == 0)
		r = cgs_parse_keyed(main->buf, (size_t)main->res, "", &s->kvs, own ? NULL : &fl);
	for (size_t k = 0; k < cgs_memory.n_aux && r == 0; k++) {
		const struct cgs_aux_file *a = &cgs_memory.aux[k];
		const struct cgs_text *x = &t[a->slot];
		uint64_t v;

		if (!x->buf)
			continue;	/* the cgroup has no such file */
		r = cgs_read_result(x->res, x->size);
		if (r < 0)
			break;
		if (a->keyed) {
			r = cgs_parse_keyed(x->buf, (size_t)x->res, a->name, &s->kvs, NULL);
		} else {
			r = cgs_parse_value(x->buf, (size_t)x->res, &v);
			if (r == 0)
				r = cgs_kvs_push(&s->kvs, "", a->name, strlen(a->name), v);
		}
	}
	if (r == 0)
		r = cgs_text_flush(own, &fl, &seq, &time_usec);
	if (r == 0 && !own && s->lead == &cgs_memory && seq == m->last_seq && !s->sync)
		return 1;
	if (r == 0)
		r = cgs_memory_store(s, m, &s->kvs);
	if (r < 0)
		return r;
	if (s->lead == &cgs_memory)
		m->last_seq = seq;
	m->mem.seq = seq;
	m->mem.flush_time_usec = time_usec;
	cgs_cg_touch(s, m);
	m->got |= CGSTREAM_CTRL_MEMORY;
	return 0;
}

static int cgs_decode_io(struct cgs_set *s, struct cgs_cg *m, const struct cgs_text *t,
			 const struct cgs_flush *own)
{
	struct cgs_flush fl = { 0 };
	uint64_t seq = 0, time_usec = 0;
	int r = cgs_read_result(t->res, t->size);

	if (r == 0)
		r = cgs_parse_io(t->buf, (size_t)t->res, &m->devs, own ? NULL : &fl);
	if (r == 0)
		r = cgs_text_flush(own, &fl, &seq, &time_usec);
	if (r < 0)
		return r;
	if (!own && s->lead == &cgs_io && seq == m->last_seq && !s->sync)
		return 1;
	if (s->lead == &cgs_io)
		m->last_seq = seq;
	m->io = (struct cgstream_io){ .seq = seq, .flush_time_usec = time_usec,
				      .nr_devices = m->devs.n, .devices = m->devs.v };
	cgs_cg_touch(s, m);
	m->got |= CGSTREAM_CTRL_IO;
	return 0;
}

int cgs_mode_decode_text(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
			 const struct cgs_text t[CGS_NR_FILES], const struct cgs_flush *own)
{
	int r;

	if (!t[c->slot].buf)
		return 0;	/* the cgroup lacks the controller */
	switch (c->index) {
	case CGS_CPU:
		r = cgs_decode_cpu(s, m, &t[c->slot], own);
		break;
	case CGS_MEMORY:
		r = cgs_decode_memory(s, m, t, own);
		break;
	default:
		r = cgs_decode_io(s, m, &t[c->slot], own);
		break;
	}
	if (r == 1) {
		m->skip_cycle = s->cycle;	/* the lead's flush did not move */
		return 1;
	}
	if (r == -EAGAIN)
		return 0;	/* no values this cycle */
	if (r < 0) {
		s->ops->failed(s, m, r);
		return r;
	}
	m->error = 0;
	return 0;
}

int cgs_mode_read_plain(struct cgs_set *s, struct cgs_reader *rd, struct cgs_cg *m,
			const struct cgs_controller *c, const struct cgs_flush *own)
{
	struct cgs_text t[CGS_NR_FILES] = { { 0 } };
	int fd = m->fds[c->slot];
	ssize_t n;

	if (fd < 0)
		return 0;
	n = cgs_reader_pread(rd, fd);
	/* the read may have grown the buffer */
	t[c->slot] = (struct cgs_text){ rd->buf, n, rd->size };
	for (size_t k = 0; k < c->n_aux; k++) {
		uint8_t slot = c->aux[k].slot;
		char *b = rd->aux + (size_t)slot * CGS_READ_BUF;

		if (m->fds[slot] < 0)
			continue;
		n = pread(m->fds[slot], b, CGS_READ_BUF, 0);
		t[slot] = (struct cgs_text){ b, n < 0 ? -errno : n, CGS_READ_BUF };
	}
	return cgs_mode_decode_text(s, m, c, t, own);
}
