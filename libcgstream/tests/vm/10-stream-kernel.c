// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One stream in kernel mode (patched kernel, root, inside the VM): one
 * sample per cycle with growing seq, values equal to cpu.stat once a
 * cgroup is idle and close to it under load, growth under a CPU burner,
 * bandwidth fields with the cpu controller, -ENODEV after rmdir.
 */
#include "testutil.h"

#define INTERVAL_MS 100

static const struct cgstream_opts kopts = { .sz = sizeof(kopts), .mode = CGSTREAM_MODE_KERNEL };

static void next_sample(struct cgstream *st, struct cgstream_sample *s)
{
	uint64_t start = t_now_ms();

	for (;;) {
		int r;

		T_EQ(cgstream_wait(st, 10000), 1);
		r = cgstream_read(st, s, sizeof(*s));
		if (r == 0)
			return;
		T_EQ(r, -EAGAIN);	/* a flush we had read already woke us */
		if (t_now_ms() - start > 10000)
			T_FAIL("no sample within 10 s");
	}
}

static void cpu_stat(const char *cg, struct cgstream_sample *s)
{
	char p[PATH_MAX], buf[4096];
	int n;

	snprintf(p, sizeof(p), "%s/cpu.stat", cg);
	n = t_read_file(p, buf, sizeof(buf));
	T_ASSERT(n > 0);
	T_EQ(cgstream_parse(buf, (size_t)n, s, sizeof(*s)), 0);
}

static void test_cycles(void)
{
	struct cgstream_sample a, b;
	struct cgstream *st;
	unsigned int jumps = 0;

	T_EQ(cgstream_open("/", &kopts, &st), 0);
	T_EQ(cgstream_mode(st), CGSTREAM_MODE_KERNEL);
	next_sample(st, &a);
	T_ASSERT(a.seq > 0);
	T_EQ(a.present & 0xfff & ~(uint64_t)(CGSTREAM_F_NR_PERIODS | CGSTREAM_F_NR_THROTTLED |
		CGSTREAM_F_THROTTLED | CGSTREAM_F_NR_BURSTS | CGSTREAM_F_BURST),
	     CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_USAGE | CGSTREAM_F_USER |
	     CGSTREAM_F_SYSTEM | CGSTREAM_F_NICE | CGSTREAM_F_FLUSH_MISSED);
	for (int i = 0; i < 20; i++) {
		next_sample(st, &b);
		T_ASSERT(b.seq > a.seq);
		T_ASSERT(b.flush_time_usec > a.flush_time_usec);
		T_ASSERT(b.usage_usec >= a.usage_usec);
		T_ASSERT(b.flush_missed >= a.flush_missed);
		if (b.seq != a.seq + 1)
			jumps++;
		a = b;
	}
	t_log("20 samples, %u with a seq gap (a slow reader sees the latest flush)", jumps);
	T_ASSERT(jumps <= 10);
	cgstream_close(st);
}

static void test_values(const char *root)
{
	struct cgstream_sample s, d, first;
	char cg[PATH_MAX];
	struct cgstream *st;
	pid_t burner;
	uint64_t start;

	T_EQ(t_cg_make(root, t_name("values"), cg, sizeof(cg)), 0);
	T_EQ(cgstream_open(cg, &kopts, &st), 0);
	T_ASSERT(!strcmp(cgstream_path(st), cg));

	/* under load: cpu.stat (flushed now) is ahead by at most the time since the flush */
	burner = t_burner(cg);
	T_ASSERT(burner > 0);
	next_sample(st, &first);
	start = t_now_ms();
	do {
		next_sample(st, &s);
	} while (t_now_ms() - start < 1500);
	cpu_stat(cg, &d);
	{
		struct timespec ts;
		uint64_t now_usec, slack;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now_usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
		slack = (now_usec - s.flush_time_usec) * (uint64_t)sysconf(_SC_NPROCESSORS_ONLN) + 20000;
		t_log("burner: +%llu us over %llu cycles; cpu.stat ahead by %llu us (allowed %llu)",
		      (unsigned long long)(s.usage_usec - first.usage_usec),
		      (unsigned long long)(s.seq - first.seq),
		      (unsigned long long)(d.usage_usec - s.usage_usec), (unsigned long long)slack);
		T_ASSERT(d.usage_usec >= s.usage_usec);
		T_ASSERT(d.usage_usec - s.usage_usec <= slack);
	}
	T_ASSERT(s.usage_usec > first.usage_usec + 100000);	/* a burner over 1.5 s */

	/* idle: after two more flushes the stream equals cpu.stat exactly */
	t_kill(burner);
	next_sample(st, &s);
	next_sample(st, &s);
	cpu_stat(cg, &d);
	next_sample(st, &s);
	T_EQ(s.usage_usec, d.usage_usec);
	T_EQ(s.user_usec, d.user_usec);
	T_EQ(s.system_usec, d.system_usec);

	/* removal: poll wakes, reads fail with -ENODEV from then on */
	T_EQ(t_cg_remove(cg), 0);
	start = t_now_ms();
	T_EQ(cgstream_wait(st, 5000), 1);
	for (;;) {
		int r = cgstream_read(st, &s, sizeof(s));

		if (r == -ENODEV)
			break;
		T_ASSERT(r == 0 || r == -EAGAIN);	/* a flush before the rmdir */
		T_ASSERT(t_now_ms() - start < 5000);
		T_EQ(cgstream_wait(st, 5000), 1);
	}
	T_EQ(cgstream_read(st, &s, sizeof(s)), -ENODEV);
	T_EQ(cgstream_wait(st, 0), 1);
	cgstream_close(st);
}

static void test_bandwidth(const char *root)
{
	char p[PATH_MAX], cg[PATH_MAX], buf[256];
	struct cgstream_sample a, b, d;
	struct cgstream *st;
	pid_t burner;

	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root);
	if (t_write_file(p, "+cpu") < 0) {
		t_log("cannot enable the cpu controller: bandwidth checks skipped");
		return;
	}
	T_EQ(t_cg_make(root, t_name("bw"), cg, sizeof(cg)), 0);
	snprintf(p, sizeof(p), "%s/cpu.max", cg);
	T_EQ(t_write_file(p, "10000 100000"), 0);	/* 10% of a CPU */
	T_EQ(cgstream_open(cg, &kopts, &st), 0);
	burner = t_burner(cg);
	next_sample(st, &a);
	t_sleep_ms(1500);
	next_sample(st, &b);
	t_kill(burner);
	T_ASSERT(b.present & CGSTREAM_F_NR_PERIODS);
	T_ASSERT(b.present & CGSTREAM_F_NR_THROTTLED);
	T_ASSERT(b.present & CGSTREAM_F_THROTTLED);
	t_log("cpu.max 10%%: +%llu periods, +%llu throttled, +%llu us throttled",
	      (unsigned long long)(b.nr_periods - a.nr_periods),
	      (unsigned long long)(b.nr_throttled - a.nr_throttled),
	      (unsigned long long)(b.throttled_usec - a.throttled_usec));
	T_ASSERT(b.nr_throttled > a.nr_throttled);
	/*
	 * The bandwidth counters are read live (they are not rstat), and the
	 * period timer may still tick after the burner died: a stream read
	 * lies between a cpu.stat read before and one after it.
	 */
	next_sample(st, &b);
	cpu_stat(cg, &d);
	next_sample(st, &b);
	cpu_stat(cg, &a);
	T_EQ(b.present & 0x7fc, d.present & 0x7fc);	/* the same cpu.stat keys */
	T_ASSERT(d.nr_periods <= b.nr_periods && b.nr_periods <= a.nr_periods);
	T_ASSERT(d.nr_throttled <= b.nr_throttled && b.nr_throttled <= a.nr_throttled);
	T_ASSERT(d.throttled_usec <= b.throttled_usec && b.throttled_usec <= a.throttled_usec);
	T_ASSERT(d.nr_bursts <= b.nr_bursts && b.nr_bursts <= a.nr_bursts);
	T_ASSERT(d.burst_usec <= b.burst_usec && b.burst_usec <= a.burst_usec);
	cgstream_close(st);
	T_EQ(t_cg_remove(cg), 0);
	(void)buf;
}

int main(void)
{
	const char *root;

	t_require_kernel_stream();
	root = t_cgroup_root();
	t_use_interval(INTERVAL_MS);
	test_cycles();
	test_values(root);
	test_bandwidth(root);
	t_log("stream-kernel: all passed");
	return 0;
}
