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
 *   cgbench telemetry --mode classic|stream|stream1|subtree|changes|bpf|bpfmap|bpfshared
 *                     --readers R --period-ms T --seconds S
 *                     [--controllers cpu[,memory][,io][,pressure]]
 *                     [--subtree DIR] [--pin PATH] CGROUP_DIR...|--list FILE
 *   cgbench agentcheck --controllers C --mode WAY,... --subtree DIR [--pin PATH]
 *                     CGROUP_DIR...|--list FILE   (each way's values of the
 *                     first cgroup against classic's; exit 1 on a mismatch)
 *   cgbench collect   --subtree DIR --pin PATH [--period-ms T] [--slots N]
 *                     [--controllers cpu[,memory]] [--seconds S]
 *                     (the shared BPF collector; until SIGTERM)
 *   cgbench sharedcheck --pin PATH --subtree DIR --list FILE [--seconds S]
 *                     [--dwell-us D]   (its passes checked as an agent takes
 *                     them; exit 1 on a failure)
 *   cgbench memloop   --mode text|stream|subtree|bpf --count N CGROUP_DIR
 *   cgbench churnrm   --subtree DIR --seconds S --period-us P --work-us W
 *                     [--io-dev DEV --io-kb K]   (short-lived children of
 *                     DIR, each removed after its task; their final values)
 *   cgbench account   --mode classic|bpfmap|subtree|changes --subtree DIR
 *                     [--period-ms T]   (until SIGTERM: what the way
 *                     attributes to DIR's children, removed ones included)
 *   cgbench loopdev   --mem-kb K     (a loop device over K KiB of memory)
 *   cgbench fill      --io-dev DEV --io-kb K --mem-kb M --shm-dir DIR
 *                     CGROUP_DIR...|--list FILE   (memory and I/O in each)
 *   cgbench hop       --list FILE        (forever: one process per CPU
 *                     moves itself through its share of the cgroups)
 *   cgbench change    --list FILE --period-us P --work-us W --mem-kb K
 *                     [--io-dev DEV --io-kb 4] [--stall-us S]   (until SIGTERM: the listed
 *                     cgroups, and no others, change every period; SIGUSR1
 *                     prints the visits made so far)
 *   cgbench latency   --seconds S CGROUP_DIR...|--list FILE   (poll loop)
 *   cgbench work      --procs P --seconds S        (CPU-bound loop counter)
 *   cgbench churn     --work-us W --period-us P --mem-kb K     (forever)
 *                     [--hold-kb H] [--io-dev DEV --io-kb K [--io-period-us Q]]
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
 * by libcgstream's cgstream_decoder_next() (format 2); "changes" polls the
 * same files but, after one full snapshot of each at its open, reads
 * change snapshots (pread at CGROUP_STAT_STREAM_CHANGES, on one open file
 * description per controller: the cgroups changed or created since that
 * file's last complete snapshot, and REMOVED records), keeping every
 * cgroup's state in a table by id: the values it consumes are those of
 * the changed cgroups, per_reader.held the cgroups it holds (a full
 * snapshot again when the kernel says it dropped removals:
 * per_reader.full_snapshots); "bpf" and "bpfmap" run, on the classic grid, a BPF
 * cgroup iterator over DIR that flushes once and hands back one binary
 * record per cgroup, through the iterator's read(2) ("bpf") or a hash map
 * drained with one batch lookup ("bpfmap": what below does, see
 * bpf/cgstat.bpf.c); "bpfshared" is an agent of the shared BPF collector
 * (cgbench collect, bpf/shared.bpf.c: one privileged pass per interval
 * into an mmapable array pinned at PATH): it maps the array and, on each
 * new pass, takes every cgroup's record without a system call; its
 * cycles are the collector's passes.  DIR's subtree must hold exactly the
 * listed cgroups (plus DIR itself) for the ways to read the same cgroups.  "idle" reads
 * nothing: its kworker_ns is the background the others are measured on.
 *
 * --controllers cpu,memory,io,pressure: what an agent reads, per cgroup
 * and cycle (classic, stream, subtree, changes, bpfmap, bpfshared only),
 * each controller through its row of agent_ctrls[].  classic: cpu.stat,
 * memory.stat, memory.current, memory.events, io.stat, cpu.pressure,
 * memory.pressure, io.pressure (and irq.pressure where the kernel shows
 * it); stream: cpu.stat.stream, memory.stat.stream, io.stat.stream,
 * memory.current, memory.events (the text stream carries memory.stat's
 * keys only), pressure.stream; subtree: one snapshot of each controller's
 * subtree file per wake of the first one's; changes: the same with change
 * snapshots (per_reader.records: each controller's records in the window,
 * records_max: the most in one cycle); the polled ways are paced by the
 * first controller asked (cpu's files; pressure's when it is asked
 * alone).  bpfmap: bpf/agent.bpf.c (cpu and every memory.stat item, usage
 * and events through the memcg kfuncs), io.stat per cgroup from userspace
 * when io is wanted; bpfshared: the same records, the collector's (started
 * with the same --controllers, without io), io.stat per cgroup from
 * userspace when io is wanted; the BPF ways need cpu and have no pressure
 * (the kernel has no PSI kfuncs: they refuse it).  Every value parsed or
 * decoded is summed into a sink and counted (per_reader.values).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/futex.h>
#include <linux/loop.h>
#include <linux/cgroup_stat_stream.h>
#include "cgstream.h"
#include "cgstat.h"
#include "cgstat.skel.h"
#include "agent.skel.h"
#include "shared.skel.h"

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

/* the next "key value" line at *@p: its key (@kl 0 for an empty line) and value */
static void kv_next(const char **p, const char *end, const char **k, size_t *kl, uint64_t *x)
{
	*k = *p;
	while (*p < end && **p != ' ' && **p != '\n')
		(*p)++;
	*kl = *p - *k;
	if (*p < end && **p == ' ')
		(*p)++;
	*x = parse_u64(p, end);
	while (*p < end && **p != '\n')
		(*p)++;
	if (*p < end)
		(*p)++;
}

static int parse_stat(const char *buf, size_t len, struct stat_vals *v)
{
	const char *p = buf, *end = buf + len, *k;
	size_t kl;
	uint64_t x;
	memset(v, 0, sizeof(*v));
	while (p < end) {
		kv_next(&p, end, &k, &kl, &x);
#define KEY(s) (kl == sizeof(s) - 1 && !memcmp(k, s, kl))
		if (KEY("usage_usec")) v->usage = x;
		else if (KEY("user_usec")) v->user = x;
		else if (KEY("system_usec")) v->system = x;
		/* the stream text's last three lines (format 2's names) */
		else if (KEY("publication_seq")) v->seq = x;
		else if (KEY("publication_time_usec")) v->flush_time = x;
		else if (KEY("publications_skipped")) v->flush_missed = x;
#undef KEY
		v->nkeys++;
	}
	return v->nkeys ? 0 : -EINVAL;
}

/*
 * The agent's other files, parsed as an agent would and consumed: every
 * value summed into the sink (below), the values counted in *@nvals.
 *
 * "key value" lines (memory.stat, memory.events, memory.stat.stream): @want
 * names a key whose value also goes to *@got.
 */
static volatile uint64_t sink;	/* what a consumer would do with the values */

/* the stream texts' publication line */
#define PUB_SEQ "publication_seq"
#define IS_PUB_SEQ(k, kl) ((kl) == sizeof(PUB_SEQ) - 1 && !memcmp(k, PUB_SEQ, kl))

static int parse_kv(const char *buf, size_t len, const char *want, uint64_t *got,
		    uint64_t *seq, uint64_t *nvals)
{
	const char *p = buf, *end = buf + len, *k;
	size_t wl = want ? strlen(want) : 0, kl;
	uint64_t n = 0, sum = 0, x;
	while (p < end) {
		kv_next(&p, end, &k, &kl, &x);
		if (!kl)
			continue;
		if (want && kl == wl && !memcmp(k, want, kl))
			*got = x;
		else if (IS_PUB_SEQ(k, kl))
			*seq = x;
		sum += x;
		n++;
	}
	sink += sum;
	*nvals += n;
	return n ? 0 : -EINVAL;
}

/* io.stat(.stream): "MAJ:MIN rbytes=N wbytes=N ..." lines (and "publication_seq N", ...) */
static int parse_io(const char *buf, size_t len, uint64_t *wbytes, uint64_t *seq, uint64_t *nvals)
{
	const char *p = buf, *end = buf + len;
	uint64_t n = 0, sum = 0, wb = 0;
	while (p < end) {
		/* the device, or a key of its own */
		const char *k = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		size_t kl = p - k;
		bool dev = memchr(k, ':', kl) != NULL;
		while (p < end && *p != '\n') {
			while (p < end && *p == ' ')
				p++;
			if (!dev) {	/* "publication_seq N" and the like */
				uint64_t x = parse_u64(&p, end);
				if (IS_PUB_SEQ(k, kl))
					*seq = x;
				sum += x;
				n++;
				break;
			}
			const char *f = p;
			while (p < end && *p != '=' && *p != ' ' && *p != '\n')
				p++;
			if (p >= end || *p != '=')
				continue;
			size_t fl = p++ - f;
			uint64_t x = parse_u64(&p, end);
			if (fl == 6 && !memcmp(f, "wbytes", 6))
				wb += x;
			sum += x;
			n++;
		}
		if (p < end)
			p++;
	}
	sink += sum;
	*nvals += n;
	*wbytes = wb;
	return 0;
}

/* a stream text's publication (0: none), found without parsing the rest */
static uint64_t text_pub_seq(const char *buf, size_t len)
{
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', end - p);
		if ((size_t)(end - p) > sizeof(PUB_SEQ) && !memcmp(p, PUB_SEQ " ", sizeof(PUB_SEQ))) {
			p += sizeof(PUB_SEQ);
			return parse_u64(&p, end);
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* "N.DD" as hundredths (the SCHEMA's unit of pressure's averages), or "N" */
static uint64_t parse_centi(const char **p, const char *end)
{
	uint64_t x = parse_u64(p, end);
	if (*p >= end || **p != '.')
		return x;
	(*p)++;
	for (int d = 0; d < 2; d++) {
		x *= 10;
		if (*p < end && **p >= '0' && **p <= '9')
			x += (uint64_t)(*(*p)++ - '0');
	}
	parse_u64(p, end);	/* digits past the hundredths */
	return x;
}

/*
 * cpu.pressure, memory.pressure, io.pressure, irq.pressure and
 * pressure.stream: "[resource] some|full avg10=X.YY avg60=X.YY
 * avg300=X.YY total=N" lines (averages in hundredths of a percent, as the
 * SCHEMA has them), and the stream's "publication_seq N" and the like.
 * The totals (usec) added to *@total (a cgroup's four files: its sum).
 */
static int parse_psi(const char *buf, size_t len, uint64_t *total, uint64_t *seq, uint64_t *nvals)
{
	const char *p = buf, *end = buf + len;
	uint64_t n = 0, sum = 0, tot = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		if (!memchr(p, '=', eol - p)) {	/* "publication_seq N" and the like */
			const char *k;
			size_t kl;
			uint64_t x;
			kv_next(&p, end, &k, &kl, &x);
			if (IS_PUB_SEQ(k, kl))
				*seq = x;
			sum += x;
			n += kl != 0;
			continue;
		}
		while (p < eol) {	/* the resource, the state, then key=value fields */
			const char *w = p;
			while (p < eol && *p != ' ' && *p != '=')
				p++;
			if (p < eol && *p == '=') {
				size_t wl = p++ - w;
				uint64_t x = parse_centi(&p, eol);
				if (wl == 5 && !memcmp(w, "total", 5))
					tot += x;
				sum += x;
				n++;
			}
			while (p < eol && *p != ' ')
				p++;
			while (p < eol && *p == ' ')
				p++;
		}
		p = nl ? nl + 1 : end;
	}
	sink += sum;
	*nvals += n;
	*total += tot;
	return n ? 0 : -EINVAL;
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

/* the publication's number and skipped count from the root's stream @file (stream runs only) */
static int root_seq(const char *root, const char *file, uint64_t *seq, uint64_t *missed)
{
	char path[4096], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", root, file);
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

/* --controllers: what each cycle takes of every cgroup (libcgstream's bits) */
enum {
	CTRL_CPU = CGSTREAM_CTRL_CPU,
	CTRL_MEM = CGSTREAM_CTRL_MEMORY,
	CTRL_IO = CGSTREAM_CTRL_IO,
	CTRL_PSI = CGSTREAM_CTRL_PRESSURE,
};

/*
 * The agent's controllers, one row each: what every way reads of a
 * controller comes from its row (the files the classic and stream ways
 * read of each cgroup, and how each is parsed; whether the BPF ways have
 * it), its names and subtree file from libcgstream
 * (cgstream_controller_name(), cgstream_controller_file()), so that a
 * controller is a row.  The first row an agent reads paces its polled
 * ways (o->pace).
 */
enum text_fmt {
	TXT_CPU,	/* cpu.stat(.stream): key value lines, usage_usec checked */
	TXT_MEMSTAT,	/* memory.stat(.stream): key value lines, anon checked */
	TXT_KV,		/* key value lines (memory.events) */
	TXT_ONE,	/* one number (memory.current) */
	TXT_IO,		/* io.stat(.stream): a line per device of key=value fields */
	TXT_PSI,	/* *.pressure, pressure.stream: parse_psi() */
};
struct text_file {
	const char *name;
	enum text_fmt fmt;
	bool optional;		/* read where the kernel shows it (irq.pressure) */
};
enum bpf_has {
	BPF_PROG,	/* the BPF ways' programs read it */
	BPF_TEXT,	/* the BPF ways read its text per cgroup, as below does */
	BPF_NONE,	/* no BPF way has it: there are no kfuncs for it */
};
#define CTRL_FILES 4
#define TXT(n, f) { .name = (n), .fmt = (f) }
#define TXT_SHOWN(n, f) { .name = (n), .fmt = (f), .optional = true }
static const struct agent_ctrl {
	unsigned int bit;			/* CTRL_* */
	struct text_file classic[CTRL_FILES];	/* each cgroup's files, the classic way's */
	struct text_file stream[CTRL_FILES];	/* the stream way's */
	enum bpf_has bpf;
	size_t rec_room;	/* bytes a cgroup's subtree record may take, with growth */
} agent_ctrls[] = {
	{ CTRL_CPU, { TXT("cpu.stat", TXT_CPU) }, { TXT("cpu.stat.stream", TXT_CPU) }, BPF_PROG,
	  2 * (sizeof(struct cgroup_stat_cgroup) + 12 * sizeof(__u64)) },
	/* memory.stat.stream carries memory.stat's keys only */
	{ CTRL_MEM,
	  { TXT("memory.stat", TXT_MEMSTAT), TXT("memory.current", TXT_ONE),
	    TXT("memory.events", TXT_KV) },
	  { TXT("memory.stat.stream", TXT_MEMSTAT), TXT("memory.current", TXT_ONE),
	    TXT("memory.events", TXT_KV) }, BPF_PROG, 1024 },
	{ CTRL_IO, { TXT("io.stat", TXT_IO) }, { TXT("io.stat.stream", TXT_IO) }, BPF_TEXT,
	  2 * (sizeof(struct cgroup_stat_cgroup) + 12 * sizeof(__u64)) },
	/* what kubelet, below and oomd read; pressure.stream holds all four */
	{ CTRL_PSI,
	  { TXT("cpu.pressure", TXT_PSI), TXT("memory.pressure", TXT_PSI),
	    TXT("io.pressure", TXT_PSI), TXT_SHOWN("irq.pressure", TXT_PSI) },
	  { TXT("pressure.stream", TXT_PSI) }, BPF_NONE,
	  sizeof(struct cgroup_stat_cgroup) + 32 * sizeof(__u64) },
};
#undef TXT
#undef TXT_SHOWN
#define NCTRL (sizeof(agent_ctrls) / sizeof(agent_ctrls[0]))

static const char *ctrl_name(size_t c)
{
	return cgstream_controller_name(agent_ctrls[c].bit);
}

/* ---- shared state between the parent and the forked readers ---------- */
struct reader_res {
	uint64_t samples, cpu_ns, utime_us, stime_us, wall_ns;
	uint64_t cycles, missed, dups, gaps, errors, wakes, late_ns_max;
	uint64_t values;	/* numbers consumed (the agent ways count them) */
	int bpf_items, bpf_missing;	/* agent BPF: memory.stat items it reads, keys it cannot */
	uint64_t retries;	/* bpfshared: reads taken again (a pass began during them) */
	uint64_t held;		/* changes: the cgroups its table held at the window's end */
	uint64_t fulls;		/* changes: full snapshots read in the window (after LOST) */
	/* subtree, changes: each agent_ctrls[] row's CGROUP records in the
	 * window, and the most one cycle's snapshot held */
	uint64_t recs[NCTRL], recs_max[NCTRL];
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
enum way { WAY_CLASSIC, WAY_STREAM, WAY_STREAM1, WAY_SUBTREE, WAY_BPF, WAY_BPFMAP, WAY_BPFSHARED,
	   WAY_CHANGES, WAY_IDLE };

struct opts {
	const char *mode, *list, *root, *subtree;
	enum way way;
	int readers, procs, mem_kb;
	double seconds;
	bool seconds_set;	/* collect: --seconds given (else it runs until SIGTERM) */
	uint64_t max_samples, period_ms, work_us, period_us, count;
	uint64_t io_period_us;	/* churn: a write every this long (default: --period-us) */
	unsigned int ctrl;	/* CTRL_*; cpu alone unless --controllers */
	const char *ctrl_name;
	size_t pace;		/* the first of agent_ctrls[] read: it paces the polled ways */
	uint64_t stall_us;	/* change: each visit stalls this long on its CPU (pressure) */
	const char *io_dev;	/* churn, fill: O_DIRECT writes to this block device */
	const char *shm_dir;	/* fill: the tmpfs its files go to */
	int io_kb, hold_kb;
	char **cg;
	int ncg;
	bool stream;	/* per-cgroup cpu.stat.stream files (stream, stream1) */
	const char *pin;	/* collect, bpfshared, sharedcheck: the shared map's bpffs pin */
	unsigned int slots;	/* collect: the map's records */
	uint64_t dwell_us;	/* sharedcheck: hold each read open this long */
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

/* every listed cgroup's file @name */
static int *open_named(const struct opts *o, const char *name, int *err)
{
	int *fds = calloc(o->ncg, sizeof(int));
	char path[4096];
	*err = 0;
	for (int i = 0; i < o->ncg; i++) {
		snprintf(path, sizeof(path), "%s/%s", o->cg[i], name);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			*err = errno;
			fprintf(stderr, "cgbench: %s: %s\n", path, strerror(errno));
			return NULL;
		}
	}
	return fds;
}

static int *open_all(const struct opts *o, int *err)
{
	return open_named(o, o->stream ? stream_file() : "cpu.stat", err);
}

/* a controller's file as this run names it: stream_file() for cpu's stream */
static const char *file_name(const char *name)
{
	return strcmp(name, "cpu.stat.stream") ? name : stream_file();
}

/* row @c's stream file at the root (its publications) */
static const char *root_stream_file(size_t c)
{
	return file_name(cgstream_controller_file(agent_ctrls[c].bit, CGSTREAM_FILE_STREAM));
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

/* SIGTERM: the load generators and the collector end their loop */
static volatile sig_atomic_t quit;
static void on_term(int s) { (void)s; quit = 1; }

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

/* one cgroup's values as a way got them: the checks against classic */
struct agent_vals {
	uint64_t usage_usec, anon, current, wbytes, psi_total;
	unsigned int seen;	/* CTRL_* of the values taken */
};

/*
 * The values the checks compare, each found in a snapshot by its SCHEMA
 * name ("*.total": every value whose name ends so, summed; a device's
 * value: summed over the devices) and parsed from the text files by their
 * format (text_parse())
 */
static const struct probe_field {
	const char *name;	/* agentcheck's */
	unsigned int ctrl;
	const char *schema;
	bool device;
	size_t off;		/* in struct agent_vals */
} probe_fields[] = {
	{ "usage_usec", CTRL_CPU, "usage_usec", false, offsetof(struct agent_vals, usage_usec) },
	{ "anon", CTRL_MEM, "anon", false, offsetof(struct agent_vals, anon) },
	{ "current", CTRL_MEM, "current", false, offsetof(struct agent_vals, current) },
	{ "wbytes", CTRL_IO, "wbytes", true, offsetof(struct agent_vals, wbytes) },
	/* every resource's and state's total stall (usec): an idle cgroup's
	 * stay, while its averages decay */
	{ "pressure_total", CTRL_PSI, "*.total", false, offsetof(struct agent_vals, psi_total) },
};
#define NPROBE (sizeof(probe_fields) / sizeof(probe_fields[0]))
#define PROBE_AT 8	/* the SCHEMA positions a checked value sums, at most */

static uint64_t *probe_val(struct agent_vals *v, size_t f)
{
	return (uint64_t *)((char *)v + probe_fields[f].off);
}

/* the checked values of the controllers @v took, into @pv */
static void pv_merge(struct agent_vals *pv, struct agent_vals *v)
{
	for (size_t f = 0; f < NPROBE; f++)
		if (v->seen & probe_fields[f].ctrl)
			*probe_val(pv, f) = *probe_val(v, f);
	pv->seen |= v->seen;
}

struct pass_buf { char *p; size_t cap; };

/*
 * The subtree files, format 2, read with libcgstream's exported decoder
 * (cgstream_decoder_next(), the one the library's tree runs).  One struct
 * snap per controller's *.stat.stream.subtree file: its own open file
 * description (a change snapshot is relative to that file's previous
 * complete snapshot), its decoder, and for the changes way the state of
 * every cgroup it lists (a table by cgroup id).
 */
struct cg_state {
	uint64_t id;		/* 0: a free slot; CG_GONE: a removed one's */
	uint64_t gen;		/* the full snapshot that last listed it */
	uint32_t nvals, ndev, dvals, cap;
	uint64_t *v;		/* nvals values, then per device major, minor, dvals values */
};
#define CG_GONE UINT64_MAX

struct cg_table {
	struct cg_state *s;
	size_t cap, used, live;	/* slots; slots not free; cgroups held */
	uint64_t gen;
};

struct snap {
	int fd;
	struct cgstream_decoder *dec;
	struct cg_table *tab;	/* changes: every listed cgroup's state; subtree: NULL */
	bool full_next;		/* changes: the next read is a full snapshot (none read yet) */
	uint64_t fulls;		/* changes: full snapshots read */
	uint64_t probe_changed;	/* change snapshots that carried the probe's record */
	unsigned int ctrl;	/* its snapshots' controller (CTRL_*) */
	/* the SCHEMA's positions of each value the checks compare */
	uint16_t at[NPROBE][PROBE_AT];
	uint8_t nat[NPROBE];
	/* the SCHEMA record they were found in, as the kernel wrote it: the
	 * same bytes again (every snapshot of a controller, as a rule) are not
	 * searched again */
	unsigned char *schema;
	size_t schema_len;
};

static struct cg_state *tab_slot(struct cg_table *t, uint64_t id, bool add)
{
	if (add && (t->used + 1) * 2 > t->cap) {
		/* sized by the cgroups held: the removed ones' slots are not copied */
		struct cg_table n = { .cap = 1024, .gen = t->gen };
		while ((t->live + 1) * 4 > n.cap)
			n.cap *= 2;
		n.s = calloc(n.cap, sizeof(*n.s));
		if (!n.s)
			die("the changes way's table: %s", strerror(ENOMEM));
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->s[i].id || t->s[i].id == CG_GONE)
				continue;
			*tab_slot(&n, t->s[i].id, true) = t->s[i];
			n.used++;
			n.live++;
		}
		free(t->s);
		*t = n;
	}
	struct cg_state *gone = NULL;
	for (size_t i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct cg_state *s = &t->s[i];
		if (s->id == id)
			return s;
		if (s->id == CG_GONE && !gone)
			gone = s;
		if (!s->id)
			return add ? (gone ? gone : s) : NULL;
	}
}

static void tab_drop(struct cg_table *t, struct cg_state *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
	s->id = CG_GONE;
	t->live--;
}

/*
 * A CGROUP record's values and devices into its cgroup's state, consumed
 * from there (decoded once, as the subtree way's rec_take() does): how many
 */
static uint64_t tab_put(struct cg_table *t, const struct cgstream_rec *rec)
{
	struct cg_state *s = tab_slot(t, rec->id, true);
	if (s->id != rec->id) {
		t->used += !s->id;
		t->live++;
		memset(s, 0, sizeof(*s));
		s->id = rec->id;
	}
	uint32_t need = rec->nr_values + rec->nr_devices * (2 + rec->device_values);
	if (need > s->cap) {
		s->v = realloc(s->v, need * sizeof(uint64_t));
		if (!s->v)
			die("the changes way's table: %s", strerror(ENOMEM));
		s->cap = need;
	}
	s->gen = t->gen;
	s->nvals = rec->nr_values;
	s->ndev = rec->nr_devices;
	s->dvals = rec->device_values;
	uint64_t sum = 0, n = rec->nr_values;
	for (uint32_t i = 0; i < rec->nr_values; i++) {
		cgstream_rec_value(rec, i, &s->v[i]);
		sum += s->v[i];
	}
	uint64_t *d = s->v + rec->nr_values;
	for (uint32_t i = 0; i < rec->nr_devices; i++, d += 2 + rec->device_values) {
		uint32_t maj = 0, min = 0;
		if (cgstream_rec_device(rec, i, &maj, &min, d + 2, rec->device_values))
			memset(d + 2, 0, rec->device_values * sizeof(uint64_t));
		d[0] = maj;
		d[1] = min;
		for (uint32_t k = 0; k < rec->device_values; k++)
			sum += d[2 + k];
		n += rec->device_values;
	}
	sink += sum;
	return n;
}

/* after a full snapshot: the cgroups it did not list are gone */
static void tab_sweep(struct cg_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].id && t->s[i].id != CG_GONE && t->s[i].gen != t->gen)
			tab_drop(t, &t->s[i]);
}

/* value @i of every device of @s, summed (-1: none) */
static uint64_t state_dev_sum(const struct cg_state *s, int i)
{
	uint64_t sum = 0;
	const uint64_t *d = s->v + s->nvals;
	for (uint32_t k = 0; i >= 0 && (uint32_t)i < s->dvals && k < s->ndev; k++, d += 2 + s->dvals)
		sum += d[2 + i];
	return sum;
}

/* the changes way: the probe's values from the state it holds */
static void snap_probe(const struct snap *sn, const struct cg_state *s, struct agent_vals *pv)
{
	for (size_t f = 0; f < NPROBE; f++) {
		uint64_t sum = 0;
		if (probe_fields[f].ctrl != sn->ctrl)
			continue;
		for (unsigned int k = 0; k < sn->nat[f]; k++)
			sum += probe_fields[f].device ? state_dev_sum(s, sn->at[f][k]) :
			       sn->at[f][k] < s->nvals ? s->v[sn->at[f][k]] : 0;
		*probe_val(pv, f) = sum;
		pv->seen |= sn->ctrl;
	}
}

/* a CGROUP or REMOVED record's values and devices, consumed: how many */
static uint64_t rec_take(const struct cgstream_rec *rec)
{
	uint64_t v, sum = 0, dv[64], n = rec->nr_values;
	for (uint32_t i = 0; i < rec->nr_values; i++)
		if (!cgstream_rec_value(rec, i, &v))
			sum += v;
	uint32_t nd = rec->device_values < 64 ? rec->device_values : 64;
	for (uint32_t i = 0; i < rec->nr_devices; i++) {
		uint32_t maj, min;
		if (cgstream_rec_device(rec, i, &maj, &min, dv, nd))
			continue;
		for (uint32_t k = 0; k < nd; k++)
			sum += dv[k];
		n += nd;
	}
	sink += sum;
	return n;
}

/* value @i of every device of @rec, summed */
static uint64_t rec_dev_sum(const struct cgstream_rec *rec, unsigned int i)
{
	uint64_t dv[64], sum = 0;
	uint32_t maj, min, nd = rec->device_values < 64 ? rec->device_values : 64;
	for (uint32_t d = 0; i < nd && !cgstream_rec_device(rec, d, &maj, &min, dv, nd); d++)
		sum += dv[i];
	return sum;
}

/* the subtree way: the probe's values from its record, at the positions
 * snap_schema() found */
static void rec_probe(const struct snap *sn, const struct cgstream_rec *rec, struct agent_vals *pv)
{
	for (size_t f = 0; f < NPROBE; f++) {
		uint64_t sum = 0, v;
		if (probe_fields[f].ctrl != rec->controller)
			continue;
		for (unsigned int k = 0; k < sn->nat[f]; k++)
			sum += probe_fields[f].device ? rec_dev_sum(rec, sn->at[f][k]) :
			       !cgstream_rec_value(rec, sn->at[f][k], &v) ? v : 0;
		*probe_val(pv, f) = sum;
		pv->seen |= rec->controller;
	}
}

/* @name is @pattern, or ends as "*.suffix" says */
static bool schema_match(const char *pattern, const char *name)
{
	size_t pl = strlen(pattern) - 1, nl = strlen(name);
	if (pattern[0] != '*')
		return !strcmp(pattern, name);
	return nl >= pl && !strcmp(name + nl - pl, pattern + 1);
}

/* a SCHEMA record: where the checked values are (searched only when its
 * bytes differ from the last SCHEMA's) */
static void snap_schema(struct snap *sn, const struct cgstream_rec *rec)
{
	if (sn->schema && rec->size == sn->schema_len && !memcmp(sn->schema, rec->data, rec->size))
		return;
	memset(sn->nat, 0, sizeof(sn->nat));
	for (size_t f = 0; f < NPROBE; f++) {
		const struct probe_field *p = &probe_fields[f];
		uint32_t n = p->device ? rec->device_values : rec->schema_values;
		const char *const *names = p->device ? rec->device_names : rec->names;
		for (uint32_t i = 0; p->ctrl == rec->controller && i < n && sn->nat[f] < PROBE_AT; i++)
			if (schema_match(p->schema, names[i]))
				sn->at[f][sn->nat[f]++] = (uint16_t)i;
	}
	unsigned char *copy = realloc(sn->schema, rec->size);
	if (!copy)
		die("a SCHEMA's copy: %s", strerror(ENOMEM));
	memcpy(copy, rec->data, rec->size);
	sn->schema = copy;
	sn->schema_len = rec->size;
}

/*
 * Every record of one snapshot of @sn's file, decoded, to @fn: pread()s
 * from @base (0: a full snapshot; CGROUP_STAT_STREAM_CHANGES: a change
 * snapshot) on until one returns 0.  0, or -errno (-EPROTO: a record the
 * decoder refused; -EPROTONOSUPPORT: a format it does not know).
 */
static int snap_each(struct snap *sn, struct pass_buf *b, off_t base,
		     void (*fn)(void *arg, const struct cgstream_rec *rec), void *arg)
{
	for (off_t pos = 0;;) {
		struct cgstream_rec rec;
		size_t off = 0;
		int r;
		ssize_t n = pread(sn->fd, b->p, b->cap, base + pos);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		while ((r = cgstream_decoder_next(sn->dec, b->p, (size_t)n, &off, &rec,
						  sizeof(rec))) > 0)
			if (rec.decoded)
				fn(arg, &rec);
		if (r < 0)
			return r == -EPROTONOSUPPORT ? r : -EPROTO;
		pos += n;
	}
}

/* snap_pass()'s state over the records of its snapshot */
struct pass_ctx {
	struct snap *sn;
	int64_t recs;
	uint64_t nv, *seq, probe_id;
	bool probe_seen, *lost;
	struct agent_vals *pv;
};

static void pass_rec(void *arg, const struct cgstream_rec *rec)
{
	struct pass_ctx *c = arg;
	struct snap *sn = c->sn;
	sn->ctrl = rec->controller;
	if (rec->type == CGSTREAM_REC_SNAPSHOT) {
		*c->seq = rec->seq;
		*c->lost |= !!(rec->snapshot_flags & CGSTREAM_SNAPSHOT_F_LOST);
		return;
	}
	if (rec->type == CGSTREAM_REC_SCHEMA) {
		snap_schema(sn, rec);
		return;
	}
	if (rec->type != CGSTREAM_REC_CGROUP && rec->type != CGSTREAM_REC_REMOVED)
		return;
	if (rec->type == CGSTREAM_REC_CGROUP && sn->tab) {
		c->recs++;
		c->nv += tab_put(sn->tab, rec);
		c->probe_seen |= c->probe_id && rec->id == c->probe_id;
		return;
	}
	c->nv += rec_take(rec);
	if (rec->type == CGSTREAM_REC_REMOVED) {
		struct cg_state *s = sn->tab ? tab_slot(sn->tab, rec->id, false) : NULL;
		if (s)
			tab_drop(sn->tab, s);
		return;
	}
	c->recs++;
	if (c->probe_id && rec->id == c->probe_id)
		rec_probe(sn, rec, c->pv);
}

/*
 * One snapshot of @sn's file, as the kernel defines it: from offset 0 (a
 * full snapshot) or CGROUP_STAT_STREAM_CHANGES (@changes: the cgroups
 * changed or created since this file's previous complete snapshot), each
 * record decoded and its values consumed (counted in *@nvals).  With a
 * table (the changes way) each CGROUP record becomes its cgroup's state,
 * each REMOVED record (final values, consumed too) drops it, and a full
 * snapshot drops what it does not list; the cgroups a change snapshot
 * leaves out are unchanged (the kernel sends nothing for them; a record
 * type this library does not know, as an UNCHANGED record of a later
 * kernel would be, is skipped) and stay as they are.  Returns the CGROUP
 * records, or -errno; *@seq: the snapshot's publication; *@lost: the
 * kernel dropped removals since the base (resynchronise); @probe_id's
 * values to @pv.
 */
static int64_t snap_pass(struct snap *sn, struct pass_buf *b, bool changes, uint64_t *seq,
			 bool *lost, uint64_t *nvals, uint64_t probe_id, struct agent_vals *pv)
{
	struct pass_ctx c = { .sn = sn, .seq = seq, .lost = lost, .probe_id = probe_id, .pv = pv };
	*lost = false;
	if (sn->tab && !changes)
		sn->tab->gen++;
	int err = snap_each(sn, b, changes ? (off_t)CGROUP_STAT_STREAM_CHANGES : 0, pass_rec, &c);
	if (err)
		return err;
	if (sn->tab) {
		if (!changes)
			tab_sweep(sn->tab);
		else
			sn->probe_changed += c.probe_seen;
		struct cg_state *s = probe_id ? tab_slot(sn->tab, probe_id, false) : NULL;
		if (s)
			snap_probe(sn, s, pv);
	}
	*nvals += c.nv;
	return c.recs;
}

/* @dir's @file, with a decoder; a table for the changes way (-errno) */
static int snap_open(struct snap *sn, const char *dir, const char *file, bool changes)
{
	char path[4096];
	memset(sn, 0, sizeof(*sn));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	sn->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sn->fd < 0) {
		int err = errno;
		fprintf(stderr, "cgbench: %s: %s%s\n", path, strerror(err),
			err == ENOENT ? " (this kernel has no subtree stream files: the subtree "
			"and changes ways need the cgstream series)" : "");
		return -err;
	}
	int err = cgstream_decoder_new(&sn->dec);
	if (err)
		return err;
	if (changes && !(sn->tab = calloc(1, sizeof(*sn->tab))))
		return -ENOMEM;
	sn->full_next = true;
	return 0;
}

/*
 * The BPF ways: cgstat.bpf.c for cpu.stat alone, agent.bpf.c once memory
 * is wanted.  Its memory.stat items: the keys @dir's memory.stat prints,
 * each resolved to the enum value its kfunc takes (from the kernel's BTF:
 * the values change with the version and configuration).  The list is
 * mm/memcontrol.c's memory_stats[] and memcg_vm_event_stat[] (Linux 7.2);
 * "slab", "pgscan" and "pgsteal" are sums of other items.
 */
static const struct { const char *key, *member; bool vmev; } mem_items[] = {
	{ "anon", "NR_ANON_MAPPED", false }, { "file", "NR_FILE_PAGES", false },
	{ "kernel", "MEMCG_KMEM", false }, { "kernel_stack", "NR_KERNEL_STACK_KB", false },
	{ "pagetables", "NR_PAGETABLE", false }, { "sec_pagetables", "NR_SECONDARY_PAGETABLE", false },
	{ "percpu", "MEMCG_PERCPU_B", false }, { "sock", "MEMCG_SOCK", false }, { "vmalloc", "NR_VMALLOC", false },
	{ "shmem", "NR_SHMEM", false }, { "zswap", "MEMCG_ZSWAP_B", false }, { "zswapped", "MEMCG_ZSWAPPED", false },
	{ "zswap_incomp", "MEMCG_ZSWAP_INCOMP", false }, { "file_mapped", "NR_FILE_MAPPED", false },
	{ "file_dirty", "NR_FILE_DIRTY", false }, { "file_writeback", "NR_WRITEBACK", false },
	{ "swapcached", "NR_SWAPCACHE", false }, { "anon_thp", "NR_ANON_THPS", false },
	{ "file_thp", "NR_FILE_THPS", false }, { "shmem_thp", "NR_SHMEM_THPS", false },
	{ "inactive_anon", "NR_INACTIVE_ANON", false }, { "active_anon", "NR_ACTIVE_ANON", false },
	{ "inactive_file", "NR_INACTIVE_FILE", false }, { "active_file", "NR_ACTIVE_FILE", false },
	{ "unevictable", "NR_UNEVICTABLE", false }, { "slab_reclaimable", "NR_SLAB_RECLAIMABLE_B", false },
	{ "slab_unreclaimable", "NR_SLAB_UNRECLAIMABLE_B", false }, { "hugetlb", "NR_HUGETLB", false },
	{ "workingset_refault_anon", "WORKINGSET_REFAULT_ANON", false },
	{ "workingset_refault_file", "WORKINGSET_REFAULT_FILE", false },
	{ "workingset_activate_anon", "WORKINGSET_ACTIVATE_ANON", false },
	{ "workingset_activate_file", "WORKINGSET_ACTIVATE_FILE", false },
	{ "workingset_restore_anon", "WORKINGSET_RESTORE_ANON", false },
	{ "workingset_restore_file", "WORKINGSET_RESTORE_FILE", false },
	{ "workingset_nodereclaim", "WORKINGSET_NODERECLAIM", false },
	{ "pgdemote_kswapd", "PGDEMOTE_KSWAPD", false }, { "pgdemote_direct", "PGDEMOTE_DIRECT", false },
	{ "pgdemote_khugepaged", "PGDEMOTE_KHUGEPAGED", false },
	{ "pgdemote_proactive", "PGDEMOTE_PROACTIVE", false },
	{ "pgsteal_kswapd", "PGSTEAL_KSWAPD", false }, { "pgsteal_direct", "PGSTEAL_DIRECT", false },
	{ "pgsteal_khugepaged", "PGSTEAL_KHUGEPAGED", false },
	{ "pgsteal_proactive", "PGSTEAL_PROACTIVE", false },
	{ "pgscan_kswapd", "PGSCAN_KSWAPD", false }, { "pgscan_direct", "PGSCAN_DIRECT", false },
	{ "pgscan_khugepaged", "PGSCAN_KHUGEPAGED", false }, { "pgscan_proactive", "PGSCAN_PROACTIVE", false },
	{ "pgrefill", "PGREFILL", false }, { "pgpromote_success", "PGPROMOTE_SUCCESS", false },
	/* the vm events */
	{ "pgpgin", "PGPGIN", true }, { "pgpgout", "PGPGOUT", true },
	{ "pswpin", "PSWPIN", true }, { "pswpout", "PSWPOUT", true },
	{ "pgfault", "PGFAULT", true }, { "pgmajfault", "PGMAJFAULT", true },
	{ "pgactivate", "PGACTIVATE", true }, { "pgdeactivate", "PGDEACTIVATE", true },
	{ "pglazyfree", "PGLAZYFREE", true }, { "pglazyfreed", "PGLAZYFREED", true },
	{ "swpin_zero", "SWPIN_ZERO", true }, { "swpout_zero", "SWPOUT_ZERO", true },
	{ "zswpin", "ZSWPIN", true }, { "zswpout", "ZSWPOUT", true }, { "zswpwb", "ZSWPWB", true },
	{ "thp_fault_alloc", "THP_FAULT_ALLOC", true },
	{ "thp_collapse_alloc", "THP_COLLAPSE_ALLOC", true },
	{ "thp_swpout", "THP_SWPOUT", true }, { "thp_swpout_fallback", "THP_SWPOUT_FALLBACK", true },
	{ "numa_pages_migrated", "NUMA_PAGE_MIGRATE", true },
	{ "numa_pte_updates", "NUMA_PTE_UPDATES", true },
	{ "numa_hint_faults", "NUMA_HINT_FAULTS", true },
};
static const char *const mem_derived[] = { "slab", "pgscan", "pgsteal" };

static int btf_enum_value(const struct btf *btf, const char *type, const char *member, __u32 *val)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	if (id < 0)
		return -ENOENT;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_enum *e = btf_enum(t);
	for (int i = 0; i < (int)btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), member)) {
			*val = (__u32)e->val;
			return 0;
		}
	return -ENOENT;
}

/* the first word of each line of @dir/@file, as @fn(key, arg); -errno */
static int for_each_key(const char *dir, const char *file, void (*fn)(const char *, void *),
			void *arg)
{
	char path[4096], line[256];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \n")] = 0;
		if (*line)
			fn(line, arg);
	}
	fclose(f);
	return 0;
}

struct item_ctx {
	struct btf *btf;
	struct agent_items *it;
	int anon_i, missing;
};

static void add_stat_key(const char *key, void *arg)
{
	struct item_ctx *c = arg;
	__u32 v;
	for (size_t i = 0; i < sizeof(mem_derived) / sizeof(*mem_derived); i++)
		if (!strcmp(key, mem_derived[i]))
			return;
	for (size_t i = 0; i < sizeof(mem_items) / sizeof(*mem_items); i++) {
		if (strcmp(key, mem_items[i].key))
			continue;
		if (mem_items[i].vmev) {
			if (c->it->nr_vmev < AGENT_MAX_VMEV &&
			    !btf_enum_value(c->btf, "vm_event_item", mem_items[i].member, &v)) {
				c->it->vmev_idx[c->it->nr_vmev++] = v;
				return;
			}
		} else if (c->it->nr_state < AGENT_MAX_STATE &&
			   (!btf_enum_value(c->btf, "node_stat_item", mem_items[i].member, &v) ||
			    !btf_enum_value(c->btf, "memcg_stat_item", mem_items[i].member, &v))) {
			if (!strcmp(key, "anon"))
				c->anon_i = (int)c->it->nr_state;
			c->it->state_idx[c->it->nr_state++] = v;
			return;
		}
		break;
	}
	fprintf(stderr, "cgbench: BPF: memory.stat key %s has no kfunc item here\n", key);
	c->missing++;
}

static void add_event_key(const char *key, void *arg)
{
	struct item_ctx *c = arg;
	char member[64];
	__u32 v;
	int n = snprintf(member, sizeof(member), "MEMCG_%s", key);
	for (int i = 6; i < n; i++)
		member[i] = (char)(member[i] >= 'a' && member[i] <= 'z' ? member[i] - 32 : member[i]);
	if (c->it->nr_memev < AGENT_MAX_MEMEV &&
	    !btf_enum_value(c->btf, "memcg_memory_event", member, &v)) {
		c->it->memev_idx[c->it->nr_memev++] = v;
		return;
	}
	fprintf(stderr, "cgbench: BPF: memory.events key %s has no kfunc item here\n", key);
	c->missing++;
}

struct bpfway {
	struct cgstat *skel;	/* cpu.stat alone */
	struct agent *askel;	/* with memory */
	struct bpf_link *link;
	bool map;
	int map_fd;
	uint32_t maxn;
	__u64 *keys;
	void *vals;
	size_t vsz;
	int anon_i;		/* agent: anon's index in the state items */
	int nitems, nmissing;	/* agent: memory items read, keys not readable */
	/* cgstat in a map (account): each drained record also to this */
	void (*each)(void *arg, const struct cgstat_rec *r);
	void *each_arg;
};

/* libbpf's warnings (a failed load prints the verifier's log); CGBENCH_BPF_DEBUG=1: all */
static int bpf_warn(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	static int all = -1;
	if (all < 0)
		all = getenv("CGBENCH_BPF_DEBUG") != NULL;
	return lvl == LIBBPF_DEBUG && !all ? 0 : vfprintf(stderr, fmt, ap);
}

/*
 * An agent program's item lists (agent.bpf.c, shared.bpf.c: struct
 * agent_items in its rodata) from @dir's memory.stat and memory.events;
 * -EOPNOTSUPP where memory is wanted and the kernel has no memcg kfuncs
 */
static int items_load(struct agent_items *it, const char *dir, unsigned int ctrl, int *anon_i,
		      int *nitems, int *nmissing)
{
	struct item_ctx c = { .it = it, .anon_i = -1 };
	int err = 0;
	it->want_cpu = !!(ctrl & CTRL_CPU);
	it->want_mem = !!(ctrl & CTRL_MEM);
	*anon_i = -1;
	*nitems = *nmissing = 0;
	if (!it->want_mem)
		return 0;
	c.btf = btf__load_vmlinux_btf();
	if (!c.btf)
		return -errno;
	if (btf__find_by_name_kind(c.btf, "bpf_get_mem_cgroup", BTF_KIND_FUNC) < 0) {
		fprintf(stderr, "cgbench: BPF: this kernel has no memcg kfuncs (bpf_get_mem_cgroup): "
			"--controllers cpu only\n");
		err = -EOPNOTSUPP;
	}
	if (!err)
		err = for_each_key(dir, "memory.stat", add_stat_key, &c);
	if (!err && for_each_key(dir, "memory.events", add_event_key, &c) < 0)
		fprintf(stderr, "cgbench: BPF: %s/memory.events unreadable: no events\n", dir);
	btf__free(c.btf);
	*anon_i = c.anon_i;
	*nitems = (int)(it->nr_state + it->nr_vmev + it->nr_memev);
	*nmissing = c.missing;
	return err;
}

/* the agent program, its item lists set from @dir's memory.stat */
static int agent_load(struct bpfway *b, const char *dir, unsigned int ctrl, int ncg)
{
	int err;
	b->askel = agent__open();
	if (!b->askel)
		return -errno;
	err = items_load(&b->askel->rodata->items, dir, ctrl | CTRL_MEM, &b->anon_i, &b->nitems,
			 &b->nmissing);
	if (!err)
		err = bpf_map__set_max_entries(b->askel->maps.agent_stats, (__u32)ncg + 64);
	return err ? err : agent__load(b->askel);
}

/* a cgroup iterator of @prog over @dir: pre-order over its subtree, or @dir alone */
static struct bpf_link *iter_attach(struct bpf_program *prog, const char *dir, bool self_only)
{
	union bpf_iter_link_info li = {};
	struct bpf_link *link;
	int cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;
	if (cgfd < 0)
		return NULL;
	li.cgroup.cgroup_fd = cgfd;
	li.cgroup.order = self_only ? BPF_CGROUP_ITER_SELF_ONLY : BPF_CGROUP_ITER_DESCENDANTS_PRE;
	LIBBPF_OPTS(bpf_iter_attach_opts, ao, .link_info = &li, .link_info_len = sizeof(li));
	link = bpf_program__attach_iter(prog, &ao);
	err = errno;
	close(cgfd);
	errno = err;
	return link;
}

/*
 * Load the program and attach a cgroup iterator to @dir: pre-order over
 * its subtree, or @dir alone (@self_only).
 */
static int bpfway_open(struct bpfway *b, const char *dir, bool map, int ncg, unsigned int ctrl,
		       bool self_only)
{
	struct bpf_program *prog;
	int err;

	memset(b, 0, sizeof(*b));
	libbpf_set_print(bpf_warn);
	b->map = map;
	if (ctrl & CTRL_MEM) {
		if (!map)
			return -EINVAL;	/* the records do not fit the seq buffer */
		err = agent_load(b, dir, ctrl, ncg);
		if (err)
			return err;
		prog = b->askel->progs.dump_agent;
		b->map_fd = bpf_map__fd(b->askel->maps.agent_stats);
		b->vsz = sizeof(struct agent_rec);
	} else {
		b->skel = cgstat__open();
		if (!b->skel)
			return -errno;
		bpf_program__set_autoload(map ? b->skel->progs.dump_seq : b->skel->progs.dump_map, false);
		err = cgstat__load(b->skel);
		if (err)
			return err;
		prog = map ? b->skel->progs.dump_map : b->skel->progs.dump_seq;
		b->map_fd = bpf_map__fd(b->skel->maps.stats);
		b->vsz = sizeof(struct cgstat_rec);
	}
	b->link = iter_attach(prog, dir, self_only);
	if (!b->link)
		return -errno;
	b->maxn = 2 * (ncg + 1) + 64;
	b->keys = malloc(b->maxn * sizeof(*b->keys));
	b->vals = malloc(b->maxn * b->vsz);
	return b->keys && b->vals ? 0 : -ENOMEM;
}

/*
 * What a consumer does with an agent record: every value summed into *@sum;
 * the values counted.  @cpu: the program took cpu (its values are not
 * zeros); @anon_i: anon's index in state[] (-1: none)
 */
static uint64_t agent_rec_take(const struct agent_rec *r, bool cpu, int anon_i, uint64_t probe_id,
			       struct agent_vals *pv, uint64_t *sum)
{
	uint64_t s = r->cpu.usage_ns + r->cpu.user_ns + r->cpu.system_ns, n = 3;
	if (r->has_mem) {
		uint32_t ns = r->nr_state < AGENT_MAX_STATE ? r->nr_state : AGENT_MAX_STATE;
		uint32_t nv = r->nr_vmev < AGENT_MAX_VMEV ? r->nr_vmev : AGENT_MAX_VMEV;
		uint32_t ne = r->nr_memev < AGENT_MAX_MEMEV ? r->nr_memev : AGENT_MAX_MEMEV;
		for (uint32_t i = 0; i < ns; i++)
			s += r->state[i];
		for (uint32_t i = 0; i < nv; i++)
			s += r->vmev[i];
		for (uint32_t i = 0; i < ne; i++)
			s += r->memev[i];
		s += r->mem_current;
		n += ns + nv + ne + 1;
	}
	*sum += s;
	if (probe_id && r->cgroup_id == probe_id) {
		pv->usage_usec = r->cpu.usage_ns / 1000;
		pv->seen |= cpu ? CTRL_CPU : 0;
		if (r->has_mem) {
			pv->anon = anon_i >= 0 && anon_i < AGENT_MAX_STATE ? r->state[anon_i] : 0;
			pv->current = r->mem_current;
			pv->seen |= CTRL_MEM;
		}
	}
	return n;
}

/* one pass: run the iterator to EOF (one flush, one record per cgroup) */
static int64_t bpfway_pass(struct bpfway *b, struct pass_buf *buf, uint64_t *nvals,
			   uint64_t probe_id, struct agent_vals *pv)
{
	int64_t recs = 0;
	ssize_t n;
	int fd = bpf_iter_create(bpf_link__fd(b->link));
	if (fd < 0)
		return fd;
	while ((n = read(fd, buf->p, buf->cap)) > 0) {
		const struct cgstat_rec *r = (const void *)buf->p;
		for (size_t i = 0; i < n / sizeof(*r); i++)
			sink += r[i].cpu.usage_ns + r[i].cpu.user_ns + r[i].cpu.system_ns;
		recs += n / sizeof(*r);
		*nvals += 3 * (n / sizeof(*r));
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
		for (__u32 i = 0; i < count; i++) {
			if (b->askel) {
				uint64_t sum = 0;
				*nvals += agent_rec_take((const struct agent_rec *)b->vals + i,
							 b->askel->rodata->items.want_cpu, b->anon_i,
							 probe_id, pv, &sum);
				sink += sum;
				continue;
			}
			const struct cgstat_rec *r = (const struct cgstat_rec *)b->vals + i;
			sink += r->cpu.usage_ns + r->cpu.user_ns + r->cpu.system_ns;
			*nvals += 3;
			if (b->each)
				b->each(b->each_arg, r);
			if (probe_id && r->cgroup_id == probe_id) {
				pv->usage_usec = r->cpu.usage_ns / 1000;
				pv->seen |= CTRL_CPU;
			}
		}
		recs += count;
		if (err)
			return err == -ENOENT ? recs : err;
		in = out;
	}
}

/* ---- the shared BPF collector (bpf/shared.bpf.c) ------------------------ */
/*
 * One privileged process (cgbench collect) runs one iterator pass per
 * interval into a BPF_F_MMAPABLE array; every agent (telemetry --mode
 * bpfshared) maps it (PROT_READ; the map is frozen, see below) and takes
 * the records without a system call.  The layout and the seqcount
 * protocol: cgstat.h (struct shared_hdr).
 *
 * The agents get the map from a pin on a bpffs (--pin PATH), not from an
 * fd passed over a unix socket: agents are separate daemons that start,
 * restart and come and go on their own; a pin is found by path and
 * guarded by a file's permissions (BPF_OBJ_GET needs no capability, so an
 * admin can let an unprivileged agent open it); and the collector needs
 * no server loop: its CPU is its passes.
 *
 * Read-only sharing: a BPF map cannot be mmapped through a read-only fd
 * (BPF_F_RDONLY): mmap(MAP_SHARED) of a file not open for writing drops
 * VM_SHARED, which bpf_map_mmap() requires (EINVAL).  So every agent opens
 * the pin read-write, and the collector freezes the map (BPF_MAP_FREEZE)
 * before its first pass: a frozen map refuses writable mmaps and writes
 * from system calls, while the program still writes it.  For the same
 * reason the seqcount is the program's (shared.bpf.c), not bumped by the
 * collector's user space through a writable mapping of its own (which
 * would keep the map from being frozen).
 */
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int sleep_until(uint64_t t)
{
	struct timespec ts = { t / 1000000000ull, t % 1000000000ull };
	return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* the deadline after @next on a fixed grid; deadlines already past count in *@missed */
static uint64_t grid_next(uint64_t next, uint64_t period, uint64_t *missed)
{
	uint64_t now = mono_ns();
	next += period;
	while (next <= now) {
		next += period;
		(*missed)++;
	}
	return next;
}

struct collector {
	struct shared *skel;
	struct bpf_link *link;
	union {			/* slot 0: the header as the last pass left it (collector_pass) */
		struct shared_rec rec;
		struct shared_hdr hdr;
	} slot0;
	int map_fd, anon_i, nitems, nmissing, fail_errno;
	uint64_t passes, failed, truncated, missed, pass_ns_max, pass_ns_sum;
};
_Static_assert(sizeof(struct shared_hdr) <= sizeof(struct shared_rec), "the header fits slot 0");

/* load shared.bpf.c with its item lists and @o->slots slots, attached over @o->subtree */
static void collector_load(struct collector *c, const struct opts *o)
{
	int err;
	libbpf_set_print(bpf_warn);
	c->skel = shared__open();
	if (!c->skel)
		die("BPF collector: open: %s", strerror(errno));
	err = items_load(&c->skel->rodata->items, o->subtree, o->ctrl, &c->anon_i, &c->nitems,
			 &c->nmissing);
	if (err)
		die("BPF collector: the memory items of %s: %s", o->subtree, strerror(-err));
	err = bpf_map__set_max_entries(c->skel->maps.shared_recs, o->slots + 1);
	if (!err)
		err = shared__load(c->skel);
	if (err)
		die("BPF collector: load: %s%s", strerror(-err), err == -EPERM ?
		    " (loading BPF needs CAP_BPF and CAP_PERFMON: run it as root)" : "");
	c->link = iter_attach(c->skel->progs.collect, o->subtree, false);
	if (!c->link)
		die("BPF collector: a cgroup iterator on %s: %s", o->subtree, strerror(errno));
	c->map_fd = bpf_map__fd(c->skel->maps.shared_recs);
}

/* the header's constant part set, then the map frozen: no writes but the program's */
static void collector_freeze(struct collector *c, const struct opts *o)
{
	struct shared_hdr *h = &c->slot0.hdr;
	__u32 zero = 0;
	memset(&c->slot0, 0, sizeof(c->slot0));
	h->slots = o->slots;
	h->ctrl = o->ctrl & (CTRL_CPU | CTRL_MEM);
	h->anon_idx = c->anon_i;
	h->period_ns = o->period_ms * 1000000ull;
	h->collector_pid = (uint32_t)getpid();
	if (bpf_map_update_elem(c->map_fd, &zero, &c->slot0, BPF_ANY))
		die("BPF collector: the map's header: %s", strerror(errno));
	if (bpf_map_freeze(c->map_fd))
		die("BPF collector: freezing the map: %s", strerror(errno));
}

/* pin the map at @pin, which must be on a bpffs */
static void collector_pin(struct collector *c, const char *pin)
{
	char dir[4096];
	struct statfs sf;
	snprintf(dir, sizeof(dir), "%s", pin);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (statfs(slash ? (*dir ? dir : "/") : ".", &sf) || sf.f_type != BPF_FS_MAGIC)
		die("--pin %s: %s is not a bpffs (mount -t bpf bpf %s)", pin, slash ? dir : ".",
		    slash ? dir : ".");
	if (bpf_obj_pin(c->map_fd, pin)) {
		int err = errno;
		die("--pin %s: %s%s", pin, strerror(err),
		    err == EEXIST ? " (another collector's? remove it first)" : "");
	}
}

/*
 * One pass: the iterator read to its end (the program makes seq odd and
 * even around its records), then the header looked up for what it says
 * (a truncated pass is said on stderr once, and counted)
 */
static void collector_pass(struct collector *c)
{
	const struct shared_hdr *h = &c->slot0.hdr;
	uint64_t t0 = mono_ns();
	char buf[64];
	ssize_t n = 0;
	__u32 zero = 0;
	int fd = bpf_iter_create(bpf_link__fd(c->link));
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		;	/* the program writes no output: read(2) runs the pass, then 0 */
	if (fd < 0 || n < 0) {
		c->fail_errno = errno;
		c->failed++;
	}
	if (fd >= 0)
		close(fd);
	uint64_t d = mono_ns() - t0;
	c->pass_ns_sum += d;
	if (d > c->pass_ns_max)
		c->pass_ns_max = d;
	c->passes++;
	if (bpf_map_lookup_elem(c->map_fd, &zero, &c->slot0))
		die("BPF collector: the map's header: %s", strerror(errno));
	if ((h->flags & SHARED_TRUNCATED) && !c->truncated++)
		fprintf(stderr, "cgbench: BPF collector: the subtree has %" PRIu64 " cgroups, the map "
			"%u slots: passes flagged truncated (--slots)\n", (uint64_t)h->nr_visited,
			h->slots);
}

/*
 * cgbench collect --subtree DIR --pin PATH [--period-ms T] [--slots N]
 *                 [--controllers cpu[,memory]] [--seconds S]:
 * the shared collector: one pass per T ms on a fixed grid, until SIGTERM
 * (or S seconds, when given); the map is pinned after the first pass (an
 * agent that finds the pin finds a pass) and unpinned at the end.  Prints
 * its JSON at the end: its own CPU over the passes' loop, its passes.
 */
static int run_collect(const struct opts *o)
{
	struct collector c = {};
	if (!o->subtree || !o->pin)
		die("collect needs --subtree DIR and --pin PATH (on a bpffs)");
	if (o->ctrl & CTRL_IO)
		die("collect: the records hold cpu and memory (there are no io kfuncs)");
	if (!o->slots || o->slots > 1u << 22 || !o->period_ms)
		die("collect: --slots 1..%u and --period-ms >= 1", 1u << 22);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	collector_load(&c, o);
	collector_freeze(&c, o);
	collector_pass(&c);
	collector_pin(&c, o->pin);
	uint64_t period = o->period_ms * 1000000ull, w0 = mono_ns();
	uint64_t next = grid_next(w0, period, &c.missed);
	uint64_t end = o->seconds_set ? w0 + (uint64_t)(o->seconds * 1e9) : UINT64_MAX;
	uint64_t c0 = tcpu_ns(), u0 = rusage_us(1), s0 = rusage_us(0), p0 = c.passes;
	while (!quit && next <= end) {
		while (sleep_until(next) == EINTR && !quit)
			;
		if (quit)
			break;
		collector_pass(&c);
		next = grid_next(next, period, &c.missed);
	}
	uint64_t cpu = tcpu_ns() - c0, wall = mono_ns() - w0;
	unlink(o->pin);
	printf("{\"collector\": \"bpfshared\", \"subtree\": \"%s\", \"controllers\": \"%s\", "
	       "\"period_ms\": %" PRIu64 ", \"slots\": %u, \"passes\": %" PRIu64 ", \"missed\": %" PRIu64
	       ", \"failed\": %" PRIu64 ", \"fail_errno\": %d, \"truncated\": %" PRIu64
	       ", \"records\": %" PRIu64 ", \"visited\": %" PRIu64 ", \"pass_us_max\": %.1f"
	       ", \"pass_us_mean\": %.1f, \"cpu_ns\": %" PRIu64 ", \"utime_us\": %" PRIu64
	       ", \"stime_us\": %" PRIu64 ", \"wall_ns\": %" PRIu64 ", \"loop_passes\": %" PRIu64
	       ", \"bpf_items\": %d, \"bpf_missing\": %d}\n",
	       o->subtree, o->ctrl_name, o->period_ms, o->slots, c.passes, c.missed, c.failed,
	       c.fail_errno, c.truncated, (uint64_t)c.slot0.hdr.nr_records,
	       (uint64_t)c.slot0.hdr.nr_visited, c.pass_ns_max / 1e3,
	       c.pass_ns_sum / 1e3 / c.passes, cpu, rusage_us(1) - u0, rusage_us(0) - s0, wall,
	       c.passes - p0, c.nitems, c.nmissing);
	return c.failed || c.truncated ? 1 : 0;
}

/* an agent's read-only view of the collector's map */
struct shared_view {
	const struct shared_hdr *hdr;
	const struct shared_rec *recs;	/* slot 1: the pass's first record */
	uint32_t nslots;
	uint64_t last_seq;	/* the last pass taken (even) */
	uint64_t dur_ns;	/* the collector's last pass took this long */
	uint64_t pass_ns;	/* the last pass taken: its flush's time */
	uint64_t retries;	/* reads that met a pass under way: taken again */
	uint64_t dwell_ns;	/* sharedcheck --dwell-us: hold each read open up to twice this */
};

/*
 * The map pinned at @pin, mapped PROT_READ (the mapping keeps it); the fd
 * is read-write, as mmap needs (the collector froze the map); -errno
 */
static int shared_view_open(struct shared_view *v, const char *pin)
{
	struct bpf_map_info info = {};
	__u32 il = sizeof(info);
	int fd = bpf_obj_get(pin), err = 0;
	void *p = MAP_FAILED;
	if (fd < 0)
		return -errno;
	if (bpf_map_get_info_by_fd(fd, &info, &il))
		err = -errno;
	else if (info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE) ||
		 info.value_size != sizeof(struct shared_rec) || info.max_entries < 2)
		err = -EPROTO;	/* not the collector's map, or another build's */
	else if ((p = mmap(NULL, (size_t)info.max_entries * sizeof(struct shared_rec), PROT_READ,
			   MAP_SHARED, fd, 0)) == MAP_FAILED)
		err = -errno;
	close(fd);
	if (err)
		return err;
	memset(v, 0, sizeof(*v));
	v->hdr = p;
	v->recs = (const struct shared_rec *)p + 1;
	v->nslots = info.max_entries - 1;
	return 0;
}

/*
 * Sleep until the collector has published a pass newer than the last one
 * taken (or @until: -ETIMEDOUT; or the window's end: -EINTR).  No busy
 * wait: the collector runs on a fixed grid, so the next pass ends about
 * one period after the last one started plus the last one's length; wake
 * then (a little later), and nap while the pass is not there yet: 1/100 of
 * a period (1 ms at least), doubling up to a period (a collector that
 * stopped costs an agent a wake a period).  Each wake counts in *@wakes.
 */
static int shared_wait(struct shared_view *v, uint64_t *wakes, uint64_t until)
{
	const struct shared_hdr *h = v->hdr;
	for (unsigned int late = 0;; late += late < 7) {
		uint64_t s = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (!(s & 1) && s != v->last_seq)
			return 0;
		if (shm->stop)
			return -EINTR;
		uint64_t now = mono_ns(), period = __atomic_load_n(&h->period_ns, __ATOMIC_RELAXED);
		uint64_t start = __atomic_load_n(&h->pass_start_ns, __ATOMIC_RELAXED);
		uint64_t nap = (period / 100 > 1000000 ? period / 100 : 1000000) << late;
		uint64_t due = start + ((s & 1) ? 0 : period) + v->dur_ns + v->dur_ns / 8 + 100000;
		if (due <= now)
			due = now + (nap < period ? nap : period);
		if (due > until)
			due = until;
		if (now >= until)
			return -ETIMEDOUT;
		sleep_until(due);	/* EINTR: the window's end, seen above */
		(*wakes)++;
	}
}

/*
 * The latest pass's records, as an agent consumes them: every value
 * summed (into the sink once the pass is known whole) and counted in
 * *@nvals; @probe_id's values to @pv; each record's id to @ids[i] when
 * @ids.  Returns the records, or -EAGAIN (a pass under way, or one began
 * during the read: wait and read again), -ENOSPC (the subtree has more
 * cgroups than the map's slots), -EPROTO (a whole-looking pass with a
 * record of another pass: the protocol broken).  A pass that fails is
 * still marked as taken.  The records are plain loads between the acquire
 * load of seq and the acquire fence before its second load: the seqlock
 * reader's pattern (the fence keeps them before that load).
 */
static int64_t shared_pass(struct shared_view *v, uint64_t *nvals, uint64_t probe_id,
			   struct agent_vals *pv, uint64_t *ids)
{
	const struct shared_hdr *h = v->hdr;
	struct agent_vals lpv = *pv;
	uint64_t s1 = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE), sum = 0, n = 0, alien = 0;
	if (s1 & 1)
		return -EAGAIN;
	uint64_t nr = h->nr_records, visited = h->nr_visited, pass_ns = h->pass_ns;
	uint64_t start = h->pass_start_ns, end = h->pass_end_ns;
	uint32_t flags = h->flags, ctrl = h->ctrl;
	int anon_i = h->anon_idx;
	if (v->dwell_ns)
		sleep_ns((uint64_t)random() % (2 * v->dwell_ns));
	if (nr > v->nslots)
		nr = v->nslots;	/* (only a torn read can see more) */
	for (uint64_t i = 0; i < nr; i++) {
		const struct shared_rec *r = &v->recs[i];
		alien += r->pass_seq != s1 - 1;
		n += agent_rec_take(&r->rec, ctrl & CTRL_CPU, anon_i, probe_id, &lpv, &sum);
		if (ids)
			ids[i] = r->rec.cgroup_id;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s1) {
		v->retries++;
		return -EAGAIN;
	}
	v->last_seq = s1;
	v->dur_ns = end > start ? end - start : 0;
	if ((flags & SHARED_TRUNCATED) || visited != nr)
		return -ENOSPC;
	if (alien)
		return -EPROTO;
	v->pass_ns = pass_ns;
	sink += sum;
	*nvals += n;
	*pv = lpv;
	return (int64_t)nr;
}

/* ---- telemetry: R readers, each takes M cgroups once per cycle ---------- */
#define TEXT_CAP 65536

struct tele {
	const struct opts *o;
	/* classic, stream, stream1 (and the BPF ways' BPF_TEXT rows): each
	 * row's files (tfiles[c], its classic or stream list), one fd per
	 * cgroup; NULL where not read */
	const struct text_file *tfiles[NCTRL];
	int *fds[NCTRL][CTRL_FILES];
	bool texts;		/* some are read */
	struct snap sub[NCTRL];	/* subtree, changes: one per row read */
	uint64_t recs[NCTRL], recs_max[NCTRL];	/* subtree, changes: CGROUP records per row */
	struct bpfway bpf;	/* bpf, bpfmap */
	struct shared_view shared;	/* bpfshared */
	struct pass_buf buf;
	char *text;		/* TEXT_CAP bytes for a text file */
	uint64_t *last;		/* stream: the publication_seq each fd had */
	uint64_t last_seq;	/* subtree */
	uint64_t samples, errors, cycles, missed, dups, gaps, wakes, late_max, values;
	int fail_errno;
	int probe;		/* the cgroup (index) whose values go to .pv; -1: none */
	uint64_t probe_id;	/* its id, for the ways that see ids */
	struct agent_vals pv;
};

/*
 * @k bytes of a text file (t->text) in format @fmt, parsed and consumed:
 * its checked values to @v, a stream text's publication to *@seq; false
 * on an error
 */
static bool text_parse(struct tele *t, enum text_fmt fmt, ssize_t k, struct agent_vals *v,
		       uint64_t *seq)
{
	const char *p = t->text;
	struct stat_vals sv;
	switch (fmt) {
	case TXT_CPU:
		if (k <= 0 || parse_stat(t->text, k, &sv))
			return false;
		sink += sv.usage + sv.user + sv.system;
		t->values += sv.nkeys;
		v->usage_usec = sv.usage;
		*seq = sv.seq;
		return true;
	case TXT_MEMSTAT:
		return k > 0 && !parse_kv(t->text, k, "anon", &v->anon, seq, &t->values);
	case TXT_KV:
		return k > 0 && !parse_kv(t->text, k, NULL, NULL, seq, &t->values);
	case TXT_ONE:
		if (k <= 0)
			return false;
		v->current = parse_u64(&p, t->text + k);
		sink += v->current;
		t->values++;
		return true;
	case TXT_IO:	/* empty for a cgroup that did no I/O */
		return k >= 0 && !parse_io(t->text, k, &v->wbytes, seq, &t->values);
	case TXT_PSI:
		return k > 0 && !parse_psi(t->text, k, &v->psi_total, seq, &t->values);
	}
	return false;
}

/*
 * Cgroup @i's text files of every row the way reads so, parsed and
 * consumed; the pacing row's publication (its first file's) to *@seq;
 * false on an error (counted)
 */
static bool cgroup_texts(struct tele *t, int i, uint64_t *seq)
{
	struct agent_vals v = {};
	bool ok = true;
	for (size_t c = 0; c < NCTRL; c++) {
		for (int f = 0; f < CTRL_FILES; f++) {
			uint64_t s = 0;
			if (!t->fds[c][f])
				continue;
			ssize_t k = pread(t->fds[c][f][i], t->text, TEXT_CAP, 0);
			if (!text_parse(t, t->tfiles[c][f].fmt, k, &v, &s))
				ok = false;
			else if (c == t->o->pace && !f)
				*seq = s;
			v.seen |= agent_ctrls[c].bit;
		}
	}
	if (!ok)
		t->errors++;
	if (i == t->probe)
		pv_merge(&t->pv, &v);
	return ok;
}

/* the BPF ways' BPF_TEXT rows (io.stat) per cgroup from user space, as
 * below does; false: the window ended */
static bool bpf_texts(struct tele *t)
{
	int i;
	for (i = 0; i < t->o->ncg && !shm->stop; i++)
		cgroup_texts(t, i, &(uint64_t){ 0 });
	return i == t->o->ncg;
}

/* one cycle of a grid-paced way; false when the window ended inside it */
static bool grid_pass(struct tele *t)
{
	const struct opts *o = t->o;
	if (o->way == WAY_CLASSIC) {
		int i;
		/* the window's end cuts a cycle short: slow VMs stay on time */
		for (i = 0; i < o->ncg && !shm->stop; i++) {
			t->samples++;
			cgroup_texts(t, i, &(uint64_t){ 0 });
		}
		return i == o->ncg;
	}
	int64_t n = bpfway_pass(&t->bpf, &t->buf, &t->values, t->probe_id, &t->pv);
	if (n < 0) {
		t->errors++;
		t->fail_errno = (int)-n;
		return true;
	}
	t->samples += n;
	return t->texts ? bpf_texts(t) : true;
}

/*
 * The bpfshared way's cycle: wait for the collector's next pass, take its
 * records (again, when a pass began during the read), then io.stat per
 * cgroup when io is wanted.  late_max: how long after the pass's end the
 * agent had its records.  False when the window ended inside it.
 */
static bool shared_cycle(struct tele *t)
{
	struct shared_view *v = &t->shared;
	uint64_t prev = v->last_seq;
	int64_t n;
	do {
		if (shared_wait(v, &t->wakes, UINT64_MAX))
			return false;
		n = shared_pass(v, &t->values, t->probe_id, &t->pv, NULL);
	} while (n == -EAGAIN);
	uint64_t lag = mono_ns() - v->hdr->pass_end_ns;
	if (lag > t->late_max && lag < 1000000000000ull)
		t->late_max = lag;
	if (prev && v->last_seq > prev + 2)
		t->gaps += (v->last_seq - prev) / 2 - 1;
	if (n < 0) {
		t->errors++;
		t->fail_errno = (int)-n;
		return true;
	}
	t->samples += (uint64_t)n;
	return t->texts ? bpf_texts(t) : true;
}

/*
 * The changes way's read of one controller: a change snapshot (a full one
 * while the state is not built yet); when the kernel says it dropped
 * removals this file had not read, a full snapshot at once.
 */
static int64_t changes_pass(struct tele *t, struct snap *sn, uint64_t *seq)
{
	bool lost, full = sn->full_next;
	int64_t k = snap_pass(sn, &t->buf, !full, seq, &lost, &t->values, t->probe_id, &t->pv);
	if (k < 0)
		return k;
	sn->full_next = false;
	sn->fulls += full;
	if (lost && !full) {
		sn->fulls++;
		k = snap_pass(sn, &t->buf, false, seq, &lost, &t->values, t->probe_id, &t->pv);
	}
	return k;
}

/*
 * The subtree and changes ways: one snapshot of each controller's subtree
 * file; samples: the pacing controller's snapshot's records (subtree:
 * every cgroup; changes: the changed ones); each controller's in
 * recs[] (and the most in one cycle, recs_max[])
 */
static void subtree_cycle(struct tele *t)
{
	const struct opts *o = t->o;
	bool changes = o->way == WAY_CHANGES, lost;
	uint64_t seq = 0, other = 0, paced = 0;
	int64_t k = 0;
	for (size_t c = 0; c < NCTRL && k >= 0; c++) {
		if (!(o->ctrl & agent_ctrls[c].bit))
			continue;
		uint64_t *s = c == o->pace ? &seq : &other;
		k = changes ? changes_pass(t, &t->sub[c], s) :
			snap_pass(&t->sub[c], &t->buf, false, s, &lost, &t->values, t->probe_id, &t->pv);
		if (k < 0)
			break;
		t->recs[c] += (uint64_t)k;
		if ((uint64_t)k > t->recs_max[c])
			t->recs_max[c] = (uint64_t)k;
		if (c == o->pace)
			paced = (uint64_t)k;
	}
	if (k < 0) {
		t->errors++;
		t->fail_errno = (int)-k;
		return;
	}
	t->samples += paced;
	t->cycles++;
	if (seq == t->last_seq)
		t->dups++;
	else if (t->last_seq && seq > t->last_seq + 1)
		t->gaps += seq - t->last_seq - 1;
	t->last_seq = seq;
}

/* the stream ways: cgroup @i's stream file(s); its pacing file's publication against the last */
static void stream_one(struct tele *t, int i)
{
	uint64_t seq = 0;
	t->samples++;
	if (!cgroup_texts(t, i, &seq))
		return;
	if (seq == t->last[i])
		t->dups++;
	else if (t->last[i] && seq > t->last[i] + 1)
		t->gaps += seq - t->last[i] - 1;
	t->last[i] = seq;
}

/* a telemetry reader of @o before tele_open(): @probe the cgroup (index,
 * -1: none) and @probe_id the id whose values go to .pv */
static void tele_init(struct tele *t, const struct opts *o, int probe, uint64_t probe_id)
{
	memset(t, 0, sizeof(*t));
	t->o = o;
	t->probe = probe;
	t->probe_id = probe_id;
	for (size_t c = 0; c < NCTRL; c++)
		t->sub[c].fd = -1;
}

/* one wake of a polled way */
static void stream_wake(struct tele *t, struct epoll_event *evs, int n)
{
	const struct opts *o = t->o;
	if (o->way == WAY_SUBTREE || o->way == WAY_CHANGES) {
		subtree_cycle(t);
		return;
	}
	if (o->way == WAY_STREAM1)
		n = o->ncg;	/* the paced fd woke: read all */
	for (int j = 0; j < n && !shm->stop; j++)
		stream_one(t, o->way == WAY_STREAM1 ? j : (int)evs[j].data.u32);
}

/* bpfshared: the collector's map, what it holds checked against --controllers */
static int tele_shared_open(struct tele *t)
{
	const struct opts *o = t->o;
	if (!o->pin)
		die("--mode bpfshared needs --pin PATH (the collector's, cgbench collect)");
	int err = -shared_view_open(&t->shared, o->pin);
	if (err) {
		fprintf(stderr, "cgbench: the shared collector's map %s: %s%s\n", o->pin, strerror(err),
			err == EPROTO ? " (not a cgbench collect map of this build)" : "");
		return err;
	}
	unsigned int want = o->ctrl & (CTRL_CPU | CTRL_MEM);
	if ((t->shared.hdr->ctrl & want) != want)
		die("--mode bpfshared --controllers %s: the collector's records hold %s", o->ctrl_name,
		    t->shared.hdr->ctrl & CTRL_MEM ? "cpu,memory" : "cpu only");
	/* mark the pass there now as seen: the first cycle waits for the next */
	uint64_t s = __atomic_load_n(&t->shared.hdr->seq, __ATOMIC_ACQUIRE);
	t->shared.last_seq = s & 1 ? s - 1 : s;
	uint64_t a = t->shared.hdr->pass_start_ns, b = t->shared.hdr->pass_end_ns;
	t->shared.dur_ns = b > a ? b - a : 0;
	return 0;
}

/* whether cgroup @cg shows @file (a read of it works) */
static bool text_shown(const char *cg, const char *file)
{
	char path[4096], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", cg, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && pread(fd, buf, sizeof(buf), 0) >= 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The text files the way reads of each cgroup: every row's classic or
 * stream files; the BPF ways, those of the rows their programs do not
 * read (BPF_TEXT).  0 or errno
 */
static int texts_open(struct tele *t)
{
	const struct opts *o = t->o;
	bool bpf = o->way == WAY_BPF || o->way == WAY_BPFMAP || o->way == WAY_BPFSHARED;
	int err = 0;
	if (o->way == WAY_SUBTREE || o->way == WAY_CHANGES || o->way == WAY_IDLE)
		return 0;
	for (size_t c = 0; c < NCTRL; c++) {
		const struct agent_ctrl *row = &agent_ctrls[c];
		if (!(o->ctrl & row->bit) || (bpf && row->bpf != BPF_TEXT))
			continue;
		t->tfiles[c] = o->stream ? row->stream : row->classic;
		for (int f = 0; f < CTRL_FILES && t->tfiles[c][f].name; f++) {
			const char *name = file_name(t->tfiles[c][f].name);
			if (t->tfiles[c][f].optional && !text_shown(o->cg[0], name))
				continue;
			if (!(t->fds[c][f] = open_named(o, name, &err)))
				return err;
			t->texts = true;
		}
	}
	return 0;
}

/* the subtree and changes ways: each row's subtree file; what is there now marked as seen */
static int subtrees_open(struct tele *t, int ep)
{
	const struct opts *o = t->o;
	bool changes = o->way == WAY_CHANGES, lost;
	int err;
	for (size_t c = 0; c < NCTRL; c++)
		if ((o->ctrl & agent_ctrls[c].bit) &&
		    (err = -snap_open(&t->sub[c], o->subtree,
				      cgstream_controller_file(agent_ctrls[c].bit, CGSTREAM_FILE_SUBTREE),
				      changes)))
			return err;
	struct epoll_event e = { .events = EPOLLIN };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, t->sub[o->pace].fd, &e))
		die("epoll_ctl: %s", strerror(errno));
	/*
	 * Mark what is there now as seen; the changes way's state is
	 * built here, from a full snapshot of each controller, as an
	 * agent does once at its start (not counted in the window)
	 */
	for (size_t c = 0; c < NCTRL; c++) {
		uint64_t seq = 0, nv = 0;
		struct agent_vals pv = {};
		if (!(o->ctrl & agent_ctrls[c].bit) || (c != o->pace && !changes))
			continue;
		int64_t k = snap_pass(&t->sub[c], &t->buf, false, &seq, &lost, &nv, 0, &pv);
		/* ENODATA: nothing published yet; the first cycle reads it in full */
		if (k < 0 && changes && k != -ENODATA) {
			fprintf(stderr, "cgbench: %s/%s: %s\n", o->subtree,
				cgstream_controller_file(agent_ctrls[c].bit, CGSTREAM_FILE_SUBTREE),
				strerror((int)-k));
			return (int)-k;
		}
		t->sub[c].full_next = k < 0;
		if (c == o->pace && k >= 0)
			t->last_seq = seq;
	}
	return 0;
}

static int tele_open(struct tele *t, int ep)
{
	const struct opts *o = t->o;
	int err = 0;
	t->buf.cap = 4096;
	if (o->way == WAY_SUBTREE || o->way == WAY_CHANGES || o->way == WAY_BPF ||
	    o->way == WAY_BPFMAP) {
		if (!o->subtree)
			die("--mode %s needs --subtree DIR", o->mode);
		/*
		 * The whole subtree in one read, with room for growth: a
		 * cgroup's record in the largest of the rows read (a memory
		 * record holds memory.stat's 60-70 values, a cpu one
		 * cpu.stat's 6-11; format 2's CGROUP record: a header and
		 * the values)
		 */
		size_t per = 0;
		for (size_t c = 0; c < NCTRL; c++)
			if ((o->ctrl & agent_ctrls[c].bit) && agent_ctrls[c].rec_room > per)
				per = agent_ctrls[c].rec_room;
		t->buf.cap = (size_t)(o->ncg + 1) * per + 65536;
	}
	t->buf.p = malloc(t->buf.cap);
	t->text = malloc(TEXT_CAP);
	if (!t->buf.p || !t->text)
		return ENOMEM;
	if ((err = texts_open(t)))
		return err;
	switch (o->way) {
	case WAY_CLASSIC:
		return 0;
	case WAY_STREAM:
	case WAY_STREAM1:
		break;
	case WAY_SUBTREE:
	case WAY_CHANGES:
		return subtrees_open(t, ep);
	case WAY_BPF:
	case WAY_BPFMAP:
		err = -bpfway_open(&t->bpf, o->subtree, o->way == WAY_BPFMAP, o->ncg, o->ctrl, false);
		if (err)
			fprintf(stderr, "cgbench: BPF iterator on %s: %s\n", o->subtree, strerror(err));
		return err;
	case WAY_BPFSHARED:
		return tele_shared_open(t);
	case WAY_IDLE:		/* opens nothing: reader_idle() */
		return 0;
	}
	t->last = calloc(o->ncg, sizeof(uint64_t));
	for (int i = 0; i < o->ncg; i++) {
		int fd = t->fds[o->pace][0][i];
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };
		/*
		 * The sequence is global: a publication makes every stream
		 * of the controller readable at once, so one polled fd
		 * paces them all.
		 */
		if ((o->way == WAY_STREAM || i == 0) && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e))
			die("epoll_ctl: %s", strerror(errno));
		/* mark what is there now as seen */
		ssize_t k = pread(fd, t->buf.p, 4096, 0);
		if (k > 0)
			t->last[i] = text_pub_seq(t->buf.p, (size_t)k);
	}
	return 0;
}

/*
 * --mode idle: readers that read nothing, over the same window: what the
 * kworkers do anyway (the load's own I/O, vmstat, the 9p filesystem) is
 * the run's kworker_ns, the baseline the other ways' kworker time is
 * compared with.  A 50 ms nap (not pause(): the stop signal could come
 * between the check and the sleep) costs microseconds.
 */
static void reader_idle(struct reader_res *r)
{
	wait_start();
	uint64_t c0 = tcpu_ns(), u0 = rusage_us(1), s0 = rusage_us(0), w0 = mono_ns();
	while (!shm->stop)
		usleep(50000);
	r->wall_ns = mono_ns() - w0;
	r->cpu_ns = tcpu_ns() - c0;
	r->utime_us = rusage_us(1) - u0;
	r->stime_us = rusage_us(0) - s0;
}

/* the grid-paced ways: sleep to a fixed grid, take everything, repeat */
static void grid_loop(struct tele *t)
{
	uint64_t period = t->o->period_ms * 1000000ull, next = shm->t_start + period;
	for (;;) {
		while (sleep_until(next) == EINTR)
			;
		if (shm->stop)
			break;
		uint64_t woke = mono_ns();
		if (woke - next > t->late_max)
			t->late_max = woke - next;
		t->wakes++;
		if (!grid_pass(t))
			break;
		t->cycles++;
		next = grid_next(next, period, &t->missed);	/* deadlines we slept through */
	}
}

/* the polled ways: a wake per flush */
static void poll_loop(struct tele *t, int ep, struct epoll_event *evs)
{
	const struct opts *o = t->o;
	while (!shm->stop) {
		/* no timeout: a wake-up costs CPU; the parent's SIGUSR1 ends the wait */
		int n = epoll_wait(ep, evs, o->ncg + 1, -1);
		if (n <= 0)
			continue;
		t->wakes++;
		stream_wake(t, evs, n);
	}
	bool whole = o->way == WAY_SUBTREE || o->way == WAY_CHANGES;	/* a cycle a snapshot */
	if (!whole)
		t->cycles = o->ncg ? t->samples / o->ncg : 0;
	t->missed = whole ? t->gaps : o->ncg ? t->gaps / o->ncg : 0;
}

/* bpfshared: a cycle per pass of the collector */
static void shared_loop(struct tele *t)
{
	while (!shm->stop && shared_cycle(t))
		t->cycles++;
	t->missed = t->gaps;
}

static void reader_telemetry(const struct opts *o, int id)
{
	struct reader_res *r = &shm->r[id];
	if (o->way == WAY_IDLE) {
		reader_idle(r);
		return;
	}
	struct tele t;
	tele_init(&t, o, -1, 0);
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
	if (o->way == WAY_CLASSIC || o->way == WAY_BPF || o->way == WAY_BPFMAP)
		grid_loop(&t);
	else if (o->way == WAY_BPFSHARED)
		shared_loop(&t);
	else
		poll_loop(&t, ep, evs);
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
	r->values = t.values;
	r->bpf_items = t.bpf.nitems;
	r->bpf_missing = t.bpf.nmissing;
	r->retries = t.shared.retries;
	if (t.sub[o->pace].tab)
		r->held = t.sub[o->pace].tab->live;
	for (size_t c = 0; c < NCTRL; c++) {
		r->fulls += t.sub[c].fulls;
		r->recs[c] = t.recs[c];
		r->recs_max[c] = t.recs_max[c];
	}
}

static void json_str(const char *k, const char *v, int comma)
{
	printf("\"%s\": \"%s\"%s", k, v, comma ? ", " : "");
}

/* the shared collector around a bpfshared window: its process's CPU and its passes */
struct collector_snap { bool ok; uint32_t pid, flags; uint64_t cpu_ns, seq; };

static void collector_snap(const char *pin, struct collector_snap *c)
{
	struct shared_view v;
	struct timespec ts;
	clockid_t clk;
	c->ok = false;
	if (shared_view_open(&v, pin))
		return;
	c->pid = v.hdr->collector_pid;
	c->seq = __atomic_load_n(&v.hdr->seq, __ATOMIC_ACQUIRE);
	c->flags = v.hdr->flags;
	/* the process's CPU clock (all its threads), as the kworkers' */
	if (!clock_getcpuclockid((pid_t)c->pid, &clk) && !clock_gettime(clk, &ts)) {
		c->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		c->ok = true;
	}
	munmap((void *)v.hdr, (size_t)(v.nslots + 1) * sizeof(struct shared_rec));
}

/* "collector": its CPU over the window, counted once whatever the readers; passes completed */
static void collector_json(const struct collector_snap *a, const struct collector_snap *b)
{
	if (!a->ok || !b->ok || a->pid != b->pid) {
		printf("\"collector\": null, ");
		return;
	}
	printf("\"collector\": {\"pid\": %u, \"cpu_ns\": %" PRIu64 ", \"passes\": %" PRIu64
	       ", \"flags\": %u}, ", b->pid, b->cpu_ns - a->cpu_ns, b->seq / 2 - a->seq / 2, b->flags);
}

/* subtree, changes: each controller's records in the window, and the most in one cycle */
static void recs_json(const struct opts *o, const struct reader_res *r)
{
	for (int max = 0; max < 2; max++) {
		printf(", \"%s\": {", max ? "records_max" : "records");
		for (size_t c = 0, n = 0; c < NCTRL; c++)
			if (o->ctrl & agent_ctrls[c].bit)
				printf("%s\"%s\": %" PRIu64, n++ ? ", " : "", ctrl_name(c),
				       max ? r->recs_max[c] : r->recs[c]);
		printf("}");
	}
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
	bool flusher = o->way == WAY_STREAM || o->way == WAY_STREAM1 || o->way == WAY_SUBTREE ||
		       o->way == WAY_CHANGES;
	int seq_ok = flusher && !root_seq(o->root, root_stream_file(o->pace), &seq0, &fm0);
	bool shared = o->way == WAY_BPFSHARED;
	struct collector_snap cs0 = {}, cs1 = {};
	if (shared)
		collector_snap(o->pin, &cs0);
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
	if (shared)
		collector_snap(o->pin, &cs1);
	if (seq_ok)
		seq_ok = !root_seq(o->root, root_stream_file(o->pace), &seq1, &fm1);
	int lost;
	uint64_t kw = kw_delta(&k0, &k1, &lost);

	printf("{");
	json_str("mode", o->mode, 1);
	json_str("controllers", o->ctrl_name, 1);
	printf("\"readers\": %d, \"cgroups\": %d, \"seconds\": %.3f, \"period_ms\": %" PRIu64
	       ", \"max_samples\": %" PRIu64 ", \"open_errno\": %d, ",
	       o->readers, o->ncg, o->seconds, o->period_ms, o->max_samples, open_errno);
	/* the window on CLOCK_MONOTONIC: a trace on the mono clock can be cut to it */
	printf("\"window_start_ns\": %" PRIu64 ", ", w0);
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
	if (shared)
		collector_json(&cs0, &cs1);
	printf("\"per_reader\": [");
	for (int i = 0; i < o->readers; i++) {
		struct reader_res *r = &shm->r[i];
		printf("%s{\"samples\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 ", \"utime_us\": %" PRIu64
		       ", \"stime_us\": %" PRIu64 ", \"wall_ns\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"cycles\": %" PRIu64 ", \"missed\": %" PRIu64 ", \"gaps\": %" PRIu64
		       ", \"dups\": %" PRIu64 ", \"wakes\": %" PRIu64 ", \"late_ns_max\": %" PRIu64
		       ", \"fail_errno\": %d, \"values\": %" PRIu64 ", \"bpf_items\": %d"
		       ", \"bpf_missing\": %d, \"retries\": %" PRIu64 ", \"held\": %" PRIu64
		       ", \"full_snapshots\": %" PRIu64,
		       i ? ", " : "", r->samples, r->cpu_ns, r->utime_us, r->stime_us, r->wall_ns,
		       r->errors, r->cycles, r->missed, r->gaps, r->dups, r->wakes, r->late_ns_max,
		       r->fail_errno, r->values, r->bpf_items, r->bpf_missing, r->retries, r->held,
		       r->fulls);
		if (o->way == WAY_SUBTREE || o->way == WAY_CHANGES)
			recs_json(o, r);
		printf("}");
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

/* busy until @ns have passed on clock @c (CLOCK_MONOTONIC: wall time; a CPU
 * clock: that much CPU used, however long preemption makes it take) */
static void spin_on(clockid_t c, uint64_t ns)
{
	uint64_t end = clk_ns(c) + ns;
	volatile uint64_t x = 1;
	while (clk_ns(c) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
}

static void spin_ns(uint64_t ns)
{
	spin_on(CLOCK_MONOTONIC, ns);
}

/* O_DIRECT writes of @kb KiB to block device @dev, each at the next offset */
struct dio { int fd; char *buf; size_t len; off_t size, pos; };

static void dio_open(struct dio *d, const char *dev, int kb)
{
	d->len = (size_t)kb * 1024;
	d->fd = open(dev, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (d->fd < 0)
		die("%s: %s", dev, strerror(errno));
	d->size = lseek(d->fd, 0, SEEK_END);
	if (d->size < (off_t)d->len || posix_memalign((void **)&d->buf, 4096, d->len))
		die("%s: smaller than %d KiB", dev, kb);
	memset(d->buf, 0x5a, d->len);
	d->pos = 0;
}

static void dio_write(struct dio *d)
{
	if (d->pos + (off_t)d->len > d->size)
		d->pos = 0;
	if (pwrite(d->fd, d->buf, d->len, d->pos) != (ssize_t)d->len)
		die("O_DIRECT write: %s", strerror(errno));
	d->pos += d->len;
}

static int run_churn(const struct opts *o)
{
	signal(SIGTERM, on_term);
	size_t len = (size_t)o->mem_kb * 1024;
	uint64_t next = mono_ns(), next_io = next;
	uint64_t io_period = (o->io_period_us ? o->io_period_us : o->period_us) * 1000;
	struct dio d;
	if (o->io_dev)
		dio_open(&d, o->io_dev, o->io_kb);
	if (o->hold_kb) {	/* anon memory held (charged) for the whole run */
		size_t hl = (size_t)o->hold_kb * 1024;
		char *h = mmap(NULL, hl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h == MAP_FAILED)
			die("mmap %d KiB: %s", o->hold_kb, strerror(errno));
		for (size_t i = 0; i < hl; i += 4096)
			h[i] = 1;
	}
	while (!quit) {
		spin_ns(o->work_us * 1000);
		if (o->io_dev && mono_ns() >= next_io) {
			dio_write(&d);
			next_io += io_period;
		}
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
		if (next > now) {
			/* SIGTERM ends the sleep: a holder that naps for long stops at once */
			while (sleep_until(next) == EINTR && !quit)
				;
		} else {
			next = now;
		}
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
	int seq_ok = !root_seq(o->root, stream_file(), &seq0, &fm0);
	kw_snap(&k0);
	shm->start = 1;
	uint64_t w0 = mono_ns();
	sleep_ns((uint64_t)(o->seconds * 1e9));
	uint64_t hops = 0;
	for (int c = 0; c < ncpu; c++)
		hops += shm->work_iters[c];
	uint64_t wall = mono_ns() - w0;
	kw_snap(&k1);
	seq_ok = seq_ok && !root_seq(o->root, stream_file(), &seq1, &fm1);
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

/* ---- change: exactly the listed cgroups change, every period ------------- */
/*
 * cgbench change --list FILE --period-us P --work-us W --mem-kb K
 *                [--io-dev DEV --io-kb 4] [--stall-us S]   (until SIGTERM)
 * The agent scenario's change share: the listed cgroups (the share of the
 * tree that is to change) change every period, in cpu, memory and io (and
 * with --stall-us in pressure), and nothing else of the tree does.  One
 * process per CPU (fewer with fewer cgroups), pinned, takes every
 * ncpu-th listed cgroup, as hop does; each period, on a fixed grid
 * shared by all of them, it visits each of its cgroups: joins it
 * (cgroup.procs), spins W µs there (cpu.stat's usage),
 * touches and frees K KiB of anon memory there (memory.stat's fault and
 * charge counters; the charge is gone again at munmap), and with --io-dev
 * writes --io-kb with O_DIRECT (io.stat), then goes back to the cgroup it
 * was started in and sleeps to the next period.  --stall-us S: after its
 * spin the visit spins S µs more while a second thread of the process,
 * on the same CPU, woken then, waits for the CPU (it gives the CPU back,
 * sched_yield(), while that spin lasts): the cgroup's cpu pressure
 * ("some") grows by about S every visit.  S must be over a jiffy: PSI
 * weights each CPU's stall in a sampling window by the cgroup's non-idle
 * time there in whole jiffies (collect_percpu_times()), so a cgroup busy
 * for less than a jiffy between two samples (a read of a *.pressure
 * file, a publication of the pressure stream, PSI's own every 2 s) keeps
 * none of its stall: a short visit a cycle, sampled every cycle, leaves
 * pressure as it was (on the host, 5 µs spins with the second thread left
 * cpu.pressure's total at 0 in most runs).  Kernel memory it holds (its
 * task, stack, page tables of the long-lived mappings) stays charged
 * where it was started.  SIGUSR1: one JSON line of the counts so far on
 * stdout (the driver takes one before and after each measurement: the
 * visits per period are the share achieved); SIGTERM: a last line, then
 * exit.  Counts, summed over its processes: visits; periods, those in
 * which a process visited its cgroups; missed, deadlines a process slept
 * through (its visits of the period before did not fit the period),
 * periods in which its cgroups were not visited.  The share achieved
 * between two counts: visits / ((periods + missed) / procs).
 */
static volatile sig_atomic_t dump_counts;
static void on_dump(int s) { (void)s; dump_counts = 1; }

/* --stall-us: while set, the visitor's second thread is runnable on its CPU */
static int contend;

static void *contender(void *arg)
{
	(void)arg;
	for (;;) {
		syscall(SYS_futex, &contend, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		while (__atomic_load_n(&contend, __ATOMIC_RELAXED))
			sched_yield();	/* the CPU back to the visitor: it waits, runnable */
	}
	return NULL;
}

/* the visitor's spin, then (--stall-us) its spin with its second thread waiting for the CPU */
static void visit_spin(const struct opts *o)
{
	spin_ns(o->work_us * 1000);
	if (!o->stall_us)
		return;
	__atomic_store_n(&contend, 1, __ATOMIC_RELAXED);
	syscall(SYS_futex, &contend, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	spin_ns(o->stall_us * 1000);
	__atomic_store_n(&contend, 0, __ATOMIC_RELAXED);
}

static void change_visitor(const struct opts *o, int c, int nproc, const char *home)
{
	struct reader_res *r = &shm->r[c];
	uint64_t period = o->period_us * 1000;
	size_t len = (size_t)o->mem_kb * 1024;
	int n = 0, *fds = calloc(o->ncg / nproc + 1, sizeof(int)), back;
	char path[4096];
	struct dio d;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(c % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
	sched_setaffinity(0, sizeof(set), &set);
	signal(SIGTERM, on_term);
	for (int i = c; i < o->ncg; i += nproc) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", o->cg[i]);
		if ((fds[n++] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			die("%s: %s", path, strerror(errno));
	}
	if (snprintf(path, sizeof(path), "%s/cgroup.procs", home) >= (int)sizeof(path) ||
	    (back = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		die("%s: %s", path, strerror(errno));
	if (o->io_dev)
		dio_open(&d, o->io_dev, o->io_kb);
	pthread_t th;
	int err = o->stall_us ? pthread_create(&th, NULL, contender, NULL) : 0;
	if (err)
		die("--stall-us: a second thread: %s", strerror(err));
	__sync_fetch_and_add(&shm->ready, 1);
	while (!shm->start)
		usleep(500);
	for (uint64_t next = shm->t_start; !quit;) {
		while (!quit && sleep_until(next) == EINTR)
			;
		if (quit)
			break;
		for (int i = 0; i < n && !quit; i++) {
			if (write(fds[i], "0", 1) != 1)
				die("joining %s: %s", o->cg[c + i * nproc], strerror(errno));
			visit_spin(o);
			/*
			 * Reading the thread's CPU clock runs the scheduler's
			 * update_curr(): the spin is charged to this cgroup now,
			 * not to the one the next tick finds the process in
			 * (joining a cgroup updates it only where the cpu
			 * controller is enabled)
			 */
			tcpu_ns();
			if (len) {
				char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (m == MAP_FAILED)
					die("mmap %zu: %s", len, strerror(errno));
				for (size_t j = 0; j < len; j += 4096)
					m[j] = (char)j;
				munmap(m, len);
			}
			if (o->io_dev)
				dio_write(&d);
			__atomic_store_n(&r->samples, r->samples + 1, __ATOMIC_RELAXED);
		}
		if (write(back, "0", 1) != 1)
			die("back to %s: %s", home, strerror(errno));
		uint64_t lat = mono_ns() - next;
		if (lat > r->late_ns_max)
			r->late_ns_max = lat;
		uint64_t missed = r->missed;
		next = grid_next(next, period, &missed);
		__atomic_store_n(&r->missed, missed, __ATOMIC_RELAXED);
		__atomic_store_n(&r->cycles, r->cycles + 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static void change_counts(const struct opts *o, int nproc)
{
	uint64_t visits = 0, periods = 0, missed = 0, late = 0;
	for (int c = 0; c < nproc; c++) {
		visits += __atomic_load_n(&shm->r[c].samples, __ATOMIC_RELAXED);
		periods += __atomic_load_n(&shm->r[c].cycles, __ATOMIC_RELAXED);
		missed += __atomic_load_n(&shm->r[c].missed, __ATOMIC_RELAXED);
		if (shm->r[c].late_ns_max > late)
			late = shm->r[c].late_ns_max;
	}
	printf("{\"mono_ns\": %" PRIu64 ", \"start_ns\": %" PRIu64 ", \"cgroups\": %d, \"procs\": %d"
	       ", \"period_us\": %" PRIu64 ", \"work_us\": %" PRIu64 ", \"mem_kb\": %d, \"io_kb\": %d"
	       ", \"visits\": %" PRIu64 ", \"periods\": %" PRIu64 ", \"missed\": %" PRIu64
	       ", \"late_ns_max\": %" PRIu64 "}\n", mono_ns(), (uint64_t)shm->t_start, o->ncg,
	       nproc, o->period_us, o->work_us, o->mem_kb, o->io_dev ? o->io_kb : 0, visits,
	       periods, missed, late);
	fflush(stdout);
}

static int run_change(const struct opts *o)
{
	int nproc = (int)sysconf(_SC_NPROCESSORS_ONLN);
	char home[4096], line[4096];
	if (!o->ncg || !o->period_us)
		die("change needs the cgroups and --period-us");
	if (nproc > MAX_READERS)
		nproc = MAX_READERS;
	if (nproc > o->ncg)
		nproc = o->ncg;
	FILE *f = fopen("/proc/self/cgroup", "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "0::", 3);	/* the cgroup2 line (hybrid: the last) */
	if (!found)
		die("/proc/self/cgroup: no cgroup2 line");
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(home, sizeof(home), "%s%s", o->root, line + 3);
	raise_nofile();
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);	/* no signal lost between checks */
	struct sigaction su = { .sa_handler = on_dump }, st = { .sa_handler = on_term };
	sigaction(SIGUSR1, &su, NULL);
	sigaction(SIGTERM, &st, NULL);
	pid_t pids[MAX_READERS];
	for (int c = 0; c < nproc; c++) {
		pids[c] = fork();
		if (pids[c] < 0)
			die("fork: %s", strerror(errno));
		if (!pids[c]) {
			signal(SIGUSR1, SIG_IGN);
			sigprocmask(SIG_SETMASK, &old, NULL);
			change_visitor(o, c, nproc, home);
		}
	}
	while (shm->ready < nproc) {
		int status;
		if (waitpid(-1, &status, WNOHANG) > 0)
			die("a visitor ended before it was ready");
		usleep(1000);
	}
	/* the first period a little ahead: every visitor is asleep on the grid */
	shm->t_start = mono_ns() + 10000000;
	__sync_synchronize();
	shm->start = 1;
	while (!quit) {
		sigsuspend(&old);
		if (dump_counts) {
			dump_counts = 0;
			change_counts(o, nproc);
		}
	}
	for (int c = 0; c < nproc; c++)
		kill(pids[c], SIGTERM);
	for (int c = 0; c < nproc; c++)
		waitpid(pids[c], NULL, 0);
	change_counts(o, nproc);
	return 0;
}

/* ---- the agent scenario's cgroups: memory and io of their own ---------- */
/*
 * cgbench loopdev --mem-kb K: a loop device over a K KiB memfd (tmpfs: its
 * only block I/O is the loop device's), left bound when this exits (the
 * loop driver keeps the file).  Prints {"dev": "/dev/loopN", ...}.
 */
static int run_loopdev(const struct opts *o)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/loop-control: %s", strerror(errno));
	int back = memfd_create("cgbench-loop", MFD_CLOEXEC);
	if (back < 0 || ftruncate(back, (off_t)o->mem_kb * 1024))
		die("memfd: %s", strerror(errno));
	for (int tries = 0; tries < 5; tries++) {
		char dev[64];
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), fd = -1;
		if (nr < 0)
			die("LOOP_CTL_GET_FREE: %s", strerror(errno));
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		for (int i = 0; i < 100 && fd < 0; i++) {	/* a udev may make the node */
			fd = open(dev, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				usleep(10000);
		}
		if (fd < 0)
			die("%s: %s", dev, strerror(errno));
		struct loop_config cfg = { .fd = (__u32)back };
		if (!ioctl(fd, LOOP_CONFIGURE, &cfg)) {
			struct stat st;
			fstat(fd, &st);
			printf("{\"dev\": \"%s\", \"major\": %u, \"minor\": %u, \"kb\": %d}\n", dev,
			       major(st.st_rdev), minor(st.st_rdev), o->mem_kb);
			return 0;
		}
		if (errno != EBUSY)	/* EBUSY: another user bound it first */
			die("LOOP_CONFIGURE %s: %s", dev, strerror(errno));
		close(fd);
	}
	die("no free loop device after 5 tries");
}

/*
 * cgbench fill --list FILE --io-dev DEV --io-kb K --mem-kb M --shm-dir DIR:
 * moves itself through the listed cgroups; in each it writes an M KiB file
 * on DIR (tmpfs: its pages stay charged to that cgroup) and K KiB with
 * O_DIRECT to DEV (the cgroup's io.stat lists the device).  Then the
 * cgroups hold memory and have done I/O with no process in them.
 */
static int run_fill(const struct opts *o)
{
	struct dio d;
	char path[4096];
	if (!o->io_dev || !o->shm_dir)
		die("fill needs --io-dev DEV and --shm-dir DIR");
	dio_open(&d, o->io_dev, o->io_kb);
	char *data = malloc((size_t)o->mem_kb * 1024 + 1);
	memset(data, 0x33, (size_t)o->mem_kb * 1024);
	uint64_t t0 = mono_ns();
	for (int i = 0; i < o->ncg; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", o->cg[i]);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			die("moving to %s: %s", o->cg[i], strerror(errno));
		close(fd);
		snprintf(path, sizeof(path), "%s/f%06d", o->shm_dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data, (size_t)o->mem_kb * 1024) != (ssize_t)o->mem_kb * 1024)
			die("%s: %s", path, strerror(errno));
		close(fd);
		dio_write(&d);
	}
	printf("{\"cgroups\": %d, \"mem_kb\": %d, \"io_kb\": %d, \"wall_ns\": %" PRIu64 "}\n",
	       o->ncg, o->mem_kb, o->io_kb, mono_ns() - t0);
	return 0;
}

/*
 * cgbench agentcheck --controllers C --mode W,W,... --subtree DIR --list FILE:
 * one cycle of each way (classic first, as the reference) over the listed
 * cgroups, with the telemetry code, and the first cgroup's values as each
 * got them (probe_fields[], of the controllers asked): cpu usage_usec,
 * memory.stat anon, memory.current, io.stat wbytes (summed over devices),
 * pressure's totals (summed over resources and states).  Fails (exit 1)
 * when a way has zero or misses a value classic has, or is more than 25%
 * off it (the stream ways are as of their flusher's last cycle); a value
 * classic reads as 0 fails too: the first cgroup must hold anon memory,
 * have written and have stalled (its write waited on the device).  The
 * changes way runs CHANGES_CHECK_CYCLES cycles, each on a publication
 * (its state: the full snapshot at its open, then change snapshots), and
 * is compared with a classic cycle taken after them ("classic_after");
 * "probe_changed": how many of its change snapshots carried the first
 * cgroup's record (0 where that cgroup did not change).
 */
#define CHANGES_CHECK_CYCLES 3

/* the changes way's check: its cycles, each on a new publication; errno */
static int changes_check_cycles(struct tele *t, int ep)
{
	struct epoll_event ev;
	for (int i = 0; i < CHANGES_CHECK_CYCLES; i++) {
		/* 10 s: the check runs with every flusher at 1 s */
		int n = epoll_wait(ep, &ev, 1, 10000);
		if (n <= 0)
			return n ? errno : ETIMEDOUT;
		subtree_cycle(t);
		if (t->fail_errno)
			return t->fail_errno;
	}
	return 0;
}

/* the checked values of the controllers @o reads, as JSON members (@lead: after others) */
static void probes_json(const struct opts *o, struct agent_vals *v, bool lead)
{
	for (size_t f = 0; f < NPROBE; f++)
		if (o->ctrl & probe_fields[f].ctrl) {
			printf("%s\"%s\": %" PRIu64, lead ? ", " : "", probe_fields[f].name,
			       *probe_val(v, f));
			lead = true;
		}
}

/* one classic cycle's values of the first cgroup, as the reference; errno */
static int classic_ref(const struct opts *o, struct agent_vals *ref)
{
	struct opts oo = *o;
	oo.way = WAY_CLASSIC;
	oo.mode = "classic";
	oo.stream = false;
	struct tele t;
	tele_init(&t, &oo, 0, 0);
	int err = tele_open(&t, -1);
	if (!err)
		grid_pass(&t);
	*ref = t.pv;
	return err ? err : t.errors ? EIO : 0;
}
/* @name is one of the comma-separated @modes */
static bool mode_listed(const char *modes, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = modes; *p;) {
		size_t k = strcspn(p, ",");
		if (k == l && !strncmp(p, name, l))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

static void bpf_controllers(const struct opts *o, const char *what);

static int run_agentcheck(const struct opts *o)
{
	static const char *const names[] = { "classic", "stream", "subtree", "bpfmap", "bpfshared",
					     "changes" };
	static const enum way ways[] = { WAY_CLASSIC, WAY_STREAM, WAY_SUBTREE, WAY_BPFMAP,
					 WAY_BPFSHARED, WAY_CHANGES };
	struct agent_vals ref = {};
	struct stat st;
	int failed = 0;
	if (!o->ncg || !o->subtree)
		die("agentcheck needs --subtree DIR and the cgroups");
	if (stat(o->cg[0], &st))
		die("%s: %s", o->cg[0], strerror(errno));
	raise_nofile();
	for (size_t w = 0; w < sizeof(ways) / sizeof(*ways); w++)
		if (mode_listed(o->mode, names[w]) &&
		    (ways[w] == WAY_BPFMAP || ways[w] == WAY_BPFSHARED))
			bpf_controllers(o, names[w]);
	printf("{\"cgroup\": \"%s\", \"controllers\": \"%s\", \"ways\": {", o->cg[0], o->ctrl_name);
	for (size_t w = 0; w < sizeof(ways) / sizeof(*ways); w++) {
		if (w && !mode_listed(o->mode, names[w]))
			continue;
		struct opts oo = *o;
		oo.way = ways[w];
		oo.mode = names[w];
		oo.stream = oo.way == WAY_STREAM;
		struct tele t;
		struct agent_vals after = {};
		int ep = epoll_create1(EPOLL_CLOEXEC);
		tele_init(&t, &oo, 0, st.st_ino);
		int err = tele_open(&t, ep);
		if (!err) {
			if (oo.way == WAY_STREAM)
				for (int i = 0; i < oo.ncg; i++)
					stream_one(&t, i);
			else if (oo.way == WAY_SUBTREE)
				subtree_cycle(&t);
			else if (oo.way == WAY_CHANGES) {
				if (!(t.fail_errno = changes_check_cycles(&t, ep)))
					t.fail_errno = classic_ref(o, &after);
			} else if (oo.way == WAY_BPFSHARED)
				shared_cycle(&t);
			else
				grid_pass(&t);
			err = t.fail_errno;
		}
		close(ep);
		struct agent_vals *v = &t.pv;
		const struct snap *paced = &t.sub[o->pace];
		printf("%s\"%s\": {\"errno\": %d, \"errors\": %" PRIu64 ", \"values\": %" PRIu64,
		       w ? ", " : "", names[w], err, t.errors, t.values);
		probes_json(o, v, true);
		if (oo.way == WAY_CHANGES) {
			printf(", \"changes\": {\"cycles\": %" PRIu64 ", \"probe_changed\": %" PRIu64
			       ", \"held\": %zu, \"classic_after\": {", t.cycles, paced->probe_changed,
			       paced->tab ? paced->tab->live : 0);
			probes_json(o, &after, false);
			printf("}}");
		}
		printf("}");
		if (!w)
			ref = *v;
		/* the changes way's state is compared with classic after its cycles */
		const struct agent_vals *want = oo.way == WAY_CHANGES ? &after : &ref;
		if (err || t.errors) {
			fprintf(stderr, "cgbench: agentcheck: %s: %s, %" PRIu64 " read errors\n",
				names[w], strerror(err), t.errors);
			failed++;
			continue;
		}
		for (size_t f = 0; f < NPROBE; f++) {
			uint64_t got = *probe_val(v, f), ok = *probe_val((struct agent_vals *)want, f);
			if (!(o->ctrl & probe_fields[f].ctrl))
				continue;
			const char *why = !(v->seen & probe_fields[f].ctrl) ? "not read" : !got ? "zero" :
				(got > ok ? got - ok : ok - got) > ok / 4 ? "more than 25% off classic" :
				NULL;
			if (why) {
				fprintf(stderr, "cgbench: agentcheck: %s %s of %s: %s (%" PRIu64
					", classic %" PRIu64 ")\n", names[w], probe_fields[f].name,
					o->cg[0], why, got, ok);
				failed++;
			}
		}
	}
	printf("}, \"failed\": %d}\n", failed);
	return failed ? 1 : 0;
}

/* ---- sharedcheck: the shared collector's passes as an agent takes them --- */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* the inode numbers of @o->subtree and the listed cgroups (cgroup ids), sorted */
static uint64_t *expected_ids(const struct opts *o, uint64_t *root_id)
{
	uint64_t *want = malloc((o->ncg + 1) * sizeof(*want));
	struct stat st;
	if (stat(o->subtree, &st))
		die("%s: %s", o->subtree, strerror(errno));
	want[0] = *root_id = st.st_ino;
	for (int i = 0; i < o->ncg; i++) {
		if (stat(o->cg[i], &st))
			die("%s: %s", o->cg[i], strerror(errno));
		want[i + 1] = st.st_ino;
	}
	qsort(want, o->ncg + 1, sizeof(*want), cmp_u64);
	return want;
}

/* a pass's @n @ids (sorted here) against the @nw sorted @want: ids missing, ids not wanted */
static void compare_ids(uint64_t *ids, uint64_t n, const uint64_t *want, uint64_t nw,
			uint64_t *missing, uint64_t *extra)
{
	uint64_t i = 0, j = 0;
	qsort(ids, n, sizeof(*ids), cmp_u64);
	while (i < n || j < nw) {
		if (j == nw || (i < n && ids[i] < want[j]))
			(*extra)++, i++;
		else if (i == n || want[j] < ids[i])
			(*missing)++, j++;
		else
			i++, j++;
	}
}

struct scheck {
	uint64_t passes, retries, wrong_count, missing, extra, not_first, protocol, other;
	uint64_t drift_over, behind_max_us, allowed_max_us, ahead;
	int last_err;
};

/* the probe's usage_usec from the pass against its cpu.stat now (which flushes) */
static void check_drift(struct scheck *c, const struct shared_view *v, int fd, uint64_t map_us)
{
	char buf[4096];
	struct stat_vals sv;
	ssize_t k = pread(fd, buf, sizeof(buf), 0);
	uint64_t now = mono_ns();
	if (k <= 0 || parse_stat(buf, k, &sv))
		die("the probe's cpu.stat: %s", k < 0 ? strerror(errno) : "unparsable");
	/* one busy task: at most the time since the flush, plus a tick's unaccounted runtime */
	uint64_t allowed = (now - v->pass_ns) / 1000 + 20000;
	if (map_us > sv.usage) {
		c->ahead++;
		return;
	}
	uint64_t behind = sv.usage - map_us;
	if (behind > c->behind_max_us)
		c->behind_max_us = behind;
	if (allowed > c->allowed_max_us)
		c->allowed_max_us = allowed;
	c->drift_over += behind > allowed;
}

/* an agent's read-write fd of the pin can neither map the map writable nor write it (frozen) */
static bool shared_frozen(const char *pin)
{
	struct shared_rec rec = {};
	__u32 one = 1;
	int fd = bpf_obj_get(pin);
	if (fd < 0)
		die("%s: %s", pin, strerror(errno));
	void *p = mmap(NULL, 2 * sizeof(rec), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	bool map_refused = p == MAP_FAILED && errno == EPERM;
	if (p != MAP_FAILED)
		munmap(p, 2 * sizeof(rec));
	bool write_refused = bpf_map_update_elem(fd, &one, &rec, BPF_ANY) && errno == EPERM;
	close(fd);
	return map_refused && write_refused;
}

/* one pass taken and checked (-errno as shared_pass, or -ETIMEDOUT) */
static int scheck_pass(struct scheck *c, struct shared_view *v, const struct opts *o,
		       const uint64_t *want, uint64_t root_id, uint64_t probe_id, uint64_t *ids,
		       int probe_fd, uint64_t until)
{
	struct agent_vals pv = {};
	uint64_t nv = 0, wakes = 0;
	int64_t n;
	do {
		int err = shared_wait(v, &wakes, until);
		if (err)
			return err;
		n = shared_pass(v, &nv, probe_id, &pv, ids);
	} while (n == -EAGAIN);
	if (n < 0)
		return (int)n;
	c->passes++;
	c->not_first += n && ids[0] != root_id;
	c->wrong_count += (uint64_t)n != (uint64_t)o->ncg + 1;
	compare_ids(ids, (uint64_t)n, want, (uint64_t)o->ncg + 1, &c->missing, &c->extra);
	if (pv.seen & CTRL_CPU)
		check_drift(c, v, probe_fd, pv.usage_usec);
	return 0;
}

/*
 * cgbench sharedcheck --pin PATH --subtree DIR --list FILE [--seconds S]
 *                     [--dwell-us D]:
 * for S seconds, every pass of the shared collector over DIR, taken as a
 * bpfshared agent takes it (shared_wait, shared_pass), checked: its
 * records are DIR's cgroups, DIR's first, each listed one once and nothing
 * else (ids: the directories' inode numbers; FILE lists every descendant
 * of DIR); the first listed cgroup's usage_usec is at most its cpu.stat's
 * read after the pass, and behind it by no more than the time since the
 * pass's flush plus 20 ms (a tick's runtime not yet accounted at the
 * flush; it must hold at most one busy task); no pass used holds a record
 * of another (EPROTO).  --dwell-us D holds each read open a random 0 to
 * 2D µs after its first seq load, so that passes begin inside some reads
 * (D about half the collector's period): then reads must have been taken
 * again, and still no pass used may mix two.  JSON; exit 1 on any
 * failure, or when no pass was taken.
 */
static int run_sharedcheck(const struct opts *o)
{
	struct shared_view v;
	struct scheck c = {};
	struct stat st;
	char path[4096];
	uint64_t root_id;
	if (!o->pin || !o->subtree || !o->ncg)
		die("sharedcheck needs --pin PATH, --subtree DIR and the cgroups (--list FILE)");
	int err = shared_view_open(&v, o->pin);
	if (err)
		die("the shared collector's map %s: %s", o->pin, strerror(-err));
	uint64_t *want = expected_ids(o, &root_id), *ids = malloc(v.nslots * sizeof(*ids));
	snprintf(path, sizeof(path), "%s/cpu.stat", o->cg[0]);
	int probe_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (probe_fd < 0 || stat(o->cg[0], &st))
		die("%s: %s", path, strerror(errno));
	v.dwell_ns = o->dwell_us * 1000;
	v.last_seq = __atomic_load_n(&v.hdr->seq, __ATOMIC_ACQUIRE) & ~1ull;	/* a fresh pass first */
	uint64_t until = mono_ns() + (uint64_t)(o->seconds * 1e9);
	while ((err = scheck_pass(&c, &v, o, want, root_id, st.st_ino, ids, probe_fd, until)) !=
	       -ETIMEDOUT) {
		if (!err)
			continue;
		c.last_err = -err;
		if (err == -EPROTO)
			c.protocol++;
		else
			c.other++;
	}
	c.retries = v.retries;
	bool frozen = shared_frozen(o->pin);
	bool failed = !frozen || !c.passes || c.wrong_count || c.missing || c.extra || c.not_first ||
		      c.protocol || c.other || c.drift_over || c.ahead || (o->dwell_us && !c.retries);
	printf("{\"cgroups\": %d, \"slots\": %u, \"dwell_us\": %" PRIu64 ", \"passes\": %" PRIu64
	       ", \"retries\": %" PRIu64 ", \"wrong_count\": %" PRIu64 ", \"missing\": %" PRIu64
	       ", \"extra\": %" PRIu64 ", \"root_not_first\": %" PRIu64 ", \"protocol_errors\": %" PRIu64
	       ", \"other_errors\": %" PRIu64 ", \"last_error\": \"%s\", \"behind_max_us\": %" PRIu64
	       ", \"allowed_max_us\": %" PRIu64 ", \"drift_over\": %" PRIu64 ", \"ahead\": %" PRIu64
	       ", \"frozen\": %s, \"failed\": %d}\n", o->ncg + 1, v.nslots, o->dwell_us, c.passes,
	       c.retries, c.wrong_count, c.missing, c.extra, c.not_first, c.protocol, c.other,
	       c.last_err ? strerror(c.last_err) : "", c.behind_max_us, c.allowed_max_us,
	       c.drift_over, c.ahead, frozen ? "true" : "false", failed);
	return failed ? 1 : 0;
}

/* ---- removals: what each way accounts of cgroups that come and go ------ */
/*
 * cgbench churnrm: the churn the removal scenario measures, with its
 * ground truth.  Until --seconds (or SIGTERM), every --period-us: mkdir
 * DIR/rNNNNNN, fork a child that moves itself there, uses --work-us of CPU
 * (its own CPU clock, so preemption does not shorten it) and writes
 * --io-kb KiB with O_DIRECT to --io-dev, then exits; the parent reaps it,
 * reads the cgroup's cpu.stat usage_usec and io.stat wbytes (its final
 * values: no task is left) and removes it.  Prints the sums of those
 * values: what a perfect accountant attributes to the cgroups that lived.
 */
/* @path's whole text (at most @cap - 1 bytes) into @buf: its length, or -errno */
static ssize_t read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, cap - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = 0;
	return n;
}

/* cgroup @dir's cpu.stat usage_usec and io.stat wbytes (all devices); 0 or -errno */
static int cg_usage_wbytes(const char *dir, uint64_t *usage, uint64_t *wbytes, bool want_io)
{
	char path[4096], buf[16384];
	struct stat_vals v;
	uint64_t nv = 0;
	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	ssize_t n = read_text(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (parse_stat(buf, (size_t)n, &v))
		return -EINVAL;
	*usage = v.usage;
	*wbytes = 0;
	if (!want_io)
		return 0;
	snprintf(path, sizeof(path), "%s/io.stat", dir);
	n = read_text(path, buf, sizeof(buf));
	if (n == -ENOENT && !access(dir, F_OK))
		return 0;	/* the cgroup is there, the io controller is not on for it */
	if (n < 0)
		return (int)n;
	return parse_io(buf, (size_t)n, wbytes, &(uint64_t){ 0 }, &nv);
}

static int run_churnrm(const struct opts *o)
{
	if (!o->subtree || !o->period_us)
		die("churnrm needs --subtree DIR and --period-us P");
	signal(SIGTERM, on_term);
	uint64_t t0 = mono_ns(), end = t0 + (uint64_t)(o->seconds * 1e9), next = t0;
	uint64_t n = 0, failed = 0, usage = 0, wbytes = 0, life_sum = 0, life_max = 0;
	int last_err = 0;
	while (!quit && mono_ns() < end) {
		char dir[4096], procs[4200];
		snprintf(dir, sizeof(dir), "%s/r%06" PRIu64, o->subtree, n + failed);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		uint64_t born = mono_ns();
		if (mkdir(dir, 0755))
			die("mkdir %s: %s", dir, strerror(errno));
		pid_t pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			int fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0\n", 2) != 2)
				_exit(3);
			close(fd);
			spin_on(CLOCK_PROCESS_CPUTIME_ID, o->work_us * 1000);
			if (o->io_dev) {
				struct dio d;
				dio_open(&d, o->io_dev, o->io_kb);
				dio_write(&d);
			}
			_exit(0);
		}
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		uint64_t u = 0, w = 0;
		int err = WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
		if (!err)
			err = cg_usage_wbytes(dir, &u, &w, o->io_dev != NULL);
		/* the exited task leaves the cgroup as it is reaped: rmdir may race it */
		for (int k = 0; rmdir(dir) && k < 1000; k++) {
			if (errno != EBUSY)
				die("rmdir %s: %s", dir, strerror(errno));
			usleep(1000);
		}
		if (!access(dir, F_OK))
			die("rmdir %s: still busy after 1 s", dir);
		uint64_t life = mono_ns() - born;
		if (err) {
			failed++;
			last_err = -err;
		} else {
			n++;
			usage += u;
			wbytes += w;
			life_sum += life;
			if (life > life_max)
				life_max = life;
		}
		next += o->period_us * 1000;
		if (next > mono_ns())
			while (sleep_until(next) == EINTR && !quit)
				;
		else
			next = mono_ns();
	}
	printf("{\"cgroups\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"last_errno\": %d, "
	       "\"usage_usec\": %" PRIu64 ", \"wbytes\": %" PRIu64 ", \"life_ms_avg\": %.2f, "
	       "\"life_ms_max\": %.2f, \"wall_s\": %.2f}\n", n, failed, last_err, usage, wbytes,
	       n ? life_sum / 1e6 / n : 0.0, life_max / 1e6, (mono_ns() - t0) / 1e9);
	return failed ? 1 : 0;
}

/*
 * cgbench account: one way's accountant of DIR's children, as an agent
 * that charges each cgroup's usage to it (a per-container bill) would
 * keep it.  Per cgroup id, the last cpu usage_usec and io wbytes the way
 * gave; a value seen again adds its growth, a cgroup first seen adds its
 * whole value, a REMOVED record (the ways that have them) adds its final
 * values' growth over the last seen (or all of them, for a cgroup that
 * lived between two reads) and ends the cgroup.  The first pass is the
 * baseline (nothing attributed: the cgroups there are not the churn's);
 * then "ready" on stdout, and one pass per cycle until SIGTERM.  The ways:
 * classic (readdir, cpu.stat and io.stat per child, on a grid), bpfmap
 * (below's collector: the cgstat iterator over DIR into a hash map,
 * drained, on a grid; io.stat per child from userspace, as its agent
 * does), subtree (a full snapshot of DIR's cpu and io subtree files per
 * publication) and changes (change snapshots of the same).
 */
struct acct_ent { uint64_t id, val[2]; bool have[2], gone[2], counted; };
struct acct {
	struct acct_ent *e;
	size_t n, cap;
	bool baseline;
	uint64_t self_id;		/* DIR's own id: not a child */
	uint64_t attr[2];		/* 0: usage_usec, 1: wbytes */
	uint64_t live_ids, removed_recs, late_removed, lost, passes, errors;
	uint64_t last_seq, dups;	/* subtree, changes: the cpu file's publications */
	int fail_errno;
};

/* the churn parent holds a few cgroups at a time and a few hundred in a run: a list */
static struct acct_ent *acct_find(struct acct *a, uint64_t id)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].id == id)
			return &a->e[i];
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 256;
		a->e = realloc(a->e, a->cap * sizeof(*a->e));
		if (!a->e)
			die("account: %s", strerror(ENOMEM));
	}
	memset(&a->e[a->n], 0, sizeof(a->e[0]));
	a->e[a->n].id = id;
	return &a->e[a->n++];
}

/* value @k (0 usage, 1 wbytes) of cgroup @id as the way gave it; @removed: its final one */
static void acct_value(struct acct *a, uint64_t id, int k, uint64_t v, bool removed)
{
	if (id == a->self_id)
		return;
	struct acct_ent *e = acct_find(a, id);
	if (e->gone[k]) {	/* a value after its REMOVED record: the way told it twice */
		a->late_removed++;
		return;
	}
	if (!a->baseline && !removed && !e->counted) {	/* seen alive after the baseline */
		e->counted = true;
		a->live_ids++;
	}
	if (!a->baseline)
		a->attr[k] += e->have[k] ? (v > e->val[k] ? v - e->val[k] : 0) : v;
	e->val[k] = v;
	e->have[k] = true;
	e->gone[k] = removed;
	if (removed && k == 0)
		a->removed_recs++;
}

static void acct_fail(struct acct *a, int err)
{
	a->errors++;
	a->fail_errno = err;
}

/* classic, and the io half of bpfmap: every child's files, read now */
static void acct_readdir(struct acct *a, const char *dir, bool cpu)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d) {
		acct_fail(a, errno);
		return;
	}
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;
		uint64_t u, w;
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;	/* removed since readdir */
		int err = cg_usage_wbytes(path, &u, &w, true);
		if (err == -ENOENT || err == -ENODEV)
			continue;	/* removed between the two */
		if (err) {
			acct_fail(a, -err);
			continue;
		}
		if (cpu)
			acct_value(a, st.st_ino, 0, u, false);
		acct_value(a, st.st_ino, 1, w, false);
	}
	closedir(d);
}

static void acct_bpf_rec(void *arg, const struct cgstat_rec *r)
{
	acct_value(arg, r->cgroup_id, 0, r->cpu.usage_ns / 1000, false);
}

/* account's state over the records of one subtree file's snapshot */
struct acct_pass { struct acct *a; int k; bool lost; };

static void acct_rec(void *arg, const struct cgstream_rec *rec)
{
	struct acct_pass *p = arg;
	struct acct *a = p->a;
	uint64_t v = 0;
	struct cgstream_io_device d;
	if (rec->type == CGSTREAM_REC_SNAPSHOT) {
		p->lost |= !!(rec->snapshot_flags & CGSTREAM_SNAPSHOT_F_LOST);
		if (!p->k && rec->seq == a->last_seq)
			a->dups++;	/* woken, and the same publication again */
		if (!p->k)
			a->last_seq = rec->seq;
	}
	if (rec->type != CGSTREAM_REC_CGROUP && rec->type != CGSTREAM_REC_REMOVED)
		return;
	if (!p->k)
		cgstream_rec_get(rec, "usage_usec", &v);
	for (uint32_t i = 0; p->k && !cgstream_rec_io_device(rec, i, &d); i++)
		v += d.wbytes;
	acct_value(a, rec->id, p->k, v, rec->type == CGSTREAM_REC_REMOVED);
}

/*
 * A snapshot of one subtree file (@k: 0 cpu, 1 io) into the accountant:
 * full, or a change snapshot; a LOST one is counted and followed by a
 * full snapshot.  0 or -errno.
 */
static int acct_snapshot(struct acct *a, struct snap *sn, struct pass_buf *b, int k, bool changes)
{
	struct acct_pass p = { .a = a, .k = k };
	int err = snap_each(sn, b, changes ? (off_t)CGROUP_STAT_STREAM_CHANGES : 0, acct_rec, &p);
	if (err || !p.lost || !changes)
		return err;
	a->lost++;	/* removals this file had not read were dropped: resynchronise */
	p.lost = false;
	return snap_each(sn, b, 0, acct_rec, &p);
}

static int run_account(const struct opts *o)
{
	static const char *const modes[] = { "classic", "bpfmap", "subtree", "changes" };
	int way = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(o->mode, modes[i]))
			way = i;
	if (way < 0 || !o->subtree)
		die("account --mode classic|bpfmap|subtree|changes --subtree DIR [--period-ms T]");
	signal(SIGTERM, on_term);
	struct acct a = { .baseline = true };
	struct stat st;
	if (stat(o->subtree, &st))
		die("%s: %s", o->subtree, strerror(errno));
	a.self_id = st.st_ino;
	struct pass_buf b = { .cap = 1 << 20 };
	struct bpfway bw;
	struct snap sn[2];
	bool changes = way == 3, first = true;
	if (!(b.p = malloc(b.cap)))
		die("account: %s", strerror(ENOMEM));
	if (way == 1) {
		int err = bpfway_open(&bw, o->subtree, true, 4096, CTRL_CPU, false);
		if (err)
			die("BPF (below's collector): %s", strerror(-err));
		bw.each = acct_bpf_rec;
		bw.each_arg = &a;
	}
	for (int k = 0; way >= 2 && k < 2; k++) {
		int err = snap_open(&sn[k], o->subtree, k ? "io.stat.stream.subtree" :
				    "cpu.stat.stream.subtree", false);
		if (err)
			die("%s: %s", o->subtree, strerror(-err));
	}
	uint64_t period = o->period_ms * 1000000ull, next = mono_ns(), c0 = tcpu_ns();
	while (!quit) {
		if (way >= 2 && !first) {
			/* a wake per publication of the cpu file (the io one's follows it) */
			struct pollfd p = { .fd = sn[0].fd, .events = POLLIN };
			int r = poll(&p, 1, 200);
			if (r <= 0)
				continue;
		} else if (!first) {
			while (sleep_until(next) == EINTR && !quit)
				;
			if (quit)
				break;
		}
		if (way == 0) {
			acct_readdir(&a, o->subtree, true);
		} else if (way == 1) {
			uint64_t nv = 0;
			struct agent_vals pv;
			int64_t n = bpfway_pass(&bw, &b, &nv, 0, &pv);
			if (n < 0)
				acct_fail(&a, (int)-n);
			acct_readdir(&a, o->subtree, false);
		} else {
			for (int k = 0; k < 2; k++) {
				int err = acct_snapshot(&a, &sn[k], &b, k, changes && !first);
				if (err)
					acct_fail(&a, -err);
			}
		}
		a.passes++;
		if (first) {
			first = false;
			a.baseline = false;
			printf("ready\n");
			fflush(stdout);
		}
		next = grid_next(next, period, &(uint64_t){ 0 });
	}
	printf("{\"mode\": \"%s\", \"usage_usec\": %" PRIu64 ", \"wbytes\": %" PRIu64
	       ", \"cgroups_seen_live\": %" PRIu64 ", \"removed_records\": %" PRIu64
	       ", \"after_removed\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"dups\": %" PRIu64
	       ", \"passes\": %" PRIu64
	       ", \"errors\": %" PRIu64 ", \"fail_errno\": %d, \"cpu_ns\": %" PRIu64 "}\n",
	       o->mode, a.attr[0], a.attr[1], a.live_ids, a.removed_recs, a.late_removed, a.lost,
	       a.dups, a.passes, a.errors, a.fail_errno, tcpu_ns() - c0);
	return a.errors ? 1 : 0;
}

/* ---- the memory experiment: N reads of one cgroup's memory stats ------- */
/*
 * "key value" text, parsed line by line with sscanf() (what a scanf-style
 * agent does), every value consumed; anon to *@anon
 */
static uint64_t parse_scanf(char *buf, size_t len, uint64_t *anon)
{
	char key[64], *p = buf, *end = buf + len;
	unsigned long long v;
	uint64_t n = 0, sum = 0;
	*end = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', end - p);
		if (nl)
			*nl = 0;
		if (sscanf(p, "%63s %llu", key, &v) == 2) {
			sum += v;
			n++;
			if (!strcmp(key, "anon"))
				*anon = v;
		}
		p = nl ? nl + 1 : end;
	}
	sink += sum;
	return n;
}

/*
 * cgbench memloop --mode text|stream|subtree|bpf --count N CGROUP: N reads
 * of CGROUP's memory statistics in a tight loop, each parsed or decoded and
 * consumed: memory.stat text + sscanf; memory.stat.stream text + sscanf;
 * memory.stat.stream.subtree of CGROUP (a leaf: SNAPSHOT, SCHEMA and one
 * CGROUP record) decoded by libcgstream; a one-cgroup pass of the BPF
 * kfuncs (agent.bpf.c without cpu: flush, every memory.stat item, usage,
 * events; the map drained).  The process's CPU time over the loop
 * (getrusage: user/sys).  Fails when anon reads 0 (CGROUP must hold anon
 * memory).
 */
static int run_memloop(const struct opts *o)
{
	enum { TEXT, STREAM, SUBTREE, BPF } m;
	if (!strcmp(o->mode, "text"))
		m = TEXT;
	else if (!strcmp(o->mode, "stream"))
		m = STREAM;
	else if (!strcmp(o->mode, "subtree"))
		m = SUBTREE;
	else if (!strcmp(o->mode, "bpf"))
		m = BPF;
	else
		die("memloop --mode text|stream|subtree|bpf");
	if (o->ncg != 1 || !o->count)
		die("memloop needs --count N and one cgroup");
	const char *cg = o->cg[0];
	struct pass_buf b = { .cap = 65536 };
	struct bpfway bw;
	struct agent_vals pv = {};
	struct stat st;
	struct snap sn;
	int fd = -1;
	bool lost;
	b.p = malloc(b.cap + 1);
	if (stat(cg, &st))
		die("%s: %s", cg, strerror(errno));
	if (m == BPF) {
		int err = bpfway_open(&bw, cg, true, 1, CTRL_MEM, true);
		if (err)
			die("BPF iterator on %s: %s", cg, strerror(-err));
	} else if (m == SUBTREE) {
		int err = snap_open(&sn, cg, "memory.stat.stream.subtree", false);
		if (err)
			die("memory.stat.stream.subtree: %s", strerror(-err));
	} else {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", cg, m == TEXT ? "memory.stat" : "memory.stat.stream");
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			die("%s: %s", path, strerror(errno));
	}
	uint64_t values = 0, seq = 0, errors = 0;
	struct rusage r0, r1;
	uint64_t w0 = 0, c0 = 0;
	/* one read first, untimed: the first read of a file costs more */
	for (uint64_t i = 0; i <= o->count; i++) {
		if (i == 1) {
			values = 0;
			getrusage(RUSAGE_SELF, &r0);
			c0 = clk_ns(CLOCK_PROCESS_CPUTIME_ID);
			w0 = mono_ns();
		}
		int64_t k;
		if (m == TEXT || m == STREAM) {
			ssize_t n = pread(fd, b.p, b.cap, 0);
			k = n > 0 ? (int64_t)parse_scanf(b.p, (size_t)n, &pv.anon) : -EIO;
			values += k > 0 ? (uint64_t)k : 0;
		} else if (m == SUBTREE) {
			k = snap_pass(&sn, &b, false, &seq, &lost, &values, st.st_ino, &pv);
		} else {
			k = bpfway_pass(&bw, &b, &values, st.st_ino, &pv);
		}
		errors += k <= 0;
	}
	uint64_t wall = mono_ns() - w0, cpu = clk_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	getrusage(RUSAGE_SELF, &r1);
	uint64_t ut = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1000000ull +
		      r1.ru_utime.tv_usec - r0.ru_utime.tv_usec;
	uint64_t stt = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1000000ull +
		       r1.ru_stime.tv_usec - r0.ru_stime.tv_usec;
	printf("{\"mode\": \"%s\", \"cgroup\": \"%s\", \"count\": %" PRIu64 ", \"cpu_ns\": %" PRIu64
	       ", \"utime_us\": %" PRIu64 ", \"stime_us\": %" PRIu64 ", \"wall_ns\": %" PRIu64
	       ", \"values_per_read\": %.1f, \"errors\": %" PRIu64 ", \"anon\": %" PRIu64
	       ", \"bpf_items\": %d, \"bpf_missing\": %d}\n",
	       o->mode, cg, o->count, cpu, ut, stt, wall, (double)values / o->count, errors, pv.anon,
	       m == BPF ? bw.nitems : 0, m == BPF ? bw.nmissing : 0);
	if (errors || !pv.anon) {
		fprintf(stderr, "cgbench: memloop %s: %" PRIu64 " failed reads, anon %" PRIu64 "\n",
			o->mode, errors, pv.anon);
		return 1;
	}
	return 0;
}

/* --controllers cpu[,memory][,io][,pressure]: agent_ctrls[]' rows, by libcgstream's names */
static void parse_controllers(struct opts *o)
{
	char names[128] = "";
	if (!o->ctrl_name)
		o->ctrl_name = "cpu";
	for (size_t c = 0; c < NCTRL; c++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", c ? ", " : "",
			 ctrl_name(c));
	for (const char *p = o->ctrl_name; *p;) {
		size_t l = strcspn(p, ","), c;
		for (c = 0; c < NCTRL; c++)
			if (strlen(ctrl_name(c)) == l && !strncmp(p, ctrl_name(c), l))
				break;
		if (c == NCTRL)
			die("--controllers: %s (comma-separated), not %.*s", names, (int)l, p);
		o->ctrl |= agent_ctrls[c].bit;
		p += l + (p[l] == ',');
	}
	if (!o->ctrl)
		die("--controllers: %s (comma-separated), at least one", names);
	while (!(o->ctrl & agent_ctrls[o->pace].bit))
		o->pace++;
}

/* the BPF ways (@what) read cpu, and what their programs or user space can */
static void bpf_controllers(const struct opts *o, const char *what)
{
	if (!(o->ctrl & CTRL_CPU))
		die("%s: --controllers must include cpu (its programs read it)", what);
	for (size_t c = 0; c < NCTRL; c++)
		if ((o->ctrl & agent_ctrls[c].bit) && agent_ctrls[c].bpf == BPF_NONE)
			die("%s: no BPF way reads %s: the kernel has no kfuncs for it", what,
			    ctrl_name(c));
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: cgbench read|telemetry|agentcheck|collect|sharedcheck|memloop|churnrm|account|"
		    "latency|hop|"
		    "change|work|churn|hog|loopdev|fill|kworkers [options]");
	const char *cmd = argv[1];
	struct opts o = { .mode = "classic", .readers = 1, .procs = 1, .seconds = 1,
			  .period_ms = 100, .work_us = 500, .period_us = 10000,
			  .mem_kb = 256, .root = getenv("CGBENCH_ROOT"), .slots = SHARED_SLOTS };
	if (!o.root)
		o.root = "/sys/fs/cgroup";
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "readers", 1, 0, 'r' }, { "seconds", 1, 0, 's' },
		{ "max-samples", 1, 0, 'x' }, { "period-ms", 1, 0, 'T' },
		{ "list", 1, 0, 'l' }, { "procs", 1, 0, 'p' }, { "work-us", 1, 0, 'w' },
		{ "period-us", 1, 0, 'P' }, { "mem-kb", 1, 0, 'k' }, { "root", 1, 0, 'R' },
		{ "subtree", 1, 0, 'S' }, { "controllers", 1, 0, 'C' }, { "io-dev", 1, 0, 'D' },
		{ "io-kb", 1, 0, 'I' }, { "hold-kb", 1, 0, 'H' }, { "count", 1, 0, 'n' },
		{ "shm-dir", 1, 0, 'F' }, { "io-period-us", 1, 0, 'Q' }, { "pin", 1, 0, 'B' },
		{ "slots", 1, 0, 'L' }, { "dwell-us", 1, 0, 'U' }, { "stall-us", 1, 0, 'Y' },
		{ 0 }
	};
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': o.mode = optarg; break;
		case 'r': o.readers = atoi(optarg); break;
		case 's': o.seconds = atof(optarg); o.seconds_set = true; break;
		case 'x': o.max_samples = strtoull(optarg, NULL, 10); break;
		case 'T': o.period_ms = strtoull(optarg, NULL, 10); break;
		case 'l': o.list = optarg; break;
		case 'p': o.procs = atoi(optarg); break;
		case 'w': o.work_us = strtoull(optarg, NULL, 10); break;
		case 'P': o.period_us = strtoull(optarg, NULL, 10); break;
		case 'k': o.mem_kb = atoi(optarg); break;
		case 'R': o.root = optarg; break;
		case 'S': o.subtree = optarg; break;
		case 'C': o.ctrl_name = optarg; break;
		case 'D': o.io_dev = optarg; break;
		case 'I': o.io_kb = atoi(optarg); break;
		case 'H': o.hold_kb = atoi(optarg); break;
		case 'n': o.count = strtoull(optarg, NULL, 10); break;
		case 'F': o.shm_dir = optarg; break;
		case 'Q': o.io_period_us = strtoull(optarg, NULL, 10); break;
		case 'B': o.pin = optarg; break;
		case 'L': o.slots = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'U': o.dwell_us = strtoull(optarg, NULL, 10); break;
		case 'Y': o.stall_us = strtoull(optarg, NULL, 10); break;
		default: exit(2);
		}
	}
	parse_controllers(&o);
	if (o.io_kb < 0 || o.io_kb % 4 || (o.io_dev && !o.io_kb))
		die("--io-kb: a multiple of 4 (O_DIRECT), with --io-dev");
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	/* the subcommands whose --mode is not a telemetry way */
	if (!strcmp(cmd, "memloop")) {
		load_cgroups(&o, argc, argv, optind);
		return run_memloop(&o);
	}
	if (!strcmp(cmd, "agentcheck")) {
		load_cgroups(&o, argc, argv, optind);
		return run_agentcheck(&o);
	}
	if (!strcmp(cmd, "collect")) {
		bpf_controllers(&o, "collect");
		return run_collect(&o);
	}
	if (!strcmp(cmd, "churnrm"))
		return run_churnrm(&o);
	if (!strcmp(cmd, "account"))
		return run_account(&o);
	if (!strcmp(cmd, "sharedcheck")) {
		load_cgroups(&o, argc, argv, optind);
		return run_sharedcheck(&o);
	}
	static const char *const ways[] = { "classic", "stream", "stream1", "subtree", "bpf", "bpfmap",
					    "bpfshared", "changes", "idle" };
	o.way = (enum way)-1;
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		if (!strcmp(o.mode, ways[i]))
			o.way = (enum way)i;
	if (o.way == (enum way)-1)
		die("--mode classic|stream|stream1|subtree|bpf|bpfmap|bpfshared|changes|idle");
	o.stream = o.way == WAY_STREAM || o.way == WAY_STREAM1;
	if (o.way > WAY_STREAM && strcmp(cmd, "telemetry"))
		die("--mode %s is for telemetry", o.mode);
	if (o.ctrl != CTRL_CPU && (o.way == WAY_STREAM1 || o.way == WAY_BPF || strcmp(cmd, "telemetry")))
		die("--controllers other than cpu: telemetry --mode classic|stream|subtree|bpfmap|"
		    "bpfshared|changes|idle");
	if (o.way == WAY_BPF || o.way == WAY_BPFMAP || o.way == WAY_BPFSHARED)
		bpf_controllers(&o, o.mode);
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
	if (!strcmp(cmd, "change")) {
		load_cgroups(&o, argc, argv, optind);
		return run_change(&o);
	}
	if (!strcmp(cmd, "loopdev"))
		return run_loopdev(&o);
	if (!strcmp(cmd, "fill")) {
		load_cgroups(&o, argc, argv, optind);
		return run_fill(&o);
	}
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
