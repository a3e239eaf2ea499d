// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the front ends share, owned by the library (cgstream.h "what front
 * ends share"): the shared options' values and their messages, the exit
 * statuses, the probe of a cgroup (the default set of controllers, 1.3's
 * default set without pressure, a controller the hierarchy lacks, a
 * cgroup whose pressure is off, a mode the kernel lacks, a missing
 * cgroup), the messages of opening and of the interval, the notice of the
 * emulation, distinct subtrees, the limit of open files and sd_notify.
 * On the host's cgroup2 (no stream files; memory, io and pressure there
 * or not).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "testutil.h"

static char msg[1024];

static int explain(int err, int what, const char *arg, const struct cgstream_opts *o)
{
	return cgstream_explain(err, what, arg, o, msg, sizeof(msg));
}

#define T_MSG(want) do {							\
	if (strcmp(msg, (want)))						\
		T_FAIL("message \"%s\", want \"%s\"", msg, (want));		\
} while (0)

static void test_options(void)
{
	uint32_t v;

	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_MODE, "subtree", &v), 0);
	T_EQ(v, CGSTREAM_MODE_SUBTREE);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_MODE, "fallback", &v), 0);
	T_EQ(v, CGSTREAM_MODE_FALLBACK);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_MODE, "Auto", &v), -EINVAL);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_CONTROLLERS, "io,cpu,io", &v), 0);
	T_EQ(v, CGSTREAM_CTRL_IO | CGSTREAM_CTRL_CPU);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_CONTROLLERS, "all", &v), 0);
	T_EQ(v, CGSTREAM_CTRL_ALL);
	T_ASSERT(v & CGSTREAM_CTRL_PRESSURE);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_CONTROLLERS, "pressure,cpu", &v), 0);
	T_EQ(v, CGSTREAM_CTRL_PRESSURE | CGSTREAM_CTRL_CPU);
	T_ASSERT(!strcmp(cgstream_controller_name(CGSTREAM_CTRL_PRESSURE), "pressure"));
	T_ASSERT(cgstream_controller_name(CGSTREAM_CTRL_PRESSURE << 1) == NULL);
	T_ASSERT(!strcmp(cgstream_controller_file(CGSTREAM_CTRL_PRESSURE, CGSTREAM_FILE_SUBTREE),
			 "pressure.stream.subtree"));
	T_ASSERT(!strcmp(cgstream_controller_file(CGSTREAM_CTRL_PRESSURE, CGSTREAM_FILE_STREAM),
			 "pressure.stream"));
	T_ASSERT(!strcmp(cgstream_controller_file(CGSTREAM_CTRL_PRESSURE, CGSTREAM_FILE_INTERVAL),
			 "pressure.stream_interval"));
	T_ASSERT(!strcmp(cgstream_controller_file(CGSTREAM_CTRL_PRESSURE, CGSTREAM_FILE_STAT),
			 "*.pressure"));
	T_ASSERT(!strcmp(cgstream_controller_file(CGSTREAM_CTRL_IO, CGSTREAM_FILE_STAT),
			 "io.stat"));
	T_ASSERT(cgstream_controller_file(CGSTREAM_CTRL_CPU, 4) == NULL);
	T_ASSERT(cgstream_controller_file(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_IO, 0) == NULL);
	const char *bad_ctrls[] = { "", "cpu,", ",cpu", "cpu,,io", "mem", "cpu io", "CPU" };
	for (size_t i = 0; i < sizeof(bad_ctrls) / sizeof(bad_ctrls[0]); i++)
		T_EQ(cgstream_parse_option(CGSTREAM_WHAT_CONTROLLERS, bad_ctrls[i], &v), -EINVAL);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_FALLBACK_INTERVAL, "10", &v), 0);
	T_EQ(v, 10);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_FALLBACK_INTERVAL, "3600000", &v), 0);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_INTERVAL, "0", &v), 0);
	const char *bad_fallback[] = { "0", "9", "3600001", "+10", "-10", " 10", "10ms", "",
				       "4294967296", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad_fallback) / sizeof(bad_fallback[0]); i++)
		T_EQ(cgstream_parse_option(CGSTREAM_WHAT_FALLBACK_INTERVAL, bad_fallback[i], &v),
		     -EINVAL);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_INTERVAL, "5", &v), -EINVAL);
	T_EQ(cgstream_parse_option(CGSTREAM_WHAT_OPEN, "5", &v), -EINVAL);

	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_FALLBACK_INTERVAL, "5", NULL), CGSTREAM_EXIT_USAGE);
	T_MSG("--fallback-interval wants 10..3600000 ms, not '5'");
	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_CONTROLLERS, "disk", NULL), CGSTREAM_EXIT_USAGE);
	T_MSG("--controllers is a comma-separated list of cpu, memory, io and pressure (or all), "
	      "not 'disk'");
	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_MODE, "bogus\x1b[2J", NULL), CGSTREAM_EXIT_USAGE);
	T_MSG("--mode is auto, subtree, kernel or fallback, not 'bogus\\x1b[2J'");
	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_INTERVAL, "5", NULL), CGSTREAM_EXIT_USAGE);
	T_MSG("5 is not a valid interval: use 0 (off) or 10..3600000 ms");
	T_EQ(explain(0, CGSTREAM_WHAT_OPEN, "x", NULL), 0);
	T_MSG("");
	T_EQ(explain(-EINVAL, 99, "x", NULL), -EINVAL);
	T_EQ(cgstream_explain(-ENOENT, CGSTREAM_WHAT_OPEN, "x", NULL, NULL, 0),
	     CGSTREAM_EXIT_NO_CGROUP);
	t_log("ok: the shared options and their messages");
}

static void test_exit_statuses(void)
{
	static const char *const names[] = { "ok", "failure", "usage", "no-cgroup", "permission",
					     "no-kernel" };
	struct cgstream_exit_info e;
	unsigned int i;

	for (i = 0; cgstream_exit_status(i, &e, sizeof(e)) == 0; i++) {
		T_EQ(e.status, i);
		T_ASSERT(i < 6 && !strcmp(e.name, names[i]) && e.text && *e.text);
	}
	T_EQ(i, 6);
	T_EQ(cgstream_exit_status(0, &e, sizeof(e) - 1), -EINVAL);
	t_log("ok: the exit statuses");
}

static bool has_ctrl(const char *root, const char *c)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s.stat", root, c);
	return access(p, F_OK) == 0;
}

/*
 * A cgroup whose pressure is off (cgroup.pressure 0: its *.pressure files
 * go): the default set leaves pressure out; asked for, -ENOMEDIUM, and
 * the message says why.  With --mode kernel on a kernel without
 * pressure.stream, the default set leaves pressure out too (cpu's
 * missing stream is the error).
 */
static void test_probe_pressure_off(const char *root)
{
	struct cgstream_opts o = { .sz = sizeof(o), .controllers = CGSTREAM_CTRL_DEFAULT };
	struct cgstream_probe p;
	char dir[PATH_MAX], file[PATH_MAX + 32], want[PATH_MAX + 128];

	T_EQ(t_cg_make(root, t_name("psi-off"), dir, sizeof(dir)), 0);
	snprintf(file, sizeof(file), "%s/cgroup.pressure", dir);
	if (t_write_file(file, "0") < 0) {
		T_EQ(t_cg_remove(dir), 0);
		t_log("skip: %s cannot be written (a kernel before 6.5, or no permission)", file);
		return;
	}
	T_ASSERT(!t_has_pressure(dir));
	T_EQ(cgstream_probe(dir, &o, CGSTREAM_PROBE_TREE, &p, sizeof(p)), 0);
	T_EQ(p.error, 0);
	T_EQ(p.controllers & CGSTREAM_CTRL_PRESSURE, 0);
	T_EQ(p.modes[3], -ENOMEDIUM);
	o.controllers = CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE;
	T_EQ(cgstream_probe(dir, &o, 0, &p, sizeof(p)), 0);
	T_EQ(p.error, -ENOMEDIUM);
	T_EQ(explain(p.error, CGSTREAM_WHAT_OPEN, dir, &o), CGSTREAM_EXIT_NO_KERNEL);
	snprintf(want, sizeof(want), "/%s: pressure is off for this cgroup (no cpu.pressure: its "
		 "cgroup.pressure is 0)", t_name("psi-off"));
	T_MSG(want);
	if (!t_kernel_has_stream()) {
		o = (struct cgstream_opts){ .sz = sizeof(o), .mode = CGSTREAM_MODE_KERNEL,
					    .controllers = CGSTREAM_CTRL_DEFAULT };
		T_EQ(cgstream_probe(root, &o, 0, &p, sizeof(p)), 0);
		T_EQ(p.error, -EOPNOTSUPP);
		T_EQ(p.modes[3], -EOPNOTSUPP);
		T_EQ(p.controllers, CGSTREAM_CTRL_CPU);
		o.controllers = CGSTREAM_CTRL_PRESSURE;
		T_EQ(explain(-EOPNOTSUPP, CGSTREAM_WHAT_OPEN, "/", &o), CGSTREAM_EXIT_NO_KERNEL);
		T_MSG("this kernel has no pressure.stream (cgroup stat streaming); use --mode "
		      "fallback or a kernel with the cgstream patches");
	}
	T_EQ(t_cg_remove(dir), 0);
	t_log("ok: a cgroup whose pressure is off");
}

static void test_probe(const char *root)
{
	struct cgstream_opts o = { .sz = sizeof(o), .controllers = CGSTREAM_CTRL_DEFAULT };
	struct cgstream_probe p;
	uint32_t want = CGSTREAM_CTRL_CPU;
	char buf[PATH_MAX + 64];
	struct cgstream *st;

	want |= has_ctrl(root, "memory") ? CGSTREAM_CTRL_MEMORY : 0;
	want |= has_ctrl(root, "io") ? CGSTREAM_CTRL_IO : 0;
	want |= t_has_pressure(root) ? CGSTREAM_CTRL_PRESSURE : 0;
	T_EQ(cgstream_probe("/", &o, 0, &p, sizeof(p)), 0);
	T_EQ(p.error, 0);
	T_EQ(p.controllers, want);
	T_EQ(p.modes[0], t_kernel_has_stream() ? CGSTREAM_MODE_KERNEL : CGSTREAM_MODE_FALLBACK);
	T_EQ(p.modes[3] > 0, t_has_pressure(root));
	T_EQ(cgstream_probe("/", &o, CGSTREAM_PROBE_TREE, &p, sizeof(p)), 0);
	T_ASSERT(p.modes[0] > 0 && p.modes[4] == 0);
	/* 1.3's default, a 1.3 binary's: no pressure */
	o.controllers = CGSTREAM_CTRL_DEFAULT_1_3;
	T_EQ(cgstream_probe("/", &o, 0, &p, sizeof(p)), 0);
	T_EQ(p.controllers, want & ~(uint32_t)CGSTREAM_CTRL_PRESSURE);
	T_EQ(cgstream_probe("/", &(struct cgstream_opts){ .sz = sizeof(o),
			    .controllers = CGSTREAM_CTRL_DEFAULT | CGSTREAM_CTRL_CPU }, 0, &p,
			    sizeof(p)), 0);
	T_EQ(p.error, -EINVAL);	/* DEFAULT is a value alone, not a bit */
	o.controllers = CGSTREAM_CTRL_DEFAULT;
	/* the same default in an object */
	T_EQ(cgstream_open("/", &o, &st), 0);
	for (unsigned int b = 1; b & CGSTREAM_CTRL_ALL; b <<= 1)
		T_EQ(cgstream_ctrl_mode(st, b) > 0, (want & b) != 0);
	cgstream_close(st);

	T_EQ(cgstream_probe("cgstest-none", &o, 0, &p, sizeof(p)), 0);
	T_EQ(p.error, -ENOENT);
	T_EQ(explain(p.error, CGSTREAM_WHAT_OPEN, "cgstest-none", &o), CGSTREAM_EXIT_NO_CGROUP);
	T_MSG("/cgstest-none: no such cgroup");
	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_OPEN, "../etc", &o), CGSTREAM_EXIT_USAGE);
	T_MSG("../etc: not a cgroup path (\"..\" is not allowed)");
	o.mode = CGSTREAM_MODE_SUBTREE;
	T_EQ(cgstream_probe("/", &o, 0, &p, sizeof(p)), 0);
	T_EQ(p.error, -EINVAL);
	T_EQ(cgstream_probe("/", &o, 0, &p, sizeof(p) - 1), -EINVAL);
	o.mode = CGSTREAM_MODE_AUTO;
	o.fallback_interval_ms = 5;
	T_EQ(cgstream_open("/", &o, &st), -EINVAL);
	T_EQ(explain(-EINVAL, CGSTREAM_WHAT_OPEN, "/", &o), CGSTREAM_EXIT_USAGE);
	T_MSG("--fallback-interval wants 10..3600000 ms, not 5");
	o.fallback_interval_ms = 0;
	if (!t_kernel_has_stream()) {
		o.mode = CGSTREAM_MODE_KERNEL;
		o.controllers = CGSTREAM_CTRL_CPU;
		T_EQ(cgstream_probe("/", &o, 0, &p, sizeof(p)), 0);
		T_EQ(p.error, -EOPNOTSUPP);
		T_EQ(explain(p.error, CGSTREAM_WHAT_OPEN, "/", &o), CGSTREAM_EXIT_NO_KERNEL);
		T_MSG("this kernel has no cpu.stat.stream (cgroup stat streaming); use --mode "
		      "fallback or a kernel with the cgstream patches");
		T_EQ(explain(-EOPNOTSUPP, CGSTREAM_WHAT_GET_INTERVAL, NULL, &o),
		     CGSTREAM_EXIT_NO_KERNEL);
		T_MSG("this kernel has no cpu.stat.stream_interval (cgroup stat streaming needs a "
		      "kernel with the cgstream patches)");
		o.mode = CGSTREAM_MODE_AUTO;
	}
	if (!(want & CGSTREAM_CTRL_MEMORY)) {
		/* a hybrid host: memory is not on the cgroup2 hierarchy */
		o.controllers = CGSTREAM_CTRL_MEMORY;
		T_EQ(cgstream_probe("/", &o, CGSTREAM_PROBE_TREE, &p, sizeof(p)), 0);
		T_EQ(p.error, -ENOMEDIUM);
		T_EQ(p.modes[1], -ENOMEDIUM);
		T_EQ(explain(p.error, CGSTREAM_WHAT_OPEN, "/", &o), CGSTREAM_EXIT_NO_KERNEL);
		snprintf(buf, sizeof(buf), "the memory controller is not available "
			 "(%s/cgroup.controllers lacks it)", root);
		T_MSG(buf);
	}
	if (want & CGSTREAM_CTRL_PRESSURE)
		test_probe_pressure_off(root);
	t_log("ok: the probe (default controllers %#x) and the messages of opening", want);
}

static void test_notices(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .fallback_interval_ms = 250 };
	int modes[CGSTREAM_CTRL_SLOTS] = { CGSTREAM_MODE_FALLBACK, 0, CGSTREAM_MODE_FALLBACK };
	char buf[1024];

	T_EQ(cgstream_notices(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_IO, modes, &o,
			      CGSTREAM_NOTICE_EMULATION, buf, sizeof(buf)), (int)strlen(buf));
	if (strcmp(buf, "this kernel has no cpu.stat.stream and io.stat.stream: fallback mode (the "
		   "stream emulated: cpu.stat and io.stat read every 250 ms)\n"))
		T_FAIL("notice: %s", buf);
	o.mode = CGSTREAM_MODE_FALLBACK;
	T_ASSERT(cgstream_notices(CGSTREAM_CTRL_CPU, modes, &o, CGSTREAM_NOTICE_EMULATION, buf,
				  sizeof(buf)) > 0);
	T_ASSERT(!strcmp(buf, "fallback mode, as asked: cpu.stat read every 250 ms\n"));
	modes[3] = CGSTREAM_MODE_FALLBACK;
	T_ASSERT(cgstream_notices(CGSTREAM_CTRL_CPU | CGSTREAM_CTRL_PRESSURE, modes, &o,
				  CGSTREAM_NOTICE_EMULATION, buf, sizeof(buf)) > 0);
	if (strcmp(buf, "fallback mode, as asked: cpu.stat and *.pressure read every 250 ms\n"))
		T_FAIL("notice: %s", buf);
	o.mode = CGSTREAM_MODE_AUTO;
	T_ASSERT(cgstream_notices(CGSTREAM_CTRL_PRESSURE, modes, &o, CGSTREAM_NOTICE_EMULATION, buf,
				  sizeof(buf)) > 0);
	if (strcmp(buf, "this kernel has no pressure.stream: fallback mode (the stream emulated: "
		   "*.pressure read every 250 ms)\n"))
		T_FAIL("notice: %s", buf);
	o.mode = CGSTREAM_MODE_FALLBACK;
	T_EQ(cgstream_notices(CGSTREAM_CTRL_CPU, modes, &o, CGSTREAM_NOTICE_STREAMING_OFF, buf,
			      sizeof(buf)), 0);
	T_EQ(cgstream_notices(CGSTREAM_CTRL_CPU, modes, &o, CGSTREAM_NOTICE_EMULATION, buf, 8),
	     -ERANGE);
	t_log("ok: the notice of the emulation");
}

/* the io table: struct cgstream_io_device's counters, in its order */
static void test_io_fields(void)
{
	static const struct { const char *name; size_t off; } want[] = {
		{ "rbytes", offsetof(struct cgstream_io_device, rbytes) },
		{ "wbytes", offsetof(struct cgstream_io_device, wbytes) },
		{ "rios", offsetof(struct cgstream_io_device, rios) },
		{ "wios", offsetof(struct cgstream_io_device, wios) },
		{ "dbytes", offsetof(struct cgstream_io_device, dbytes) },
		{ "dios", offsetof(struct cgstream_io_device, dios) },
	};
	struct cgstream_io_field_info fi;
	unsigned int i;

	for (i = 0; cgstream_io_field(i, &fi, sizeof(fi)) == 0; i++) {
		T_ASSERT(i < 6 && !strcmp(fi.name, want[i].name) && fi.offset == want[i].off);
		T_ASSERT(!strcmp(fi.unit, fi.name[1] == 'b' ? "bytes" : "count"));
	}
	T_EQ(i, 6);
	T_EQ(cgstream_io_field(0, &fi, sizeof(fi) - 1), -EINVAL);
	t_log("ok: the io table");
}

static void test_subtrees(void)
{
	const char *p[] = { "/r/a", "/r/a/b", "/r/ab", "/r/a", "/q", "/r" };
	uint8_t keep[6];

	T_EQ(cgstream_distinct_subtrees(p, 6, keep), 2);
	T_ASSERT(!keep[0] && !keep[1] && !keep[2] && !keep[3] && keep[4] && keep[5]);
	T_EQ(cgstream_distinct_subtrees(p, 4, keep), 2);
	T_ASSERT(keep[0] && !keep[1] && keep[2] && !keep[3]);
	T_EQ(cgstream_distinct_subtrees((const char *[]){ "/", "/x" }, 2, keep), 1);
	T_ASSERT(keep[0] && !keep[1]);
	t_log("ok: distinct subtrees");
}

static void test_process_helpers(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char name[64], got[64] = "";
	struct rlimit rl;
	uint64_t limit;
	int s;

	T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max > 64) {
		rl.rlim_cur = 64;
		T_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	T_EQ(cgstream_raise_fd_limit(&limit), 0);
	T_EQ(limit, rl.rlim_max);

	unsetenv("NOTIFY_SOCKET");
	T_EQ(cgstream_sd_notify("READY=1"), 0);
	snprintf(name, sizeof(name), "cgstream-test-%d", (int)getpid());
	memcpy(sa.sun_path + 1, name, strlen(name));
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T_ASSERT(s >= 0);
	T_EQ(bind(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
							  1 + strlen(name))), 0);
	snprintf(got, sizeof(got), "@%s", name);
	setenv("NOTIFY_SOCKET", got, 1);
	T_EQ(cgstream_sd_notify("READY=1"), 1);
	memset(got, 0, sizeof(got));
	T_EQ(recv(s, got, sizeof(got) - 1, 0), 7);
	T_ASSERT(!strcmp(got, "READY=1"));
	setenv("NOTIFY_SOCKET", "vsock:2:1", 1);
	T_EQ(cgstream_sd_notify("READY=1"), -EAFNOSUPPORT);
	unsetenv("NOTIFY_SOCKET");
	close(s);
	t_log("ok: the limit of open files, sd_notify");
}

int main(void)
{
	const char *root;

	test_options();
	test_exit_statuses();
	test_notices();
	test_subtrees();
	test_io_fields();
	test_process_helpers();
	root = t_cgroup_root();
	if (!root)
		t_skip("no cgroup2 mount: the probe's checks need one");
	test_probe(root);
	t_log("front: all passed");
	return 0;
}
