/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cgroup v2 cpu.stat.stream: limits of the root's cpu.stat.stream_interval,
 * the keys cpu.stat.stream adds to the cpu.stat keys, and the binary
 * records of cpu.stat.stream.subtree.
 *
 * See Documentation/admin-guide/cgroup-v2.rst.
 */
#ifndef _UAPI_LINUX_CGROUP_STAT_STREAM_H
#define _UAPI_LINUX_CGROUP_STAT_STREAM_H

#include <linux/types.h>

/* cpu.stat.stream_interval accepts 0 (off) or a value in this range */
#define CGROUP_STAT_STREAM_INTERVAL_MIN_MS	10
#define CGROUP_STAT_STREAM_INTERVAL_MAX_MS	3600000

/* keys cpu.stat.stream prints after the cpu.stat keys */
#define CGROUP_STAT_STREAM_KEY_SEQ		"flush_seq"
#define CGROUP_STAT_STREAM_KEY_TIME		"flush_time_usec"
#define CGROUP_STAT_STREAM_KEY_MISSED		"flush_missed"

/* cgroup_stat_stream_record.type */
#define CGROUP_STAT_STREAM_RECORD_CPU		1

/* cgroup_stat_stream_record.flags */
#define CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH	(1U << 0)	/* nr_periods..burst_usec valid */

/* size of a CGROUP_STAT_STREAM_RECORD_CPU record as first defined */
#define CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0	112

/*
 * One record of cpu.stat.stream.subtree: a cgroup's cpu.stat as of one
 * flush.  A read returns whole records, the opened cgroup first, then its
 * live descendants in pre-order.  Records only ever grow at the end and new
 * kinds of statistics come as new types: step from record to record by
 * @size, skip types you do not know, never assume @size is sizeof() of
 * this struct.  Times are in microseconds.
 */
struct cgroup_stat_stream_record {
	__u16 size;		/* bytes in this record */
	__u16 type;		/* CGROUP_STAT_STREAM_RECORD_* */
	__u32 flags;		/* CGROUP_STAT_STREAM_RECORD_F_* */
	__u64 cgroup_id;	/* inode number of the cgroup's directory */
	__u64 parent_id;	/* the parent's; 0 for the opened cgroup */
	__u64 flush_seq;	/* the flush these values are as of */
	__u64 flush_time_usec;	/* CLOCK_MONOTONIC time of that flush */
	__u64 usage_usec;
	__u64 user_usec;
	__u64 system_usec;
	__u64 nice_usec;
	__u64 nr_periods;
	__u64 nr_throttled;
	__u64 throttled_usec;
	__u64 nr_bursts;
	__u64 burst_usec;
};

#endif /* _UAPI_LINUX_CGROUP_STAT_STREAM_H */
