// SPDX-License-Identifier: GPL-2.0
/*
 * scale: 10,000 open stream files over 2,000 cgroups.
 *
 *   1. 2,000 cgroups (40 parents of 49 children each) under a private
 *      subtree; per cgroup four cpu.stat.stream and one
 *      cpu.stat.stream.subtree file open (RLIMIT_NOFILE raised);
 *   2. the memory an open file costs: /proc/meminfo's Slab and
 *      MemAvailable before and after opening them all (each file opened
 *      and closed once before, so that its dentry and inode exist), after
 *      registering them all with epoll, and after a first read of each
 *      (a seq_file keeps its buffer), divided by the number of files;
 *   3. every file wakes once per publication: the interval is set (2 s
 *      by default, long enough for TCG to read all files between two
 *      publications), epoll waits on all of them, and each file woken is
 *      read.  A file must read each publication exactly once: never one it
 *      had read (no empty wake-up) and never skip one.  A round (all files
 *      read for publication S) that ended after publication S+1 began, or
 *      that S+1 found unfinished while the reader was still reading (it
 *      never waited idle in epoll_wait() in between), is overrun: it is
 *      not judged, as the kernel promises one wake-up per publication
 *      only to readers that are not behind; with too many overrun rounds
 *      the interval is doubled and the rounds taken again.  A round that
 *      is unfinished although the reader waited idle before S+1 fails:
 *      files were not woken;
 *   4. closing them all stops the publisher: its hrtimer leaves
 *      /proc/timer_list at once, and over five intervals publication_seq +
 *      publications_skipped does not grow, as seen by a file opened
 *      afterwards (opening restarts the publisher, with at most one
 *      publication at once).
 *
 * While the files are opened and first read the stream is armed (one
 * publication made) and stopped, one file kept open (a stopped stream with
 * no file open is disarmed, and reads find nothing): every file starts
 * with the same publication.
 *
 * usage: scale [--cgroups N] [--files-per-cgroup N] [--interval MS] [--rounds N]
 * Exit: 0 pass, 1 fail, 77 skip.  Prints "scale: <what> <numbers>" lines.
 */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROUNDS	64
#define SUBTREE_BUF	(256 * 1024)
#define STREAM_FILE	CPU_STEM STREAM_SUFFIX
#define SUBTREE_FILE	CPU_STEM SUBTREE_SUFFIX

static char root[PATH_MAX], top[PATH_MAX];
static long interval_saved = -1;
static int failures;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	if (failures > 20)
		return;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

struct meminfo {
	long avail_kb, slab_kb, unreclaim_kb;
};

static int meminfo(struct meminfo *m)
{
	char buf[8192], *p;
	ssize_t n = read_file("/proc/meminfo", buf, sizeof(buf));

	if (n < 0)
		return n;
	m->avail_kb = m->slab_kb = m->unreclaim_kb = -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		sscanf(p, "MemAvailable: %ld", &m->avail_kb);
		sscanf(p, "Slab: %ld", &m->slab_kb);
		sscanf(p, "SUnreclaim: %ld", &m->unreclaim_kb);
	}
	return m->avail_kb < 0 || m->slab_kb < 0 ? -EINVAL : 0;
}

/* lets deferred frees (RCU) of what the last step released happen */
static void settle(void)
{
	sleep_ms(500);
}

static void report_mem(const char *what, const struct meminfo *a, const struct meminfo *b,
		       long n)
{
	printf("scale: memory per %s: Slab %+ld B (SUnreclaim %+ld B), MemAvailable %+ld B "
	       "(over %ld: Slab %+ld KiB, MemAvailable %+ld KiB)\n", what,
	       (b->slab_kb - a->slab_kb) * 1024 / n, (b->unreclaim_kb - a->unreclaim_kb) * 1024 / n,
	       (a->avail_kb - b->avail_kb) * 1024 / n, n, b->slab_kb - a->slab_kb,
	       a->avail_kb - b->avail_kb);
}

/*
 * Does /proc/timer_list show the publisher's hrtimer?  1, 0, or -errno.  It
 * leaves the list for a moment each time it fires: a few looks.
 */
static int publisher_timer_armed(void)
{
	int tries;

	for (tries = 0; tries < 5; tries++) {
		FILE *f = fopen("/proc/timer_list", "re");
		char line[512];

		if (!f)
			return -errno;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "stat_stream_timer_fn")) {
				fclose(f);
				return 1;
			}
		fclose(f);
		sleep_ms(10);
	}
	return 0;
}

struct file {
	int fd;
	bool subtree;
	uint64_t seq;		/* publication_seq of the last read */
	unsigned long wakes;
};

/*
 * The publication a read of @f gives: the text's last lines, or a
 * snapshot's SNAPSHOT record (the first read of it, the rest unread: the
 * next read at offset 0 starts a new one).
 */
static int read_seq(struct file *f, char *buf, uint64_t *seq, uint64_t *time_usec,
		    uint64_t *skipped)
{
	struct pub_tail t;
	char why[160];
	size_t body;
	ssize_t n;

	n = pread(f->fd, buf, f->subtree ? SUBTREE_BUF : 4096, 0);
	if (n < 0)
		return -errno;
	if (f->subtree) {
		struct snap_decoder *d = malloc(sizeof(*d));
		struct snap_rec r;
		size_t off = 0;
		int ret;

		if (!d)
			return -ENOMEM;
		snap_decoder_init(d, CGROUP_STAT_CTRL_CPU);
		while ((ret = snap_next(d, buf, n, &off, &r, why)) > 0)
			;
		t.seq = d->snap.seq;
		t.time_usec = d->snap.time_usec;
		t.skipped = d->snap.skipped;
		free(d);
		if (ret < 0) {
			fail("a subtree snapshot of %zd bytes: %s", n, why);
			return -EINVAL;
		}
	} else if (parse_pub_tail(buf, n, &t, &body, why)) {
		fail("%s: %s", STREAM_FILE, why);
		return -EINVAL;
	}
	*seq = t.seq;
	*time_usec = t.time_usec;
	if (skipped)
		*skipped = t.skipped;
	return 0;
}

struct round {
	unsigned long reads;		/* files that read this publication */
	int64_t last_read_end;
	uint64_t pub_time_usec;
	bool idle;			/* the reader waited with no file ready */
};

/*
 * An epoll_wait() that took this long, or timed out, found no file ready:
 * the reader was idle.  Collecting 10,000 ready files takes well under it
 * even under KCSAN and TCG.
 */
#define IDLE_NSEC	(500 * NSEC_PER_MSEC)

/*
 * Waits on all files at @interval_ms until @want rounds are judged (or a
 * deadline): 1 done, 0 too many rounds overrun, -1 on an error.  @fresh:
 * every file has read the latest publication (else the first round is not
 * judged: files behind from an earlier call catch up in it).
 */
static int wake_rounds(struct file *files, long nf, int ep, long interval_ms, int want,
		       bool fresh, char *buf, int *judged_out, double *longest_out)
{
	struct epoll_event *ev = calloc(nf, sizeof(*ev));
	struct round rounds[MAX_ROUNDS] = { 0 };
	bool overran[MAX_ROUNDS];
	uint64_t base = 0, seen;
	int64_t deadline, first_read = 0;
	int judged = 0, overrun = 0, ret = -1, r;
	double longest = 0;
	long i;

	if (!ev)
		return -1;
	for (i = 0; i < nf; i++)
		if (files[i].seq > base)
			base = files[i].seq;
	seen = base;
	r = interval_set(root, CPU_STEM, interval_ms);
	if (r) {
		fail("setting the interval to %ld ms: %s", interval_ms, strerror(-r));
		goto out;
	}
	deadline = now_ns() + (int64_t)(want + 4) * interval_ms * NSEC_PER_MSEC +
		   20 * NSEC_PER_SEC;
	while (now_ns() < deadline) {
		int64_t t_wait = now_ns();
		int n = epoll_wait(ep, ev, nf, 1000), k;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("epoll_wait: %s", strerror(errno));
			goto out;
		}
		/* idle while the latest publication read was @seen */
		if ((n == 0 || now_ns() - t_wait >= IDLE_NSEC) &&
		    seen - base < MAX_ROUNDS)
			rounds[seen - base].idle = true;
		for (k = 0; k < n; k++) {
			struct file *f = &files[ev[k].data.u64];
			uint64_t seq, t_usec;
			int r;

			if (ev[k].events != EPOLLIN) {
				fail("epoll mask %#x on a live cgroup's file", ev[k].events);
				continue;
			}
			r = read_seq(f, buf, &seq, &t_usec, NULL);
			if (r) {
				if (r != -EINVAL)
					fail("read: %s", strerror(-r));
				continue;
			}
			if (!first_read)
				first_read = now_ns();
			f->wakes++;
			if (seq <= f->seq) {
				fail("file %ld woken, but it had read publication %llu already (reads %llu)",
				     (long)ev[k].data.u64, (unsigned long long)f->seq,
				     (unsigned long long)seq);
				continue;
			}
			if (seq - base >= MAX_ROUNDS) {
				fail("publication_seq %llu: more publications than expected",
				     (unsigned long long)seq);
				goto out;
			}
			/* skipping a publication is only judged below, by round */
			f->seq = seq;
			if (seq > seen)
				seen = seq;
			rounds[seq - base].reads++;
			rounds[seq - base].last_read_end = now_ns();
			rounds[seq - base].pub_time_usec = t_usec;
		}
		/*
		 * Judge round S once publication S+1 has been read: overrun if its
		 * last read ended after S+1's publication time (a file may have read
		 * S+1 instead of S then), or if files had not read S when S+1
		 * came while the reader never went idle in between (it was still
		 * reading the others: the files it had not got to read S+1
		 * instead); else complete: all files read S, and a file that did
		 * not was not woken for S although the reader waited.  A round
		 * after an overrun one is not judged either (a file that read S
		 * early is not woken for S again).
		 */
		judged = overrun = 0;
		longest = 0;
		for (uint64_t s = 1; s + 1 < MAX_ROUNDS && rounds[s + 1].reads; s++) {
			struct round *r = &rounds[s];
			double len;

			overran[s] = r->reads &&
				     (r->last_read_end / 1000 >
				      (int64_t)rounds[s + 1].pub_time_usec ||
				      (r->reads < (unsigned long)nf && !r->idle));
			if (overran[s])
				overrun++;
			if (overran[s] || (s == 1 && !fresh) || (s > 1 && overran[s - 1]))
				continue;
			len = (r->last_read_end / 1000 - (int64_t)r->pub_time_usec) / 1e6;
			if (len > longest)
				longest = len;
			if (r->reads != (unsigned long)nf) {
				fail("publication %llu woke %lu of %ld files; the reader waited idle "
				     "before the next one, so the round was not overrun",
				     (unsigned long long)(base + s), r->reads, nf);
				goto out;
			}
			judged++;
		}
		if (judged >= want) {
			ret = 1;
			break;
		}
		if (overrun > want) {
			ret = 0;
			break;
		}
	}
	if (ret < 0 && !failures)
		fail("%d rounds judged, %d overrun, in %.0f s at %ld ms", judged, overrun,
		     (now_ns() - first_read) / 1e9, interval_ms);
out:
	*judged_out = judged;
	*longest_out = longest;
	printf("scale: interval %ld ms: %d rounds judged, %d overrun, longest judged round %.2f s\n",
	       interval_ms, judged, overrun, longest);
	free(ev);
	return ret;
}

/*
 * Arms the stream (its first publication publishes every cgroup), then
 * stops it while the files are opened and first read, one file of the
 * root kept open (a stopped stream with no file open is disarmed, and
 * reads find nothing): every file starts with the same publication.  The
 * file kept open, or -1.
 */
static int arm_and_stop(long interval_ms, char *buf)
{
	int64_t t0 = now_ns(), end = t0 + 30 * NSEC_PER_SEC;
	int fd, r = interval_set(root, CPU_STEM, interval_ms);
	uint64_t seq = 0, t_usec = 0;
	char path[PATH_MAX];
	struct file f;

	path_join(path, sizeof(path), root, STREAM_FILE);
	f = (struct file){ .fd = fd = r ? -1 : open(path, O_RDONLY | O_CLOEXEC) };
	/* a publication made after the cgroups: it has them all */
	while (fd >= 0 && (int64_t)t_usec * 1000 <= t0 && now_ns() < end) {
		r = read_seq(&f, buf, &seq, &t_usec, NULL);
		if (r && r != -ENODATA)
			break;
		sleep_ms(20);
		r = 0;
	}
	if (r || fd < 0 || (int64_t)t_usec * 1000 <= t0 || interval_set(root, CPU_STEM, 0)) {
		printf("FAIL: arming the stream, a publication, stopping it: %s\n",
		       strerror(r ? -r : errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void cleanup(void)
{
	if (top[0] && remove_tree(top))
		printf("scale: could not remove %s\n", top);
	if (interval_saved >= 0)
		interval_set(root, CPU_STEM, interval_saved);
}

static void usage(void)
{
	fprintf(stderr, "usage: scale [--cgroups N] [--files-per-cgroup N] [--interval MS] "
		"[--rounds N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroups", required_argument, NULL, 'c' },
		{ "files-per-cgroup", required_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "rounds", required_argument, NULL, 'r' },
		{ 0 }
	};
	long ncg = 2000, per = 5, interval = 2000, nf, i;
	int want = 4, c, ep, r, judged = 0;
	struct meminfo m0, m1, m2, m3;
	struct file *files;
	char path[PATH_MAX], name[64], *buf, **cgpath;
	int keeper;
	double longest = 0;
	int64_t t0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *e;
		long v = strtol(optarg, &e, 10);

		if (*e || v <= 0)
			usage();
		switch (c) {
		case 'c': ncg = v; break;
		case 'f': per = v; break;
		case 'i': interval = v; break;
		case 'r': want = v; break;
		default: usage();
		}
	}
	if (want + 3 > MAX_ROUNDS || per < 2 || ncg < 50)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid()) {
		printf("SKIP: scale needs root\n");
		return EXIT_SKIP;
	}
	if (cgroup2_mount(root, sizeof(root))) {
		printf("SKIP: no cgroup2 mount\n");
		return EXIT_SKIP;
	}
	path_join(path, sizeof(path), root, STREAM_FILE);
	if (access(path, R_OK)) {
		printf("SKIP: no %s: not a cgstream kernel\n", path);
		return EXIT_SKIP;
	}
	nf = ncg * per;
	r = raise_nofile(nf + 256);
	if (r) {
		printf("FAIL: RLIMIT_NOFILE to %ld: %s\n", nf + 256, strerror(-r));
		return EXIT_FAIL;
	}
	interval_saved = interval_get(root, CPU_STEM);
	if (interval_saved < 0) {
		printf("FAIL: read the interval: %s\n", strerror(-interval_saved));
		return EXIT_FAIL;
	}
	signal(SIGPIPE, SIG_IGN);
	buf = malloc(SUBTREE_BUF);
	files = calloc(nf, sizeof(*files));
	cgpath = calloc(ncg, sizeof(*cgpath));
	if (!buf || !files || !cgpath) {
		perror("malloc");
		return EXIT_FAIL;
	}

	/* 1. the cgroups: parents of 49 children each, by default */
	snprintf(name, sizeof(name), "cgscale.%d", getpid());
	path_join(top, sizeof(top), root, name);
	t0 = now_ns();
	if (mkdir(top, 0755)) {
		printf("FAIL: mkdir %s: %s\n", top, strerror(errno));
		return EXIT_FAIL;
	}
	for (i = 0; i < ncg; i++) {
		long parent = i / 50 * 50;

		cgpath[i] = malloc(PATH_MAX);
		if (!cgpath[i]) {
			perror("malloc");
			cleanup();
			return EXIT_FAIL;
		}
		snprintf(name, sizeof(name), i == parent ? "p%ld" : "p%ld/c%ld", parent, i);
		path_join(cgpath[i], PATH_MAX, top, name);
		if (mkdir(cgpath[i], 0755)) {
			printf("FAIL: mkdir %s: %s\n", cgpath[i], strerror(errno));
			cleanup();
			return EXIT_FAIL;
		}
	}
	printf("scale: %ld cgroups made in %.1f s\n", ncg, (now_ns() - t0) / 1e9);
	keeper = arm_and_stop(interval, buf);
	if (keeper < 0) {
		cleanup();
		return EXIT_FAIL;
	}

	/* 2. open every file once (dentries, inodes), then measure the opens */
	for (i = 0; i < ncg * 2; i++) {
		int fd;

		path_join(path, sizeof(path), cgpath[i / 2], i % 2 ? SUBTREE_FILE : STREAM_FILE);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			printf("FAIL: open %s: %s\n", path, strerror(errno));
			cleanup();
			return EXIT_FAIL;
		}
		close(fd);
	}
	settle();
	if (meminfo(&m0)) {
		printf("FAIL: /proc/meminfo unreadable\n");
		cleanup();
		return EXIT_FAIL;
	}
	t0 = now_ns();
	for (i = 0; i < nf; i++) {
		struct file *f = &files[i];

		f->subtree = i % per == per - 1;
		path_join(path, sizeof(path), cgpath[i / per], f->subtree ? SUBTREE_FILE : STREAM_FILE);
		f->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (f->fd < 0) {
			printf("FAIL: open %s (file %ld): %s\n", path, i, strerror(errno));
			cleanup();
			return EXIT_FAIL;
		}
	}
	printf("scale: %ld files open (%ld %s, %ld %s) in %.1f s\n", nf, nf - ncg, STREAM_FILE,
	       ncg, SUBTREE_FILE, (now_ns() - t0) / 1e9);
	settle();
	meminfo(&m1);
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < nf; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLPRI, .data.u64 = i };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, files[i].fd, &e)) {
			printf("FAIL: epoll_ctl: %s\n", strerror(errno));
			cleanup();
			return EXIT_FAIL;
		}
	}
	settle();
	meminfo(&m2);
	/* a first read: the last publication seen; streams keep a seq_file buffer */
	for (i = 0; i < nf; i++) {
		uint64_t t_usec;

		r = read_seq(&files[i], buf, &files[i].seq, &t_usec, NULL);
		if (r) {
			printf("FAIL: first read of file %ld: %s\n", i, strerror(-r));
			cleanup();
			return EXIT_FAIL;
		}
	}
	settle();
	meminfo(&m3);
	report_mem("open file", &m0, &m1, nf);
	report_mem("epoll registration (two wait queues)", &m1, &m2, nf);
	report_mem("cpu.stat.stream file after its first read", &m2, &m3, nf - ncg);

	/* 3. one wake-up per file per publication */
	for (bool fresh = true;; fresh = false) {
		r = wake_rounds(files, nf, ep, interval, want, fresh, buf, &judged, &longest);
		if (r != 0 || interval >= 16000)
			break;
		interval *= 2;
		printf("scale: too many rounds overrun: interval doubled to %ld ms\n", interval);
	}
	if (r == 1) {
		unsigned long total = 0;

		for (i = 0; i < nf; i++)
			total += files[i].wakes;
		printf("scale: %lu wake-ups read, one per file per publication over %d judged rounds "
		       "of %ld files (interval %ld ms, longest round %.2f s)\n",
		       total, judged, nf, interval, longest);
	} else if (r == 0) {
		fail("rounds kept overrunning up to an interval of %ld ms", interval);
	}

	/* 4. closing them all stops the publisher */
	{
		uint64_t seq_before = 0, seq_after, skipped_before = 0, skipped_after, t_usec;
		int armed_open = publisher_timer_armed(), armed;
		long last;
		int64_t t_close, t_wait;
		struct file probe = { 0 };

		/*
		 * The latest publication and miss count, read through the last
		 * cpu.stat.stream file still open: closing 10,000 files takes
		 * seconds (11 s on the KASAN kernel under TCG), and the
		 * publisher rightly runs on until the last one goes.
		 */
		for (last = nf - 1; last >= 0 && files[last].subtree; last--)
			;
		t0 = now_ns();
		for (i = 0; i < nf; i++)
			if (i != last)
				close(files[i].fd);
		close(ep);
		close(keeper);
		if (last < 0) {
			fail("no cpu.stat.stream file among the %ld", nf);
		} else {
			if (read_seq(&files[last], buf, &seq_before, &t_usec, &skipped_before))
				fail("reading the last open file before closing it");
			close(files[last].fd);
		}
		t_close = now_ns();
		printf("scale: %ld files closed in %.1f s\n", nf, (t_close - t0) / 1e9);
		armed = publisher_timer_armed();
		if (armed_open < 0) {
			printf("scale: no /proc/timer_list (%s): the timer is not checked\n",
			       strerror(-armed_open));
		} else if (armed_open != 1) {
			fail("the publisher's timer is not in /proc/timer_list while files are open");
		} else if (armed) {
			fail("the publisher's timer is still in /proc/timer_list after closing all files");
		}
		t_wait = t_close + 5 * interval * NSEC_PER_MSEC;
		while (now_ns() < t_wait) {
			sleep_ms(interval / 4);
			if (armed_open == 1 && publisher_timer_armed() == 1) {
				fail("the publisher's timer came back with no file open");
				break;
			}
		}
		path_join(path, sizeof(path), root, STREAM_FILE);
		t0 = now_ns();
		probe.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (probe.fd < 0 || read_seq(&probe, buf, &seq_after, &t_usec, &skipped_after)) {
			fail("open and read %s: %s", path, strerror(errno));
		} else {
			long grown = (long)(seq_after + skipped_after - seq_before - skipped_before);

			printf("scale: over %.1f s with no file open: publication_seq %llu -> %llu, "
			       "publications_skipped %llu -> %llu (a running publisher: about %d)\n",
			       (t0 - t_close) / 1e9, (unsigned long long)seq_before,
			       (unsigned long long)seq_after, (unsigned long long)skipped_before,
			       (unsigned long long)skipped_after, 5);
			/* one in flight at the close, one at once on the new open */
			if (grown > 2)
				fail("the publisher kept running with no file open: publication_seq + "
				     "publications_skipped grew by %ld", grown);
			/* a publication seen now ran before the close settled or after the open */
			if (seq_after > seq_before &&
			    (int64_t)t_usec * 1000 > t_close + interval * NSEC_PER_MSEC &&
			    (int64_t)t_usec * 1000 < t0)
				fail("publication %llu ran at %.3f s after the close, with no file open",
				     (unsigned long long)seq_after, (t_usec * 1000.0 - t_close) / 1e9);
		}
		if (probe.fd >= 0)
			close(probe.fd);
	}

	cleanup();
	if (failures) {
		printf("scale: FAIL: %d failures\n", failures);
		return EXIT_FAIL;
	}
	printf("scale: PASS\n");
	return EXIT_PASS;
}
