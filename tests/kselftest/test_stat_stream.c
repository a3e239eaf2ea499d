// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for cgroup v2 <ctrl>.stat.stream, <ctrl>.stat.stream.subtree and
 * the root's <ctrl>.stat.stream_interval, for cpu and memory.
 *
 * usage: test_stat_stream [TEST_NAME...]  (default: all)
 *
 * The tests of what every controller's stream does run for cpu, then for
 * memory, named "memory:TEST_NAME" there; the tests of each controller's
 * values run for it alone.
 *
 * A flusher only runs while its interval is not 0 and at least one of its
 * stream files is open, so every test that expects flushes keeps a stream
 * open.  Every test restores the interval it found.  Timing limits are
 * loose on purpose: these tests also run under emulation (qemu TCG).
 */

#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/cgroup_stat_stream.h>
#include <linux/limits.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "cgroup_util.h"

/* a controller's stream files, and a key its stream file prints */
struct stream_ctl {
	const char *name;
	const char *interval_file;
	const char *stream_file;
	const char *subtree_file;
	const char *key;
};

static const struct stream_ctl ctl_cpu = {
	"cpu", "cpu.stat.stream_interval", "cpu.stat.stream",
	"cpu.stat.stream.subtree", "usage_usec",
};

static const struct stream_ctl ctl_memory = {
	"memory", "memory.stat.stream_interval", "memory.stat.stream",
	"memory.stat.stream.subtree", "anon",
};

/* the controller the running test is about */
static const struct stream_ctl *ctl = &ctl_cpu;

#define INTERVAL_FILE		(ctl->interval_file)
#define STREAM_FILE		(ctl->stream_file)

#define USEC_PER_MSEC		1000LL

/* how late a flush may be seen by a woken reader, emulation included */
#define WAKE_LATENCY_USEC	(500 * USEC_PER_MSEC)

/* how long to wait for a flush that is due: generous, for emulation */
#define WAIT_MS			5000

/* how long a cycle that was running when streaming stopped may take */
#define INFLIGHT_USEC		(200 * USEC_PER_MSEC)

/* how long a CPU burner runs at most: tests kill it earlier */
#define BURN_SECONDS		20

struct stream_sample {
	long long usage_usec;
	long long user_usec;
	long long system_usec;
	long long seq;
	long long time_usec;
	long long missed;
};

static long long now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* Returns the interval in ms, or -1 if the file can't be read or parsed. */
static long get_interval(const char *root)
{
	char buf[64];
	char *end;
	long val;

	if (cg_read(root, INTERVAL_FILE, buf, sizeof(buf)))
		return -1;

	errno = 0;
	val = strtol(buf, &end, 10);
	if (errno || end == buf || strcmp(end, "\n"))
		return -1;

	return val;
}

/* Returns 0 on success, or -errno on failure. */
static int set_interval(const char *root, long ms)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", ms);
	return cg_write(root, INTERVAL_FILE, buf);
}

/* Restores @saved and turns a test's result into a failure if that fails. */
static int restore_interval(const char *root, long saved, int ret)
{
	if (saved < 0 || set_interval(root, saved)) {
		ksft_print_msg("can't restore interval %ld\n", saved);
		return KSFT_FAIL;
	}

	return ret;
}

/* Returns the value of the flat key @key in @buf, or -1 if it's missing. */
static long long stat_key(const char *buf, const char *key)
{
	size_t len = strlen(key);
	const char *line = buf;

	while (line && *line) {
		if (!strncmp(line, key, len) && line[len] == ' ')
			return strtoll(line + len + 1, NULL, 10);

		line = strchr(line, '\n');
		if (line)
			line++;
	}

	return -1;
}

static int parse_sample(const char *buf, struct stream_sample *s)
{
	if (ctl == &ctl_cpu) {
		s->usage_usec = stat_key(buf, "usage_usec");
		s->user_usec = stat_key(buf, "user_usec");
		s->system_usec = stat_key(buf, "system_usec");
	} else {
		/* the cpu fields stay 0; the controller's own key must be there */
		long long found = stat_key(buf, ctl->key) < 0 ? -1 : 0;

		s->usage_usec = found;
		s->user_usec = found;
		s->system_usec = found;
	}
	s->seq = stat_key(buf, CGROUP_STAT_STREAM_KEY_SEQ);
	s->time_usec = stat_key(buf, CGROUP_STAT_STREAM_KEY_TIME);
	s->missed = stat_key(buf, CGROUP_STAT_STREAM_KEY_MISSED);

	if (s->usage_usec < 0 || s->user_usec < 0 || s->system_usec < 0 ||
	    s->seq < 0 || s->time_usec < 0 || s->missed < 0) {
		ksft_print_msg("stream snapshot lacks a key:\n%s", buf);
		return -EINVAL;
	}

	return 0;
}

/* Reads one snapshot at offset 0: its length, or -errno on failure. */
static ssize_t read_stream(int fd, char *buf, size_t len)
{
	ssize_t ret;

	ret = pread(fd, buf, len - 1, 0);
	if (ret < 0)
		return -errno;

	buf[ret] = '\0';
	return ret;
}

/* Returns 0 on success, or -errno on failure. */
static int read_sample(int fd, struct stream_sample *s)
{
	char buf[BUF_SIZE];
	ssize_t ret;

	ret = read_stream(fd, buf, sizeof(buf));
	if (ret < 0)
		return ret;

	return parse_sample(buf, s);
}

/*
 * Returns 1 if @fd is readable within @timeout_ms, 0 if it isn't, -1 on
 * error or if poll reports POLLERR.
 */
static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {
		.fd = fd,
		.events = POLLIN,
	};
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);

	if (ret <= 0)
		return ret;
	if (pfd.revents & (POLLERR | POLLNVAL))
		return -1;

	return !!(pfd.revents & POLLIN);
}

/* Waits for the next flush on @fd and reads it: 0, or -1 on failure. */
static int wait_sample(int fd, int timeout_ms, struct stream_sample *s)
{
	int ret;

	ret = wait_readable(fd, timeout_ms);
	if (ret != 1) {
		ksft_print_msg("no wake-up within %d ms (poll: %d)\n",
			       timeout_ms, ret);
		return -1;
	}

	return read_sample(fd, s) ? -1 : 0;
}

/*
 * Runs @fn(@arg) in a child process and returns its exit status, or -1 if
 * it failed to start, was killed, or didn't exit within @timeout_ms.
 */
static int run_timed(int (*fn)(void *arg), void *arg, int timeout_ms)
{
	long long end = now_usec() + timeout_ms * USEC_PER_MSEC;
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		exit(fn(arg));

	for (;;) {
		pid_t ret = waitpid(pid, &status, WNOHANG);

		if (ret < 0)
			return -1;
		if (ret == pid)
			break;
		if (now_usec() > end) {
			ksft_print_msg("child still running after %d ms\n",
				       timeout_ms);
			kill(pid, SIGKILL);
			return -1;
		}
		usleep(10000);
	}

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int burn_cpu(const char *cgroup, void *arg)
{
	long long end = now_usec() + BURN_SECONDS * USEC_PER_SEC;

	while (now_usec() < end)
		;

	return 0;
}

static void stop_burner(pid_t pid)
{
	if (pid <= 0)
		return;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int open_file(const char *cgroup, const char *file)
{
	int fd;

	fd = cg_open(cgroup, file, O_RDONLY);
	if (fd < 0)
		ksft_print_msg("can't open %s/%s: %s\n", cgroup, file,
			       strerror(errno));

	return fd;
}

static int open_stream(const char *cgroup)
{
	return open_file(cgroup, STREAM_FILE);
}

static int drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int i = CAP_TO_INDEX(CAP_SYS_ADMIN);

	if (syscall(SYS_capget, &hdr, data))
		return -1;

	data[i].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[i].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[i].inheritable &= ~CAP_TO_MASK(CAP_SYS_ADMIN);

	return syscall(SYS_capset, &hdr, data);
}

/* A user other than root can't even open the interval for writing. */
static int open_interval_as_nobody(void *arg)
{
	char *path = arg;
	int fd;

	if (setgroups(0, NULL) ||
	    setresgid(TEST_UID, TEST_UID, TEST_UID) ||
	    setresuid(TEST_UID, TEST_UID, TEST_UID))
		return 2;

	fd = open(path, O_WRONLY);
	if (fd >= 0 || errno != EACCES) {
		ksft_print_msg("uid %d open for write: %s, expected EACCES\n",
			       TEST_UID, fd >= 0 ? "success" : strerror(errno));
		return 1;
	}

	return 0;
}

/* Root without CAP_SYS_ADMIN may open the interval but not write it. */
static int write_interval_without_cap(void *arg)
{
	char *path = arg;
	int fd;

	if (drop_cap_sys_admin())
		return 2;

	fd = open(path, O_WRONLY);
	if (fd < 0) {
		ksft_print_msg("open without CAP_SYS_ADMIN: %s\n",
			       strerror(errno));
		return 1;
	}

	if (write(fd, "500", 3) >= 0 || errno != EPERM) {
		ksft_print_msg("write without CAP_SYS_ADMIN: %s, expected EPERM\n",
			       strerror(errno));
		close(fd);
		return 1;
	}

	close(fd);
	return 0;
}

/* The check is against the opener's credentials, not the writer's. */
static int write_interval_opened_with_cap(void *arg)
{
	int fd = *(int *)arg;

	if (drop_cap_sys_admin())
		return 2;

	if (write(fd, "300", 3) != 3) {
		ksft_print_msg("write to a file opened with CAP_SYS_ADMIN: %s\n",
			       strerror(errno));
		return 1;
	}

	return 0;
}

/*
 * cpu.stat.stream_interval: boot default, accepted and refused values,
 * root-only file, privilege checks.
 */
static int test_stat_stream_interval(const char *root)
{
	static char * const bad[] = {
		"\n", "  ", "-5", "+5", "abc", "10abc", "0x10", "1 0",
		"99999999999999999999", "9", "3600001",
	};
	static const struct {
		char *in;
		long val;
	} good[] = {
		{ "0", 0 },
		{ "10", CGROUP_STAT_STREAM_INTERVAL_MIN_MS },
		{ "3600000", CGROUP_STAT_STREAM_INTERVAL_MAX_MS },
		{ "100\n", 100 },
		{ "250 ", 250 },
	};
	char path[PATH_MAX];
	int ret = KSFT_FAIL;
	char *cg = NULL;
	int fd = -1;
	long saved;
	int i, err;

	saved = get_interval(root);
	if (saved < 0) {
		ksft_print_msg("%s/%s doesn't read as \"N\\n\"\n", root,
			       INTERVAL_FILE);
		return KSFT_FAIL;
	}
	if (saved)
		ksft_print_msg("interval is %ld, not the boot default 0\n",
			       saved);

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		err = cg_write(root, INTERVAL_FILE, good[i].in);
		if (err || get_interval(root) != good[i].val) {
			ksft_print_msg("write \"%.*s\": %d, reads back %ld\n",
				       (int)strcspn(good[i].in, "\n"),
				       good[i].in, err, get_interval(root));
			goto cleanup;
		}
	}
	if (set_interval(root, 0) || cg_read_strcmp(root, INTERVAL_FILE, "0\n"))
		goto cleanup;

	/* the last good value (250) must survive every bad write */
	if (set_interval(root, 250))
		goto cleanup;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err = cg_write(root, INTERVAL_FILE, bad[i]);
		if (err != -EINVAL || get_interval(root) != 250) {
			ksft_print_msg("write #%d \"%.*s\": %d, not %d; reads back %ld\n",
				       i, (int)strcspn(bad[i], "\n"), bad[i],
				       err, -EINVAL, get_interval(root));
			goto cleanup;
		}
	}
	/* a NUL inside the write: what follows it is junk too */
	snprintf(path, sizeof(path), "%s/%s", root, INTERVAL_FILE);
	err = write_text(path, "10\0junk", 7);
	if (err != -EINVAL || get_interval(root) != 250) {
		ksft_print_msg("write \"10\\0junk\": %d, not %d; reads back %ld\n",
			       err, -EINVAL, get_interval(root));
		goto cleanup;
	}

	cg = cg_name(root, "stat_stream_interval");
	if (!cg || cg_create(cg))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/%s", cg, INTERVAL_FILE);
	if (!access(path, F_OK)) {
		ksft_print_msg("%s exists on a non-root cgroup\n", path);
		goto cleanup;
	}
	snprintf(path, sizeof(path), "%s/%s", cg, STREAM_FILE);
	if (access(path, R_OK)) {
		ksft_print_msg("%s: %s\n", path, strerror(errno));
		goto cleanup;
	}

	snprintf(path, sizeof(path), "%s/%s", root, INTERVAL_FILE);
	err = run_timed(open_interval_as_nobody, path, 5000);
	if (err) {
		ksft_print_msg("unprivileged open: child status %d\n", err);
		goto cleanup;
	}
	err = run_timed(write_interval_without_cap, path, 5000);
	if (err) {
		ksft_print_msg("write without CAP_SYS_ADMIN: child status %d\n",
			       err);
		goto cleanup;
	}
	if (get_interval(root) != 250) {
		ksft_print_msg("unprivileged writers changed the interval to %ld\n",
			       get_interval(root));
		goto cleanup;
	}

	fd = open(path, O_WRONLY);
	if (fd < 0)
		goto cleanup;
	err = run_timed(write_interval_opened_with_cap, &fd, 5000);
	if (err || get_interval(root) != 300) {
		ksft_print_msg("write via the opener's fd: status %d, interval %ld\n",
			       err, get_interval(root));
		goto cleanup;
	}

	ret = KSFT_PASS;

cleanup:
	if (fd >= 0)
		close(fd);
	cg_destroy(cg);
	free(cg);
	return restore_interval(root, saved, ret);
}

#define POLL_INTERVAL_MS	100
#define POLL_WINDOW_MS		2000

/*
 * Checks that the deadlines between @a and @b (fixed rate, @interval_ms)
 * are all accounted for: each either flushed (flush_seq) or was skipped
 * (flush_missed).  A skipped deadline may be counted as soon as it passes,
 * before the next flush: up to @b_read, when @b was read.
 */
static int check_accounting(const struct stream_sample *a,
			    const struct stream_sample *b, long long b_read,
			    long interval_ms)
{
	double lo, hi, slack;
	long long cycles;

	cycles = (b->seq - a->seq) + (b->missed - a->missed);
	lo = (double)(b->time_usec - a->time_usec) /
	     (interval_ms * USEC_PER_MSEC);
	hi = (double)(b_read - a->time_usec) / (interval_ms * USEC_PER_MSEC);
	slack = hi / 10 > 2 ? hi / 10 : 2;

	if (cycles < lo - slack || cycles > hi + slack) {
		ksft_print_msg("%lld flushed + %lld missed in %lld..%lld us at %ld ms\n",
			       b->seq - a->seq, b->missed - a->missed,
			       b->time_usec - a->time_usec,
			       b_read - a->time_usec, interval_ms);
		return -1;
	}

	return 0;
}

/*
 * A cycle that was already running when the interval was set to 0 may
 * still complete (and wake) shortly after the write returned; no cycle
 * after it.
 */
static bool inflight_flush(const struct stream_sample *at_off,
			   const struct stream_sample *s, long long off)
{
	return s->seq == at_off->seq + 1 &&
	       s->time_usec <= off + INFLIGHT_USEC;
}

/* Turns streaming off and checks that @fd stays quiet for @quiet_ms. */
static int check_quiet_after_off(const char *root, int fd, int quiet_ms)
{
	struct stream_sample before, s;
	long long off;
	int ret;

	if (set_interval(root, 0))
		return -1;
	off = now_usec();

	if (read_sample(fd, &before))
		return -1;

	ret = wait_readable(fd, quiet_ms);
	if (ret == 1) {
		if (read_sample(fd, &s))
			return -1;
		if (!inflight_flush(&before, &s, off)) {
			ksft_print_msg("flush %lld at %lld us after interval 0 at %lld us\n",
				       s.seq, s.time_usec, off);
			return -1;
		}
		ret = wait_readable(fd, quiet_ms);
	}
	if (ret) {
		ksft_print_msg("readable while the interval is 0 (poll: %d)\n",
			       ret);
		return -1;
	}

	return 0;
}

/*
 * poll() wakes once per cycle with a new flush, never without one, and not
 * at all while the interval is 0.
 */
static int test_stat_stream_poll(const char *root)
{
	struct stream_sample base, last, s;
	int ret = KSFT_FAIL;
	long long end, left, last_read = 0;
	int wakes = 0, lagged = 0;
	long min_wakes, max_wakes;
	long saved;
	int fd, r;

	saved = get_interval(root);
	fd = open_stream(root);
	if (fd < 0)
		goto cleanup;

	if (set_interval(root, POLL_INTERVAL_MS))
		goto cleanup;

	/* a fresh open is readable if anything was ever flushed: consume */
	if (read_sample(fd, &base))
		goto cleanup;
	if (wait_sample(fd, WAIT_MS, &base))
		goto cleanup;

	last = base;
	last_read = now_usec();
	end = last_read + POLL_WINDOW_MS * USEC_PER_MSEC;
	while ((left = end - now_usec()) > 0) {
		r = wait_readable(fd, left / USEC_PER_MSEC + 1);
		if (r < 0)
			goto cleanup;
		if (!r)
			continue;

		if (read_sample(fd, &s))
			goto cleanup;
		last_read = now_usec();
		if (s.seq <= last.seq) {
			ksft_print_msg("woken, but flush_seq %lld was read already\n",
				       s.seq);
			goto cleanup;
		}
		lagged += s.seq - last.seq - 1;
		wakes++;
		last = s;

		/* just read: not readable again until the next flush */
		r = wait_readable(fd, 0);
		if (r < 0)
			goto cleanup;
		if (r) {
			if (read_sample(fd, &s))
				goto cleanup;
			last_read = now_usec();
			if (s.seq == last.seq) {
				ksft_print_msg("readable right after reading flush_seq %lld\n",
					       s.seq);
				goto cleanup;
			}
			lagged += s.seq - last.seq - 1;
			wakes++;
			last = s;
		}
	}

	/* cycles the flusher reports as missed can't wake anyone */
	min_wakes = (POLL_WINDOW_MS / POLL_INTERVAL_MS -
		     (last.missed - base.missed)) * 65 / 100;
	max_wakes = POLL_WINDOW_MS / POLL_INTERVAL_MS * 135 / 100;
	ksft_print_msg("%d wake-ups in %d ms at %d ms, %d flushes not seen, %lld missed\n",
		       wakes, POLL_WINDOW_MS, POLL_INTERVAL_MS, lagged,
		       last.missed - base.missed);
	if (wakes < min_wakes || wakes > max_wakes) {
		ksft_print_msg("expected %ld..%ld wake-ups\n", min_wakes,
			       max_wakes);
		goto cleanup;
	}
	if (check_accounting(&base, &last, last_read, POLL_INTERVAL_MS))
		goto cleanup;

	if (check_quiet_after_off(root, fd, 1000))
		goto cleanup;

	ret = KSFT_PASS;

cleanup:
	if (fd >= 0)
		close(fd);
	return restore_interval(root, saved, ret);
}

#define IDLE_INTERVAL_MS	400
#define IDLE_CLOSED_MS		1600
/* "at once" under emulation: well below one interval */
#define IDLE_RESTART_USEC	(200 * USEC_PER_MSEC)

/*
 * The flusher doesn't run while no stream is open, and the first open
 * starts it again at once.
 */
static int test_stat_stream_idle(const char *root)
{
	struct stream_sample s, before;
	long long closed, reopened;
	int ret = KSFT_FAIL;
	long saved;
	int fd;

	saved = get_interval(root);
	fd = open_stream(root);
	if (fd < 0)
		goto cleanup;
	if (set_interval(root, IDLE_INTERVAL_MS) || read_sample(fd, &s))
		goto cleanup;
	if (wait_sample(fd, WAIT_MS, &s) || wait_sample(fd, WAIT_MS, &before))
		goto cleanup;

	close(fd);
	closed = now_usec();
	usleep(IDLE_CLOSED_MS * 1000);

	reopened = now_usec();
	fd = open_stream(root);
	if (fd < 0 || read_sample(fd, &s))
		goto cleanup;

	/* one flush may have raced with close(), one may follow open() */
	if (s.seq > before.seq + 2) {
		ksft_print_msg("%lld flushes in %lld us without an open stream\n",
			       s.seq - before.seq, reopened - closed);
		goto cleanup;
	}

	/* the last flush is older than one interval: the next comes at once */
	if (s.time_usec < reopened && wait_sample(fd, WAIT_MS, &s))
		goto cleanup;
	if (s.time_usec - reopened > IDLE_RESTART_USEC) {
		ksft_print_msg("first flush %lld us after the first open\n",
			       s.time_usec - reopened);
		goto cleanup;
	}

	ret = KSFT_PASS;

cleanup:
	if (fd >= 0)
		close(fd);
	return restore_interval(root, saved, ret);
}

/* Returns the next key of flat-keyed @*pos in @key, or NULL at the end. */
static const char *next_key(const char **pos, char *key, size_t len)
{
	const char *p = *pos, *sp, *nl;

	if (!*p)
		return NULL;

	sp = strchr(p, ' ');
	nl = strchr(p, '\n');
	if (!nl)
		nl = p + strlen(p);
	if (!sp || sp > nl)
		sp = nl;

	snprintf(key, len, "%.*s", (int)(sp - p), p);
	*pos = *nl ? nl + 1 : nl;
	return key;
}

/*
 * cpu.stat.stream prints the keys of cpu.stat, in the same order, and then
 * flush_seq, flush_time_usec and flush_missed.
 */
static int check_keys(const char *cgroup)
{
	static const char * const extra[] = {
		CGROUP_STAT_STREAM_KEY_SEQ,
		CGROUP_STAT_STREAM_KEY_TIME,
		CGROUP_STAT_STREAM_KEY_MISSED,
	};
	char stat[BUF_SIZE], stream[BUF_SIZE];
	char key[64], skey[64];
	const char *p, *q;
	int i;

	if (cg_read(cgroup, "cpu.stat", stat, sizeof(stat)) ||
	    cg_read(cgroup, STREAM_FILE, stream, sizeof(stream)))
		return -1;

	p = stat;
	q = stream;
	while (next_key(&p, key, sizeof(key))) {
		if (!next_key(&q, skey, sizeof(skey)) || strcmp(key, skey))
			goto mismatch;
	}
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		if (!next_key(&q, skey, sizeof(skey)) || strcmp(extra[i], skey))
			goto mismatch;
	}
	if (next_key(&q, skey, sizeof(skey)))
		goto mismatch;

	return 0;

mismatch:
	ksft_print_msg("%s: keys differ from cpu.stat's\ncpu.stat:\n%scpu.stat.stream:\n%s",
		       cgroup, stat, stream);
	return -1;
}

/* Whether the space-separated list in @cgroup's @file has @word. */
static bool has_word(const char *cgroup, const char *file, const char *word)
{
	char buf[BUF_SIZE];
	char *tok, *save;

	if (cg_read(cgroup, file, buf, sizeof(buf)))
		return false;

	for (tok = strtok_r(buf, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, word))
			return true;

	return false;
}

#define VALUES_INTERVAL_MS	100
#define VALUES_SAMPLES		6

/*
 * The stream shows what cpu.stat shows, as of the last flush: the same
 * keys, usage that grows under load and trails cpu.stat's by about the
 * time since the flush, user + system close to usage, and a flush time
 * from CLOCK_MONOTONIC.
 */
static int test_stat_stream_values(const char *root)
{
	char *parent = NULL, *child = NULL, *cg = NULL;
	struct stream_sample first, prev, s;
	bool enabled_cpu = false;
	char stat[BUF_SIZE];
	int ret = KSFT_FAIL;
	long long t_read, t_stat, usage, lag, diff;
	long long prev_stat_usage = 0, prev_stat_time = 0;
	pid_t burner = 0;
	long saved;
	int fd = -1;
	int i;

	saved = get_interval(root);

	/* with and without the cpu controller's extra keys */
	if (has_word(root, "cgroup.controllers", "cpu") &&
	    !has_word(root, "cgroup.subtree_control", "cpu")) {
		if (cg_write(root, "cgroup.subtree_control", "+cpu"))
			ksft_print_msg("can't enable the cpu controller\n");
		else
			enabled_cpu = true;
	}
	parent = cg_name(root, "stat_stream_values");
	child = parent ? cg_name(parent, "child") : NULL;
	if (!child || cg_create(parent) || cg_create(child))
		goto cleanup;
	if (check_keys(root) || check_keys(parent) || check_keys(child))
		goto cleanup;

	cg = child;
	fd = open_stream(cg);
	if (fd < 0 || set_interval(root, VALUES_INTERVAL_MS))
		goto cleanup;

	burner = cg_run_nowait(cg, burn_cpu, NULL);
	if (burner < 0)
		goto cleanup;

	if (read_sample(fd, &first) || wait_sample(fd, WAIT_MS, &first))
		goto cleanup;

	prev = first;
	for (i = 0; i < VALUES_SAMPLES; i++) {
		if (wait_sample(fd, WAIT_MS, &s))
			goto cleanup;
		t_read = now_usec();
		if (cg_read(cg, "cpu.stat", stat, sizeof(stat)))
			goto cleanup;
		t_stat = now_usec();
		usage = stat_key(stat, "usage_usec");

		if (s.seq <= prev.seq || s.usage_usec < prev.usage_usec) {
			ksft_print_msg("flush %lld usage %lld after flush %lld usage %lld\n",
				       s.seq, s.usage_usec, prev.seq,
				       prev.usage_usec);
			goto cleanup;
		}

		if (s.time_usec > t_read ||
		    t_read - s.time_usec > WAKE_LATENCY_USEC) {
			ksft_print_msg("flush_time_usec %lld, CLOCK_MONOTONIC %lld\n",
				       s.time_usec, t_read);
			goto cleanup;
		}

		/*
		 * Not stale: the flush includes what the previous cpu.stat
		 * read had flushed before it (10 ms: time may be taken late).
		 */
		if (prev_stat_time + 10 * USEC_PER_MSEC < s.time_usec &&
		    s.usage_usec < prev_stat_usage) {
			ksft_print_msg("stream usage %lld at %lld us < cpu.stat %lld at %lld us\n",
				       s.usage_usec, s.time_usec,
				       prev_stat_usage, prev_stat_time);
			goto cleanup;
		}

		/*
		 * One burner: cpu.stat is ahead by about the time since, plus
		 * runtime not yet accounted at the flush (one tick, or much
		 * more in a starved VM that lost ticks).
		 */
		lag = t_stat - s.time_usec;
		diff = usage - s.usage_usec;
		if (diff < 0 || diff > lag + lag / 4 + WAKE_LATENCY_USEC) {
			ksft_print_msg("cpu.stat usage %lld, stream %lld, %lld us after flush\n",
				       usage, s.usage_usec, lag);
			goto cleanup;
		}
		prev_stat_usage = usage;
		prev_stat_time = t_stat;

		diff = s.user_usec + s.system_usec - s.usage_usec;
		if (llabs(diff) > s.usage_usec / 10 + 20 * USEC_PER_MSEC) {
			ksft_print_msg("user %lld + system %lld vs usage %lld\n",
				       s.user_usec, s.system_usec,
				       s.usage_usec);
			goto cleanup;
		}

		prev = s;
	}

	/* the burner ran (a starved VM gave it 14% of one CPU once) */
	if ((prev.usage_usec - first.usage_usec) * 10 <
	    prev.time_usec - first.time_usec) {
		ksft_print_msg("usage grew by %lld us in %lld us of burning\n",
			       prev.usage_usec - first.usage_usec,
			       prev.time_usec - first.time_usec);
		goto cleanup;
	}

	ret = KSFT_PASS;

cleanup:
	stop_burner(burner);
	if (fd >= 0)
		close(fd);
	cg_destroy(child);
	cg_destroy(parent);
	free(child);
	free(parent);
	if (enabled_cpu)
		cg_write(root, "cgroup.subtree_control", "-cpu");
	return restore_interval(root, saved, ret);
}

struct nonblock_fds {
	int fd[2];
};

/* pread returns at once whether or not a flush is pending */
static int read_without_blocking(void *arg)
{
	struct nonblock_fds *fds = arg;
	char buf[BUF_SIZE];
	long long start;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(fds->fd); i++) {
		for (j = 0; j < 2; j++) {
			start = now_usec();
			if (read_stream(fds->fd[i], buf, sizeof(buf)) <= 0)
				return 1;
			if (now_usec() - start > WAKE_LATENCY_USEC) {
				ksft_print_msg("pread took %lld us\n",
					       now_usec() - start);
				return 1;
			}
		}
	}

	return 0;
}

/* Returns how many lines of flat-keyed @buf have the key @key. */
static int key_count(const char *buf, const char *key)
{
	size_t len = strlen(key);
	const char *line = buf;
	int n = 0;

	while (line && *line) {
		if (!strncmp(line, key, len) && line[len] == ' ')
			n++;

		line = strchr(line, '\n');
		if (line)
			line++;
	}

	return n;
}

/* read() in small pieces until EOF, like cat: the length, or -1 */
static ssize_t read_sequential(int fd, char *buf, size_t len)
{
	size_t done = 0;
	ssize_t ret;

	do {
		if (done + 7 >= len)
			return -1;
		ret = read(fd, buf + done, 7);
		if (ret < 0)
			return -1;
		done += ret;
	} while (ret);

	buf[done] = '\0';
	return done;
}

/*
 * Reads: flush_seq grows from wake to wake, open files don't share their
 * "seen" state, read never blocks, and a sequential read gives exactly one
 * snapshot.
 */
static int test_stat_stream_reads(const char *root)
{
	char seq_text[BUF_SIZE], snap[BUF_SIZE];
	struct stream_sample a, b, s;
	struct nonblock_fds nb = { { -1, -1 } };
	int ret = KSFT_FAIL;
	int fa = -1, fb = -1, fc = -1;
	char tail[8];
	long saved;
	int i, err;

	saved = get_interval(root);
	fa = open_stream(root);
	fb = open_stream(root);
	if (fa < 0 || fb < 0 || set_interval(root, 100))
		goto cleanup;

	if (read_sample(fa, &a))
		goto cleanup;
	for (i = 0; i < 5; i++) {
		if (wait_sample(fa, WAIT_MS, &s))
			goto cleanup;
		if (s.seq <= a.seq) {
			ksft_print_msg("flush_seq %lld after %lld\n", s.seq,
				       a.seq);
			goto cleanup;
		}
		a = s;
	}

	/* fb never read: still readable however often fa was read */
	if (wait_readable(fb, 0) != 1 || read_sample(fb, &b)) {
		ksft_print_msg("reads on one open file hid a flush from another\n");
		goto cleanup;
	}
	do {
		if (wait_sample(fa, WAIT_MS, &a))
			goto cleanup;
	} while (a.seq <= b.seq);

	/* stop, let a running cycle finish: the latest flush stays put */
	if (set_interval(root, 0))
		goto cleanup;
	usleep(INFLIGHT_USEC + 100 * USEC_PER_MSEC);
	if (read_sample(fa, &a))
		goto cleanup;
	if (wait_readable(fb, 0) != 1) {
		ksft_print_msg("flush %lld read on one file: not readable on another (%lld)\n",
			       a.seq, b.seq);
		goto cleanup;
	}
	if (read_sample(fb, &b) || b.seq != a.seq ||
	    wait_readable(fa, 0) || wait_readable(fb, 0)) {
		ksft_print_msg("both files read flush_seq %lld/%lld: still readable\n",
			       a.seq, b.seq);
		goto cleanup;
	}

	/* with the interval off, nothing is pending: reads still return */
	nb.fd[0] = open_stream(root);
	nb.fd[1] = cg_open(root, STREAM_FILE, O_RDONLY | O_NONBLOCK);
	if (nb.fd[0] < 0 || nb.fd[1] < 0)
		goto cleanup;
	err = run_timed(read_without_blocking, &nb, 5000);
	if (err) {
		ksft_print_msg("reading without a pending flush: child status %d\n",
			       err);
		goto cleanup;
	}

	/* cat: one snapshot, then EOF; the same as a pread */
	fc = open_stream(root);
	if (fc < 0 || read_sequential(fc, seq_text, sizeof(seq_text)) <= 0)
		goto cleanup;
	if (read(fc, tail, sizeof(tail)) != 0) {
		ksft_print_msg("read after EOF returned data\n");
		goto cleanup;
	}
	if (read_stream(fc, snap, sizeof(snap)) <= 0 || strcmp(seq_text, snap)) {
		ksft_print_msg("sequential read:\n%spread:\n%s", seq_text,
			       snap);
		goto cleanup;
	}
	if (key_count(seq_text, CGROUP_STAT_STREAM_KEY_SEQ) != 1 ||
	    key_count(seq_text, "usage_usec") != 1 ||
	    parse_sample(seq_text, &s)) {
		ksft_print_msg("not one snapshot:\n%s", seq_text);
		goto cleanup;
	}
	if (lseek(fc, 0, SEEK_SET) || read_sequential(fc, snap, sizeof(snap)) <= 0 ||
	    strcmp(seq_text, snap)) {
		ksft_print_msg("read after lseek(0):\n%s", snap);
		goto cleanup;
	}

	ret = KSFT_PASS;

cleanup:
	for (i = 0; i < ARRAY_SIZE(nb.fd); i++)
		if (nb.fd[i] >= 0)
			close(nb.fd[i]);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	if (fc >= 0)
		close(fc);
	return restore_interval(root, saved, ret);
}

#define RMDIR_FDS		6
#define RMDIR_THREADS		3
#define RMDIR_POLL_MS		20000

struct poller {
	pthread_t thread;
	int fd;
	short revents;
	int err;
	bool started;
};

/*
 * Polls until the cgroup is gone. Returns 0 if poll reported POLLERR and a
 * read then failed with ENODEV.
 */
static int poll_until_removed(int fd, short *revents)
{
	struct pollfd pfd = {
		.fd = fd,
		.events = POLLIN,
	};
	char buf[BUF_SIZE];
	int ret;

	for (;;) {
		ret = poll(&pfd, 1, RMDIR_POLL_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return -1;
		*revents = pfd.revents;
		if (pfd.revents & POLLERR)
			break;
		/* ENODEV: removed after poll returned, poll again */
		ret = read_stream(fd, buf, sizeof(buf));
		if (ret < 0 && ret != -ENODEV)
			return -1;
	}

	return read_stream(fd, buf, sizeof(buf)) == -ENODEV ? 0 : -1;
}

static void *poller_thread(void *arg)
{
	struct poller *p = arg;

	p->err = poll_until_removed(p->fd, &p->revents);
	return NULL;
}

static int poller_process(void *arg)
{
	short revents = 0;

	return poll_until_removed(*(int *)arg, &revents) ? 1 : 0;
}

static int remove_cgroup(void *arg)
{
	return rmdir(arg) ? errno : 0;
}

/* Waits up to @timeout_ms for child @pid: its exit status, or -1. */
static int wait_child(pid_t pid, int timeout_ms)
{
	long long end = now_usec() + timeout_ms * USEC_PER_MSEC;
	int status;
	pid_t ret;

	while ((ret = waitpid(pid, &status, WNOHANG)) == 0) {
		if (now_usec() > end) {
			/* it waits in poll(): killable */
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
		usleep(10000);
	}
	if (ret < 0)
		return -1;

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One rmdir with pollers and idle readers; @interval_ms may be 0. */
static int rmdir_with_readers(const char *root, long interval_ms)
{
	struct poller pollers[RMDIR_THREADS] = {};
	struct timespec deadline;
	int fds[RMDIR_FDS];
	long long start, took;
	char buf[BUF_SIZE];
	int ret = -1;
	pid_t child = -1;
	char *cg;
	int i, err;

	for (i = 0; i < RMDIR_FDS; i++)
		fds[i] = -1;

	cg = cg_name(root, "stat_stream_rmdir");
	if (!cg || cg_create(cg))
		goto cleanup;
	for (i = 0; i < RMDIR_FDS; i++) {
		fds[i] = open_stream(cg);
		if (fds[i] < 0 || read_stream(fds[i], buf, sizeof(buf)) <= 0)
			goto cleanup;
	}
	if (set_interval(root, interval_ms))
		goto cleanup;

	/* fds[0..2]: threads in poll, fds[3]: another process, rest idle */
	for (i = 0; i < RMDIR_THREADS; i++) {
		pollers[i].fd = fds[i];
		if (pthread_create(&pollers[i].thread, NULL, poller_thread,
				   &pollers[i]))
			goto cleanup;
		pollers[i].started = true;
	}
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child < 0)
		goto cleanup;
	if (child == 0)
		exit(poller_process(&fds[RMDIR_THREADS]));

	/* let them all get into poll() */
	usleep(300000);

	start = now_usec();
	err = run_timed(remove_cgroup, cg, 10000);
	took = now_usec() - start;
	ksft_print_msg("rmdir with %d open streams, interval %ld: %d after %lld us\n",
		       RMDIR_FDS, interval_ms, err, took);
	if (err < 0) {
		/* rmdir is stuck: trying again would hang this test too */
		free(cg);
		cg = NULL;
	}
	if (err)
		goto cleanup;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	for (i = 0; i < RMDIR_THREADS; i++) {
		if (pthread_timedjoin_np(pollers[i].thread, NULL, &deadline)) {
			ksft_print_msg("poller %d still in poll() after rmdir\n",
				       i);
			goto cleanup;
		}
		pollers[i].started = false;
		if (pollers[i].err || !(pollers[i].revents & POLLERR)) {
			ksft_print_msg("poller %d: revents %#x, read didn't fail with ENODEV\n",
				       i, pollers[i].revents);
			goto cleanup;
		}
	}
	err = wait_child(child, 5000);
	child = -1;
	if (err) {
		ksft_print_msg("polling process: status %d\n", err);
		goto cleanup;
	}

	for (i = 0; i < RMDIR_FDS; i++) {
		err = read_stream(fds[i], buf, sizeof(buf));
		if (err != -ENODEV) {
			ksft_print_msg("read after rmdir: %d, expected %d\n",
				       err, -ENODEV);
			goto cleanup;
		}
		err = close(fds[i]);
		fds[i] = -1;
		if (err) {
			ksft_print_msg("close after rmdir: %s\n",
				       strerror(errno));
			goto cleanup;
		}
	}

	ret = 0;

cleanup:
	for (i = 0; i < RMDIR_THREADS; i++) {
		if (pollers[i].started) {
			pthread_cancel(pollers[i].thread);
			pthread_join(pollers[i].thread, NULL);
		}
	}
	if (child > 0)
		wait_child(child, 0);
	for (i = 0; i < RMDIR_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	cg_destroy(cg);
	free(cg);
	return ret;
}

/*
 * rmdir doesn't wait for stream readers; pollers wake with POLLERR and
 * reads fail with ENODEV.
 */
static int test_stat_stream_rmdir(const char *root)
{
	int ret = KSFT_FAIL;
	long saved;

	saved = get_interval(root);
	if (rmdir_with_readers(root, 0) || rmdir_with_readers(root, 50))
		goto cleanup;

	ret = KSFT_PASS;

cleanup:
	return restore_interval(root, saved, ret);
}

#define STRESS_CGROUPS		50
#define STRESS_FDS_PER_CG	4
#define STRESS_FDS		(STRESS_CGROUPS * STRESS_FDS_PER_CG)
#define STRESS_PHASE_MS		600
#define STRESS_QUIET_MS		300

struct stress_fd {
	int fd;
	long long seq;
	long wakes;
};

struct stress {
	const char *root;
	struct stress_fd fds[STRESS_FDS];
	int epfd;
	int ctl;		/* not in the epoll set: global flush state */
	long extra_wakes;
};

/* Reads every fd epoll reports; counts wakes that show no new flush. */
static int stress_wait(struct stress *st, int timeout_ms)
{
	struct epoll_event evs[STRESS_FDS];
	struct stream_sample s;
	int i, n;

	n = epoll_wait(st->epfd, evs, STRESS_FDS, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;

	for (i = 0; i < n; i++) {
		struct stress_fd *f = &st->fds[evs[i].data.u32];

		if (evs[i].events & EPOLLERR) {
			ksft_print_msg("fd %u: EPOLLERR\n", evs[i].data.u32);
			return -1;
		}
		if (read_sample(f->fd, &s))
			return -1;
		if (s.seq <= f->seq) {
			if (!st->extra_wakes++)
				ksft_print_msg("fd %u woken at flush_seq %lld, already read\n",
					       evs[i].data.u32, s.seq);
		}
		f->seq = s.seq;
		f->wakes++;
	}

	return n;
}

/* One phase with the interval on: every flush is accounted for. */
static int stress_on(struct stress *st, long interval_ms)
{
	struct stream_sample at_set, first, s;
	long long set, end, left, s_read = 0;
	bool have_first = false;

	if (read_sample(st->ctl, &at_set) || set_interval(st->root, interval_ms))
		return -1;
	set = now_usec();
	end = set + STRESS_PHASE_MS * USEC_PER_MSEC;

	while ((left = end - now_usec()) > 0) {
		if (stress_wait(st, left / USEC_PER_MSEC + 1) < 0)
			return -1;
		if (read_sample(st->ctl, &s))
			return -1;
		s_read = now_usec();
		if (!have_first && s.seq > at_set.seq) {
			first = s;
			have_first = true;
		}
	}

	if (!have_first) {
		ksft_print_msg("no flush in %d ms at %ld ms\n",
			       STRESS_PHASE_MS, interval_ms);
		return -1;
	}
	/* "takes effect at once": the next flush is one interval away */
	if (first.time_usec - set > interval_ms * USEC_PER_MSEC +
				    4 * WAKE_LATENCY_USEC) {
		ksft_print_msg("first flush %lld us after setting %ld ms\n",
			       first.time_usec - set, interval_ms);
		return -1;
	}

	return check_accounting(&first, &s, s_read, interval_ms);
}

/*
 * Interval off: after the last flush is read, every fd has seen it (no
 * missed wake-up) and none is readable.
 */
static int stress_off(struct stress *st)
{
	struct stream_sample at_off, s;
	long long off;
	int i, n;

	if (set_interval(st->root, 0))
		return -1;
	off = now_usec();
	if (read_sample(st->ctl, &at_off))
		return -1;

	do {
		n = stress_wait(st, STRESS_QUIET_MS);
		if (n < 0)
			return -1;
	} while (n);

	if (read_sample(st->ctl, &s))
		return -1;
	if (s.seq != at_off.seq && !inflight_flush(&at_off, &s, off)) {
		ksft_print_msg("flush %lld at %lld us after interval 0 at %lld us\n",
			       s.seq, s.time_usec, off);
		return -1;
	}

	for (i = 0; i < STRESS_FDS; i++) {
		if (st->fds[i].seq != s.seq) {
			ksft_print_msg("fd %d: last woken for flush_seq %lld, latest is %lld\n",
				       i, st->fds[i].seq, s.seq);
			return -1;
		}
		if (wait_readable(st->fds[i].fd, 0)) {
			ksft_print_msg("fd %d readable while the interval is 0\n",
				       i);
			return -1;
		}
	}

	return 0;
}

/*
 * 200 streams of 50 cgroups in one epoll set while the interval changes
 * and streaming goes off and on: no wake-up without a new flush, no flush
 * without a wake-up, nothing while off.
 */
static int test_stat_stream_stress(const char *root)
{
	static const long phases[] = {
		50, 100, 0, 200, 50, 0, 100, 200, 0, 50, 0,
	};
	char *cgs[STRESS_CGROUPS] = {};
	struct epoll_event ev = { .events = EPOLLIN };
	struct stress *st;
	int ret = KSFT_FAIL;
	long saved;
	long min_wakes = -1, max_wakes = 0;
	int i, j;

	st = calloc(1, sizeof(*st));
	if (!st)
		return KSFT_FAIL;
	st->root = root;
	st->ctl = -1;
	for (i = 0; i < STRESS_FDS; i++)
		st->fds[i].fd = -1;

	saved = get_interval(root);
	st->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epfd < 0)
		goto cleanup;
	st->ctl = open_stream(root);
	if (st->ctl < 0)
		goto cleanup;

	for (i = 0; i < STRESS_CGROUPS; i++) {
		cgs[i] = cg_name_indexed(root, "stat_stream_stress", i);
		if (!cgs[i] || cg_create(cgs[i]))
			goto cleanup;
		for (j = 0; j < STRESS_FDS_PER_CG; j++) {
			struct stress_fd *f = &st->fds[i * STRESS_FDS_PER_CG + j];

			f->fd = open_stream(cgs[i]);
			if (f->fd < 0)
				goto cleanup;
			ev.data.u32 = f - st->fds;
			if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, f->fd, &ev))
				goto cleanup;
		}
	}

	for (i = 0; i < ARRAY_SIZE(phases); i++) {
		if (phases[i] ? stress_on(st, phases[i]) : stress_off(st))
			goto cleanup;
		if (st->extra_wakes) {
			ksft_print_msg("%ld wake-ups without a new flush\n",
				       st->extra_wakes);
			goto cleanup;
		}
	}

	for (i = 0; i < STRESS_FDS; i++) {
		if (min_wakes < 0 || st->fds[i].wakes < min_wakes)
			min_wakes = st->fds[i].wakes;
		if (st->fds[i].wakes > max_wakes)
			max_wakes = st->fds[i].wakes;
	}
	ksft_print_msg("%d fds: %ld..%ld wake-ups each\n", STRESS_FDS,
		       min_wakes, max_wakes);

	ret = KSFT_PASS;

cleanup:
	for (i = 0; i < STRESS_FDS; i++)
		if (st->fds[i].fd >= 0)
			close(st->fds[i].fd);
	for (i = 0; i < STRESS_CGROUPS; i++) {
		cg_destroy(cgs[i]);
		free(cgs[i]);
	}
	if (st->ctl >= 0)
		close(st->ctl);
	if (st->epfd >= 0)
		close(st->epfd);
	free(st);
	return restore_interval(root, saved, ret);
}

#define NEW_CG_INTERVAL_MS	100

/*
 * A cgroup created while streaming runs gets a working stream: it wakes,
 * starts at zero and grows under load.
 */
static int test_stat_stream_new_cgroup(const char *root)
{
	struct stream_sample s, at_create, start;
	int ret = KSFT_FAIL;
	int rfd = -1, fd = -1;
	pid_t burner = 0;
	char *cg = NULL;
	long saved;
	int i;

	saved = get_interval(root);
	rfd = open_stream(root);
	if (rfd < 0 || set_interval(root, NEW_CG_INTERVAL_MS))
		goto cleanup;
	if (read_sample(rfd, &s) || wait_sample(rfd, WAIT_MS, &s) ||
	    wait_sample(rfd, WAIT_MS, &at_create))
		goto cleanup;

	cg = cg_name(root, "stat_stream_new");
	if (!cg || cg_create(cg))
		goto cleanup;
	fd = open_stream(cg);
	if (fd < 0 || read_sample(fd, &s))
		goto cleanup;

	/* no task has run in it yet */
	if (wait_sample(fd, WAIT_MS, &start))
		goto cleanup;
	if (start.seq <= at_create.seq || start.usage_usec > 1000) {
		ksft_print_msg("new cgroup: flush_seq %lld (root saw %lld), usage %lld\n",
			       start.seq, at_create.seq, start.usage_usec);
		goto cleanup;
	}

	burner = cg_run_nowait(cg, burn_cpu, NULL);
	if (burner < 0)
		goto cleanup;
	for (i = 0; i < 5; i++)
		if (wait_sample(fd, WAIT_MS, &s))
			goto cleanup;

	if ((s.usage_usec - start.usage_usec) * 10 <
	    s.time_usec - start.time_usec) {
		ksft_print_msg("new cgroup: usage %lld -> %lld in %lld us\n",
			       start.usage_usec, s.usage_usec,
			       s.time_usec - start.time_usec);
		goto cleanup;
	}

	ret = KSFT_PASS;

cleanup:
	stop_burner(burner);
	if (fd >= 0)
		close(fd);
	if (rfd >= 0)
		close(rfd);
	cg_destroy(cg);
	free(cg);
	return restore_interval(root, saved, ret);
}

static pid_t run_nowait(int (*fn)(void *arg), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		exit(fn(arg));
	return pid;
}

/* Returns a task's voluntary context switches, or -1. */
static long long voluntary_switches(pid_t pid)
{
	char path[64], buf[4096], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	return p ? strtoll(p + 25, NULL, 10) : -1;
}

/* Returns 1 once @pid sleeps (state S) within @timeout_ms, else 0. */
static int wait_sleeping(pid_t pid, int timeout_ms)
{
	char path[64], buf[512], *p;
	long long end = now_usec() + timeout_ms * USEC_PER_MSEC;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	while (now_usec() < end) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return 0;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

#define UNRELATED_CGROUPS	50
#define UNRELATED_FDS		200
#define UNRELATED_INTERVAL_MS	60000

struct poll_many {
	struct pollfd pfd[UNRELATED_FDS];
};

static int poll_many_fn(void *arg)
{
	struct poll_many *pm = arg;

	/* nothing readable: one sleep until a flush, a removal or the kill */
	return poll(pm->pfd, UNRELATED_FDS, 60000) < 0 ? 1 : 0;
}

/*
 * Removing cgroups whose stream files nobody has open wakes no stream
 * poller: a process asleep in poll() on 200 stream fds of other cgroups
 * stays asleep across 50 rmdirs, between two flushes of a long interval.
 */
static int test_stat_stream_rmdir_unrelated(const char *root)
{
	char *cgs[UNRELATED_CGROUPS] = {}, name[64], *tmp = NULL;
	struct stream_sample before, after;
	struct poll_many pm;
	long long sw_before, sw_after;
	int ret = KSFT_FAIL;
	int i, ctl = -1, tries;
	pid_t child = 0;
	long saved;

	for (i = 0; i < UNRELATED_FDS; i++)
		pm.pfd[i].fd = -1;
	saved = get_interval(root);
	for (i = 0; i < UNRELATED_CGROUPS; i++) {
		snprintf(name, sizeof(name), "stat_stream_polled%d", i);
		cgs[i] = cg_name(root, name);
		if (!cgs[i] || cg_create(cgs[i]))
			goto cleanup;
	}
	for (i = 0; i < UNRELATED_FDS; i++) {
		pm.pfd[i].fd = open_stream(cgs[i % UNRELATED_CGROUPS]);
		pm.pfd[i].events = POLLIN;
		if (pm.pfd[i].fd < 0)
			goto cleanup;
	}
	/*
	 * A flush soon, then one a long interval away: restarting the
	 * flusher waits out the interval since the last flush.
	 */
	ctl = open_stream(root);
	if (ctl < 0 || set_interval(root, NEW_CG_INTERVAL_MS) ||
	    wait_sample(ctl, WAIT_MS, &before) ||
	    set_interval(root, UNRELATED_INTERVAL_MS))
		goto cleanup;

	for (tries = 0; tries < 3; tries++) {
		for (i = 0; i < UNRELATED_FDS; i++)
			if (read_sample(pm.pfd[i].fd, &after))
				goto cleanup;
		if (read_sample(ctl, &before))
			goto cleanup;
		child = run_nowait(poll_many_fn, &pm);
		if (child < 0 || !wait_sleeping(child, WAIT_MS))
			goto cleanup;
		sw_before = voluntary_switches(child);

		for (i = 0; i < UNRELATED_CGROUPS; i++) {
			tmp = cg_name(root, "stat_stream_unrelated");
			if (!tmp || cg_create(tmp) || cg_destroy(tmp))
				goto cleanup;
			free(tmp);
			tmp = NULL;
		}
		usleep(200000);
		sw_after = voluntary_switches(child);
		stop_burner(child);
		child = 0;
		if (read_sample(ctl, &after))
			goto cleanup;
		/* a flush in between woke it rightly: try again */
		if (after.seq != before.seq)
			continue;
		if (sw_before < 0 || sw_after != sw_before) {
			ksft_print_msg("poller woke %lld times across %d unrelated rmdirs\n",
				       sw_after - sw_before, UNRELATED_CGROUPS);
			goto cleanup;
		}
		ret = KSFT_PASS;
		break;
	}

cleanup:
	stop_burner(child);
	free(tmp);
	for (i = 0; i < UNRELATED_FDS; i++)
		if (pm.pfd[i].fd >= 0)
			close(pm.pfd[i].fd);
	if (ctl >= 0)
		close(ctl);
	for (i = 0; i < UNRELATED_CGROUPS; i++) {
		cg_destroy(cgs[i]);
		free(cgs[i]);
	}
	return restore_interval(root, saved, ret);
}

#define RMDIR_RACE_ROUNDS	100

/*
 * Reads the open file *@arg at offset 0 until a read fails.  Exit status:
 * 0 when it failed with ENODEV and poll() then says POLLERR, 1 for a read
 * of 0 bytes, 2 for another error, 3 for ENODEV while poll() says the file
 * is not gone.
 */
static int read_until_removed(void *arg)
{
	int fd = *(int *)arg;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[BUF_SIZE];
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), 0)) > 0)
		;
	if (!n)
		return 1;
	if (errno != ENODEV)
		return 2;
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR) ? 0 : 3;
}

/*
 * rmdir of a cgroup while a child reads its @file as fast as it can:
 * every read returns data until reads fail with ENODEV, and from then on
 * poll says POLLERR, also in the window where rmdir has taken the cgroup
 * offline but not yet removed its files.
 */
static int rmdir_race(const char *root, const char *file)
{
	static const char * const why[] = {
		[1] = "a read at offset 0 returned 0 bytes",
		[2] = "a read failed with another error than ENODEV",
		[3] = "reads fail with ENODEV, poll does not say POLLERR",
	};
	int ret = KSFT_FAIL;
	int i, err, fd = -1;
	char *cg;
	pid_t pid;

	cg = cg_name(root, "stat_stream_rmdir_race");
	if (!cg)
		return KSFT_FAIL;
	for (i = 0; i < RMDIR_RACE_ROUNDS; i++) {
		if (cg_create(cg))
			goto cleanup;
		fd = open_file(cg, file);
		if (fd < 0)
			goto cleanup;
		pid = run_nowait(read_until_removed, &fd);
		if (pid < 0)
			goto cleanup;
		usleep(i % 10 * 100);
		err = rmdir(cg) ? errno : 0;
		if (err) {
			ksft_print_msg("rmdir %s: %s\n", cg, strerror(err));
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			goto cleanup;
		}
		err = wait_child(pid, WAIT_MS);
		if (err) {
			ksft_print_msg("%s, round %d: %s\n", file, i,
				       err > 0 && err < ARRAY_SIZE(why) ?
				       why[err] : "the reader did not end");
			goto cleanup;
		}
		close(fd);
		fd = -1;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	cg_destroy(cg);
	free(cg);
	return ret;
}

static int test_stat_stream_rmdir_race(const char *root)
{
	return rmdir_race(root, STREAM_FILE);
}

static int wait_pri_fn(void *arg)
{
	struct pollfd pfd = { .fd = *(int *)arg, .events = POLLIN | POLLPRI };

	/* readable (POLLIN) already consumed by the parent: wait for POLLPRI */
	if (poll(&pfd, 1, 3 * WAIT_MS) != 1)
		return 1;
	return pfd.revents == POLLPRI ? 0 : 2;
}

/*
 * Streaming stops: a poller waiting for POLLIN|POLLPRI wakes with POLLPRI
 * once, reads keep working and clear it.  Freshness: a stream opened while
 * the flusher is idle is not readable before a flush after the open.
 */
static int test_stat_stream_stop_fresh(const char *root)
{
	struct stream_sample s, first;
	struct pollfd pfd;
	int ret = KSFT_FAIL;
	int fd = -1, err;
	pid_t waiter = 0;
	long saved;

	saved = get_interval(root);
	fd = open_stream(root);
	if (fd < 0 || set_interval(root, NEW_CG_INTERVAL_MS) ||
	    wait_sample(fd, WAIT_MS, &s))
		goto cleanup;

	waiter = run_nowait(wait_pri_fn, &fd);
	if (waiter < 0 || !wait_sleeping(waiter, WAIT_MS))
		goto cleanup;
	/* a flush may wake it first: it then sees POLLIN and fails */
	if (read_sample(fd, &s) || set_interval(root, 0))
		goto cleanup;
	err = -1;
	if (waitpid(waiter, &err, 0) != waiter || !WIFEXITED(err) ||
	    WEXITSTATUS(err)) {
		ksft_print_msg("poller did not wake with POLLPRI alone (status %#x)\n",
			       err);
		waiter = 0;
		goto cleanup;
	}
	waiter = 0;
	pfd.fd = fd;
	pfd.events = POLLIN | POLLPRI;
	if (poll(&pfd, 1, 0) != 1 || pfd.revents != POLLPRI) {
		ksft_print_msg("after the stop: revents %#x, want POLLPRI\n",
			       pfd.revents);
		goto cleanup;
	}
	if (read_sample(fd, &s) || poll(&pfd, 1, 0) != 0) {
		ksft_print_msg("POLLPRI still set after a read: %#x\n",
			       pfd.revents);
		goto cleanup;
	}
	close(fd);
	fd = -1;

	/* idle: nothing open; a new open must wait for a new flush */
	usleep(2 * NEW_CG_INTERVAL_MS * 1000);
	fd = open_stream(root);
	if (fd < 0 || read_sample(fd, &first) ||
	    set_interval(root, NEW_CG_INTERVAL_MS))
		goto cleanup;
	pfd.events = POLLIN;
	pfd.fd = fd;
	if (wait_readable(fd, 0) != 0) {
		/* the first flush is due at once: allow it, but it must be new */
		if (read_sample(fd, &s) || s.seq <= first.seq) {
			ksft_print_msg("fresh open readable with old flush %lld\n",
				       s.seq);
			goto cleanup;
		}
	} else if (wait_sample(fd, WAIT_MS, &s) || s.seq <= first.seq ||
		   s.time_usec * 1LL < first.time_usec) {
		ksft_print_msg("fresh open: flush %lld after %lld\n", s.seq,
			       first.seq);
		goto cleanup;
	}

	ret = KSFT_PASS;
cleanup:
	stop_burner(waiter);
	if (fd >= 0)
		close(fd);
	return restore_interval(root, saved, ret);
}

#define WINDOW_READERS		4
#define WINDOW_CYCLES		30
#define WINDOW_INTERVAL_MS	100

/*
 * A reader that reads in a tight loop between wake-ups, and so also while
 * the next flush is being published: its flush_seq never goes back, never
 * skips a flush, and a wake-up always brings a flush it has not read.
 */
static int window_reader(void *arg)
{
	struct stream_sample s;
	long long last, end, got = 0;
	int fd;

	fd = open_stream(arg);
	if (fd < 0 || read_sample(fd, &s))
		return 2;
	last = s.seq;
	end = now_usec() + 4 * WINDOW_CYCLES * WINDOW_INTERVAL_MS * USEC_PER_MSEC;
	while (got < WINDOW_CYCLES && now_usec() < end) {
		int woken = wait_readable(fd, 0);

		if (woken < 0 || read_sample(fd, &s))
			return 3;
		if (s.seq < last || s.seq > last + 1 || (woken && s.seq == last)) {
			ksft_print_msg("reader: flush %lld after %lld (%s)\n",
				       s.seq, last, woken ? "woken" : "probe");
			return 1;
		}
		if (s.seq > last)
			got++;
		last = s.seq;
	}
	close(fd);
	return got >= WINDOW_CYCLES ? 0 : 4;
}

static int test_stat_stream_publish_window(const char *root)
{
	pid_t readers[WINDOW_READERS] = {}, burner = 0;
	int ret = KSFT_FAIL;
	int i, status, fd = -1;
	char *cg;
	long saved;

	saved = get_interval(root);
	cg = cg_name(root, "stat_stream_window");
	if (!cg || cg_create(cg))
		goto cleanup;
	burner = cg_run_nowait(cg, burn_cpu, NULL);
	fd = open_stream(root);
	if (burner < 0 || fd < 0 || set_interval(root, WINDOW_INTERVAL_MS))
		goto cleanup;
	for (i = 0; i < WINDOW_READERS; i++) {
		readers[i] = run_nowait(window_reader, cg);
		if (readers[i] < 0)
			goto cleanup;
	}
	ret = KSFT_PASS;
	for (i = 0; i < WINDOW_READERS; i++) {
		if (waitpid(readers[i], &status, 0) != readers[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			ksft_print_msg("reader %d: status %#x\n", i, status);
			ret = KSFT_FAIL;
		}
		readers[i] = 0;
	}
cleanup:
	for (i = 0; i < WINDOW_READERS; i++)
		stop_burner(readers[i]);
	stop_burner(burner);
	if (fd >= 0)
		close(fd);
	cg_destroy(cg);
	free(cg);
	return restore_interval(root, saved, ret);
}

/*
 * cpu.stat.stream.subtree
 */
#define SUBTREE_FILE		(ctl->subtree_file)
#define REC_SIZE		sizeof(struct cgroup_stat_stream_record)
#define SUBTREE_INTERVAL_MS	100

struct subtree_snap {
	struct cgroup_stat_stream_record *rec;
	size_t nr;		/* records */
	int reads;		/* read calls that returned records */
};

static int open_subtree(const char *cgroup)
{
	return open_file(cgroup, SUBTREE_FILE);
}

/*
 * Reads one whole snapshot into @snap->rec (room for @max records), @chunk
 * bytes per read: the first at offset 0, the others with read(2) from where
 * the last ended.  Returns 0, or -errno.
 */
static int read_subtree(int fd, struct subtree_snap *snap, size_t max,
			size_t chunk)
{
	char *buf = (char *)snap->rec;
	size_t len = 0;
	ssize_t ret;

	snap->nr = 0;
	snap->reads = 0;
	if (lseek(fd, 0, SEEK_SET))
		return -errno;
	for (;;) {
		size_t want = chunk;

		if (len + want > max * REC_SIZE)
			want = max * REC_SIZE - len;
		ret = read(fd, buf + len, want);
		if (ret < 0)
			return -errno;
		if (!ret)
			break;
		if (ret % REC_SIZE) {
			ksft_print_msg("read returned %zd bytes: not whole records\n",
				       ret);
			return -EBADMSG;
		}
		len += ret;
		snap->reads++;
		if (len == max * REC_SIZE) {
			ksft_print_msg("more than %zu records\n", max);
			return -E2BIG;
		}
	}
	snap->nr = len / REC_SIZE;
	return 0;
}

static int snap_alloc(struct subtree_snap *snap, size_t max)
{
	snap->rec = calloc(max, REC_SIZE);
	return snap->rec ? 0 : -ENOMEM;
}

static unsigned long long dir_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

/* ids of the cgroup directories below and including the nftw() root */
static unsigned long long *walk_ids;
static size_t walk_nr, walk_max;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	if (type != FTW_D)
		return 0;
	if (walk_nr == walk_max)
		return -1;
	walk_ids[walk_nr++] = st->st_ino;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static int rmdir_one(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	if (type == FTW_DP && rmdir(path) && errno != ENOENT)
		ksft_print_msg("rmdir %s: %s\n", path, strerror(errno));
	return 0;
}

/* removes @cgroup and everything below it */
static void destroy_tree(const char *cgroup)
{
	if (cgroup)
		nftw(cgroup, rmdir_one, 64, FTW_DEPTH | FTW_PHYS);
}

/*
 * Checks that @snap is a pre-order walk starting at @top: the first record
 * is @top's with parent_id 0, every other record's parent is on the path
 * from the first record to the one before it, and every record is a type 1
 * record of the current size.  Returns 0 or -1.
 */
static int check_preorder(const struct subtree_snap *snap, const char *top)
{
	unsigned long long *stack;
	size_t depth = 0, i;
	int ret = -1;

	stack = calloc(snap->nr + 1, sizeof(*stack));
	if (!stack || !snap->nr)
		goto out;
	if (snap->rec[0].cgroup_id != dir_ino(top) || snap->rec[0].parent_id) {
		ksft_print_msg("first record: id %llu parent %llu, want %llu, 0\n",
			       (unsigned long long)snap->rec[0].cgroup_id,
			       (unsigned long long)snap->rec[0].parent_id,
			       dir_ino(top));
		goto out;
	}
	for (i = 0; i < snap->nr; i++) {
		const struct cgroup_stat_stream_record *r = &snap->rec[i];

		if (r->size != REC_SIZE || r->type != CGROUP_STAT_STREAM_RECORD_CPU) {
			ksft_print_msg("record %zu: size %u type %u\n", i,
				       r->size, r->type);
			goto out;
		}
		if (i) {
			while (depth && stack[depth - 1] != r->parent_id)
				depth--;
			if (!depth) {
				ksft_print_msg("record %zu (id %llu): parent %llu off the walk\n",
					       i, (unsigned long long)r->cgroup_id,
					       (unsigned long long)r->parent_id);
				goto out;
			}
		}
		stack[depth++] = r->cgroup_id;
	}
	ret = 0;
out:
	free(stack);
	return ret;
}

/* Returns 0 if the ids in @snap are exactly those of the directories. */
static int check_ids_match_dirs(const struct subtree_snap *snap, const char *top)
{
	unsigned long long *ids;
	size_t i;
	int ret = -1;

	walk_max = snap->nr + 16;
	walk_nr = 0;
	walk_ids = calloc(walk_max, sizeof(*walk_ids));
	ids = calloc(snap->nr, sizeof(*ids));
	if (!walk_ids || !ids)
		goto out;
	if (nftw(top, walk_one, 64, FTW_PHYS)) {
		ksft_print_msg("walking %s failed\n", top);
		goto out;
	}
	for (i = 0; i < snap->nr; i++)
		ids[i] = snap->rec[i].cgroup_id;
	qsort(ids, snap->nr, sizeof(*ids), cmp_u64);
	qsort(walk_ids, walk_nr, sizeof(*walk_ids), cmp_u64);
	if (walk_nr != snap->nr || memcmp(ids, walk_ids, walk_nr * sizeof(*ids))) {
		ksft_print_msg("%zu records, %zu directories: the ids differ\n",
			       snap->nr, walk_nr);
		goto out;
	}
	ret = 0;
out:
	free(ids);
	free(walk_ids);
	walk_ids = NULL;
	return ret;
}

/* creates @top/c0 .. c{@n-1}, with @per_dir children per directory */
static int make_tree(const char *top, int n, int per_dir)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < n; i++) {
		if (i < per_dir) {
			snprintf(path, sizeof(path), "%s/c%d", top, i);
		} else {
			snprintf(path, sizeof(path), "%s/c%d/c%d", top,
				 i / per_dir - 1, i);
		}
		if (mkdir(path, 0755)) {
			ksft_print_msg("mkdir %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Layout: ids are the directories' inodes, parents, pre-order; EINVAL. */
static int test_stat_stream_subtree_layout(const char *root)
{
	struct subtree_snap big = {}, small = {};
	char buf[REC_SIZE];
	int ret = KSFT_FAIL;
	int fd = -1;
	char *top;
	size_t i;

	top = cg_name(root, "stat_stream_subtree");
	if (!top || cg_create(top) || make_tree(top, 30, 5))
		goto cleanup;
	fd = open_subtree(top);
	if (fd < 0 || snap_alloc(&big, 64) || snap_alloc(&small, 64))
		goto cleanup;

	if (read_subtree(fd, &big, 64, 1 << 20))
		goto cleanup;
	if (big.nr != 31 || big.reads != 1) {
		ksft_print_msg("%zu records in %d reads, want 31 in 1\n",
			       big.nr, big.reads);
		goto cleanup;
	}
	if (check_preorder(&big, top) || check_ids_match_dirs(&big, top))
		goto cleanup;

	/* one record per read: the same walk */
	if (read_subtree(fd, &small, 64, REC_SIZE))
		goto cleanup;
	if (small.nr != big.nr || small.reads != (int)big.nr) {
		ksft_print_msg("one-record reads: %zu records in %d reads\n",
			       small.nr, small.reads);
		goto cleanup;
	}
	for (i = 0; i < big.nr; i++) {
		if (small.rec[i].cgroup_id != big.rec[i].cgroup_id ||
		    small.rec[i].parent_id != big.rec[i].parent_id) {
			ksft_print_msg("record %zu differs between the walks\n", i);
			goto cleanup;
		}
	}

	/* a buffer smaller than a record, and an offset out of the blue */
	if (pread(fd, buf, REC_SIZE - 1, 0) != -1 || errno != EINVAL) {
		ksft_print_msg("short buffer: not EINVAL\n");
		goto cleanup;
	}
	if (pread(fd, buf, REC_SIZE, 0) != REC_SIZE ||
	    pread(fd, buf, REC_SIZE, 5 * REC_SIZE) != -1 || errno != EINVAL) {
		ksft_print_msg("reading at an offset the last read did not end at: not EINVAL\n");
		goto cleanup;
	}

	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	free(big.rec);
	free(small.rec);
	destroy_tree(top);
	free(top);
	return ret;
}

static int find_record(const struct subtree_snap *snap, unsigned long long id)
{
	size_t i;

	for (i = 0; i < snap->nr; i++)
		if (snap->rec[i].cgroup_id == id)
			return i;
	return -1;
}

/*
 * Values: the same as cpu.stat.stream shows for the same flush, bandwidth
 * counters flagged where cpu.stat has them; only subtree files open, the
 * flusher runs and poll wakes.
 */
static int test_stat_stream_subtree_values(const char *root)
{
	char text[BUF_SIZE], *top = NULL, *busy = NULL, *idle = NULL;
	struct subtree_snap snap = {};
	int fd = -1, sfd = -1, tries, i;
	int ret = KSFT_FAIL;
	struct stream_sample s;
	pid_t burner = 0;
	long saved;
	int cpu_on;

	saved = get_interval(root);
	top = cg_name(root, "stat_stream_subtree_v");
	if (!top || cg_create(top))
		goto cleanup;
	cpu_on = !cg_write(root, "cgroup.subtree_control", "+cpu") &&
		 !cg_write(top, "cgroup.subtree_control", "+cpu");
	busy = cg_name(top, "busy");
	idle = cg_name(top, "idle");
	if (!busy || !idle || cg_create(busy) || cg_create(idle))
		goto cleanup;
	if (cpu_on && cg_write(busy, "cpu.max", "50000 100000"))
		goto cleanup;
	burner = cg_run_nowait(busy, burn_cpu, NULL);
	if (burner < 0 || snap_alloc(&snap, 8))
		goto cleanup;

	fd = open_subtree(top);
	if (fd < 0 || set_interval(root, SUBTREE_INTERVAL_MS))
		goto cleanup;

	/* only subtree files are open: the flusher must still run */
	for (i = 0; i < 3; i++) {
		if (wait_readable(fd, WAIT_MS) != 1) {
			ksft_print_msg("subtree file: no wake-up within %d ms\n",
				       WAIT_MS);
			goto cleanup;
		}
		if (read_subtree(fd, &snap, 8, 4096))
			goto cleanup;
		if (wait_readable(fd, 0) != 0) {
			ksft_print_msg("subtree file readable again right after a read\n");
			goto cleanup;
		}
	}

	sfd = open_stream(busy);
	if (sfd < 0)
		goto cleanup;
	for (tries = 0; tries < 20; tries++) {
		const struct cgroup_stat_stream_record *r;
		int at;

		if (wait_readable(fd, WAIT_MS) != 1 ||
		    read_subtree(fd, &snap, 8, 4096) ||
		    read_stream(sfd, text, sizeof(text)) < 0 ||
		    parse_sample(text, &s))
			goto cleanup;
		at = find_record(&snap, dir_ino(busy));
		if (snap.nr != 3 || at < 0) {
			ksft_print_msg("%zu records, busy at %d\n", snap.nr, at);
			goto cleanup;
		}
		r = &snap.rec[at];
		/* a flush in between: try the next one */
		if ((long long)r->flush_seq != s.seq)
			continue;
		if ((long long)r->usage_usec != s.usage_usec ||
		    (long long)r->user_usec != s.user_usec ||
		    (long long)r->system_usec != s.system_usec ||
		    (long long)r->flush_time_usec != s.time_usec ||
		    (long long)r->nice_usec != stat_key(text, "nice_usec")) {
			ksft_print_msg("flush %lld: record %llu/%llu/%llu at %llu, stream:\n%s",
				       s.seq, (unsigned long long)r->usage_usec,
				       (unsigned long long)r->user_usec,
				       (unsigned long long)r->system_usec,
				       (unsigned long long)r->flush_time_usec,
				       text);
			goto cleanup;
		}
		if (!!(r->flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) !=
		    (stat_key(text, "nr_periods") >= 0)) {
			ksft_print_msg("bandwidth flag %u, stream:\n%s",
				       r->flags, text);
			goto cleanup;
		}
		/* live counters, as in cpu.stat: they may move between reads */
		if (cpu_on && (!(r->flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) ||
			       !r->nr_periods ||
			       (long long)r->nr_periods > stat_key(text, "nr_periods"))) {
			ksft_print_msg("throttled: flags %u nr_periods %llu, stream:\n%s",
				       r->flags, (unsigned long long)r->nr_periods,
				       text);
			goto cleanup;
		}
		if (r->usage_usec < 1000) {
			ksft_print_msg("busy cgroup: usage %llu\n",
				       (unsigned long long)r->usage_usec);
			goto cleanup;
		}
		ret = KSFT_PASS;
		break;
	}
	if (ret != KSFT_PASS)
		ksft_print_msg("no stream read of the same flush in %d tries\n",
			       tries);

cleanup:
	stop_burner(burner);
	if (sfd >= 0)
		close(sfd);
	if (fd >= 0)
		close(fd);
	free(snap.rec);
	cg_destroy(busy);
	cg_destroy(idle);
	cg_destroy(top);
	free(busy);
	free(idle);
	free(top);
	return restore_interval(root, saved, ret);
}

/* 1,000 and 10,000 cgroups come back in one read of a large buffer. */
static int test_stat_stream_subtree_many(const char *root)
{
	static const int counts[] = { 1000, 10000 };
	struct subtree_snap snap = {};
	int ret = KSFT_FAIL;
	char *top = NULL;
	int fd = -1;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		int n = counts[i];
		long long start;

		top = cg_name(root, "stat_stream_subtree_many");
		if (!top || cg_create(top))
			goto cleanup;
		start = now_usec();
		if (make_tree(top, n, 100))
			goto cleanup;
		ksft_print_msg("%d cgroups made in %lld ms\n", n,
			       (now_usec() - start) / 1000);
		fd = open_subtree(top);
		free(snap.rec);
		snap.rec = NULL;
		if (fd < 0 || snap_alloc(&snap, n + 64))
			goto cleanup;
		start = now_usec();
		if (read_subtree(fd, &snap, n + 64, (n + 64) * REC_SIZE))
			goto cleanup;
		ksft_print_msg("%zu records in %d read(s) of %zu bytes, %lld us\n",
			       snap.nr, snap.reads, (n + 64) * REC_SIZE,
			       now_usec() - start);
		if (snap.nr != (size_t)n + 1 || snap.reads != 1 ||
		    check_preorder(&snap, top))
			goto cleanup;
		close(fd);
		fd = -1;
		destroy_tree(top);
		free(top);
		top = NULL;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	free(snap.rec);
	destroy_tree(top);
	free(top);
	return ret;
}

#define CHURN_STABLE		40
#define CHURN_SLOTS		40

/* mkdir and rmdir of descendants of @arg until killed */
static int churn_descendants(void *arg)
{
	char path[PATH_MAX];
	unsigned int r = getpid();

	for (;;) {
		int slot = rand_r(&r) % CHURN_SLOTS;
		int sub = rand_r(&r) % 3;

		snprintf(path, sizeof(path), "%s/s%d/churn%d", (char *)arg,
			 slot % CHURN_STABLE, slot);
		if (mkdir(path, 0755) && errno == EEXIST)
			rmdir(path);
		snprintf(path, sizeof(path), "%s/churn%d", (char *)arg, sub);
		if (mkdir(path, 0755) && errno == EEXIST)
			rmdir(path);
	}
	return 0;
}

/*
 * Descendants made and removed while snapshots are read in small and large
 * pieces: no duplicate, no stable cgroup missing, pre-order kept.  Runs for
 * STAT_STREAM_CHURN_SECONDS (default 5) seconds.
 */
static int test_stat_stream_subtree_churn(const char *root)
{
	static const size_t chunks[] = { REC_SIZE, 3 * REC_SIZE, 4096, 1 << 16 };
	unsigned long long stable[CHURN_STABLE + 1];
	struct subtree_snap snap = {};
	pid_t churners[2] = { 0, 0 };
	char path[PATH_MAX], *top;
	long long end, snaps = 0;
	int ret = KSFT_FAIL;
	const char *env;
	int fd = -1, secs = 5;
	size_t i, j;

	env = getenv("STAT_STREAM_CHURN_SECONDS");
	if (env)
		secs = atoi(env);
	top = cg_name(root, "stat_stream_subtree_churn");
	if (!top || cg_create(top))
		goto cleanup;
	stable[0] = dir_ino(top);
	for (i = 0; i < CHURN_STABLE; i++) {
		snprintf(path, sizeof(path), "%s/s%zu", top, i);
		if (mkdir(path, 0755))
			goto cleanup;
		stable[i + 1] = dir_ino(path);
	}
	fd = open_subtree(top);
	if (fd < 0 || snap_alloc(&snap, 4096))
		goto cleanup;
	for (i = 0; i < ARRAY_SIZE(churners); i++) {
		fflush(stdout);
		churners[i] = fork();
		if (churners[i] < 0)
			goto cleanup;
		if (!churners[i])
			exit(churn_descendants(top));
	}

	end = now_usec() + secs * USEC_PER_SEC;
	for (j = 0; now_usec() < end; j++) {
		if (read_subtree(fd, &snap, 4096, chunks[j % ARRAY_SIZE(chunks)]) ||
		    check_preorder(&snap, top))
			goto cleanup;
		for (i = 0; i < snap.nr; i++) {
			size_t k;

			for (k = i + 1; k < snap.nr; k++) {
				if (snap.rec[i].cgroup_id == snap.rec[k].cgroup_id) {
					ksft_print_msg("id %llu twice in one snapshot\n",
						       (unsigned long long)snap.rec[i].cgroup_id);
					goto cleanup;
				}
			}
		}
		for (i = 0; i <= CHURN_STABLE; i++) {
			if (find_record(&snap, stable[i]) < 0) {
				ksft_print_msg("stable cgroup %llu missing (chunk %zu)\n",
					       stable[i], chunks[j % ARRAY_SIZE(chunks)]);
				goto cleanup;
			}
		}
		snaps++;
	}
	ksft_print_msg("%lld snapshots read while descendants churned\n", snaps);
	ret = KSFT_PASS;
cleanup:
	for (i = 0; i < ARRAY_SIZE(churners); i++)
		stop_burner(churners[i]);
	if (fd >= 0)
		close(fd);
	free(snap.rec);
	destroy_tree(top);
	free(top);
	return ret;
}

/*
 * A snapshot read in pieces goes on where the last read stopped, even when
 * the cgroup read last and the one the read stopped at are both removed in
 * between: no record twice, none of the remaining cgroups missing.
 */
static int test_stat_stream_subtree_resume(const char *root)
{
	struct cgroup_stat_stream_record rec[8];
	unsigned long long ids[5];
	char path[PATH_MAX];
	int ret = KSFT_FAIL;
	int fd = -1, i;
	char *top;
	ssize_t len;

	top = cg_name(root, "stat_stream_subtree_resume");
	if (!top || cg_create(top))
		goto cleanup;
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/c%d", top, i);
		if (mkdir(path, 0755))
			goto cleanup;
		ids[i] = dir_ino(path);
	}
	fd = open_subtree(top);
	if (fd < 0)
		goto cleanup;

	/* @top and c0: the walk stops at c1 */
	len = pread(fd, rec, 2 * REC_SIZE, 0);
	if (len != 2 * REC_SIZE || rec[1].cgroup_id != ids[0]) {
		ksft_print_msg("first read: %zd bytes\n", len);
		goto cleanup;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/c%d", top, i);
		if (rmdir(path)) {
			ksft_print_msg("rmdir %s: %s\n", path, strerror(errno));
			goto cleanup;
		}
	}
	len = pread(fd, rec, sizeof(rec), 2 * REC_SIZE);
	if (len != 3 * REC_SIZE) {
		ksft_print_msg("after removing c0 and c1: %zd bytes, want 3 records\n",
			       len);
		goto cleanup;
	}
	for (i = 0; i < 3; i++) {
		if (rec[i].cgroup_id != ids[i + 2]) {
			ksft_print_msg("record %d: id %llu, want c%d's %llu\n", i,
				       (unsigned long long)rec[i].cgroup_id,
				       i + 2, ids[i + 2]);
			goto cleanup;
		}
	}
	len = pread(fd, rec, sizeof(rec), 5 * REC_SIZE);
	if (len) {
		ksft_print_msg("after the last record: %zd, want 0\n", len);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	destroy_tree(top);
	free(top);
	return ret;
}

static int read_subtree_as_nobody(void *arg)
{
	struct cgroup_stat_stream_record rec[4];
	ssize_t ret;
	int fd;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 2;
	fd = open((char *)arg, O_RDONLY);
	if (fd < 0)
		return 3;
	ret = read(fd, rec, sizeof(rec));
	close(fd);
	return ret == REC_SIZE && rec[0].size == REC_SIZE ? 0 : 4;
}

/* Removal of the opened cgroup: EPOLLERR and ENODEV; unprivileged reads. */
static int test_stat_stream_subtree_rmdir(const char *root)
{
	struct cgroup_stat_stream_record rec[2];
	char path[PATH_MAX + 64];
	struct pollfd pfd;
	int ret = KSFT_FAIL;
	int fd = -1, err;
	long long start;
	char *cg;

	cg = cg_name(root, "stat_stream_subtree_rm");
	if (!cg || cg_create(cg))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/%s", cg, SUBTREE_FILE);
	err = run_timed(read_subtree_as_nobody, path, WAIT_MS);
	if (err) {
		ksft_print_msg("unprivileged read of %s: step %d failed\n",
			       path, err);
		goto cleanup;
	}

	fd = open_subtree(cg);
	if (fd < 0 || pread(fd, rec, sizeof(rec), 0) != REC_SIZE)
		goto cleanup;
	start = now_usec();
	if (rmdir(cg)) {
		ksft_print_msg("rmdir %s: %s\n", cg, strerror(errno));
		goto cleanup;
	}
	if (now_usec() - start > USEC_PER_SEC)
		ksft_print_msg("rmdir took %lld us\n", now_usec() - start);
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, WAIT_MS) != 1 || !(pfd.revents & POLLERR)) {
		ksft_print_msg("poll after rmdir: revents %#x\n", pfd.revents);
		goto cleanup;
	}
	if (pread(fd, rec, sizeof(rec), 0) != -1 || errno != ENODEV) {
		ksft_print_msg("read after rmdir: not ENODEV (%s)\n",
			       strerror(errno));
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	cg_destroy(cg);
	free(cg);
	return ret;
}

/* rmdir while a child starts snapshots: see rmdir_race() */
static int test_stat_stream_subtree_rmdir_race(const char *root)
{
	return rmdir_race(root, SUBTREE_FILE);
}

/*
 * Streaming stops: subtree files report POLLPRI too, until the next
 * snapshot's first read.
 */
static int test_stat_stream_subtree_stop(const char *root)
{
	struct cgroup_stat_stream_record rec;
	struct pollfd pfd;
	int ret = KSFT_FAIL;
	long saved;
	int fd;

	saved = get_interval(root);
	fd = open_subtree(root);
	if (fd < 0 || set_interval(root, SUBTREE_INTERVAL_MS) ||
	    wait_readable(fd, WAIT_MS) != 1 ||
	    pread(fd, &rec, sizeof(rec), 0) != REC_SIZE ||
	    set_interval(root, 0))
		goto cleanup;
	pfd.fd = fd;
	pfd.events = POLLIN | POLLPRI;
	if (poll(&pfd, 1, WAIT_MS) != 1 || !(pfd.revents & POLLPRI)) {
		ksft_print_msg("after the stop: revents %#x, want POLLPRI\n",
			       pfd.revents);
		goto cleanup;
	}
	if (pread(fd, &rec, sizeof(rec), 0) != REC_SIZE ||
	    poll(&pfd, 1, 0) != 0) {
		ksft_print_msg("POLLPRI still set after a read: %#x\n",
			       pfd.revents);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	return restore_interval(root, saved, ret);
}

/*
 * memory.stat.stream and memory.stat.stream.subtree
 */
#define MEM_CHARGE		(64 << 20)
#define MEM_INTERVAL_MS		100
#define MEM_SNAP_MAX		(16 << 20)

/* one memory snapshot: its KEYS record's names and its MEMORY records */
struct mem_snap {
	char *buf;
	size_t len;
	int reads;
	const struct cgroup_stat_stream_keys *keys;
	const char **names;		/* keys->nr_keys of them */
	const struct cgroup_stat_stream_memory **rec;
	size_t nr;
};

static void mem_snap_free(struct mem_snap *snap)
{
	free(snap->buf);
	free(snap->names);
	free(snap->rec);
	memset(snap, 0, sizeof(*snap));
}

/*
 * Reads a whole memory snapshot from @fd, @first bytes in the first read,
 * @chunk bytes in each of the others, and checks its shape: one KEYS
 * record for MEMORY records first, its names within it, then MEMORY
 * records of 40 + 8 * nr_keys bytes.  Returns 0 or -1.
 */
static int read_mem_snap_by(int fd, struct mem_snap *snap, size_t first,
			    size_t chunk)
{
	size_t off, n;
	ssize_t ret;

	mem_snap_free(snap);
	snap->buf = malloc(MEM_SNAP_MAX);
	if (!snap->buf)
		return -1;
	if (lseek(fd, 0, SEEK_SET))
		return -1;
	for (;;) {
		size_t want = snap->reads ? chunk : first;

		if (snap->len + want > MEM_SNAP_MAX)
			want = MEM_SNAP_MAX - snap->len;
		ret = read(fd, snap->buf + snap->len, want);
		if (ret < 0) {
			ksft_print_msg("read: %s\n", strerror(errno));
			return -1;
		}
		if (!ret)
			break;
		snap->len += ret;
		snap->reads++;
		if (snap->len == MEM_SNAP_MAX) {
			ksft_print_msg("snapshot over %d bytes\n", MEM_SNAP_MAX);
			return -1;
		}
	}

	snap->keys = (void *)snap->buf;
	if (snap->len < sizeof(*snap->keys) ||
	    snap->keys->type != CGROUP_STAT_STREAM_RECORD_KEYS ||
	    snap->keys->for_type != CGROUP_STAT_STREAM_RECORD_MEMORY ||
	    snap->keys->size % 8 || snap->keys->size > snap->len ||
	    snap->keys->flags || snap->keys->reserved || !snap->keys->nr_keys) {
		ksft_print_msg("no KEYS record for MEMORY first (%zu bytes)\n",
			       snap->len);
		return -1;
	}
	snap->names = calloc(snap->keys->nr_keys, sizeof(*snap->names));
	if (!snap->names)
		return -1;
	off = offsetof(struct cgroup_stat_stream_keys, names);
	for (n = 0; n < snap->keys->nr_keys; n++) {
		const char *name = snap->buf + off;
		size_t len = strnlen(name, snap->keys->size - off);

		if (off + len >= snap->keys->size || !len) {
			ksft_print_msg("KEYS: name %zu runs past the record\n", n);
			return -1;
		}
		snap->names[n] = name;
		off += len + 1;
	}
	for (; off < snap->keys->size; off++) {
		if (snap->buf[off]) {
			ksft_print_msg("KEYS: padding is not zero\n");
			return -1;
		}
	}

	snap->rec = calloc(snap->len / 40 + 1, sizeof(*snap->rec));
	if (!snap->rec)
		return -1;
	for (off = snap->keys->size; off < snap->len; off += snap->rec[snap->nr++]->hdr.size) {
		const struct cgroup_stat_stream_memory *r = (void *)(snap->buf + off);

		if (off + sizeof(r->hdr) > snap->len ||
		    r->hdr.type != CGROUP_STAT_STREAM_RECORD_MEMORY ||
		    r->hdr.size != sizeof(r->hdr) + 8 * snap->keys->nr_keys ||
		    off + r->hdr.size > snap->len) {
			ksft_print_msg("record at %zu: type %u size %u, want %u %zu\n",
				       off, r->hdr.type, r->hdr.size,
				       CGROUP_STAT_STREAM_RECORD_MEMORY,
				       sizeof(r->hdr) + 8 * snap->keys->nr_keys);
			return -1;
		}
		snap->rec[snap->nr] = r;
	}
	return 0;
}

static int read_mem_snap(int fd, struct mem_snap *snap, size_t chunk)
{
	return read_mem_snap_by(fd, snap, chunk, chunk);
}

static int mem_key_index(const struct mem_snap *snap, const char *name)
{
	size_t i;

	for (i = 0; i < snap->keys->nr_keys; i++)
		if (!strcmp(snap->names[i], name))
			return i;
	return -1;
}

static const struct cgroup_stat_stream_memory *
mem_record(const struct mem_snap *snap, unsigned long long id)
{
	size_t i;

	for (i = 0; i < snap->nr; i++)
		if (snap->rec[i]->hdr.cgroup_id == id)
			return snap->rec[i];
	return NULL;
}

/* the keys of flat-keyed @buf, each followed by '\n', into @out */
static void flat_keys(const char *buf, char *out, size_t len)
{
	const char *pos = buf;
	size_t used = 0;
	char key[128];

	*out = '\0';
	while (next_key(&pos, key, sizeof(key)) && used + strlen(key) + 2 < len)
		used += sprintf(out + used, "%s\n", key);
}

static int enable_memory(const char *cgroup)
{
	if (cg_write(cgroup, "cgroup.subtree_control", "+memory")) {
		ksft_print_msg("can't enable memory in %s\n", cgroup);
		return -1;
	}
	return 0;
}

/*
 * The KEYS record names memory.stat's keys in its order, then "current",
 * "swap.current" where memory.swap.current exists, and "events." + each
 * key of memory.events; memory.stat.stream prints memory.stat's keys.
 */
static int test_memory_stream_keys(const char *root)
{
	char stat[BUF_SIZE], events[BUF_SIZE], text[BUF_SIZE];
	char want[BUF_SIZE], got[BUF_SIZE], key[128];
	struct mem_snap snap = {};
	int ret = KSFT_FAIL;
	const char *pos;
	size_t used = 0, i;
	int fd = -1;
	char *cg;

	cg = cg_name(root, "memory_stream_keys");
	if (!cg || cg_create(cg))
		goto cleanup;
	if (cg_read(cg, "memory.stat", stat, sizeof(stat)) ||
	    cg_read(cg, "memory.events", events, sizeof(events)))
		goto cleanup;

	pos = stat;
	while (next_key(&pos, key, sizeof(key)))
		used += snprintf(want + used, sizeof(want) - used, "%s\n", key);
	used += snprintf(want + used, sizeof(want) - used, "current\n");
	if (cg_read(cg, "memory.swap.current", text, sizeof(text)) == 0)
		used += snprintf(want + used, sizeof(want) - used,
				 "swap.current\n");
	pos = events;
	while (next_key(&pos, key, sizeof(key)))
		used += snprintf(want + used, sizeof(want) - used,
				 "events.%s\n", key);

	fd = open_subtree(cg);
	if (fd < 0 || read_mem_snap(fd, &snap, 1 << 20))
		goto cleanup;
	used = 0;
	for (i = 0; i < snap.keys->nr_keys; i++)
		used += snprintf(got + used, sizeof(got) - used, "%s\n",
				 snap.names[i]);
	if (strcmp(want, got)) {
		ksft_print_msg("KEYS names:\n%swant:\n%s", got, want);
		goto cleanup;
	}
	if (snap.nr != 1) {
		ksft_print_msg("%zu MEMORY records for a leaf, want 1\n", snap.nr);
		goto cleanup;
	}

	/* the text: memory.stat's keys, then the flush keys */
	if (cg_read(cg, STREAM_FILE, text, sizeof(text)))
		goto cleanup;
	flat_keys(stat, want, sizeof(want));
	used = strlen(want);
	snprintf(want + used, sizeof(want) - used, "%s\n%s\n%s\n",
		 CGROUP_STAT_STREAM_KEY_SEQ, CGROUP_STAT_STREAM_KEY_TIME,
		 CGROUP_STAT_STREAM_KEY_MISSED);
	flat_keys(text, got, sizeof(got));
	if (strcmp(want, got)) {
		ksft_print_msg("memory.stat.stream keys:\n%swant:\n%s", got, want);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	mem_snap_free(&snap);
	cg_destroy(cg);
	free(cg);
	return ret;
}

/* maps and touches MEM_CHARGE bytes, then sleeps until killed */
static int hold_memory(const char *cgroup, void *arg)
{
	char *p = malloc(MEM_CHARGE);
	size_t i;

	if (!p)
		return 1;
	for (i = 0; i < MEM_CHARGE; i += 4096)
		p[i] = 1;
	for (;;)
		pause();
	return 0;
}

static bool near(long long got, long long want)
{
	return got >= want - want / 20 && got <= want + want / 5;
}

/*
 * A process holding 64 MiB shows in anon, within a few %, of the text and
 * the record, without the reader flushing; both say the same for the same
 * flush.
 */
static int test_memory_stream_values(const char *root)
{
	char text[BUF_SIZE];
	struct mem_snap snap = {};
	const struct cgroup_stat_stream_memory *rec = NULL;
	struct stream_sample s;
	int ret = KSFT_FAIL;
	int sfd = -1, tfd = -1, i, k, tries;
	long long anon = -1;
	pid_t pid = -1;
	long saved;
	char *cg;

	saved = get_interval(root);
	cg = cg_name(root, "memory_stream_values");
	if (!cg || cg_create(cg))
		goto cleanup;
	pid = cg_run_nowait(cg, hold_memory, NULL);
	if (pid < 0)
		goto cleanup;
	sfd = open_stream(cg);
	tfd = open_subtree(cg);
	if (sfd < 0 || tfd < 0 || set_interval(root, MEM_INTERVAL_MS))
		goto cleanup;

	/* the charge shows after a flush of the stream's own */
	for (tries = 0; tries < 50; tries++) {
		if (wait_sample(sfd, WAIT_MS, &s) ||
		    read_stream(sfd, text, sizeof(text)) < 0)
			goto cleanup;
		anon = stat_key(text, "anon");
		if (near(anon, MEM_CHARGE))
			break;
	}
	if (!near(anon, MEM_CHARGE)) {
		ksft_print_msg("memory.stat.stream anon %lld, want about %d\n",
			       anon, MEM_CHARGE);
		goto cleanup;
	}

	/* text and record of the same flush: the same memory.stat values */
	for (tries = 0; tries < 10; tries++) {
		if (wait_readable(tfd, WAIT_MS) != 1 ||
		    read_mem_snap(tfd, &snap, 1 << 20) ||
		    read_stream(sfd, text, sizeof(text)) < 0)
			goto cleanup;
		rec = mem_record(&snap, dir_ino(cg));
		if (!rec || mem_key_index(&snap, "anon") < 0 ||
		    mem_key_index(&snap, "current") < 0) {
			ksft_print_msg("no record, or no anon or current in it\n");
			goto cleanup;
		}
		if (stat_key(text, CGROUP_STAT_STREAM_KEY_SEQ) ==
		    (long long)rec->hdr.flush_seq)
			break;
	}
	if (stat_key(text, CGROUP_STAT_STREAM_KEY_SEQ) !=
	    (long long)rec->hdr.flush_seq) {
		ksft_print_msg("no text and record of one flush in %d tries\n",
			       tries);
		goto cleanup;
	}
	if (stat_key(text, CGROUP_STAT_STREAM_KEY_TIME) !=
	    (long long)rec->hdr.flush_time_usec) {
		ksft_print_msg("flush_time_usec differs between text and record\n");
		goto cleanup;
	}
	k = mem_key_index(&snap, "current");
	for (i = 0; i < k; i++) {
		if (stat_key(text, snap.names[i]) != (long long)rec->values[i]) {
			ksft_print_msg("%s: text %lld, record %llu (flush %llu)\n",
				       snap.names[i], stat_key(text, snap.names[i]),
				       (unsigned long long)rec->values[i],
				       (unsigned long long)rec->hdr.flush_seq);
			goto cleanup;
		}
	}
	i = mem_key_index(&snap, "anon");
	if (!near(rec->values[i], MEM_CHARGE) ||
	    !near(rec->values[k], MEM_CHARGE)) {
		ksft_print_msg("record: anon %llu current %llu, want about %d\n",
			       (unsigned long long)rec->values[i],
			       (unsigned long long)rec->values[k], MEM_CHARGE);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	mem_snap_free(&snap);
	cg_destroy(cg);
	free(cg);
	return restore_interval(root, saved, ret);
}

static long long stream_seq(const char *cgroup, const char *file)
{
	char buf[BUF_SIZE];

	if (cg_read(cgroup, file, buf, sizeof(buf)))
		return -1;
	return stat_key(buf, CGROUP_STAT_STREAM_KEY_SEQ);
}

/*
 * The cpu and memory flushers are independent: each sequence advances
 * with its own interval only.
 */
static int test_memory_stream_independent(const char *root)
{
	const struct stream_ctl *ctls[] = { &ctl_cpu, &ctl_memory };
	long saved[2];
	int fds[2] = { -1, -1 };
	int ret = KSFT_FAIL;
	int on, i;

	for (i = 0; i < 2; i++) {
		ctl = ctls[i];
		saved[i] = get_interval(root);
		fds[i] = open_stream(root);
		if (fds[i] < 0 || set_interval(root, 0))
			goto cleanup;
	}
	for (on = 0; on < 2; on++) {
		long long before[2], after[2];

		ctl = ctls[on];
		if (set_interval(root, MEM_INTERVAL_MS))
			goto cleanup;
		for (i = 0; i < 2; i++)
			before[i] = stream_seq(root, ctls[i]->stream_file);
		usleep(10 * MEM_INTERVAL_MS * 1000);
		for (i = 0; i < 2; i++)
			after[i] = stream_seq(root, ctls[i]->stream_file);
		if (set_interval(root, 0))
			goto cleanup;
		if (after[on] <= before[on] || after[!on] != before[!on]) {
			ksft_print_msg("%s on: cpu seq %lld -> %lld, memory seq %lld -> %lld\n",
				       ctls[on]->name, before[0], after[0],
				       before[1], after[1]);
			goto cleanup;
		}
	}
	ret = KSFT_PASS;
cleanup:
	for (i = 0; i < 2; i++) {
		ctl = ctls[i];
		if (fds[i] >= 0)
			close(fds[i]);
		ret = restore_interval(root, saved[i], ret);
	}
	ctl = &ctl_memory;
	return ret;
}

/* records of @snap in pre-order from @top, ids those of the directories */
static int check_mem_walk(const struct mem_snap *snap, const char *top,
			  size_t want)
{
	struct subtree_snap ids = {};
	size_t i;
	int ret = -1;

	if (snap->nr != want) {
		ksft_print_msg("%zu records, want %zu\n", snap->nr, want);
		return -1;
	}
	/* as cpu records, for the checks of the ids */
	if (snap_alloc(&ids, snap->nr))
		return -1;
	ids.nr = snap->nr;
	for (i = 0; i < snap->nr; i++) {
		ids.rec[i].size = sizeof(ids.rec[i]);
		ids.rec[i].type = CGROUP_STAT_STREAM_RECORD_CPU;
		ids.rec[i].cgroup_id = snap->rec[i]->hdr.cgroup_id;
		ids.rec[i].parent_id = snap->rec[i]->hdr.parent_id;
	}
	if (!check_preorder(&ids, top) && !check_ids_match_dirs(&ids, top))
		ret = 0;
	free(ids.rec);
	return ret;
}

static int read_mem_as_nobody(void *arg)
{
	struct mem_snap snap = {};
	int fd, ret;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 2;
	fd = open((char *)arg, O_RDONLY);
	if (fd < 0)
		return 3;
	ret = read_mem_snap(fd, &snap, 1 << 20) || snap.nr != 4 ? 4 : 0;
	close(fd);
	mem_snap_free(&snap);
	return ret;
}

/*
 * Layout: KEYS first, then one record per cgroup with memory.stat, in
 * pre-order; whole records per read; small buffers EINVAL; resume across
 * removal; an unprivileged reader.
 */
static int test_memory_stream_subtree(const char *root)
{
	struct mem_snap big = {}, small = {};
	char path[PATH_MAX + 64], buf[4096];
	size_t keys_size, rec_size, i;
	unsigned long long ids[5];
	int ret = KSFT_FAIL;
	int fd = -1, err;
	char *top, *sub;
	ssize_t len;

	top = cg_name(root, "memory_stream_subtree");
	if (!top || cg_create(top) || enable_memory(top) ||
	    make_tree(top, 30, 5))
		goto cleanup;
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/c%zu", top, i);
		if (enable_memory(path))
			goto cleanup;
	}
	fd = open_subtree(top);
	if (fd < 0 || read_mem_snap(fd, &big, 1 << 20))
		goto cleanup;
	if (big.reads != 1 || check_mem_walk(&big, top, 31))
		goto cleanup;

	/* record by record: the same walk */
	keys_size = big.keys->size;
	rec_size = big.rec[0]->hdr.size;
	if (read_mem_snap_by(fd, &small, keys_size, rec_size) ||
	    small.nr != big.nr || small.reads != (int)big.nr + 1) {
		ksft_print_msg("record-sized reads: %zu records\n", small.nr);
		goto cleanup;
	}
	for (i = 0; i < big.nr; i++)
		if (small.rec[i]->hdr.cgroup_id != big.rec[i]->hdr.cgroup_id)
			goto cleanup;

	/* too small for KEYS, then for a record: EINVAL */
	if (pread(fd, buf, keys_size - 1, 0) != -1 || errno != EINVAL) {
		ksft_print_msg("buffer below the KEYS record: not EINVAL\n");
		goto cleanup;
	}
	if (pread(fd, buf, keys_size, 0) != (ssize_t)keys_size ||
	    pread(fd, buf, rec_size - 1, keys_size) != -1 || errno != EINVAL) {
		ksft_print_msg("buffer below a MEMORY record: not EINVAL\n");
		goto cleanup;
	}

	/* a cgroup without memory.stat has no record */
	sub = cg_name(top, "c0/c7");
	if (!sub || access(sub, F_OK))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/nomem", sub);
	if (mkdir(path, 0755))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/nomem/memory.stat", sub);
	free(sub);
	if (!access(path, F_OK) || read_mem_snap(fd, &big, 1 << 20) ||
	    big.nr != 31) {
		ksft_print_msg("with a cgroup lacking memory.stat: %zu records\n",
			       big.nr);
		goto cleanup;
	}

	/* resume: the cgroups the last read ended at and after removed */
	close(fd);
	destroy_tree(top);
	if (cg_create(top) || enable_memory(top))
		goto cleanup;
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/c%zu", top, i);
		if (mkdir(path, 0755))
			goto cleanup;
		ids[i] = dir_ino(path);
	}
	fd = open_subtree(top);
	if (fd < 0)
		goto cleanup;
	len = pread(fd, buf, keys_size + 2 * rec_size, 0);
	if (len != (ssize_t)(keys_size + 2 * rec_size)) {
		ksft_print_msg("KEYS, @top and c0: %zd bytes\n", len);
		goto cleanup;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/c%zu", top, i);
		if (rmdir(path))
			goto cleanup;
	}
	len = pread(fd, buf, sizeof(buf), keys_size + 2 * rec_size);
	if (len != (ssize_t)(3 * rec_size)) {
		ksft_print_msg("after removing c0 and c1: %zd bytes\n", len);
		goto cleanup;
	}
	for (i = 0; i < 3; i++) {
		const struct cgroup_stat_stream_header *h =
			(void *)(buf + i * rec_size);

		if (h->cgroup_id != ids[i + 2]) {
			ksft_print_msg("resumed record %zu: not c%zu\n", i, i + 2);
			goto cleanup;
		}
	}

	/* an unprivileged reader */
	snprintf(path, sizeof(path), "%s/%s", top, SUBTREE_FILE);
	err = run_timed(read_mem_as_nobody, path, WAIT_MS);
	if (err) {
		ksft_print_msg("unprivileged read of %s: step %d failed\n",
			       path, err);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	mem_snap_free(&big);
	mem_snap_free(&small);
	destroy_tree(top);
	free(top);
	return ret;
}

/*
 * Disabling the memory controller above an open, polled memory file
 * removes the file: the poller wakes with POLLERR, reads fail with ENODEV,
 * with streaming off (no flush to wake it).
 */
static int test_memory_stream_disable(const char *root)
{
	struct pollfd pfd = { .events = POLLIN };
	int ret = KSFT_FAIL;
	char *parent, *child = NULL;
	char buf[BUF_SIZE];
	long saved;
	pid_t pid = -1;

	saved = get_interval(root);
	parent = cg_name(root, "memory_stream_disable");
	if (!parent || cg_create(parent) || enable_memory(parent) ||
	    set_interval(root, 0))
		goto cleanup;
	child = cg_name(parent, "child");
	if (!child || cg_create(child))
		goto cleanup;
	pfd.fd = open_stream(child);
	if (pfd.fd < 0 || read_stream(pfd.fd, buf, sizeof(buf)) < 0)
		goto cleanup;
	pid = run_nowait(poller_process, &pfd.fd);
	if (pid < 0 || !wait_sleeping(pid, WAIT_MS))
		goto cleanup;
	if (cg_write(parent, "cgroup.subtree_control", "-memory")) {
		ksft_print_msg("can't disable memory in %s\n", parent);
		goto cleanup;
	}
	if (wait_child(pid, WAIT_MS)) {
		ksft_print_msg("the poller did not wake with POLLERR\n");
		goto cleanup;
	}
	pid = -1;
	if (pread(pfd.fd, buf, sizeof(buf), 0) != -1 || errno != ENODEV) {
		ksft_print_msg("read after disabling memory: not ENODEV\n");
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (pfd.fd > 0)
		close(pfd.fd);
	cg_destroy(child);
	cg_destroy(parent);
	free(child);
	free(parent);
	return restore_interval(root, saved, ret);
}

/* @n cgroups, all with memory.stat, in one read */
static int memory_stream_many(const char *root, int n)
{
	struct mem_snap snap = {};
	char path[PATH_MAX];
	int ret = KSFT_FAIL;
	long long start;
	int fd = -1, j;
	char *top;

	top = cg_name(root, "memory_stream_many");
	if (!top || cg_create(top) || enable_memory(top))
		goto cleanup;
	start = now_usec();
	if (make_tree(top, n, 100))
		goto cleanup;
	/* make_tree() puts the cgroups past the first 100 below c0, c1, ... */
	for (j = 0; j < n / 100 - 1 && j < 100; j++) {
		snprintf(path, sizeof(path), "%s/c%d", top, j);
		if (enable_memory(path))
			goto cleanup;
	}
	ksft_print_msg("%d memory cgroups made in %lld ms\n", n,
		       (now_usec() - start) / 1000);
	fd = open_subtree(top);
	if (fd < 0)
		goto cleanup;
	start = now_usec();
	if (read_mem_snap(fd, &snap, MEM_SNAP_MAX))
		goto cleanup;
	ksft_print_msg("KEYS + %zu records (%zu bytes each) in %d read(s), %lld us\n",
		       snap.nr, (size_t)snap.rec[0]->hdr.size, snap.reads,
		       now_usec() - start);
	if (snap.reads != 1 || check_mem_walk(&snap, top, n + 1))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	mem_snap_free(&snap);
	destroy_tree(top);
	free(top);
	return ret;
}

static int test_memory_stream_subtree_many(const char *root)
{
	return memory_stream_many(root, 1000);
}

/* run when named: removing 10,000 memory cgroups takes minutes under TCG */
static int test_memory_stream_subtree_10k(const char *root)
{
	return memory_stream_many(root, 10000);
}

/* which controllers' streams a test is about */
#define CTL_CPU		0x01
#define CTL_MEMORY	0x02
#define CTL_ALL		(CTL_CPU | CTL_MEMORY)
/* run only when named on the command line */
#define CTL_NAMED	0x80

#define T(x, ctls) { x, #x, ctls }
struct stat_stream_test {
	int (*fn)(const char *root);
	const char *name;
	unsigned int ctls;
} tests[] = {
	T(test_stat_stream_interval, CTL_ALL),
	T(test_stat_stream_poll, CTL_ALL),
	T(test_stat_stream_idle, CTL_ALL),
	T(test_stat_stream_values, CTL_CPU),
	T(test_stat_stream_reads, CTL_CPU),
	T(test_stat_stream_rmdir, CTL_ALL),
	T(test_stat_stream_rmdir_race, CTL_ALL),
	T(test_stat_stream_stress, CTL_CPU),
	T(test_stat_stream_new_cgroup, CTL_CPU),
	T(test_stat_stream_rmdir_unrelated, CTL_ALL),
	T(test_stat_stream_stop_fresh, CTL_ALL),
	T(test_stat_stream_publish_window, CTL_CPU),
	T(test_stat_stream_subtree_layout, CTL_CPU),
	T(test_stat_stream_subtree_values, CTL_CPU),
	T(test_stat_stream_subtree_many, CTL_CPU),
	T(test_stat_stream_subtree_churn, CTL_CPU),
	T(test_stat_stream_subtree_resume, CTL_CPU),
	T(test_stat_stream_subtree_rmdir, CTL_CPU),
	T(test_stat_stream_subtree_rmdir_race, CTL_ALL),
	T(test_stat_stream_subtree_stop, CTL_CPU),
	T(test_memory_stream_keys, CTL_MEMORY),
	T(test_memory_stream_values, CTL_MEMORY),
	T(test_memory_stream_independent, CTL_MEMORY),
	T(test_memory_stream_subtree, CTL_MEMORY),
	T(test_memory_stream_disable, CTL_MEMORY),
	T(test_memory_stream_subtree_many, CTL_MEMORY),
	T(test_memory_stream_subtree_10k, CTL_MEMORY | CTL_NAMED),
};

#undef T

static bool wanted(const struct stat_stream_test *t, const char *name,
		   int argc, char *argv[])
{
	int i;

	if (argc < 2)
		return !(t->ctls & CTL_NAMED);
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

/*
 * The memory runs need the memory stream and the memory controller in the
 * root's children: Returns NULL, or why they are skipped.
 */
static const char *memory_unavailable(const char *root)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", root, ctl_memory.interval_file);
	if (access(path, F_OK))
		return "no memory.stat.stream support";
	if (!has_word(root, "cgroup.subtree_control", "memory") &&
	    cg_write(root, "cgroup.subtree_control", "+memory"))
		return "the memory controller can't be enabled";
	return NULL;
}

int main(int argc, char *argv[])
{
	const struct stream_ctl *ctls[] = { &ctl_cpu, &ctl_memory };
	char root[PATH_MAX], path[PATH_MAX + 64], name[128];
	const char *skip = NULL;
	int planned = 0;
	size_t c, i;

	ksft_print_header();

	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_skip("cgroup v2 isn't mounted\n");
	snprintf(path, sizeof(path), "%s/%s", root, ctl_cpu.interval_file);
	if (access(path, F_OK))
		ksft_exit_skip("%s/%s is missing: no cpu.stat.stream support\n",
			       root, ctl_cpu.interval_file);

	for (c = 0; c < ARRAY_SIZE(ctls); c++) {
		for (i = 0; i < ARRAY_SIZE(tests); i++) {
			snprintf(name, sizeof(name), "%s%s%s",
				 c ? ctls[c]->name : "", c ? ":" : "",
				 tests[i].name);
			if (((tests[i].ctls >> c) & 1) && wanted(&tests[i], name, argc, argv))
				planned++;
		}
	}
	ksft_set_plan(planned);

	for (c = 0; c < ARRAY_SIZE(ctls); c++) {
		ctl = ctls[c];
		if (ctl == &ctl_memory)
			skip = memory_unavailable(root);
		for (i = 0; i < ARRAY_SIZE(tests); i++) {
			snprintf(name, sizeof(name), "%s%s%s",
				 c ? ctl->name : "", c ? ":" : "",
				 tests[i].name);
			if (!((tests[i].ctls >> c) & 1) ||
			    !wanted(&tests[i], name, argc, argv))
				continue;
			if (skip) {
				ksft_test_result_skip("%s: %s\n", name, skip);
				continue;
			}
			switch (tests[i].fn(root)) {
			case KSFT_PASS:
				ksft_test_result_pass("%s\n", name);
				break;
			case KSFT_SKIP:
				ksft_test_result_skip("%s\n", name);
				break;
			default:
				ksft_test_result_fail("%s\n", name);
				break;
			}
			ctl = ctls[c];
		}
	}

	ksft_finished();
}
