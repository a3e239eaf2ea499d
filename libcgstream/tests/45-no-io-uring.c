// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where io_uring cannot be set up, every object works with plain
 * syscalls.  Three ways it is refused, each in a child process:
 * $CGSTREAM_NO_IO_URING=1, a seccomp filter that fails io_uring_setup()
 * with EPERM (what a hardened service or a container sees), and, as
 * root where the sysctl exists, kernel.io_uring_disabled=2 (restored
 * after).  In each, a fallback group and a fallback tree must hand back
 * full batches, report a removed cgroup once, and hold no io_uring fd.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "testutil.h"

#define N_CHILDREN 20
#define TICK_MS 20

static const struct cgstream_opts fb = {
	.sz = sizeof(fb), .mode = CGSTREAM_MODE_FALLBACK, .fallback_interval_ms = TICK_MS,
};

static char parent[PATH_MAX];
static char kids[N_CHILDREN][PATH_MAX];
static int n_kids;

static void cleanup(void)
{
	for (int i = 0; i < n_kids; i++)
		rmdir(kids[i]);
	if (parent[0])
		rmdir(parent);
}

/* a group of the parent and its children, then one child removed */
static void check_group(void)
{
	struct cgstream_event ev[2 * N_CHILDREN];
	struct cgstream_group *g;
	int n, removed = 0, victim = n_kids - 1;

	T_EQ(cgstream_group_new(&fb, &g), 0);
	T_EQ(t_count_fds("anon_inode:[io_uring]"), 0);
	T_EQ(cgstream_group_add(g, parent, NULL), 0);
	for (int i = 0; i < n_kids; i++)
		T_EQ(cgstream_group_add(g, kids[i], &kids[i]), 0);
	for (int b = 0; b < 5; b++) {
		n = t_group_batch(g, ev, 2 * N_CHILDREN, sizeof(ev[0]));
		T_EQ(n, n_kids + 1);
		for (int i = 0; i < n; i++) {
			T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
			T_EQ(ev[i].sample.seq, ev[0].sample.seq);
		}
	}
	T_EQ(t_cg_remove(kids[victim]), 0);
	for (int b = 0; b < 3; b++) {
		n = t_group_batch(g, ev, 2 * N_CHILDREN, sizeof(ev[0]));
		for (int i = 0; i < n; i++)
			if (ev[i].type == CGSTREAM_EVENT_REMOVED) {
				T_ASSERT(ev[i].userdata == &kids[victim]);
				removed++;
			}
	}
	T_EQ(removed, 1);
	T_EQ(cgstream_group_size(g), n_kids);
	T_EQ(t_count_fds("anon_inode:[io_uring]"), 0);
	cgstream_group_free(g);
	T_EQ(t_cg_make(parent, strrchr(kids[victim], '/') + 1, kids[victim], PATH_MAX), 0);
}

/* a tree of the parent: every cgroup in a batch, then one removed */
static void check_tree(void)
{
	struct cgstream_event ev[3 * N_CHILDREN];
	struct cgstream_tree *t;
	int n, samples, removed = 0;
	uint64_t start = t_now_ms();

	T_EQ(cgstream_tree_open(parent, &fb, &t), 0);
	T_EQ(cgstream_tree_mode(t), CGSTREAM_MODE_FALLBACK);
	T_EQ(t_count_fds("anon_inode:[io_uring]"), 0);
	for (int b = 0; b < 5; b++) {
		n = t_tree_batch(t, ev, 3 * N_CHILDREN, sizeof(ev[0]));
		samples = 0;
		for (int i = 0; i < n; i++)
			samples += ev[i].type == CGSTREAM_EVENT_SAMPLE;
		T_EQ(samples, n_kids + 1);
	}
	T_EQ(t_cg_remove(kids[0]), 0);
	while (!removed && t_now_ms() - start < 5000) {
		n = t_tree_batch(t, ev, 3 * N_CHILDREN, sizeof(ev[0]));
		for (int i = 0; i < n; i++)
			if (ev[i].type == CGSTREAM_EVENT_REMOVED) {
				T_ASSERT(!strcmp(ev[i].path, kids[0]));
				removed++;
			}
	}
	T_EQ(removed, 1);
	T_EQ(cgstream_tree_size(t), n_kids);
	cgstream_tree_close(t);
	T_EQ(t_cg_make(parent, "k00", kids[0], PATH_MAX), 0);
}

static void run_checks(void)
{
	check_group();
	check_tree();
}

static int deny_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	/* the filter works: io_uring_setup() fails as it would for a service */
	if (syscall(__NR_io_uring_setup, 4, NULL) != -1 || errno != EPERM)
		return -EIO;
	return 0;
}

/* run the checks in a child set up by @setup */
static void in_child(const char *name, int (*setup)(void))
{
	int status;
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		int r = setup ? setup() : 0;

		if (r < 0) {
			fprintf(stderr, "%s: setup failed: %s\n", name, strerror(-r));
			_exit(2);
		}
		run_checks();
		_exit(0);
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		T_FAIL("%s: the checks failed (status 0x%x)", name, status);
	t_log("%s: group and tree work with plain syscalls", name);
}

static int set_env(void)
{
	return setenv("CGSTREAM_NO_IO_URING", "1", 1) < 0 ? -errno : 0;
}

int main(void)
{
	const char *root = t_cgroup_root();

	if (!root)
		t_skip("no cgroup2 mount");
	atexit(cleanup);
	if (t_cg_make(root, t_name("nouring"), parent, sizeof(parent)) < 0)
		t_skip("cannot create cgroups here");
	for (; n_kids < N_CHILDREN; n_kids++) {
		char name[16];

		snprintf(name, sizeof(name), "k%02d", n_kids);
		T_EQ(t_cg_make(parent, name, kids[n_kids], sizeof(kids[n_kids])), 0);
	}

	in_child("CGSTREAM_NO_IO_URING=1", set_env);
	in_child("seccomp: io_uring_setup fails with EPERM", deny_io_uring);

	if (geteuid() == 0 && t_io_uring_disable()) {
		in_child("kernel.io_uring_disabled=2", NULL);
		t_io_uring_restore();
	} else {
		t_log("kernel.io_uring_disabled: not tested (%s)",
		      geteuid() ? "needs root" : "no such sysctl");
	}
	t_log("no-io-uring: all passed");
	return 0;
}
