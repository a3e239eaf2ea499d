// SPDX-License-Identifier: GPL-2.0-only
/*
 * What an agent reads, the BPF way below ships since August 2026 (its
 * bpfmap style): one sleepable cgroup iterator pass per agent over a
 * subtree, in pre-order, that flushes once and takes each cgroup's record
 * (agent.bpf.h: cpu, every memory.stat item, memory.current,
 * memory.events) into a hash map keyed by cgroup id that the reader
 * drains with one batch lookup after the pass.  io.stat is not
 * here: below reads it per cgroup from userspace (cgbench does too).
 *
 * The item lists (which enum values, how many) are set by the loader
 * before load, from the running kernel's BTF and the keys its memory.stat
 * prints: the enums' values change with the kernel's version and
 * configuration.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgstat.h"
#include "bstat.bpf.h"
#include "agent.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* the loader sizes it to the subtree */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct agent_rec);
} agent_stats SEC(".maps");

/* the record is built here (it does not fit on the stack); one pass at a
 * time per loaded program, and nothing sleeps while it is filled */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_rec);
} scratch SEC(".maps");

SEC("iter.s/cgroup")
int dump_agent(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct agent_rec *r;
	__u32 zero = 0;

	if (!cgrp)
		return 0;
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	agent_fill(cgrp, r, ctx->meta->seq_num == 0);
	bpf_map_update_elem(&agent_stats, &r->cgroup_id, r, BPF_ANY);
	return 0;
}
