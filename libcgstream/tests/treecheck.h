/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checks of a cgstream_tree, for the host test (fallback mode) and the
 * VM tests (subtree and kernel modes): a tree of N cgroups under a test
 * cgroup, then
 *  1. the first batch: ADDED for every cgroup once (a parent before its
 *     children) and a SAMPLE for each, with its id (stat().st_ino), its
 *     parent's id and its path;
 *  2. batches: every cgroup in every batch, once;
 *  3. cgroups made, removed, and removed and made again under the same
 *     path while watching: ADDED and REMOVED exactly once each, REMOVED
 *     (old id) not after ADDED (new id), no sample after REMOVED;
 *  4. a batch larger than the caller's array comes in pieces, one cycle;
 *  5. many cycles with churn: no growth of fds or memory;
 *  6. the root removed: REMOVED for all, the root's last, then -ENODEV.
 * Kernel mode reads each cgroup's stream after the tick: a flush landing
 * meanwhile gives the rest the newer flush and leaves them out of the next
 * batch (no new flush for them), so there "every batch" is "every cycle,
 * give or take a split one".
 *
 * With tc_report = CGSTREAM_REPORT_CHANGES the same runs hand out CHANGED
 * events instead: a cgroup "busy" below the top runs a task that uses a
 * little CPU all the time, so that each batch has some; every CHANGED
 * brings values other than the cgroup's last ones; under fake-kernel.so's
 * model of changes (fake_kernel_changed()) a batch's CHANGED are exactly
 * the cgroups that changed since the last batch, the busy one and the top
 * aside.  In both: a REMOVED carries the cgroup's last values (or, with
 * final ones, no smaller), final ones when the tree reads the kernel's
 * REMOVED records (SUBTREE mode, churn).
 */
#ifndef CGSTREAM_TREECHECK_H
#define CGSTREAM_TREECHECK_H

#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>

#include "testutil.h"

struct tc_node {
	char path[PATH_MAX];
	uint64_t id, parent_id;
	bool alive;		/* its directory exists */
	unsigned int added, removed, samples;
	unsigned int in_batch;	/* SAMPLEs in the current batch */
	uint64_t last_seq;
	uint32_t ctrl_seen;	/* the controllers its samples had values of */
	uint64_t t_made_us;	/* its mkdir (t_now_us()) */
	bool has_last;		/* its cpu values of its last event: */
	struct cgstream_sample last;
};

struct tc {
	int mode;
	uint32_t controllers;	/* opts.controllers: 0 (cpu), or cpu with memory and io */
	bool exact;		/* every cgroup in every batch */
	struct cgstream_opts opts;
	struct cgstream_tree *t;
	struct tc_node *nodes;
	size_t n_nodes, cap;
	uint64_t *slots;	/* id -> index + 1, open addressing */
	size_t n_slots;
	struct cgstream_event *ev;
	size_t max_ev;
	uint64_t batches, seq;
	char top[PATH_MAX];
	bool changes;		/* CGSTREAM_REPORT_CHANGES: CHANGED, not SAMPLE */
	bool want_final;	/* REMOVED with the kernel's final values */
	struct tc_node *busy;	/* changes: a cgroup whose values always move */
	size_t n_built;		/* the nodes of tc_build(), the leaves last */
	pid_t busy_pid;
	int (*model)(uint64_t id, uint64_t after, uint64_t upto);	/* fake-kernel.so's */
	uint64_t model_checks;	/* changes it said, and the batches had */
};

static struct tc tc;

static size_t tc_slot(uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) % tc.n_slots);
}

static struct tc_node *tc_find(uint64_t id)
{
	for (size_t i = tc_slot(id);; i = (i + 1) % tc.n_slots) {
		if (!tc.slots[i])
			return NULL;
		if (tc.nodes[tc.slots[i] - 1].id == id)
			return &tc.nodes[tc.slots[i] - 1];
	}
}

/* a cgroup made by the test: mkdir, and its id from stat() */
static struct tc_node *tc_make(const char *path)
{
	struct tc_node *n;
	struct stat st;
	char parent[PATH_MAX], *slash;

	T_ASSERT(tc.n_nodes < tc.cap);
	n = &tc.nodes[tc.n_nodes];
	memset(n, 0, sizeof(*n));
	snprintf(n->path, sizeof(n->path), "%s", path);
	if (mkdir(path, 0755) < 0)
		T_FAIL("mkdir %s: %s", path, strerror(errno));
	n->t_made_us = t_now_us();
	T_EQ(stat(path, &st), 0);
	n->id = st.st_ino;
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	*slash = '\0';
	T_EQ(stat(parent, &st), 0);
	n->parent_id = strcmp(path, tc.top) ? st.st_ino : 0;
	n->alive = true;
	if (tc.controllers) {
		char sc[PATH_MAX + 32];

		snprintf(sc, sizeof(sc), "%s/cgroup.subtree_control", path);
		T_EQ(t_write_file(sc, "+memory +io"), 0);
	}
	T_ASSERT(!tc_find(n->id));
	for (size_t i = tc_slot(n->id);; i = (i + 1) % tc.n_slots) {
		if (!tc.slots[i]) {
			tc.slots[i] = ++tc.n_nodes;
			break;
		}
	}
	return n;
}

static void tc_remove(struct tc_node *n)
{
	T_EQ(t_cg_remove(n->path), 0);
	n->alive = false;
}

static void tc_busy_stop(void)
{
	if (tc.busy_pid > 0)
		t_kill(tc.busy_pid);
	tc.busy_pid = 0;
}

static void tc_cleanup(void)
{
	tc_busy_stop();
	for (size_t i = tc.n_nodes; i-- > 0;)
		if (tc.nodes[i].alive)
			rmdir(tc.nodes[i].path);
}

static size_t tc_alive(void)
{
	size_t k = 0;

	for (size_t i = 0; i < tc.n_nodes; i++)
		k += tc.nodes[i].alive;
	return k;
}

/*
 * The bytes malloc has handed out and not had back (glibc's mallinfo2(),
 * mmapped chunks included).  The harness allocates nothing per cycle, so
 * this is what the library holds: at the same tree it must be the same
 * after any number of cycles.  RSS is not: pages of a buffer malloc has
 * had for long are touched first when a snapshot grows into them, and
 * freed memory stays resident in malloc's arenas.
 */
static long tc_heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();

	return (long)(m.uordblks + m.hblkhd);
}

static long tc_rss_kb(void)
{
	char buf[4096], *p;

	T_ASSERT(t_read_file("/proc/self/status", buf, sizeof(buf)) > 0);
	p = strstr(buf, "VmRSS:");
	T_ASSERT(p != NULL);
	return strtol(p + 6, NULL, 10);
}

/*
 * How long after its mkdir a cgroup's samples may lack some of its
 * controllers' values: each controller's publisher runs on its own grid,
 * and the kernel lists a new cgroup in a controller's snapshot only from
 * that controller's first publication after its creation, so a new
 * cgroup's first samples may lack one or two of them (cpu included); at
 * a 20 ms interval under TCG a publication of 1,000 cgroups takes longer
 * than the interval and some are skipped.  A guard against a controller
 * that never lists a cgroup, not a time limit: 10 s.
 */
#define TC_CTRL_LATE_US		(10 * 1000 * 1000)

/* memory and io: every test cgroup has both (tc_make enables them) */
static void tc_memio(struct tc_node *n, const struct cgstream_event *e)
{
	uint64_t v;

	if (!tc.controllers) {
		T_EQ(e->controllers, CGSTREAM_CTRL_CPU);
		T_ASSERT(!e->memory && !e->io);
		return;
	}
	if (!e->controllers || (e->controllers & ~tc.controllers))
		T_FAIL("%s: controllers %#x, want %#x", e->path, e->controllers, tc.controllers);
	/* once a controller has values of a cgroup, it keeps having them */
	if (n->ctrl_seen & ~e->controllers)
		T_FAIL("%s: controllers %#x after %#x", e->path, e->controllers, n->ctrl_seen);
	if (e->controllers != tc.controllers && t_now_us() - n->t_made_us > TC_CTRL_LATE_US)
		T_FAIL("%s: controllers %#x, want %#x (sample %u, %.1f s after its mkdir)",
		       e->path, e->controllers, tc.controllers, n->samples + 1,
		       (t_now_us() - n->t_made_us) / 1e6);
	T_ASSERT(!e->memory == !(e->controllers & CGSTREAM_CTRL_MEMORY));
	T_ASSERT(!e->io == !(e->controllers & CGSTREAM_CTRL_IO));
	if (e->memory) {
		T_ASSERT(e->memory->nr > 20);
		T_EQ(cgstream_memory_get(e->memory, "anon", &v), 0);
		T_EQ(cgstream_memory_get(e->memory, "current", &v), 0);
		T_EQ(cgstream_memory_get(e->memory, "events.oom_kill", &v), 0);
		T_ASSERT(!strcmp(e->memory->names[0], "anon"));
		/* the emulation's seq is the cycle, the streams' their flush's */
		T_ASSERT(e->memory->seq > 0);
		T_ASSERT(e->memory->flush_time_usec > 0);
	}
	if (e->io) {
		T_ASSERT(e->io->seq > 0);
		T_ASSERT(e->io->flush_time_usec > 0);
		T_ASSERT(e->io->nr_devices == 0 || e->io->devices);
	}
}

/* the cpu values of a sample, without the publication's fields */
#define TC_CPU_OFF	offsetof(struct cgstream_sample, usage_usec)
#define TC_CPU_LEN	(offsetof(struct cgstream_sample, flush_missed) - TC_CPU_OFF)

/* SAMPLE or CHANGED: values, and a CHANGED's other than its last */
static void tc_values(struct tc_node *n, const struct cgstream_event *e)
{
	T_EQ(e->type, tc.changes ? CGSTREAM_EVENT_CHANGED : CGSTREAM_EVENT_SAMPLE);
	T_EQ(e->changed & ~e->controllers, 0);
	/* its first values of a controller: changed */
	T_EQ(e->changed & e->controllers & ~n->ctrl_seen, e->controllers & ~n->ctrl_seen);
	if (!(e->controllers & CGSTREAM_CTRL_CPU))
		return;		/* a new cgroup cpu has not listed yet */
	if (tc.changes && n->has_last && (e->changed & CGSTREAM_CTRL_CPU) &&
	    !memcmp((const char *)&e->sample + TC_CPU_OFF, (const char *)&n->last + TC_CPU_OFF,
		    TC_CPU_LEN))
		T_FAIL("%s: CHANGED with the cpu values it had", n->path);
	if (tc.changes)
		T_ASSERT(e->changed != 0);
	T_ASSERT(e->sample.present & CGSTREAM_F_USAGE);
	T_ASSERT(e->sample.present & CGSTREAM_F_SEQ);
	T_ASSERT(e->cpu && e->cpu->nr >= 4 && e->cpu->values[0] == e->sample.usage_usec);
	n->last = e->sample;
	n->has_last = true;
}

/* REMOVED: the last values, or final ones */
static void tc_removed_values(struct tc_node *n, const struct cgstream_event *e)
{
	if (!n->has_last)
		return;	/* announced, never read */
	T_ASSERT(e->controllers & CGSTREAM_CTRL_CPU);
	T_ASSERT(e->cpu != NULL);
	if (tc.want_final && !(e->final & CGSTREAM_CTRL_CPU))
		T_FAIL("%s: REMOVED without final values", n->path);
	if (e->sample.usage_usec < n->last.usage_usec ||
	    (!e->final && e->sample.usage_usec != n->last.usage_usec))
		T_FAIL("%s: REMOVED with usage %llu, its last %llu (final %#x)", n->path,
		       (unsigned long long)e->sample.usage_usec,
		       (unsigned long long)n->last.usage_usec, e->final);
}

/* check one event against the model */
static void tc_event(const struct cgstream_event *e)
{
	struct tc_node *n = tc_find(e->sample.cgroup_id);

	T_ASSERT(e->sample.present & CGSTREAM_F_CGROUP_ID);
	if (!n)
		T_FAIL("event %d for unknown id %llu (%s)", e->type,
		       (unsigned long long)e->sample.cgroup_id, e->path);
	if (strcmp(e->path, n->path))
		T_FAIL("id %llu: path %s, want %s", (unsigned long long)n->id, e->path, n->path);
	T_ASSERT(e->userdata == NULL);
	switch (e->type) {
	case CGSTREAM_EVENT_ADDED:
		T_EQ(e->parent_id, n->parent_id);
		if (n->added++)
			T_FAIL("%s ADDED twice", n->path);
		T_EQ(n->removed, 0);
		if (n->parent_id)	/* a parent before its children */
			T_EQ(tc_find(n->parent_id)->added, 1);
		/* made again under its path: the old one was REMOVED first */
		for (size_t i = 0; i < tc.n_nodes; i++)
			if (&tc.nodes[i] != n && !strcmp(tc.nodes[i].path, n->path) &&
			    tc.nodes[i].added && !tc.nodes[i].removed)
				T_FAIL("%s: ADDED (id %llu) before the REMOVED of id %llu",
				       n->path, (unsigned long long)n->id,
				       (unsigned long long)tc.nodes[i].id);
		break;
	case CGSTREAM_EVENT_SAMPLE:
	case CGSTREAM_EVENT_CHANGED:
		T_EQ(n->added, 1);
		T_EQ(n->removed, 0);
		T_EQ(e->parent_id, n->parent_id);
		tc_values(n, e);
		tc_memio(n, e);
		n->ctrl_seen |= e->controllers;
		if (e->controllers & CGSTREAM_CTRL_CPU) {
			if (e->sample.seq <= n->last_seq)
				T_FAIL("%s: seq %llu after %llu", n->path,
				       (unsigned long long)e->sample.seq,
				       (unsigned long long)n->last_seq);
			n->last_seq = e->sample.seq;
		}
		n->samples++;
		n->in_batch++;
		break;
	case CGSTREAM_EVENT_REMOVED:
		T_ASSERT(!n->alive);
		T_EQ(n->added, 1);
		if (n->removed++)
			T_FAIL("%s REMOVED twice", n->path);
		tc_removed_values(n, e);
		break;
	default:
		T_FAIL("%s: event %d, error %d (%s)", e->path, e->type, e->error,
		       strerror(-e->error));
	}
}

/*
 * How long a batch may take to come: a guard against a hang, not a time
 * limit.  20 s and 20 ms per cgroup, since a fallback cycle of 10,000
 * cgroups (60,000 files through io_uring) took longer than 20 s under TCG
 * (make stress, 2026-11-26).
 */
static inline uint64_t tc_batch_limit_ms(void)
{
	return 20000 + 20 * (uint64_t)tc.n_nodes;
}

/* the first events of the next batch, at most @max (or an error), within
 * tc_batch_limit_ms() */
static int tc_next_events(size_t max)
{
	uint64_t start = t_now_ms(), limit_ms = tc_batch_limit_ms();
	int n;

	for (;;) {
		T_ASSERT(cgstream_tree_wait(tc.t, 5000) >= 0);
		n = cgstream_tree_process(tc.t, tc.ev, max, sizeof(tc.ev[0]));
		if (n != 0)
			return n;
		if (t_now_ms() - start > limit_ms)
			T_FAIL("no batch within %llu s", (unsigned long long)limit_ms / 1000);
	}
}

/* @id is the busy cgroup or one above it: its values move on their own */
static bool tc_busy_line(uint64_t id)
{
	return tc.busy && (id == tc.busy->id || id == tc.nodes[0].id);
}

/*
 * CHANGES under fake-kernel.so, exact modes: the batch's CHANGED (those
 * of cgroups announced before it) are the cgroups its model changed in
 * publications (@after, @upto]
 */
static void tc_changes_model(uint64_t after, uint64_t upto)
{
	if (!tc.changes || !tc.model || !tc.exact || !after)
		return;
	for (size_t i = 0; i < tc.n_nodes; i++) {
		struct tc_node *n = &tc.nodes[i];
		int want;

		if (!n->alive || !n->added || n->samples == n->in_batch || tc_busy_line(n->id))
			continue;	/* not known before this batch */
		want = tc.model(n->id, after, upto);
		tc.model_checks += want;
		if (want != (n->in_batch > 0))
			T_FAIL("%s: %s in (%llu, %llu], yet %s", n->path,
			       want ? "changed" : "unchanged", (unsigned long long)after,
			       (unsigned long long)upto, n->in_batch ? "CHANGED" : "not told");
	}
}

/* the next batch (the caller's array holds a whole one); checked */
static int tc_batch(void)
{
	uint64_t seq = 0;
	int n;

	for (size_t i = 0; i < tc.n_nodes; i++)
		tc.nodes[i].in_batch = 0;
	n = tc_next_events(tc.max_ev);
	if (n < 0)
		return n;
	T_ASSERT((size_t)n < tc.max_ev);	/* all of it in one call */
	for (int i = 0; i < n; i++) {
		tc_event(&tc.ev[i]);
		if (tc.ev[i].type != CGSTREAM_EVENT_SAMPLE && tc.ev[i].type != CGSTREAM_EVENT_CHANGED)
			continue;
		if (!(tc.ev[i].controllers & CGSTREAM_CTRL_CPU))
			continue;	/* a new cgroup cpu has not listed yet: no seq */
		if (!seq)
			seq = tc.ev[i].sample.seq;
		if (tc.exact)	/* one flush, or one tick, per batch */
			T_EQ(tc.ev[i].sample.seq, seq);
	}
	if (seq) {
		/* per-cgroup streams: a flush mid-read splits a cycle in two */
		if (tc.exact)
			T_ASSERT(seq > tc.seq);
		else
			T_ASSERT(seq >= tc.seq);
		tc_changes_model(tc.seq, seq);
		tc.seq = seq;
	}
	tc.batches++;
	return n;
}

/* every live cgroup once in the batch just read (exact modes, SAMPLEs) */
static void tc_every_one(void)
{
	if (!tc.exact || tc.changes)
		return;
	for (size_t i = 0; i < tc.n_nodes; i++) {
		struct tc_node *n = &tc.nodes[i];

		if (n->alive && n->added && n->in_batch != 1)
			T_FAIL("%s: %u samples in batch %llu", n->path, n->in_batch,
			       (unsigned long long)tc.batches);
	}
}

/* a tree of @n cgroups under tc.top: 10 at the first level, the rest
 * below them, and a chain five deep */
static void tc_build(int n)
{
	char p[PATH_MAX];
	int made = 0;

	tc_make(tc.top);
	for (int i = 0; i < 10 && made < n; i++, made++) {
		snprintf(p, sizeof(p), "%s/l%d", tc.top, i);
		tc_make(p);
	}
	snprintf(p, sizeof(p), "%s/l0", tc.top);
	for (int d = 0; d < 5 && made < n; d++, made++) {
		strcat(p, "/deep");
		tc_make(p);
	}
	for (int i = 0; made < n; i++, made++) {
		snprintf(p, sizeof(p), "%s/l%d/c%05d", tc.top, i % 10, i);
		tc_make(p);
	}
}

/* the tree's controllers and what its batches carry: set before
 * tc_setup() (tc_run() takes them) */
static uint32_t tc_controllers;
static uint32_t tc_report;

/* changes: a task in tc.top/busy that uses 2 ms of CPU every 10 ms */
static void tc_busy_start(void)
{
	char p[PATH_MAX], sc[PATH_MAX + 32], procs[64];
	uint64_t start;

	snprintf(p, sizeof(p), "%s/busy", tc.top);
	tc.busy = tc_make(p);
	/* a leaf with a task: no controller enabled below it */
	snprintf(sc, sizeof(sc), "%s/cgroup.subtree_control", p);
	if (tc.controllers)
		T_EQ(t_write_file(sc, "-memory -io"), 0);
	tc.busy_pid = t_ticker(p, 2000, 8);
	T_ASSERT(tc.busy_pid > 0);
	/* the task is in it, not gone for a failed move (it would exit 2) */
	snprintf(sc, sizeof(sc), "%s/cgroup.procs", p);
	for (start = t_now_ms();; t_sleep_ms(10)) {
		if (waitpid(tc.busy_pid, NULL, WNOHANG) == tc.busy_pid) {
			tc.busy_pid = 0;
			T_FAIL("%s: the busy task could not move in", p);
		}
		if (t_read_file(sc, procs, sizeof(procs)) > 0)
			break;
		if (t_now_ms() - start > 10000)
			T_FAIL("%s: the busy task not in it after 10 s", p);
	}
}

static void tc_setup(int mode, int n, uint32_t fallback_ms, const char *name)
{
	/* kernel and fallback modes read a file per cgroup and file kind */
	size_t fds_per = tc_controllers ? 6 : 1, need;
	struct rlimit rl;

	/* a run of its own, after another's */
	free(tc.nodes);
	free(tc.slots);
	free(tc.ev);
	memset(&tc, 0, sizeof(tc));
	tc.mode = mode;
	tc.controllers = tc_controllers;
	tc.changes = tc_report == CGSTREAM_REPORT_CHANGES;
	tc.exact = mode != CGSTREAM_MODE_KERNEL;
	tc.model = (int (*)(uint64_t, uint64_t, uint64_t))dlsym(RTLD_DEFAULT,
								 "fake_kernel_changed");
	tc.opts = (struct cgstream_opts){ .sz = sizeof(tc.opts), .mode = mode,
					  .fallback_interval_ms = fallback_ms,
					  .controllers = tc_controllers, .report = tc_report };
	tc.cap = (size_t)n + 1000;
	tc.nodes = calloc(tc.cap, sizeof(*tc.nodes));
	tc.n_slots = 4 * tc.cap;
	tc.slots = calloc(tc.n_slots, sizeof(*tc.slots));
	tc.max_ev = 3 * tc.cap;
	tc.ev = calloc(tc.max_ev, sizeof(*tc.ev));
	T_ASSERT(tc.nodes && tc.slots && tc.ev);
	/*
	 * Room for every cgroup's files to stay open: the library keeps them
	 * within the limit less a quarter of it for the rest of the process
	 * (its fd budget), and opens the others' at each cycle, which works
	 * too (60-tree-fallback tests it) but costs opens every cycle.
	 */
	need = fds_per * tc.cap * 4 / 3 + 512;
	T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (mode != CGSTREAM_MODE_SUBTREE && rl.rlim_cur < need) {
		/* root (the VM tests) may raise the hard limit too */
		struct rlimit want = { .rlim_cur = need, .rlim_max = need };

		if (want.rlim_max < rl.rlim_max)
			want.rlim_max = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) && rl.rlim_max > rl.rlim_cur) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		if (rl.rlim_cur < need)
			t_log("RLIMIT_NOFILE %llu: some cgroups' files are opened at each cycle",
			      (unsigned long long)rl.rlim_cur);
	}
	snprintf(tc.top, sizeof(tc.top), "%s/%s", t_cgroup_root(), t_name(name));
	if (tc.controllers) {
		char sc[PATH_MAX];

		snprintf(sc, sizeof(sc), "%s/cgroup.subtree_control", t_cgroup_root());
		if (t_write_file(sc, "+memory +io") < 0)
			t_skip("cannot enable memory and io below the root");
	}
	atexit(tc_cleanup);
	tc_build(n);
	tc.n_built = tc.n_nodes;
	if (tc.changes)
		tc_busy_start();
}

/* 1 and 2: open, the first batch, then @k more */
static void tc_open_and_batches(int k)
{
	uint64_t t0 = t_now_ms();
	size_t all = tc_alive();
	int n;

	T_EQ(cgstream_tree_open(tc.top, &tc.opts, &tc.t), 0);
	T_EQ(cgstream_tree_mode(tc.t), tc.mode);
	for (uint32_t c = CGSTREAM_CTRL_CPU; c <= CGSTREAM_CTRL_IO; c <<= 1)
		T_EQ(cgstream_tree_ctrl_mode(tc.t, c),
		     c == CGSTREAM_CTRL_CPU || (tc.controllers & c) ? tc.mode : -ENOENT);
	T_ASSERT(!strcmp(cgstream_tree_path(tc.t), tc.top));
	T_EQ(cgstream_tree_size(tc.t), all);
	t_log("%s tree of %zu cgroups opened in %llu ms", cgstream_mode_name(tc.mode), all,
	      (unsigned long long)(t_now_ms() - t0));
	n = tc_batch();
	T_EQ(n, 2 * all);	/* ADDED and a SAMPLE (or the first CHANGED) each */
	for (size_t i = 0; i < tc.n_nodes; i++)
		T_EQ(tc.nodes[i].added, 1);
	tc_every_one();
	for (int b = 0; b < k; b++) {
		n = tc_batch();
		if (tc.exact && !tc.changes)
			T_EQ(n, all);
		if (tc.changes)	/* some changed, not all of them */
			T_ASSERT(n > 0 && (size_t)n < all);
		tc_every_one();
	}
}

/* 3: made, removed, removed and made again, all while watching */
static void tc_churn(void)
{
	struct tc_node *made[12], *gone[10], *again_old[5], *again_new[5];
	size_t k = 0, last = tc.n_built - 1;	/* the build's last: leaves */
	char p[PATH_MAX];
	int rounds = 0;

	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof(p), "%s/l%d/new%d", tc.top, i % 10, i);
		made[k++] = tc_make(p);
	}
	snprintf(p, sizeof(p), "%s/newtop", tc.top);
	made[k++] = tc_make(p);
	strcat(p, "/child");	/* made right after its parent */
	made[k++] = tc_make(p);
	for (int i = 0; i < 10; i++) {
		gone[i] = &tc.nodes[last - (size_t)i];
		tc_remove(gone[i]);
	}
	for (int i = 0; i < 5; i++) {
		again_old[i] = &tc.nodes[last - 10 - (size_t)i];
		tc_remove(again_old[i]);
		again_new[i] = tc_make(again_old[i]->path);
		T_ASSERT(again_new[i]->id != again_old[i]->id);
	}
	/* the kernel's REMOVED records give every removed cgroup's last values */
	tc.want_final = tc.mode == CGSTREAM_MODE_SUBTREE && !getenv("FAKE_LOSE_EVERY");
	/* until every change is told, then three more batches */
	for (int after = 0; after < 3;) {
		bool done = true;

		T_ASSERT(rounds < 200);
		tc_batch();
		if (!after)
			rounds++;
		for (size_t i = 0; i < k; i++)
			done &= made[i]->added == 1;
		for (int i = 0; i < 10; i++)
			done &= gone[i]->removed == 1;
		for (int i = 0; i < 5; i++)
			done &= again_old[i]->removed == 1 && again_new[i]->added == 1;
		if (done) {
			if (after++)
				tc_every_one();
		}
	}
	t_log("churn: 12 made, 10 removed, 5 removed and made again: each told once, "
	      "within %d batch(es)%s", rounds, tc.want_final ? ", with final values" : "");
	tc.want_final = false;
}

/* 4: a batch in pieces of 7 */
static void tc_pieces(void)
{
	size_t want = tc_alive(), got = 0;
	uint64_t seq = 0;
	int n;

	for (size_t i = 0; i < tc.n_nodes; i++)
		tc.nodes[i].in_batch = 0;
	n = tc_next_events(7);
	T_ASSERT(n >= 0);
	for (;;) {
		bool next = false;

		for (int i = 0; i < n; i++) {
			tc_event(&tc.ev[i]);
			if (!seq)
				seq = tc.ev[i].sample.seq;
			/* changes: a batch of 7 times k events is not told from
			 * the next one's first piece but by its publication */
			next |= tc.changes && tc.ev[i].sample.seq != seq;
			if (tc.exact && !tc.changes)
				T_EQ(tc.ev[i].sample.seq, seq);
		}
		got += (size_t)n;
		if (tc.changes && (n < 7 || next))
			break;	/* as many as changed: the batch ends short */
		/* a cycle's worth is enough: in kernel mode the next cycle's
		 * samples follow without a seam, and where reading a cycle
		 * takes longer than the interval (60,000 files for 10,000
		 * cgroups under TCG, 1 s interval) there is always a next one:
		 * make stress, 2026-11-25, had no end in 28 minutes */
		if (n < 7 || got >= want)
			break;
		/* the rest is signalled (kernel mode: a batch of a multiple of
		 * 7 may end quiet, or run into the next cycle's) */
		if ((!tc.exact || tc.changes) && cgstream_tree_wait(tc.t, 0) == 0)
			break;
		T_EQ(cgstream_tree_wait(tc.t, 0), 1);
		n = cgstream_tree_process(tc.t, tc.ev, 7, sizeof(tc.ev[0]));
		T_ASSERT(n >= 0);
	}
	if (tc.exact && !tc.changes) {
		T_EQ(got, want);
		tc_every_one();
	}
	tc.seq = seq > tc.seq ? seq : tc.seq;
	t_log("a batch of %zu in pieces of 7", got);
}

/*
 * 5: @cycles batches, a cgroup made and removed every 100: fds and the
 * library's heap.  Measured from a warmed-up cycle to the last, at the
 * same tree, the temporary cgroup removed at both (at the end once its
 * REMOVED came, where the run ends in its life): no fd may stay open,
 * and the heap must be back where it was.  A long run (100 cycles or
 * more) is warm at cycle 70: after the temporary cgroup's first life
 * (30 to 60), and after the snapshot buffer's last doubling (a subtree
 * tree reads a full snapshot every 64 cycles at least, mode-subtree.c;
 * in the VM, 1,000 cgroups of cpu, memory and io, one doubled at cycle
 * 54; 10,000 of them, 4 MiB more by cycle 100 from a tenth of it,
 * 2026-12-02).  Its heap must be exactly the same.  A short one is warm
 * at a tenth of its cycles, before a buffer's or an array's first
 * growth perhaps: up to 1 MiB more, which a per-cycle leak of its
 * samples exceeds.  RSS is only logged (why: tc_heap_bytes(); +520 KiB over a
 * subtree tree's 130 cycles at the same heap, 2026-12-02).
 */
static void tc_long(int cycles)
{
	int period = cycles < 100 ? cycles : 100;
	bool long_run = cycles >= 100;
	int warm = long_run ? 70 : cycles / 10;
	long rss0 = 0, rss1, heap0 = 0, heap1;
	int fds0 = 0, fds1;
	struct tc_node *tmp = NULL;
	char p[PATH_MAX];

	for (int c = 0; c < cycles; c++) {
		if (c % period == period * 3 / 10) {
			snprintf(p, sizeof(p), "%s/l3/tmp%d", tc.top, c);
			tmp = tc_make(p);
		} else if (c % period == period * 6 / 10 && tmp) {
			tc_remove(tmp);
			tmp = NULL;
		}
		tc_batch();
		if (c == warm) {
			fds0 = t_count_fds(NULL);
			rss0 = tc_rss_kb();
			heap0 = tc_heap_bytes();
		}
	}
	/* the tree as it was at the warm cycle: without the temporary one */
	if (tmp) {
		tc_remove(tmp);
		for (int i = 0; i < 100 && !tmp->removed; i++)
			tc_batch();
		T_EQ(tmp->removed, 1);
		tc_batch();
	}
	fds1 = t_count_fds(NULL);
	rss1 = tc_rss_kb();
	heap1 = tc_heap_bytes();
	t_log("%d cycles: fds %d -> %d, heap %ld -> %ld bytes, RSS %ld -> %ld KiB", cycles,
	      fds0, fds1, heap0, heap1, rss0, rss1);
	if (tc.model_checks)
		t_log("the fake kernel's changes, each one CHANGED: %llu",
		      (unsigned long long)tc.model_checks);
	T_EQ(fds1, fds0);
	if (long_run)
		T_EQ(heap1, heap0);
	else
		T_ASSERT(heap1 - heap0 <= 1L << 20);
}

/* 6: everything removed, the root last */
static void tc_root_removed(void)
{
	size_t live = tc_alive();
	int n = 0, batches = 0;

	tc_busy_stop();
	for (size_t i = tc.n_nodes; i-- > 0;)
		if (tc.nodes[i].alive)
			tc_remove(&tc.nodes[i]);
	while ((n = tc_batch()) > 0) {
		T_ASSERT(++batches < 100);
		if (tc.nodes[0].removed)	/* the root's REMOVED: the last event */
			T_EQ(tc.ev[n - 1].sample.cgroup_id, tc.nodes[0].id);
	}
	T_EQ(n, -ENODEV);
	for (size_t i = 0; i < tc.n_nodes; i++)
		T_EQ(tc.nodes[i].removed, tc.nodes[i].added);
	T_EQ(cgstream_tree_process(tc.t, tc.ev, tc.max_ev, sizeof(tc.ev[0])), -ENODEV);
	T_EQ(cgstream_tree_size(tc.t), 0);
	cgstream_tree_close(tc.t);
	tc.t = NULL;
	t_log("root removed: %zu REMOVED, the root's last, then -ENODEV", live);
}

/* read syscalls of this process so far, or -1 (no task I/O accounting) */
static inline long long tc_syscr(void)
{
	char buf[1024], *p;

	if (t_read_file("/proc/self/io", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "syscr:");
	return p ? strtoll(p + 6, NULL, 10) : -1;
}

/*
 * SUBTREE: a batch costs a few reads whatever the tree's size: read
 * syscalls, or under tests/fake-kernel.so (whose own reads of cpu.stat
 * count there) its count of reads of the subtree file.
 */
static inline void tc_reads_per_batch(void)
{
	unsigned long (*fake)(void) = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
								     "fake_kernel_reads");
	long long before = fake ? (long long)fake() : tc_syscr(), after;

	if (before < 0) {
		t_log("no /proc/self/io: reads per batch not counted");
		return;
	}
	for (int i = 0; i < 10; i++)
		tc_batch();
	after = fake ? (long long)fake() : tc_syscr();
	t_log("10 batches of %zu cgroups: %lld %s", tc_alive(), after - before,
	      fake ? "reads of the subtree file" : "read syscalls");
	/* the subtree file (a read of the snapshot, and the read of 0 that
	 * completes it; a lost one's full snapshot two more; a publication
	 * made during a read, a retry: more of them on a loaded host), and
	 * (syscalls) the eventfd the set drains: a few per batch, whatever
	 * the number of cgroups (hundreds or more here), never one each */
	T_ASSERT(after - before <= (fake ? (getenv("FAKE_LOSE_EVERY") ? 80 : 50) : 100));
	T_ASSERT((size_t)(after - before) < tc_alive());
}

/* is @word one of the comma-separated words of @list? */
static inline bool tc_listed(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list;; p++) {
		if (!strncmp(p, word, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
		p = strchr(p, ',');
		if (!p)
			return false;
	}
}

/*
 * VM tests: all the checks on a @mode tree of @n cgroups, the kernel's
 * interval (or the fallback timer) at @interval_ms, @cycles in the long
 * run; in a child of its own, so that several runs share no state.
 */
static inline void tc_run(int mode, int n, uint32_t interval_ms, int cycles, const char *name)
{
	uint64_t start = t_now_ms();
	const char *only = getenv("CGSTREAM_TEST_MODES");
	int status;
	pid_t pid;

	/* $CGSTREAM_TEST_MODES: a comma list of the modes to run (default:
	 * all), to rerun one of make stress's hour-long trees */
	if (only && *only && !tc_listed(only, cgstream_mode_name(mode))) {
		t_log("== %s tree of %d cgroups: not in $CGSTREAM_TEST_MODES (%s)",
		      cgstream_mode_name(mode), n, only);
		return;
	}
	if (mode != CGSTREAM_MODE_FALLBACK)
		t_use_intervals(interval_ms);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		tc_setup(mode, n, interval_ms, name);
		tc_open_and_batches(5);
		if (mode == CGSTREAM_MODE_SUBTREE)
			tc_reads_per_batch();
		tc_churn();
		tc_pieces();
		tc_long(cycles);
		tc_root_removed();
		tc_cleanup();
		fflush(stdout);
		_exit(0);	/* not the parent's atexit handlers */
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		t_log("== %s tree of %d cgroups: skipped", cgstream_mode_name(mode), n);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		T_FAIL("%s tree of %d cgroups: failed (status 0x%x)", cgstream_mode_name(mode), n,
		       status);
	t_log("== %s tree of %d cgroups (%s%s), %u ms interval, %d cycles: passed in %llu s",
	      cgstream_mode_name(mode), n, tc_controllers ? "cpu, memory, io" : "cpu",
	      tc_report == CGSTREAM_REPORT_CHANGES ? ", changes" : "", interval_ms, cycles,
	      (unsigned long long)(t_now_ms() - start) / 1000);
}

/*
 * The larger tree of the VM tests: 10,000 (or $CGSTREAM_TEST_CGROUPS)
 * when $CGSTREAM_TEST_SCALE asks for it (make stress: tests/stress/in-vm.sh),
 * else 0: make check runs 1,000-cgroup trees only.
 */
static inline int tc_big(void)
{
	const char *e = getenv("CGSTREAM_TEST_CGROUPS");
	const char *scale = getenv("CGSTREAM_TEST_SCALE");

	if (!scale || !*scale || !strcmp(scale, "0"))
		return 0;
	return e && *e ? atoi(e) : 10000;
}

#endif
