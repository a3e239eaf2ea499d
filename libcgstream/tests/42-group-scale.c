// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A fallback group of 10,000 cgroups ($CGSTREAM_TEST_CGROUPS, 500 under
 * CGSTREAM_TEST_FAST): adding to and removing from a large group cost what
 * they cost on a small one (no linear scan per call), every batch holds every cgroup
 * once with the cgroup's id, a batch larger than the caller's array comes
 * in pieces, and freeing the group gives back every fd.
 */
#include <sys/resource.h>

#include "testutil.h"

#define TICK_MS 250
#define CHUNK 1000	/* adds and removes timed per chunk */

static char parent[PATH_MAX];
static char (*paths)[64];
static uint64_t *ids;
static unsigned int *seen;
static int n_made;

static void cleanup(void)
{
	for (int i = n_made - 1; i >= 0; i--)
		rmdir(paths[i]);
	if (parent[0])
		rmdir(parent);
}

static int wanted(void)
{
	const char *e = getenv("CGSTREAM_TEST_CGROUPS");

	if (e && *e)
		return atoi(e);
	return getenv("CGSTREAM_TEST_FAST") ? 500 : 10000;
}

/* room for @n more fds, or skip */
static void need_fds(int n)
{
	struct rlimit rl;

	T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < (rlim_t)n + 64)
		t_skip("RLIMIT_NOFILE is too low for this many cgroups");
}

int main(void)
{
	static struct cgstream_event ev[1000];
	struct cgstream_opts fb = {
		.sz = sizeof(fb), .mode = CGSTREAM_MODE_FALLBACK, .fallback_interval_ms = TICK_MS,
	};
	const char *root = t_cgroup_root();
	uint64_t t, first_add = 0, last_add = 0, first_rm = 0, last_rm = 0;
	struct cgstream_group *g;
	int n = wanted(), fds_before;

	if (!root)
		t_skip("no cgroup2 mount");
	T_ASSERT(n > 0);
	need_fds(n);
	atexit(cleanup);
	paths = calloc((size_t)n, sizeof(*paths));
	ids = calloc((size_t)n, sizeof(*ids));
	seen = calloc((size_t)n, sizeof(*seen));
	T_ASSERT(paths && ids && seen);
	if (t_cg_make(root, t_name("scale"), parent, sizeof(parent)) < 0)
		t_skip("cannot create cgroups here");
	t = t_now_ms();
	for (; n_made < n; n_made++) {
		struct stat st;
		char name[16];

		snprintf(name, sizeof(name), "s%05d", n_made);
		T_EQ(t_cg_make(parent, name, paths[n_made], sizeof(paths[n_made])), 0);
		T_EQ(stat(paths[n_made], &st), 0);
		ids[n_made] = st.st_ino;
	}
	t_log("%d cgroups made in %llu ms", n, (unsigned long long)(t_now_ms() - t));

	fds_before = t_count_fds(NULL);
	T_EQ(cgstream_group_new(&fb, &g), 0);
	for (int i = 0; i < n; i++) {
		t = t_now_us();
		T_EQ(cgstream_group_add(g, paths[i], &seen[i]), 0);
		t = t_now_us() - t;
		if (i < CHUNK)
			first_add += t;
		else if (i >= n - CHUNK)
			last_add += t;
	}
	T_EQ(cgstream_group_add(g, paths[n / 2], NULL), -EEXIST);
	T_EQ(cgstream_group_size(g), n);

	/* three full batches, each cgroup once per batch, in pieces of 1000 */
	for (int b = 0; b < 3; b++) {
		uint64_t seq = 0;
		int got = 0;

		while (got < n) {
			int k;

			T_EQ(cgstream_group_wait(g, 5000), 1);
			k = cgstream_group_process(g, ev, 1000, sizeof(ev[0]));
			T_ASSERT(k >= 0);
			for (int i = 0; i < k; i++) {
				unsigned int *s = ev[i].userdata;
				long idx = s - seen;

				T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
				T_ASSERT(idx >= 0 && idx < n);
				T_EQ(ev[i].sample.cgroup_id, ids[idx]);
				if (!seq)
					seq = ev[i].sample.seq;
				T_EQ(ev[i].sample.seq, seq);
				(*s)++;
			}
			got += k;
		}
		T_EQ(got, n);
		for (int i = 0; i < n; i++)
			T_EQ(seen[i], (unsigned int)b + 1);
	}

	/* the newest first: a list searched from the front would scan it all */
	for (int k = 0; k < n; k++) {
		t = t_now_us();
		T_EQ(cgstream_group_remove(g, paths[n - 1 - k]), 0);
		t = t_now_us() - t;
		if (k < CHUNK)
			first_rm += t;
		else if (k >= n - CHUNK)
			last_rm += t;
	}
	T_EQ(cgstream_group_size(g), 0);
	cgstream_group_free(g);
	T_EQ(t_count_fds(NULL), fds_before);

	if (n >= 2 * CHUNK) {
		t_log("add: first %d %llu us, last %d %llu us; remove: first %llu us, last %llu us",
		      CHUNK, (unsigned long long)first_add, CHUNK, (unsigned long long)last_add,
		      (unsigned long long)first_rm, (unsigned long long)last_rm);
		/*
		 * A scan of the members per call would make the thousand calls
		 * on a group of 10,000 cost ~10x those on a small one; the
		 * margin is for a busy machine.
		 */
		T_ASSERT(last_add <= 3 * first_add + 20000);
		T_ASSERT(first_rm <= 3 * last_rm + 20000);
	}
	t_log("group-scale: all passed (%d cgroups)", n);
	return 0;
}
