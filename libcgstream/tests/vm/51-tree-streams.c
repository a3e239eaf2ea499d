// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees in KERNEL mode (patched kernel, root, in the VM): each cgroup's
 * own cpu.stat.stream, new cgroups found through inotify, as on a kernel
 * with the stream but without the subtree file.  The checks of
 * treecheck.h on 1,000 cgroups at 100 ms and on 10,000
 * ($CGSTREAM_TEST_CGROUPS) at 500 ms.
 */
#include "treecheck.h"

int main(void)
{
	t_require_kernel_stream();
	tc_run(CGSTREAM_MODE_KERNEL, 1000, 100, 100, "ker1k");
	tc_run(CGSTREAM_MODE_KERNEL, tc_big(), 500, 20, "ker10k");
	t_log("tree-streams: all passed");
	return 0;
}
