/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for libcgstream's test programs: each test is a standalone
 * program exiting 0 (pass), 1 (fail) or 77 (skip).
 */
#ifndef CGSTREAM_TESTUTIL_H
#define CGSTREAM_TESTUTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstream.h"

#define EXIT_SKIP 77


#define T_FAIL(...) do {						\
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	exit(1);							\
} while (0)

#define T_ASSERT(cond) do {						\
	if (!(cond))							\
		T_FAIL("%s", #cond);					\
} while (0)

/* an int expression must equal an expected value (errno names readable) */
#define T_EQ(expr, want) do {						\
	long long _got = (long long)(expr), _want = (long long)(want);	\
	if (_got != _want)						\
		T_FAIL("%s = %lld (%s), want %lld (%s)", #expr, _got,	\
		       _got < 0 ? strerror((int)-_got) : "",		\
		       _want, _want < 0 ? strerror((int)-_want) : "");	\
} while (0)

static inline void t_skip(const char *why)
{
	printf("SKIP: %s\n", why);
	exit(EXIT_SKIP);
}

static inline void t_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline uint64_t t_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t t_now_ms(void)
{
	return t_now_us() / 1000u;
}

static inline void t_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* the cgroup2 mount, or NULL */
static inline const char *t_cgroup_root(void)
{
	static char root[PATH_MAX];

	if (!root[0] && cgstream_resolve_path("/", NULL, root, sizeof(root)) < 0)
		return NULL;
	return root;
}

static inline bool t_kernel_has_stream(void)
{
	char p[PATH_MAX];
	const char *root = t_cgroup_root();

	if (!root)
		return false;
	snprintf(p, sizeof(p), "%s/cpu.stat.stream", root);
	return access(p, F_OK) == 0;
}

static inline int t_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -err;
}

static inline int t_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* mkdir a cgroup "<parent>/<name>"; 0 or -errno */
static inline int t_cg_make(const char *parent, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", parent, name);
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* rmdir, retrying while the last task is on its way out */
static inline int t_cg_remove(const char *path)
{
	for (int i = 0; i < 200; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		t_sleep_ms(10);
	}
	return -EBUSY;
}

/* a child process that joins @cgroup (if not NULL) and burns CPU */
static inline pid_t t_burner(const char *cgroup)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		volatile unsigned long x = 0;

		if (cgroup) {
			char p[PATH_MAX];

			snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
			if (t_write_file(p, "0") < 0)
				_exit(2);
		}
		alarm(120);	/* never outlive a broken test */
		for (;;)
			x++;
	}
	return pid;
}

/* a child process that joins @cgroup and uses @spin_us of CPU every
 * @sleep_ms, for an hour at most: a cgroup whose values keep changing */
static inline pid_t t_ticker(const char *cgroup, unsigned int spin_us, unsigned int sleep_ms)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
		if (t_write_file(p, "0") < 0)
			_exit(2);
		alarm(3600);	/* never outlive a broken test */
		for (;;) {
			uint64_t t = t_now_us();

			while (t_now_us() - t < spin_us)
				;
			t_sleep_ms(sleep_ms);
		}
	}
	return pid;
}

static inline void t_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* open fds of this process; those whose target is @what when not NULL */
static inline int t_count_fds(const char *what)
{
	char p[300], target[256];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	T_ASSERT(d != NULL);
	while ((de = readdir(d))) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		len = readlink(p, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (!what || !strcmp(target, what))
			n++;
	}
	closedir(d);
	return n - (what ? 0 : 1);	/* not the directory's own fd */
}

/*
 * The next non-empty batch of @g: up to @max events of @size bytes each
 * (the caller's struct, maybe an older one) at @ev; fails after 10 s.
 */
static inline int t_group_batch(struct cgstream_group *g, void *ev, size_t max, size_t size)
{
	uint64_t start = t_now_ms();

	for (;;) {
		int n;

		T_ASSERT(cgstream_group_wait(g, 5000) >= 0);
		n = cgstream_group_process(g, (struct cgstream_event *)ev, max, size);
		T_ASSERT(n >= 0);
		if (n > 0)
			return n;
		if (t_now_ms() - start > 10000)
			T_FAIL("no batch within 10 s");
	}
}

/* the same for a tree */
static inline int t_tree_batch(struct cgstream_tree *t, void *ev, size_t max, size_t size)
{
	uint64_t start = t_now_ms();

	for (;;) {
		int n;

		T_ASSERT(cgstream_tree_wait(t, 5000) >= 0);
		n = cgstream_tree_process(t, (struct cgstream_event *)ev, max, size);
		T_ASSERT(n >= 0);
		if (n > 0)
			return n;
		if (t_now_ms() - start > 10000)
			T_FAIL("no batch within 10 s");
	}
}

/* --- kernel.io_uring_disabled, set for a while and restored (at exit too) --- */
#define T_IO_URING_SYSCTL "/proc/sys/kernel/io_uring_disabled"
static char t_io_uring_saved[16];

static inline void t_io_uring_restore(void)
{
	if (t_io_uring_saved[0] && t_write_file(T_IO_URING_SYSCTL, t_io_uring_saved) == 0)
		t_io_uring_saved[0] = '\0';
}

/* io_uring refused to everyone (2); false when there is no such sysctl */
static inline bool t_io_uring_disable(void)
{
	static bool registered;

	if (t_read_file(T_IO_URING_SYSCTL, t_io_uring_saved, sizeof(t_io_uring_saved)) <= 0) {
		t_io_uring_saved[0] = '\0';
		return false;
	}
	if (!registered) {
		atexit(t_io_uring_restore);
		registered = true;
	}
	T_EQ(t_write_file(T_IO_URING_SYSCTL, "2"), 0);
	return true;
}

/* a name unique to this test run */
static inline const char *t_name(const char *what)
{
	static char buf[8][64];
	static int i;
	char *b = buf[i++ % 8];

	snprintf(b, 64, "cgstest-%d-%s", (int)getpid(), what);
	return b;
}

#endif

/* --- VM tests: the kernel's intervals, restored at exit --- */
#if CGSTREAM_VERSION_MINOR >= 2	/* not for a test built against an older header */
static uint32_t t_saved_interval[8];
static bool t_interval_saved[8];

static inline void t_restore_interval(void)
{
	for (unsigned int i = 0; i < 8; i++)
		if (t_interval_saved[i])
			cgstream_set_ctrl_interval(NULL, 1u << i, t_saved_interval[i]);
}

/* set controller @ctrl's interval for this test; the old one comes back at exit */
static inline void t_use_ctrl_interval(unsigned int ctrl, uint32_t ms)
{
	static bool registered;
	unsigned int i = (unsigned int)__builtin_ctz(ctrl) & 7;

	if (!t_interval_saved[i]) {
		T_EQ(cgstream_get_ctrl_interval(NULL, ctrl, &t_saved_interval[i]), 0);
		t_interval_saved[i] = true;
		if (!registered)
			atexit(t_restore_interval);
		registered = true;
	}
	T_EQ(cgstream_set_ctrl_interval(NULL, ctrl, ms), 0);
}

static inline void t_use_interval(uint32_t ms)
{
	t_use_ctrl_interval(CGSTREAM_CTRL_CPU, ms);
}

/* every controller's stream that this kernel has at @ms */
static inline void t_use_intervals(uint32_t ms)
{
	uint32_t old;

	for (unsigned int c = CGSTREAM_CTRL_CPU; c & CGSTREAM_CTRL_ALL; c <<= 1)
		if (cgstream_get_ctrl_interval(NULL, c, &old) == 0)
			t_use_ctrl_interval(c, ms);
}
#endif

/* what the memory and io tests read: cpu, memory and io (1.2's and 1.3's
 * CGSTREAM_CTRL_ALL; pressure has tests of its own) */
#define T_CTRL_MEMIO	(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_MEMORY | CGSTREAM_CTRL_IO)

/* the cgroup at @dir has pressure files (PSI on, its cgroup.pressure 1) */
static inline bool t_has_pressure(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/cpu.pressure", dir);
	return access(p, F_OK) == 0;
}

/* "total=" of @dir/@resource.pressure's @kind ("some", "full") line, read
 * now: true, or false without that file or line */
static inline bool t_pressure_total(const char *dir, const char *resource, const char *kind,
				    uint64_t *total)
{
	char p[PATH_MAX + 32], buf[512];
	const char *line = buf, *t;

	snprintf(p, sizeof(p), "%s/%s.pressure", dir, resource);
	if (t_read_file(p, buf, sizeof(buf)) < 0)
		return false;
	for (; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, kind, strlen(kind)) || line[strlen(kind)] != ' ')
			continue;
		t = strstr(line, "total=");
		if (!t)
			return false;
		*total = strtoull(t + 6, NULL, 10);
		return true;
	}
	return false;
}

static inline void t_require_kernel_stream(void)
{
	if (!t_cgroup_root())
		t_skip("no cgroup2 mount");
	if (!t_kernel_has_stream())
		t_skip("this kernel has no cpu.stat.stream");
	if (geteuid() != 0)
		t_skip("needs root");
}
