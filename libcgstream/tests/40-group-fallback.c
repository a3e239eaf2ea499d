// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A group in fallback mode against the host's cgroup2 (io_uring reads of
 * cpu.stat on a group timer): one batch per tick with every cgroup in it,
 * one seq per batch, growth under a burner, REMOVED exactly once for an
 * rmdir'ed cgroup, add/remove while running, no spinning, batches larger
 * than the caller's array.
 */
#include "testutil.h"

#define TICK_MS 200
#define N_CHILDREN 24

static struct cgstream_opts fb = {
	.sz = sizeof(fb), .mode = CGSTREAM_MODE_FALLBACK, .fallback_interval_ms = TICK_MS,
};

struct member {
	char path[PATH_MAX];
	bool created, removed_seen, gone;
	unsigned int samples;
	struct cgstream_sample last;
};

static struct member members[N_CHILDREN + 1];
static size_t n_members;

static struct member *member_of(const struct cgstream_event *e)
{
	struct member *m = e->userdata;

	T_ASSERT(m >= members && m < members + n_members);
	T_ASSERT(!strcmp(e->path, m->path));
	return m;
}

int main(void)
{
	struct cgstream_event ev[64];
	const char *root = t_cgroup_root();
	struct cgstream_group *g;
	uint64_t seq = 0;
	unsigned int batches = 0, wakes = 0, empty = 0;
	pid_t burner = -1;
	int n, created = 0;
	bool uring;

	if (!root)
		t_skip("no cgroup2 mount");

	T_EQ(cgstream_group_new(&fb, &g), 0);
	T_EQ(cgstream_group_mode(g), CGSTREAM_MODE_FALLBACK);
	uring = t_count_fds("anon_inode:[io_uring]") > 0;
	T_ASSERT(cgstream_group_fd(g) >= 0);

	snprintf(members[0].path, sizeof(members[0].path), "%s", root);
	n_members = 1;
	for (int i = 0; i < N_CHILDREN; i++) {
		struct member *m = &members[n_members];
		char name[32];

		snprintf(name, sizeof(name), "g%d", i);
		if (t_cg_make(root, t_name(name), m->path, sizeof(m->path)) < 0)
			break;
		m->created = true;
		n_members++;
		created++;
	}
	if (!created)
		t_log("cannot create child cgroups: only the root is watched");
	for (size_t i = 0; i < n_members; i++)
		T_EQ(cgstream_group_add(g, members[i].path, &members[i]), 0);
	T_EQ(cgstream_group_size(g), n_members);
	if (created)
		burner = t_burner(members[1].path);

	/* batches: every member once, one seq per batch, seq +1 */
	for (int b = 0; b < 6; b++) {
		n = t_group_batch(g, ev, 64, sizeof(ev[0]));
		T_EQ(n, n_members);
		batches++;
		for (int i = 0; i < n; i++) {
			struct member *m = member_of(&ev[i]);

			T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
			T_EQ(ev[i].sample.seq, ev[0].sample.seq);
			T_EQ(ev[i].sample.flush_time_usec, ev[0].sample.flush_time_usec);
			T_ASSERT(ev[i].sample.present & CGSTREAM_F_USAGE);
			if (m->samples)
				T_ASSERT(ev[i].sample.usage_usec >= m->last.usage_usec);
			m->samples++;
			m->last = ev[i].sample;
		}
		T_EQ(ev[0].sample.seq, seq + 1);
		seq = ev[0].sample.seq;

		/* right after a batch: nothing pending, the fd is quiet */
		T_EQ(cgstream_group_process(g, ev, 64, sizeof(ev[0])), 0);
		T_EQ(cgstream_group_wait(g, 0), 0);
	}
	for (size_t i = 0; i < n_members; i++)
		T_EQ(members[i].samples, 6);

	if (created) {
		struct member *burning = &members[1];
		uint64_t before = burning->last.usage_usec;

		for (int b = 0; b < 5; b++) {
			n = t_group_batch(g, ev, 64, sizeof(ev[0]));
			for (int i = 0; i < n; i++)
				member_of(&ev[i])->last = ev[i].sample;
			seq = ev[0].sample.seq;
		}
		t_log("burner cgroup: +%llu us over 5 ticks of %d ms",
		      (unsigned long long)(burning->last.usage_usec - before), TICK_MS);
		T_ASSERT(burning->last.usage_usec > before + 50000);
		t_kill(burner);
		burner = -1;
	}

	/* wake-ups: over ~10 ticks the fd wakes about once per tick */
	{
		uint64_t start = t_now_ms(), s0 = seq;

		while (t_now_ms() - start < 10 * TICK_MS) {
			if (cgstream_group_wait(g, 100) != 1)
				continue;
			wakes++;
			n = cgstream_group_process(g, ev, 64, sizeof(ev[0]));
			T_ASSERT(n >= 0);
			if (n) {
				T_EQ(ev[0].sample.seq, seq + 1);
				seq = ev[0].sample.seq;
			} else {
				empty++;
			}
		}
		t_log("%u wake-ups (%u without events) for %llu ticks, reads %s", wakes, empty,
		      (unsigned long long)(seq - s0), uring ? "through io_uring" : "plain");
		/*
		 * Plain reads: one wake-up per tick, with the batch.  io_uring:
		 * the tick (the reads are queued, no events) and the batch.
		 */
		T_ASSERT(empty <= (uring ? seq - s0 + 1 : 1));
		T_ASSERT(seq - s0 >= 5);
	}

	if (created >= 3) {
		struct member *gone = &members[2], *dropped = &members[3];
		unsigned int removed_events = 0;

		/* the caller drops one: no event for it, ever */
		T_EQ(cgstream_group_remove(g, dropped->path), 0);
		T_EQ(cgstream_group_remove(g, dropped->path), -ENOENT);
		dropped->gone = true;
		/* the kernel drops another */
		T_EQ(t_cg_remove(gone->path), 0);
		gone->created = false;

		for (int b = 0; b < 4; b++) {
			n = t_group_batch(g, ev, 64, sizeof(ev[0]));
			for (int i = 0; i < n; i++) {
				struct member *m = member_of(&ev[i]);

				T_ASSERT(m != dropped);
				if (ev[i].type == CGSTREAM_EVENT_REMOVED) {
					T_ASSERT(m == gone);
					removed_events++;
				} else {
					T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
					T_ASSERT(m != gone || removed_events == 0);
				}
			}
		}
		T_EQ(removed_events, 1);
		T_EQ(cgstream_group_size(g), n_members - 2);
		T_EQ(cgstream_group_remove(g, gone->path), -ENOENT);

		/* and back: a re-added cgroup reports again */
		T_EQ(cgstream_group_add(g, dropped->path, dropped), 0);
		T_EQ(cgstream_group_add(g, dropped->path, dropped), -EEXIST);
		n = t_group_batch(g, ev, 64, sizeof(ev[0]));
		T_EQ(n, n_members - 1);
	}

	/* a batch larger than the caller's array comes in pieces, nothing lost */
	if (created >= 8) {
		size_t size = cgstream_group_size(g), got = 0;

		n = t_group_batch(g, ev, 5, sizeof(ev[0]));
		T_EQ(n, 5);
		got = 5;
		while (got < size) {
			T_EQ(cgstream_group_wait(g, 0), 1);	/* the rest is signalled */
			n = cgstream_group_process(g, ev, 5, sizeof(ev[0]));
			T_ASSERT(n > 0);
			for (int i = 0; i < n; i++)
				T_EQ(ev[i].sample.seq, ev[0].sample.seq);
			got += (size_t)n;
		}
		T_EQ(got, size);
	}

	/* freed with reads and polls in flight */
	cgstream_group_free(g);
	t_kill(burner);
	for (size_t i = 1; i < n_members; i++)
		if (members[i].created)
			T_EQ(t_cg_remove(members[i].path), 0);
	t_log("group-fallback: all passed (%u batches checked)", batches);
	return 0;
}
