// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A caller built against the 1.0 header: its structs are the 1.0 layouts
 * (copied here, as such a binary has them compiled in) and it passes their
 * sizes (to the 1.1 tree too).  Every call that fills a sized struct must
 * write the 1.0 prefix
 * only (the bytes after it are the caller's), stride arrays by the 1.0
 * size, and keep `present` to the 1.0 fields.  The 1.1 sizes get the
 * cgroup id (the inode of the cgroup's directory); a larger future size
 * gets zeros at the end; less than 1.0 is -EINVAL.
 */
#include <assert.h>
#include <sys/stat.h>

#include "testutil.h"

/* the 1.0 layouts, verbatim */
struct sample_1_0 {
	uint64_t present, seq, flush_time_usec, usage_usec, user_usec, system_usec,
		 nice_usec, nr_periods, nr_throttled, throttled_usec, nr_bursts,
		 burst_usec, flush_missed;
};

struct event_1_0 {
	int type;
	int error;
	const char *path;
	void *userdata;
	struct sample_1_0 sample;
};

static_assert(sizeof(struct sample_1_0) == 104, "1.0 sample size");
static_assert(sizeof(struct event_1_0) == 128, "1.0 event size");
static_assert(sizeof(struct cgstream_sample) == 112, "1.1 sample size");
static_assert(offsetof(struct cgstream_event, controllers) == 144, "1.1 event size");

#define CANARY 0xa5
#define N_EV 8

/* a 1.0 struct followed by bytes that belong to someone else */
struct guarded_sample {
	struct sample_1_0 s;
	unsigned char after[64];
};

static const uint64_t fields_1_0 = (1u << 12) - 1;	/* CGSTREAM_F_SEQ..FLUSH_MISSED */

static void check_canary(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			T_FAIL("%s: byte %zu after the 1.0 struct was written (0x%02x)", what, i, p[i]);
}

static uint64_t dir_ino(const char *path)
{
	struct stat st;

	T_EQ(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static void test_version(void)
{
	char want[32];
	const char *v = cgstream_version();

	T_ASSERT(v != NULL);
	snprintf(want, sizeof(want), "%d.%d.", CGSTREAM_VERSION_MAJOR, CGSTREAM_VERSION_MINOR);
	if (strncmp(v, want, strlen(want)) != 0)
		T_FAIL("cgstream_version() = \"%s\", header says %d.%d", v,
		       CGSTREAM_VERSION_MAJOR, CGSTREAM_VERSION_MINOR);
	T_ASSERT(!strcmp(cgstream_mode_name(CGSTREAM_MODE_SUBTREE), "subtree"));
	t_log("cgstream_version() = %s", v);
}

static void test_parse(void)
{
	const char *t = "usage_usec 5\nuser_usec 3\nsystem_usec 2\n";
	struct guarded_sample g;
	struct cgstream_sample s;
	unsigned char big[sizeof(s) + 32];

	memset(&g, CANARY, sizeof(g));
	T_EQ(cgstream_parse(t, strlen(t), (struct cgstream_sample *)&g.s, sizeof(g.s)), 0);
	check_canary(g.after, sizeof(g.after), "cgstream_parse");
	T_EQ(g.s.usage_usec, 5);
	T_EQ(g.s.user_usec, 3);
	T_EQ(g.s.present & ~fields_1_0, 0);
	T_EQ(cgstream_parse(t, strlen(t), (struct cgstream_sample *)&g.s, sizeof(g.s) - 1), -EINVAL);

	memset(big, CANARY, sizeof(big));
	T_EQ(cgstream_parse(t, strlen(t), (struct cgstream_sample *)big, sizeof(big)), 0);
	for (size_t i = sizeof(s); i < sizeof(big); i++)
		T_EQ(big[i], 0);
}

static void test_stream(const char *root, const struct cgstream_opts *o)
{
	struct guarded_sample g;
	struct cgstream_sample s;
	struct cgstream *st;

	T_EQ(cgstream_open("/", o, &st), 0);
	T_EQ(cgstream_wait(st, 5000), 1);
	memset(&g, CANARY, sizeof(g));
	T_EQ(cgstream_read(st, (struct cgstream_sample *)&g.s, sizeof(g.s)), 0);
	check_canary(g.after, sizeof(g.after), "cgstream_read");
	T_ASSERT(g.s.present & CGSTREAM_F_USAGE);
	T_EQ(g.s.present & ~fields_1_0, 0);
	T_EQ(cgstream_read(st, (struct cgstream_sample *)&g.s, sizeof(g.s) - 8), -EINVAL);

	/* the 1.1 size: the id of the cgroup's directory */
	T_EQ(cgstream_wait(st, 5000), 1);
	T_EQ(cgstream_read(st, &s, sizeof(s)), 0);
	T_ASSERT(s.present & CGSTREAM_F_CGROUP_ID);
	T_EQ(s.cgroup_id, dir_ino(root));
	cgstream_close(st);
}

static void test_group(const char *root, const struct cgstream_opts *o)
{
	static struct event_1_0 ev[N_EV + 1];
	struct cgstream_event ev11[4];
	char paths[3][PATH_MAX];
	int tags[3], made = 0, n;
	struct cgstream_group *g;

	T_EQ(cgstream_group_new(o, &g), 0);
	snprintf(paths[0], sizeof(paths[0]), "%s", root);
	for (int i = 1; i < 3; i++)
		if (t_cg_make(root, t_name(i == 1 ? "abi1" : "abi2"), paths[i], sizeof(paths[i])) == 0)
			made = i;
	for (int i = 0; i <= made; i++)
		T_EQ(cgstream_group_add(g, paths[i], &tags[i]), 0);

	memset(ev, CANARY, sizeof(ev));
	n = t_group_batch(g, ev, N_EV, sizeof(ev[0]));
	T_EQ(n, made + 1);
	for (int i = 0; i < n; i++) {
		int k = (int *)ev[i].userdata - tags;

		T_ASSERT(k >= 0 && k <= made);
		T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
		T_ASSERT(!strcmp(ev[i].path, paths[k]));
		T_ASSERT(ev[i].sample.present & CGSTREAM_F_USAGE);
		T_EQ(ev[i].sample.present & ~fields_1_0, 0);
		T_EQ(ev[i].sample.seq, ev[0].sample.seq);
	}
	/* every slot after the last one written is untouched */
	check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]),
		     "cgstream_group_process");

	/* a removed cgroup: REMOVED through the 1.0 size too */
	if (made) {
		int removed = 0;

		T_EQ(t_cg_remove(paths[made]), 0);
		for (int b = 0; b < 3 && !removed; b++) {
			n = t_group_batch(g, ev, N_EV, sizeof(ev[0]));
			for (int i = 0; i < n; i++)
				if (ev[i].type == CGSTREAM_EVENT_REMOVED) {
					T_ASSERT(ev[i].userdata == &tags[made]);
					T_EQ(ev[i].sample.present, 0);
					removed++;
				}
		}
		T_EQ(removed, 1);
		made--;
	}

	/* the 1.1 size: ids, and a group's parent_id is 0 */
	do {
		T_ASSERT(cgstream_group_wait(g, 5000) >= 0);
		n = cgstream_group_process(g, ev11, 4, sizeof(ev11[0]));
		T_ASSERT(n >= 0);
	} while (n == 0);
	for (int i = 0; i < n; i++) {
		int k = (int *)ev11[i].userdata - tags;

		T_EQ(ev11[i].type, CGSTREAM_EVENT_SAMPLE);
		T_ASSERT(ev11[i].sample.present & CGSTREAM_F_CGROUP_ID);
		T_EQ(ev11[i].sample.cgroup_id, dir_ino(paths[k]));
		T_EQ(ev11[i].parent_id, 0);
	}
	cgstream_group_free(g);
	for (int i = 1; i <= made; i++)
		T_EQ(t_cg_remove(paths[i]), 0);
}

/* the 1.1 tree, called with the 1.0 event size: ADDED, then SAMPLEs */
static void test_tree(const char *root, const struct cgstream_opts *o)
{
	static struct event_1_0 ev[N_EV + 1];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int n, added = 0, samples = 0;

	if (t_cg_make(root, t_name("abitree"), top, sizeof(top)) < 0)
		return;
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, o, &t), 0);
	memset(ev, CANARY, sizeof(ev));
	n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
	T_EQ(n, 4);
	for (int i = 0; i < n; i++) {
		T_ASSERT(!strcmp(ev[i].path, i % 2 ? kid : top));
		T_EQ(ev[i].sample.present & ~fields_1_0, 0);
		if (ev[i].type == CGSTREAM_EVENT_ADDED) {
			T_EQ(ev[i].sample.present, 0);	/* only the id, which 1.0 lacks */
			added++;
		} else {
			T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
			T_ASSERT(ev[i].sample.present & CGSTREAM_F_USAGE);
			samples++;
		}
	}
	T_EQ(added, 2);
	T_EQ(samples, 2);
	check_canary((unsigned char *)&ev[n], sizeof(ev) - (size_t)n * sizeof(ev[0]),
		     "cgstream_tree_process");
	T_EQ(cgstream_tree_process(t, (struct cgstream_event *)ev, N_EV, sizeof(ev[0]) - 1),
	     -EINVAL);
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(kid), 0);
	T_EQ(t_cg_remove(top), 0);
}

int main(void)
{
	struct cgstream_opts o = {
		.sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK, .fallback_interval_ms = 20,
	};
	const char *root;

	test_version();
	test_parse();
	root = t_cgroup_root();
	if (!root)
		t_skip("no cgroup2 mount: only the parser and version were checked");
	test_stream(root, &o);
	test_group(root, &o);
	test_tree(root, &o);
	t_log("abi-1.0: all passed");
	return 0;
}
