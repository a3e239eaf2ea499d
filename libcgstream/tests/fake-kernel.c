// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD shim for host tests: the cgstream files of the patched kernel
 * on a kernel without them, as the SPEC has them, so that the library's
 * kernel and subtree modes run on the host.  Not a kernel: a test aid.
 *
 *  cpu.stat.stream_interval  reads the interval, a write sets it (0 or
 *      10..3600000, else EINVAL); flushes happen at t0 + k * interval.
 *  cpu.stat.stream           polls readable once per flush not yet read
 *      through this fd (a timerfd on the flush clock); pread at 0 gives
 *      the cgroup's cpu.stat plus flush_seq and flush_time_usec.
 *  cpu.stat.stream.subtree   the same polling; pread at 0 takes a
 *      snapshot: one record per cgroup, the opened one first (parent_id
 *      0), then its descendants in pre-order, ids the directories' inode
 *      numbers; reading on at the running offset continues it, a read
 *      returns whole records only, EINVAL when the next one does not fit,
 *      0 at the end.  Records are $FAKE_RECORD_SIZE bytes (112 by default;
 *      more tests a future size) and an unknown kind of record follows
 *      every 7th.
 *  Both: ENODEV once the cgroup is gone.  access() finds them.
 * The interval starts at $FAKE_INTERVAL_MS (else 0, off); it is this
 * process's own.  fake_kernel_reads() counts the preads of subtree files.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/cgroup_stat_stream.h>

#define STREAM		"cpu.stat.stream"
#define SUBTREE		"cpu.stat.stream.subtree"
#define INTERVAL	"cpu.stat.stream_interval"

enum { F_STREAM = 1, F_SUBTREE, F_INTERVAL_W };

struct fake {
	int kind;
	char path[PATH_MAX];	/* the cgroup's directory */
	uint64_t id;
	char *snap;
	size_t len, cap;
	uint64_t seq, when;	/* the flush of the snapshot */
};

static struct fake **fakes;	/* by fd */
static int n_fakes;
static uint32_t interval_ms;
static uint64_t t0_usec, seq_base;
static unsigned long subtree_reads;

unsigned long fake_kernel_reads(void);
unsigned long fake_kernel_reads(void)
{
	return subtree_reads;
}

#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	if (!real_##name)						\
		real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* the latest flush: its number and time */
static uint64_t flush_seq(uint64_t *when)
{
	static bool started;
	uint64_t k = 0;

	if (!started) {	/* $FAKE_INTERVAL_MS: streaming on from the start */
		const char *e = getenv("FAKE_INTERVAL_MS");

		started = true;
		interval_ms = e ? (uint32_t)atoi(e) : 0;
		t0_usec = now_usec();
	}

	if (interval_ms)
		k = (now_usec() - t0_usec) / (interval_ms * 1000ull);
	if (when)
		*when = t0_usec + k * interval_ms * 1000ull;
	return seq_base + k;
}

static struct fake *fake_of(int fd)
{
	return fd >= 0 && fd < n_fakes ? fakes[fd] : NULL;
}

/* a stream's timerfd fires at every flush after now */
static void arm(int fd)
{
	struct itimerspec its = { 0 };
	uint64_t when, next;

	flush_seq(&when);	/* (the clock starts) */
	if (interval_ms) {
		next = when + interval_ms * 1000ull;
		its.it_interval.tv_sec = interval_ms / 1000;
		its.it_interval.tv_nsec = (long)(interval_ms % 1000) * 1000000L;
		its.it_value.tv_sec = (time_t)(next / 1000000u);
		its.it_value.tv_nsec = (long)(next % 1000000u) * 1000L;
	}
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void set_interval(uint32_t ms)
{
	seq_base = flush_seq(NULL);
	interval_ms = ms;
	t0_usec = now_usec();
	for (int fd = 0; fd < n_fakes; fd++)
		if (fakes[fd] && fakes[fd]->kind != F_INTERVAL_W)
			arm(fd);
}

/* is @path (a file) one of ours: its kind, its directory in @dir */
static int kind_of(const char *path, char *dir, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t dlen;

	base = base ? base + 1 : path;
	dlen = (size_t)(base - path);
	if (dir) {
		if (dlen >= size)
			return 0;
		memcpy(dir, path, dlen);
		dir[dlen ? dlen - 1 : 0] = '\0';
		if (!dlen)
			snprintf(dir, size, ".");
	}
	if (!strcmp(base, STREAM))
		return F_STREAM;
	if (!strcmp(base, SUBTREE))
		return F_SUBTREE;
	if (!strcmp(base, INTERVAL))
		return F_INTERVAL_W;
	return 0;
}

static int add_fake(int fd, int kind, const char *dir)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct stat st;

	if (!f || stat(dir, &st) < 0) {
		free(f);
		return -1;
	}
	if (fd >= n_fakes) {
		int n = fd + 64;

		fakes = realloc(fakes, (size_t)n * sizeof(*fakes));
		memset(fakes + n_fakes, 0, (size_t)(n - n_fakes) * sizeof(*fakes));
		n_fakes = n;
	}
	f->kind = kind;
	f->id = st.st_ino;
	if (!realpath(dir, f->path))
		snprintf(f->path, sizeof(f->path), "%s", dir);
	fakes[fd] = f;
	return 0;
}

/* open one of our files at @dir */
static int fake_open(int kind, const char *dir, int flags)
{
	struct stat st;
	int fd;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		errno = ENOENT;
		return -1;
	}
	if (kind == F_INTERVAL_W && (flags & O_ACCMODE) == O_RDONLY) {
		char text[32];

		/* a snapshot of the value, readable as a file */
		flush_seq(NULL);
		fd = memfd_create("interval", MFD_CLOEXEC);
		snprintf(text, sizeof(text), "%u\n", interval_ms);
		if (fd < 0 || write(fd, text, strlen(text)) < 0)
			return -1;
		lseek(fd, 0, SEEK_SET);
		return fd;
	}
	if (kind == F_INTERVAL_W) {
		fd = memfd_create("interval-w", MFD_CLOEXEC);
	} else {
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (fd >= 0)
			arm(fd);
	}
	if (fd < 0 || add_fake(fd, kind, dir) < 0)
		return -1;
	return fd;
}

int openat(int dfd, const char *name, int flags, ...)
{
	char link[64], dir[PATH_MAX];
	mode_t mode = 0;
	va_list ap;
	int kind;
	REAL(int, openat, int, const char *, int, ...);

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	kind = kind_of(name, NULL, 0);
	if (!kind)
		return real_openat(dfd, name, flags, mode);
	if (strchr(name, '/'))
		return open(name, flags);
	if (dfd == AT_FDCWD) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
		len = readlink(link, dir, sizeof(dir) - 1);
		if (len < 0)
			return -1;
		dir[len] = '\0';
	}
	return fake_open(kind, dir, flags);
}

int open(const char *path, int flags, ...)
{
	char dir[PATH_MAX];
	mode_t mode = 0;
	va_list ap;
	int kind;
	REAL(int, open, const char *, int, ...);

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	kind = kind_of(path, dir, sizeof(dir));
	if (!kind)
		return real_open(path, flags, mode);
	return fake_open(kind, dir, flags);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return open(path, flags, mode);
}

int access(const char *path, int how)
{
	char dir[PATH_MAX];
	struct stat st;
	REAL(int, access, const char *, int);

	if (!kind_of(path, dir, sizeof(dir)))
		return real_access(path, how);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	struct fake *f = fake_of(fd);
	char text[32], *end;
	unsigned long long v;
	REAL(ssize_t, write, int, const void *, size_t);

	if (!f || f->kind != F_INTERVAL_W)
		return real_write(fd, buf, n);
	if (n == 0 || n >= sizeof(text))
		goto inval;
	memcpy(text, buf, n);
	text[n] = '\0';
	if (text[0] < '0' || text[0] > '9')
		goto inval;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || (*end && strcmp(end, "\n")) ||
	    (v && (v < CGROUP_STAT_STREAM_INTERVAL_MIN_MS || v > CGROUP_STAT_STREAM_INTERVAL_MAX_MS)))
		goto inval;
	set_interval((uint32_t)v);
	return (ssize_t)n;
inval:
	errno = EINVAL;
	return -1;
}

static void put(struct fake *f, const void *p, size_t n)
{
	if (f->len + n > f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 65536;

		while (cap < f->len + n)
			cap *= 2;
		f->snap = realloc(f->snap, cap);
		if (!f->snap)
			abort();
		f->cap = cap;
	}
	memcpy(f->snap + f->len, p, n);
	f->len += n;
}

static void read_stat(const char *dir, char *text, size_t size)
{
	char p[PATH_MAX + 16];
	ssize_t k = -1;
	int fd;

	snprintf(p, sizeof(p), "%s/cpu.stat", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		k = read(fd, text, size - 1);
		close(fd);
	}
	text[k > 0 ? k : 0] = '\0';
}

static uint64_t stat_value(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key) + 1, NULL, 10) : 0;
}

static void record(struct fake *f, const char *path, uint64_t id, uint64_t parent)
{
	static unsigned int n;
	unsigned char rec[512] = { 0 };
	const char *e = getenv("FAKE_RECORD_SIZE");
	struct cgroup_stat_stream_record r = {
		.size = (uint16_t)(e ? atoi(e) : (int)sizeof(r)),
		.type = CGROUP_STAT_STREAM_RECORD_CPU,
		.cgroup_id = id, .parent_id = parent,
	};
	char text[4096];

	r.flush_seq = f->seq;
	r.flush_time_usec = f->seq ? f->when : 0;
	read_stat(path, text, sizeof(text));
	r.usage_usec = stat_value(text, "usage_usec");
	r.user_usec = stat_value(text, "user_usec");
	r.system_usec = stat_value(text, "system_usec");
	memcpy(rec, &r, sizeof(r));
	put(f, rec, r.size);
	if (++n % 7 == 0) {	/* a kind of record the reader does not know */
		uint16_t other[4] = { 24, 77, 0, 0 };

		memcpy(rec, other, sizeof(other));
		put(f, rec, 24);
	}
}

/* @path and its descendants, pre-order */
static void walk(struct fake *f, const char *path, uint64_t id, uint64_t parent)
{
	struct dirent *de;
	DIR *d;

	record(f, path, id, parent);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char child[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		walk(f, child, de->d_ino, id);
	}
	closedir(d);
}

static ssize_t copy_records(struct fake *f, void *buf, size_t n, size_t pos)
{
	size_t end;

	if (pos >= f->len)
		return 0;
	for (end = pos; end < f->len;) {
		uint16_t size;

		memcpy(&size, f->snap + end, sizeof(size));
		if (end + size - pos > n)
			break;
		end += size;
	}
	if (end == pos) {
		errno = EINVAL;	/* not even one record fits */
		return -1;
	}
	memcpy(buf, f->snap + pos, end - pos);
	return (ssize_t)(end - pos);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct fake *f = fake_of(fd);
	uint64_t expirations, when;
	struct stat st;
	REAL(ssize_t, pread, int, void *, size_t, off_t);

	if (!f || f->kind == F_INTERVAL_W)
		return real_pread(fd, buf, n, off);
	if (stat(f->path, &st) < 0 || (uint64_t)st.st_ino != f->id) {
		errno = ENODEV;
		return -1;
	}
	if (f->kind == F_SUBTREE)
		subtree_reads++;
	if (off == 0) {
		/* the latest flush, now seen through this fd */
		if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
			return -1;
		f->len = 0;
		f->seq = flush_seq(&f->when);
		if (f->kind == F_SUBTREE) {
			walk(f, f->path, f->id, 0);
		} else {
			char text[4096], tail[96];
			uint64_t seq = f->seq;

			when = f->when;
			read_stat(f->path, text, sizeof(text));
			snprintf(tail, sizeof(tail), "flush_seq %llu\nflush_time_usec %llu\n",
				 (unsigned long long)seq, (unsigned long long)(seq ? when : 0));
			put(f, text, strlen(text));
			put(f, tail, strlen(tail));
		}
	}
	if (f->kind == F_SUBTREE)
		return copy_records(f, buf, n, (size_t)off);
	if ((size_t)off >= f->len)
		return 0;
	if (n > f->len - (size_t)off)
		n = f->len - (size_t)off;
	memcpy(buf, f->snap + off, n);
	return (ssize_t)n;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

int close(int fd)
{
	struct fake *f = fake_of(fd);
	REAL(int, close, int);

	if (f) {
		free(f->snap);
		free(f);
		fakes[fd] = NULL;
	}
	return real_close(fd);
}
