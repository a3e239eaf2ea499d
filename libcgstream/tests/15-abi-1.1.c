// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A caller built against the 1.1 header (tests/abi-1.1/cgstream.h, the
 * header as 1.1 shipped it: this test is compiled against it, not against
 * include/): its structs have the 1.1 sizes and it passes them.  The 1.2
 * library must give it 1.1's behaviour: options without .controllers
 * (whatever bytes follow them in the caller's memory) read cpu only;
 * events are strided by the 1.1 size and nothing past it is written;
 * samples as 1.1 had them (the cgroup id); the version's major is the
 * same and its minor not older.
 */
#include <assert.h>
#include <sys/stat.h>

#include "testutil.h"

#if CGSTREAM_VERSION_MAJOR != 1 || CGSTREAM_VERSION_MINOR != 1
#error "15-abi-1.1 must be compiled against the 1.1 header (tests/abi-1.1)"
#endif

static_assert(sizeof(struct cgstream_sample) == 112, "1.1 sample size");
static_assert(sizeof(struct cgstream_event) == 144, "1.1 event size");
static_assert(sizeof(struct cgstream_opts) == 24, "1.1 opts size");

#define CANARY 0xa5
#define N_EV 8

/* the 1.1 options, followed by bytes that are not the library's to read */
struct opts_and_more {
	struct cgstream_opts o;
	uint32_t after[4];
};

static void check_canary(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			T_FAIL("%s: byte %zu after the 1.1 structs was written (0x%02x)", what, i,
			       p[i]);
}

static uint64_t dir_ino(const char *path)
{
	struct stat st;

	T_EQ(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static void test_version(void)
{
	const char *v = cgstream_version();
	int major = 0, minor = 0;

	T_ASSERT(v && sscanf(v, "%d.%d.", &major, &minor) == 2);
	T_EQ(major, CGSTREAM_VERSION_MAJOR);
	T_ASSERT(minor >= CGSTREAM_VERSION_MINOR);
	t_log("built for %d.%d, running %s", CGSTREAM_VERSION_MAJOR, CGSTREAM_VERSION_MINOR, v);
}

static void test_stream(const char *root, const struct cgstream_opts *o)
{
	struct cgstream_sample s;
	struct cgstream *st;

	T_EQ(cgstream_open("/", o, &st), 0);
	T_EQ(cgstream_mode(st), CGSTREAM_MODE_FALLBACK);
	T_EQ(cgstream_wait(st, 5000), 1);
	T_EQ(cgstream_read(st, &s, sizeof(s)), 0);
	T_ASSERT(s.present & CGSTREAM_F_USAGE);
	T_ASSERT(s.present & CGSTREAM_F_CGROUP_ID);
	T_EQ(s.cgroup_id, dir_ino(root));
	cgstream_close(st);
}

static void test_group(const char *root, const struct cgstream_opts *o)
{
	static struct cgstream_event ev[N_EV + 1];
	struct cgstream_group *g;
	int n;

	T_EQ(cgstream_group_new(o, &g), 0);
	T_EQ(cgstream_group_add(g, root, (void *)ev), 0);
	memset(ev, CANARY, sizeof(ev));
	n = t_group_batch(g, ev, N_EV, sizeof(ev[0]));
	T_EQ(n, 1);
	T_EQ(ev[0].type, CGSTREAM_EVENT_SAMPLE);
	T_ASSERT(ev[0].userdata == (void *)ev);
	T_ASSERT(ev[0].sample.present & CGSTREAM_F_USAGE);
	T_EQ(ev[0].sample.cgroup_id, dir_ino(root));
	T_EQ(ev[0].parent_id, 0);
	check_canary((unsigned char *)&ev[1], sizeof(ev) - sizeof(ev[0]),
		     "cgstream_group_process");
	cgstream_group_free(g);
}

static void test_tree(const char *root, const struct cgstream_opts *o)
{
	static struct cgstream_event ev[N_EV + 1];
	char top[PATH_MAX], kid[PATH_MAX];
	struct cgstream_tree *t;
	int n, added = 0, samples = 0;

	if (t_cg_make(root, t_name("abi11"), top, sizeof(top)) < 0)
		return;
	T_EQ(t_cg_make(top, "kid", kid, sizeof(kid)), 0);
	T_EQ(cgstream_tree_open(top, o, &t), 0);
	memset(ev, CANARY, sizeof(ev));
	n = t_tree_batch(t, ev, N_EV, sizeof(ev[0]));
	T_EQ(n, 4);
	for (int i = 0; i < n; i++) {
		T_ASSERT(!strcmp(ev[i].path, i % 2 ? kid : top));
		T_EQ(ev[i].sample.cgroup_id, dir_ino(ev[i].path));
		T_EQ(ev[i].parent_id, i % 2 ? dir_ino(top) : 0);
		if (ev[i].type == CGSTREAM_EVENT_ADDED) {
			T_EQ(ev[i].sample.present, CGSTREAM_F_CGROUP_ID);
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
	cgstream_tree_close(t);
	T_EQ(t_cg_remove(kid), 0);
	T_EQ(t_cg_remove(top), 0);
}

int main(void)
{
	struct opts_and_more om;
	const char *root;

	test_version();
	root = t_cgroup_root();
	if (!root)
		t_skip("no cgroup2 mount: only the version was checked");
	/* what follows the 1.1 struct in memory would be bad .controllers */
	memset(&om, 0xff, sizeof(om));
	om.o = (struct cgstream_opts){ .sz = sizeof(om.o), .mode = CGSTREAM_MODE_FALLBACK,
				       .fallback_interval_ms = 20 };
	test_stream(root, &om.o);
	test_group(root, &om.o);
	test_tree(root, &om.o);
	t_log("abi-1.1: all passed");
	return 0;
}
