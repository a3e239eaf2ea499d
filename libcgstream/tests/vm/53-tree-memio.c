// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees of cpu, memory and io (patched kernel, root, in the VM): the
 * checks of treecheck.h (ADDED and REMOVED exactly once with churn, every
 * cgroup in every batch, pieces, no fd or heap growth, the root removed)
 * with every cgroup's memory values (named: "anon", "current",
 * "events.*") and io devices in every SAMPLE, in each of the three modes:
 * SUBTREE (the three *.stat.stream.subtree files), KERNEL (each cgroup's
 * six files) and FALLBACK (cpu.stat, memory.stat, memory.current,
 * memory.swap.current, memory.events and io.stat, through io_uring: 6,000
 * reads that flush per cycle of 1,000 cgroups).
 *
 * make check: SUBTREE 1,000 cgroups, 200 cycles; KERNEL and FALLBACK 300
 * cgroups, 50 cycles.  make stress ($CGSTREAM_TEST_SCALE): SUBTREE 1,000
 * cgroups and 1,000 cycles, KERNEL 1,000 and 100, FALLBACK 1,000 and 50
 * (under TCG on 2 cores, 2026-11-25: 99 s, 100 s and 66 s), then each mode
 * with 10,000 cgroups (subtree 100 cycles, 541 s; kernel 5, the 20 it
 * had took 1,474 s).  $CGSTREAM_TEST_MODES=fallback (for example) runs
 * one mode.
 */
#include "treecheck.h"

static bool has(const char *file)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", t_cgroup_root(), file);
	return access(p, F_OK) == 0;
}

int main(void)
{
	int big;

	t_require_kernel_stream();
	if (!has("memory.stat.stream.subtree") || !has("io.stat.stream.subtree"))
		t_skip("this kernel has no memory and io streams");
	tc_controllers = T_CTRL_MEMIO;
	big = tc_big();
	tc_run(CGSTREAM_MODE_SUBTREE, 1000, 20, big ? 1000 : 200, "msub1k");
	tc_run(CGSTREAM_MODE_KERNEL, big ? 1000 : 300, 100, big ? 100 : 50, "mker");
	tc_run(CGSTREAM_MODE_FALLBACK, big ? 1000 : 300, 100, 50, "mfb");
	/* change snapshots of the three: CHANGED for what moved */
	tc_report = CGSTREAM_REPORT_CHANGES;
	tc_run(CGSTREAM_MODE_SUBTREE, 1000, 20, 150, "msub1kc");
	tc_report = CGSTREAM_REPORT_ALL;
	if (big) {
		tc_run(CGSTREAM_MODE_SUBTREE, big, 200, 100, "msub10k");
		/* a cycle reads 60,000 files here: about a minute under TCG */
		tc_run(CGSTREAM_MODE_KERNEL, big, 1000, 5, "mker10k");
		tc_run(CGSTREAM_MODE_FALLBACK, big, 1000, 5, "mfb10k");
	}
	t_log("tree-memio: all passed");
	return 0;
}
