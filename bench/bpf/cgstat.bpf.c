// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF way of sampling a subtree's cpu.stat, as below does since August
 * 2026: a cgroup iterator attached to the subtree's root in pre-order,
 * whose program flushes rstat once (css_rstat_flush kfunc, on the first
 * cgroup) and then takes each cgroup's counters.  Two ways out:
 *
 *   dump_seq  one binary record per cgroup with bpf_seq_write(), read(2)
 *             from the iterator fd (the way the issue names; the seq
 *             buffer is 8 pages and cgroup_iter cannot continue a walk in
 *             a second buffer, so a pass larger than ~32 KiB of records
 *             fails with EOPNOTSUPP);
 *   dump_map  the record goes into a hash map keyed by cgroup id, which the
 *             reader drains after the pass (what below actually ships,
 *             because of that limit).
 *
 * Sleepable (iter.s): css_rstat_flush may sleep.  The iterator calls the
 * program with cgroup_mutex held for the whole pass.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgstat.h"
#include "bstat.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct cgstat_rec);
} stats SEC(".maps");

/*
 * One pass's work on one cgroup: flush once, on the first cgroup (the flush
 * covers the whole subtree), then take this cgroup's counters.  False for
 * the call after the last cgroup.
 */
static __always_inline bool visit(struct bpf_iter__cgroup *ctx, struct cgstat_rec *r)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (!cgrp)
		return false;
	if (ctx->meta->seq_num == 0)
		css_rstat_flush(&cgrp->self);
	r->cgroup_id = BPF_CORE_READ(cgrp, kn, id);
	bstat_fill(cgrp, &r->cpu);
	return true;
}

SEC("iter.s/cgroup")
int dump_seq(struct bpf_iter__cgroup *ctx)
{
	struct cgstat_rec r = {};

	if (visit(ctx, &r))
		bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

SEC("iter.s/cgroup")
int dump_map(struct bpf_iter__cgroup *ctx)
{
	struct cgstat_rec r = {};

	if (visit(ctx, &r))
		bpf_map_update_elem(&stats, &r.cgroup_id, &r, BPF_ANY);
	return 0;
}
