// SPDX-License-Identifier: GPL-2.0-only
/*
 * What an agent reads, the BPF way below ships since August 2026 (its
 * bpfmap style): one sleepable cgroup iterator pass over a subtree, in
 * pre-order.  On the first cgroup it flushes once (css_rstat_flush for the
 * base stats, bpf_mem_cgroup_flush_stats for memcg); then, per cgroup,
 * bstat's cputime (as cgstat.bpf.c), every memory.stat item through
 * bpf_mem_cgroup_page_state / bpf_mem_cgroup_vm_events, memory.current
 * through bpf_mem_cgroup_usage and memory.events through
 * bpf_mem_cgroup_memory_events, into a hash map keyed by cgroup id that
 * the reader drains with one batch lookup after the pass.  io.stat is not
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

char LICENSE[] SEC("license") = "GPL";

extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym;
extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym;
extern unsigned long bpf_mem_cgroup_vm_events(struct mem_cgroup *memcg,
					      enum vm_event_item event) __ksym;
extern unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg) __ksym;
extern unsigned long bpf_mem_cgroup_memory_events(struct mem_cgroup *memcg,
						  enum memcg_memory_event event) __ksym;

/* set by the loader */
const volatile bool want_cpu = true;
const volatile bool want_mem = true;
const volatile __u32 nr_state, nr_vmev, nr_memev;
const volatile __u32 state_idx[AGENT_MAX_STATE];
const volatile __u32 vmev_idx[AGENT_MAX_VMEV];
const volatile __u32 memev_idx[AGENT_MAX_MEMEV];

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

static __always_inline void fill_mem(struct mem_cgroup *memcg, struct agent_rec *r)
{
	__u32 i;

	r->has_mem = 1;
	r->nr_state = nr_state;
	r->nr_vmev = nr_vmev;
	r->nr_memev = nr_memev;
	for (i = 0; i < AGENT_MAX_STATE && i < nr_state; i++)
		r->state[i] = bpf_mem_cgroup_page_state(memcg, state_idx[i]);
	for (i = 0; i < AGENT_MAX_VMEV && i < nr_vmev; i++)
		r->vmev[i] = bpf_mem_cgroup_vm_events(memcg, vmev_idx[i]);
	r->mem_current = bpf_mem_cgroup_usage(memcg);
	for (i = 0; i < AGENT_MAX_MEMEV && i < nr_memev; i++)
		r->memev[i] = bpf_mem_cgroup_memory_events(memcg, memev_idx[i]);
}

SEC("iter.s/cgroup")
int dump_agent(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg = NULL;
	struct agent_rec *r;
	__u32 zero = 0;

	if (!cgrp)
		return 0;
	if (want_mem)
		memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (ctx->meta->seq_num == 0) {
		/* the flushes cover the subtree; they may sleep */
		if (want_cpu)
			css_rstat_flush(&cgrp->self);
		if (memcg)
			bpf_mem_cgroup_flush_stats(memcg);
	}
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		goto out;
	__builtin_memset(r, 0, sizeof(*r));
	r->cgroup_id = BPF_CORE_READ(cgrp, kn, id);
	if (want_cpu)
		bstat_fill(cgrp, &r->cpu);
	if (memcg)
		fill_mem(memcg, r);
	bpf_map_update_elem(&agent_stats, &r->cgroup_id, r, BPF_ANY);
out:
	if (memcg)
		bpf_put_mem_cgroup(memcg);
	return 0;
}
