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
 * and with removals lost every third change snapshot (a full snapshot at
 * once).  The VM tests run the same checks
 * on the real kernel.
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
	T_EQ(unsetenv("FAKE_REMOVED_LATE"), 0);
	tc_run(CGSTREAM_MODE_KERNEL, fast ? 100 : 1000, 50, fast ? 20 : 50, "fkerc");
	T_EQ(setenv("FAKE_LOSE_EVERY", "3", 1), 0);
	tc_run(CGSTREAM_MODE_SUBTREE, fast ? 200 : 1000, 20, fast ? 20 : 50, "fsubl");
	t_log("tree-fake-kernel: all passed");
	return 0;
}
