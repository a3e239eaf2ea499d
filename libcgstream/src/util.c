// SPDX-License-Identifier: LGPL-2.1-or-later
/* Clocks, timers, sized copies and the kernel's flush interval. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

CGS_EXPORT const char *cgstream_mode_name(int mode)
{
	switch (mode) {
	case CGSTREAM_MODE_AUTO:
		return "auto";
	case CGSTREAM_MODE_KERNEL:
		return "kernel";
	case CGSTREAM_MODE_FALLBACK:
		return "fallback";
	case CGSTREAM_MODE_SUBTREE:
		return "subtree";
	}
	return "unknown";
}

CGS_EXPORT const char *cgstream_version(void)
{
	return CGS_VERSION_STRING;
}

uint64_t cgs_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int cgs_grow(void **v, size_t *cap, size_t want, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *p;

	if (want <= *cap)
		return 0;
	while (n < want)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

int cgs_poll_in(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);

	if (r < 0)
		return -errno;
	return r > 0 ? 1 : 0;
}

/* the present bits of the fields that end within @size bytes of a sample */
static uint64_t cgs_present_within(size_t size)
{
	if (size < cgs_offsetofend(struct cgstream_sample, cgroup_id))
		return ~(uint64_t)CGSTREAM_F_CGROUP_ID;
	return ~(uint64_t)0;
}

static void cgs_copy_prefix(void *dst, size_t size, const void *src, size_t ours)
{
	memcpy(dst, src, size < ours ? size : ours);
	if (size > ours)
		memset((char *)dst + ours, 0, size - ours);
}

void cgs_copy_sample(void *dst, size_t size, const struct cgstream_sample *s)
{
	struct cgstream_sample c = *s;

	c.present &= cgs_present_within(size);
	cgs_copy_prefix(dst, size, &c, sizeof(c));
}

void cgs_copy_event(void *dst, size_t size, const struct cgstream_event *e)
{
	struct cgstream_event c = *e;

	c.sample.present &= cgs_present_within(size - offsetof(struct cgstream_event, sample));
	if (size < CGS_EVENT_SIZE_1_4) {
		/* no controller whose values the caller's struct cannot hold */
		c.controllers &= CGS_CTRL_ALL_1_3;
		c.changed &= CGS_CTRL_ALL_1_3;
		c.final &= CGS_CTRL_ALL_1_3;
	}
	cgs_copy_prefix(dst, size, &c, sizeof(c));
}

int cgs_timerfd(uint32_t ms)
{
	struct itimerspec its = {
		.it_interval = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L },
		.it_value = { .tv_sec = 0, .tv_nsec = 1 },	/* first sample at once */
	};
	int fd, err;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static int cgs_root_file(const char *root, const char *name, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s/%s", strcmp(root, "/") ? root : "",
			     name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

uint32_t cgs_fallback_ms(const char *root, uint32_t opt_ms, const struct cgs_controller *c)
{
	uint32_t ms = 0;

	if (opt_ms)
		return opt_ms;
	if (cgs_read_interval(root, c, &ms) == 0 && ms > 0)
		return ms;
	return CGS_DEFAULT_FALLBACK_MS;
}

int cgs_read_interval(const char *root, const struct cgs_controller *c, uint32_t *ms)
{
	char p[PATH_MAX], buf[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd, r;

	r = cgs_root_file(root, c->interval_file, p, sizeof(p));
	if (r < 0)
		return r;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	r = errno;
	close(fd);
	if (n < 0)
		return -r;
	buf[n] = '\0';
	if (n == 0 || buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || v > UINT32_MAX)
		return -EBADMSG;
	*ms = (uint32_t)v;
	return 0;
}

CGS_EXPORT int cgstream_get_ctrl_interval(const struct cgstream_opts *opts, unsigned int ctrl,
					  uint32_t *ms)
{
	const struct cgs_controller *c = cgs_controller_of_bit(ctrl);
	struct cgs_opts o;
	char *root;
	uint32_t v;
	int r;

	if (!ms || !c)
		return -EINVAL;
	r = cgs_opts_root(opts, &o, &root);
	if (r < 0)
		return r;
	r = cgs_read_interval(root, c, &v);
	free(root);
	if (r == 0)
		*ms = v;
	return r;
}

/* the kernel checks the range and the writer's privilege; its errno is ours */
CGS_EXPORT int cgstream_set_ctrl_interval(const struct cgstream_opts *opts, unsigned int ctrl,
					  uint32_t ms)
{
	const struct cgs_controller *c = cgs_controller_of_bit(ctrl);
	struct cgs_opts o;
	char p[PATH_MAX], buf[16], *root;
	int fd, r, len;
	ssize_t n;

	if (!c)
		return -EINVAL;
	r = cgs_opts_root(opts, &o, &root);
	if (r < 0)
		return r;
	r = cgs_root_file(root, c->interval_file, p, sizeof(p));
	free(root);
	if (r < 0)
		return r;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", ms);
	n = write(fd, buf, (size_t)len);
	r = n < 0 ? -errno : (n == len ? 0 : -EIO);
	close(fd);
	return r;
}

CGS_EXPORT int cgstream_get_interval(const struct cgstream_opts *opts, uint32_t *ms)
{
	return cgstream_get_ctrl_interval(opts, CGSTREAM_CTRL_CPU, ms);
}

CGS_EXPORT int cgstream_set_interval(const struct cgstream_opts *opts, uint32_t ms)
{
	return cgstream_set_ctrl_interval(opts, CGSTREAM_CTRL_CPU, ms);
}
