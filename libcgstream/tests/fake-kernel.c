// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD shim for host tests: the cpu and pressure files of the
 * patched kernel (docs/kernel-interface.md) on a kernel without them, so
 * that the library's KERNEL and SUBTREE modes, format 2, change snapshots
 * and REMOVED records run on the host.  Not a kernel: a test aid.  Each
 * of the two has its own files, interval and publications (below, cpu's:
 * pressure's are pressure.stream_interval, pressure.stream,
 * pressure.stream.subtree).
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
 *      none yet.  Pressure's (its files wherever the kernel has PSI:
 *      /proc/pressure/cpu): its cpu.pressure, memory.pressure,
 *      io.pressure and irq.pressure (where /proc/pressure/irq is) as the
 *      kernel's SCHEMA names them ("cpu.some.avg10": hundredths of a
 *      percent; "cpu.some.total": usec, plus 1000 x the last change as
 *      above); as docs/kernel-interface.md says of a cgroup whose
 *      cgroup.pressure is 0 (no cpu.pressure): none, its pressure.stream
 *      the publication's lines alone, its record without values.
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
 *      after publications its directory was already gone at), pressure's
 *      $FAKE_PRESSURE_REMOVED_LATE snapshots late where that is set (as
 *      when another controller publishes first after the rmdir).
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

#define CPU_VALUES	5
#define PSI_VALUES	28	/* cpu, memory, io some and full, irq full: 4 each */
#define MAX_VALUES	PSI_VALUES
#define INTERVAL_MIN_MS	10
#define INTERVAL_MAX_MS	3600000

static const char *const cpu_names[CPU_VALUES] = {
	"usage_usec", "user_usec", "system_usec", "nice_usec", "core_sched.force_idle_usec",
};

#define PSI(r)	r ".some.avg10", r ".some.avg60", r ".some.avg300", r ".some.total", \
		r ".full.avg10", r ".full.avg60", r ".full.avg300", r ".full.total"
static const char *const psi_names[PSI_VALUES] = {
	PSI("cpu"), PSI("memory"), PSI("io"),
	"irq.full.avg10", "irq.full.avg60", "irq.full.avg300", "irq.full.total",
};

enum { C_CPU, C_PRESSURE, NR_CTRLS };

/* the controllers emulated: their files, their number in SNAPSHOT records */
static const struct ctrl {
	const char *stream, *subtree, *interval;
	uint16_t kernel_id;
	const char *needs;	/* a file the kernel has them with; NULL: always */
} ctrls[NR_CTRLS] = {
	[C_CPU] = { "cpu.stat.stream", "cpu.stat.stream.subtree", "cpu.stat.stream_interval",
		    CGROUP_STAT_CTRL_CPU, NULL },
	[C_PRESSURE] = { "pressure.stream", "pressure.stream.subtree", "pressure.stream_interval",
			 CGROUP_STAT_CTRL_PRESSURE, "/proc/pressure/cpu" },
};

enum { F_STREAM = 1, F_SUBTREE, F_INTERVAL_W };

/* a cgroup as a snapshot listed it */
struct listed {
	uint64_t id, parent;
	uint64_t v[MAX_VALUES];
	uint32_t nv;
	unsigned int late;	/* gone: snapshots its REMOVED record was held back */
};

struct listing {
	struct listed *v;
	size_t n, cap;
};

struct fake {
	int kind;
	int ctrl;		/* C_CPU, C_PRESSURE */
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
/* each controller's publications */
static struct clock {
	bool started;
	uint32_t interval_ms;
	uint64_t t0_usec, seq_base;
} clocks[NR_CTRLS];
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

/* @ctrl's latest publication: its number and time (0: none yet) */
static uint64_t pub_seq(int ctrl, uint64_t *when)
{
	struct clock *c = &clocks[ctrl];
	uint64_t k = 0;

	if (!c->started) {	/* $FAKE_INTERVAL_MS: streaming on from the start */
		c->started = true;
		c->interval_ms = (uint32_t)env_long("FAKE_INTERVAL_MS");
		c->t0_usec = now_usec();
		c->seq_base = c->interval_ms ? 1 : 0;	/* one publication when armed */
	}
	if (c->interval_ms)
		k = (now_usec() - c->t0_usec) / (c->interval_ms * 1000ull);
	if (when)
		*when = c->t0_usec + k * c->interval_ms * 1000ull;
	return c->seq_base ? c->seq_base + k : 0;
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

/* a stream's timerfd fires at every publication of @ctrl after now */
static void arm(int fd, int ctrl)
{
	struct itimerspec its = { 0 };
	uint64_t when, next;
	uint32_t interval_ms;

	pub_seq(ctrl, &when);	/* (the clock starts) */
	interval_ms = clocks[ctrl].interval_ms;
	if (interval_ms) {
		next = when + interval_ms * 1000ull;
		its.it_interval.tv_sec = interval_ms / 1000;
		its.it_interval.tv_nsec = (long)(interval_ms % 1000) * 1000000L;
		its.it_value.tv_sec = (time_t)(next / 1000000u);
		its.it_value.tv_nsec = (long)(next % 1000000u) * 1000L;
	}
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void set_interval(int ctrl, uint32_t ms)
{
	struct clock *c = &clocks[ctrl];
	uint64_t seq = pub_seq(ctrl, NULL);

	if (ms && !c->interval_ms)
		seq++;	/* arming publishes at once */
	c->seq_base = seq;
	c->interval_ms = ms;
	c->t0_usec = now_usec();
	for (int fd = 0; fd < n_fakes; fd++)
		if (fakes[fd] && fakes[fd]->kind != F_INTERVAL_W && fakes[fd]->ctrl == ctrl)
			arm(fd, ctrl);
}

/* the kernel has @ctrl's files (at @dir, a cgroup's directory) */
static bool has_files(const char *dir, int ctrl)
{
	REAL(int, access, const char *, int);

	(void)dir;
	return !ctrls[ctrl].needs || real_access(ctrls[ctrl].needs, F_OK) == 0;
}

/* is @path (a file) one of ours: its kind and controller (*@ctrl), its
 * directory in @dir */
static int kind_of(const char *path, char *dir, size_t size, int *ctrl)
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
	for (int c = 0; c < NR_CTRLS; c++) {
		*ctrl = c;
		if (!strcmp(base, ctrls[c].stream))
			return F_STREAM;
		if (!strcmp(base, ctrls[c].subtree))
			return F_SUBTREE;
		if (!strcmp(base, ctrls[c].interval))
			return F_INTERVAL_W;
	}
	return 0;
}

static int add_fake(int fd, int kind, int ctrl, const char *dir)
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
	f->ctrl = ctrl;
	f->id = st.st_ino;
	if (!realpath(dir, f->path))
		snprintf(f->path, sizeof(f->path), "%s", dir);
	fakes[fd] = f;
	return 0;
}

/* open one of our files at @dir */
static int fake_open(int kind, int ctrl, const char *dir, int flags)
{
	struct stat st;
	int fd;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !has_files(dir, ctrl)) {
		errno = ENOENT;
		return -1;
	}
	if (kind == F_INTERVAL_W && (flags & O_ACCMODE) == O_RDONLY) {
		char text[32];

		/* a snapshot of the value, readable as a file */
		pub_seq(ctrl, NULL);
		fd = memfd_create("interval", MFD_CLOEXEC);
		snprintf(text, sizeof(text), "%u\n", clocks[ctrl].interval_ms);
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
			arm(fd, ctrl);
	}
	if (fd < 0 || add_fake(fd, kind, ctrl, dir) < 0)
		return -1;
	return fd;
}

int openat(int dfd, const char *name, int flags, ...)
{
	char link[64], dir[PATH_MAX];
	mode_t mode = 0;
	va_list ap;
	int kind, ctrl;
	REAL(int, openat, int, const char *, int, ...);

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	kind = kind_of(name, NULL, 0, &ctrl);
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
	return fake_open(kind, ctrl, dir, flags);
}

int open(const char *path, int flags, ...)
{
	char dir[PATH_MAX];
	mode_t mode = 0;
	va_list ap;
	int kind, ctrl;
	REAL(int, open, const char *, int, ...);

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	kind = kind_of(path, dir, sizeof(dir), &ctrl);
	if (!kind)
		return real_open(path, flags, mode);
	return fake_open(kind, ctrl, dir, flags);
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
	int ctrl;
	REAL(int, access, const char *, int);

	if (!kind_of(path, dir, sizeof(dir), &ctrl))
		return real_access(path, how);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !has_files(dir, ctrl)) {
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
	set_interval(f->ctrl, (uint32_t)v);
	return (ssize_t)n;
inval:
	errno = EINVAL;
	return -1;
}

/* @dir/@name's text into @text (empty where it cannot be read) */
static void read_text(const char *dir, const char *name, char *text, size_t size)
{
	char p[PATH_MAX + 32];
	ssize_t k = -1;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		k = read(fd, text, size - 1);
		close(fd);
	}
	text[k > 0 ? k : 0] = '\0';
}

/* the pressure values of @dir, by psi_names (irq's where the kernel has it) */
static uint32_t psi_values(const char *dir, uint64_t v[PSI_VALUES])
{
	/* psi_names: 8 values a file, in this order (irq.pressure: its full 4) */
	static const char *const files[] = { "cpu.pressure", "memory.pressure", "io.pressure",
					     "irq.pressure" };
	uint32_t n = access("/proc/pressure/irq", F_OK) == 0 ? PSI_VALUES : PSI_VALUES - 4;
	char text[512];

	memset(v, 0, PSI_VALUES * sizeof(*v));
	for (uint32_t i = 0; i < n; i += 4) {
		const char *kind = strstr(psi_names[i], ".full.") ? "full" : "some", *line;
		unsigned long a[3][2] = { { 0 } };
		unsigned long long total = 0;

		read_text(dir, files[i / 8], text, sizeof(text));
		line = strstr(text, kind);
		if (line && sscanf(line + 4, " avg10=%lu.%lu avg60=%lu.%lu avg300=%lu.%lu total=%llu",
				   &a[0][0], &a[0][1], &a[1][0], &a[1][1], &a[2][0], &a[2][1],
				   &total) == 7)
			for (int k = 0; k < 3; k++)
				v[i + k] = a[k][0] * 100 + a[k][1];
		v[i + 3] = total;
	}
	return n;
}

/*
 * The values of the cgroup at @dir (@id) of @ctrl as of publication @seq
 * into @c: true; false: it has none, nor what is below it (newer than the
 * publication made at @when)
 */
static bool values_of(int ctrl, const char *dir, uint64_t id, uint64_t seq, uint64_t when,
		      struct listed *c)
{
	char p[PATH_MAX + 16];
	char text[4096];
	uint64_t born;
	struct stat st;

	if (stat(dir, &st) < 0)
		return false;
	born = (uint64_t)st.st_ctim.tv_sec * 1000000u + (uint64_t)st.st_ctim.tv_nsec / 1000u;
	/* the publication's time on the directory's clock */
	if (born > clock_usec(CLOCK_REALTIME) - (now_usec() - when))
		return false;
	if (ctrl == C_PRESSURE) {
		/* cgroup.pressure 0 (no cpu.pressure): no values */
		snprintf(p, sizeof(p), "%s/cpu.pressure", dir);
		c->nv = access(p, F_OK) == 0 ? psi_values(dir, c->v) : 0;
		if (c->nv)
			c->v[3] += 1000 * last_change(id, seq);	/* cpu.some.total */
		return true;
	}
	read_text(dir, "cpu.stat", text, sizeof(text));
	for (int i = 0; i < 4; i++) {
		const char *q = strstr(text, cpu_names[i]);

		c->v[i] = q ? strtoull(q + strlen(cpu_names[i]) + 1, NULL, 10) : 0;
	}
	c->v[0] += 1000 * last_change(id, seq);
	c->v[4] = id % 1000;
	c->nv = CPU_VALUES;
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

	sw_cgroup(w, type, flags, c->id, c->parent, c->v, c->nv, NULL, 0, 0,
		  (uint32_t)env_long("FAKE_RECORD_PAD") / 8 * 8);
	if (++n % 7 == 0)
		sw_other(w, 77, 24);	/* a kind the reader does not know */
}

/* @dir and its descendants, pre-order: listed, and (@changes) recorded */
static void walk(struct fake *f, const char *dir, uint64_t id, uint64_t parent, bool changes)
{
	struct listed c = { .id = id, .parent = parent };
	const struct listed *was;
	struct dirent *de;
	DIR *d;

	if (!values_of(f->ctrl, dir, id, f->seq, f->when, &c))
		return;	/* newer than the publication, and so is what is below */
	was = changes ? listing_find(&f->base, id) : NULL;
	listing_add(&f->now, &c);
	if (!changes)
		put_cgroup(&f->cgroups, CGROUP_STAT_REC_CGROUP, 0, &c);
	else if (!was || was->nv != c.nv || memcmp(was->v, c.v, c.nv * sizeof(c.v[0])))
		put_cgroup(&f->cgroups, CGROUP_STAT_REC_CGROUP, was ? 0 : CGROUP_STAT_CGROUP_F_NEW,
			   &c);
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
	long late = env_long(f->ctrl == C_PRESSURE && getenv("FAKE_PRESSURE_REMOVED_LATE") ?
			     "FAKE_PRESSURE_REMOVED_LATE" : "FAKE_REMOVED_LATE");
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

	f->seq = pub_seq(f->ctrl, &f->when);
	if (!f->seq) {
		errno = ENODATA;
		return -1;
	}
	if (changes && lose > 0 && ++f->changes % (uint64_t)lose == 0)
		lost = true;
	f->out.len = f->cgroups.len = 0;
	f->now.n = 0;
	walk(f, f->path, f->id, 0, changes);
	sw_snapshot(&f->out, ctrls[f->ctrl].kernel_id,
		    (changes ? CGROUP_STAT_SNAPSHOT_F_CHANGES : 0) |
		    (lost ? CGROUP_STAT_SNAPSHOT_F_LOST : 0),
		    f->seq, f->when, changes ? f->complete_seq : 0, 0);
	if (f->ctrl == C_PRESSURE)
		sw_schema(&f->out, psi_names, access("/proc/pressure/irq", F_OK) == 0 ?
			  PSI_VALUES : PSI_VALUES - 4, NULL, 0);
	else
		sw_schema(&f->out, cpu_names, CPU_VALUES, NULL, 0);
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

/* @c's values as pressure.stream prints them: a line per resource and kind */
static void psi_text(struct sw *out, const struct listed *c)
{
	char line[256];

	for (uint32_t i = 0; i < c->nv; i += 4) {
		const char *dot = strchr(psi_names[i], '.');

		snprintf(line, sizeof(line), "%.*s %.4s avg10=%llu.%02llu avg60=%llu.%02llu "
			 "avg300=%llu.%02llu total=%llu\n", (int)(dot - psi_names[i]), psi_names[i],
			 dot + 1, (unsigned long long)c->v[i] / 100,
			 (unsigned long long)c->v[i] % 100, (unsigned long long)c->v[i + 1] / 100,
			 (unsigned long long)c->v[i + 1] % 100, (unsigned long long)c->v[i + 2] / 100,
			 (unsigned long long)c->v[i + 2] % 100, (unsigned long long)c->v[i + 3]);
		sw_put(out, line, strlen(line));
	}
}

/* cpu.stat.stream's (pressure.stream's) text of the latest publication */
static ssize_t stream_pread(int fd, struct fake *f, void *buf, size_t n, off_t off)
{
	struct listed c = { 0 };
	char line[128];

	if (off == 0) {
		if (read_expirations(fd) < 0)
			return -1;
		f->seq = pub_seq(f->ctrl, &f->when);
		if (!f->seq || !values_of(f->ctrl, f->path, f->id, f->seq, f->when, &c)) {
			errno = ENODATA;
			return -1;
		}
		f->out.len = 0;
		for (uint32_t i = 0; f->ctrl == C_CPU && i < c.nv; i++) {
			snprintf(line, sizeof(line), "%s %llu\n", cpu_names[i],
				 (unsigned long long)c.v[i]);
			sw_put(&f->out, line, strlen(line));
		}
		if (f->ctrl == C_PRESSURE)
			psi_text(&f->out, &c);
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
