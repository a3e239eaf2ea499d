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
		/* the default set: a controller not enabled here, or whose file of
		 * the mode asked for the kernel lacks (a kernel that streams cpu
		 * but not pressure), is left out */
		if (o->defaults && c != &cgs_cpu &&
		    (p->modes[i] == -ENOMEDIUM || p->modes[i] == -EOPNOTSUPP))
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
	*conf = (struct cgs_set_conf){ .dir = dir, .ctrls = p.controllers, .report = o->report };
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

/* the stream's own keys, or the emulation's: the publication the values
 * are as of, into @in; -EBADMSG for a stream text without publication_seq */
static int cgs_text_pub(const struct cgs_flush *own, const struct cgs_flush *fl,
			struct cgs_in *in)
{
	const struct cgs_flush *f = own ? own : fl;

	if (!own && !(fl->present & CGSTREAM_F_SEQ))
		return -EBADMSG;
	in->seq = f->seq;
	in->time_usec = f->time_usec;
	in->skipped = f->missed;
	in->pub_present = own ? CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED :
			  fl->present;
	return 0;
}

/* a KERNEL lead's publication that @m has had already: no sample (1) */
static bool cgs_lead_seen(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
			  const struct cgs_flush *own, uint64_t seq)
{
	if (own || s->lead != c)
		return false;
	if (seq == m->last_seq && !s->sync)
		return true;
	m->last_seq = seq;
	return false;
}

/* the values parsed into s->kvs (and s->devs for io), kept as @c's of @m */
static int cgs_decode_keep(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
			   struct cgs_in *in)
{
	const struct cgs_names *had = m->vals[c->index].layout;
	const struct cgs_kvs *kvs = &s->kvs;
	int r;

	if (c == &cgs_io) {
		/* per device, the counters of the io table, by its names */
		r = cgs_io_text_values(s, in);
		if (r < 0)
			return r;
	} else {
		in->layout = cgs_layout_of_kvs(s, c, had, kvs);
		if (!in->layout || cgs_grow((void **)&s->scratch, &s->scratch_cap,
					    kvs->n ? kvs->n : 1, sizeof(uint64_t), 128) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < kvs->n; i++)
			s->scratch[i] = kvs->v[i].v;
		in->values = s->scratch;
		in->n = (uint32_t)kvs->n;
	}
	return cgs_cg_take(s, m, c, in);
}

/* the other files of @c (memory.current, memory.pressure, ...), appended to s->kvs */
static int cgs_decode_aux(struct cgs_set *s, const struct cgs_controller *c,
			  const struct cgs_text t[CGS_NR_FILES])
{
	int r = 0;

	for (size_t k = 0; k < c->n_aux && r == 0; k++) {
		const struct cgs_aux_file *a = &c->aux[k];
		const struct cgs_text *x = &t[a->slot];
		size_t len;
		uint64_t v;

		if (!x->buf)
			continue;	/* the cgroup has no such file */
		r = cgs_read_result(x->res, x->size);
		if (r < 0)
			break;
		len = (size_t)x->res;
		switch (a->format) {
		case CGS_FMT_KEYED:
			r = cgs_parse_keyed(x->buf, len, a->name, &s->kvs, NULL);
			break;
		case CGS_FMT_PRESSURE:
			r = cgs_parse_pressure(x->buf, len, a->name, &s->kvs, NULL);
			break;
		default:
			r = cgs_parse_value(x->buf, len, &v);
			if (r == 0)
				r = cgs_kvs_push(&s->kvs, "", a->name, strlen(a->name), v);
		}
	}
	return r;
}

/* @c's own text (its *.stat file's, @own; else its stream's, whose
 * publication goes to @fl) parsed into s->kvs, or s->devs for io */
static int cgs_decode_main(struct cgs_set *s, const struct cgs_controller *c,
			   const struct cgs_text *main, const struct cgs_flush *own,
			   struct cgs_flush *fl)
{
	size_t len = (size_t)main->res;

	switch (c->format) {
	case CGS_FMT_IO:
		return cgs_parse_io(main->buf, len, &s->devs, own ? NULL : fl);
	case CGS_FMT_PRESSURE:
		return cgs_parse_pressure(main->buf, len, own ? c->stat_name : NULL, &s->kvs,
					  own ? NULL : fl);
	default:
		return cgs_parse_keyed(main->buf, len, "", &s->kvs, own ? NULL : fl);
	}
}

/* controller @c's text (and its aux files) of @m: 0; 1: a KERNEL lead's
 * publication did not move; -errno */
static int cgs_decode(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
		      const struct cgs_text t[CGS_NR_FILES], const struct cgs_flush *own)
{
	const struct cgs_text *main = &t[c->slot];
	struct cgs_flush fl = { 0 };
	struct cgs_in in = { 0 };
	int r = cgs_read_result(main->res, main->size);

	s->kvs.n = 0;
	if (r == 0)
		r = cgs_decode_main(s, c, main, own, &fl);
	if (r == 0)
		r = cgs_decode_aux(s, c, t);
	if (r == 0)
		r = cgs_text_pub(own, &fl, &in);
	if (r < 0)
		return r;
	if (cgs_lead_seen(s, m, c, own, in.seq))
		return 1;
	return cgs_decode_keep(s, m, c, &in);
}

int cgs_mode_decode_text(struct cgs_set *s, struct cgs_cg *m, const struct cgs_controller *c,
			 const struct cgs_text t[CGS_NR_FILES], const struct cgs_flush *own)
{
	int r;

	if (!t[c->slot].buf)
		return 0;	/* the cgroup lacks the controller */
	r = cgs_decode(s, m, c, t, own);
	if (r == 1) {
		m->skip_cycle = s->cycle;	/* the lead's flush did not move */
		return 1;
	}
	if (r == -EAGAIN)
		return 0;	/* no values this cycle */
	if (r == -ENODEV && cgs_cg_alive(m) && !cgs_cg_keeps_files(m, c)) {
		/* its files went, the cgroup did not (memory disabled for it,
		 * its cgroup.pressure set to 0): it stays, without them; files
		 * that answer ENODEV while its cgroup.controllers still lists
		 * the controller belong to a cgroup whose rmdir is under way */
		cgs_cg_lose_files(m, c);
		return 0;
	}
	if (r < 0) {
		s->ops->failed(s, m, r);
		return r;
	}
	/* read again after an ERROR: news to the caller, who dropped it */
	if (m->error)
		m->changed |= m->have;
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
