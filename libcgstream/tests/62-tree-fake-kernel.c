// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tree's SUBTREE and KERNEL modes on the host, whose kernel has
 * neither: the test runs itself again under fake-kernel.so (an LD_PRELOAD
 * emulation of the interval, stream and subtree files, see there) with
 * records longer than today's and unknown kinds among them.  The checks
 * of treecheck.h: SUBTREE on 2,000 cgroups (the first snapshot is larger
 * than the tree's first buffer: several reads, then one per cycle),
 * KERNEL on 1,000, each with a SAMPLE of every cgroup per cycle, then
 * with CHANGED events of those the fake kernel changed (10 % of them per
 * publication), and SUBTREE again with removals told two snapshots late (a
 * cgroup made again under a removed one's path waits for its REMOVED)
 * and in full snapshots only (one between a removal and its REMOVED
 * lists neither: the tree waits for the REMOVED), and with removals lost
 * every third change snapshot (a full snapshot at once).  The VM tests run the same checks
 * on the real kernel.
 *
 * Pressure (fake-kernel.so's pressure.stream and pressure.stream.subtree,
 * format 2 with controller 4, from the host's *.pressure files), in
 * SUBTREE and KERNEL mode: its interval its own; values by the SCHEMA's
 * names, a busy cgroup's cpu.some.total within the file's before and
 * after the cycle; a cgroup whose cgroup.pressure is 0 in no pressure
 * snapshot (no pressure values, not zeros), and one turned off while
 * read losing them and staying; pressure alone, as the lead, listing the
 * cgroups that have it.  A cgroup removed in a tree of cpu and pressure
 * whose pressure REMOVED record comes a snapshot after cpu's: one
 * REMOVED event, with both controllers' final values, and nothing of it
 * before; one whose pressure REMOVED never comes: REMOVED with cpu's
 * final values once pressure published twice more.
 */
#include <libgen.h>

#include "treecheck.h"

/*
 * A tree synced at once over cgroups made after the latest publication:
 * the kernel does not list them yet (nor their root): none is taken for
 * removed, and each comes, ADDED with its values, at a later cycle.
 */
static void test_sync_before_listed(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE,
				   .report = CGSTREAM_REPORT_CHANGES };
	struct cgstream_event ev[16];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int added = 0, n;

	t_use_interval(1000);
	t_sleep_ms(50);	/* just after a publication: the cgroups are newer */
	T_EQ(t_cg_make(t_cgroup_root(), t_name("unlisted"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_sync(t), 0);
	for (uint64_t end = t_now_ms() + 10000; added < 2 && t_now_ms() < end;) {
		T_ASSERT(cgstream_tree_wait(t, 2000) >= 0);
		n = cgstream_tree_process(t, ev, 16, sizeof(ev[0]));
		T_ASSERT(n >= 0);
		for (int i = 0; i < n; i++) {
			T_ASSERT(ev[i].type != CGSTREAM_EVENT_REMOVED);
			added += ev[i].type == CGSTREAM_EVENT_ADDED;
		}
	}
	T_EQ(added, 2);
	T_EQ(cgstream_tree_size(t), 2);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(kid), 0);
	T_EQ(t_cg_remove(top), 0);
	t_log("a tree synced before its cgroups were published: none removed, both added later");
}

/* a cycle now: its whole batch (room for it) into @ev; how many events */
static int sync_batch(struct cgstream_tree *t, struct cgstream_event *ev, size_t max)
{
	int n;

	T_EQ(cgstream_tree_sync(t), 0);
	n = cgstream_tree_process(t, ev, max, sizeof(ev[0]));
	T_ASSERT(n >= 0 && (size_t)n < max);
	return n;
}

/* of a batch, the events of type @type for the cgroup at @path */
static int count_of(const struct cgstream_event *ev, int n, int type, const char *path)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += ev[i].type == type && !strcmp(ev[i].path, path);
	return k;
}

/*
 * A removal the kernel never tells (its REMOVED below a directory the
 * reader can no longer search, here held back for good): the full
 * snapshots list neither it nor its REMOVED, and the tree, waiting for
 * one with its final values, tells it REMOVED without them once 5 s have
 * passed (CGS_REMOVED_WAIT_USEC), once, with the values it had.
 */
static void test_removed_never_told(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE,
				   .report = CGSTREAM_REPORT_CHANGES };
	struct cgstream_event ev[16];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	uint64_t gone_ms, told_ms = 0;
	int n, removed = 0;

	T_EQ(setenv("FAKE_REMOVED_LATE", "1000000", 1), 0);
	T_EQ(setenv("CGSTREAM_SUBTREE_FULL", "1", 1), 0);
	t_use_interval(20);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("untold"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	for (uint64_t end = t_now_ms() + 5000;; t_sleep_ms(20)) {
		n = sync_batch(t, ev, 16);
		if (count_of(ev, n, CGSTREAM_EVENT_ADDED, kid) == 1)
			break;
		if (t_now_ms() > end)
			T_FAIL("%s not listed within 5 s", kid);
	}
	T_EQ(t_cg_remove(kid), 0);
	gone_ms = t_now_ms();
	while (t_now_ms() - gone_ms < 20000 && (!removed || t_now_ms() - told_ms < 500)) {
		t_sleep_ms(20);
		n = sync_batch(t, ev, 16);
		for (int i = 0; i < n; i++) {
			if (ev[i].type != CGSTREAM_EVENT_REMOVED)
				continue;
			T_ASSERT(!strcmp(ev[i].path, kid));
			T_EQ(ev[i].final, 0);
			T_ASSERT(ev[i].controllers & CGSTREAM_CTRL_CPU);
			removed++;
			told_ms = t_now_ms();
		}
	}
	T_EQ(removed, 1);
	T_ASSERT(told_ms - gone_ms >= 5000);
	T_EQ(cgstream_tree_size(t), 1);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(top), 0);
	T_EQ(unsetenv("CGSTREAM_SUBTREE_FULL"), 0);
	T_EQ(unsetenv("FAKE_REMOVED_LATE"), 0);
	t_log("a removal never told: REMOVED without final values %.1f s later",
	      (double)(told_ms - gone_ms) / 1000);
}

/*
 * The tree's latest publication (cgstream_tree_publication()) in SUBTREE
 * and KERNEL mode with changes only: none before a cycle, then the
 * newest each sync read, moving on while the cgroups stay idle and no
 * event says so.  KERNEL: a cgroup whose stream read failed (ERROR) comes
 * back with a CHANGED when it is read again, although its values are
 * those it had.
 */
static void test_publication_and_recovery(int mode)
{
	int (*fail)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_DEFAULT,
									   "fake_kernel_fail");
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode,
				   .report = CGSTREAM_REPORT_CHANGES };
	struct cgstream_publication pub, prev;
	struct {
		struct cgstream_publication p;
		uint64_t future;
	} big = { .future = 7 };
	struct cgstream_event ev[16];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int n;

	T_ASSERT(fail);
	t_use_interval(20);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("pub"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_mode(t), mode);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), -ENODATA);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_MEMORY, &pub, sizeof(pub)), -ENOENT);
	T_EQ(cgstream_tree_publication(t, 0, &pub, sizeof(pub)), -EINVAL);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_IO, &pub,
				       sizeof(pub)), -EINVAL);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, NULL, sizeof(pub)), -EINVAL);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub) - 1), -EINVAL);
	T_EQ(cgstream_tree_publication(NULL, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), -EINVAL);

	/* the first cycles: until the fake kernel publishes both */
	for (uint64_t end = t_now_ms() + 5000;; t_sleep_ms(20)) {
		n = sync_batch(t, ev, 16);
		if (count_of(ev, n, CGSTREAM_EVENT_CHANGED, kid) == 1)
			break;
		if (t_now_ms() > end)
			T_FAIL("%s not listed within 5 s", kid);
	}
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &prev, sizeof(prev)), 0);
	T_ASSERT(prev.seq > 0 && prev.time_usec <= t_now_us());
	T_EQ(prev.seq, ev[n - 1].sample.seq);	/* the values handed out are as of it */
	/* a larger struct: the rest zeroed */
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &big.p, sizeof(big)), 0);
	T_ASSERT(big.p.seq == prev.seq && big.future == 0);

	/* idle: no CHANGED, and the publication moves on */
	for (int i = 0; i < 3; i++) {
		t_sleep_ms(50);
		n = sync_batch(t, ev, 16);
		T_EQ(count_of(ev, n, CGSTREAM_EVENT_CHANGED, kid), 0);
		T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), 0);
		T_ASSERT(pub.seq > prev.seq && pub.time_usec > prev.time_usec);
		T_ASSERT(t_now_us() - pub.time_usec < 200 * 1000);	/* 20 ms old, a busy host's more */
		prev = pub;
	}
	if (mode == CGSTREAM_MODE_KERNEL) {
		T_EQ(fail(kid, EIO), 0);
		t_sleep_ms(50);
		n = sync_batch(t, ev, 16);
		T_EQ(count_of(ev, n, CGSTREAM_EVENT_ERROR, kid), 1);
		T_EQ(count_of(ev, n, CGSTREAM_EVENT_CHANGED, kid), 0);
		T_EQ(cgstream_tree_size(t), 2);	/* it stays, tried again */
		T_EQ(fail(NULL, 0), 0);
		t_sleep_ms(50);
		n = sync_batch(t, ev, 16);
		/* read again, the same values: a change to whoever dropped it */
		T_EQ(count_of(ev, n, CGSTREAM_EVENT_CHANGED, kid), 1);
		for (int i = 0; i < n; i++)
			if (ev[i].type == CGSTREAM_EVENT_CHANGED && !strcmp(ev[i].path, kid))
				T_EQ(ev[i].changed, CGSTREAM_CTRL_CPU);
		t_sleep_ms(50);
		n = sync_batch(t, ev, 16);
		T_EQ(count_of(ev, n, CGSTREAM_EVENT_CHANGED, kid), 0);	/* once */
	}
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(kid), 0);
	T_EQ(t_cg_remove(top), 0);
	t_log("%s: the tree's publication moves on while idle%s", cgstream_mode_name(mode),
	      mode == CGSTREAM_MODE_KERNEL ? "; a cgroup read again after an ERROR is CHANGED" :
	      "");
}

/* "total=" of @dir/cpu.pressure's some line */
static uint64_t cpu_some_total(const char *dir)
{
	uint64_t v;

	T_ASSERT(t_pressure_total(dir, "cpu", "some", &v));
	return v;
}

static const struct cgstream_event *event_of(const struct cgstream_event *ev, int n, int type,
					     const char *path)
{
	for (int i = 0; i < n; i++)
		if (ev[i].type == type && !strcmp(ev[i].path, path))
			return &ev[i];
	return NULL;
}

/* what a cycle of @t said of @busy and @off (SAMPLE events, every cgroup) */
static void pressure_cycle(struct cgstream_tree *t, const char *busy, const char *off,
			   bool off_has, uint64_t *busy_total)
{
	struct cgstream_event ev[16];
	const struct cgstream_event *b, *o;
	uint64_t before = cpu_some_total(busy), after, v;
	int n = sync_batch(t, ev, 16);

	after = cpu_some_total(busy);
	b = event_of(ev, n, CGSTREAM_EVENT_SAMPLE, busy);
	o = event_of(ev, n, CGSTREAM_EVENT_SAMPLE, off);
	T_ASSERT(b && o);
	T_ASSERT(b->controllers & CGSTREAM_CTRL_PRESSURE);
	T_ASSERT(b->pressure && b->pressure->nr >= 24);
	T_ASSERT(!strcmp(b->pressure->names[0], "cpu.some.avg10"));
	T_ASSERT(!strcmp(b->pressure->names[23], "io.full.total"));
	T_EQ(cgstream_values_get(b->pressure, "cpu.some.total", &v), 0);
	if (v < before || v > after)
		T_FAIL("%s: cpu.some.total %llu, the file's %llu..%llu", busy,
		       (unsigned long long)v, (unsigned long long)before, (unsigned long long)after);
	*busy_total = v;
	T_EQ(!!(o->controllers & CGSTREAM_CTRL_PRESSURE), off_has);
	T_EQ(o->pressure != NULL, off_has);
	T_ASSERT(o->controllers & CGSTREAM_CTRL_CPU);
}

/*
 * A tree of cpu and pressure in @mode: the busy cgroup's pressure values
 * as its files have them, none for the one whose pressure is off; the
 * busy one's turned off while read: it stays, without pressure.  Then
 * pressure alone (the lead): only the cgroups that have it are listed.
 */
static void test_pressure(int mode)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode,
				   .controllers = CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE };
	char top[PATH_MAX], busy[PATH_MAX], off[PATH_MAX], file[PATH_MAX + 32];
	struct cgstream_event ev[16];
	struct cgstream_tree *t;
	uint64_t first, last;
	pid_t pids[3];
	int n;

	t_use_interval(20);
	t_use_ctrl_interval(CGSTREAM_CTRL_PRESSURE, 30);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("psi"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "busy", busy, sizeof(busy)), 0);
	T_EQ(t_cg_make(top, "off", off, sizeof(off)), 0);
	snprintf(file, sizeof(file), "%s/cgroup.pressure", off);
	T_EQ(t_write_file(file, "0"), 0);
	for (int i = 0; i < 3; i++)
		T_ASSERT((pids[i] = t_burner(busy)) > 0);
	t_sleep_ms(100);	/* published after the cgroups were made */
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_ctrl_mode(t, CGSTREAM_CTRL_PRESSURE), mode);
	pressure_cycle(t, busy, off, false, &first);
	for (int i = 0; i < 5; i++) {
		t_sleep_ms(60);
		pressure_cycle(t, busy, off, false, &last);
	}
	T_ASSERT(last > first);	/* three burners: tasks wait for the CPUs */
	snprintf(file, sizeof(file), "%s/cgroup.pressure", busy);
	T_EQ(t_write_file(file, "0"), 0);
	for (int i = 0; i < 3; i++) {
		t_sleep_ms(60);
		n = sync_batch(t, ev, 16);
		T_ASSERT(!event_of(ev, n, CGSTREAM_EVENT_REMOVED, busy));
	}
	n = sync_batch(t, ev, 16);
	T_ASSERT(event_of(ev, n, CGSTREAM_EVENT_SAMPLE, busy));
	T_EQ(event_of(ev, n, CGSTREAM_EVENT_SAMPLE, busy)->controllers, CGSTREAM_CTRL_CPU);
	T_EQ(cgstream_tree_size(t), 3);
	cgstream_tree_close(t);
	T_EQ(t_write_file(file, "1"), 0);

	/* pressure alone: the lead, its own publications; @off is never listed */
	o.controllers = CGSTREAM_CTRL_PRESSURE;
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_mode(t), mode);
	t_sleep_ms(100);
	n = sync_batch(t, ev, 16);
	T_ASSERT(event_of(ev, n, CGSTREAM_EVENT_ADDED, busy));
	T_ASSERT(!event_of(ev, n, CGSTREAM_EVENT_ADDED, off));
	T_ASSERT(event_of(ev, n, CGSTREAM_EVENT_SAMPLE, top));
	T_EQ(event_of(ev, n, CGSTREAM_EVENT_SAMPLE, busy)->controllers, CGSTREAM_CTRL_PRESSURE);
	cgstream_tree_close(t);
	for (int i = 0; i < 3; i++)
		t_kill(pids[i]);
	T_EQ(t_cg_remove(busy), 0);
	T_EQ(t_cg_remove(off), 0);
	T_EQ(t_cg_remove(top), 0);
	t_log("%s: pressure as its files have it, none where it is off, kept when it goes",
	      cgstream_mode_name(mode));
}

/*
 * A tree of cpu (the lead) and pressure in SUBTREE mode; a cgroup is
 * removed, and pressure's REMOVED record comes @late snapshots after
 * cpu's (each controller publishes at its own time): the REMOVED event
 * waits for it and carries both controllers' final values, no event
 * names the cgroup before it; where it never comes, the event carries
 * cpu's once pressure has published twice since cpu's came.
 */
static void test_removed_each_controller(const char *late)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE,
				   .controllers = CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE,
				   .report = CGSTREAM_REPORT_CHANGES };
	bool never = atol(late) > 100;
	struct cgstream_event ev[16];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	uint64_t gone_ms, told_ms = 0;
	uint32_t final = 0;
	int n, removed = 0;

	T_EQ(setenv("FAKE_PRESSURE_REMOVED_LATE", late, 1), 0);
	t_use_interval(20);
	t_use_ctrl_interval(CGSTREAM_CTRL_PRESSURE, 30);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("final"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	t_sleep_ms(100);	/* published after the cgroups were made */
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	for (uint64_t end = t_now_ms() + 5000;; t_sleep_ms(20)) {
		const struct cgstream_event *a;

		n = sync_batch(t, ev, 16);
		a = event_of(ev, n, CGSTREAM_EVENT_SAMPLE, kid);
		if (!a)
			a = event_of(ev, n, CGSTREAM_EVENT_CHANGED, kid);
		if (a && a->controllers == (CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE))
			break;
		if (t_now_ms() > end)
			T_FAIL("%s not listed with cpu and pressure within 5 s", kid);
	}
	T_EQ(t_cg_remove(kid), 0);
	gone_ms = t_now_ms();
	while (t_now_ms() - gone_ms < 10000 && (!removed || t_now_ms() - told_ms < 300)) {
		t_sleep_ms(40);	/* a new publication of each */
		n = sync_batch(t, ev, 16);
		for (int i = 0; i < n; i++) {
			if (strcmp(ev[i].path, kid))
				continue;
			T_EQ(ev[i].type, CGSTREAM_EVENT_REMOVED);	/* nothing else of it */
			T_ASSERT(!removed);
			removed++;
			final = ev[i].final;
			told_ms = t_now_ms();
			T_EQ(ev[i].controllers, CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE);
			T_ASSERT(ev[i].pressure != NULL);
		}
	}
	T_EQ(removed, 1);
	T_EQ(final, never ? CGSTREAM_CTRL_CPU : CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE);
	T_ASSERT(told_ms - gone_ms < 5000);	/* pressure's publications, not the bound */
	T_EQ(cgstream_tree_size(t), 1);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(top), 0);
	T_EQ(unsetenv("FAKE_PRESSURE_REMOVED_LATE"), 0);
	t_log("pressure's REMOVED %s: one REMOVED, final %s, %llu ms after the rmdir",
	      never ? "never told" : "a snapshot after cpu's",
	      never ? "cpu" : "cpu and pressure", (unsigned long long)(told_ms - gone_ms));
}

int main(int argc, char **argv)
{
	bool fast = getenv("CGSTREAM_TEST_FAST") != NULL;

	(void)argc;
	if (!t_cgroup_root())
		t_skip("no cgroup2 mount");
	if (!dlsym(RTLD_DEFAULT, "fake_kernel_reads")) {
		char self[PATH_MAX], so[PATH_MAX + 32];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (getenv("FAKE_RECORD_PAD"))
			T_FAIL("fake-kernel.so did not load");
		if (t_kernel_has_stream())
			t_skip("this kernel has the stream files: the VM tests cover it");
		T_ASSERT(len > 0);
		self[len] = '\0';
		/* build/tests/host/this -> build/tests/fake-kernel.so */
		snprintf(so, sizeof(so), "%s/../fake-kernel.so", dirname(self));
		if (access(so, R_OK) < 0)
			T_FAIL("%s: %s", so, strerror(errno));
		T_EQ(setenv("LD_PRELOAD", so, 1), 0);
		T_EQ(setenv("FAKE_RECORD_PAD", "16", 1), 0);
		execv("/proc/self/exe", argv);
		T_FAIL("execv: %s", strerror(errno));
	}
	if (geteuid() != 0)
		t_skip("needs root");
	test_sync_before_listed();
	test_removed_never_told();
	test_publication_and_recovery(CGSTREAM_MODE_SUBTREE);
	test_publication_and_recovery(CGSTREAM_MODE_KERNEL);
	if (t_has_pressure(t_cgroup_root())) {
		test_pressure(CGSTREAM_MODE_SUBTREE);
		test_pressure(CGSTREAM_MODE_KERNEL);
		test_removed_each_controller("1");
		test_removed_each_controller("2");
		test_removed_each_controller("1000000");
	} else {
		t_log("the host has no *.pressure files: pressure not checked");
	}
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 2000, 20, fast ? 50 : 200, "fsub");
	tc_run(CGSTREAM_MODE_KERNEL, fast ? 100 : 1000, 50, fast ? 20 : 50, "fker");
	/* changes: the fake kernel's cgroups change 10 % a publication, and
	 * every third change snapshot lost its removals (a full resync) */
	tc_report = CGSTREAM_REPORT_CHANGES;
	T_EQ(setenv("FAKE_CHANGE_PCT", "10", 1), 0);
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 2000, 20, fast ? 50 : 200, "fsubc");
	/* removals told two snapshots late: a cgroup made again under a
	 * removed one's path waits for that one's REMOVED (its final values) */
	T_EQ(setenv("FAKE_REMOVED_LATE", "2", 1), 0);
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 1000, 20, fast ? 20 : 50, "fsubr");
	/* and full snapshots only: each one between a removal and its
	 * REMOVED lists neither, the tree waits for the REMOVED */
	T_EQ(setenv("CGSTREAM_SUBTREE_FULL", "1", 1), 0);
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 1000, 20, 20, "fsubrf");
	T_EQ(unsetenv("CGSTREAM_SUBTREE_FULL"), 0);
	T_EQ(unsetenv("FAKE_REMOVED_LATE"), 0);
	tc_run(CGSTREAM_MODE_KERNEL, fast ? 100 : 1000, 50, fast ? 20 : 50, "fkerc");
	T_EQ(setenv("FAKE_LOSE_EVERY", "3", 1), 0);
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 1000, 20, fast ? 20 : 50, "fsubl");
	t_log("tree-fake-kernel: all passed");
	return 0;
}
