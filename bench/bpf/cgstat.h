/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The records the benchmark's BPF readers get for each cgroup, shared by
 * the BPF programs (cgstat.bpf.c, agent.bpf.c) and cgbench.
 */
#ifndef CGBENCH_CGSTAT_H
#define CGBENCH_CGSTAT_H

/* what below's cgroup iterator collects for cpu.stat, in ns as the kernel keeps them */
struct bstat_vals {
	__u64 usage_ns;
	__u64 user_ns;		/* raw ticks-based split: cpu.stat adjusts it */
	__u64 system_ns;
	__u64 nr_periods;	/* ~0 where the cpu controller is off */
	__u64 nr_throttled;
	__u64 throttled_ns;
};

/* cgstat.bpf.c: cpu.stat only */
struct cgstat_rec {
	__u64 cgroup_id;
	struct bstat_vals cpu;
};

/*
 * agent.bpf.c and shared.bpf.c: cpu.stat and every memory.stat item,
 * memory.current and memory.events.  Which items: the loader resolves
 * memory.stat's keys to the kernel's enum values (from its BTF) and hands
 * the program the lists (AGENT_MAX_* at most) in its read-only
 * struct agent_items; state[i] is the i-th item of the state list
 * (bpf_mem_cgroup_page_state: node_stat_item/memcg_stat_item, in
 * memory.stat's units), vmev[i] of the vm event list
 * (bpf_mem_cgroup_vm_events), memev[i] of the memory.events list
 * (bpf_mem_cgroup_memory_events).
 */
#define AGENT_MAX_STATE	64
#define AGENT_MAX_VMEV	32
#define AGENT_MAX_MEMEV	8

/* what the loader sets before load (the programs' rodata) */
struct agent_items {
	__u32 want_cpu, want_mem;
	__u32 nr_state, nr_vmev, nr_memev;
	__u32 state_idx[AGENT_MAX_STATE];
	__u32 vmev_idx[AGENT_MAX_VMEV];
	__u32 memev_idx[AGENT_MAX_MEMEV];
};

struct agent_rec {
	__u64 cgroup_id;
	struct bstat_vals cpu;		/* zeros when the loader turned cpu off */
	__u64 mem_current;		/* bpf_mem_cgroup_usage: memory.current */
	__u64 memev[AGENT_MAX_MEMEV];
	__u64 state[AGENT_MAX_STATE];
	__u64 vmev[AGENT_MAX_VMEV];
	__u32 nr_state, nr_vmev, nr_memev;
	__u32 has_mem;			/* 0: the cgroup had no memcg */
};

#endif
