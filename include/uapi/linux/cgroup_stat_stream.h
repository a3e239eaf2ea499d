/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cgroup v2 <ctrl>.stat.stream.subtree: snapshots of a subtree's published
 * statistics, format version 2.  See Documentation/admin-guide/cgroup-v2.rst.
 *
 * A snapshot is a sequence of records.  Every record starts with struct
 * cgroup_stat_rec: its size in bytes (a multiple of 8; the next record
 * starts that many bytes further), its type and flags.  All fields are in
 * the host's byte order and naturally aligned; records start 8-byte
 * aligned.  Type 0 is no type, so a zeroed buffer holds no record.  A
 * reader steps from record to record by @size, skips types it does not
 * know, and never assumes a size: records only ever grow at the end, and
 * record types are never reused.
 *
 * A snapshot holds, in this order:
 *
 *  - one SNAPSHOT record: the format version, the controller, the
 *    publication the values are as of (its sequence number and
 *    CLOCK_MONOTONIC time) and, for a change snapshot, the publication it
 *    is relative to;
 *  - one SCHEMA record: the names of the u64 values every CGROUP and
 *    REMOVED record of this snapshot carries, in order, then the names of
 *    the u64 values of each device (io), in order;
 *  - the REMOVED records: cgroups removed since the open file's previous
 *    complete snapshot, with their values as of their removal;
 *  - one CGROUP record per listed cgroup: the opened cgroup first, then
 *    its descendants in pre-order (a parent before its children).
 *
 * Reading (see cgroup-v2.rst for the whole contract): a read at offset 0
 * starts a full snapshot; a read at CGROUP_STAT_STREAM_CHANGES starts a
 * change snapshot, relative to the last snapshot this open file read to
 * its end; reading on from where the last read ended continues the
 * snapshot, and a read that returns 0 ends it.  Each read returns whole
 * records.
 *
 * In Go or Rust: read the 8-byte header at each offset with the host's
 * byte order, check size >= 8 and size % 8 == 0 and that it fits the bytes
 * read, dispatch on type, then read the fields at the offsets below.
 */
#ifndef _UAPI_LINUX_CGROUP_STAT_STREAM_H
#define _UAPI_LINUX_CGROUP_STAT_STREAM_H

#include <linux/types.h>

/* the format this header describes: cgroup_stat_snapshot.version */
#define CGROUP_STAT_STREAM_VERSION	2

/*
 * A read at this offset starts a change snapshot; reading on from there
 * (this offset plus the bytes read so far) continues it.
 */
#define CGROUP_STAT_STREAM_CHANGES	(1ULL << 62)

/* cgroup_stat_rec.type */
#define CGROUP_STAT_REC_SNAPSHOT	1	/* struct cgroup_stat_snapshot */
#define CGROUP_STAT_REC_SCHEMA		2	/* struct cgroup_stat_schema */
#define CGROUP_STAT_REC_CGROUP		3	/* struct cgroup_stat_cgroup */
#define CGROUP_STAT_REC_REMOVED		4	/* struct cgroup_stat_cgroup */

/* cgroup_stat_snapshot.controller */
#define CGROUP_STAT_CTRL_CPU		1	/* cpu.stat.stream.subtree */
#define CGROUP_STAT_CTRL_MEMORY		2	/* memory.stat.stream.subtree */
#define CGROUP_STAT_CTRL_IO		3	/* io.stat.stream.subtree */
#define CGROUP_STAT_CTRL_PRESSURE	4	/* pressure.stream.subtree */

/* the header of every record: 8 bytes */
struct cgroup_stat_rec {
	__u32 size;		/* bytes in this record, >= 8, a multiple of 8 */
	__u16 type;		/* CGROUP_STAT_REC_* */
	__u16 flags;		/* per type */
};

/*
 * cgroup_stat_snapshot flags: STOPPED: the interval is 0, no publication
 * follows; CHANGES: a change snapshot (@base_seq set); LOST: removals
 * after the base were dropped.
 */
#define CGROUP_STAT_SNAPSHOT_F_STOPPED	(1U << 0)
#define CGROUP_STAT_SNAPSHOT_F_CHANGES	(1U << 1)
#define CGROUP_STAT_SNAPSHOT_F_LOST	(1U << 2)

/*
 * SNAPSHOT, at offset 0 of every snapshot: 48 bytes.
 *
 * A change snapshot (CGROUP_STAT_SNAPSHOT_F_CHANGES) lists only the
 * cgroups whose values changed, or that were created, after publication
 * @base_seq (the previous complete snapshot of this open file); every
 * other cgroup listed then is unchanged, unless a REMOVED record says it
 * is gone.  CGROUP_STAT_SNAPSHOT_F_LOST: some removals after the previous
 * complete snapshot are no longer kept (the reader fell further behind than
 * the kernel keeps removals); resynchronise with a full snapshot.
 */
struct cgroup_stat_snapshot {
	struct cgroup_stat_rec hdr;	/* type SNAPSHOT */
	__u16 version;			/* CGROUP_STAT_STREAM_VERSION */
	__u16 controller;		/* CGROUP_STAT_CTRL_* */
	__u32 reserved;			/* 0 */
	__u64 seq;			/* the publication: 1, 2, ... per controller */
	__u64 time_usec;		/* its CLOCK_MONOTONIC time */
	__u64 skipped;			/* publications skipped (late), up to @seq */
	__u64 base_seq;			/* change snapshot: relative to this; else 0 */
};

/*
 * SCHEMA, the second record: the names of the values.  @names holds
 * @nr_values + @nr_device_values NUL-terminated names back to back, then
 * zero padding to @hdr.size.  The first @nr_values name the u64 values of
 * each CGROUP and REMOVED record, in order; the rest name the u64 values
 * of each of its devices, in order.  The names are those of the
 * controller's *.stat file, in its units; memory adds "current",
 * "swap.current" (where swap is accounted) and "events.<key>" for each key
 * of memory.events; pressure's are "<resource>.<some|full>.<avg10|avg60|
 * avg300|total>", averages in hundredths of a percent, totals in usec.
 * Find a value by its name, never by its position:
 * statistics come and go with the kernel's version and configuration.
 */
struct cgroup_stat_schema {
	struct cgroup_stat_rec hdr;	/* type SCHEMA */
	__u32 nr_values;		/* u64 values per cgroup */
	__u32 nr_device_values;		/* u64 values per device */
	__u32 device_size;		/* bytes per device: 8 + 8 * nr_device_values */
	__u32 reserved;			/* 0 */
	char names[];
};

/*
 * cgroup_stat_cgroup flags: LATER: the values are those of a later
 * publication than the snapshot's (the read took longer than two
 * intervals); PARTIAL: devices left out, the kernel was out of memory;
 * NEW, in a change snapshot: created since the base.
 */
#define CGROUP_STAT_CGROUP_F_LATER	(1U << 0)
#define CGROUP_STAT_CGROUP_F_PARTIAL	(1U << 1)
#define CGROUP_STAT_CGROUP_F_NEW	(1U << 2)

/*
 * CGROUP (a listed cgroup) and REMOVED (a removed one, with its values as
 * of its removal): 32 bytes, then @nr_values u64 values, the first
 * @nr_values of the SCHEMA's (a cgroup whose *.stat lacks the last ones,
 * e.g. cpu.stat's bandwidth counters where the cpu controller is off,
 * carries fewer), then @nr_devices devices, each SCHEMA.device_size bytes:
 * struct cgroup_stat_device.
 *
 * @id is the cgroup id: what name_to_handle_at() gives for its directory
 * and bpf_get_current_cgroup_id() for its tasks (the directory's inode
 * number on 64-bit), never reused.  @parent_id is its parent's id; 0 for
 * the record of the opened cgroup, or of the root of the reader's cgroup
 * namespace where that lies below it: the first CGROUP record of a full
 * snapshot (a change snapshot lists it only if it changed).
 */
struct cgroup_stat_cgroup {
	struct cgroup_stat_rec hdr;	/* type CGROUP or REMOVED */
	__u64 id;
	__u64 parent_id;
	__u32 nr_values;
	__u32 nr_devices;
	__u64 values[];
};

/* one device of a CGROUP or REMOVED record (io: as io.stat lists it) */
struct cgroup_stat_device {
	__u32 major;
	__u32 minor;
	__u64 values[];			/* SCHEMA.nr_device_values */
};

#endif /* _UAPI_LINUX_CGROUP_STAT_STREAM_H */
