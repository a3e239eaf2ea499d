// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A caller built against the 1.3 header (tests/abi-1.3/cgstream.h, the
 * header as 1.3 shipped it: this test is compiled against it, not against
 * include/): its struct cgstream_event ends before 1.4's .pressure, and
 * its CGSTREAM_CTRL_DEFAULT is 1.3's value.  The 1.4 library must give it
 * 1.3's behaviour: the default set of 1.3 (cpu, and memory and io where
 * enabled: no pressure, even where the cgroup has pressure files), events
 * strided by the 1.3 size with nothing past it written, and (should it
 * ask for every controller the library names, "all") no controller bit
 * in .controllers, .changed or .final for values its struct cannot hold.
 */
#include <assert.h>
#include <sys/stat.h>

#include "testutil.h"

#if CGSTREAM_VERSION_MAJOR != 1 || CGSTREAM_VERSION_MINOR != 3
#error "15-abi-1.3 must be compiled against the 1.3 header (tests/abi-1.3)"
#endif

static_assert(sizeof(struct cgstream_event) == 192, "1.3 event size");
static_assert(CGSTREAM_CTRL_DEFAULT == 1u << 31, "1.3's default set");

#define CANARY 0xa5
#define N_EV 16
#define CTRL_1_3 (CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_MEMORY | CGSTREAM_CTRL_IO)

static void check_canary(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			T_FAIL("byte %zu after the 1.3 events was written (0x%02x)", i, p[i]);
}

/* three cycles of a tree of two cgroups opened with @controllers: every
 * event's controllers within 1.3's, nothing written past the events */
static void test_tree(const char *root, uint32_t controllers, const char *what)
{
	static struct cgstream_event ev[N_EV + 1];
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = 20, .controllers = controllers };
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int n, samples = 0;

	T_EQ(t_cg_make(root, t_name(what), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	for (int cycle = 0; cycle < 3; cycle++) {
		memset(ev, CANARY, sizeof(ev));
		n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
		for (int i = 0; i < n; i++) {
			if (ev[i].type != CGSTREAM_EVENT_SAMPLE)
				continue;
			samples++;
			T_ASSERT(ev[i].controllers & CGSTREAM_CTRL_CPU);
			T_EQ(ev[i].controllers & ~CTRL_1_3, 0);
			T_EQ(ev[i].changed & ~CTRL_1_3, 0);
		}
		check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]));
	}
	T_ASSERT(samples >= 6);
	T_EQ(t_cg_remove(kid), 0);
	for (int b = 0, removed = 0; b < 5 && !removed; b++) {
		memset(ev, CANARY, sizeof(ev));
		n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
		for (int i = 0; i < n; i++) {
			if (ev[i].type != CGSTREAM_EVENT_REMOVED)
				continue;
			T_EQ(ev[i].controllers & ~CTRL_1_3, 0);
			T_EQ(ev[i].final & ~CTRL_1_3, 0);
			removed++;
		}
		check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]));
	}
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(top), 0);
}

int main(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .controllers = CGSTREAM_CTRL_DEFAULT };
	struct cgstream_probe p;
	const char *root = t_cgroup_root();
	char pressure[PATH_MAX];
	uint32_t all;

	if (!root)
		t_skip("no cgroup2 mount");
	if (geteuid() != 0)
		t_skip("needs root (makes cgroups)");
	snprintf(pressure, sizeof(pressure), "%s/cpu.pressure", root);
	/* 1.3's default: no pressure, wherever the cgroup has it */
	T_EQ(cgstream_probe("/", &o, CGSTREAM_PROBE_TREE, &p, sizeof(p)), 0);
	T_EQ(p.error, 0);
	T_EQ(p.controllers & ~CTRL_1_3, 0);
	T_ASSERT(p.controllers & CGSTREAM_CTRL_CPU);
	test_tree(root, CGSTREAM_CTRL_DEFAULT, "abi13d");
	/* every controller the library names (1.4's pressure too): its events
	 * say none this struct cannot hold */
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_CONTROLLERS, "all", &all), 0);
	if (access(pressure, F_OK) == 0 && (all & ~CTRL_1_3)) {
		o.controllers = CGSTREAM_CTRL_CPU | (all & ~CTRL_1_3);
		T_EQ(cgstream_probe("/", &o, CGSTREAM_PROBE_TREE, &p, sizeof(p)), 0);
		T_EQ(p.error, 0);
		test_tree(root, o.controllers, "abi13a");
	} else {
		t_log("no pressure files here: only 1.3's default set checked");
	}
	t_log("abi-1.3: all passed");
	return 0;
}
