// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for cgroup v2 <ctrl>.stat.stream, <ctrl>.stat.stream.subtree and
 * the root's <ctrl>.stat.stream_interval, for cpu, memory and io.
 *
 * usage: test_stat_stream [TEST_NAME...]  (default: all)
 *
 * The tests of what every controller's stream does run for cpu, then for
 * memory and io, named "memory:TEST_NAME" and "io:TEST_NAME" there; the
 * tests of each controller's values run for it alone.  The io tests do
 * I/O on a loop device of their own over a file in memory.
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
#include <linux/loop.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <ctype.h>
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

/*
 * A controller's stream files, a key its stream file always prints (none
 * for io: its lines are devices), the type of its subtree records, and
 * whether its stream file prints flush_missed.
 */
struct stream_ctl {
	const char *name;
	const char *interval_file;
	const char *stream_file;
	const char *subtree_file;
	const char *key;
	unsigned int record_type;
	bool flush_missed;
};

static const struct stream_ctl ctl_cpu = {
	.name = "cpu",
	.interval_file = "cpu.stat.stream_interval",
	.stream_file = "cpu.stat.stream",
	.subtree_file = "cpu.stat.stream.subtree",
	.key = "usage_usec",
	.record_type = CGROUP_STAT_STREAM_RECORD_CPU,
	.flush_missed = true,
};

static const struct stream_ctl ctl_memory = {
	.name = "memory",
	.interval_file = "memory.stat.stream_interval",
	.stream_file = "memory.stat.stream",
	.subtree_file = "memory.stat.stream.subtree",
	.key = "anon",
	.record_type = CGROUP_STAT_STREAM_RECORD_MEMORY,
	.flush_missed = true,
};

static const struct stream_ctl ctl_io = {
	.name = "io",
	.interval_file = "io.stat.stream_interval",
	.stream_file = "io.stat.stream",
	.subtree_file = "io.stat.stream.subtree",
	.key = NULL,
	.record_type = CGROUP_STAT_STREAM_RECORD_IO,
	.flush_missed = false,
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

/*
 * Whether the last two lines of @buf are "flush_seq N" and
 * "flush_time_usec T", and no other line has a flush key: how
 * io.stat.stream ends (it has no flush_missed).
 */
static bool flush_lines_last(const char *buf)
{
	static const char * const keys[] = {
		CGROUP_STAT_STREAM_KEY_SEQ, CGROUP_STAT_STREAM_KEY_TIME,
	};
	const char *line = buf, *last[2] = { NULL, NULL };
	size_t len;
	int i;

	while (*line) {
		const char *nl = strchr(line, '\n');

		if (!nl)
			return false;
		if (!strncmp(line, "flush_", 6) && last[1])
			return false;
		if (!strncmp(line, "flush_", 6))
			last[last[0] ? 1 : 0] = line;
		line = nl + 1;
	}
	for (i = 0; i < 2; i++) {
		char *end;

		if (!last[i])
			return false;
		len = strlen(keys[i]);
		if (strncmp(last[i], keys[i], len) || last[i][len] != ' ')
			return false;
		errno = 0;
		strtoull(last[i] + len + 1, &end, 10);
		if (errno || end == last[i] + len + 1 || *end != '\n')
			return false;
		/* nothing but the time after the seq */
		if (i == 0 && end + 1 != last[1])
			return false;
		if (i == 1 && end[1])
			return false;
	}
	return true;
}

static int parse_sample(const char *buf, struct stream_sample *s)
{
	if (ctl == &ctl_cpu) {
		s->usage_usec = stat_key(buf, "usage_usec");
		s->user_usec = stat_key(buf, "user_usec");
		s->system_usec = stat_key(buf, "system_usec");
	} else {
		/* the cpu fields stay 0; the controller's own key must be there */
		long long found = ctl->key && stat_key(buf, ctl->key) < 0 ? -1 : 0;

		s->usage_usec = found;
		s->user_usec = found;
		s->system_usec = found;
	}
	s->seq = stat_key(buf, CGROUP_STAT_STREAM_KEY_SEQ);
	s->time_usec = stat_key(buf, CGROUP_STAT_STREAM_KEY_TIME);
	if (ctl->flush_missed)
		s->missed = stat_key(buf, CGROUP_STAT_STREAM_KEY_MISSED);
	else
		s->missed = flush_lines_last(buf) ? 0 : -1;

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
	    (ctl->key && key_count(seq_text, ctl->key) != 1) ||
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

/* far longer than the test: no flush comes while the poller waits */
#define STOP_QUIET_INTERVAL_MS	600000

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
	/*
	 * No flush may wake the poller before the stop: the next one is a
	 * long interval away (a cycle under way when it changed may still
	 * complete: read it).  At 100 ms one often came first on a slow
	 * kernel (KASAN under TCG), the poller saw POLLIN and exited.
	 */
	if (set_interval(root, STOP_QUIET_INTERVAL_MS) ||
	    (wait_readable(fd, 2 * NEW_CG_INTERVAL_MS) == 1 &&
	     read_sample(fd, &s)))
		goto cleanup;

	waiter = run_nowait(wait_pri_fn, &fd);
	if (waiter < 0 || !wait_sleeping(waiter, WAIT_MS)) {
		ksft_print_msg("the poller did not sleep in poll()\n");
		goto cleanup;
	}
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

/* @n cgroups come back in one read of a large buffer. */
static int stat_stream_subtree_many(const char *root, int n)
{
	struct subtree_snap snap = {};
	int ret = KSFT_FAIL;
	long long start;
	char *top;
	int fd = -1;

	top = cg_name(root, "stat_stream_subtree_many");
	if (!top || cg_create(top))
		goto cleanup;
	start = now_usec();
	if (make_tree(top, n, 100))
		goto cleanup;
	ksft_print_msg("%d cgroups made in %lld ms\n", n,
		       (now_usec() - start) / 1000);
	fd = open_subtree(top);
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
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	free(snap.rec);
	destroy_tree(top);
	free(top);
	return ret;
}

static int test_stat_stream_subtree_many(const char *root)
{
	return stat_stream_subtree_many(root, 1000);
}

/* run when named: making and removing 10,000 cgroups takes minutes under TCG */
static int test_stat_stream_subtree_10k(const char *root)
{
	return stat_stream_subtree_many(root, 10000);
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

/*
 * The size of the record of a new cgroup without children, in which
 * nothing ran: a cpu record, or an io record listing no device.
 */
static size_t leaf_record_size(void)
{
	return ctl == &ctl_io ? sizeof(struct cgroup_stat_stream_io) : REC_SIZE;
}

/* Whether @len bytes read at offset 0 are one record of a new leaf */
static bool is_leaf_record(const struct cgroup_stat_stream_record *rec,
			   ssize_t len)
{
	return len == (ssize_t)leaf_record_size() && rec->size == len &&
	       rec->type == ctl->record_type;
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
	return is_leaf_record(rec, ret) ? 0 : 4;
}

/*
 * Reads the first records of a snapshot of @fd: the opened cgroup's record
 * exactly for cpu, whole records of the controller's type for the others,
 * whose records vary in size.  Returns 0 or -1.
 */
static int read_first_records(int fd)
{
	static struct cgroup_stat_stream_record rec[512];
	size_t want = ctl == &ctl_cpu ? REC_SIZE : sizeof(rec);
	ssize_t len, off = 0;

	len = pread(fd, rec, want, 0);
	if (len <= 0 || (ctl == &ctl_cpu && len != REC_SIZE))
		goto bad;
	while (off < len) {
		const struct cgroup_stat_stream_header *h = (void *)((char *)rec + off);

		if (len - off < (ssize_t)sizeof(*h) || h->size < sizeof(*h) ||
		    h->size > len - off || h->type != ctl->record_type)
			goto bad;
		off += h->size;
	}
	return 0;
bad:
	ksft_print_msg("first read of a snapshot: %zd bytes, not whole %s records\n",
		       len, ctl->name);
	return -1;
}

/* Removal of the opened cgroup: EPOLLERR and ENODEV; unprivileged reads. */
static int test_stat_stream_subtree_rmdir(const char *root)
{
	struct cgroup_stat_stream_record rec[2];
	ssize_t len;
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
	if (fd < 0)
		goto cleanup;
	len = pread(fd, rec, sizeof(rec), 0);
	if (!is_leaf_record(rec, len)) {
		ksft_print_msg("leaf's snapshot: %zd bytes, want one record of %zu\n",
			       len, leaf_record_size());
		goto cleanup;
	}
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
	struct pollfd pfd;
	int ret = KSFT_FAIL;
	long saved;
	int fd;

	saved = get_interval(root);
	fd = open_subtree(root);
	if (fd < 0 || set_interval(root, SUBTREE_INTERVAL_MS) ||
	    wait_readable(fd, WAIT_MS) != 1 || read_first_records(fd) ||
	    set_interval(root, 0))
		goto cleanup;
	pfd.fd = fd;
	pfd.events = POLLIN | POLLPRI;
	if (poll(&pfd, 1, WAIT_MS) != 1 || !(pfd.revents & POLLPRI)) {
		ksft_print_msg("after the stop: revents %#x, want POLLPRI\n",
			       pfd.revents);
		goto cleanup;
	}
	if (read_first_records(fd) || poll(&pfd, 1, 0) != 0) {
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
#define MEM_TOUCH_WAIT_MS	120000
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

	/*
	 * All 64 MiB touched (memory.current is live, no flush): on a slow
	 * kernel (KASAN under TCG) that took longer than the flushes below
	 * wait, and anon was still growing at 59 MiB.
	 */
	for (tries = 0; tries < MEM_TOUCH_WAIT_MS / 10 &&
	     cg_read_long(cg, "memory.current") < MEM_CHARGE; tries++)
		usleep(10000);
	if (cg_read_long(cg, "memory.current") < MEM_CHARGE) {
		ksft_print_msg("memory.current %ld after %d ms, want %d\n",
			       cg_read_long(cg, "memory.current"),
			       MEM_TOUCH_WAIT_MS, MEM_CHARGE);
		goto cleanup;
	}

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

#define INDEPENDENT_MAX	3

/*
 * The flushers of @ctls are independent: with one interval set at a time,
 * that controller's sequence advances and the others' stay put.  Every
 * stream is open throughout, so each flusher could run.  Leaves ctl at
 * @self.
 */
static int flushers_independent(const char *root,
				const struct stream_ctl * const *ctls, int n,
				const struct stream_ctl *self)
{
	long saved[INDEPENDENT_MAX];
	int fds[INDEPENDENT_MAX];
	int ret = KSFT_FAIL;
	int on, i, got;

	for (got = 0; got < n; got++) {
		i = got;
		ctl = ctls[i];
		saved[i] = get_interval(root);
		fds[i] = open_stream(root);
		if (fds[i] < 0 || set_interval(root, 0))
			goto cleanup;
	}
	for (on = 0; on < n; on++) {
		long long before[INDEPENDENT_MAX], after[INDEPENDENT_MAX];
		bool bad = false;

		ctl = ctls[on];
		if (set_interval(root, MEM_INTERVAL_MS))
			goto cleanup;
		for (i = 0; i < n; i++)
			before[i] = stream_seq(root, ctls[i]->stream_file);
		usleep(10 * MEM_INTERVAL_MS * 1000);
		for (i = 0; i < n; i++)
			after[i] = stream_seq(root, ctls[i]->stream_file);
		if (set_interval(root, 0))
			goto cleanup;
		for (i = 0; i < n; i++) {
			if (before[i] < 0 || after[i] < 0 ||
			    (i == on ? after[i] <= before[i] : after[i] != before[i]))
				bad = true;
		}
		if (bad) {
			ksft_print_msg("only %s's interval set:\n", ctls[on]->name);
			for (i = 0; i < n; i++)
				ksft_print_msg("  %s seq %lld -> %lld\n",
					       ctls[i]->name, before[i], after[i]);
			goto cleanup;
		}
	}
	ret = KSFT_PASS;
cleanup:
	for (i = 0; i < n && i <= got; i++) {
		ctl = ctls[i];
		if (fds[i] >= 0)
			close(fds[i]);
		ret = restore_interval(root, saved[i], ret);
	}
	ctl = self;
	return ret;
}

/*
 * The cpu and memory flushers are independent: each sequence advances
 * with its own interval only.
 */
static int test_memory_stream_independent(const char *root)
{
	static const struct stream_ctl * const ctls[] = {
		&ctl_cpu, &ctl_memory,
	};

	return flushers_independent(root, ctls, ARRAY_SIZE(ctls), &ctl_memory);
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
	if (!access(path, F_OK) || read_mem_snap(fd, &big, 1 << 20) ||
	    big.nr != 31) {
		ksft_print_msg("with a cgroup lacking memory.stat: %zu records\n",
			       big.nr);
		free(sub);
		goto cleanup;
	}
	/*
	 * Nor when memory is on for it only implicitly: io depends on
	 * memory, so +io gives nomem a memory css, but no memory.stat.
	 */
	snprintf(path, sizeof(path), "%s/c0", top);
	if (!cg_write(top, "cgroup.subtree_control", "+io") &&
	    !cg_write(path, "cgroup.subtree_control", "+io") &&
	    !cg_write(sub, "cgroup.subtree_control", "+io")) {
		snprintf(path, sizeof(path), "%s/nomem/memory.stat", sub);
		if (!access(path, F_OK) || read_mem_snap(fd, &big, 1 << 20) ||
		    big.nr != 31) {
			ksft_print_msg("with memory implicit (+io) for a cgroup: %zu records\n",
				       big.nr);
			free(sub);
			goto cleanup;
		}
	}
	free(sub);

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
 * Disabling the controller (memory, io) above an open, polled stream file
 * removes the file: the poller wakes with POLLERR, reads fail with ENODEV,
 * with streaming off (no flush to wake it).
 */
static int stream_disable(const char *root)
{
	struct pollfd pfd = { .events = POLLIN };
	int ret = KSFT_FAIL;
	char *parent, *child = NULL;
	char buf[BUF_SIZE], name[64], on[64], off[64];
	long saved;
	pid_t pid = -1;

	saved = get_interval(root);
	snprintf(name, sizeof(name), "%s_stream_disable", ctl->name);
	snprintf(on, sizeof(on), "+%s", ctl->name);
	snprintf(off, sizeof(off), "-%s", ctl->name);
	parent = cg_name(root, name);
	if (!parent || cg_create(parent) || set_interval(root, 0))
		goto cleanup;
	if (cg_write(parent, "cgroup.subtree_control", on)) {
		ksft_print_msg("can't enable %s in %s\n", ctl->name, parent);
		goto cleanup;
	}
	child = cg_name(parent, "child");
	if (!child || cg_create(child))
		goto cleanup;
	pfd.fd = open_stream(child);
	if (pfd.fd < 0 || read_stream(pfd.fd, buf, sizeof(buf)) < 0)
		goto cleanup;
	pid = run_nowait(poller_process, &pfd.fd);
	if (pid < 0 || !wait_sleeping(pid, WAIT_MS))
		goto cleanup;
	if (cg_write(parent, "cgroup.subtree_control", off)) {
		ksft_print_msg("can't disable %s in %s\n", ctl->name, parent);
		goto cleanup;
	}
	if (wait_child(pid, WAIT_MS)) {
		ksft_print_msg("the poller did not wake with POLLERR\n");
		goto cleanup;
	}
	pid = -1;
	if (pread(pfd.fd, buf, sizeof(buf), 0) != -1 || errno != ENODEV) {
		ksft_print_msg("read after disabling %s: not ENODEV\n",
			       ctl->name);
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

static int test_memory_stream_disable(const char *root)
{
	return stream_disable(root);
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

/*
 * io.stat.stream and io.stat.stream.subtree
 */
#define IO_INTERVAL_MS		100
#define IO_CHUNK		(1024 * 1024)	/* bytes per O_DIRECT read or write */
#define IO_BYTES		(16 << 20)	/* written, then read, by the values test */
#define IO_SMALL		(2 << 20)	/* written by the other tests' children */
#define IO_LOOP_BYTES		(64 << 20)	/* the loop device's size */
#define IO_SNAP_MAX		(16 << 20)
#define IO_MAX_DEVS		64
#define IO_NR_STATS		6
#define IO_TRIES		50

enum { IO_RBYTES, IO_WBYTES, IO_RIOS, IO_WIOS, IO_DBYTES, IO_DIOS };

/* io.stat's stats in its order, and where a record's device has them */
static const struct {
	const char *name;
	size_t off;
} io_stats[IO_NR_STATS] = {
	{ "rbytes", offsetof(struct cgroup_stat_stream_io_device, rbytes) },
	{ "wbytes", offsetof(struct cgroup_stat_stream_io_device, wbytes) },
	{ "rios", offsetof(struct cgroup_stat_stream_io_device, rios) },
	{ "wios", offsetof(struct cgroup_stat_stream_io_device, wios) },
	{ "dbytes", offsetof(struct cgroup_stat_stream_io_device, dbytes) },
	{ "dios", offsetof(struct cgroup_stat_stream_io_device, dios) },
};

static unsigned long long
io_dev_stat(const struct cgroup_stat_stream_io_device *d, int i)
{
	return *(const __u64 *)((const char *)d + io_stats[i].off);
}

static size_t io_rec_size(size_t nr_devices)
{
	return sizeof(struct cgroup_stat_stream_io) +
	       nr_devices * sizeof(struct cgroup_stat_stream_io_device);
}

/* one line of io.stat: a device, its stats if it printed them */
struct io_line {
	unsigned int major, minor;
	bool has_stats;
	unsigned long long stat[IO_NR_STATS];
};

/* io.stat's or io.stat.stream's text, parsed */
struct io_text {
	struct io_line dev[IO_MAX_DEVS];
	int nr;
	long long seq, time_usec;	/* -1 for io.stat */
};

/*
 * "MAJ:MIN", then nothing or the six stats in io_stats' order, then maybe
 * the policies' key=value fields.  Returns 0, or -1 if malformed.
 */
static int parse_io_line(char *line, struct io_line *d)
{
	char *tok, *save, *end;
	int i, n = 0;

	memset(d, 0, sizeof(*d));
	if (sscanf(line, "%u:%u%n", &d->major, &d->minor, &n) != 2 ||
	    !isdigit((unsigned char)line[0]) || (line[n] && line[n] != ' '))
		return -1;
	tok = strtok_r(line + n, " ", &save);
	if (tok && !strncmp(tok, "rbytes=", 7)) {
		for (i = 0; i < IO_NR_STATS; i++) {
			size_t len = strlen(io_stats[i].name);

			if (!tok || strncmp(tok, io_stats[i].name, len) ||
			    tok[len] != '=' || !isdigit((unsigned char)tok[len + 1]))
				return -1;
			errno = 0;
			d->stat[i] = strtoull(tok + len + 1, &end, 10);
			if (errno || *end)
				return -1;
			tok = strtok_r(NULL, " ", &save);
		}
		d->has_stats = true;
	}
	/* the policies' fields: key=value, none of the stats again */
	for (; tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strchr(tok, '=') || tok[0] == '=')
			return -1;
		for (i = 0; i < IO_NR_STATS; i++)
			if (!strncmp(tok, io_stats[i].name, strlen(io_stats[i].name)) &&
			    tok[strlen(io_stats[i].name)] == '=')
				return -1;
	}
	return 0;
}

/*
 * Parses io.stat's text, or io.stat.stream's if @stream: io.stat's lines,
 * then flush_seq and flush_time_usec as the last two.  Returns 0, or -1
 * (and prints the text) if malformed.
 */
static int parse_io_text(const char *buf, struct io_text *t, bool stream)
{
	const char *p = buf;
	char line[1024];
	int i;

	t->nr = 0;
	t->seq = -1;
	t->time_usec = -1;
	if (stream && !flush_lines_last(buf))
		goto bad;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len;

		if (!nl || (size_t)(nl - p) >= sizeof(line))
			goto bad;
		len = nl - p;
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl + 1;
		/* flush_lines_last() checked them */
		if (stream && !strncmp(line, "flush_", 6))
			continue;
		if (t->nr == IO_MAX_DEVS || parse_io_line(line, &t->dev[t->nr]))
			goto bad;
		for (i = 0; i < t->nr; i++)
			if (t->dev[i].major == t->dev[t->nr].major &&
			    t->dev[i].minor == t->dev[t->nr].minor)
				goto bad;
		t->nr++;
	}
	if (stream) {
		t->seq = stat_key(buf, CGROUP_STAT_STREAM_KEY_SEQ);
		t->time_usec = stat_key(buf, CGROUP_STAT_STREAM_KEY_TIME);
	}
	return 0;
bad:
	ksft_print_msg("not io.stat%s's format:\n%s", stream ? ".stream" : "",
		       buf);
	return -1;
}

/* Reads and parses @cgroup's io.stat (@stream false) or io.stat.stream. */
static int read_io_file(const char *cgroup, bool stream, struct io_text *t)
{
	char buf[BUF_SIZE];
	const char *file = stream ? ctl_io.stream_file : "io.stat";

	if (cg_read(cgroup, file, buf, sizeof(buf))) {
		ksft_print_msg("can't read %s/%s\n", cgroup, file);
		return -1;
	}
	return parse_io_text(buf, t, stream);
}

/* Reads and parses one snapshot of the open io.stat.stream @fd. */
static int read_io_stream(int fd, struct io_text *t)
{
	char buf[BUF_SIZE];

	if (read_stream(fd, buf, sizeof(buf)) < 0)
		return -1;
	return parse_io_text(buf, t, true);
}

static const struct io_line *io_text_dev(const struct io_text *t, dev_t dev)
{
	int i;

	for (i = 0; i < t->nr; i++)
		if (t->dev[i].major == major(dev) && t->dev[i].minor == minor(dev))
			return &t->dev[i];
	return NULL;
}

/* one io snapshot: its records, each 48 + 56 * nr_devices bytes */
struct io_snap {
	char *buf;
	size_t len;
	int reads;
	const struct cgroup_stat_stream_io **rec;
	size_t nr;
};

static void io_snap_free(struct io_snap *snap)
{
	free(snap->buf);
	free(snap->rec);
	memset(snap, 0, sizeof(*snap));
}

/*
 * Checks that @len bytes at @buf are whole IO records: type IO, flags and
 * reserved 0, size 48 + 56 * nr_devices.  Returns how many, or -1.
 */
static int check_io_records(const char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;

	while (off < len) {
		const struct cgroup_stat_stream_io *r = (const void *)(buf + off);

		if (len - off < sizeof(*r) ||
		    r->hdr.type != CGROUP_STAT_STREAM_RECORD_IO ||
		    r->hdr.size != io_rec_size(r->nr_devices) ||
		    r->hdr.size > len - off || r->hdr.flags || r->reserved) {
			ksft_print_msg("rec %d at %zu/%zu: type %u size %u flg %u devs %u rsv %u\n",
				       n, off, len, r->hdr.type, r->hdr.size,
				       r->hdr.flags, r->nr_devices, r->reserved);
			return -1;
		}
		off += r->hdr.size;
		n++;
	}
	return n;
}

/*
 * Reads a whole io snapshot from @fd: a first read at offset 0 of @first
 * bytes, then read(2)s of @chunk bytes from where the last ended; with
 * @like, each of the first @like->nr reads asks for exactly the size of
 * that record in @like.  Every read must return whole records.  Returns 0
 * or -1.
 */
static int read_io_snap_by(int fd, struct io_snap *snap, size_t first,
			   size_t chunk, const struct io_snap *like)
{
	size_t off, i;
	ssize_t ret;

	io_snap_free(snap);
	snap->buf = malloc(IO_SNAP_MAX);
	if (!snap->buf)
		return -1;
	if (lseek(fd, 0, SEEK_SET)) {
		ksft_print_msg("lseek: %s\n", strerror(errno));
		return -1;
	}
	for (;;) {
		size_t want = snap->reads ? chunk : first;

		if (like && (size_t)snap->reads < like->nr)
			want = like->rec[snap->reads]->hdr.size;
		if (snap->len + want > IO_SNAP_MAX)
			want = IO_SNAP_MAX - snap->len;
		ret = read(fd, snap->buf + snap->len, want);
		if (ret < 0) {
			ksft_print_msg("read of %zu bytes at %zu: %s\n", want,
				       snap->len, strerror(errno));
			return -1;
		}
		if (!ret)
			break;
		if (check_io_records(snap->buf + snap->len, ret) < 0) {
			ksft_print_msg("read %d (%zu at %zu) returned %zd: not whole records\n",
				       snap->reads, want, snap->len, ret);
			return -1;
		}
		snap->len += ret;
		snap->reads++;
		if (snap->len == IO_SNAP_MAX) {
			ksft_print_msg("snapshot over %d bytes\n", IO_SNAP_MAX);
			return -1;
		}
	}
	ret = check_io_records(snap->buf, snap->len);
	if (ret < 0)
		return -1;
	snap->rec = calloc(ret + 1, sizeof(*snap->rec));
	if (!snap->rec)
		return -1;
	for (off = 0, i = 0; off < snap->len; off += snap->rec[i++]->hdr.size)
		snap->rec[i] = (const void *)(snap->buf + off);
	snap->nr = i;
	return 0;
}

/* the size of the record at @p */
static size_t io_size_at(const char *p)
{
	return ((const struct cgroup_stat_stream_header *)p)->size;
}

static int read_io_snap(int fd, struct io_snap *snap, size_t chunk)
{
	return read_io_snap_by(fd, snap, chunk, chunk, NULL);
}

static const struct cgroup_stat_stream_io *
io_record(const struct io_snap *snap, unsigned long long id)
{
	size_t i;

	for (i = 0; i < snap->nr; i++)
		if (snap->rec[i]->hdr.cgroup_id == id)
			return snap->rec[i];
	return NULL;
}

static const struct cgroup_stat_stream_io_device *
io_rec_dev(const struct cgroup_stat_stream_io *r, dev_t dev)
{
	__u32 i;

	for (i = 0; i < r->nr_devices; i++)
		if (r->devices[i].major == major(dev) &&
		    r->devices[i].minor == minor(dev))
			return &r->devices[i];
	return NULL;
}

/*
 * Whether record @r lists the devices of @t in its order with its values
 * (zeros for a line without stats), and, if @t is a stream's text, the
 * same flush.  Says how they differ, about @what.
 */
static bool io_rec_matches(const struct cgroup_stat_stream_io *r,
			   const struct io_text *t, const char *what)
{
	int i, j;

	if (t->seq >= 0 && ((long long)r->hdr.flush_seq != t->seq ||
			    (long long)r->hdr.flush_time_usec != t->time_usec)) {
		ksft_print_msg("%s: record of flush %llu at %llu, text of flush %lld at %lld\n",
			       what, (unsigned long long)r->hdr.flush_seq,
			       (unsigned long long)r->hdr.flush_time_usec,
			       t->seq, t->time_usec);
		return false;
	}
	if ((int)r->nr_devices != t->nr) {
		ksft_print_msg("%s: %u devices in the record, %d in the text\n",
			       what, r->nr_devices, t->nr);
		return false;
	}
	for (i = 0; i < t->nr; i++) {
		const struct cgroup_stat_stream_io_device *d = &r->devices[i];
		const struct io_line *l = &t->dev[i];

		if (d->major != l->major || d->minor != l->minor) {
			ksft_print_msg("%s: device %d is %u:%u in the record, %u:%u in the text\n",
				       what, i, d->major, d->minor, l->major,
				       l->minor);
			return false;
		}
		for (j = 0; j < IO_NR_STATS; j++) {
			if (io_dev_stat(d, j) != l->stat[j]) {
				ksft_print_msg("%s: %u:%u %s %llu in the record, %llu in text\n",
					       what, l->major, l->minor,
					       io_stats[j].name, io_dev_stat(d, j),
					       l->stat[j]);
				return false;
			}
		}
	}
	return true;
}

static bool io_lines_equal(const struct io_line *a, const struct io_line *b)
{
	int j;

	if (a->major != b->major || a->minor != b->minor ||
	    a->has_stats != b->has_stats)
		return false;
	for (j = 0; j < IO_NR_STATS; j++)
		if (a->stat[j] != b->stat[j])
			return false;
	return true;
}

/* Whether two io.stat texts list the same devices in order, same stats. */
static bool io_texts_match(const struct io_text *a, const struct io_text *b,
			   const char *what)
{
	int i;

	if (a->nr != b->nr) {
		ksft_print_msg("%s: %d devices, then %d\n", what, a->nr, b->nr);
		return false;
	}
	for (i = 0; i < a->nr; i++)
		if (!io_lines_equal(&a->dev[i], &b->dev[i]))
			goto differ;
	return true;
differ:
	ksft_print_msg("%s: line %d: %u:%u %s r/w %llu/%llu, then %u:%u %s %llu/%llu\n",
		       what, i, a->dev[i].major, a->dev[i].minor,
		       a->dev[i].has_stats ? "stats" : "no stats",
		       a->dev[i].stat[IO_RBYTES], a->dev[i].stat[IO_WBYTES],
		       b->dev[i].major, b->dev[i].minor,
		       b->dev[i].has_stats ? "stats" : "no stats",
		       b->dev[i].stat[IO_RBYTES], b->dev[i].stat[IO_WBYTES]);
	return false;
}

/* @snap in pre-order from @top, ids those of the directories, @want records */
static int check_io_walk(const struct io_snap *snap, const char *top,
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

/*
 * Enables io for @cgroup's children.  A child that ran in @cgroup leaves
 * it at its last context switch, which can come after waitpid() returned:
 * until then the write fails with EBUSY (a cgroup that enables a
 * controller for its children holds no tasks).  None of the callers has
 * tasks below @cgroup, so wait for cgroup.events to say "populated 0" and
 * write again.
 */
static int enable_io(const char *cgroup)
{
	int err, i;

	err = cg_write(cgroup, "cgroup.subtree_control", "+io");
	for (i = 0; err == -EBUSY && i < 1000; i++) {
		usleep(10000);
		if (!cg_read_strstr(cgroup, "cgroup.events", "populated 0"))
			err = cg_write(cgroup, "cgroup.subtree_control", "+io");
	}
	if (err) {
		ksft_print_msg("can't enable io in %s: %s\n", cgroup,
			       err < 0 ? strerror(-err) : "error");
		return -1;
	}
	return 0;
}

/* a loop device over a file in memory, for the io tests' I/O */
struct loop_dev {
	int nr;			/* /dev/loopN, -1 if none */
	int fd;			/* open on it, -1 if not */
	dev_t rdev;
	char path[32];
};

#define LOOP_DEV_INIT		{ .nr = -1, .fd = -1 }
/* loop_dev_create(): the kernel has no loop devices */
#define LOOP_UNAVAILABLE	1

/*
 * Makes a loop device of @size bytes over a file in memory (a memfd:
 * tmpfs; so the only block device I/O is the loop device's).  Returns 0,
 * LOOP_UNAVAILABLE, or -1.  Remove it with loop_dev_remove().
 */
static int loop_dev_create(struct loop_dev *ld, off_t size)
{
	struct loop_config cfg;
	int ctl_fd, back = -1, ret = -1, tries, i, err;
	struct stat st;

	ld->nr = -1;
	ld->fd = -1;
	ctl_fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0) {
		err = errno;
		ksft_print_msg("/dev/loop-control: %s\n", strerror(err));
		return err == ENOENT || err == ENODEV || err == ENXIO ?
		       LOOP_UNAVAILABLE : -1;
	}
	back = memfd_create("io_stream_loop", MFD_CLOEXEC);
	if (back < 0)
		back = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (back < 0 || ftruncate(back, size)) {
		ksft_print_msg("backing file: %s\n", strerror(errno));
		goto out;
	}

	/* another user may bind the device first: take the next */
	for (tries = 0; tries < 5; tries++) {
		/*
		 * A new device (-1: any free number), so that removing it
		 * touches no device someone else had; else a free one.
		 */
		ld->nr = ioctl(ctl_fd, LOOP_CTL_ADD, -1);
		if (ld->nr < 0)
			ld->nr = ioctl(ctl_fd, LOOP_CTL_GET_FREE);
		if (ld->nr < 0) {
			ksft_print_msg("LOOP_CTL_GET_FREE: %s\n", strerror(errno));
			goto out;
		}
		snprintf(ld->path, sizeof(ld->path), "/dev/loop%d", ld->nr);
		/* devtmpfs makes the node at once; give a udev a second */
		for (i = 0; i < 100; i++) {
			ld->fd = open(ld->path, O_RDWR | O_CLOEXEC);
			if (ld->fd >= 0 || errno != ENOENT)
				break;
			usleep(10000);
		}
		if (ld->fd < 0) {
			ksft_print_msg("%s: %s\n", ld->path, strerror(errno));
			goto out;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = back;
		if (!ioctl(ld->fd, LOOP_CONFIGURE, &cfg))
			break;
		err = errno;
		ksft_print_msg("LOOP_CONFIGURE %s: %s\n", ld->path,
			       strerror(err));
		close(ld->fd);
		ld->fd = -1;
		if (err != EBUSY)
			goto out;
	}
	if (ld->fd < 0 || fstat(ld->fd, &st) || !S_ISBLK(st.st_mode))
		goto out;
	ld->rdev = st.st_rdev;
	ret = 0;
out:
	if (back >= 0)
		close(back);
	close(ctl_fd);
	if (ret && ld->nr >= 0) {
		/* never bound, or bound by someone else: only ours goes */
		if (ld->fd >= 0)
			close(ld->fd);
		ld->fd = -1;
		ld->nr = -1;
	}
	return ret;
}

/*
 * Detaches and removes @ld's device (nothing if there is none).  Returns
 * 0, or -1 if it is still there.
 */
static int loop_dev_remove(struct loop_dev *ld)
{
	int ctl_fd, i, ret = -1;

	if (ld->fd >= 0) {
		if (ioctl(ld->fd, LOOP_CLR_FD) && errno != ENXIO)
			ksft_print_msg("LOOP_CLR_FD %s: %s\n", ld->path,
				       strerror(errno));
		/* the device is cleared at its last close */
		close(ld->fd);
		ld->fd = -1;
	}
	if (ld->nr < 0)
		return 0;
	ctl_fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0)
		return -1;
	/* a prober (udev, blkid) may hold it open a moment */
	for (i = 0; i < 300; i++) {
		if (ioctl(ctl_fd, LOOP_CTL_REMOVE, ld->nr) >= 0 || errno == ENODEV) {
			ret = 0;
			break;
		}
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	if (ret)
		ksft_print_msg("LOOP_CTL_REMOVE %d: %s\n", ld->nr,
			       strerror(errno));
	else
		ld->nr = -1;
	close(ctl_fd);
	return ret;
}

/* Turns loop_dev_create()'s failure into a test result. */
static int loop_dev_result(int err)
{
	return err == LOOP_UNAVAILABLE ? KSFT_SKIP : KSFT_FAIL;
}

struct io_job {
	const char *dev;	/* the block device's path */
	size_t wbytes;		/* written with O_DIRECT, then fsync()ed */
	size_t rbytes;		/* then read with O_DIRECT */
	bool loop;		/* again and again until killed (BURN_SECONDS) */
};

static int do_io(const char *cgroup, void *arg)
{
	const struct io_job *job = arg;
	long long end = now_usec() + BURN_SECONDS * USEC_PER_SEC;
	void *buf = NULL;
	size_t done;
	int fd;

	if (posix_memalign(&buf, 4096, IO_CHUNK))
		return 2;
	memset(buf, 0x5a, IO_CHUNK);
	fd = open(job->dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return 3;
	do {
		for (done = 0; done < job->wbytes; done += IO_CHUNK)
			if (pwrite(fd, buf, IO_CHUNK, done) != IO_CHUNK)
				return 4;
		if (job->wbytes && fsync(fd))
			return 5;
		for (done = 0; done < job->rbytes; done += IO_CHUNK)
			if (pread(fd, buf, IO_CHUNK, done) != IO_CHUNK)
				return 6;
	} while (job->loop && now_usec() < end);
	close(fd);
	free(buf);
	return 0;
}

/*
 * A child in @cgroup writes @wbytes to @ld, fsync()s, reads @rbytes, all
 * O_DIRECT, and exits: 0, or -1 if it failed.
 */
static int run_io(const char *cgroup, const struct loop_dev *ld,
		  size_t wbytes, size_t rbytes)
{
	struct io_job job = {
		.dev = ld->path, .wbytes = wbytes, .rbytes = rbytes,
	};
	int err;

	fflush(stdout);
	fflush(stderr);
	err = cg_run(cgroup, do_io, &job);
	if (err) {
		ksft_print_msg("I/O on %s in %s: child status %d\n", ld->path,
			       cgroup, err);
		return -1;
	}
	return 0;
}

/*
 * Waits for flushes on the open io.stat.stream @fd until its line for
 * @dev shows at least @wbytes written and @rbytes read.  Returns 0, or -1
 * (and what it saw last).
 */
static int wait_io_line(int fd, dev_t dev, unsigned long long wbytes,
			unsigned long long rbytes, struct io_text *t)
{
	const struct io_line *l = NULL;
	int tries;

	for (tries = 0; tries < IO_TRIES; tries++) {
		if (wait_readable(fd, WAIT_MS) != 1) {
			ksft_print_msg("io.stat.stream: no wake-up in %d ms\n",
				       WAIT_MS);
			return -1;
		}
		if (read_io_stream(fd, t))
			return -1;
		l = io_text_dev(t, dev);
		if (l && l->stat[IO_WBYTES] >= wbytes &&
		    l->stat[IO_RBYTES] >= rbytes)
			return 0;
	}
	ksft_print_msg("after %d flushes: %u:%u %s, wbytes %llu rbytes %llu, want %llu %llu\n",
		       tries, major(dev), minor(dev), l ? "listed" : "not listed",
		       l ? l->stat[IO_WBYTES] : 0, l ? l->stat[IO_RBYTES] : 0,
		       wbytes, rbytes);
	return -1;
}

/* @got bytes of I/O for @want done: not less, at most 5% more */
static bool io_near(unsigned long long got, unsigned long long want)
{
	return got >= want && got <= want + want / 20;
}

/*
 * A child writes, fsync()s and reads IO_BYTES with O_DIRECT: the text and
 * the record of the next flushes show it in wbytes and rbytes, within a
 * few %, and in wios and rios; with streaming off no read shows it (a
 * read never flushes); io.stat, read only at the end, agrees.
 */
static int test_io_stream_values(const char *root)
{
	struct loop_dev ld = LOOP_DEV_INIT;
	struct io_text *t0, *t, *stat;
	struct io_snap snap = {};
	const struct cgroup_stat_stream_io *rec;
	const struct cgroup_stat_stream_io_device *d;
	const struct io_line *l;
	int ret = KSFT_FAIL;
	int sfd = -1, tfd = -1, err, tries;
	long saved;
	char *cg = NULL;

	saved = get_interval(root);
	t0 = calloc(3, sizeof(*t0));
	if (!t0)
		return KSFT_FAIL;
	t = t0 + 1;
	stat = t0 + 2;
	err = loop_dev_create(&ld, IO_LOOP_BYTES);
	if (err) {
		ret = loop_dev_result(err);
		goto cleanup;
	}
	cg = cg_name(root, "io_stream_values");
	if (!cg || cg_create(cg))
		goto cleanup;
	sfd = open_stream(cg);
	tfd = open_subtree(cg);
	if (sfd < 0 || tfd < 0 || set_interval(root, IO_INTERVAL_MS))
		goto cleanup;

	/* a flush, then streaming off: nothing may flush the I/O below */
	if (wait_readable(sfd, WAIT_MS) != 1 || set_interval(root, 0))
		goto cleanup;
	usleep(INFLIGHT_USEC);
	if (read_io_stream(sfd, t0))
		goto cleanup;
	if (run_io(cg, &ld, IO_BYTES, IO_BYTES))
		goto cleanup;
	if (read_io_stream(sfd, t) || read_io_snap(tfd, &snap, 1 << 20))
		goto cleanup;
	l = io_text_dev(t, ld.rdev);
	rec = io_record(&snap, dir_ino(cg));
	d = rec ? io_rec_dev(rec, ld.rdev) : NULL;
	if (t->seq != t0->seq || !rec || (long long)rec->hdr.flush_seq != t0->seq ||
	    (l && (l->stat[IO_WBYTES] || l->stat[IO_RBYTES])) ||
	    (d && (d->wbytes || d->rbytes))) {
		ksft_print_msg("off: flush %lld, then text %lld (wbytes %llu), rec %lld (%llu)\n",
			       t0->seq, t->seq, l ? l->stat[IO_WBYTES] : 0,
			       rec ? (long long)rec->hdr.flush_seq : -1,
			       d ? (unsigned long long)d->wbytes : 0);
		goto cleanup;
	}

	/* streaming on: the next flushes show it */
	if (set_interval(root, IO_INTERVAL_MS) ||
	    wait_io_line(sfd, ld.rdev, IO_BYTES, IO_BYTES, t))
		goto cleanup;
	l = io_text_dev(t, ld.rdev);
	if (!l->has_stats || !io_near(l->stat[IO_WBYTES], IO_BYTES) ||
	    !io_near(l->stat[IO_RBYTES], IO_BYTES) ||
	    l->stat[IO_WIOS] < IO_BYTES / IO_CHUNK ||
	    l->stat[IO_RIOS] < IO_BYTES / IO_CHUNK) {
		ksft_print_msg("%u:%u: w/rbytes %llu/%llu w/rios %llu/%llu, want ~%d B, %d ios\n",
			       l->major, l->minor, l->stat[IO_WBYTES],
			       l->stat[IO_RBYTES], l->stat[IO_WIOS],
			       l->stat[IO_RIOS], IO_BYTES, IO_BYTES / IO_CHUNK);
		goto cleanup;
	}

	/* the record of the same flush says the same */
	for (tries = 0; tries < 20; tries++) {
		if (wait_readable(tfd, WAIT_MS) != 1 ||
		    read_io_snap(tfd, &snap, 1 << 20) || read_io_stream(sfd, t))
			goto cleanup;
		rec = io_record(&snap, dir_ino(cg));
		if (!rec || snap.nr != 1 || rec->hdr.parent_id) {
			ksft_print_msg("%zu records, the leaf's %s\n", snap.nr,
				       rec ? "not first" : "missing");
			goto cleanup;
		}
		if ((long long)rec->hdr.flush_seq == t->seq)
			break;
	}
	if (!io_rec_matches(rec, t, cg))
		goto cleanup;
	d = io_rec_dev(rec, ld.rdev);
	if (!d || !io_near(d->wbytes, IO_BYTES) || !io_near(d->rbytes, IO_BYTES)) {
		ksft_print_msg("record: %u:%u %s\n", major(ld.rdev), minor(ld.rdev),
			       d ? "with other values" : "missing");
		goto cleanup;
	}

	/* io.stat, which flushes, says the same: nothing happened since */
	if (set_interval(root, 0))
		goto cleanup;
	usleep(INFLIGHT_USEC);
	if (read_io_stream(sfd, t) || read_io_file(cg, false, stat) ||
	    !io_texts_match(t, stat, "io.stat.stream, then io.stat"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	io_snap_free(&snap);
	cg_destroy(cg);
	free(cg);
	if (loop_dev_remove(&ld))
		ret = KSFT_FAIL;
	free(t0);
	return restore_interval(root, saved, ret);
}

#define AGREE_FLUSHES		5

/*
 * The text and the opened cgroup's record of one flush agree, field by
 * field, while a child does I/O all along (values move from flush to
 * flush); also for the root, whose values come from the disks' stats.
 */
static int test_io_stream_agree(const char *root)
{
	struct loop_dev ld = LOOP_DEV_INIT;
	struct io_job job = { .wbytes = IO_SMALL, .rbytes = IO_SMALL, .loop = true };
	struct io_snap snap = {};
	struct io_text *t = NULL, *stat = NULL;
	const struct io_line *a, *b;
	const char *cgs[2] = { root, NULL };
	int sfd[2] = { -1, -1 }, tfd[2] = { -1, -1 };
	unsigned long long last_wbytes;
	int ret = KSFT_FAIL;
	int i, err, tries, matched, moved;
	pid_t pid = -1;
	long saved;
	char *cg;

	saved = get_interval(root);
	cg = cg_name(root, "io_stream_agree");
	t = calloc(1, sizeof(*t));
	stat = calloc(1, sizeof(*stat));
	if (!cg || !t || !stat || cg_create(cg))
		goto cleanup;
	cgs[1] = cg;
	err = loop_dev_create(&ld, IO_LOOP_BYTES);
	if (err) {
		ret = loop_dev_result(err);
		goto cleanup;
	}
	for (i = 0; i < 2; i++) {
		sfd[i] = open_stream(cgs[i]);
		tfd[i] = open_subtree(cgs[i]);
		if (sfd[i] < 0 || tfd[i] < 0)
			goto cleanup;
	}
	job.dev = ld.path;
	fflush(stdout);
	fflush(stderr);
	pid = cg_run_nowait(cg, do_io, &job);
	if (pid < 0 || set_interval(root, IO_INTERVAL_MS))
		goto cleanup;

	for (i = 0; i < 2; i++) {
		/* the I/O shows, in the root's line too */
		if (wait_io_line(sfd[i], ld.rdev, IO_SMALL, IO_SMALL, t))
			goto cleanup;
		last_wbytes = 0;
		matched = 0;
		moved = 0;
		for (tries = 0; tries < 4 * AGREE_FLUSHES && matched < AGREE_FLUSHES; tries++) {
			const struct cgroup_stat_stream_io *rec;
			const struct cgroup_stat_stream_io_device *d;

			if (wait_readable(tfd[i], WAIT_MS) != 1 ||
			    read_io_snap(tfd[i], &snap, IO_SNAP_MAX) ||
			    read_io_stream(sfd[i], t))
				goto cleanup;
			rec = snap.rec[0];
			if (!snap.nr || rec->hdr.cgroup_id != dir_ino(cgs[i]) ||
			    rec->hdr.parent_id) {
				ksft_print_msg("%s: the first record is not its own\n",
					       cgs[i]);
				goto cleanup;
			}
			/* a flush in between: try the next */
			if ((long long)rec->hdr.flush_seq != t->seq)
				continue;
			if (!io_rec_matches(rec, t, cgs[i]))
				goto cleanup;
			d = io_rec_dev(rec, ld.rdev);
			if (!d || d->wbytes < last_wbytes) {
				ksft_print_msg("%s: wbytes went from %llu to %llu\n",
					       cgs[i], last_wbytes,
					       d ? (unsigned long long)d->wbytes : 0);
				goto cleanup;
			}
			moved += matched && d->wbytes != last_wbytes;
			last_wbytes = d->wbytes;
			matched++;
		}
		if (matched < AGREE_FLUSHES || !moved) {
			ksft_print_msg("%s: text = record %d of %d tries, wbytes moved %d times\n",
				       cgs[i], matched, tries, moved);
			goto cleanup;
		}
	}

	/*
	 * The child gone and two flushes later (one may have begun before
	 * it died), the root's line for the device is what io.stat says.
	 */
	stop_burner(pid);
	pid = -1;
	for (i = 0; i < 3; i++) {
		if (read_io_stream(sfd[0], t) ||
		    (i < 2 && wait_readable(sfd[0], WAIT_MS) != 1))
			goto cleanup;
	}
	if (read_io_file(root, false, stat))
		goto cleanup;
	a = io_text_dev(t, ld.rdev);
	b = io_text_dev(stat, ld.rdev);
	if (!a || !b || !io_lines_equal(a, b)) {
		ksft_print_msg("root: %u:%u wbytes %llu in the stream, %llu in io.stat\n",
			       major(ld.rdev), minor(ld.rdev),
			       a ? a->stat[IO_WBYTES] : 0,
			       b ? b->stat[IO_WBYTES] : 0);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	stop_burner(pid);
	for (i = 0; i < 2; i++) {
		if (sfd[i] >= 0)
			close(sfd[i]);
		if (tfd[i] >= 0)
			close(tfd[i]);
	}
	io_snap_free(&snap);
	cg_destroy(cg);
	free(cg);
	free(t);
	free(stat);
	if (loop_dev_remove(&ld))
		ret = KSFT_FAIL;
	return restore_interval(root, saved, ret);
}

/* the path make_tree(@top, ..., @per_dir) gave its @i-th cgroup */
static void tree_path(char *buf, size_t len, const char *top, int i,
		      int per_dir)
{
	if (i < per_dir)
		snprintf(buf, len, "%s/c%d", top, i);
	else
		snprintf(buf, len, "%s/c%d/c%d", top, i / per_dir - 1, i);
}

/*
 * Waits until a snapshot of the open subtree file @fd has a record of
 * @cgroup whose @dev shows @wbytes written: flushed after I/O.  0 or -1.
 */
static int wait_io_record(int fd, const char *cgroup, dev_t dev,
			  unsigned long long wbytes)
{
	const struct cgroup_stat_stream_io_device *d = NULL;
	const struct cgroup_stat_stream_io *rec;
	struct io_snap snap = {};
	int tries, ret = -1;

	for (tries = 0; tries < IO_TRIES; tries++) {
		if (wait_readable(fd, WAIT_MS) != 1) {
			ksft_print_msg("subtree file: no wake-up in %d ms\n",
				       WAIT_MS);
			break;
		}
		if (read_io_snap(fd, &snap, 1 << 20))
			break;
		rec = io_record(&snap, dir_ino(cgroup));
		d = rec ? io_rec_dev(rec, dev) : NULL;
		if (d && d->wbytes >= wbytes) {
			ret = 0;
			break;
		}
	}
	if (ret)
		ksft_print_msg("%s: no record with %llu bytes written to %u:%u\n",
			       cgroup, wbytes, major(dev), minor(dev));
	io_snap_free(&snap);
	return ret;
}

/* Sets the interval to 0 and waits out a cycle that was running. */
static int stop_streaming(const char *root)
{
	if (set_interval(root, 0))
		return -1;
	usleep(INFLIGHT_USEC);
	return 0;
}

struct nobody_io_read {
	char subtree[PATH_MAX + 64];
	char stream[PATH_MAX + 64];
	size_t nr;		/* records the subtree file must give */
};

/* uid nobody reads a subtree snapshot and the stream file's text */
static int read_io_as_nobody(void *arg)
{
	struct nobody_io_read *r = arg;
	struct io_snap snap = {};
	struct io_text *t;
	char buf[BUF_SIZE];
	int fd, ret;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 2;
	fd = open(r->subtree, O_RDONLY);
	if (fd < 0)
		return 3;
	ret = read_io_snap(fd, &snap, 1 << 20) || snap.nr != r->nr ? 4 : 0;
	close(fd);
	io_snap_free(&snap);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t || read_text(r->stream, buf, sizeof(buf)) <= 0 ||
	    parse_io_text(buf, t, true))
		ret = 5;
	free(t);
	return ret;
}

/*
 * Layout: one record per cgroup with io.stat, the opened cgroup first,
 * pre-order, ids and parents; each record's devices and values those of
 * the cgroup's io.stat, none for a cgroup that did no I/O; whole records
 * per read, one record per read with buffers of their sizes; EINVAL for a
 * buffer a byte too small and for a wrong offset; a cgroup without
 * io.stat has no record; resume across removals; an unprivileged reader.
 */
static int test_io_stream_subtree(const char *root)
{
	/* the cgroups of make_tree(top, 30, 5) that do I/O: c1, c0/c7, c1/c12 */
	static const int busy[] = { 1, 7, 12 };
	struct loop_dev ld = LOOP_DEV_INIT;
	struct io_snap big = {}, small = {}, pieces = {};
	struct nobody_io_read nobody;
	long long bad_off[3];
	char path[PATH_MAX + 64], *buf = NULL;
	struct io_text *stat = NULL;
	unsigned long long ids[5];
	size_t i, max_size = 0, sz0, sz1;
	int ret = KSFT_FAIL;
	int fd = -1, err, j;
	long saved;
	ssize_t len;
	char *top;

	saved = get_interval(root);
	top = cg_name(root, "io_stream_subtree");
	stat = calloc(1, sizeof(*stat));
	buf = malloc(1 << 16);
	if (!top || !stat || !buf)
		goto cleanup;
	err = loop_dev_create(&ld, IO_LOOP_BYTES);
	if (err) {
		ret = loop_dev_result(err);
		goto cleanup;
	}
	if (cg_create(top) || enable_io(top) || make_tree(top, 30, 5))
		goto cleanup;
	/*
	 * c0..c4's I/O before they enable io for their children (a cgroup
	 * that does cannot hold tasks), their children's after (or it would
	 * be charged to the parent).
	 */
	for (j = 0; j < ARRAY_SIZE(busy); j++) {
		tree_path(path, sizeof(path), top, busy[j], 5);
		if (busy[j] < 5 && run_io(path, &ld, IO_SMALL, 0))
			goto cleanup;
	}
	for (j = 0; j < 5; j++) {
		tree_path(path, sizeof(path), top, j, 5);
		if (enable_io(path))
			goto cleanup;
	}
	for (j = 0; j < ARRAY_SIZE(busy); j++) {
		tree_path(path, sizeof(path), top, busy[j], 5);
		if (busy[j] >= 5 && run_io(path, &ld, IO_SMALL, 0))
			goto cleanup;
	}

	/* a flush after the I/O, then nothing changes */
	fd = open_subtree(top);
	tree_path(path, sizeof(path), top, 12, 5);
	if (fd < 0 || set_interval(root, IO_INTERVAL_MS) ||
	    wait_io_record(fd, path, ld.rdev, IO_SMALL) || stop_streaming(root))
		goto cleanup;

	if (read_io_snap(fd, &big, 1 << 20))
		goto cleanup;
	if (big.reads != 1 || check_io_walk(&big, top, 31))
		goto cleanup;
	for (j = -1; j < 30; j++) {
		const struct cgroup_stat_stream_io *rec;
		const struct cgroup_stat_stream_io_device *d;
		bool did_io = false;
		int k;

		if (j < 0)
			snprintf(path, sizeof(path), "%s", top);
		else
			tree_path(path, sizeof(path), top, j, 5);
		for (k = 0; k < ARRAY_SIZE(busy); k++)
			did_io |= busy[k] == j;
		rec = io_record(&big, dir_ino(path));
		if (!rec || read_io_file(path, false, stat) ||
		    !io_rec_matches(rec, stat, path))
			goto cleanup;
		/* the device is listed in the cgroups that did I/O and above */
		d = io_rec_dev(rec, ld.rdev);
		if (did_io && (!d || d->wbytes < IO_SMALL)) {
			ksft_print_msg("%s did I/O: %s\n", path,
				       d ? "too few bytes" : "device missing");
			goto cleanup;
		}
		if (j >= 2 && !did_io && d) {
			/* top, c0 and c1 are above busy cgroups: no others */
			ksft_print_msg("%s did no I/O, but lists %u:%u\n", path,
				       major(ld.rdev), minor(ld.rdev));
			goto cleanup;
		}
	}
	for (i = 0; i < big.nr; i++)
		if (big.rec[i]->hdr.size > max_size)
			max_size = big.rec[i]->hdr.size;
	if (max_size <= sizeof(struct cgroup_stat_stream_io)) {
		ksft_print_msg("no record lists a device\n");
		goto cleanup;
	}

	/* one record per read, with buffers of exactly its size */
	if (read_io_snap_by(fd, &small, 0, 4096, &big))
		goto cleanup;
	if (small.nr != big.nr || small.reads != (int)big.nr) {
		ksft_print_msg("record-sized reads: %zu records in %d reads\n",
			       small.nr, small.reads);
		goto cleanup;
	}
	/* and in pieces of the largest record: whole records each time */
	if (read_io_snap(fd, &pieces, max_size) || pieces.nr != big.nr)
		goto cleanup;
	for (i = 0; i < big.nr; i++) {
		if (small.rec[i]->hdr.cgroup_id != big.rec[i]->hdr.cgroup_id ||
		    small.rec[i]->hdr.size != big.rec[i]->hdr.size ||
		    pieces.rec[i]->hdr.cgroup_id != big.rec[i]->hdr.cgroup_id ||
		    memcmp(small.rec[i], big.rec[i], big.rec[i]->hdr.size)) {
			ksft_print_msg("record %zu differs between the reads\n", i);
			goto cleanup;
		}
	}

	/* a buffer a byte too small for the next record, a wrong offset */
	sz0 = big.rec[0]->hdr.size;
	sz1 = big.rec[1]->hdr.size;
	bad_off[0] = sz1;	/* a record too far */
	bad_off[1] = 8;		/* inside the next record */
	bad_off[2] = -8;	/* inside the last one */
	if (pread(fd, buf, sz0 - 1, 0) != -1 || errno != EINVAL) {
		ksft_print_msg("%zu bytes for a record of %zu: not EINVAL\n",
			       sz0 - 1, sz0);
		goto cleanup;
	}
	/* c0, above c0/c7, lists the device: more than a bare record */
	if (sz1 <= sizeof(struct cgroup_stat_stream_io) ||
	    pread(fd, buf, sz0, 0) != (ssize_t)sz0 ||
	    pread(fd, buf, sz1 - 1, sz0) != -1 || errno != EINVAL) {
		ksft_print_msg("%zu bytes for the second record of %zu: not EINVAL\n",
			       sz1 - 1, sz1);
		goto cleanup;
	}
	for (j = 0; j < ARRAY_SIZE(bad_off); j++) {
		off_t off = sz0 + bad_off[j];

		if (pread(fd, buf, sz0, 0) != (ssize_t)sz0 ||
		    pread(fd, buf, 4096, off) != -1 || errno != EINVAL) {
			ksft_print_msg("read at %lld, the last read ended at %zu: not EINVAL\n",
				       (long long)off, sz0);
			goto cleanup;
		}
	}

	/* a cgroup without io.stat has no record */
	tree_path(path, sizeof(path), top, 8, 5);
	strcat(path, "/noio");
	if (mkdir(path, 0755))
		goto cleanup;
	strcat(path, "/io.stat");
	if (!access(path, F_OK) || read_io_snap(fd, &big, 1 << 20) ||
	    big.nr != 31) {
		ksft_print_msg("with a cgroup lacking io.stat: %zu records\n",
			       big.nr);
		goto cleanup;
	}

	/* resume: the cgroups the last read ended at and after removed */
	close(fd);
	fd = -1;
	destroy_tree(top);
	if (cg_create(top) || enable_io(top))
		goto cleanup;
	for (j = 0; j < 5; j++) {
		snprintf(path, sizeof(path), "%s/c%d", top, j);
		if (mkdir(path, 0755))
			goto cleanup;
		ids[j] = dir_ino(path);
	}
	/* c3 has a device: its record is larger than the others */
	snprintf(path, sizeof(path), "%s/c3", top);
	if (run_io(path, &ld, IO_SMALL, 0))
		goto cleanup;
	fd = open_subtree(top);
	if (fd < 0 || set_interval(root, IO_INTERVAL_MS) ||
	    wait_io_record(fd, path, ld.rdev, IO_SMALL) || stop_streaming(root))
		goto cleanup;
	if (read_io_snap(fd, &big, 1 << 20) ||
	    check_io_walk(&big, top, 6))
		goto cleanup;
	sz0 = big.rec[0]->hdr.size;
	sz1 = big.rec[1]->hdr.size;
	len = pread(fd, buf, sz0 + sz1, 0);
	if (len != (ssize_t)(sz0 + sz1) ||
	    ((struct cgroup_stat_stream_header *)(buf + sz0))->cgroup_id != ids[0]) {
		ksft_print_msg("@top and c0: %zd bytes\n", len);
		goto cleanup;
	}
	for (j = 0; j < 2; j++) {
		snprintf(path, sizeof(path), "%s/c%d", top, j);
		if (rmdir(path)) {
			ksft_print_msg("rmdir %s: %s\n", path, strerror(errno));
			goto cleanup;
		}
	}
	len = pread(fd, buf, 4096, sz0 + sz1);
	if (len <= 0 || check_io_records(buf, len) != 3) {
		ksft_print_msg("after removing c0 and c1: %zd bytes, want 3 records\n",
			       len);
		goto cleanup;
	}
	for (i = 0, j = 0; j < 3; i += io_size_at(buf + i), j++) {
		const struct cgroup_stat_stream_io *r = (const void *)(buf + i);

		if (r->hdr.cgroup_id != ids[j + 2] ||
		    (j + 2 == 3) != !!io_rec_dev(r, ld.rdev)) {
			ksft_print_msg("resumed record %d: id %llu, %u devices, want c%d's %llu\n",
				       j, (unsigned long long)r->hdr.cgroup_id,
				       r->nr_devices, j + 2, ids[j + 2]);
			goto cleanup;
		}
	}
	if (pread(fd, buf, 4096, sz0 + sz1 + len) != 0) {
		ksft_print_msg("after the last record: not 0\n");
		goto cleanup;
	}

	/* an unprivileged reader: top, c2, c3, c4 */
	snprintf(nobody.subtree, sizeof(nobody.subtree), "%s/%s", top,
		 SUBTREE_FILE);
	snprintf(nobody.stream, sizeof(nobody.stream), "%s/%s", top,
		 STREAM_FILE);
	nobody.nr = 4;
	err = run_timed(read_io_as_nobody, &nobody, WAIT_MS);
	if (err) {
		ksft_print_msg("unprivileged read of %s: step %d failed\n",
			       top, err);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	io_snap_free(&big);
	io_snap_free(&small);
	io_snap_free(&pieces);
	destroy_tree(top);
	free(top);
	free(stat);
	free(buf);
	if (loop_dev_remove(&ld))
		ret = KSFT_FAIL;
	return restore_interval(root, saved, ret);
}

/* Whether @cgroup's io.stat lists @dev: 1, 0, or -1 if unreadable. */
static int io_stat_lists(const char *cgroup, dev_t dev)
{
	struct io_text *t = calloc(1, sizeof(*t));
	int ret = -1;

	if (t && !read_io_file(cgroup, false, t))
		ret = !!io_text_dev(t, dev);
	free(t);
	return ret;
}

#define DEVRM_CGROUPS		5

/*
 * A device removed while a snapshot is being read in pieces: the reads go
 * on without error, whole records, every cgroup once, and a device entry
 * still listed holds the values it had (nothing dangles); snapshots of
 * flushes after the removal, the text and io.stat no longer list it.
 */
static int test_io_stream_device_removed(const char *root)
{
	/* top first, busy ones do I/O */
	static const struct {
		const char *name;
		bool busy;
	} cgs[DEVRM_CGROUPS] = {
		{ "", false }, { "a", true }, { "a/a1", true }, { "b", true },
		{ "idle", false },
	};
	struct loop_dev ld = LOOP_DEV_INIT;
	struct io_snap before = {}, after = {};
	char *paths[DEVRM_CGROUPS] = {};
	char *buf = NULL, *top;
	size_t len, max_size = 0, i;
	unsigned long long seq_before;
	int ret = KSFT_FAIL;
	int fd = -1, sfd = -1, err, j, tries;
	struct io_text *t = NULL;
	long saved;
	ssize_t n;

	saved = get_interval(root);
	top = cg_name(root, "io_stream_devrm");
	buf = malloc(IO_SNAP_MAX);
	t = calloc(1, sizeof(*t));
	if (!top || !buf || !t)
		goto cleanup;
	err = loop_dev_create(&ld, IO_LOOP_BYTES);
	if (err) {
		ret = loop_dev_result(err);
		goto cleanup;
	}
	for (j = 0; j < DEVRM_CGROUPS; j++) {
		paths[j] = j ? cg_name(top, cgs[j].name) : strdup(top);
		if (!paths[j] || cg_create(paths[j]))
			goto cleanup;
		if (j == 0 && enable_io(paths[j]))
			goto cleanup;
	}
	/* a does its I/O before it enables io for a1: then it has no tasks */
	for (j = 0; j < DEVRM_CGROUPS; j++) {
		if (cgs[j].busy && run_io(paths[j], &ld, IO_SMALL, IO_SMALL))
			goto cleanup;
		if (!strcmp(cgs[j].name, "a") && enable_io(paths[j]))
			goto cleanup;
	}
	fd = open_subtree(top);
	sfd = open_stream(top);
	if (fd < 0 || sfd < 0 || set_interval(root, IO_INTERVAL_MS))
		goto cleanup;
	for (j = 0; j < DEVRM_CGROUPS; j++)
		if (cgs[j].busy && wait_io_record(fd, paths[j], ld.rdev, IO_SMALL))
			goto cleanup;

	/* the snapshot before: every busy cgroup and top list the device */
	if (read_io_snap(fd, &before, 1 << 20) ||
	    check_io_walk(&before, top, DEVRM_CGROUPS))
		goto cleanup;
	for (j = 0; j < DEVRM_CGROUPS; j++) {
		const struct cgroup_stat_stream_io *r = io_record(&before, dir_ino(paths[j]));

		if (!r || (cgs[j].busy || !j) != !!io_rec_dev(r, ld.rdev)) {
			ksft_print_msg("%s: %s the device\n", paths[j],
				       r && io_rec_dev(r, ld.rdev) ? "lists" : "does not list");
			goto cleanup;
		}
	}
	for (i = 0; i < before.nr; i++)
		if (before.rec[i]->hdr.size > max_size)
			max_size = before.rec[i]->hdr.size;
	seq_before = before.rec[0]->hdr.flush_seq;

	/* the first record, then the device goes, then read(2) on */
	len = before.rec[0]->hdr.size;
	if (lseek(fd, 0, SEEK_SET))
		goto cleanup;
	n = read(fd, buf, len);
	if (n != (ssize_t)len) {
		ksft_print_msg("the first record: %zd bytes, want %zu\n", n, len);
		goto cleanup;
	}
	if (loop_dev_remove(&ld))
		goto cleanup;
	for (;;) {
		n = read(fd, buf + len, max_size);
		if (n < 0) {
			ksft_print_msg("read after the device was removed: %s\n",
				       strerror(errno));
			goto cleanup;
		}
		if (!n)
			break;
		if (check_io_records(buf + len, n) < 0)
			goto cleanup;
		len += n;
		if (len + max_size > IO_SNAP_MAX)
			goto cleanup;
	}
	if (check_io_records(buf, len) != DEVRM_CGROUPS) {
		ksft_print_msg("the snapshot read across the removal: %d records, want %d\n",
			       check_io_records(buf, len), DEVRM_CGROUPS);
		goto cleanup;
	}
	for (i = 0, j = 0; i < len; i += io_size_at(buf + i), j++) {
		const struct cgroup_stat_stream_io *r = (const void *)(buf + i);
		const struct cgroup_stat_stream_io *was = before.rec[j];
		const struct cgroup_stat_stream_io_device *d = io_rec_dev(r, ld.rdev);
		const struct cgroup_stat_stream_io_device *w = io_rec_dev(was, ld.rdev);

		if (r->hdr.cgroup_id != was->hdr.cgroup_id ||
		    r->hdr.parent_id != was->hdr.parent_id) {
			ksft_print_msg("record %d: id %llu, before the removal %llu\n",
				       j, (unsigned long long)r->hdr.cgroup_id,
				       (unsigned long long)was->hdr.cgroup_id);
			goto cleanup;
		}
		/* still listed (a flush of before): the same values */
		if (d && (!w || memcmp(d, w, sizeof(*d)))) {
			ksft_print_msg("record %d: %u:%u after removal: wbytes %llu, before %llu\n",
				       j, major(ld.rdev), minor(ld.rdev),
				       (unsigned long long)d->wbytes,
				       w ? (unsigned long long)w->wbytes : 0);
			goto cleanup;
		}
	}

	/* a flush after the removal: gone from records, text and io.stat */
	for (tries = 0; tries < IO_TRIES; tries++) {
		bool listed = false;

		if (wait_readable(fd, WAIT_MS) != 1 ||
		    read_io_snap(fd, &after, 1 << 20) ||
		    check_io_walk(&after, top, DEVRM_CGROUPS) ||
		    read_io_stream(sfd, t))
			goto cleanup;
		if (after.rec[0]->hdr.flush_seq <= seq_before)
			continue;
		for (i = 0; i < after.nr; i++)
			listed |= !!io_rec_dev(after.rec[i], ld.rdev);
		listed |= !!io_text_dev(t, ld.rdev);
		for (j = 0; j < DEVRM_CGROUPS; j++) {
			err = io_stat_lists(paths[j], ld.rdev);
			if (err < 0)
				goto cleanup;
			listed |= err;
		}
		if (!listed)
			break;
	}
	if (tries == IO_TRIES) {
		ksft_print_msg("%u:%u still listed %d flushes after its removal\n",
			       major(ld.rdev), minor(ld.rdev), IO_TRIES);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	io_snap_free(&before);
	io_snap_free(&after);
	destroy_tree(top);
	for (j = 0; j < DEVRM_CGROUPS; j++)
		free(paths[j]);
	free(top);
	free(buf);
	free(t);
	if (loop_dev_remove(&ld))
		ret = KSFT_FAIL;
	return restore_interval(root, saved, ret);
}

/*
 * The io flusher is independent of the cpu and memory flushers: each
 * sequence advances with its own interval only.
 */
static int test_io_stream_independent(const char *root)
{
	static const struct stream_ctl * const ctls[] = {
		&ctl_cpu, &ctl_io, &ctl_memory,
	};
	char path[PATH_MAX + 64];
	int n = ARRAY_SIZE(ctls);

	/* without the memory stream, cpu and io */
	snprintf(path, sizeof(path), "%s/%s", root, ctl_memory.interval_file);
	if (access(path, F_OK))
		n--;
	return flushers_independent(root, ctls, n, &ctl_io);
}

/* Disabling io above an open, polled io.stat.stream: POLLERR, ENODEV. */
static int test_io_stream_disable(const char *root)
{
	return stream_disable(root);
}

/* @n cgroups, all with io.stat, in one read; none lists a device */
static int io_stream_many(const char *root, int n)
{
	struct io_snap snap = {};
	char path[PATH_MAX];
	int ret = KSFT_FAIL;
	long long start;
	int fd = -1, j;
	size_t i;
	char *top;

	top = cg_name(root, "io_stream_many");
	if (!top || cg_create(top) || enable_io(top))
		goto cleanup;
	start = now_usec();
	if (make_tree(top, n, 100))
		goto cleanup;
	/* make_tree() puts the cgroups past the first 100 below c0, c1, ... */
	for (j = 0; j < n / 100 - 1 && j < 100; j++) {
		snprintf(path, sizeof(path), "%s/c%d", top, j);
		if (enable_io(path))
			goto cleanup;
	}
	ksft_print_msg("%d io cgroups made in %lld ms\n", n,
		       (now_usec() - start) / 1000);
	fd = open_subtree(top);
	if (fd < 0)
		goto cleanup;
	start = now_usec();
	if (read_io_snap(fd, &snap, IO_SNAP_MAX))
		goto cleanup;
	ksft_print_msg("%zu records (%zu bytes) in %d read(s), %lld us\n",
		       snap.nr, snap.len, snap.reads, now_usec() - start);
	if (snap.reads != 1 || check_io_walk(&snap, top, n + 1))
		goto cleanup;
	for (i = 0; i < snap.nr; i++) {
		if (snap.rec[i]->nr_devices) {
			ksft_print_msg("record %zu: %u devices in a cgroup that did no I/O\n",
				       i, snap.rec[i]->nr_devices);
			goto cleanup;
		}
	}
	ret = KSFT_PASS;
cleanup:
	if (fd >= 0)
		close(fd);
	io_snap_free(&snap);
	destroy_tree(top);
	free(top);
	return ret;
}

static int test_io_stream_subtree_many(const char *root)
{
	return io_stream_many(root, 1000);
}

/* run when named: as test_memory_stream_subtree_10k */
static int test_io_stream_subtree_10k(const char *root)
{
	return io_stream_many(root, 10000);
}

/* which controllers' streams a test is about */
#define CTL_CPU		0x01
#define CTL_MEMORY	0x02
#define CTL_IO		0x04
#define CTL_ALL		(CTL_CPU | CTL_MEMORY | CTL_IO)
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
	T(test_stat_stream_reads, CTL_CPU | CTL_IO),
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
	T(test_stat_stream_subtree_10k, CTL_CPU | CTL_NAMED),
	T(test_stat_stream_subtree_churn, CTL_CPU),
	T(test_stat_stream_subtree_resume, CTL_CPU),
	T(test_stat_stream_subtree_rmdir, CTL_CPU | CTL_IO),
	T(test_stat_stream_subtree_rmdir_race, CTL_ALL),
	T(test_stat_stream_subtree_stop, CTL_CPU | CTL_IO),
	T(test_memory_stream_keys, CTL_MEMORY),
	T(test_memory_stream_values, CTL_MEMORY),
	T(test_memory_stream_independent, CTL_MEMORY),
	T(test_memory_stream_subtree, CTL_MEMORY),
	T(test_memory_stream_disable, CTL_MEMORY),
	T(test_memory_stream_subtree_many, CTL_MEMORY),
	T(test_memory_stream_subtree_10k, CTL_MEMORY | CTL_NAMED),
	T(test_io_stream_values, CTL_IO),
	T(test_io_stream_agree, CTL_IO),
	T(test_io_stream_subtree, CTL_IO),
	T(test_io_stream_device_removed, CTL_IO),
	T(test_io_stream_independent, CTL_IO),
	T(test_io_stream_disable, CTL_IO),
	T(test_io_stream_subtree_many, CTL_IO),
	T(test_io_stream_subtree_10k, CTL_IO | CTL_NAMED),
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

/*
 * The io runs need the io stream and the io controller in the root's
 * children (the tests that do I/O skip alone without loop devices):
 * Returns NULL, or why they are skipped.
 */
static const char *io_unavailable(const char *root)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", root, ctl_io.interval_file);
	if (access(path, F_OK))
		return "no io.stat.stream support";
	if (!has_word(root, "cgroup.controllers", "io"))
		return "no io controller";
	if (!has_word(root, "cgroup.subtree_control", "io") &&
	    cg_write(root, "cgroup.subtree_control", "+io"))
		return "the io controller can't be enabled";
	return NULL;
}

int main(int argc, char *argv[])
{
	const struct stream_ctl *ctls[] = { &ctl_cpu, &ctl_memory, &ctl_io };
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
		else if (ctl == &ctl_io)
			skip = io_unavailable(root);
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
