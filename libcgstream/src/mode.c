// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one place a mode is chosen, for a stream, a group and a tree alike:
 * the best the kernel offers at the object's directory, or the mode the
 * caller asked for when the kernel has it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
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

int cgs_mode_pick(const char *dir, int asked, bool subtree_ok)
{
	int dfd, r = 0;

	if (asked == CGSTREAM_MODE_SUBTREE && !subtree_ok)
		return -EINVAL;	/* a tree's mode */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (subtree_ok)
		r = cgs_mode_try(dfd, cgs_cpu.subtree_file, CGSTREAM_MODE_SUBTREE, asked);
	if (r == 0)
		r = cgs_mode_try(dfd, cgs_cpu.stream_file, CGSTREAM_MODE_KERNEL, asked);
	close(dfd);
	return r ? r : CGSTREAM_MODE_FALLBACK;
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

int cgs_mode_buf_init(struct cgs_set *s, size_t size)
{
	s->buf_size = size;
	s->buf = malloc(size);
	return s->buf ? 0 : -ENOMEM;
}

void cgs_mode_buf_fini(struct cgs_set *s)
{
	free(s->buf);
	s->buf = NULL;
}

int cgs_mode_poll_tick(const struct cgs_set *s)
{
	struct pollfd pfd = { .fd = s->tick_fd, .events = POLLIN };

	if (poll(&pfd, 1, 0) < 0)
		return errno == EINTR ? 0 : -errno;
	return pfd.revents ? 1 : 0;	/* POLLERR too: the read hears of it */
}

bool cgs_mode_reads_at_once(const struct cgs_set *s)
{
	(void)s;
	return false;
}
