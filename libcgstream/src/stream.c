// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One cgroup's stream.
 *
 * Kernel mode: the fd is cpu.stat.stream itself.  It polls readable once
 * per flush this open file has not read, and pread(fd, ..., 0) returns the
 * values of the latest flush without blocking.
 *
 * Fallback mode: the fd is a CLOCK_MONOTONIC timerfd firing at the
 * interval; a read consumes the expirations and reads cpu.stat (which
 * flushes in the kernel, as any cpu.stat reader does).  The library counts
 * its own cycles as seq and stamps them with the monotonic clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct cgstream {
	char *path;
	int mode;
	int data_fd;		/* cpu.stat.stream or cpu.stat */
	int timer_fd;		/* fallback only, else -1 */
	bool removed;
	uint64_t id;		/* the cgroup's: its directory's inode */
	uint64_t last_seq;	/* seq of the last sample returned */
	uint64_t missed;	/* fallback: timer expirations beyond one per read */
};

CGS_EXPORT int cgstream_open(const char *cgroup, const struct cgstream_opts *opts,
			     struct cgstream **ret)
{
	struct cgstream *st;
	struct cgs_opts o;
	char *root = NULL;
	int r;

	if (!cgroup || !ret)
		return -EINVAL;
	r = cgs_opts_load(opts, &o);
	if (r < 0)
		return r;
	if (o.mode == CGSTREAM_MODE_SUBTREE)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->data_fd = st->timer_fd = -1;

	r = cgs_find_root(&o, &root);
	if (r < 0)
		goto fail;
	r = cgs_resolve(root, cgroup, &st->path);
	if (r < 0)
		goto fail;
	r = cgs_mode_pick(st->path, o.mode, false);
	if (r >= 0)
		r = cgs_open_data(st->path, r, &st->data_fd, &st->id);
	if (r < 0)
		goto fail;
	st->mode = r;
	if (st->mode == CGSTREAM_MODE_FALLBACK) {
		r = cgs_timerfd(cgs_fallback_ms(root, o.fallback_interval_ms));
		if (r < 0)
			goto fail;
		st->timer_fd = r;
	}
	free(root);
	*ret = st;
	return 0;
fail:
	free(root);
	cgstream_close(st);
	return r;
}

CGS_EXPORT void cgstream_close(struct cgstream *st)
{
	if (!st)
		return;
	if (st->data_fd >= 0)
		close(st->data_fd);
	if (st->timer_fd >= 0)
		close(st->timer_fd);
	free(st->path);
	free(st);
}

CGS_EXPORT int cgstream_fd(const struct cgstream *st)
{
	if (!st)
		return -EINVAL;
	return st->mode == CGSTREAM_MODE_KERNEL ? st->data_fd : st->timer_fd;
}

CGS_EXPORT int cgstream_mode(const struct cgstream *st)
{
	return st ? st->mode : -EINVAL;
}

CGS_EXPORT const char *cgstream_path(const struct cgstream *st)
{
	return st ? st->path : NULL;
}

CGS_EXPORT int cgstream_wait(struct cgstream *st, int timeout_ms)
{
	if (!st)
		return -EINVAL;
	if (st->removed)
		return 1;	/* the next read reports -ENODEV at once */
	/* POLLERR counts as ready: the read will say -ENODEV */
	return cgs_poll_in(cgstream_fd(st), timeout_ms);
}

/* one read of the data file into a sample; -EOVERFLOW if it may be cut */
static int cgs_read_sample(int fd, struct cgstream_sample *s)
{
	char buf[CGS_READ_BUF];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return cgs_read_errno(errno);
	if ((size_t)n == sizeof(buf))
		return -EOVERFLOW;
	return cgstream_parse(buf, (size_t)n, s, sizeof(*s));
}

CGS_EXPORT int cgstream_read(struct cgstream *st, struct cgstream_sample *sample,
			     size_t sample_size)
{
	struct cgstream_sample s;
	uint64_t expirations;
	int r;

	if (!st || !sample || sample_size < CGS_SAMPLE_SIZE_1_0)
		return -EINVAL;
	if (st->removed)
		return -ENODEV;

	if (st->mode == CGSTREAM_MODE_KERNEL) {
		r = cgs_read_sample(st->data_fd, &s);
		if (r == -ENODEV)
			st->removed = true;
		if (r < 0)
			return r;
		if (!(s.present & CGSTREAM_F_SEQ))
			return -EBADMSG;
		if (s.seq == st->last_seq)
			return -EAGAIN;	/* also before the first flush: seq 0 */
	} else {
		if (read(st->timer_fd, &expirations, sizeof(expirations)) !=
		    sizeof(expirations))
			return errno == EAGAIN ? -EAGAIN : -errno;
		st->missed += expirations - 1;
		r = cgs_read_sample(st->data_fd, &s);
		if (r == -ENODEV)
			st->removed = true;
		if (r < 0)
			return r;
		s.seq = st->last_seq + 1;
		s.flush_time_usec = cgs_now_usec();
		s.flush_missed = st->missed;
		s.present |= CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
			     CGSTREAM_F_FLUSH_MISSED;
	}
	st->last_seq = s.seq;
	s.cgroup_id = st->id;
	s.present |= CGSTREAM_F_CGROUP_ID;
	cgs_copy_sample(sample, sample_size, &s);
	return 0;
}
