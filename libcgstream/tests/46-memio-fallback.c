// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Memory and io in fallback mode on the host's cgroup2, where the host
 * has those controllers: a tree of cpu, memory and io (the checks of
 * treecheck.h, every SAMPLE with named memory values and io devices), a
 * stream whose "current" is memory.current's, and a group.  Where the
 * root does not offer them (the machines' hybrid hierarchy has none), an
 * object asked for them says so (-ENOMEDIUM) and the test skips.
 */
#include "treecheck.h"

static bool root_has(const char *ctrl)
{
	char p[PATH_MAX], buf[1024], *tok, *save = NULL;

	snprintf(p, sizeof(p), "%s/cgroup.controllers", t_cgroup_root());
	if (t_read_file(p, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, ctrl))
			return true;
	return false;
}

static void stream_current(const char *cg)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = 50, .controllers = CGSTREAM_CTRL_MEMORY };
	char p[PATH_MAX], buf[64];
	struct cgstream_event e;
	struct cgstream *st;
	uint64_t current, direct;

	T_EQ(cgstream_open(cg, &o, &st), 0);
	T_EQ(cgstream_ctrl_mode(st, CGSTREAM_CTRL_MEMORY), CGSTREAM_MODE_FALLBACK);
	T_EQ(cgstream_wait(st, 5000), 1);
	T_EQ(cgstream_read_event(st, &e, sizeof(e)), 0);
	T_EQ(e.controllers, CGSTREAM_CTRL_MEMORY);
	T_EQ(cgstream_memory_get(e.memory, "current", &current), 0);
	snprintf(p, sizeof(p), "%s/memory.current", cg);
	T_ASSERT(t_read_file(p, buf, sizeof(buf)) > 0);
	direct = strtoull(buf, NULL, 10);
	t_log("%s: current %llu, memory.current %llu", cg, (unsigned long long)current,
	      (unsigned long long)direct);
	T_ASSERT(current <= direct + (4u << 20) && direct <= current + (4u << 20));
	cgstream_close(st);
}

int main(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .controllers = T_CTRL_MEMIO };
	const char *e = getenv("CGSTREAM_TEST_CGROUPS");
	int n = e && *e ? atoi(e) : getenv("CGSTREAM_TEST_FAST") ? 100 : 500;
	struct cgstream_group *g = NULL;
	char top[PATH_MAX];

	if (!t_cgroup_root())
		t_skip("no cgroup2 mount");
	if (!root_has("memory") || !root_has("io")) {
		/* the objects say so, clearly */
		struct cgstream *st = NULL;
		struct cgstream_tree *t = NULL;

		T_EQ(cgstream_open("/", &o, &st), -ENOMEDIUM);
		T_EQ(cgstream_tree_open("/", &o, &t), -ENOMEDIUM);
		T_EQ(cgstream_group_new(&o, &g), -ENOMEDIUM);
		T_ASSERT(!st && !t && !g);
		o.controllers = CGSTREAM_CTRL_ALL << 1;
		T_EQ(cgstream_open("/", &o, &st), -EINVAL);
		t_skip("the host's cgroup2 has no memory and io controllers (-ENOMEDIUM checked)");
	}
	if (geteuid() != 0)
		t_skip("needs root to enable memory and io below the root");
	tc_controllers = T_CTRL_MEMIO;
	tc_setup(CGSTREAM_MODE_FALLBACK, n, 20, "memio");
	tc_open_and_batches(5);
	tc_churn();
	tc_pieces();
	tc_long(100);
	snprintf(top, sizeof(top), "%s/l1", tc.top);
	stream_current(top);
	T_EQ(cgstream_group_new(&o, &g), 0);
	T_EQ(cgstream_group_add(g, top, NULL), 0);
	T_EQ(cgstream_group_ctrl_mode(g, CGSTREAM_CTRL_IO), CGSTREAM_MODE_FALLBACK);
	cgstream_group_free(g);
	tc_root_removed();
	t_log("memio-fallback: all passed (%d cgroups)", n);
	return 0;
}
