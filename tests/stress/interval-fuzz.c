// SPDX-License-Identifier: GPL-2.0
/*
 * interval-fuzz: random writes to the root's cpu.stat.stream_interval.
 *
 * Each input is random bytes, a decorated number near the limits, or a
 * mutation of one, of a length from 0 to past PAGE_SIZE (cgroup files
 * take at most PAGE_SIZE bytes in one write, kernfs fails a longer one
 * with E2BIG; a zero-byte write returns 0 before the file's handler).  It
 * is written with write(), pwrite() at a random offset or writev() in
 * pieces, through a fresh or a reused descriptor.  Every result must be
 * what an independent model of the interface predicts (a number in range,
 * then read back, or -EINVAL with the old value kept), as root, as root
 * without CAP_SYS_ADMIN (-EPERM, nothing changes) and as uid 65534
 * (-EACCES at open).
 *
 * The model (docs/kernel-interface.md, with kernfs and cgroup core in
 * front): at most PAGE_SIZE bytes, no NUL byte among them (kernfs hands
 * the handler a C string and its length: a NUL before the end is junk),
 * blanks around it ignored (the kernel's isspace: \t \n \v \f \r, space
 * and 0xa0), then decimal digits only, 0 or 10..3600000.
 *
 * usage: interval-fuzz [--seconds N] [--seed S]
 * Exit: 0 pass, 1 fail (each mismatch printed with the input in hex),
 * 77 skip.
 */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUZZ_MAX_LEN	(3 * 4096)

static char root[PATH_MAX], path[PATH_MAX];	/* the cgroup2 root, its interval file */
static long page_size;
static struct rng rng;
static int failures;
static unsigned long stats[8];
enum { S_WRITES, S_SET, S_EINVAL, S_E2BIG, S_ZERO, S_EPERM, S_EACCES, S_FRESH_FD };

static bool kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static bool kdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * What a write of @in[0..@len) by a privileged opener does: the result of
 * write(2) (bytes or -errno), and *@value the interval afterwards.
 */
static long model(const unsigned char *in, size_t len, long *value)
{
	size_t n, start, end, i;
	unsigned long long v = 0;

	if (!len)
		return 0;
	if ((long)len > page_size)
		return -E2BIG;
	n = strnlen((const char *)in, len);
	if (n != len)
		return -EINVAL;
	for (start = 0; start < n && kspace(in[start]); start++)
		;
	for (end = n; end > start && kspace(in[end - 1]); end--)
		;
	if (start == end)
		return -EINVAL;
	for (i = start; i < end; i++) {
		if (!kdigit(in[i]))
			return -EINVAL;
		v = v * 10 + (in[i] - '0');
		if (v > UINT_MAX)
			return -EINVAL;
	}
	if (v && (v < INTERVAL_MIN_MS || v > INTERVAL_MAX_MS))
		return -EINVAL;
	*value = v;
	return len;
}

static size_t pick_len(void)
{
	switch (rng_below(&rng, 10)) {
	case 0: return rng_below(&rng, 2);
	case 1: case 2: case 3: return rng_range(&rng, 1, 16);
	case 4: return rng_range(&rng, 17, 200);
	case 5: case 6: return page_size + rng_range(&rng, -3, 3);
	case 7: return rng_range(&rng, page_size - 64, page_size);
	case 8: return rng_range(&rng, page_size + 1, FUZZ_MAX_LEN);
	default: return rng_range(&rng, 201, page_size);
	}
}

static const char *const numbers[] = {
	"0", "9", "10", "11", "100", "999", "1000", "3599999", "3600000", "3600001",
	"4294967295", "4294967296", "4294967306", "18446744073709551615",
	"18446744073709551616", "99999999999999999999999", "010", "0010", "00000000000000000000010",
};
static const char blanks[] = { ' ', '\t', '\n', '\v', '\f', '\r', (char)0xa0, 0x1c, (char)0x85 };

static size_t decorate(unsigned char *out, size_t max)
{
	const char *num = numbers[rng_below(&rng, sizeof(numbers) / sizeof(numbers[0]))];
	size_t len = 0, k;

	/* blanks before, signs and prefixes, the number, blanks, junk or a NUL after */
	for (k = rng_below(&rng, 3); k && len < max; k--)
		out[len++] = blanks[rng_below(&rng, sizeof(blanks))];
	if (rng_pct(&rng, 10) && len < max)
		out[len++] = "+-"[rng_below(&rng, 2)];
	if (rng_pct(&rng, 5) && len + 2 < max) {
		out[len++] = '0';
		out[len++] = 'x';
	}
	for (k = 0; num[k] && len < max; k++)
		out[len++] = num[k];
	for (k = rng_below(&rng, 3); k && len < max; k--)
		out[len++] = blanks[rng_below(&rng, sizeof(blanks))];
	if (rng_pct(&rng, 15) && len < max)
		out[len++] = '\0';
	if (rng_pct(&rng, 15))
		for (k = rng_range(&rng, 1, 4); k && len < max; k--)
			out[len++] = rng_below(&rng, 256);
	return len;
}

/* an input of random bytes, a decorated number, a mutant, or a padded one */
static size_t make_input(unsigned char *in)
{
	size_t len, i;

	switch (rng_below(&rng, 5)) {
	case 0:
		len = pick_len();
		for (i = 0; i < len; i++)
			in[i] = rng_below(&rng, 256);
		return len;
	case 1:
	case 2:
		return decorate(in, FUZZ_MAX_LEN);
	case 3:		/* one byte flipped, inserted or dropped */
		len = decorate(in, FUZZ_MAX_LEN - 1);
		if (!len)
			return len;
		i = rng_below(&rng, len);
		switch (rng_below(&rng, 3)) {
		case 0: in[i] = rng_below(&rng, 256); break;
		case 1: memmove(in + i + 1, in + i, len - i); in[i] = rng_below(&rng, 256); len++; break;
		default: memmove(in + i, in + i + 1, len - i - 1); len--; break;
		}
		return len;
	default:	/* a number padded to about a page: zeros before, blanks after */
		len = pick_len();
		if (len < 3)
			return len;
		memset(in, rng_pct(&rng, 50) ? '0' : ' ', len);
		i = rng_range(&rng, 0, len - 2);
		memcpy(in + i, "20", 2);
		memset(in + i + 2, rng_pct(&rng, 50) ? ' ' : '\n', len - i - 2);
		return len;
	}
}

static void hex(const unsigned char *in, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 48; i++)
		printf("%02x", in[i]);
	if (len > 48)
		printf("... (%zu bytes)", len);
}

/* write @in through @fd one of three ways: bytes written or -errno */
static long do_write(int fd, const unsigned char *in, size_t len)
{
	long n;

	switch (rng_below(&rng, 3)) {
	case 0:
		n = write(fd, in, len);
		break;
	case 1:
		n = pwrite(fd, in, len, rng_below(&rng, 1u << 20));
		break;
	default: {
		struct iovec iov[3];
		size_t a = len ? rng_below(&rng, len + 1) : 0;
		size_t b = a + (len - a ? rng_below(&rng, len - a + 1) : 0);

		iov[0] = (struct iovec){ (void *)in, a };
		iov[1] = (struct iovec){ (void *)(in + a), b - a };
		iov[2] = (struct iovec){ (void *)(in + b), len - b };
		n = writev(fd, iov, 3);
		break;
	}
	}
	return n < 0 ? -errno : n;
}

static void mismatch(const char *who, const unsigned char *in, size_t len, long got,
		     long want, long val_before, long val_after, long val_want)
{
	failures++;
	if (failures > 20)
		return;
	printf("FAIL: %s wrote ", who);
	hex(in, len);
	printf(": write returned %ld (%s), expected %ld (%s); interval %ld -> %ld, expected %ld\n",
	       got, got < 0 ? strerror(-got) : "bytes", want, want < 0 ? strerror(-want) : "bytes",
	       val_before, val_after, val_want);
}

/* as root: every result and the value read back match the model */
static void fuzz_root(int *fd, unsigned char *in)
{
	size_t len = make_input(in);
	long before = interval_get(root, CPU_STEM), after, want_val = before, want, got;

	if (*fd < 0 || rng_pct(&rng, 30)) {
		if (*fd >= 0)
			close(*fd);
		*fd = open(path, rng_pct(&rng, 50) ? O_WRONLY : O_RDWR);
		stats[S_FRESH_FD]++;
		if (*fd < 0) {
			printf("FAIL: open %s: %s\n", path, strerror(errno));
			failures++;
			return;
		}
	}
	want = model(in, len, &want_val);
	got = do_write(*fd, in, len);
	after = interval_get(root, CPU_STEM);
	stats[S_WRITES]++;
	if (got != want || after != want_val)
		mismatch("root", in, len, got, want, before, after, want_val);
	else if (got == -EINVAL)
		stats[S_EINVAL]++;
	else if (got == -E2BIG)
		stats[S_E2BIG]++;
	else if (!got)
		stats[S_ZERO]++;
	else
		stats[S_SET]++;
}

static int drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/*
 * In a child: @n writes as root without CAP_SYS_ADMIN (-EPERM, but E2BIG
 * and the zero-byte write come first), or as uid 65534 (-EACCES at open).
 * Exit status: the number of mismatches (capped).
 */
static int unprivileged(bool nobody, int n, unsigned char *in)
{
	long before = interval_get(root, CPU_STEM);
	int bad = 0, i, fd;

	if (nobody) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			return 100;
		for (i = 0; i < n; i++) {
			fd = open(path, rng_pct(&rng, 50) ? O_WRONLY : O_RDWR);
			if (fd >= 0 || errno != EACCES) {
				printf("FAIL: uid 65534 opened %s for writing: %s\n", path,
				       fd >= 0 ? "it worked" : strerror(errno));
				bad++;
				if (fd >= 0)
					close(fd);
			}
			stats[S_EACCES]++;
		}
		if (interval_get(root, CPU_STEM) != before) {
			printf("FAIL: the interval changed under uid 65534's attempts\n");
			bad++;
		}
		return bad > 99 ? 99 : bad;
	}
	if (drop_cap_sys_admin())
		return 100;
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		printf("FAIL: root without CAP_SYS_ADMIN cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		size_t len = make_input(in);
		long got = do_write(fd, in, len), want, after = interval_get(root, CPU_STEM);

		want = !len ? 0 : (long)len > page_size ? -E2BIG : -EPERM;
		if (got != want || after != before) {
			mismatch("root without CAP_SYS_ADMIN", in, len, got, want, before, after, before);
			bad++;
		}
	}
	close(fd);
	return bad > 99 ? 99 : bad;
}

static void run_unprivileged(bool nobody, int n, unsigned char *in)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(unprivileged(nobody, n, in));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("FAIL: the %s child: %s\n", nobody ? "uid 65534" : "no-CAP_SYS_ADMIN",
		       pid < 0 ? strerror(errno) : WIFEXITED(status) && WEXITSTATUS(status) == 100 ?
		       "could not drop privileges" : "mismatches (above)");
		failures++;
	}
	stats[nobody ? S_EACCES : S_EPERM] += n;
	rng_next(&rng);		/* the child's choices are not the parent's */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ 0 }
	};
	long seconds = 30, saved;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	unsigned char *in = malloc(FUZZ_MAX_LEN + 1);
	int c, fd = -1, r;
	int64_t end;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *e;

		switch (c) {
		case 's': seconds = strtol(optarg, &e, 10); if (*e || seconds <= 0) return 2; break;
		case 'r': seed = strtoull(optarg, &e, 0); if (*e) return 2; break;
		default:
			fprintf(stderr, "usage: interval-fuzz [--seconds N] [--seed S]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	if (!in || geteuid()) {
		printf("SKIP: interval-fuzz needs root\n");
		return EXIT_SKIP;
	}
	if (cgroup2_mount(root, sizeof(root))) {
		printf("SKIP: no cgroup2 mount\n");
		return EXIT_SKIP;
	}
	path_join(path, sizeof(path), root, CPU_STEM INTERVAL_SUFFIX);
	if (access(path, F_OK)) {
		printf("SKIP: no %s: not a cgstream kernel\n", path);
		return EXIT_SKIP;
	}
	saved = interval_get(root, CPU_STEM);
	if (saved < 0) {
		printf("FAIL: read %s: %s\n", path, strerror(-saved));
		return EXIT_FAIL;
	}
	rng_seed(&rng, seed);
	printf("interval-fuzz: %ld s, seed %#llx, page size %ld\n", seconds,
	       (unsigned long long)seed, page_size);
	end = now_ns() + seconds * NSEC_PER_SEC;
	while (now_ns() < end && failures < 20) {
		if (rng_pct(&rng, 2))
			run_unprivileged(rng_pct(&rng, 50), 50, in);
		else
			fuzz_root(&fd, in);
	}
	if (fd >= 0)
		close(fd);
	r = interval_set(root, CPU_STEM, saved);
	if (r) {
		printf("FAIL: restoring the interval %ld: %s\n", saved, strerror(-r));
		failures++;
	}
	printf("interval-fuzz: %lu writes as root: %lu set a value, %lu EINVAL, %lu E2BIG, "
	       "%lu zero-byte; %lu fresh descriptors; %lu writes without CAP_SYS_ADMIN, "
	       "%lu opens as uid 65534\n", stats[S_WRITES], stats[S_SET], stats[S_EINVAL],
	       stats[S_E2BIG], stats[S_ZERO], stats[S_FRESH_FD], stats[S_EPERM], stats[S_EACCES]);
	if (failures) {
		printf("interval-fuzz: FAIL: %d mismatches\n", failures);
		return EXIT_FAIL;
	}
	printf("interval-fuzz: PASS\n");
	return EXIT_PASS;
}
