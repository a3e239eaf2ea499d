// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.io_uring_disabled=2 (patched kernel, root, in the VM; restored
 * after): trees in FALLBACK mode (the one that reads through io_uring
 * where it can) and SUBTREE mode, of cpu, memory and io (of cpu on a
 * kernel that streams only cpu), and a kernel-mode group, all with plain
 * syscalls and no io_uring fd.  300 cgroups a tree: what differs without
 * io_uring is how the files are read, not how many (60-tree-fallback
 * takes 1,000, and make stress's 53-tree-memio).
 */
#include "treecheck.h"

static void group_kernel(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_KERNEL };
	struct cgstream_event ev[4];
	struct cgstream_group *g;
	int n, batches = 0;

	T_EQ(cgstream_group_new(&o, &g), 0);
	T_EQ(cgstream_group_add(g, "/", NULL), 0);
	while (batches < 3) {
		T_EQ(cgstream_group_wait(g, 5000), 1);
		n = cgstream_group_process(g, ev, 4, sizeof(ev[0]));
		T_ASSERT(n >= 0);
		if (n) {
			T_EQ(ev[0].type, CGSTREAM_EVENT_SAMPLE);
			batches++;
		}
	}
	T_EQ(t_count_fds("anon_inode:[io_uring]"), 0);
	cgstream_group_free(g);
}

int main(void)
{
	char sub[PATH_MAX];

	t_require_kernel_stream();
	if (!t_io_uring_disable())
		t_skip("no kernel.io_uring_disabled sysctl");
	t_log("kernel.io_uring_disabled=2");
	t_use_intervals(100);
	group_kernel();
	/* cpu, memory and io where the kernel streams all three (cpu is
	 * read the same way in either), else cpu */
	snprintf(sub, sizeof(sub), "%s/memory.stat.stream.subtree", t_cgroup_root());
	if (access(sub, F_OK) == 0)
		tc_controllers = T_CTRL_MEMIO;
	tc_run(CGSTREAM_MODE_FALLBACK, 300, 100, 50, "nouring-fb");
	snprintf(sub, sizeof(sub), "%s/cpu.stat.stream.subtree", t_cgroup_root());
	if (access(sub, F_OK) == 0)
		tc_run(CGSTREAM_MODE_SUBTREE, 300, 100, 50, "nouring-sub");
	t_io_uring_restore();
	t_log("no-io-uring: all passed");
	return 0;
}
