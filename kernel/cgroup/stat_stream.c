// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.stat.stream - read flushed cgroup CPU statistics once per flush
 *
 * Reading a cgroup's cpu.stat flushes rstat first: each reader pays the
 * flush, parallel readers serialize on rstat_base_lock, and telemetry that
 * samples many cgroups at a fixed rate pays it over and over.
 *
 * Writing an interval to the root's cpu.stat.stream_interval starts a
 * flusher: delayed work that flushes the base rstat tree from the root at
 * that rate, publishes the flushed values of the cgroups that changed
 * (cgroup_base_stat_publish()), bumps a global sequence number and wakes
 * the pollers of every cgroup's cpu.stat.stream.  Readers wait in poll()
 * and read the published values: no flush and no global lock on the read
 * path.  The flusher only runs while a cpu.stat.stream file is open.
 *
 * Reads never block.  A read runs under a kernfs active reference; sleeping
 * there would make rmdir wait in kernfs_drain() while holding cgroup_mutex
 * and stall every cgroup operation on the host.  Waiting happens in poll()
 * only, on a wait queue that is not tied to any cgroup, so it outlives the
 * cgroups whose files are polled.
 */
#include "cgroup-internal.h"

#include <linux/ctype.h>
#include <linux/hrtimer.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include <uapi/linux/cgroup_stat_stream.h>

/*
 * Configuration and flusher state, protected by stat_stream_mutex.  The
 * flusher never holds it while flushing.
 */
static DEFINE_MUTEX(stat_stream_mutex);
static unsigned int stat_stream_interval_ms;
static unsigned int stat_stream_nr_open;
/* cgroup_base_stat_track_changes() is on */
static bool stat_stream_tracking;
/* the next cycle publishes every cgroup: changes went unrecorded */
static bool stat_stream_publish_all;

/* The last completed flush, as readers see it. */
static DEFINE_SEQLOCK(stat_stream_seqlock);
static u64 stat_stream_seq;
static u64 stat_stream_time_ns;
/* deadlines skipped because the flusher was late */
static atomic64_t stat_stream_missed = ATOMIC64_INIT(0);

static DECLARE_WAIT_QUEUE_HEAD(stat_stream_waitq);

/*
 * The flusher: a timer on a fixed grid of deadlines queues the work that
 * flushes.  The grid never drifts, whatever the work's latency.
 */
static struct hrtimer stat_stream_timer;
static void stat_stream_workfn(struct work_struct *work);
static DECLARE_WORK(stat_stream_work, stat_stream_workfn);

static bool stat_stream_active(void)
{
	lockdep_assert_held(&stat_stream_mutex);
	return stat_stream_interval_ms && stat_stream_nr_open;
}

static u64 stat_stream_read_seq(u64 *time_ns)
{
	unsigned int start;
	u64 seq;

	do {
		start = read_seqbegin(&stat_stream_seqlock);
		seq = stat_stream_seq;
		if (time_ns)
			*time_ns = stat_stream_time_ns;
	} while (read_seqretry(&stat_stream_seqlock, start));

	return seq;
}

static enum hrtimer_restart stat_stream_timer_fn(struct hrtimer *timer)
{
	u64 interval_ns = READ_ONCE(stat_stream_interval_ms) * NSEC_PER_MSEC;
	u64 overruns = hrtimer_forward_now(timer, ns_to_ktime(interval_ns));

	/*
	 * A late cycle is counted, not queued twice: deadlines the timer
	 * itself missed, and this one if the last flush is still queued.
	 */
	if (!queue_work(system_dfl_wq, &stat_stream_work))
		overruns++;
	if (overruns > 1)
		atomic64_add(overruns - 1, &stat_stream_missed);

	return HRTIMER_RESTART;
}

/*
 * Apply a change of the interval or of the number of open streams.
 * @interval_changed: the next flush is one new interval from now.
 */
static void stat_stream_reconfigure(bool interval_changed)
{
	u64 interval_ns, last_ns;
	ktime_t next;

	lockdep_assert_held(&stat_stream_mutex);

	if (!stat_stream_active()) {
		hrtimer_cancel(&stat_stream_timer);
		/* a flush already running sees this under the mutex */
		cancel_work(&stat_stream_work);
		if (stat_stream_tracking) {
			cgroup_base_stat_track_changes(false);
			stat_stream_tracking = false;
		}
		return;
	}
	if (stat_stream_tracking && !interval_changed)
		return;

	interval_ns = (u64)stat_stream_interval_ms * NSEC_PER_MSEC;
	if (!stat_stream_tracking) {
		cgroup_base_stat_track_changes(true);
		stat_stream_tracking = true;
		stat_stream_publish_all = true;
		/*
		 * Flush at once, unless the last flush is less than one
		 * interval old: opening and closing stream files must not
		 * make the flusher run faster than configured.
		 */
		next = ktime_get();
		if (stat_stream_read_seq(&last_ns) &&
		    ktime_before(next, ns_to_ktime(last_ns + interval_ns)))
			next = ns_to_ktime(last_ns + interval_ns);
	} else {
		next = ktime_add_ns(ktime_get(), interval_ns);
	}
	/* the callback forwards the timer: never restart it under its feet */
	hrtimer_cancel(&stat_stream_timer);
	hrtimer_start(&stat_stream_timer, next, HRTIMER_MODE_ABS);
}

/* One flusher cycle: flush, publish, bump the sequence, wake the pollers. */
static void stat_stream_workfn(struct work_struct *work)
{
	bool publish_all;
	u64 seq, now;

	mutex_lock(&stat_stream_mutex);
	if (!stat_stream_active()) {
		mutex_unlock(&stat_stream_mutex);
		return;
	}
	publish_all = stat_stream_publish_all;
	stat_stream_publish_all = false;
	mutex_unlock(&stat_stream_mutex);

	/*
	 * Only the base tree: cpu.stat data.  The memory and io trees have
	 * their own flushers and are not touched.
	 */
	css_rstat_flush(&cgrp_dfl_root.cgrp.self);
	now = ktime_get_ns();
	/* a work item never runs concurrently with itself: sole writer */
	seq = stat_stream_seq + 1;
	cgroup_base_stat_publish(seq, now, publish_all);

	write_seqlock(&stat_stream_seqlock);
	stat_stream_seq = seq;
	stat_stream_time_ns = now;
	write_sequnlock(&stat_stream_seqlock);
	wake_up_interruptible_poll(&stat_stream_waitq, EPOLLIN | EPOLLRDNORM);
}

static int __init cgroup_stat_stream_init(void)
{
	hrtimer_setup(&stat_stream_timer, stat_stream_timer_fn,
		      CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	return 0;
}
subsys_initcall(cgroup_stat_stream_init);

/**
 * cgroup_stat_stream_interval_show - show the root's cpu.stat.stream_interval
 * @seq: seq_file of the interval file
 * @v: unused
 *
 * Return: 0.
 */
int cgroup_stat_stream_interval_show(struct seq_file *seq, void *v)
{
	seq_printf(seq, "%u\n", READ_ONCE(stat_stream_interval_ms));
	return 0;
}

/**
 * cgroup_stat_stream_interval_write - set the flush interval
 * @of: open interval file
 * @buf: decimal milliseconds, 0 to stop streaming
 * @nbytes: length of @buf
 * @off: unused
 *
 * The new interval takes effect at once: the next flush is rescheduled to
 * one new interval from now.
 *
 * Return: @nbytes, -EPERM without CAP_SYS_ADMIN, or -EINVAL for anything
 * but a value in range (the old value stays).
 */
ssize_t cgroup_stat_stream_interval_write(struct kernfs_open_file *of,
					  char *buf, size_t nbytes, loff_t off)
{
	unsigned int ms;

	if (!file_ns_capable(of->file, &init_user_ns, CAP_SYS_ADMIN))
		return -EPERM;

	buf = strstrip(buf);
	/* kstrtouint() accepts a leading '+'; the interface takes digits */
	if (!isdigit(*buf) || kstrtouint(buf, 10, &ms))
		return -EINVAL;
	if (ms && (ms < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
		   ms > CGROUP_STAT_STREAM_INTERVAL_MAX_MS))
		return -EINVAL;

	mutex_lock(&stat_stream_mutex);
	WRITE_ONCE(stat_stream_interval_ms, ms);
	stat_stream_reconfigure(true);
	mutex_unlock(&stat_stream_mutex);

	return nbytes;
}

/**
 * cgroup_stat_stream_open - count an open cpu.stat.stream
 * @of: the file being opened
 *
 * The flusher runs only while at least one stream file is open.
 *
 * Return: 0.
 */
int cgroup_stat_stream_open(struct kernfs_open_file *of)
{
	mutex_lock(&stat_stream_mutex);
	stat_stream_nr_open++;
	stat_stream_reconfigure(false);
	mutex_unlock(&stat_stream_mutex);
	return 0;
}

/**
 * cgroup_stat_stream_release - count a closed cpu.stat.stream
 * @of: the file being released, on close or when its cgroup is removed
 */
void cgroup_stat_stream_release(struct kernfs_open_file *of)
{
	mutex_lock(&stat_stream_mutex);
	stat_stream_nr_open--;
	stat_stream_reconfigure(false);
	mutex_unlock(&stat_stream_mutex);
}

/**
 * cgroup_stat_stream_show - show a cgroup's stats as of the latest flush
 * @seq: seq_file of the stream file
 * @v: unused
 *
 * Prints the cpu.stat keys from the values the flusher published, then the
 * flush's sequence number, CLOCK_MONOTONIC time and the total of skipped
 * cycles, and marks that flush as seen by this open file.  Never flushes,
 * never blocks, takes no global lock.
 *
 * Return: 0 or the error of the cpu controller's stat show.
 */
int cgroup_stat_stream_show(struct seq_file *seq, void *v)
{
	struct kernfs_open_file *of = seq->private;
	struct cgroup_file_ctx *ctx = of->priv;
	struct cgroup *cgrp = seq_css(seq)->cgroup;
	struct cgroup_base_stat bstat;
	u64 flush_seq, time_ns, missed, snap_seq, snap_time_ns;
	int ret = 0;

	/*
	 * The completed flush first, the snapshot second: a snapshot newer
	 * than that flush was published by the cycle running now, and is
	 * labelled with that cycle.  An older one is unchanged since, so it
	 * is the value as of the completed flush.
	 */
	flush_seq = stat_stream_read_seq(&time_ns);
	missed = atomic64_read(&stat_stream_missed);
	snap_seq = cgroup_base_stat_snapshot(cgrp, &bstat, &snap_time_ns);
	if (snap_seq > flush_seq) {
		flush_seq = snap_seq;
		time_ns = snap_time_ns;
	}

	cgroup_base_stat_print(seq, &bstat);
#ifdef CONFIG_CGROUP_SCHED
	/* bandwidth counters are not rstat: read as cpu.stat reads them */
	ret = cgroup_extra_stat_show(seq, cpu_cgrp_id);
#endif
	seq_printf(seq, CGROUP_STAT_STREAM_KEY_SEQ " %llu\n"
			CGROUP_STAT_STREAM_KEY_TIME " %llu\n"
			CGROUP_STAT_STREAM_KEY_MISSED " %llu\n",
		   flush_seq, div_u64(time_ns, NSEC_PER_USEC), missed);

	WRITE_ONCE(ctx->stream.last_seen, flush_seq);
	return ret;
}

/**
 * cgroup_stat_stream_poll - wait for a flush this open file has not read
 * @of: open stream file
 * @pt: poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when a flush completed after this file last
 * read, else 0.  Once the cgroup is removed kernfs answers EPOLLERR.
 */
__poll_t cgroup_stat_stream_poll(struct kernfs_open_file *of, poll_table *pt)
{
	struct cgroup_file_ctx *ctx = of->priv;

	poll_wait(of->file, &stat_stream_waitq, pt);
	if (stat_stream_read_seq(NULL) > READ_ONCE(ctx->stream.last_seen))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

/**
 * cgroup_stat_stream_removed - wake stream pollers after a cgroup is removed
 *
 * Called once the removed cgroup's files are deactivated, so that its
 * pollers poll again and get EPOLLERR from kernfs.  The wake-up carries
 * no key: the wait queue is shared by every stream file, and a keyed
 * EPOLLERR would tell waiters that trust the key (io_uring's poll does)
 * that their own file failed.  Without a key each waiter polls its file
 * again, and only the removed cgroup's files report EPOLLERR.
 */
void cgroup_stat_stream_removed(void)
{
	if (wq_has_sleeper(&stat_stream_waitq))
		wake_up_interruptible_all(&stat_stream_waitq);
}
