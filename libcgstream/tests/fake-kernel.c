// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD shim for host tests: the cpu files of the patched kernel
 * (docs/kernel-interface.md) on a kernel without them, so that the
 * library's KERNEL and SUBTREE modes, format 2, change snapshots and
 * REMOVED records run on the host.  Not a kernel: a test aid.
 *
 *  cpu.stat.stream_interval  reads the interval, a write sets it (0 or
 *      10..3600000, else EINVAL); publications happen at t0 + k * interval
 *      (sequence numbers go on across changes).
 *  A cgroup's values at publication k: its cpu.stat (usage_usec,
 *      user_usec, system_usec, nice_usec), usage_usec plus 1000 x the
 *      last publication j <= k at which the cgroup "changed", a cgroup
 *      changing at j when a hash of (id, j) % 100 < $FAKE_CHANGE_PCT
 *      (default 0: only what cpu.stat does), and a
 *      core_sched.force_idle_usec of id % 1000 (a SCHED_CORE kernel's
 *      value, which struct cgstream_sample has no field for).
 *      fake_kernel_changed(id, a, b) says whether one changed in (a, b].
 *      A cgroup whose directory is newer than the latest publication has
 *      none yet.
 *  cpu.stat.stream  polls readable once per publication not yet read
 *      through this fd (a timerfd on the publication clock); pread at 0:
 *      the values as cpu.stat.stream prints them, then publication_seq,
 *      publication_time_usec, publications_skipped (0); ENODATA before
 *      the first publication and for a cgroup newer than it.
 *  cpu.stat.stream.subtree  the same polling; pread at 0 starts a full
 *      snapshot, at CGROUP_STAT_STREAM_CHANGES a change snapshot relative
 *      to the last snapshot this fd read to its end (the first one: a
 *      full one); reading on at the running offset continues it, a read
 *      that returns 0 ends it and makes it the next base; another offset
 *      is EINVAL.  SNAPSHOT, SCHEMA (the five names), REMOVED records for
 *      the cgroups the last complete snapshot listed that are gone (their
 *      values as it listed them), then a CGROUP record per cgroup (a
 *      change snapshot: those whose values differ from the base's, and
 *      those it did not list, F_NEW), the opened one first (parent_id 0),
 *      pre-order.  Reads return whole records, EINVAL when the next one
 *      does not fit.  $FAKE_RECORD_PAD bytes end each CGROUP record (a
 *      later kernel's longer ones), an unknown kind of record follows
 *      every 7th; every $FAKE_LOSE_EVERY-th change snapshot drops its
 *      REMOVED records and says so (F_LOST); with $FAKE_REMOVED_LATE=N a
 *      removal is told N snapshots late (as when a cgroup goes offline
 *      after publications its directory was already gone at).
 *  All: ENODEV once the cgroup is gone.  access() finds them.
 *  fake_kernel_fail(dir, err): from now on a pread of the cgroup @dir's
 *      cpu.stat.stream fails with @err (a read error, the cgroup still
 *      there); fake_kernel_fail(NULL, 0) ends it.
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

#include "snapshot-writer.h"

#define STREAM		"cpu.stat.stream"
#define SUBTREE		"cpu.stat.stream.subtree"
#define INTERVAL	"cpu.stat.stream_interval"
#define NR_VALUES	5
#define INTERVAL_MIN_MS	10
#define INTERVAL_MAX_MS	3600000

static const char *const value_names[NR_VALUES] = {
	"usage_usec", "user_usec", "system_usec", "nice_usec", "core_sched.force_idle_usec",
};

enum { F_STREAM = 1, F_SUBTREE, F_INTERVAL_W };

/* a cgroup as a snapshot listed it */
struct listed {
	uint64_t id, parent;
	uint64_t v[NR_VALUES];
	unsigned int late;	/* gone: snapshots its REMOVED record was held back */
};

struct listing {
	struct listed *v;
	size_t n, cap;
};

struct fake {
	int kind;
	char path[PATH_MAX];	/* the cgroup's directory */
	uint64_t id;
	struct sw out;		/* the text, or the snapshot being read */
	struct sw cgroups;	/* its CGROUP records, as the walk makes them */
	uint64_t seq, when;	/* its publication */
	uint64_t complete_seq;	/* the last snapshot read to its end: the base */
	/* subtree */
	off_t start, pos;	/* where the snapshot began, how far it was read */
	bool reading;
	uint64_t changes;	/* change snapshots begun */
	struct listing base;	/* what the last complete snapshot listed, by id */
	struct listing now;	/* what the one being read lists */
};

static struct fake **fakes;	/* by fd */
static int n_fakes;
static uint32_t interval_ms;
static uint64_t t0_usec, seq_base;
static unsigned long subtree_reads;

unsigned long fake_kernel_reads(void);
int fake_kernel_changed(uint64_t id, uint64_t after, uint64_t upto);
int fake_kernel_fail(const char *dir, int err);

/* fake_kernel_fail(): the stream reads of this cgroup fail with fail_err */
static char fail_dir[PATH_MAX];
static int fail_err;

int fake_kernel_fail(const char *dir, int err)
{
	fail_err = 0;
	if (!dir || !err)
		return 0;
	if (!realpath(dir, fail_dir))
		return -errno;
	fail_err = err;
	return 0;
}

unsigned long fake_kernel_reads(void)
{
	return subtree_reads;
}

#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	if (!real_##name)						\
		real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static uint64_t clock_usec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_usec(void)
{
	return clock_usec(CLOCK_MONOTONIC);
}

static long env_long(const char *name)
{
	const char *e = getenv(name);

	return e ? atol(e) : 0;
}

/* the latest publication: its number and time (0: none yet) */
static uint64_t pub_seq(uint64_t *when)
{
	static bool started;
	uint64_t k = 0;

	if (!started) {	/* $FAKE_INTERVAL_MS: streaming on from the start */
		started = true;
		interval_ms = (uint32_t)env_long("FAKE_INTERVAL_MS");
		t0_usec = now_usec();
		seq_base = interval_ms ? 1 : 0;	/* one publication when armed */
	}
	if (interval_ms)
		k = (now_usec() - t0_usec) / (interval_ms * 1000ull);
	if (when)
		*when = t0_usec + k * interval_ms * 1000ull;
	return seq_base ? seq_base + k : 0;
}

/* does cgroup @id change at publication @j (the synthetic model) */
static bool changes_at(uint64_t id, uint64_t j)
{
	static long pct = -1;
	uint64_t h = (id * 0x9e3779b97f4a7c15ull) ^ (j * 0xc2b2ae3d27d4eb4full);

	if (pct < 0)
		pct = env_long("FAKE_CHANGE_PCT");
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return pct > 0 && (long)(h % 100) < pct;
}

/* the last publication <= @k at which @id changed, 0 if none */
static uint64_t last_change(uint64_t id, uint64_t k)
{
	for (; k > 0; k--)
		if (changes_at(id, k))
			return k;
	return 0;
}

int fake_kernel_changed(uint64_t id, uint64_t after, uint64_t upto)
{
	return last_change(id, upto) > after;
}

static struct fake *fake_of(int fd)
{
	return fd >= 0 && fd < n_fakes ? fakes[fd] : NULL;
}

/* @fd's publications not yet read: seen now (a read marks them so) */
static int read_expirations(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -1;
	return 0;
}

/* a stream's timerfd fires at every publication after now */
static void arm(int fd)
{
	struct itimerspec its = { 0 };
	uint64_t when, next;

	pub_seq(&when);	/* (the clock starts) */
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
	uint64_t seq = pub_seq(NULL);

	if (ms && !interval_ms)
		seq++;	/* arming publishes at once */
	seq_base = seq;
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
		pub_seq(NULL);
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
	    (v && (v < INTERVAL_MIN_MS || v > INTERVAL_MAX_MS)))
		goto inval;
	set_interval((uint32_t)v);
	return (ssize_t)n;
inval:
	errno = EINVAL;
	return -1;
}

/* the values of the cgroup at @dir (@id) as of publication @seq; false:
 * it has none (newer than the publication made at @when) */
static bool values_of(const char *dir, uint64_t id, uint64_t seq, uint64_t when,
		      uint64_t v[NR_VALUES])
{
	char p[PATH_MAX + 16], text[4096];
	uint64_t born;
	struct stat st;
	ssize_t k = -1;
	int fd;

	if (stat(dir, &st) < 0)
		return false;
	born = (uint64_t)st.st_ctim.tv_sec * 1000000u + (uint64_t)st.st_ctim.tv_nsec / 1000u;
	/* the publication's time on the directory's clock */
	if (born > clock_usec(CLOCK_REALTIME) - (now_usec() - when))
		return false;
	snprintf(p, sizeof(p), "%s/cpu.stat", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		k = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[k > 0 ? k : 0] = '\0';
	for (int i = 0; i < 4; i++) {
		const char *q = strstr(text, value_names[i]);

		v[i] = q ? strtoull(q + strlen(value_names[i]) + 1, NULL, 10) : 0;
	}
	v[0] += 1000 * last_change(id, seq);
	v[4] = id % 1000;
	return true;
}

static void listing_add(struct listing *l, const struct listed *c)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = *c;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct listed *)a)->id, y = ((const struct listed *)b)->id;

	return x < y ? -1 : x > y;
}

static const struct listed *listing_find(const struct listing *l, uint64_t id)
{
	struct listed key = { .id = id };

	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), by_id) : NULL;
}

static void put_cgroup(struct sw *w, uint16_t type, uint16_t flags, const struct listed *c)
{
	static unsigned int n;

	sw_cgroup(w, type, flags, c->id, c->parent, c->v, NR_VALUES, NULL, 0, 0,
		  (uint32_t)env_long("FAKE_RECORD_PAD") / 8 * 8);
	if (++n % 7 == 0)
		sw_other(w, 77, 24);	/* a kind the reader does not know */
}

/* @dir and its descendants, pre-order: listed, and (@changes) recorded */
static void walk(struct fake *f, const char *dir, uint64_t id, uint64_t parent, bool changes)
{
	struct listed c = { .id = id, .parent = parent };
	struct dirent *de;
	DIR *d;

	if (!values_of(dir, id, f->seq, f->when, c.v))
		return;	/* newer than the publication, and so is what is below */
	listing_add(&f->now, &c);
	if (!changes) {
		put_cgroup(&f->cgroups, CGROUP_STAT_REC_CGROUP, 0, &c);
	} else {
		const struct listed *was = listing_find(&f->base, id);

		if (!was || memcmp(was->v, c.v, sizeof(c.v)))
			put_cgroup(&f->cgroups, CGROUP_STAT_REC_CGROUP,
				   was ? 0 : CGROUP_STAT_CGROUP_F_NEW, &c);
	}
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char child[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", dir, de->d_name);
		walk(f, child, de->d_ino, id, changes);
	}
	closedir(d);
}

/*
 * REMOVED records: what the base listed that this snapshot does not.
 * With $FAKE_REMOVED_LATE=N a removal is told N snapshots late, as the
 * kernel does when the cgroup goes offline after publications its
 * directory was already gone at (rmdir returns before that): kept in the
 * listing, counted, until then.
 */
static void put_removed(struct fake *f)
{
	long late = env_long("FAKE_REMOVED_LATE");
	struct listing held = { 0 };

	qsort(f->now.v, f->now.n, sizeof(*f->now.v), by_id);
	for (size_t i = 0; i < f->base.n; i++) {
		struct listed c = f->base.v[i];

		if (listing_find(&f->now, c.id))
			continue;
		if (c.late < late) {
			c.late++;
			listing_add(&held, &c);
		} else {
			put_cgroup(&f->out, CGROUP_STAT_REC_REMOVED, 0, &c);
		}
	}
	for (size_t i = 0; i < held.n; i++)
		listing_add(&f->now, &held.v[i]);
	qsort(f->now.v, f->now.n, sizeof(*f->now.v), by_id);
	free(held.v);
}

/* a snapshot of the latest publication begins: -1 (ENODATA) or 0 */
static int subtree_start(struct fake *f, bool want_changes)
{
	bool changes = want_changes && f->complete_seq, lost = false;
	long lose = env_long("FAKE_LOSE_EVERY");

	f->seq = pub_seq(&f->when);
	if (!f->seq) {
		errno = ENODATA;
		return -1;
	}
	if (changes && lose > 0 && ++f->changes % (uint64_t)lose == 0)
		lost = true;
	f->out.len = f->cgroups.len = 0;
	f->now.n = 0;
	walk(f, f->path, f->id, 0, changes);
	sw_snapshot(&f->out, CGROUP_STAT_CTRL_CPU,
		    (changes ? CGROUP_STAT_SNAPSHOT_F_CHANGES : 0) |
		    (lost ? CGROUP_STAT_SNAPSHOT_F_LOST : 0),
		    f->seq, f->when, changes ? f->complete_seq : 0, 0);
	sw_schema(&f->out, value_names, NR_VALUES, NULL, 0);
	if (!lost)
		put_removed(f);
	else
		qsort(f->now.v, f->now.n, sizeof(*f->now.v), by_id);
	sw_put(&f->out, f->cgroups.p, f->cgroups.len);
	f->reading = true;
	return 0;
}

/* whole records of the snapshot from f->pos, at most @n bytes */
static ssize_t subtree_copy(struct fake *f, void *buf, size_t n)
{
	size_t pos = (size_t)f->pos, end = pos;

	if (pos >= f->out.len) {
		/* the end: complete, the base of the next change snapshot */
		if (f->reading) {
			struct listing t = f->base;

			f->base = f->now;
			f->now = t;
			f->complete_seq = f->seq;
			f->reading = false;
		}
		return 0;
	}
	while (end < f->out.len) {
		uint32_t size;

		memcpy(&size, f->out.p + end, sizeof(size));
		if (end + size - pos > n)
			break;
		end += size;
	}
	if (end == pos) {
		errno = EINVAL;	/* not even one record fits */
		return -1;
	}
	memcpy(buf, f->out.p + pos, end - pos);
	f->pos = (off_t)end;
	return (ssize_t)(end - pos);
}

static ssize_t subtree_pread(int fd, struct fake *f, void *buf, size_t n, off_t off)
{
	if (off == 0 || off == (off_t)CGROUP_STAT_STREAM_CHANGES) {
		/* the latest publication, now seen through this fd */
		if (read_expirations(fd) < 0 || subtree_start(f, off != 0) < 0)
			return -1;
		f->start = off;
		f->pos = 0;
	} else if (off != f->start + f->pos) {
		errno = EINVAL;	/* not where the last read ended */
		return -1;
	}
	return subtree_copy(f, buf, n);
}

/* cpu.stat.stream's text of the latest publication */
static ssize_t stream_pread(int fd, struct fake *f, void *buf, size_t n, off_t off)
{
	uint64_t v[NR_VALUES];
	char line[128];

	if (off == 0) {
		if (read_expirations(fd) < 0)
			return -1;
		f->seq = pub_seq(&f->when);
		if (!f->seq || !values_of(f->path, f->id, f->seq, f->when, v)) {
			errno = ENODATA;
			return -1;
		}
		f->out.len = 0;
		for (int i = 0; i < NR_VALUES; i++) {
			snprintf(line, sizeof(line), "%s %llu\n", value_names[i],
				 (unsigned long long)v[i]);
			sw_put(&f->out, line, strlen(line));
		}
		snprintf(line, sizeof(line),
			 "publication_seq %llu\npublication_time_usec %llu\npublications_skipped 0\n",
			 (unsigned long long)f->seq, (unsigned long long)f->when);
		sw_put(&f->out, line, strlen(line));
	}
	if ((size_t)off >= f->out.len)
		return 0;
	if (n > f->out.len - (size_t)off)
		n = f->out.len - (size_t)off;
	memcpy(buf, f->out.p + off, n);
	return (ssize_t)n;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct fake *f = fake_of(fd);
	struct stat st;
	REAL(ssize_t, pread, int, void *, size_t, off_t);

	if (!f || f->kind == F_INTERVAL_W)
		return real_pread(fd, buf, n, off);
	if (stat(f->path, &st) < 0 || (uint64_t)st.st_ino != f->id) {
		errno = ENODEV;
		return -1;
	}
	if (f->kind == F_SUBTREE) {
		subtree_reads++;
		return subtree_pread(fd, f, buf, n, off);
	}
	if (fail_err && !strcmp(f->path, fail_dir)) {
		errno = fail_err;
		return -1;
	}
	return stream_pread(fd, f, buf, n, off);
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
		free(f->out.p);
		free(f->cgroups.p);
		free(f->base.v);
		free(f->now.v);
		free(f);
		fakes[fd] = NULL;
	}
	return real_close(fd);
}
