/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cgroup v2 cpu.stat.stream: limits of the root's cpu.stat.stream_interval
 * and the keys cpu.stat.stream adds to the cpu.stat keys.
 *
 * See Documentation/admin-guide/cgroup-v2.rst.
 */
#ifndef _UAPI_LINUX_CGROUP_STAT_STREAM_H
#define _UAPI_LINUX_CGROUP_STAT_STREAM_H

/* cpu.stat.stream_interval accepts 0 (off) or a value in this range */
#define CGROUP_STAT_STREAM_INTERVAL_MIN_MS	10
#define CGROUP_STAT_STREAM_INTERVAL_MAX_MS	3600000

/* keys cpu.stat.stream prints after the cpu.stat keys */
#define CGROUP_STAT_STREAM_KEY_SEQ		"flush_seq"
#define CGROUP_STAT_STREAM_KEY_TIME		"flush_time_usec"
#define CGROUP_STAT_STREAM_KEY_MISSED		"flush_missed"

#endif /* _UAPI_LINUX_CGROUP_STAT_STREAM_H */
