/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The record the benchmark's BPF reader gets for each cgroup: what below's
 * cgroup iterator collects for cpu.stat (bstat's cputime, the cpu
 * controller's bandwidth counters), in nanoseconds as the kernel keeps them.
 * Shared by the BPF program (cgstat.bpf.c) and cgbench.
 */
#ifndef CGBENCH_CGSTAT_H
#define CGBENCH_CGSTAT_H

struct cgstat_rec {
	__u64 cgroup_id;
	__u64 usage_ns;
	__u64 user_ns;		/* raw ticks-based split: cpu.stat adjusts it */
	__u64 system_ns;
	__u64 nr_periods;	/* ~0 where the cpu controller is off */
	__u64 nr_throttled;
	__u64 throttled_ns;
};

#endif
