// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pressure stall information in fallback mode on the host's cgroup2 (a
 * timer and reads of each cgroup's cpu.pressure, memory.pressure,
 * io.pressure and irq.pressure), where the kernel has PSI; elsewhere the
 * objects say so (-ENOMEDIUM) and the test skips.
 *
 *  - a stream of a cgroup whose tasks wait for the CPUs (more burners than
 *    CPUs): its values by the kernel's SCHEMA names, in its order, irq's
 *    where the kernel has irq.pressure; each cpu.some.total between the
 *    file's before and after the read, and growing;
 *  - a tree with the default set, changes only, with io_uring and with
 *    plain reads: the busy cgroup's pressure changes (CHANGED with
 *    pressure), an idle one's never after its first values, one whose
 *    cgroup.pressure is 0 carries no pressure values (not zeros); then the
 *    busy one's cgroup.pressure set to 0 while it is read: it stays (no
 *    REMOVED), its pressure goes (a CHANGED saying so);
 *  - a group: the same for named cgroups.
 */
#include "testutil.h"

#define INTERVAL_MS	50

/* the values' names SPEC.md gives, in order: those of this kernel */
static unsigned int schema_names(const char *dir, const char *names[28])
{
	static const char *const res[] = { "cpu", "memory", "io", "irq" };
	static const char *const kinds[] = { "some", "full" };
	static const char *const keys[] = { "avg10", "avg60", "avg300", "total" };
	static char buf[28][32];
	unsigned int n = 0;
	uint64_t v;

	for (int r = 0; r < 4; r++)
		for (int k = 0; k < 2; k++) {
			if (!t_pressure_total(dir, res[r], kinds[k], &v))
				continue;	/* irq: full only, where it exists */
			for (int j = 0; j < 4; j++) {
				snprintf(buf[n], sizeof(buf[n]), "%s.%s.%s", res[r], kinds[k], keys[j]);
				names[n] = buf[n];
				n++;
			}
		}
	return n;
}

static uint64_t value_of(const struct cgstream_values *v, const char *name)
{
	uint64_t x;

	if (cgstream_values_get(v, name, &x) < 0)
		T_FAIL("no %s among the pressure values", name);
	return x;
}

/* @v has the names of @dir's kernel, in its order, and sane averages */
static void check_names(const struct cgstream_values *v, const char *dir)
{
	const char *names[28];
	unsigned int n = schema_names(dir, names);

	T_EQ(v->nr, n);
	for (unsigned int i = 0; i < n; i++) {
		if (strcmp(v->names[i], names[i]))
			T_FAIL("pressure value %u: %s, want %s", i, v->names[i], names[i]);
		if (!strstr(names[i], ".total"))
			T_ASSERT(v->values[i] <= 10000);	/* hundredths of a percent */
	}
}

/* as many burners as CPUs and one more in @cg: its tasks wait for a CPU */
static int burn(const char *cg, pid_t *pids, int max)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus > 0 && cpus < max ? (int)cpus + 1 : max;

	for (int i = 0; i < n; i++) {
		pids[i] = t_burner(cg);
		T_ASSERT(pids[i] > 0);
	}
	return n;
}

static void unburn(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		t_kill(pids[i]);
}

static void test_stream(const char *busy)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = INTERVAL_MS,
				   .controllers = CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE };
	uint64_t before, after, got, first = 0;
	struct cgstream_event e;
	struct cgstream *st;

	T_EQ(cgstream_open(busy, &o, &st), 0);
	T_EQ(cgstream_ctrl_mode(st, CGSTREAM_CTRL_PRESSURE), CGSTREAM_MODE_FALLBACK);
	T_EQ(cgstream_ctrl_mode(st, CGSTREAM_CTRL_MEMORY), -ENOENT);
	for (int i = 0; i < 10; i++) {
		T_ASSERT(t_pressure_total(busy, "cpu", "some", &before));
		T_EQ(cgstream_wait(st, 5000), 1);
		T_EQ(cgstream_read_event(st, &e, sizeof(e)), 0);
		T_ASSERT(t_pressure_total(busy, "cpu", "some", &after));
		T_EQ(e.type, CGSTREAM_EVENT_SAMPLE);
		T_EQ(e.controllers, CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE);
		T_ASSERT(e.pressure && e.cpu);
		check_names(e.pressure, busy);
		T_EQ(e.pressure->seq, e.sample.seq);	/* the emulation's one cycle */
		got = value_of(e.pressure, "cpu.some.total");
		if (got < before || got > after)
			T_FAIL("cpu.some.total %llu not within the file's %llu..%llu",
			       (unsigned long long)got, (unsigned long long)before,
			       (unsigned long long)after);
		first = i ? first : got;
		t_sleep_ms(INTERVAL_MS);
	}
	T_ASSERT(got > first);
	cgstream_close(st);
	t_log("ok: a stream's pressure values: %llu us of cpu.some in 10 samples",
	      (unsigned long long)(got - first));
}

/* what a tree's batches said of one cgroup */
struct seen {
	const char *path;
	unsigned int changed, with_pressure, pressure_changed, removed;
	uint32_t last_controllers;
};

static void tally(struct seen *s, size_t n, const struct cgstream_event *e)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(e->path, s[i].path))
			continue;
		if (e->type == CGSTREAM_EVENT_REMOVED) {
			s[i].removed++;
		} else if (e->type == CGSTREAM_EVENT_CHANGED) {
			s[i].changed++;
			s[i].last_controllers = e->controllers;
			T_EQ(!e->pressure, !(e->controllers & CGSTREAM_CTRL_PRESSURE));
			s[i].with_pressure += e->pressure != NULL;
			s[i].pressure_changed += !!(e->changed & CGSTREAM_CTRL_PRESSURE);
		}
	}
}

static void tree_batches(struct cgstream_tree *t, struct seen *s, size_t n, unsigned int ms)
{
	struct cgstream_event ev[64];

	for (uint64_t end = t_now_ms() + ms; t_now_ms() < end;) {
		int k;

		T_ASSERT(cgstream_tree_wait(t, 1000) >= 0);
		k = cgstream_tree_process(t, ev, 64, sizeof(ev[0]));
		T_ASSERT(k >= 0);
		for (int i = 0; i < k; i++)
			tally(s, n, &ev[i]);
	}
}

static void test_tree(const char *top, const char *busy, const char *idle, const char *off)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = INTERVAL_MS,
				   .controllers = CGSTREAM_CTRL_DEFAULT,
				   .report = CGSTREAM_REPORT_CHANGES };
	struct seen s[3] = { { .path = busy }, { .path = idle }, { .path = off } };
	char file[PATH_MAX + 32];
	struct cgstream_tree *t;

	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_ctrl_mode(t, CGSTREAM_CTRL_PRESSURE), CGSTREAM_MODE_FALLBACK);
	tree_batches(t, s, 3, 1500);
	/* busy: its pressure moves; idle: its first values, then no change */
	T_ASSERT(s[0].pressure_changed >= 3);
	T_EQ(s[0].with_pressure, s[0].changed);
	T_EQ(s[1].changed, 1);
	T_EQ(s[1].pressure_changed, 1);
	/* off: values of cpu, none of pressure */
	T_EQ(s[2].changed, 1);
	T_EQ(s[2].with_pressure, 0);
	T_EQ(s[2].last_controllers & CGSTREAM_CTRL_PRESSURE, 0);
	T_ASSERT(s[2].last_controllers & CGSTREAM_CTRL_CPU);

	/* busy's pressure turned off while read: it stays, its pressure goes */
	snprintf(file, sizeof(file), "%s/cgroup.pressure", busy);
	memset(s, 0, sizeof(s));
	s[0].path = busy;
	T_EQ(t_write_file(file, "0"), 0);
	tree_batches(t, s, 1, 1000);
	T_EQ(s[0].removed, 0);
	T_ASSERT(s[0].changed > 0);
	T_EQ(s[0].last_controllers & CGSTREAM_CTRL_PRESSURE, 0);
	T_ASSERT(s[0].pressure_changed >= 1);	/* its values went: a change */
	T_EQ(cgstream_tree_size(t), 4);
	T_EQ(t_write_file(file, "1"), 0);
	cgstream_tree_close(t);
	t_log("ok: a tree%s: pressure where the cgroups have it, kept when it goes",
	      getenv("CGSTREAM_NO_IO_URING") ? " (plain reads)" : "");
}

static void test_group(const char *busy, const char *off)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = INTERVAL_MS,
				   .controllers = CGSTREAM_CTRL_DEFAULT };
	struct cgstream_event ev[8];
	struct cgstream_group *g;
	int n, both = 0;

	T_EQ(cgstream_group_new(&o, &g), 0);
	T_EQ(cgstream_group_ctrl_mode(g, CGSTREAM_CTRL_PRESSURE), CGSTREAM_MODE_FALLBACK);
	T_EQ(cgstream_group_add(g, busy, (void *)1), 0);
	T_EQ(cgstream_group_add(g, off, (void *)2), 0);
	while (both < 3) {
		n = t_group_batch(g, ev, 8, sizeof(ev[0]));
		T_EQ(n, 2);
		for (int i = 0; i < n; i++) {
			bool on = ev[i].userdata == (void *)1;

			T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
			T_EQ(!!(ev[i].controllers & CGSTREAM_CTRL_PRESSURE), on);
			T_EQ(ev[i].pressure != NULL, on);
			if (on)
				check_names(ev[i].pressure, busy);
		}
		both++;
	}
	cgstream_group_free(g);
	t_log("ok: a group: pressure of the cgroup that has it only");
}

int main(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .controllers = CGSTREAM_CTRL_PRESSURE };
	char top[PATH_MAX], busy[PATH_MAX], idle[PATH_MAX], off[PATH_MAX], file[PATH_MAX + 32];
	const char *root = t_cgroup_root();
	struct cgstream *st = NULL;
	pid_t pids[16];
	int n;

	if (!root)
		t_skip("no cgroup2 mount");
	if (!t_has_pressure(root)) {
		/* the objects say so, clearly */
		T_EQ(cgstream_open("/", &o, &st), -ENOMEDIUM);
		T_ASSERT(!st);
		t_skip("the host's kernel has no PSI (or runs with psi=0): -ENOMEDIUM checked");
	}
	if (geteuid() != 0)
		t_skip("needs root to make cgroups");
	T_EQ(t_cg_make(root, t_name("psi"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "busy", busy, sizeof(busy)), 0);
	T_EQ(t_cg_make(top, "idle", idle, sizeof(idle)), 0);
	T_EQ(t_cg_make(top, "off", off, sizeof(off)), 0);
	snprintf(file, sizeof(file), "%s/cgroup.pressure", off);
	if (t_write_file(file, "0") < 0)
		t_skip("cgroup.pressure cannot be written (a kernel before 6.5)");
	n = burn(busy, pids, 16);
	test_stream(busy);
	test_tree(top, busy, idle, off);
	T_EQ(setenv("CGSTREAM_NO_IO_URING", "1", 1), 0);
	test_tree(top, busy, idle, off);
	T_EQ(unsetenv("CGSTREAM_NO_IO_URING"), 0);
	test_group(busy, off);
	unburn(pids, n);
	T_EQ(t_cg_remove(busy), 0);
	T_EQ(t_cg_remove(idle), 0);
	T_EQ(t_cg_remove(off), 0);
	T_EQ(t_cg_remove(top), 0);
	t_log("pressure-fallback: all passed");
	return 0;
}
