// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A fallback tree read with plain syscalls ($CGSTREAM_NO_IO_URING): with
 * 4,000 cgroups a cycle's reads take more than the 10 ms a process call
 * reads for, so each cycle is read over several calls.  The checks of
 * treecheck.h but the long run: every cgroup in every batch, ADDED and
 * REMOVED exactly once while cgroups come and go mid-cycle, pieces, the
 * root removed.
 */
#include "treecheck.h"

int main(void)
{
	const char *e = getenv("CGSTREAM_TEST_CGROUPS");
	int n = e && *e ? atoi(e) : getenv("CGSTREAM_TEST_FAST") ? 300 : 4000;

	if (!t_cgroup_root())
		t_skip("no cgroup2 mount");
	T_EQ(setenv("CGSTREAM_NO_IO_URING", "1", 1), 0);
	tc_setup(CGSTREAM_MODE_FALLBACK, n, 10, "plain");
	tc_open_and_batches(5);
	T_EQ(t_count_fds("anon_inode:[io_uring]"), 0);
	tc_churn();
	tc_pieces();
	tc_long(20);
	tc_root_removed();
	t_log("tree-plain: all passed (%d cgroups, %llu batches)", n,
	      (unsigned long long)tc.batches);
	return 0;
}
