// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees through cpu.stat.stream.subtree (patched kernel, root, in the VM):
 * the checks of treecheck.h on 1,000 cgroups with 1,000 cycles of 20 ms,
 * and, under make stress ($CGSTREAM_TEST_SCALE), on 10,000
 * ($CGSTREAM_TEST_CGROUPS) at 100 ms; a batch of either takes a handful
 * of read syscalls (/proc/self/io), not one per cgroup.
 */
#include "treecheck.h"

int main(void)
{
	char sub[PATH_MAX];

	t_require_kernel_stream();
	snprintf(sub, sizeof(sub), "%s/cpu.stat.stream.subtree", t_cgroup_root());
	if (access(sub, F_OK) < 0)
		t_skip("this kernel has no cpu.stat.stream.subtree");
	tc_run(CGSTREAM_MODE_SUBTREE, 1000, 20, 1000, "sub1k");
	/* change snapshots: CHANGED for what moved, REMOVED with final values */
	tc_report = CGSTREAM_REPORT_CHANGES;
	tc_run(CGSTREAM_MODE_SUBTREE, 1000, 20, 200, "sub1kc");
	tc_report = CGSTREAM_REPORT_ALL;
	if (tc_big())
		tc_run(CGSTREAM_MODE_SUBTREE, tc_big(), 100, 100, "sub10k");
	t_log("tree-subtree: all passed");
	return 0;
}
