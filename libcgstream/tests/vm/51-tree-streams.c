// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees in KERNEL mode (patched kernel, root, in the VM): each cgroup's
 * own cpu.stat.stream, new cgroups found through inotify, as on a kernel
 * with the stream but without the subtree file.  The checks of
 * treecheck.h on 1,000 cgroups at 100 ms, and under make stress
 * ($CGSTREAM_TEST_SCALE) on 3,000 ($CGSTREAM_TEST_STREAM_CGROUPS) at
 * 500 ms (62 s under TCG).  Not 10,000: this mode reads 10,000 files per
 * cycle, which under TCG took over ten minutes for the test; the subtree
 * mode (50-tree-subtree) is the one that runs at 10,000.
 */
#include "treecheck.h"

int main(void)
{
	const char *e = getenv("CGSTREAM_TEST_STREAM_CGROUPS");

	t_require_kernel_stream();
	tc_run(CGSTREAM_MODE_KERNEL, 1000, 100, 100, "ker1k");
	tc_report = CGSTREAM_REPORT_CHANGES;
	tc_run(CGSTREAM_MODE_KERNEL, 1000, 100, 50, "ker1kc");
	tc_report = CGSTREAM_REPORT_ALL;
	if (tc_big())
		tc_run(CGSTREAM_MODE_KERNEL, e && *e ? atoi(e) : 3000, 500, 20, "kerbig");
	t_log("tree-streams: all passed");
	return 0;
}
