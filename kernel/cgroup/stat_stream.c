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
 * path.  The flusher only runs while a cpu.stat.stream file is open.  When
 * streaming is turned off, pollers wake with EPOLLPRI.
 *
 * cpu.stat.stream.subtree hands the same values for a whole subtree to one
 * read(2), as binary records (struct cgroup_stat_stream_record): one read
 * and no text per cycle, whatever the number of cgroups.
 *
 * Reads never block.  A read runs under a kernfs active reference; sleeping
 * there would make rmdir wait in kernfs_drain() while holding cgroup_mutex
 * and stall every cgroup operation on the host.  Waiting happens in poll()
 * only: for flushes on a wait queue that is not tied to any cgroup, so it
 * outlives the cgroups whose files are polled, and for removal on the
 * file's own kernfs poll queue, so that removing a cgroup wakes only the
 * pollers of its own stream files.
 */
#include "cgroup-internal.h"

#include <linux/ctype.h>
#include <linux/build_bug.h>
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
/* a cycle is queued or running: the timer skips deadlines meanwhile */
static atomic_t stat_stream_cycle_busy = ATOMIC_INIT(0);
/* times streaming was turned off: pollers that have not read since see EPOLLPRI */
static unsigned int stat_stream_stops;

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
	u64 interval_ns = (u64)READ_ONCE(stat_stream_interval_ms) * NSEC_PER_MSEC;
	u64 overruns = hrtimer_forward_now(timer, ns_to_ktime(interval_ns));

	/*
	 * A late cycle is counted, not queued twice: deadlines the timer
	 * itself missed, and this one if the last cycle is still queued or
	 * running.
	 */
	if (atomic_xchg(&stat_stream_cycle_busy, 1))
		overruns++;
	else
		queue_work(system_dfl_wq, &stat_stream_work);
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
		if (cancel_work(&stat_stream_work))
			atomic_set(&stat_stream_cycle_busy, 0);
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
		atomic_set(&stat_stream_cycle_busy, 0);
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
	atomic_set(&stat_stream_cycle_busy, 0);
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

	/* kernfs terminates @buf after @nbytes: a NUL before that is junk */
	if (strnlen(buf, nbytes) != nbytes)
		return -EINVAL;
	buf = strstrip(buf);
	/* kstrtouint() accepts a leading '+'; the interface takes digits */
	if (!isdigit(*buf) || kstrtouint(buf, 10, &ms))
		return -EINVAL;
	if (ms && (ms < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
		   ms > CGROUP_STAT_STREAM_INTERVAL_MAX_MS))
		return -EINVAL;

	mutex_lock(&stat_stream_mutex);
	if (stat_stream_interval_ms && !ms) {
		/* never leave a poller asleep without telling it */
		WRITE_ONCE(stat_stream_stops, stat_stream_stops + 1);
		wake_up_interruptible_poll(&stat_stream_waitq, EPOLLPRI);
	}
	WRITE_ONCE(stat_stream_interval_ms, ms);
	stat_stream_reconfigure(true);
	mutex_unlock(&stat_stream_mutex);

	return nbytes;
}

/**
 * cgroup_stat_stream_open - count an open stream file
 * @of: the file being opened: cpu.stat.stream or cpu.stat.stream.subtree
 *
 * The flusher runs only while at least one stream file is open.  A file
 * opened while it is idle is readable (poll) only after a flush that
 * completes after the open: the last one may be hours old.
 *
 * Return: 0.
 */
int cgroup_stat_stream_open(struct kernfs_open_file *of)
{
	struct cgroup_file_ctx *ctx = of->priv;

	mutex_lock(&stat_stream_mutex);
	if (!stat_stream_active())
		ctx->stream.last_seen = stat_stream_read_seq(NULL);
	ctx->stream.stops_seen = stat_stream_stops;
	stat_stream_nr_open++;
	stat_stream_reconfigure(false);
	mutex_unlock(&stat_stream_mutex);
	return 0;
}

/**
 * cgroup_stat_stream_release - count a closed stream file
 * @of: the file being released, on close or when its cgroup is removed
 *
 * When the cgroup is removed, kernfs releases its open files once they
 * are deactivated: wake this file's pollers, and only them, so that they
 * poll again and get EPOLLERR from kernfs.  The wake-up carries no key, as
 * a poller may be waiting for EPOLLIN only and still must learn that the
 * file is gone.
 */
void cgroup_stat_stream_release(struct kernfs_open_file *of)
{
	struct cgroup_file_ctx *ctx = of->priv;

	if (cgroup_is_dead(of_css(of)->cgroup))
		kernfs_notify(of->kn);

	/* where a cpu.stat.stream.subtree read stopped */
	if (ctx->stream.pos)
		css_put(ctx->stream.pos);

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
 * Prints the cpu.stat keys as of the latest completed flush, then the
 * flush's sequence number, CLOCK_MONOTONIC time and the total of skipped
 * cycles, and marks that flush, and any stop of streaming, as seen by this
 * open file.  Never flushes, never blocks, takes no global lock.
 *
 * Return: 0 or the error of the cpu controller's stat show.
 */
int cgroup_stat_stream_show(struct seq_file *seq, void *v)
{
	struct kernfs_open_file *of = seq->private;
	struct cgroup_file_ctx *ctx = of->priv;
	struct cgroup *cgrp = seq_css(seq)->cgroup;
	struct cgroup_base_stat bstat;
	u64 seen, flush_seq, time_ns, missed, snap_seq, snap_time_ns;
	unsigned int stops = READ_ONCE(stat_stream_stops);
	int ret = 0;

	/* removed, see cgroup_stat_stream_poll() */
	if (!css_is_online(seq_css(seq)))
		return -ENODEV;

	/*
	 * The values as of the completed flush, even while the next one is
	 * published.  Published before it, they are unchanged since, and
	 * are that flush's values.  Only if two flushes completed meanwhile
	 * do they come from a later one, labelled as such.
	 */
	flush_seq = stat_stream_read_seq(&time_ns);
	seen = flush_seq;
	missed = atomic64_read(&stat_stream_missed);
	snap_seq = cgroup_base_stat_snapshot(cgrp, flush_seq, &bstat,
					     &snap_time_ns);
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

	WRITE_ONCE(ctx->stream.last_seen, seen);
	WRITE_ONCE(ctx->stream.stops_seen, stops);
	return ret;
}

/*
 * cpu.stat.stream.subtree: cgroups visited per RCU read-side section.  The
 * walk needs no reference inside one; it takes one on the cgroup where the
 * next section, or the next read, starts.
 */
#define STAT_STREAM_WALK_BATCH	64

static void stat_stream_fill_record(struct cgroup_stat_stream_record *rec,
				    struct cgroup *cgrp, struct cgroup *top,
				    u64 flush_seq, u64 flush_time_ns)
{
	struct cgroup_base_stat bstat;
	u64 seq, time_ns;
#ifdef CONFIG_CFS_BANDWIDTH
	struct cgroup_subsys_state *cpu_css;
	struct cpu_cgroup_bandwidth_stat bw;
#endif

	/* as of the snapshot's flush, labelled as cpu.stat.stream does */
	seq = cgroup_base_stat_snapshot(cgrp, flush_seq, &bstat, &time_ns);
	if (seq <= flush_seq) {
		seq = flush_seq;
		time_ns = flush_time_ns;
	}

	memset(rec, 0, sizeof(*rec));
	rec->size = sizeof(*rec);
	rec->type = CGROUP_STAT_STREAM_RECORD_CPU;
	rec->cgroup_id = cgroup_id(cgrp);
	rec->parent_id = cgrp == top ? 0 : cgroup_id(cgroup_parent(cgrp));
	rec->flush_seq = seq;
	rec->flush_time_usec = div_u64(time_ns, NSEC_PER_USEC);
	rec->usage_usec = div_u64(bstat.cputime.sum_exec_runtime, NSEC_PER_USEC);
	rec->user_usec = div_u64(bstat.cputime.utime, NSEC_PER_USEC);
	rec->system_usec = div_u64(bstat.cputime.stime, NSEC_PER_USEC);
	rec->nice_usec = div_u64(bstat.ntime, NSEC_PER_USEC);

#ifdef CONFIG_CFS_BANDWIDTH
	/* where cpu.stat shows them: the cpu controller is on (and live) */
	cpu_css = rcu_dereference(cgrp->subsys[cpu_cgrp_id]);
	if (cpu_css && !css_is_dying(cpu_css)) {
		cpu_cgroup_bandwidth_stat(cpu_css, &bw);
		rec->flags |= CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH;
		rec->nr_periods = (u32)bw.nr_periods;
		rec->nr_throttled = (u32)bw.nr_throttled;
		rec->throttled_usec = bw.throttled_usec;
		rec->nr_bursts = (u32)bw.nr_bursts;
		rec->burst_usec = bw.burst_usec;
	}
#endif
}

static void stat_stream_subtree_reset(struct cgroup_file_ctx *ctx)
{
	if (ctx->stream.pos)
		css_put(ctx->stream.pos);
	ctx->stream.pos = NULL;
	ctx->stream.next_off = 0;
	ctx->stream.done = false;
}

/**
 * cgroup_stat_stream_subtree_read - read a subtree's stats as of one flush
 * @of: open cpu.stat.stream.subtree
 * @buf: kernel buffer to fill with whole records
 * @nbytes: size of @buf
 * @off: 0 to start a snapshot of the latest flush, else where the last
 *	 read of this open file ended
 *
 * Fills @buf with one struct cgroup_stat_stream_record per online cgroup:
 * the opened cgroup, then its descendants in pre-order, continuing at the
 * cgroup the last read stopped at.  A reference on that cgroup keeps the
 * place even if it is removed in between.  Never flushes, never
 * blocks, takes no global lock.  Called again by kernfs (read_fill) until
 * the reader's buffer is full.
 *
 * Return: bytes filled, 0 at the end of the snapshot, -EINVAL for an
 * offset that does not continue the snapshot or a buffer smaller than the
 * next record, -ENODEV once the cgroup is being removed.
 */
ssize_t cgroup_stat_stream_subtree_read(struct kernfs_open_file *of,
					char *buf, size_t nbytes, loff_t off)
{
	struct cgroup_file_ctx *ctx = of->priv;
	struct cgroup_subsys_state *top = of_css(of);
	struct cgroup_subsys_state *pos, *held;
	const size_t size = sizeof(struct cgroup_stat_stream_record);
	size_t len = 0;
	bool full = false;

	BUILD_BUG_ON(size != CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, flags) != 4);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, cgroup_id) != 8);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, parent_id) != 16);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, flush_seq) != 24);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record,
			      flush_time_usec) != 32);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, usage_usec) != 40);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, nice_usec) != 64);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record, nr_periods) != 72);
	BUILD_BUG_ON(offsetof(struct cgroup_stat_stream_record,
			      burst_usec) != 104);

	/*
	 * rmdir takes the cgroup offline before it removes its files: from
	 * then on, as once they are gone, reads fail rather than end empty.
	 * Checked once: the walk below takes @top as online, so a read at
	 * offset 0 that gets here returns @top's record.
	 */
	if (!css_is_online(top))
		return -ENODEV;

	if (!off) {
		unsigned int stops = READ_ONCE(stat_stream_stops);

		stat_stream_subtree_reset(ctx);
		ctx->stream.seq = stat_stream_read_seq(&ctx->stream.time_ns);
		ctx->stream.started = true;
		WRITE_ONCE(ctx->stream.last_seen, ctx->stream.seq);
		/* as for cpu.stat.stream: a read takes the stop's EPOLLPRI */
		WRITE_ONCE(ctx->stream.stops_seen, stops);
	} else if (!ctx->stream.started || off != ctx->stream.next_off) {
		return -EINVAL;
	}
	if (ctx->stream.done)
		return 0;

	/* the next cgroup to visit, referenced; none at the start: @top */
	held = ctx->stream.pos;
	pos = held ?: top;
	do {
		int n = 0;

		if (len)
			cond_resched();
		rcu_read_lock();
		for (; pos; pos = css_next_descendant_pre(pos, top)) {
			bool online = pos == top || css_is_online(pos);
			bool no_room = online && len + size > nbytes;

			if (++n > STAT_STREAM_WALK_BATCH || no_room) {
				/* stop: the next batch or read starts at @pos */
				if (pos != held) {
					/* no reference: being freed, passed over */
					if (!css_tryget(pos))
						continue;
					if (held)
						css_put(held);
					held = pos;
				}
				full = no_room;
				break;
			}
			if (online) {
				stat_stream_fill_record((void *)(buf + len),
							pos->cgroup, top->cgroup,
							ctx->stream.seq,
							ctx->stream.time_ns);
				len += size;
			}
		}
		rcu_read_unlock();
	} while (pos && !full);

	if (!pos && held) {
		css_put(held);
		held = NULL;
	}
	ctx->stream.pos = held;
	ctx->stream.done = !pos;
	if (!len && full)
		return -EINVAL;
	ctx->stream.next_off = off + len;
	return len;
}

/**
 * cgroup_stat_stream_poll - wait for a flush this open file has not read
 * @of: open stream file
 * @pt: poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when a flush completed after this file last
 * read, EPOLLPRI when streaming was turned off since, else 0.  Once the
 * cgroup is removed, EPOLLERR with the mask kernfs gives a removed file.
 */
__poll_t cgroup_stat_stream_poll(struct kernfs_open_file *of, poll_table *pt)
{
	struct cgroup_file_ctx *ctx = of->priv;
	__poll_t mask = 0;

	poll_wait(of->file, &stat_stream_waitq, pt);
	/* for the removal wake-up only, see release: not its mask */
	kernfs_generic_poll(of, pt);

	/*
	 * rmdir takes the cgroup offline before kernfs removes its files:
	 * from then on the files answer as removed ones, reads -ENODEV.
	 */
	if (!css_is_online(of_css(of)))
		return DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI;

	if (stat_stream_read_seq(NULL) > READ_ONCE(ctx->stream.last_seen))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(stat_stream_stops) != READ_ONCE(ctx->stream.stops_seen))
		mask |= EPOLLPRI;
	return mask;
}
