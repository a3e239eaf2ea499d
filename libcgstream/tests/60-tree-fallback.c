// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree in fallback mode on the host's cgroup2 (a timer, cpu.stat reads,
 * inotify to find new cgroups): the checks of treecheck.h on 1,000
 * cgroups ($CGSTREAM_TEST_CGROUPS: 10,000 takes about a minute; 100 under
 * CGSTREAM_TEST_FAST, for valgrind), 1,000 cycles of 10 ms with churn.
 * Also: the kernel modes refused on a kernel without them, and a tree
 * under a limit of open files far below its cgroups' files.
 */
#include "treecheck.h"

/*
 * Few fds (RLIMIT_NOFILE just above what the process has open): the tree
 * keeps some cgroups' files open and opens, reads and closes the rest's
 * each cycle (the fd budget), so every cgroup reports in every batch,
 * none with an ERROR, and the process keeps fds for itself.  Then cgroups
 * removed and made again under their paths: a cgroup whose files are
 * opened by path at each cycle is not the new one at its path (REMOVED
 * with the old id once, at most one sample of the old id after the
 * remake, a cycle under way, none after its REMOVED; ADDED with the new
 * id).  In a child, for the limit; with io_uring and with plain reads.
 */

#define REMADE	10

/* c0, c10, ... removed and made again under @top; their old ids into @ids */
static void remake(const char *top, uint64_t ids[REMADE])
{
	char p[PATH_MAX];
	struct stat st;

	for (int i = 0; i < REMADE; i++) {
		snprintf(p, sizeof(p), "%s/c%d", top, 10 * i);
		T_EQ(stat(p, &st), 0);
		ids[i] = st.st_ino;
		T_EQ(t_cg_remove(p), 0);
		T_EQ(mkdir(p, 0755), 0);
	}
}

/* the batches after remake(): what they say of the old ids */
static void check_remade(struct cgstream_tree *t, struct cgstream_event *ev, size_t max,
			 const uint64_t ids[REMADE])
{
	int removed[REMADE] = { 0 }, late[REMADE] = { 0 }, added = 0;

	for (int b = 0; b < 8; b++) {
		int n = t_tree_batch(t, ev, max, sizeof(ev[0]));

		for (int i = 0; i < n; i++) {
			int k = 0;

			added += ev[i].type == CGSTREAM_EVENT_ADDED;
			while (k < REMADE && ev[i].sample.cgroup_id != ids[k])
				k++;
			if (k == REMADE)
				continue;
			if (ev[i].type == CGSTREAM_EVENT_REMOVED)
				removed[k]++;
			else if (ev[i].type == CGSTREAM_EVENT_SAMPLE && (removed[k] || ++late[k] > 1))
				T_FAIL("%s: a sample of its old id %llu after it was made again%s",
				       ev[i].path, (unsigned long long)ids[k],
				       removed[k] ? " and REMOVED" : ", a cycle later");
		}
	}
	for (int k = 0; k < REMADE; k++)
		T_EQ(removed[k], 1);
	T_EQ(added, REMADE);
}
static void few_fds(const char *top, bool plain)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = 10 };
	static struct cgstream_event ev[400];
	int status, n;
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		struct cgstream_tree *t;
		struct rlimit low;
		uint64_t ids[REMADE];
		int fds[16], added = 0;

		if (plain)
			setenv("CGSTREAM_NO_IO_URING", "1", 1);
		T_EQ(getrlimit(RLIMIT_NOFILE, &low), 0);
		low.rlim_cur = (rlim_t)t_count_fds(NULL) + 60;	/* ~50 cgroups' worth */
		T_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
		T_EQ(cgstream_tree_open(top, &o, &t), 0);
		for (int b = 0; b < 5; b++) {
			int samples = 0;

			n = t_tree_batch(t, ev, 400, sizeof(ev[0]));
			for (int i = 0; i < n; i++) {
				if (ev[i].type == CGSTREAM_EVENT_ERROR)
					T_FAIL("ERROR %d for %s", ev[i].error, ev[i].path);
				added += ev[i].type == CGSTREAM_EVENT_ADDED;
				samples += ev[i].type == CGSTREAM_EVENT_SAMPLE;
			}
			T_EQ(samples, 101);	/* every cgroup, every batch */
		}
		T_EQ(added, 101);
		remake(top, ids);
		check_remade(t, ev, 400, ids);
		/* the caller still has fds of its own */
		for (int i = 0; i < 16; i++)
			T_ASSERT((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
		for (int i = 0; i < 16; i++)
			close(fds[i]);
		cgstream_tree_close(t);
		t_log("few fds (%s): all 101 cgroups in each of 5 batches, no ERROR; %d made again "
		      "under their paths: each old one REMOVED once", plain ? "plain reads" : "io_uring",
		      REMADE);
		fflush(stdout);
		_exit(0);
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void fd_budget(void)
{
	char top[PATH_MAX], name[16], p[PATH_MAX];

	T_EQ(t_cg_make(t_cgroup_root(), t_name("nofd"), top, sizeof(top)), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		T_EQ(t_cg_make(top, name, p, sizeof(p)), 0);
	}
	few_fds(top, false);
	few_fds(top, true);
	for (int i = 0; i < 100; i++) {
		snprintf(p, sizeof(p), "%s/c%d", top, i);
		T_EQ(t_cg_remove(p), 0);
	}
	T_EQ(t_cg_remove(top), 0);
}

/*
 * The emulation's publication (cgstream_tree_publication()): its cycles,
 * with changes only over idle cgroups (batches without a CHANGED): the
 * seq moves on with each cycle, and its time stays within an interval or
 * so of now.  With io_uring and with plain reads.
 */
static void publication(bool plain)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = 20, .report = CGSTREAM_REPORT_CHANGES };
	struct cgstream_publication pub, first = { 0 };
	struct cgstream_event ev[16];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	uint64_t cycles = 0, last = 0, worst = 0;

	if (plain)
		setenv("CGSTREAM_NO_IO_URING", "1", 1);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("pub"), top, sizeof(top)), 0);
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), -ENODATA);
	T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_IO, &pub, sizeof(pub)), -ENOENT);
	for (uint64_t end = t_now_ms() + 500; t_now_ms() < end;) {
		T_ASSERT(cgstream_tree_wait(t, 100) >= 0);
		T_ASSERT(cgstream_tree_process(t, ev, 16, sizeof(ev[0])) >= 0);
		if (cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)) < 0)
			continue;
		if (!first.seq)
			first = pub;
		T_ASSERT(pub.seq >= last);
		cycles += pub.seq != last;
		last = pub.seq;
		if (t_now_us() - pub.time_usec > worst)
			worst = t_now_us() - pub.time_usec;
	}
	/* ~25 cycles of 20 ms in 500 ms; a loaded host runs late, not this late */
	T_ASSERT(cycles >= 5 && last > first.seq);
	T_ASSERT(worst < 300 * 1000);
	/* a sync is a cycle too (-EBUSY while a cycle is read: that one first) */
	for (int r; (r = cgstream_tree_sync(t)) != 0;) {
		T_EQ(r, -EBUSY);
		T_ASSERT(cgstream_tree_wait(t, 100) >= 0);
		T_ASSERT(cgstream_tree_process(t, ev, 16, sizeof(ev[0])) >= 0);
		T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), 0);
		last = pub.seq;
	}
	for (uint64_t end = t_now_ms() + 5000; t_now_ms() < end;) {
		T_ASSERT(cgstream_tree_wait(t, 100) >= 0);
		T_ASSERT(cgstream_tree_process(t, ev, 16, sizeof(ev[0])) >= 0);
		T_EQ(cgstream_tree_publication(t, CGSTREAM_CTRL_CPU, &pub, sizeof(pub)), 0);
		if (pub.seq > last)
			break;
	}
	T_ASSERT(pub.seq > last);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(kid), 0);
	T_EQ(t_cg_remove(top), 0);
	if (plain)
		unsetenv("CGSTREAM_NO_IO_URING");
	t_log("publication (%s): %llu cycles of an idle tree in 500 ms, at most %llu ms old",
	      plain ? "plain reads" : "io_uring", (unsigned long long)cycles,
	      (unsigned long long)worst / 1000);
}

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

	fd_budget();
	publication(false);
	publication(true);
	tc_setup(CGSTREAM_MODE_FALLBACK, n, 10, "tree");
	tc_open_and_batches(5);
	tc_churn();
	tc_pieces();
	tc_long(1000);
	tc_root_removed();
	t_log("tree-fallback: %d cgroups, %llu batches, %llu s", n,
	      (unsigned long long)tc.batches, (unsigned long long)(t_now_ms() - start) / 1000);
	/* changes, compared by the emulation: CHANGED for what moved (the
	 * busy cgroup and the top) only; REMOVED with the last values */
	tc_report = CGSTREAM_REPORT_CHANGES;
	tc_run(CGSTREAM_MODE_FALLBACK, n, 20, 100, "treec");
	t_log("tree-fallback: all passed");
	return 0;
}
