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
