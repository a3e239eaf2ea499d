// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a cycle of a subtree tree costs the library, change snapshots
 * against full snapshots, side by side in one run (patched kernel, root,
 * in the VM): N cgroups below one (flat), 1 % of them kept changing by a
 * task each that uses ~0.2 ms of CPU every interval, and four trees of
 * cpu in SUBTREE mode read one after the other for the same number of
 * cycles:
 *
 *   full snapshots ($CGSTREAM_SUBTREE_FULL=1), a SAMPLE of every cgroup
 *   full snapshots, CHANGED events only
 *   change snapshots, a SAMPLE of every cgroup (the tree keeps the rest)
 *   change snapshots, CHANGED events only
 *
 * The CPU time of the calls that read and hand out a cycle
 * (cgstream_tree_process(), the kernel's reads included: the thread's
 * user and system time around them, not the waits) per cycle, and the
 * events per cycle; a consumer that only counts the events.  The CPU
 * times are a measurement, printed side by side (under TCG a timing is
 * no pass/fail check; make bench's agent scenario has the figures): what
 * it checks is that each variant hands out what it should, every cgroup
 * or about what changed.
 *
 * N: 1,000 in make check; $CGSTREAM_TEST_CGROUPS (10,000 for the
 * figures in libcgstream/README.md); cycles $CGSTREAM_TEST_CYCLES
 * (default 20) at a 250 ms interval ($CGSTREAM_TEST_INTERVAL_MS).
 */
#include <sys/resource.h>

#include "testutil.h"


struct variant {
	const char *snapshots, *report;
	bool full;
	uint32_t report_mode;
	/* results */
	double usec_mean, usec_max, user_mean, sys_mean, events_mean;
};

static char top[PATH_MAX];
static int n_cg, n_busy, interval_ms;
static pid_t *busy;

static void cleanup(void)
{
	char p[PATH_MAX + 16];

	for (int i = 0; i < n_busy; i++)
		t_kill(busy[i]);
	for (int i = 0; i < n_cg; i++) {
		snprintf(p, sizeof(p), "%s/c%05d", top, i);
		t_cg_remove(p);
	}
	rmdir(top);
}

static void setup(void)
{
	char p[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/%s", t_cgroup_root(), t_name("cost"));
	T_EQ(mkdir(top, 0755), 0);
	atexit(cleanup);
	for (int i = 0; i < n_cg; i++) {
		snprintf(p, sizeof(p), "%s/c%05d", top, i);
		if (mkdir(p, 0755) < 0)
			T_FAIL("mkdir %s: %s", p, strerror(errno));
	}
	busy = calloc((size_t)n_busy, sizeof(*busy));
	T_ASSERT(busy);
	/* spread over the tree: every 100th */
	for (int i = 0; i < n_busy; i++) {
		snprintf(p, sizeof(p), "%s/c%05d", top, i * (n_cg / n_busy));
		busy[i] = t_ticker(p, 200, interval_ms / 2);	/* ~0.2 ms each interval */
		T_ASSERT(busy[i] > 0);
	}
}

static double thread_usec(double *user, double *sys)
{
	struct rusage ru;

	T_EQ(getrusage(RUSAGE_THREAD, &ru), 0);
	*user = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec;
	*sys = (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
	return *user + *sys;
}

/* one cycle's batch, all of it: its events, the CPU the calls took */
static int one_cycle(struct cgstream_tree *t, struct cgstream_event *ev, size_t max,
		     double *usec, double *user, double *sys)
{
	double u0, s0, u1, s1;
	int n, total = 0;

	T_ASSERT(cgstream_tree_wait(t, 10000) == 1);
	thread_usec(&u0, &s0);
	do {
		n = cgstream_tree_process(t, ev, max, sizeof(ev[0]));
		T_ASSERT(n >= 0);
		total += n;
	} while ((size_t)n == max);
	thread_usec(&u1, &s1);
	*user = u1 - u0;
	*sys = s1 - s0;
	*usec = *user + *sys;
	return total;
}

static void run(struct variant *v, int cycles)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE,
				   .controllers = CGSTREAM_CTRL_CPU, .report = v->report_mode };
	size_t max = (size_t)n_cg * 2 + 64;
	struct cgstream_event *ev = calloc(max, sizeof(*ev));
	struct cgstream_tree *t;
	double usec, user, sys;
	int counted = 0;

	T_ASSERT(ev);
	T_EQ(setenv("CGSTREAM_SUBTREE_FULL", v->full ? "1" : "0", 1), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	/* the first cycles: every cgroup ADDED, the tree at its size */
	for (int i = 0; i < 3; i++)
		one_cycle(t, ev, max, &usec, &user, &sys);
	for (int c = 0; c < cycles; c++) {
		int n = one_cycle(t, ev, max, &usec, &user, &sys);

		if (n == 0)
			continue;	/* a wake-up without a batch */
		counted++;
		v->usec_mean += usec;
		v->user_mean += user;
		v->sys_mean += sys;
		v->events_mean += n;
		if (usec > v->usec_max)
			v->usec_max = usec;
	}
	T_ASSERT(counted > 0);
	v->usec_mean /= counted;
	v->user_mean /= counted;
	v->sys_mean /= counted;
	v->events_mean /= counted;
	cgstream_tree_close(t);
	free(ev);
}

int main(void)
{
	struct variant v[] = {
		{ .snapshots = "full", .report = "all", .full = true,
		  .report_mode = CGSTREAM_REPORT_ALL },
		{ .snapshots = "full", .report = "changes", .full = true,
		  .report_mode = CGSTREAM_REPORT_CHANGES },
		{ .snapshots = "changes", .report = "all", .report_mode = CGSTREAM_REPORT_ALL },
		{ .snapshots = "changes", .report = "changes",
		  .report_mode = CGSTREAM_REPORT_CHANGES },
	};
	const char *e = getenv("CGSTREAM_TEST_CGROUPS"), *c = getenv("CGSTREAM_TEST_CYCLES");
	const char *iv = getenv("CGSTREAM_TEST_INTERVAL_MS");
	int cycles = c && *c ? atoi(c) : 20;
	char sub[PATH_MAX];

	t_require_kernel_stream();
	snprintf(sub, sizeof(sub), "%s/cpu.stat.stream.subtree", t_cgroup_root());
	if (access(sub, F_OK) < 0)
		t_skip("this kernel has no cpu.stat.stream.subtree");
	n_cg = e && *e ? atoi(e) : 1000;
	n_busy = n_cg / 100 > 0 ? n_cg / 100 : 1;
	interval_ms = iv && *iv ? atoi(iv) : 250;
	T_ASSERT(interval_ms >= 10);
	t_use_interval(interval_ms);
	setup();
	t_log("%d cgroups below %s, %d of them (%.1f %%) with a task using CPU each interval; "
	      "%d cycles of %d ms per row", n_cg, top, n_busy, 100.0 * n_busy / n_cg, cycles,
	      interval_ms);
	t_log("%-9s %-8s %14s %10s %10s %10s %10s", "snapshot", "events", "CPU/cycle (us)",
	      "user", "system", "max", "events");
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		run(&v[i], cycles);
		t_log("%-9s %-8s %14.0f %10.0f %10.0f %10.0f %10.1f", v[i].snapshots, v[i].report,
		      v[i].usec_mean, v[i].user_mean, v[i].sys_mean, v[i].usec_max,
		      v[i].events_mean);
	}
	t_log("full snapshots with every cgroup / change snapshots with CHANGED: %.1fx",
	      v[0].usec_mean / v[3].usec_mean);
	/* the changing ones and the top; a busy one may miss an interval */
	T_ASSERT(v[3].events_mean <= 2.0 * (n_busy + 1) && v[3].events_mean >= 0.5 * n_busy);
	T_ASSERT(v[0].events_mean >= n_cg && v[2].events_mean >= n_cg);
	T_ASSERT(v[1].events_mean <= 2.0 * (n_busy + 1) && v[1].events_mean >= 0.5 * n_busy);
	t_log("changes-cost: all passed");
	return 0;
}
