// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One stream in fallback mode against the host's cgroup2: one sample per
 * tick, seq counts up, values agree with cpu.stat and grow while a child
 * burns CPU, a removed cgroup reads -ENODEV.
 */
#include "testutil.h"

#define TICK_MS 100

static struct cgstream_opts fb = {
	.sz = sizeof(fb), .mode = CGSTREAM_MODE_FALLBACK, .fallback_interval_ms = TICK_MS,
};

static void next_sample(struct cgstream *st, struct cgstream_sample *s)
{
	T_EQ(cgstream_wait(st, 5000), 1);
	T_EQ(cgstream_read(st, s, sizeof(*s)), 0);
}

static uint64_t cpu_stat_usage(const char *cg)
{
	char p[PATH_MAX], buf[4096];
	struct cgstream_sample s;
	int n;

	snprintf(p, sizeof(p), "%s/cpu.stat", cg);
	n = t_read_file(p, buf, sizeof(buf));
	T_ASSERT(n > 0);
	T_EQ(cgstream_parse(buf, (size_t)n, &s, sizeof(s)), 0);
	return s.usage_usec;
}

static void test_root(const char *root)
{
	struct cgstream_sample a, b, junk;
	struct cgstream *st;
	uint64_t t0, t1, direct;

	T_EQ(cgstream_open("/", &fb, &st), 0);
	T_EQ(cgstream_mode(st), CGSTREAM_MODE_FALLBACK);
	T_ASSERT(!strcmp(cgstream_path(st), root));
	T_ASSERT(cgstream_fd(st) >= 0);

	/* the first tick is immediate, like a fresh kernel stream */
	next_sample(st, &a);
	T_EQ(a.seq, 1);
	T_ASSERT(a.present & CGSTREAM_F_SEQ && a.present & CGSTREAM_F_FLUSH_TIME);
	T_ASSERT(a.present & CGSTREAM_F_USAGE && a.present & CGSTREAM_F_USER);
	direct = cpu_stat_usage(root);
	T_ASSERT(direct >= a.usage_usec);

	/* nothing new until the next tick: -EAGAIN, and the struct untouched */
	memset(&junk, 0xaa, sizeof(junk));
	T_EQ(cgstream_read(st, &junk, sizeof(junk)), -EAGAIN);
	T_ASSERT(((unsigned char *)&junk)[0] == 0xaa);
	T_EQ(cgstream_wait(st, 0), 0);

	/* one sample per tick, seq +1 each, time moves by about a tick */
	t0 = t_now_ms();
	for (int i = 0; i < 10; i++) {
		next_sample(st, &b);
		T_EQ(b.seq, a.seq + 1);
		T_ASSERT(b.flush_time_usec > a.flush_time_usec);
		T_ASSERT(b.usage_usec >= a.usage_usec);
		T_EQ(cgstream_read(st, &junk, sizeof(junk)), -EAGAIN);
		a = b;
	}
	t1 = t_now_ms();
	t_log("10 ticks of %d ms took %llu ms", TICK_MS, (unsigned long long)(t1 - t0));
	T_ASSERT(t1 - t0 >= 9 * TICK_MS);	/* never faster than the timer */
	cgstream_close(st);
}

static void test_child(const char *root)
{
	struct cgstream_sample first, s;
	char cg[PATH_MAX];
	struct cgstream *st;
	uint64_t direct, start;
	pid_t burner;
	int r;

	r = t_cg_make(root, t_name("stream"), cg, sizeof(cg));
	if (r < 0) {
		t_log("cannot create a child cgroup (%s): burner checks skipped", strerror(-r));
		return;
	}
	T_EQ(cgstream_open(cg, &fb, &st), 0);
	burner = t_burner(cg);
	T_ASSERT(burner > 0);

	next_sample(st, &first);
	start = t_now_ms();
	do {
		next_sample(st, &s);
	} while (t_now_ms() - start < 1000);
	direct = cpu_stat_usage(cg);
	t_log("burner used %llu us of CPU in about 1 s (seq %llu -> %llu)",
	      (unsigned long long)(s.usage_usec - first.usage_usec),
	      (unsigned long long)first.seq, (unsigned long long)s.seq);
	/* 2 shared cores: the burner gets a fair share, well above 5% */
	T_ASSERT(s.usage_usec > first.usage_usec + 50000);
	T_ASSERT(direct >= s.usage_usec);
	T_ASSERT(s.user_usec + s.system_usec <= s.usage_usec + 1000);

	/* removal: the next read says -ENODEV, and keeps saying it */
	t_kill(burner);
	T_EQ(t_cg_remove(cg), 0);
	T_EQ(cgstream_wait(st, 5000), 1);
	T_EQ(cgstream_read(st, &s, sizeof(s)), -ENODEV);
	T_EQ(cgstream_read(st, &s, sizeof(s)), -ENODEV);
	T_EQ(cgstream_wait(st, 1000), 1);
	cgstream_close(st);
}

static void test_auto_interval(void)
{
	struct cgstream_opts o = { .sz = sizeof(o) };
	struct cgstream *st;
	struct cgstream_sample a, b;

	if (t_kernel_has_stream())
		return;
	/* no kernel interval, no option: 1000 ms */
	T_EQ(cgstream_open("/", &o, &st), 0);
	T_EQ(cgstream_mode(st), CGSTREAM_MODE_FALLBACK);
	next_sample(st, &a);
	next_sample(st, &b);
	t_log("default fallback period: %llu us",
	      (unsigned long long)(b.flush_time_usec - a.flush_time_usec));
	T_ASSERT(b.flush_time_usec - a.flush_time_usec >= 900000);
	cgstream_close(st);
}

int main(void)
{
	const char *root = t_cgroup_root();

	if (!root)
		t_skip("no cgroup2 mount");
	test_root(root);
	test_child(root);
	test_auto_interval();
	t_log("stream-fallback: all passed");
	return 0;
}
