// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A caller built against the 1.2 header (tests/abi-1.2/cgstream.h, the
 * header as 1.2 shipped it: this test is compiled against it, not against
 * include/): its structs have the 1.2 sizes.  The 1.3 library must give
 * it 1.2's behaviour: options of the 1.2 size (whose padding a 1.2 caller
 * zeroed, where 1.3 put .report) mean a SAMPLE of every cgroup each
 * cycle, not CHANGED events; events are strided by the 1.2 size and
 * nothing past it is written; a REMOVED carries no values, as in 1.2; and
 * format 1's decoder, which cannot read format 2, says so rather than
 * misread it.
 */
#include <assert.h>
#include <sys/stat.h>

#include "testutil.h"
#include "snapshot-writer.h"

#if CGSTREAM_VERSION_MAJOR != 1 || CGSTREAM_VERSION_MINOR != 2
#error "15-abi-1.2 must be compiled against the 1.2 header (tests/abi-1.2)"
#endif

static_assert(sizeof(struct cgstream_event) == 168, "1.2 event size");
static_assert(sizeof(struct cgstream_opts) == 32, "1.2 opts size");

#define CANARY 0xa5
#define N_EV 16

static void check_canary(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			T_FAIL("%s: byte %zu after the 1.2 events was written (0x%02x)", what, i,
			       p[i]);
}

/* three cycles of a tree of two cgroups: a SAMPLE each, every cycle, though
 * their values do not move; then one removed: a REMOVED without values */
static void test_tree(const char *root, const struct cgstream_opts *o)
{
	static struct cgstream_event ev[N_EV + 1];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int n, removed = 0;

	if (t_cg_make(root, t_name("abi12"), top, sizeof(top)) < 0)
		return;
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, o, &t), 0);
	for (int cycle = 0; cycle < 3; cycle++) {
		int samples = 0;

		memset(ev, CANARY, sizeof(ev));
		n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
		for (int i = 0; i < n; i++) {
			T_ASSERT(ev[i].type == CGSTREAM_EVENT_SAMPLE ||
				 (cycle == 0 && ev[i].type == CGSTREAM_EVENT_ADDED));
			samples += ev[i].type == CGSTREAM_EVENT_SAMPLE;
		}
		T_EQ(samples, 2);
		check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]),
			     "cgstream_tree_process");
	}
	T_EQ(t_cg_remove(kid), 0);
	for (int b = 0; b < 5 && !removed; b++) {
		memset(ev, CANARY, sizeof(ev));
		n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
		for (int i = 0; i < n; i++) {
			if (ev[i].type != CGSTREAM_EVENT_REMOVED)
				continue;
			T_ASSERT(!strcmp(ev[i].path, kid));
			T_EQ(ev[i].sample.present, CGSTREAM_F_CGROUP_ID);
			T_EQ(ev[i].controllers, 0);
			T_ASSERT(ev[i].memory == NULL && ev[i].io == NULL);
			removed++;
		}
		check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]),
			     "cgstream_tree_process");
	}
	T_EQ(removed, 1);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(top), 0);
}

/* cgstream_records_next() on format 2: -EPROTONOSUPPORT, nothing decoded */
static void test_records(void)
{
	const uint64_t v[4] = { 1, 2, 3, 4 };
	static const char *const names[] = { "usage_usec", "user_usec", "system_usec",
					      "nice_usec" };
	struct cgstream_record rec;
	struct sw w = { 0 };
	size_t off = 0;

	sw_snapshot(&w, CGROUP_STAT_CTRL_CPU, 0, 3, 1, 0, 0);
	sw_schema(&w, names, 4, NULL, 0);
	sw_cgroup(&w, CGROUP_STAT_REC_CGROUP, 0, 1, 0, v, 4, NULL, 0, 0, 0);
	T_EQ(cgstream_records_next(w.p, w.len, &off, &rec, sizeof(rec)), -EPROTONOSUPPORT);
	T_EQ(off, 0);
	off = 48 + 64;	/* a CGROUP record, mid-snapshot */
	T_EQ(cgstream_records_next(w.p, w.len, &off, &rec, sizeof(rec)), -EPROTONOSUPPORT);
	free(w.p);
}

int main(void)
{
	struct cgstream_opts o;
	const char *root;

	test_records();
	root = t_cgroup_root();
	if (!root)
		t_skip("no cgroup2 mount: only the records were checked");
	/* as a 1.2 caller set it up: zeroed, then its fields */
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.mode = CGSTREAM_MODE_FALLBACK;
	o.fallback_interval_ms = 20;
	o.controllers = CGSTREAM_CTRL_CPU;
	test_tree(root, &o);
	t_log("abi-1.2: all passed");
	return 0;
}
