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

/*
 * shared.bpf.c: one privileged collector pass per interval into a
 * BPF_F_MMAPABLE array that every agent maps (PROT_READ; the map is
 * frozen).  Slot 0 holds the header, slot 1 + i the pass's i-th cgroup
 * (pre-order, the subtree's root first).  The consistency protocol is a
 * seqcount in the header, kept by the program: seq goes odd (an atomic
 * add: a full barrier) before the pass's first record and even (again)
 * after its last; each record carries the pass's odd value.  An agent
 * reads seq (acquire), takes nr_records records, reads seq again after an
 * acquire fence, and uses the pass only if both reads are the same even
 * value; then every record's pass_seq is seq - 1 (one that is not means
 * the protocol is broken, never a retry).
 */
#define SHARED_SLOTS		16384	/* records: the bench's largest tree is 10,000 + 1 */

#define SHARED_TRUNCATED	1	/* the subtree had more cgroups than slots (nr_visited > nr_records) */

struct shared_hdr {
	/* the program's, each pass */
	__u64 seq;		/* odd while a pass writes */
	__u64 nr_records;	/* records of the pass: slots 1 .. nr_records */
	__u64 nr_visited;	/* cgroups the pass visited */
	__u64 pass_ns;		/* CLOCK_MONOTONIC after the pass's flush: the values are as of it */
	__u64 pass_start_ns;	/* CLOCK_MONOTONIC when seq went odd, when it went even */
	__u64 pass_end_ns;
	__u32 flags;		/* SHARED_* of the pass */
	/* the collector's user space's, set before it freezes the map */
	__u32 slots;		/* records the map holds (its max_entries - 1) */
	__u64 period_ns;	/* the collector's interval: agents wake on its grid */
	__u32 ctrl;		/* what the records hold: 1 cpu, 2 memory (cgbench's CTRL_*) */
	__s32 anon_idx;		/* anon's index in agent_rec.state[], -1: none */
	__u32 collector_pid;	/* for the bench: whose CPU the passes are */
	__u32 reserved;
};

struct shared_rec {
	__u64 pass_seq;		/* the odd seq of the pass that wrote the record */
	struct agent_rec rec;
};

#endif
