// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interval (patched kernel, root, in the VM): get/set through the
 * library, kernel errnos passed through (EINVAL, EACCES, EPERM), the cycle
 * rate follows a change, 0 stops the cycles, and a stream wakes once per
 * cycle.
 */
#include <linux/capability.h>
#include <linux/cgroup_stat_stream.h>
#include <sys/syscall.h>

#include "testutil.h"

static const struct cgstream_opts kopts = { .sz = sizeof(kopts), .mode = CGSTREAM_MODE_KERNEL };

/* run @fn in a child with lowered privileges; its exit status */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	T_ASSERT(pid >= 0);
	if (pid == 0)
		_exit(fn());
	T_ASSERT(waitpid(pid, &status, 0) == pid);
	T_ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int as_nobody(void)
{
	if (setgid(65534) < 0 || setuid(65534) < 0)
		return 99;
	return cgstream_set_interval(NULL, 500) == -EACCES ? 0 : 1;
}

/* root's uid (so the file opens for writing) without CAP_SYS_ADMIN */
static int without_sys_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return 99;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		return 99;
	return cgstream_set_interval(NULL, 500) == -EPERM ? 0 : 1;
}

static void test_get_set(void)
{
	uint32_t ms = 0;

	t_use_interval(100);
	T_EQ(cgstream_get_interval(NULL, &ms), 0);
	T_EQ(ms, 100);
	T_EQ(cgstream_set_interval(NULL, CGSTREAM_INTERVAL_MIN_MS - 1), -EINVAL);
	T_EQ(cgstream_set_interval(NULL, CGSTREAM_INTERVAL_MAX_MS + 1), -EINVAL);
	T_EQ(cgstream_get_interval(NULL, &ms), 0);
	T_EQ(ms, 100);	/* the old value stays */
	T_EQ(cgstream_set_interval(NULL, CGSTREAM_INTERVAL_MAX_MS), 0);
	T_EQ(cgstream_get_interval(NULL, &ms), 0);
	T_EQ(ms, CGSTREAM_INTERVAL_MAX_MS);
	T_EQ(in_child(as_nobody), 0);
	T_EQ(in_child(without_sys_admin), 0);
	T_EQ(cgstream_get_interval(NULL, &ms), 0);
	T_EQ(ms, CGSTREAM_INTERVAL_MAX_MS);
	T_EQ(cgstream_set_interval(NULL, 100), 0);
}

/* drain, then count samples over @window_ms: mean flush period and wake counts */
static double measure(struct cgstream *st, unsigned int window_ms, unsigned int *wakes,
		      unsigned int *empty, uint64_t *cycles)
{
	struct cgstream_sample first = { 0 }, s;
	uint64_t start;
	bool have = false;

	*wakes = *empty = 0;
	/* start on a fresh sample of the current interval */
	while (cgstream_wait(st, 0) == 1 && cgstream_read(st, &s, sizeof(s)) == 0)
		;
	start = t_now_ms();
	/* the window, and at least 6 cycles unless the guest is starved for 30 s */
	while (t_now_ms() - start < window_ms ||
	       (t_now_ms() - start < 30000 && (!have || s.seq - first.seq < 6))) {
		int r = cgstream_wait(st, 200);

		T_ASSERT(r >= 0);
		if (r == 0)
			continue;
		(*wakes)++;
		r = cgstream_read(st, &s, sizeof(s));
		if (r == -EAGAIN) {
			(*empty)++;
			continue;
		}
		T_EQ(r, 0);
		if (!have) {
			first = s;
			have = true;
		}
	}
	T_ASSERT(have && s.seq > first.seq);
	*cycles = s.seq - first.seq;
	/*
	 * The flusher runs on a fixed grid; deadlines that passed while the
	 * (TCG-slow, shared) guest was busy are skipped and counted in
	 * flush_missed.  Time over deadlines estimates the grid's period; a
	 * starved guest only makes it longer, never shorter.
	 */
	return (double)(s.flush_time_usec - first.flush_time_usec) / 1000.0 /
	       (double)(*cycles + s.flush_missed - first.flush_missed);
}

static void test_rate(void)
{
	struct cgstream *st;
	struct cgstream_sample s;
	unsigned int wakes, empty;
	uint64_t cycles;
	double p100, p400;

	T_EQ(cgstream_open("/", &kopts, &st), 0);
	t_use_interval(100);
	p100 = measure(st, 3000, &wakes, &empty, &cycles);
	t_log("interval 100: grid period %.1f ms over %llu cycles, %u wake-ups (%u empty)",
	      p100, (unsigned long long)cycles, wakes, empty);
	/* wake once per cycle: one wake-up per sample, none extra */
	T_ASSERT(wakes <= cycles + 2 && empty <= 1);
	T_ASSERT(p100 >= 80);	/* never faster than asked */

	t_use_interval(400);
	p400 = measure(st, 4000, &wakes, &empty, &cycles);
	t_log("interval 400: grid period %.1f ms over %llu cycles, %u wake-ups (%u empty)",
	      p400, (unsigned long long)cycles, wakes, empty);
	T_ASSERT(wakes <= cycles + 2 && empty <= 1);
	T_ASSERT(p400 >= 320);
	/* the rate follows the setting (4x; margin for a starved guest) */
	T_ASSERT(p400 / p100 >= 1.5);

	/* 0: streaming off, no wake-ups at all */
	t_use_interval(0);
	t_sleep_ms(500);	/* a cycle that was running when it was set */
	while (cgstream_wait(st, 0) == 1 && cgstream_read(st, &s, sizeof(s)) == 0)
		;
	T_EQ(cgstream_wait(st, 1500), 0);
	T_EQ(cgstream_read(st, &s, sizeof(s)), -EAGAIN);

	/* and on again: cycles resume */
	t_use_interval(100);
	T_EQ(cgstream_wait(st, 3000), 1);
	T_EQ(cgstream_read(st, &s, sizeof(s)), 0);
	cgstream_close(st);
}

int main(void)
{
	t_require_kernel_stream();
	test_get_set();
	test_rate();
	t_log("interval: all passed");
	return 0;
}
