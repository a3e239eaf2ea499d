// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgbench: the load generators and readers behind `make bench`.
 *
 * Every reader subcommand runs both ways with the same code: "classic"
 * pread()s <cgroup>/cpu.stat (each read runs css_rstat_flush() in the
 * kernel), "stream" pread()s <cgroup>/cpu.stat.stream (no flush; values as
 * of the kernel flusher's last cycle).  Both parse the text with the same
 * parser.  Readers are forked processes (like separate telemetry daemons);
 * each measures its own CPU time with CLOCK_THREAD_CPUTIME_ID (precise:
 * sum_exec_runtime) and getrusage(RUSAGE_THREAD) (user/sys split).  The
 * parent measures what the kernel's kworkers used over the same window
 * (per-kworker CPU clocks) and /proc/stat.  Output: one JSON object on
 * stdout.
 *
 *   cgbench read      --mode classic|stream --readers N --seconds S
 *                     [--max-samples X] CGROUP_DIR...|--list FILE
 *   cgbench telemetry --mode classic|stream|stream1|subtree|bpf|bpfmap
 *                     --readers R --period-ms T --seconds S
 *                     [--subtree DIR] CGROUP_DIR...|--list FILE
 *   cgbench hop       --list FILE        (forever: one process per CPU
 *                     moves itself through its share of the cgroups)
 *   cgbench latency   --seconds S CGROUP_DIR...|--list FILE   (poll loop)
 *   cgbench work      --procs P --seconds S        (CPU-bound loop counter)
 *   cgbench churn     --work-us W --period-us P --mem-kb K     (forever)
 *   cgbench hog                                                (forever)
 *   cgbench kworkers  (print the kworkers' total CPU ns; for checks)
 *
 * CGROUP_DIR is a directory of the cgroup2 mount (absolute path).
 *
 * The telemetry ways: "classic" reads every cgroup's cpu.stat on a fixed
 * grid (each read flushes); "stream" epolls every cgroup's cpu.stat.stream
 * and reads the ready ones, "stream1" epolls one and reads all (no flush
 * in either: the kernel's flusher did it); "subtree" polls DIR's
 * cpu.stat.stream.subtree and takes the whole subtree in one read of
 * binary records (then a read that returns 0 ends the snapshot), decoded
 * by libcgstream's cgstream_records_next(); "bpf" and "bpfmap" run, on the classic grid, a BPF
 * cgroup iterator over DIR that flushes once and hands back one binary
 * record per cgroup, through the iterator's read(2) ("bpf") or a hash map
 * drained with one batch lookup ("bpfmap": what below does, see
 * bpf/cgstat.bpf.c).  DIR's subtree must hold exactly the listed cgroups
 * (plus DIR itself) for the ways to read the same cgroups.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/cgroup_stat_stream.h>
#include "cgstream.h"
#include "cgstat.h"
#include "cgstat.skel.h"

#define MAX_READERS 64

static const char *stream_file(void)
{
	/* override only for smoke tests of the code path on old kernels */
	const char *f = getenv("CGBENCH_STREAM_FILE");
	return f && *f ? f : "cpu.stat.stream";
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cgbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint64_t clk_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
static uint64_t mono_ns(void) { return clk_ns(CLOCK_MONOTONIC); }
static uint64_t tcpu_ns(void) { return clk_ns(CLOCK_THREAD_CPUTIME_ID); }

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ull, ns % 1000000000ull };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- parsing: the same parser both ways ------------------------------ */
struct stat_vals {
	uint64_t usage, user, system, seq, flush_time, flush_missed;
	int nkeys;
};

static uint64_t parse_u64(const char **p, const char *end)
{
	uint64_t v = 0;
	while (*p < end && **p >= '0' && **p <= '9')
		v = v * 10 + (uint64_t)(*(*p)++ - '0');
	return v;
}

static int parse_stat(const char *buf, size_t len, struct stat_vals *v)
{
	const char *p = buf, *end = buf + len;
	memset(v, 0, sizeof(*v));
	while (p < end) {
		const char *k = p;
		while (p < end && *p != ' ')
			p++;
		size_t kl = p - k;
		if (p < end)
			p++;
		uint64_t x = parse_u64(&p, end);
		while (p < end && *p != '\n')
			p++;
		if (p < end)
			p++;
#define KEY(s) (kl == sizeof(s) - 1 && !memcmp(k, s, kl))
		if (KEY("usage_usec")) v->usage = x;
		else if (KEY("user_usec")) v->user = x;
		else if (KEY("system_usec")) v->system = x;
		else if (KEY("flush_seq")) v->seq = x;
		else if (KEY("flush_time_usec")) v->flush_time = x;
		else if (KEY("flush_missed")) v->flush_missed = x;
#undef KEY
		v->nkeys++;
	}
	return v->nkeys ? 0 : -EINVAL;
}

/* ---- kernel-side accounting ------------------------------------------ */
/*
 * CPU used by all kworker threads: each kthread is its own thread group, so
 * its process CPU clock (clock_getcpuclockid) is its sum_exec_runtime, in
 * ns.  This works without CONFIG_SCHEDSTATS/SCHED_INFO (the test kernel has
 * neither, so /proc/PID/schedstat does not exist there).
 */
struct kw { int pid; uint64_t ns; };
struct kwsnap { struct kw *v; int n; };

static void kw_snap(struct kwsnap *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int cap = 256;
	s->v = malloc(cap * sizeof(*s->v));
	s->n = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[64], comm[64];
		int pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t r = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (r < 7 || strncmp(comm, "kworker", 7))
			continue;
		clockid_t c;
		struct timespec ts;
		if (clock_getcpuclockid(pid, &c) || clock_gettime(c, &ts))
			continue;
		if (s->n == cap)
			s->v = realloc(s->v, (cap *= 2) * sizeof(*s->v));
		s->v[s->n].pid = pid;
		s->v[s->n].ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		s->n++;
	}
	closedir(d);
}

/* CPU the kworkers used between two snapshots; new kworkers count fully */
static uint64_t kw_delta(const struct kwsnap *a, const struct kwsnap *b, int *lost)
{
	uint64_t sum = 0;
	*lost = 0;
	for (int i = 0; i < b->n; i++) {
		uint64_t before = 0;
		for (int j = 0; j < a->n; j++)
			if (a->v[j].pid == b->v[i].pid) {
				before = a->v[j].ns;
				break;
			}
		if (b->v[i].ns >= before)
			sum += b->v[i].ns - before;
	}
	for (int j = 0; j < a->n; j++) {
		int found = 0;
		for (int i = 0; i < b->n; i++)
			found |= a->v[j].pid == b->v[i].pid;
		*lost += !found;
	}
	return sum;
}

/* /proc/stat "cpu" line: user nice system idle iowait irq softirq (USER_HZ) */
struct pstat { uint64_t f[8]; };
static void pstat_read(struct pstat *p)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	if (fscanf(f, "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64 " %" SCNu64, &p->f[0], &p->f[1], &p->f[2],
		   &p->f[3], &p->f[4], &p->f[5], &p->f[6], &p->f[7]) < 3)
		memset(p, 0, sizeof(*p));
	fclose(f);
}

/* global flush_seq/flush_missed from the root's stream file (stream runs only) */
static int root_seq(const char *root, uint64_t *seq, uint64_t *missed)
{
	char path[4096], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", root, stream_file());
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n <= 0)
		return -EIO;
	struct stat_vals v;
	parse_stat(buf, n, &v);
	*seq = v.seq;
	*missed = v.flush_missed;
	return 0;
}

/* ---- shared state between the parent and the forked readers ---------- */
struct reader_res {
	uint64_t samples, cpu_ns, utime_us, stime_us, wall_ns;
	uint64_t cycles, missed, dups, gaps, errors, wakes, late_ns_max;
	int open_errno;
	int fail_errno;	/* the last error a pass failed with */
};
struct shm {
	volatile int ready, start, stop;
	volatile uint64_t t_start;
	struct reader_res r[MAX_READERS];
	volatile uint64_t work_iters[MAX_READERS];
};
static struct shm *shm;

static uint64_t rusage_us(int user)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	struct timeval *t = user ? &ru.ru_utime : &ru.ru_stime;
	return (uint64_t)t->tv_sec * 1000000ull + t->tv_usec;
}

/* ---- options ---------------------------------------------------------- */
enum way { WAY_CLASSIC, WAY_STREAM, WAY_STREAM1, WAY_SUBTREE, WAY_BPF, WAY_BPFMAP };

struct opts {
	const char *mode, *list, *root, *subtree;
	enum way way;
	int readers, procs, mem_kb;
	double seconds;
	uint64_t max_samples, period_ms, work_us, period_us;
	char **cg;
	int ncg;
	bool stream;	/* per-cgroup cpu.stat.stream files (stream, stream1) */
};

static void load_cgroups(struct opts *o, int argc, char **argv, int optind_)
{
	int cap = 16;
	o->cg = malloc(cap * sizeof(char *));
	o->ncg = 0;
	if (o->list) {
		FILE *f = fopen(o->list, "r");
		char line[4096];
		if (!f)
			die("%s: %s", o->list, strerror(errno));
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!*line)
				continue;
			if (o->ncg == cap)
				o->cg = realloc(o->cg, (cap *= 2) * sizeof(char *));
			o->cg[o->ncg++] = strdup(line);
		}
		fclose(f);
	}
	for (int i = optind_; i < argc; i++) {
		if (o->ncg == cap)
			o->cg = realloc(o->cg, (cap *= 2) * sizeof(char *));
		o->cg[o->ncg++] = argv[i];
	}
}

static int *open_all(const struct opts *o, int *err)
{
	int *fds = calloc(o->ncg, sizeof(int));
	char path[4096];
	*err = 0;
	for (int i = 0; i < o->ncg; i++) {
		snprintf(path, sizeof(path), "%s/%s", o->cg[i],
			 o->stream ? stream_file() : "cpu.stat");
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			*err = errno;
			fprintf(stderr, "cgbench: %s: %s\n", path, strerror(errno));
			return NULL;
		}
	}
	return fds;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	rl.rlim_cur = rl.rlim_max;
	if (rl.rlim_max < 1 << 20) {
		struct rlimit want = { 1 << 20, 1 << 20 };
		if (!setrlimit(RLIMIT_NOFILE, &want))
			return;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* ---- readers ---------------------------------------------------------- */
/* SIGUSR1 at the window's end only interrupts a reader's wait */
static void on_stop(int sig) { (void)sig; }

static void wait_start(void)
{
	__sync_fetch_and_add(&shm->ready, 1);
	while (!shm->start)
		usleep(500);
}

static void reader_hammer(const struct opts *o, int id)
{
	struct reader_res *r = &shm->r[id];
	char buf[4096];
	struct stat_vals v;
	int err;
	int *fds = open_all(o, &err);
	if (!fds) {
		r->open_errno = err;
		__sync_fetch_and_add(&shm->ready, 1);
		return;
	}
	wait_start();
	uint64_t c0 = tcpu_ns(), u0 = rusage_us(1), s0 = rusage_us(0), w0 = mono_ns();
	uint64_t n = 0, errors = 0;
	while (!shm->stop && (!o->max_samples || n < o->max_samples)) {
		for (int i = 0; i < o->ncg && !shm->stop; i++) {
			ssize_t k = pread(fds[i], buf, sizeof(buf), 0);
			if (k <= 0 || parse_stat(buf, k, &v))
				errors++;
			n++;
		}
	}
	r->wall_ns = mono_ns() - w0;
	r->cpu_ns = tcpu_ns() - c0;
	r->utime_us = rusage_us(1) - u0;
	r->stime_us = rusage_us(0) - s0;
	r->samples = n;
	r->errors = errors;
}

/* ---- the subtree and BPF ways ------------------------------------------ */
static volatile uint64_t sink;	/* what a consumer would do with the values */

struct pass_buf { char *p; size_t cap; };

/*
 * One snapshot of cpu.stat.stream.subtree, read as the kernel defines it: pread()s
 * on from offset 0 until one returns 0, the records decoded by libcgstream's
 * cgstream_records_next() (the decoder the library's tree runs).  Returns
 * the CPU records, or -errno.
 */
static int64_t subtree_pass(int fd, struct pass_buf *b, uint64_t *seq)
{
	int64_t recs = 0;
	off_t pos = 0;
	for (;;) {
		struct cgstream_record rec;
		size_t off = 0;
		int r;
		ssize_t n = pread(fd, b->p, b->cap, pos);
		if (n < 0)
			return -errno;
		if (n == 0)
			return recs;
		while ((r = cgstream_records_next(b->p, (size_t)n, &off, &rec, sizeof(rec))) > 0) {
			if (rec.type != CGSTREAM_RECORD_CPU)
				continue;
			if (!recs)
				*seq = rec.sample.seq;
			sink += rec.sample.usage_usec + rec.sample.user_usec + rec.sample.system_usec;
			recs++;
		}
		if (r < 0)
			return -EPROTO;
		pos += n;
	}
}

struct bpfway {
	struct cgstat *skel;
	struct bpf_link *link;
	bool map;
	int map_fd;
	uint32_t maxn;
	__u64 *keys;
	struct cgstat_rec *vals;
};

/* libbpf's warnings (a failed load prints the verifier's log); CGBENCH_BPF_DEBUG=1: all */
static int bpf_warn(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	static int all = -1;
	if (all < 0)
		all = getenv("CGBENCH_BPF_DEBUG") != NULL;
	return lvl == LIBBPF_DEBUG && !all ? 0 : vfprintf(stderr, fmt, ap);
}

/* load the program and attach a pre-order cgroup iterator to @dir */
static int bpfway_open(struct bpfway *b, const char *dir, bool map, int ncg)
{
	union bpf_iter_link_info li = {};
	int err, cgfd;

	memset(b, 0, sizeof(*b));
	libbpf_set_print(bpf_warn);
	b->map = map;
	b->skel = cgstat__open();
	if (!b->skel)
		return -errno;
	bpf_program__set_autoload(map ? b->skel->progs.dump_seq : b->skel->progs.dump_map, false);
	err = cgstat__load(b->skel);
	if (err)
		return err;
	cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	li.cgroup.cgroup_fd = cgfd;
	li.cgroup.order = BPF_CGROUP_ITER_DESCENDANTS_PRE;
	LIBBPF_OPTS(bpf_iter_attach_opts, ao, .link_info = &li, .link_info_len = sizeof(li));
	b->link = bpf_program__attach_iter(map ? b->skel->progs.dump_map : b->skel->progs.dump_seq, &ao);
	err = b->link ? 0 : -errno;
	close(cgfd);
	if (err)
		return err;
	b->map_fd = bpf_map__fd(b->skel->maps.stats);
	b->maxn = 2 * (ncg + 1) + 64;
	b->keys = malloc(b->maxn * sizeof(*b->keys));
	b->vals = malloc(b->maxn * sizeof(*b->vals));
	return b->keys && b->vals ? 0 : -ENOMEM;
}

/* one pass: run the iterator to EOF (one flush, one record per cgroup) */
static int64_t bpfway_pass(struct bpfway *b, struct pass_buf *buf)
{
	int64_t recs = 0;
	ssize_t n;
	int fd = bpf_iter_create(bpf_link__fd(b->link));
	if (fd < 0)
		return fd;
	while ((n = read(fd, buf->p, buf->cap)) > 0) {
		const struct cgstat_rec *r = (const void *)buf->p;
		for (size_t i = 0; i < n / sizeof(*r); i++)
			sink += r[i].usage_ns + r[i].user_ns + r[i].system_ns;
		recs += n / sizeof(*r);
	}
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (!b->map)
		return recs;
	/* drain the map; what the next pass does not rewrite is gone */
	__u64 in = 0, out = 0;
	for (bool first = true;; first = false) {
		__u32 count = b->maxn;
		err = bpf_map_lookup_and_delete_batch(b->map_fd, first ? NULL : &in, &out,
						      b->keys, b->vals, &count, NULL);
		for (__u32 i = 0; i < count; i++)
			sink += b->vals[i].usage_ns + b->vals[i].user_ns + b->vals[i].system_ns;
		recs += count;
		if (err)
			return err == -ENOENT ? recs : err;
		in = out;
	}
}

/* ---- telemetry: R readers, each takes M cgroups once per cycle ---------- */
struct tele {
	const struct opts *o;
	int *fds;		/* classic, stream, stream1: one per cgroup */
	int sfd;		/* subtree */
	struct bpfway bpf;	/* bpf, bpfmap */
	struct pass_buf buf;
	uint64_t *last;		/* stream: the flush_seq each fd had */
	uint64_t last_seq;	/* subtree */
	uint64_t samples, errors, cycles, missed, dups, gaps, wakes, late_max;
	int fail_errno;
};

/* one cycle of a grid-paced way; false when the window ended inside it */
static bool grid_pass(struct tele *t)
{
	const struct opts *o = t->o;
	struct stat_vals v;
	if (o->way == WAY_CLASSIC) {
		int i;
		/* the window's end cuts a cycle short: slow VMs stay on time */
		for (i = 0; i < o->ncg && !shm->stop; i++) {
			ssize_t k = pread(t->fds[i], t->buf.p, 4096, 0);
			if (k <= 0 || parse_stat(t->buf.p, k, &v))
				t->errors++;
			t->samples++;
		}
		return i == o->ncg;
	}
	int64_t n = bpfway_pass(&t->bpf, &t->buf);
	if (n < 0) {
		t->errors++;
		t->fail_errno = (int)-n;
		return true;
	}
	t->samples += n;
	return true;
}

/* one wake of a polled way */
static void stream_wake(struct tele *t, struct epoll_event *evs, int n)
{
	const struct opts *o = t->o;
	struct stat_vals v;
	if (o->way == WAY_SUBTREE) {
		uint64_t seq = 0;
		int64_t k = subtree_pass(t->sfd, &t->buf, &seq);
		if (k < 0) {
			t->errors++;
			t->fail_errno = (int)-k;
			return;
		}
		t->samples += k;
		t->cycles++;
		if (seq == t->last_seq)
			t->dups++;
		else if (t->last_seq && seq > t->last_seq + 1)
			t->gaps += seq - t->last_seq - 1;
		t->last_seq = seq;
		return;
	}
	if (o->way == WAY_STREAM1)
		n = o->ncg;	/* the paced fd woke: read all */
	for (int j = 0; j < n && !shm->stop; j++) {
		int i = o->way == WAY_STREAM1 ? j : (int)evs[j].data.u32;
		ssize_t k = pread(t->fds[i], t->buf.p, 4096, 0);
		t->samples++;
		if (k <= 0 || parse_stat(t->buf.p, k, &v)) {
			t->errors++;
			continue;
		}
		if (v.seq == t->last[i])
			t->dups++;
		else if (t->last[i] && v.seq > t->last[i] + 1)
			t->gaps += v.seq - t->last[i] - 1;
		t->last[i] = v.seq;
	}
}

static int tele_open(struct tele *t, int ep)
{
	const struct opts *o = t->o;
	int err = 0;
	t->buf.cap = 4096;
	if (o->way == WAY_SUBTREE || o->way == WAY_BPF || o->way == WAY_BPFMAP) {
		if (!o->subtree)
			die("--mode %s needs --subtree DIR", o->mode);
		/* the whole subtree in one read, with room for growth */
		t->buf.cap = 2 * (size_t)(o->ncg + 1) * sizeof(struct cgroup_stat_stream_record) + 65536;
	}
	t->buf.p = malloc(t->buf.cap);
	if (!t->buf.p)
		return ENOMEM;
	switch (o->way) {
	case WAY_CLASSIC:
	case WAY_STREAM:
	case WAY_STREAM1:
		t->fds = open_all(o, &err);
		if (!t->fds)
			return err;
		break;
	case WAY_SUBTREE: {
		char path[4096];
		snprintf(path, sizeof(path), "%s/cpu.stat.stream.subtree", o->subtree);
		t->sfd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->sfd < 0) {
			err = errno;
			fprintf(stderr, "cgbench: %s: %s\n", path, strerror(err));
			return err;
		}
		struct epoll_event e = { .events = EPOLLIN };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, t->sfd, &e))
			die("epoll_ctl: %s", strerror(errno));
		uint64_t seq = 0;	/* mark what is there now as seen */
		if (subtree_pass(t->sfd, &t->buf, &seq) >= 0)
			t->last_seq = seq;
		return 0;
	}
	case WAY_BPF:
	case WAY_BPFMAP:
		err = -bpfway_open(&t->bpf, o->subtree, o->way == WAY_BPFMAP, o->ncg);
		if (err)
			fprintf(stderr, "cgbench: BPF iterator on %s: %s\n", o->subtree, strerror(err));
		return err;
	}
	if (o->way == WAY_CLASSIC)
		return 0;
	t->last = calloc(o->ncg, sizeof(uint64_t));
	for (int i = 0; i < o->ncg; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };
		struct stat_vals v;
		/*
		 * The sequence is global: a flush makes every stream
		 * readable at once, so one polled fd paces them all.
		 */
		if ((o->way == WAY_STREAM || i == 0) && epoll_ctl(ep, EPOLL_CTL_ADD, t->fds[i], &e))
			die("epoll_ctl: %s", strerror(errno));
		/* mark what is there now as seen */
		ssize_t k = pread(t->fds[i], t->buf.p, 4096, 0);
		if (k > 0 && !parse_stat(t->buf.p, k, &v))
			t->last[i] = v.seq;
	}
	return 0;
}

static void reader_telemetry(const struct opts *o, int id)
{
	struct reader_res *r = &shm->r[id];
	struct tele t = { .o = o, .sfd = -1 };
	bool grid = o->way == WAY_CLASSIC || o->way == WAY_BPF || o->way == WAY_BPFMAP;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int err = tele_open(&t, ep);
	if (err) {
		r->open_errno = err;
		__sync_fetch_and_add(&shm->ready, 1);
		return;
	}
	struct epoll_event *evs = calloc(o->ncg + 1, sizeof(*evs));
	wait_start();
	uint64_t c0 = tcpu_ns(), u0 = rusage_us(1), s0 = rusage_us(0), w0 = mono_ns();
	uint64_t period = o->period_ms * 1000000ull;
	if (grid) {
		/* sleep to a fixed grid, take everything, repeat */
		uint64_t next = shm->t_start + period;
		for (;;) {
			struct timespec ts = { next / 1000000000ull, next % 1000000000ull };
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			if (shm->stop)
				break;
			uint64_t woke = mono_ns();
			if (woke - next > t.late_max)
				t.late_max = woke - next;
			t.wakes++;
			if (!grid_pass(&t))
				break;
			t.cycles++;
			uint64_t now = mono_ns();
			next += period;
			while (next <= now) {	/* deadlines we slept through */
				next += period;
				t.missed++;
			}
		}
	} else {
		while (!shm->stop) {
			/* no timeout: a wake-up costs CPU; the parent's SIGUSR1 ends the wait */
			int n = epoll_wait(ep, evs, o->ncg + 1, -1);
			if (n <= 0)
				continue;
			t.wakes++;
			stream_wake(&t, evs, n);
		}
		if (o->way != WAY_SUBTREE)
			t.cycles = o->ncg ? t.samples / o->ncg : 0;
		t.missed = o->way == WAY_SUBTREE ? t.gaps : o->ncg ? t.gaps / o->ncg : 0;
	}
	r->wall_ns = mono_ns() - w0;
	r->cpu_ns = tcpu_ns() - c0;
	r->utime_us = rusage_us(1) - u0;
	r->stime_us = rusage_us(0) - s0;
	r->samples = t.samples;
	r->errors = t.errors;
	r->cycles = t.cycles;
	r->missed = t.missed;
	r->gaps = t.gaps;
	r->dups = t.dups;
	r->wakes = t.wakes;
	r->late_ns_max = t.late_max;
	r->fail_errno = t.fail_errno;
}

static void json_str(const char *k, const char *v, int comma)
{
	printf("\"%s\": \"%s\"%s", k, v, comma ? ", " : "");
}

static int run_readers(const struct opts *o, void (*fn)(const struct opts *, int))
{
	if (o->readers < 1 || o->readers > MAX_READERS)
		die("--readers must be 1..%d", MAX_READERS);
	if (!o->ncg)
		die("no cgroups given");
	raise_nofile();
	pid_t pids[MAX_READERS];
	for (int i = 0; i < o->readers; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %s", strerror(errno));
		if (!pids[i]) {
			struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART */
			sigaction(SIGUSR1, &sa, NULL);
			fn(o, i);
			_exit(0);
		}
	}
	/* a reader that dies before it is ready must not hang the run */
	for (int waited = 0; shm->ready < o->readers; waited++) {
		if (waited > 300000)
			die("readers not ready after 300 s");
		usleep(1000);
	}
	int open_errno = 0;
	for (int i = 0; i < o->readers; i++)
		if (shm->r[i].open_errno)
			open_errno = shm->r[i].open_errno;
	struct kwsnap k0, k1;
	struct pstat p0, p1;
	uint64_t seq0 = 0, seq1 = 0, fm0 = 0, fm1 = 0;
	/* the ways that run the kernel's flusher */
	bool flusher = o->way == WAY_STREAM || o->way == WAY_STREAM1 || o->way == WAY_SUBTREE;
	int seq_ok = flusher && !root_seq(o->root, &seq0, &fm0);
	kw_snap(&k0);
	pstat_read(&p0);
	shm->t_start = mono_ns();
	__sync_synchronize();
	shm->start = 1;
	uint64_t w0 = mono_ns();
	if (!open_errno) {
		/* stop at --seconds, or earlier when every reader hit --max-samples */
		uint64_t end = w0 + (uint64_t)(o->seconds * 1e9);
		while (mono_ns() < end) {
			sleep_ns(20000000);
			int done = 0;
			for (int i = 0; i < o->readers; i++)
				done += shm->r[i].wall_ns != 0;
			if (done == o->readers)
				break;
		}
	}
	shm->stop = 1;
	for (int i = 0; i < o->readers; i++)
		kill(pids[i], SIGUSR1);
	for (int i = 0; i < o->readers; i++)
		waitpid(pids[i], NULL, 0);
	uint64_t wall = mono_ns() - w0;
	pstat_read(&p1);
	kw_snap(&k1);
	if (seq_ok)
		seq_ok = !root_seq(o->root, &seq1, &fm1);
	int lost;
	uint64_t kw = kw_delta(&k0, &k1, &lost);

	printf("{");
	json_str("mode", o->mode, 1);
	printf("\"readers\": %d, \"cgroups\": %d, \"seconds\": %.3f, \"period_ms\": %" PRIu64
	       ", \"max_samples\": %" PRIu64 ", \"open_errno\": %d, ",
	       o->readers, o->ncg, o->seconds, o->period_ms, o->max_samples, open_errno);
	printf("\"wall_ns\": %" PRIu64 ", \"kworker_ns\": %" PRIu64 ", \"kworkers_gone\": %d, "
	       "\"kworkers\": %d, ", wall, kw, lost, k1.n);
	printf("\"procstat_delta\": {\"user\": %" PRIu64 ", \"nice\": %" PRIu64
	       ", \"system\": %" PRIu64 ", \"idle\": %" PRIu64 ", \"iowait\": %" PRIu64
	       ", \"irq\": %" PRIu64 ", \"softirq\": %" PRIu64 ", \"steal\": %" PRIu64
	       ", \"user_hz\": %ld}, ",
	       p1.f[0] - p0.f[0], p1.f[1] - p0.f[1], p1.f[2] - p0.f[2], p1.f[3] - p0.f[3],
	       p1.f[4] - p0.f[4], p1.f[5] - p0.f[5], p1.f[6] - p0.f[6], p1.f[7] - p0.f[7],
	       sysconf(_SC_CLK_TCK));
	if (seq_ok)
		printf("\"flush_seq_delta\": %" PRIu64 ", \"flush_missed_delta\": %" PRIu64 ", ",
		       seq1 - seq0, fm1 - fm0);
	printf("\"per_reader\": [");
	for (int i = 0; i < o->readers; i++) {
		struct reader_res *r = &shm->r[i];
		printf("%s{\"samples\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 ", \"utime_us\": %" PRIu64
		       ", \"stime_us\": %" PRIu64 ", \"wall_ns\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"cycles\": %" PRIu64 ", \"missed\": %" PRIu64 ", \"gaps\": %" PRIu64
		       ", \"dups\": %" PRIu64 ", \"wakes\": %" PRIu64 ", \"late_ns_max\": %" PRIu64
		       ", \"fail_errno\": %d}",
		       i ? ", " : "", r->samples, r->cpu_ns, r->utime_us, r->stime_us, r->wall_ns,
		       r->errors, r->cycles, r->missed, r->gaps, r->dups, r->wakes, r->late_ns_max,
		       r->fail_errno);
	}
	printf("]}\n");
	return open_errno ? 1 : 0;
}

/* ---- wake latency: a plain poll() loop over the stream files ---------- */
static int run_latency(const struct opts *o)
{
	struct opts oo = *o;
	oo.stream = true;
	int err;
	raise_nofile();
	int *fds = open_all(&oo, &err);
	if (!fds)
		return 1;
	struct pollfd *pfd = calloc(o->ncg, sizeof(*pfd));
	char buf[4096];
	struct stat_vals v;
	for (int i = 0; i < o->ncg; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
		pread(fds[i], buf, sizeof(buf), 0);	/* mark as seen */
	}
	size_t cap = 1 << 16, n = 0;
	int64_t *lat = malloc(cap * sizeof(*lat));
	uint64_t *last = calloc(o->ncg, sizeof(*last));
	uint64_t prev_seq = 0, missed = 0, dups = 0, wakes = 0, repeat_wakes = 0;
	uint64_t end = mono_ns() + (uint64_t)(o->seconds * 1e9);
	while (mono_ns() < end) {
		int k = poll(pfd, o->ncg, 200);
		if (k <= 0)
			continue;
		uint64_t woke = mono_ns() / 1000;
		wakes++;
		uint64_t seq = 0, ft = 0;
		for (int i = 0; i < o->ncg; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			ssize_t r = pread(fds[i], buf, sizeof(buf), 0);
			if (r <= 0 || parse_stat(buf, r, &v))
				continue;
			/* a kernel duplicate: readable, yet nothing new for this fd */
			if (last[i] && v.seq == last[i])
				dups++;
			last[i] = v.seq;
			if (v.seq > seq) {
				seq = v.seq;
				ft = v.flush_time;
			}
		}
		if (!seq)
			continue;
		if (!prev_seq) {	/* the flush already there at start */
			prev_seq = seq;
			continue;
		}
		if (seq <= prev_seq) {
			/* the rest of the fds of a flush whose first fds woke us */
			repeat_wakes++;
			continue;
		}
		if (seq > prev_seq + 1)
			missed += seq - prev_seq - 1;
		prev_seq = seq;
		if (n < cap)
			lat[n++] = (int64_t)woke - (int64_t)ft;
	}
	printf("{\"reader\": \"poll\", \"cgroups\": %d, \"wakes\": %" PRIu64 ", \"missed\": %" PRIu64
	       ", \"dups\": %" PRIu64 ", \"repeat_wakes\": %" PRIu64 ", \"lat_us\": [",
	       o->ncg, wakes, missed, dups, repeat_wakes);
	for (size_t i = 0; i < n; i++)
		printf("%s%" PRId64, i ? "," : "", lat[i]);
	printf("]}\n");
	return 0;
}

/* ---- load ------------------------------------------------------------- */
static volatile sig_atomic_t quit;
static void on_term(int s) { (void)s; quit = 1; }

static void spin_ns(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;
	volatile uint64_t x = 1;
	while (mono_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
}

static int run_churn(const struct opts *o)
{
	signal(SIGTERM, on_term);
	size_t len = (size_t)o->mem_kb * 1024;
	uint64_t next = mono_ns();
	while (!quit) {
		spin_ns(o->work_us * 1000);
		if (len) {
			char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m != MAP_FAILED) {
				for (size_t i = 0; i < len; i += 4096)
					m[i] = (char)i;
				munmap(m, len);
			}
		}
		next += o->period_us * 1000;
		uint64_t now = mono_ns();
		if (next > now)
			sleep_ns(next - now);
		else
			next = now;
	}
	return 0;
}

static int run_hog(void)
{
	signal(SIGTERM, on_term);
	volatile uint64_t x = 1;
	while (!quit)
		x = x * 6364136223846793005ull + 1;
	return 0;
}

static int run_work(const struct opts *o)
{
	if (o->procs < 1 || o->procs > MAX_READERS)
		die("--procs must be 1..%d", MAX_READERS);
	pid_t pids[MAX_READERS];
	for (int i = 0; i < o->procs; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			uint64_t x = 1, it = 0;
			while (!shm->start)
				usleep(200);
			while (!shm->stop) {
				for (int j = 0; j < 4096; j++)
					x = x * 6364136223846793005ull + 1442695040888963407ull;
				it += 4096;
				shm->work_iters[i] = it;
			}
			if (x == 42)
				puts("");
			_exit(0);
		}
	}
	sleep_ns(50000000);
	uint64_t b[MAX_READERS];
	shm->start = 1;
	sleep_ns(100000000);	/* let them get going */
	uint64_t t0 = mono_ns();
	for (int i = 0; i < o->procs; i++)
		b[i] = shm->work_iters[i];
	sleep_ns((uint64_t)(o->seconds * 1e9));
	uint64_t t1 = mono_ns(), tot = 0;
	for (int i = 0; i < o->procs; i++)
		tot += shm->work_iters[i] - b[i];
	shm->stop = 1;
	for (int i = 0; i < o->procs; i++)
		waitpid(pids[i], NULL, 0);
	printf("{\"procs\": %d, \"wall_ns\": %" PRIu64 ", \"iters\": %" PRIu64
	       ", \"iters_per_s\": %.1f}\n", o->procs, t1 - t0, tot, tot / ((t1 - t0) / 1e9));
	return 0;
}

/* ---- hop: rstat updates in many cgroups per flush ----------------------- */
/*
 * The flusher's cost depends on how many cgroups changed since its last
 * cycle.  One process per CPU, pinned, moves itself through its share of
 * the listed cgroups and runs ~20 us in each, so every cgroup it visits has
 * an rstat update pending on that CPU.  Measured here over --seconds: the
 * kworkers' CPU, the flushes done and the visits made.  --mode stream keeps
 * the root's cpu.stat.stream open (the flusher runs while a stream file is
 * open); --mode classic measures the same load with no flusher.
 */
static int run_hop(const struct opts *o)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAX_READERS)
		ncpu = MAX_READERS;
	if (!o->ncg)
		die("no cgroups given");
	raise_nofile();
	int keep = -1;
	if (o->stream) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", o->root, stream_file());
		keep = open(path, O_RDONLY | O_CLOEXEC);
		if (keep < 0)
			die("%s: %s", path, strerror(errno));
	}
	pid_t pids[MAX_READERS];
	for (int c = 0; c < ncpu; c++) {
		pids[c] = fork();
		if (pids[c] < 0)
			die("fork: %s", strerror(errno));
		if (pids[c])
			continue;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		sched_setaffinity(0, sizeof(set), &set);
		int n = 0, *fds = calloc(o->ncg / ncpu + 1, sizeof(int));
		for (int i = c; i < o->ncg; i += ncpu) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/cgroup.procs", o->cg[i]);
			if ((fds[n++] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
				die("%s: %s", path, strerror(errno));
		}
		__sync_fetch_and_add(&shm->ready, 1);
		while (!shm->start)
			usleep(500);
		uint64_t hops = 0;
		while (!shm->stop)
			for (int i = 0; i < n && !shm->stop; i++) {
				if (write(fds[i], "0", 1) != 1)
					die("moving to cgroup %d: %s", i, strerror(errno));
				spin_ns(20000);
				shm->work_iters[c] = ++hops;
			}
		_exit(0);
	}
	while (shm->ready < ncpu)
		usleep(1000);
	struct kwsnap k0, k1;
	uint64_t seq0 = 0, seq1 = 0, fm0 = 0, fm1 = 0;
	int seq_ok = !root_seq(o->root, &seq0, &fm0);
	kw_snap(&k0);
	shm->start = 1;
	uint64_t w0 = mono_ns();
	sleep_ns((uint64_t)(o->seconds * 1e9));
	uint64_t hops = 0;
	for (int c = 0; c < ncpu; c++)
		hops += shm->work_iters[c];
	uint64_t wall = mono_ns() - w0;
	kw_snap(&k1);
	seq_ok = seq_ok && !root_seq(o->root, &seq1, &fm1);
	shm->stop = 1;
	for (int c = 0; c < ncpu; c++)
		waitpid(pids[c], NULL, 0);
	if (keep >= 0)
		close(keep);
	int lost;
	uint64_t kw = kw_delta(&k0, &k1, &lost);
	printf("{\"mode\": \"%s\", \"cgroups\": %d, \"procs\": %d, \"wall_ns\": %" PRIu64
	       ", \"hops\": %" PRIu64 ", \"kworker_ns\": %" PRIu64 ", \"kworkers_gone\": %d",
	       o->mode, o->ncg, ncpu, wall, hops, kw, lost);
	if (seq_ok)
		printf(", \"flush_seq_delta\": %" PRIu64 ", \"flush_missed_delta\": %" PRIu64,
		       seq1 - seq0, fm1 - fm0);
	printf("}\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: cgbench read|telemetry|latency|hop|work|churn|hog|kworkers [options]");
	const char *cmd = argv[1];
	struct opts o = { .mode = "classic", .readers = 1, .procs = 1, .seconds = 1,
			  .period_ms = 100, .work_us = 500, .period_us = 10000,
			  .mem_kb = 256, .root = getenv("CGBENCH_ROOT") };
	if (!o.root)
		o.root = "/sys/fs/cgroup";
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "readers", 1, 0, 'r' }, { "seconds", 1, 0, 's' },
		{ "max-samples", 1, 0, 'x' }, { "period-ms", 1, 0, 'T' },
		{ "list", 1, 0, 'l' }, { "procs", 1, 0, 'p' }, { "work-us", 1, 0, 'w' },
		{ "period-us", 1, 0, 'P' }, { "mem-kb", 1, 0, 'k' }, { "root", 1, 0, 'R' },
		{ "subtree", 1, 0, 'S' },
		{ 0 }
	};
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': o.mode = optarg; break;
		case 'r': o.readers = atoi(optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'x': o.max_samples = strtoull(optarg, NULL, 10); break;
		case 'T': o.period_ms = strtoull(optarg, NULL, 10); break;
		case 'l': o.list = optarg; break;
		case 'p': o.procs = atoi(optarg); break;
		case 'w': o.work_us = strtoull(optarg, NULL, 10); break;
		case 'P': o.period_us = strtoull(optarg, NULL, 10); break;
		case 'k': o.mem_kb = atoi(optarg); break;
		case 'R': o.root = optarg; break;
		case 'S': o.subtree = optarg; break;
		default: exit(2);
		}
	}
	static const char *const ways[] = { "classic", "stream", "stream1", "subtree", "bpf", "bpfmap" };
	o.way = (enum way)-1;
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		if (!strcmp(o.mode, ways[i]))
			o.way = (enum way)i;
	if (o.way == (enum way)-1)
		die("--mode classic|stream|stream1|subtree|bpf|bpfmap");
	o.stream = o.way == WAY_STREAM || o.way == WAY_STREAM1;
	if (o.way > WAY_STREAM && strcmp(cmd, "telemetry"))
		die("--mode %s is for telemetry", o.mode);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	if (!strcmp(cmd, "read")) {
		load_cgroups(&o, argc, argv, optind);
		return run_readers(&o, reader_hammer);
	}
	if (!strcmp(cmd, "telemetry")) {
		load_cgroups(&o, argc, argv, optind);
		return run_readers(&o, reader_telemetry);
	}
	if (!strcmp(cmd, "latency")) {
		load_cgroups(&o, argc, argv, optind);
		return run_latency(&o);
	}
	if (!strcmp(cmd, "work"))
		return run_work(&o);
	if (!strcmp(cmd, "hop")) {
		load_cgroups(&o, argc, argv, optind);
		return run_hop(&o);
	}
	if (!strcmp(cmd, "churn"))
		return run_churn(&o);
	if (!strcmp(cmd, "hog"))
		return run_hog();
	if (!strcmp(cmd, "kworkers")) {
		struct kwsnap k;
		kw_snap(&k);
		uint64_t s = 0;
		for (int i = 0; i < k.n; i++)
			s += k.v[i].ns;
		printf("{\"kworkers\": %d, \"cpu_ns\": %" PRIu64 "}\n", k.n, s);
		return 0;
	}
	die("unknown subcommand %s", cmd);
}
