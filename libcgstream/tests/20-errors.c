// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Error paths: bad options, missing cgroups, "..", a cgroup root that is
 * not cgroup2, kernel mode on a kernel without cpu.stat.stream, the
 * interval file missing, and that failures never write *ret.
 */
#include "testutil.h"

#define SENTINEL ((void *)0x5a5a)

static void test_not_cgroup2_root(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .cgroup_root = "/tmp" };
	struct cgstream *st = SENTINEL;
	struct cgstream_group *g = SENTINEL;
	char buf[PATH_MAX];
	uint32_t ms = 77;

	T_EQ(cgstream_open("/", &o, &st), -ENODEV);
	T_ASSERT(st == SENTINEL);
	T_EQ(cgstream_group_new(&o, &g), -ENODEV);
	T_ASSERT(g == SENTINEL);
	T_EQ(cgstream_get_interval(&o, &ms), -ENODEV);
	T_EQ(ms, 77);
	T_EQ(cgstream_set_interval(&o, 100), -ENODEV);
	T_EQ(cgstream_resolve_path("a", &o, buf, sizeof(buf)), -ENODEV);

	o.cgroup_root = "/nonexistent/dir";
	T_EQ(cgstream_open("/", &o, &st), -ENODEV);
	o.cgroup_root = "relative/dir";
	T_EQ(cgstream_open("/", &o, &st), -EINVAL);
	T_ASSERT(st == SENTINEL);
}

static void test_opts(void)
{
	struct {
		struct cgstream_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big) } };
	struct cgstream_opts o = { .sz = sizeof(o) };
	struct cgstream *st = SENTINEL;

	o.sz = 0;
	T_EQ(cgstream_open("/", &o, &st), -EINVAL);
	o.sz = sizeof(o);
	o.mode = 7;
	T_EQ(cgstream_open("/", &o, &st), -EINVAL);
	o.mode = -1;
	T_EQ(cgstream_open("/", &o, &st), -EINVAL);
	T_ASSERT(st == SENTINEL);
	big.future = 1;	/* a field this library does not know, set */
	T_EQ(cgstream_open("/", &big.o, &st), -EINVAL);
	T_ASSERT(st == SENTINEL);

	T_EQ(cgstream_open(NULL, NULL, &st), -EINVAL);
	T_EQ(cgstream_open("/", NULL, NULL), -EINVAL);
	T_EQ(cgstream_group_new(NULL, NULL), -EINVAL);
	T_EQ(cgstream_get_interval(NULL, NULL), -EINVAL);
	T_EQ(cgstream_fd(NULL), -EINVAL);
	T_EQ(cgstream_mode(NULL), -EINVAL);
	T_ASSERT(cgstream_path(NULL) == NULL);
	T_EQ(cgstream_wait(NULL, 0), -EINVAL);
	T_EQ(cgstream_read(NULL, NULL, 0), -EINVAL);
	T_EQ(cgstream_group_add(NULL, "/", NULL), -EINVAL);
	T_EQ(cgstream_group_remove(NULL, "/"), -EINVAL);
	T_EQ(cgstream_group_size(NULL), 0);
	T_EQ(cgstream_group_fd(NULL), -EINVAL);
	T_EQ(cgstream_group_mode(NULL), -EINVAL);
	T_EQ(cgstream_group_wait(NULL, 0), -EINVAL);
	T_EQ(cgstream_group_process(NULL, NULL, 0, sizeof(struct cgstream_event)), -EINVAL);
	cgstream_close(NULL);
	cgstream_group_free(NULL);
	T_ASSERT(!strcmp(cgstream_mode_name(CGSTREAM_MODE_KERNEL), "kernel"));
	T_ASSERT(!strcmp(cgstream_mode_name(CGSTREAM_MODE_FALLBACK), "fallback"));
	T_ASSERT(!strcmp(cgstream_mode_name(CGSTREAM_MODE_AUTO), "auto"));
	T_ASSERT(!strcmp(cgstream_mode_name(42), "unknown"));

	/* a larger struct with the unknown tail zero is fine */
	big.future = 0;
	T_EQ(cgstream_open("/", &big.o, &st), 0);
	cgstream_close(st);
}

static void test_paths(const char *root)
{
	struct cgstream_opts fb = { .sz = sizeof(fb), .mode = CGSTREAM_MODE_FALLBACK };
	char buf[PATH_MAX], want[PATH_MAX + 16];
	struct cgstream *st = SENTINEL;
	struct cgstream_group *g = NULL;
	static const char *const dotdot[] = {
		"..", "../", "a/..", "a/../b", "/..", "./../x", "a/b/../../..",
	};

	T_EQ(cgstream_resolve_path("", NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, root));
	T_EQ(cgstream_resolve_path("/", NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, root));
	T_EQ(cgstream_resolve_path(root, NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, root));
	snprintf(want, sizeof(want), "%s/a/b/c", root);
	T_EQ(cgstream_resolve_path("a//b/./c/", NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, want));
	T_EQ(cgstream_resolve_path("/a/b/c", NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, want));
	snprintf(buf, sizeof(buf), "%s/a/b/c", root);
	T_EQ(cgstream_resolve_path(buf, NULL, buf, sizeof(buf)), 0);
	T_ASSERT(!strcmp(buf, want));
	T_EQ(cgstream_resolve_path("a", NULL, buf, 3), -ERANGE);
	T_EQ(cgstream_resolve_path(NULL, NULL, buf, sizeof(buf)), -EINVAL);

	for (size_t i = 0; i < sizeof(dotdot) / sizeof(dotdot[0]); i++) {
		T_EQ(cgstream_resolve_path(dotdot[i], NULL, buf, sizeof(buf)), -EINVAL);
		T_EQ(cgstream_open(dotdot[i], &fb, &st), -EINVAL);
		T_ASSERT(st == SENTINEL);
	}
	snprintf(buf, sizeof(buf), "%s/../etc", root);
	T_EQ(cgstream_open(buf, &fb, &st), -EINVAL);

	/* missing cgroups */
	T_EQ(cgstream_open("cgstest-no-such-cgroup", &fb, &st), -ENOENT);
	T_EQ(cgstream_open("cgstest-no-such-cgroup", NULL, &st), -ENOENT);
	T_EQ(cgstream_open("cgroup.procs", &fb, &st), -ENOENT);	/* a file, not a cgroup */
	T_ASSERT(st == SENTINEL);

	T_EQ(cgstream_group_new(&fb, &g), 0);
	T_EQ(cgstream_group_add(g, "cgstest-no-such-cgroup", NULL), -ENOENT);
	T_EQ(cgstream_group_add(g, "..", NULL), -EINVAL);
	T_EQ(cgstream_group_add(g, NULL, NULL), -EINVAL);
	T_EQ(cgstream_group_remove(g, "/"), -ENOENT);
	T_EQ(cgstream_group_add(g, "/", NULL), 0);
	T_EQ(cgstream_group_add(g, root, NULL), -EEXIST);
	T_EQ(cgstream_group_add(g, "./", NULL), -EEXIST);
	T_EQ(cgstream_group_size(g), 1);
	/* smaller than the 1.0 event (128 bytes) */
	T_EQ(cgstream_group_process(g, NULL, 0, 128 - 1), -EINVAL);
	T_EQ(cgstream_group_process(g, NULL, 1, sizeof(struct cgstream_event)), -EINVAL);
	T_EQ(cgstream_group_remove(g, root), 0);
	T_EQ(cgstream_group_remove(g, root), -ENOENT);
	T_EQ(cgstream_group_size(g), 0);
	cgstream_group_free(g);

	/* a cgroup this user may not open */
	if (geteuid() == 0) {
		char cg[PATH_MAX];
		pid_t pid;
		int status;

		if (t_cg_make(root, t_name("noperm"), cg, sizeof(cg)) == 0) {
			T_ASSERT(chmod(cg, 0700) == 0);
			pid = fork();
			T_ASSERT(pid >= 0);
			if (pid == 0) {
				struct cgstream *s2 = SENTINEL;
				int r;

				if (setgid(65534) < 0 || setuid(65534) < 0)
					_exit(77);
				r = cgstream_open(cg, &fb, &s2);
				_exit(r == -EACCES && s2 == SENTINEL ? 0 : 1);
			}
			T_ASSERT(waitpid(pid, &status, 0) == pid);
			t_cg_remove(cg);
			T_ASSERT(WIFEXITED(status));
			if (WEXITSTATUS(status) == 77)
				t_log("could not drop privileges: EACCES not checked");
			else
				T_EQ(WEXITSTATUS(status), 0);
		}
	}
}

static void test_no_kernel_feature(void)
{
	struct cgstream_opts k = { .sz = sizeof(k), .mode = CGSTREAM_MODE_KERNEL };
	struct cgstream *st = SENTINEL;
	struct cgstream_group *g = SENTINEL;
	uint32_t ms = 77;

	if (t_kernel_has_stream()) {
		t_log("this kernel has cpu.stat.stream: the -EOPNOTSUPP checks do not apply");
		return;
	}
	T_EQ(cgstream_open("/", &k, &st), -EOPNOTSUPP);
	T_ASSERT(st == SENTINEL);
	T_EQ(cgstream_group_new(&k, &g), -EOPNOTSUPP);
	T_ASSERT(g == SENTINEL);
	T_EQ(cgstream_get_interval(NULL, &ms), -EOPNOTSUPP);
	T_EQ(ms, 77);
	T_EQ(cgstream_set_interval(NULL, 1000), -EOPNOTSUPP);

	/* auto falls back */
	T_EQ(cgstream_open("/", NULL, &st), 0);
	T_EQ(cgstream_mode(st), CGSTREAM_MODE_FALLBACK);
	cgstream_close(st);
	T_EQ(cgstream_group_new(NULL, &g), 0);
	T_EQ(cgstream_group_mode(g), CGSTREAM_MODE_FALLBACK);
	cgstream_group_free(g);
}

int main(void)
{
	const char *root;

	test_not_cgroup2_root();
	root = t_cgroup_root();
	if (!root)
		t_skip("no cgroup2 mount: only the checks without one ran");
	t_log("cgroup2 at %s", root);
	test_opts();
	test_paths(root);
	test_no_kernel_feature();
	t_log("errors: all passed");
	return 0;
}
