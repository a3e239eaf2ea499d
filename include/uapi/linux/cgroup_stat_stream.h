/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cgroup v2 <ctrl>.stat.stream (cpu, memory, io): limits of the root's
 * <ctrl>.stat.stream_interval, the keys <ctrl>.stat.stream adds to the
 * keys of <ctrl>.stat, and the binary records of <ctrl>.stat.stream.subtree.
 *
 * See Documentation/admin-guide/cgroup-v2.rst.
 */
#ifndef _UAPI_LINUX_CGROUP_STAT_STREAM_H
#define _UAPI_LINUX_CGROUP_STAT_STREAM_H

#include <linux/types.h>

/* <ctrl>.stat.stream_interval accepts 0 (off) or a value in this range */
#define CGROUP_STAT_STREAM_INTERVAL_MIN_MS	10
#define CGROUP_STAT_STREAM_INTERVAL_MAX_MS	3600000

/* keys <ctrl>.stat.stream prints after the keys of <ctrl>.stat */
#define CGROUP_STAT_STREAM_KEY_SEQ		"flush_seq"
#define CGROUP_STAT_STREAM_KEY_TIME		"flush_time_usec"
#define CGROUP_STAT_STREAM_KEY_MISSED		"flush_missed"

/* cgroup_stat_stream_header.type */
#define CGROUP_STAT_STREAM_RECORD_KEYS		0	/* struct cgroup_stat_stream_keys */
#define CGROUP_STAT_STREAM_RECORD_CPU		1	/* struct cgroup_stat_stream_record */
#define CGROUP_STAT_STREAM_RECORD_MEMORY	2	/* struct cgroup_stat_stream_memory */
#define CGROUP_STAT_STREAM_RECORD_IO		3	/* struct cgroup_stat_stream_io */

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

/*
 * What every record of a cgroup starts with (the first 40 bytes of struct
 * cgroup_stat_stream_record too).  A read returns whole records, the
 * opened cgroup's first, then its live descendants in pre-order; step from
 * record to record by @size and skip types you do not know.
 */
struct cgroup_stat_stream_header {
	__u16 size;		/* bytes in this record */
	__u16 type;		/* CGROUP_STAT_STREAM_RECORD_* */
	__u32 flags;		/* per type */
	__u64 cgroup_id;	/* inode number of the cgroup's directory */
	__u64 parent_id;	/* the parent's; 0 for the opened cgroup */
	__u64 flush_seq;	/* the flush these values are as of */
	__u64 flush_time_usec;	/* CLOCK_MONOTONIC time of that flush */
};

/*
 * KEYS: the first record of a snapshot whose records carry a list of
 * values (memory): it names them, so that the kernel can add, drop or
 * configure out statistics without a new layout.  @names holds @nr_keys
 * NUL-terminated names back to back, then zero padding to a multiple of 8
 * bytes; @size covers it all.
 */
struct cgroup_stat_stream_keys {
	__u16 size;
	__u16 type;		/* CGROUP_STAT_STREAM_RECORD_KEYS */
	__u32 flags;		/* 0 */
	__u16 for_type;		/* the record type these names label */
	__u16 nr_keys;
	__u32 reserved;		/* 0 */
	char names[];
};

/*
 * MEMORY: a cgroup's memory statistics as of one flush: @values[i] is the
 * value of the i-th name of the snapshot's KEYS record: the keys of
 * memory.stat in its order and units, then "current", "swap.current"
 * where swap is accounted, and "events." + each key of memory.events.
 */
struct cgroup_stat_stream_memory {
	struct cgroup_stat_stream_header hdr;	/* type MEMORY, flags 0 */
	__u64 values[];
};

/* one device of a CGROUP_STAT_STREAM_RECORD_IO record: io.stat's line for it */
struct cgroup_stat_stream_io_device {
	__u32 major;
	__u32 minor;
	__u64 rbytes;
	__u64 wbytes;
	__u64 rios;
	__u64 wios;
	__u64 dbytes;
	__u64 dios;
};

/*
 * IO: a cgroup's io.stat as of one flush: the devices io.stat lists for
 * it, in its order (a device it lists without values has zeros).
 * @size is 48 + 56 * @nr_devices; step through @devices by
 * sizeof(struct cgroup_stat_stream_io_device).
 */
struct cgroup_stat_stream_io {
	struct cgroup_stat_stream_header hdr;	/* type IO, flags 0 */
	__u32 nr_devices;
	__u32 reserved;				/* 0 */
	struct cgroup_stat_stream_io_device devices[];
};

#endif /* _UAPI_LINUX_CGROUP_STAT_STREAM_H */
