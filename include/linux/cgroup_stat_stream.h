/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Streamed cgroup statistics: one implementation for every controller that
 * keeps rstat statistics (the base stats of cpu.stat, memory, io).
 *
 * A controller defines one struct cgroup_stat_stream with its ops and three
 * files that use the handlers below, with the stream in cftype->private:
 * <ctrl>.stat.stream_interval (root only), <ctrl>.stat.stream and
 * <ctrl>.stat.stream.subtree.  The stream owns the interval, the flusher,
 * the sequence number, the waiters, open counting, stop and freshness and
 * the subtree walk; the ops flush and publish the controller's tree and
 * format one cgroup's published values, as text or as a binary record.
 *
 * See Documentation/admin-guide/cgroup-v2.rst and kernel/cgroup/stat_stream.c.
 */
#ifndef _LINUX_CGROUP_STAT_STREAM_H
#define _LINUX_CGROUP_STAT_STREAM_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/seqlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/cgroup_stat_stream.h>

struct cgroup_subsys_state;
struct kernfs_open_file;
struct seq_file;

/* a flush of a stream's flusher, as its publish passes it on */
struct cgroup_stat_flush {
	u64 seq;
	u64 time_ns;
};

/**
 * struct cgroup_stat_stream_ops - what a controller's stream does itself
 * @flush: flush the controller's whole rstat tree.
 * @track_changes: start recording which cgroups flushes change, or stop
 *	and forget them (css_rstat_track_changes()).
 * @publish: publish, for lockless readers, the flushed values of every
 *	cgroup a flush changed since the last call (all of them with @all,
 *	after changes went unrecorded), as of flush @seq at @time_ns.
 * @show: print @css's values as of flush @as_of in the format of the
 *	controller's *.stat file, without flushing.  Sets @seq and @time_ns
 *	to the flush the values are as of (above @as_of only for a reader
 *	more than one flush behind), 0 if none.  Returns 0 or -errno.
 * @flush_lines: the text is lines, not keys (io.stat's, one per device):
 *	<ctrl>.stat.stream ends with flush_seq and flush_time_usec only.
 * @layout: at the start of a subtree snapshot: an opaque description of
 *	the record layout, fixed for the snapshot (e.g. which keys exist).
 * @keys_size: the size of the snapshot's first record, naming the values
 *	of the records that follow (CGROUP_STAT_STREAM_RECORD_KEYS), or 0
 *	for none.  Optional.
 * @fill_keys: fill that record.
 * @record_size: the most bytes @css's record can take at this point (the
 *	same for every cgroup where the layout is fixed), under RCU.
 * @fill_record: fill @css's record after its 40-byte header (which the
 *	stream fills) and its type and flags, under RCU, never sleeping.
 *	The header's size is that of @record_size; lower it where the
 *	record needs fewer bytes by now (its variable part shrank).  Returns
 *	the flush the values are as of, @time_ns its time, as @show.
 */
struct cgroup_stat_stream_ops {
	void (*flush)(void);
	void (*track_changes)(bool on);
	void (*publish)(u64 seq, u64 time_ns, bool all);
	int (*show)(struct seq_file *sf, struct cgroup_subsys_state *css,
		    u64 as_of, u64 *seq, u64 *time_ns);
	bool flush_lines;
	u32 (*layout)(void);
	size_t (*keys_size)(u32 layout);
	void (*fill_keys)(void *buf, size_t size, u32 layout);
	size_t (*record_size)(struct cgroup_subsys_state *css, u32 layout);
	u64 (*fill_record)(void *buf, struct cgroup_subsys_state *css,
			   u32 layout, u64 as_of, u64 *time_ns);
};

/**
 * struct cgroup_stat_stream - one controller's stream
 *
 * Set up with cgroup_stat_stream_init(); all fields are the stream
 * implementation's.
 */
struct cgroup_stat_stream {
	const struct cgroup_stat_stream_ops *ops;

	/*
	 * Configuration and flusher state, protected by @mutex.  The flusher
	 * never holds it while flushing.
	 */
	struct mutex mutex;
	unsigned int interval_ms;
	unsigned int nr_open;
	bool tracking;		/* ops->track_changes() is on */
	bool publish_all;	/* changes went unrecorded: publish all */

	/* the last completed flush, as readers see it */
	seqlock_t seqlock;
	u64 seq;
	u64 time_ns;
	atomic64_t missed;	/* deadlines skipped: the flusher was late */
	atomic_t cycle_busy;	/* a cycle is queued or running */
	unsigned int stops;	/* times streaming was turned off */

	wait_queue_head_t waitq;
	struct hrtimer timer;
	struct work_struct work;
};

void cgroup_stat_stream_init(struct cgroup_stat_stream *stream,
			     const struct cgroup_stat_stream_ops *ops);

/* the handlers of a stream's files, with the stream in cftype->private */
int cgroup_stat_stream_interval_show(struct seq_file *sf, void *v);
ssize_t cgroup_stat_stream_interval_write(struct kernfs_open_file *of,
					  char *buf, size_t nbytes, loff_t off);
int cgroup_stat_stream_open(struct kernfs_open_file *of);
void cgroup_stat_stream_release(struct kernfs_open_file *of);
int cgroup_stat_stream_show(struct seq_file *sf, void *v);
ssize_t cgroup_stat_stream_subtree_read(struct kernfs_open_file *of,
					char *buf, size_t nbytes, loff_t off);
__poll_t cgroup_stat_stream_poll(struct kernfs_open_file *of,
				 struct poll_table_struct *pt);

#endif /* _LINUX_CGROUP_STAT_STREAM_H */
