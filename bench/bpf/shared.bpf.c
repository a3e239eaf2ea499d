// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shared BPF collector, the design a kernel maintainer would propose
 * against the series: one privileged sleepable cgroup iterator pass per
 * interval over the subtree, in pre-order, flushing once (agent.bpf.h, on
 * the pass's first cgroup), that writes each cgroup's agent record (cpu,
 * every memory.stat item, memory.current, memory.events: what agent.bpf.c
 * takes per agent) into a BPF_F_MMAPABLE array.  Every agent maps that
 * array (PROT_READ) and reads the records without a system call.
 *
 * The layout and the consistency protocol are cgstat.h's (struct
 * shared_hdr): slot 0 the header, slot 1 + i the pass's i-th cgroup.  This
 * program keeps the seqcount: odd at the pass's first cgroup, even in the
 * iterator's last call (ctx->cgroup NULL, after the walk), both with an
 * atomic add (a full barrier), so an agent that sees a record of the pass
 * sees seq odd or newer.  The collector's user space only sets the
 * header's constants and freezes the map before the first pass (see
 * cgbench.c's collector: a BPF map cannot be mmapped through a read-only
 * fd, so agents hold read-write fds, and only a frozen map keeps them from
 * writing).  Passes never overlap: the collector reads one pass at a time
 * from one thread (and the walk itself runs under cgroup_mutex).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgstat.h"
#include "bstat.bpf.h"
#include "agent.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* the loader sets max_entries to 1 + its slots */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shared_rec);
} shared_recs SEC(".maps");

/* the walk's end: seq even, if this pass made it odd (the iterator's end may call twice) */
static __always_inline void pass_end(struct shared_hdr *h)
{
	if (h->seq & 1) {
		h->pass_end_ns = bpf_ktime_get_ns();
		__sync_fetch_and_add(&h->seq, 1);
	}
}

/*
 * The pass's start: seq odd (from a pass that failed midway and left it
 * odd, the next odd value: no agent ever takes that one), counts zeroed
 */
static __always_inline void pass_start(struct shared_hdr *h)
{
	__sync_fetch_and_add(&h->seq, (h->seq & 1) ? 2 : 1);
	h->pass_start_ns = bpf_ktime_get_ns();
	h->nr_visited = 0;
	h->nr_records = 0;
	h->flags = 0;
}

SEC("iter.s/cgroup")
int collect(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct shared_hdr *h;
	struct shared_rec *r;
	__u32 zero = 0, slot;
	__u64 i;

	h = bpf_map_lookup_elem(&shared_recs, &zero);
	if (!h)
		return 0;
	if (!cgrp) {
		pass_end(h);
		return 0;
	}
	if (ctx->meta->seq_num == 0)
		pass_start(h);
	/*
	 * The pass's own count, not meta->seq_num: the iterator gives a
	 * removed (dying) cgroup a seq_num without running the program
	 */
	i = h->nr_visited++;
	slot = (__u32)i + 1;
	r = i < h->slots ? bpf_map_lookup_elem(&shared_recs, &slot) : NULL;
	if (!r) {
		h->flags |= SHARED_TRUNCATED;
		return 0;
	}
	r->pass_seq = h->seq;
	agent_fill(cgrp, &r->rec, i == 0);
	if (i == 0)
		h->pass_ns = bpf_ktime_get_ns();
	h->nr_records = i + 1;
	return 0;
}
