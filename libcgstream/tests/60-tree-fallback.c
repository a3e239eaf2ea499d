// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree in fallback mode on the host's cgroup2 (a timer, cpu.stat reads,
 * inotify to find new cgroups): the checks of treecheck.h on 1,000
 * cgroups ($CGSTREAM_TEST_CGROUPS: 10,000 takes about a minute; 100 under
 * CGSTREAM_TEST_FAST, for valgrind), 1,000 cycles of 10 ms with churn.
 * Also: the kernel modes refused on a kernel without them.
 */
#include "treecheck.h"

int main(void)
{
	const char *e = getenv("CGSTREAM_TEST_CGROUPS");
	int n = e && *e ? atoi(e) : getenv("CGSTREAM_TEST_FAST") ? 100 : 1000;
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE };
	struct cgstream_tree *t = (void *)0x5a5a;
	uint64_t start = t_now_ms();
	char sub[PATH_MAX];

	if (!t_cgroup_root())
		t_skip("no cgroup2 mount");
	snprintf(sub, sizeof(sub), "%s/cpu.stat.stream.subtree", t_cgroup_root());
	if (access(sub, F_OK) < 0) {
		T_EQ(cgstream_tree_open("/", &o, &t), -EOPNOTSUPP);
		if (!t_kernel_has_stream()) {
			o.mode = CGSTREAM_MODE_KERNEL;
			T_EQ(cgstream_tree_open("/", &o, &t), -EOPNOTSUPP);
		}
		T_ASSERT(t == (void *)0x5a5a);
	}
	o.mode = CGSTREAM_MODE_FALLBACK;
	T_EQ(cgstream_tree_open("cgstest-no-such-cgroup", &o, &t), -ENOENT);
	T_EQ(cgstream_tree_open("../x", &o, &t), -EINVAL);
	T_EQ(cgstream_tree_open(NULL, &o, &t), -EINVAL);
	T_ASSERT(t == (void *)0x5a5a);

	tc_setup(CGSTREAM_MODE_FALLBACK, n, 10, "tree");
	tc_open_and_batches(5);
	tc_churn();
	tc_pieces();
	tc_long(1000);
	tc_root_removed();
	t_log("tree-fallback: all passed (%d cgroups, %llu batches, %llu s)", n,
	      (unsigned long long)tc.batches, (unsigned long long)(t_now_ms() - start) / 1000);
	return 0;
}
