// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pressure on the patched kernel (root, in the VM), where it has
 * pressure.stream (else a skip: the kernel series before its pressure
 * patches): a tree of cpu and pressure in each mode (SUBTREE where the
 * kernel has pressure.stream.subtree, KERNEL, FALLBACK), changes only,
 * over a cgroup whose tasks wait for the CPUs (more busy loops than CPUs),
 * an idle one and one whose cgroup.pressure is 0:
 *  - pressure's mode is the one asked for; every value named as SPEC.md's
 *    SCHEMA list says (irq's where the kernel has irq.pressure), in order;
 *  - the busy cgroup's cpu.some.total grows and is never above its file's
 *    read after the batch; the idle one changes once (its first values);
 *    the one whose pressure is off carries none (not zeros);
 *  - a cgroup removed: REMOVED once, with pressure's final values in
 *    SUBTREE mode (the kernel's REMOVED records);
 * and a tree of pressure alone, which leads: the cgroup whose pressure is
 * off is not listed.
 */
#include "testutil.h"

#define INTERVAL_MS	100

static char top[PATH_MAX], busy[PATH_MAX], idle[PATH_MAX], off[PATH_MAX];
static pid_t burners[16];
static int n_burners;

static void cleanup(void)
{
	for (int i = 0; i < n_burners; i++)
		t_kill(burners[i]);
	t_cg_remove(busy);
	t_cg_remove(idle);
	t_cg_remove(off);
	t_cg_remove(top);
}

static bool has_file(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* the busy cgroup's cpu.pressure "some" total, now */
static uint64_t file_total(void)
{
	uint64_t v;

	T_ASSERT(t_pressure_total(busy, "cpu", "some", &v));
	return v;
}

/* SPEC.md's SCHEMA names, in order */
static unsigned int schema(const char *names[28])
{
	static const char *const res[] = { "cpu", "memory", "io" };
	static const char *const kinds[] = { "some", "full" };
	static const char *const keys[] = { "avg10", "avg60", "avg300", "total" };
	static char buf[28][32];
	unsigned int n = 0;

	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 2; k++)
			for (int j = 0; j < 4; j++, n++) {
				snprintf(buf[n], sizeof(buf[n]), "%s.%s.%s", res[r], kinds[k], keys[j]);
				names[n] = buf[n];
			}
	for (int j = 0; access("/proc/pressure/irq", F_OK) == 0 && j < 4; j++, n++) {
		snprintf(buf[n], sizeof(buf[n]), "irq.full.%s", keys[j]);
		names[n] = buf[n];
	}
	return n;
}

static void check_names(const struct cgstream_values *v)
{
	const char *names[28];
	unsigned int n = schema(names);

	T_EQ(v->nr, n);
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(v->names[i], names[i]))
			T_FAIL("pressure value %u: %s, want %s", i, v->names[i], names[i]);
}

struct seen {
	unsigned int changed, removed;
	uint32_t final;
	uint64_t first, last;	/* busy: cpu.some.total */
};

static void take(const struct cgstream_event *e, struct seen s[3])
{
	int k = !strcmp(e->path, busy) ? 0 : !strcmp(e->path, idle) ? 1 :
		!strcmp(e->path, off) ? 2 : -1;
	uint64_t v;

	if (k < 0)
		return;
	if (e->type == CGSTREAM_EVENT_REMOVED) {
		s[k].removed++;
		s[k].final = e->final;
		return;
	}
	if (e->type != CGSTREAM_EVENT_CHANGED)
		return;
	s[k].changed++;
	T_EQ(!e->pressure, !(e->controllers & CGSTREAM_CTRL_PRESSURE));
	if (k == 2) {
		T_ASSERT(!e->pressure);
		return;
	}
	T_ASSERT(e->pressure);
	check_names(e->pressure);
	T_EQ(cgstream_values_get(e->pressure, "cpu.some.total", &v), 0);
	if (k == 0) {
		T_ASSERT(v >= s[0].last && v <= file_total());
		s[0].first = s[0].first ? s[0].first : v;
		s[0].last = v;
	}
}

static void batches(struct cgstream_tree *t, struct seen s[3], unsigned int ms)
{
	struct cgstream_event ev[64];

	for (uint64_t end = t_now_ms() + ms; t_now_ms() < end;) {
		int n;

		T_ASSERT(cgstream_tree_wait(t, 1000) >= 0);
		n = cgstream_tree_process(t, ev, 64, sizeof(ev[0]));
		T_ASSERT(n >= 0);
		for (int i = 0; i < n; i++)
			take(&ev[i], s);
	}
}

static void test_mode(int mode)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode,
				   .controllers = CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE,
				   .report = CGSTREAM_REPORT_CHANGES,
				   .fallback_interval_ms = INTERVAL_MS };
	struct seen s[3] = { { 0 } };
	struct cgstream_tree *t;

	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_ctrl_mode(t, CGSTREAM_CTRL_PRESSURE), mode);
	batches(t, s, 3000);
	T_ASSERT(s[0].changed >= 3 && s[0].last > s[0].first);
	T_EQ(s[1].changed, 1);
	T_EQ(s[2].changed, 1);
	/* idle removed: REMOVED once, final pressure values where the kernel keeps them */
	T_EQ(t_cg_remove(idle), 0);
	batches(t, s, 2000);
	T_EQ(s[1].removed, 1);
	if (mode == CGSTREAM_MODE_SUBTREE)
		T_ASSERT(s[1].final & CGSTREAM_CTRL_PRESSURE);
	cgstream_tree_close(t);
	T_EQ(t_cg_make(top, "idle", idle, sizeof(idle)), 0);
	t_log("%s: pressure by its names, busy waited %llu us for the CPUs in 3 s, none where it is "
	      "off, removed once", cgstream_mode_name(mode),
	      (unsigned long long)(s[0].last - s[0].first));
}

/* pressure alone: it leads; the cgroup whose pressure is off is not listed */
static void test_lead(int mode)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode,
				   .controllers = CGSTREAM_CTRL_PRESSURE };
	struct cgstream_event ev[64];
	struct cgstream_tree *t;
	int n, added = 0;

	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_mode(t), mode);
	n = t_tree_batch(t, ev, 64, sizeof(ev[0]));
	for (int i = 0; i < n; i++) {
		T_ASSERT(strcmp(ev[i].path, off) != 0);
		added += ev[i].type == CGSTREAM_EVENT_ADDED;
		if (ev[i].type == CGSTREAM_EVENT_SAMPLE)
			T_EQ(ev[i].controllers, CGSTREAM_CTRL_PRESSURE);
	}
	T_EQ(added, 3);	/* top, busy, idle */
	cgstream_tree_close(t);
	t_log("%s: pressure alone lists the cgroups that have it", cgstream_mode_name(mode));
}

int main(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *root;
	char file[PATH_MAX + 32];

	t_require_kernel_stream();
	root = t_cgroup_root();
	if (!has_file(root, "pressure.stream"))
		t_skip("this kernel has no pressure.stream");
	atexit(cleanup);
	t_use_ctrl_interval(CGSTREAM_CTRL_CPU, INTERVAL_MS);
	t_use_ctrl_interval(CGSTREAM_CTRL_PRESSURE, INTERVAL_MS);
	T_EQ(t_cg_make(root, t_name("psi"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "busy", busy, sizeof(busy)), 0);
	T_EQ(t_cg_make(top, "idle", idle, sizeof(idle)), 0);
	T_EQ(t_cg_make(top, "off", off, sizeof(off)), 0);
	snprintf(file, sizeof(file), "%s/cgroup.pressure", off);
	T_EQ(t_write_file(file, "0"), 0);
	n_burners = cpus > 0 && cpus < 15 ? (int)cpus + 1 : 16;
	for (int i = 0; i < n_burners; i++)
		T_ASSERT((burners[i] = t_burner(busy)) > 0);
	t_sleep_ms(2 * INTERVAL_MS);	/* published after the cgroups were made */
	if (has_file(root, "pressure.stream.subtree")) {
		test_mode(CGSTREAM_MODE_SUBTREE);
		test_lead(CGSTREAM_MODE_SUBTREE);
	} else {
		t_log("no pressure.stream.subtree: SUBTREE mode not checked");
	}
	test_mode(CGSTREAM_MODE_KERNEL);
	test_lead(CGSTREAM_MODE_KERNEL);
	test_mode(CGSTREAM_MODE_FALLBACK);
	t_log("tree-pressure: all passed");
	return 0;
}
