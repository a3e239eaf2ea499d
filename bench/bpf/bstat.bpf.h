/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A cgroup's cpu.stat counters as below's iterator takes them: bstat's
 * cputime (as of the last rstat flush) and the cpu controller's bandwidth
 * counters (live; ~0 where the controller is off).  Shared by the BPF
 * programs (cgstat.bpf.c, agent.bpf.c); include after vmlinux.h,
 * bpf_core_read.h and cgstat.h (struct bstat_vals).
 */
#ifndef CGBENCH_BSTAT_BPF_H
#define CGBENCH_BSTAT_BPF_H

static __always_inline void bstat_fill(struct cgroup *cgrp, struct bstat_vals *r)
{
	struct cgroup_subsys_state *css;
	struct task_group *tg;

	r->usage_ns = BPF_CORE_READ(cgrp, bstat.cputime.sum_exec_runtime);
	r->user_ns = BPF_CORE_READ(cgrp, bstat.cputime.utime);
	r->system_ns = BPF_CORE_READ(cgrp, bstat.cputime.stime);
	r->nr_periods = ~0ULL;
	r->nr_throttled = ~0ULL;
	r->throttled_ns = ~0ULL;
	css = BPF_CORE_READ(cgrp, subsys[cpu_cgrp_id]);
	if (!css)
		return;
	tg = (struct task_group *)css;	/* css is task_group's first member */
	r->nr_periods = BPF_CORE_READ(tg, cfs_bandwidth.nr_periods);
	r->nr_throttled = BPF_CORE_READ(tg, cfs_bandwidth.nr_throttled);
	r->throttled_ns = BPF_CORE_READ(tg, cfs_bandwidth.throttled_time);
}

#endif
