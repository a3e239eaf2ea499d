/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One cgroup's agent record (struct agent_rec) as the agent programs take
 * it: agent.bpf.c (below's way, a pass per agent into a hash map) and
 * shared.bpf.c (one collector's pass into an mmapable array).  On the
 * pass's first cgroup it flushes once (css_rstat_flush for the base stats,
 * bpf_mem_cgroup_flush_stats for memcg); then bstat's cputime (as
 * cgstat.bpf.c), every memory.stat item through bpf_mem_cgroup_page_state
 * / bpf_mem_cgroup_vm_events, memory.current through bpf_mem_cgroup_usage
 * and memory.events through bpf_mem_cgroup_memory_events.  Include after
 * vmlinux.h, bpf_helpers.h, bpf_core_read.h, cgstat.h and bstat.bpf.h, in
 * a sleepable (iter.s) program: the flushes may sleep.
 */
#ifndef CGBENCH_AGENT_BPF_H
#define CGBENCH_AGENT_BPF_H

extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym;
/*
 * Weak: a kernel without the memcg kfuncs (before 7.0) still loads a
 * cpu-only program (items.want_mem false makes these calls dead code,
 * which the verifier drops); the loader refuses memory there.
 */
extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym __weak;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym __weak;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym __weak;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym __weak;
extern unsigned long bpf_mem_cgroup_vm_events(struct mem_cgroup *memcg,
					      enum vm_event_item event) __ksym __weak;
extern unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg) __ksym __weak;
extern unsigned long bpf_mem_cgroup_memory_events(struct mem_cgroup *memcg,
						  enum memcg_memory_event event) __ksym __weak;

/* set by the loader from the running kernel's BTF and memory.stat's keys */
const volatile struct agent_items items = { .want_cpu = 1, .want_mem = 1 };

static __always_inline void fill_mem(struct mem_cgroup *memcg, struct agent_rec *r)
{
	__u32 i;

	r->has_mem = 1;
	r->nr_state = items.nr_state;
	r->nr_vmev = items.nr_vmev;
	r->nr_memev = items.nr_memev;
	for (i = 0; i < AGENT_MAX_STATE && i < items.nr_state; i++)
		r->state[i] = bpf_mem_cgroup_page_state(memcg, items.state_idx[i]);
	for (i = 0; i < AGENT_MAX_VMEV && i < items.nr_vmev; i++)
		r->vmev[i] = bpf_mem_cgroup_vm_events(memcg, items.vmev_idx[i]);
	r->mem_current = bpf_mem_cgroup_usage(memcg);
	for (i = 0; i < AGENT_MAX_MEMEV && i < items.nr_memev; i++)
		r->memev[i] = bpf_mem_cgroup_memory_events(memcg, items.memev_idx[i]);
}

/* @cgrp's record into @r; @first: the pass's first cgroup, which flushes the subtree */
static __always_inline void agent_fill(struct cgroup *cgrp, struct agent_rec *r, bool first)
{
	struct mem_cgroup *memcg = NULL;

	if (items.want_mem)
		memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (first) {
		if (items.want_cpu)
			css_rstat_flush(&cgrp->self);
		if (memcg)
			bpf_mem_cgroup_flush_stats(memcg);
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->cgroup_id = BPF_CORE_READ(cgrp, kn, id);
	if (items.want_cpu)
		bstat_fill(cgrp, &r->cpu);
	if (memcg) {
		fill_mem(memcg, r);
		bpf_put_mem_cgroup(memcg);
	}
}

#endif
