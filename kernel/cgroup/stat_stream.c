// SPDX-License-Identifier: GPL-2.0
/*
 * <ctrl>.stat.stream - read flushed cgroup statistics once per flush
 *
 * Reading a cgroup's cpu.stat or io.stat flushes rstat first, memory.stat
 * past a threshold: each reader pays the flush, parallel readers serialize
 * on the rstat lock, and telemetry that samples many cgroups at a fixed
 * rate pays it over and over.
 *
 * Each controller that keeps rstat statistics has a stream (struct
 * cgroup_stat_stream), and this file is the one implementation of them
 * all.  Writing an interval to the root's <ctrl>.stat.stream_interval
 * starts the controller's flusher: delayed work that flushes only that
 * controller's rstat tree from the root at that rate, publishes the
 * flushed values of the cgroups that changed (ops->publish()), bumps the
 * stream's sequence number and wakes the pollers of every cgroup's
 * <ctrl>.stat.stream.  Readers wait in poll() and read the published
 * values: no flush and no global lock on the read path.  The flusher only
 * runs while one of the stream's files is open.  When streaming is turned
 * off, pollers wake with EPOLLPRI.
 *
 * <ctrl>.stat.stream.subtree hands the same values for a whole subtree to
 * one read(2), as binary records (<uapi/linux/cgroup_stat_stream.h>): one
 * read and no text per cycle, whatever the number of cgroups.
 *
 * Reads never block.  A read runs under a kernfs active reference; sleeping
 * there would make rmdir wait in kernfs_drain() while holding cgroup_mutex
 * and stall every cgroup operation on the host.  Waiting happens in poll()
 * only: for flushes on a wait queue that is not tied to any cgroup, so it
 * outlives the cgroups whose files are polled, and for removal on the
 * file's own kernfs poll queue, so that removing a cgroup wakes only the
 * pollers of its own stream files.
 *
 * The base stats (cpu.stat) are the first user, at the end of this file.
 */
#include "cgroup-internal.h"

#include <linux/build_bug.h>
#include <linux/cgroup_stat_stream.h>
#include <linux/ctype.h>
#include <linux/seq_file.h>

static struct cgroup_stat_stream *of_stream(struct kernfs_open_file *of)
{
	return (struct cgroup_stat_stream *)of_cft(of)->private;
}

/*
 * A cgroup's stream files answer as removed from the moment rmdir takes the
 * cgroup offline, or the css of the files' controller starts dying (the
 * cgroup removed, or the controller disabled above it): a controller's css
 * goes offline only some time after that.
 */
static bool stat_stream_css_live(struct cgroup_subsys_state *css)
{
	return !cgroup_is_dead(css->cgroup) && !css_is_dying(css) &&
	       css_is_online(css);
}

/*
 * A descendant has a record in a subtree snapshot while it is live and
 * has the controller's files: on for it in its parent's
 * cgroup.subtree_control, not only implicitly, as memory is where only a
 * controller that depends on it (io) is.
 */
static bool stat_stream_css_listed(struct cgroup_subsys_state *css)
{
	return stat_stream_css_live(css) &&
	       (READ_ONCE(css->flags) & CSS_VISIBLE);
}

static bool stat_stream_active(struct cgroup_stat_stream *stream)
{
	lockdep_assert_held(&stream->mutex);
	return stream->interval_ms && stream->nr_open;
}

static u64 stat_stream_read_seq(struct cgroup_stat_stream *stream,
				u64 *time_ns)
{
	unsigned int start;
	u64 seq;

	do {
		start = read_seqbegin(&stream->seqlock);
		seq = stream->seq;
		if (time_ns)
			*time_ns = stream->time_ns;
	} while (read_seqretry(&stream->seqlock, start));

	return seq;
}

/*
 * The flusher: a timer on a fixed grid of deadlines queues the work that
 * flushes.  The grid never drifts, whatever the work's latency.
 */
static enum hrtimer_restart stat_stream_timer_fn(struct hrtimer *timer)
{
	struct cgroup_stat_stream *stream =
		container_of(timer, struct cgroup_stat_stream, timer);
	u64 interval_ns = (u64)READ_ONCE(stream->interval_ms) * NSEC_PER_MSEC;
	u64 overruns = hrtimer_forward_now(timer, ns_to_ktime(interval_ns));

	/*
	 * A late cycle is counted, not queued twice: deadlines the timer
	 * itself missed, and this one if the last cycle is still queued or
	 * running.
	 */
	if (atomic_xchg(&stream->cycle_busy, 1))
		overruns++;
	else
		queue_work(system_dfl_wq, &stream->work);
	if (overruns > 1)
		atomic64_add(overruns - 1, &stream->missed);

	return HRTIMER_RESTART;
}

/*
 * Apply a change of the interval or of the number of open streams.
 * @interval_changed: the next flush is one new interval from now.
 */
static void stat_stream_reconfigure(struct cgroup_stat_stream *stream,
				    bool interval_changed)
{
	u64 interval_ns, last_ns;
	ktime_t next;

	lockdep_assert_held(&stream->mutex);

	if (!stat_stream_active(stream)) {
		hrtimer_cancel(&stream->timer);
		/* a flush already running sees this under the mutex */
		if (cancel_work(&stream->work))
			atomic_set(&stream->cycle_busy, 0);
		if (stream->tracking) {
			stream->ops->track_changes(false);
			stream->tracking = false;
		}
		return;
	}
	if (stream->tracking && !interval_changed)
		return;

	interval_ns = (u64)stream->interval_ms * NSEC_PER_MSEC;
	if (!stream->tracking) {
		stream->ops->track_changes(true);
		stream->tracking = true;
		stream->publish_all = true;
		/*
		 * Flush at once, unless the last flush is less than one
		 * interval old: opening and closing stream files must not
		 * make the flusher run faster than configured.
		 */
		next = ktime_get();
		if (stat_stream_read_seq(stream, &last_ns) &&
		    ktime_before(next, ns_to_ktime(last_ns + interval_ns)))
			next = ns_to_ktime(last_ns + interval_ns);
	} else {
		next = ktime_add_ns(ktime_get(), interval_ns);
	}
	/* the callback forwards the timer: never restart it under its feet */
	hrtimer_cancel(&stream->timer);
	hrtimer_start(&stream->timer, next, HRTIMER_MODE_ABS);
}

/* One flusher cycle: flush, publish, bump the sequence, wake the pollers. */
static void stat_stream_workfn(struct work_struct *work)
{
	struct cgroup_stat_stream *stream =
		container_of(work, struct cgroup_stat_stream, work);
	bool publish_all;
	u64 seq, now;

	mutex_lock(&stream->mutex);
	if (!stat_stream_active(stream)) {
		mutex_unlock(&stream->mutex);
		atomic_set(&stream->cycle_busy, 0);
		return;
	}
	publish_all = stream->publish_all;
	stream->publish_all = false;
	mutex_unlock(&stream->mutex);

	/* only this controller's tree: the others have their own flushers */
	stream->ops->flush();
	now = ktime_get_ns();
	/* a work item never runs concurrently with itself: sole writer */
	seq = stream->seq + 1;
	stream->ops->publish(seq, now, publish_all);

	write_seqlock(&stream->seqlock);
	stream->seq = seq;
	stream->time_ns = now;
	write_sequnlock(&stream->seqlock);
	wake_up_interruptible_poll(&stream->waitq, EPOLLIN | EPOLLRDNORM);
	atomic_set(&stream->cycle_busy, 0);
}

/**
 * cgroup_stat_stream_init - set up a controller's stream
 * @stream: the stream, streaming off
 * @ops: the controller's side of it
 *
 * To be called once, at boot, before the stream's files are created.
 */
void __init cgroup_stat_stream_init(struct cgroup_stat_stream *stream,
				    const struct cgroup_stat_stream_ops *ops)
{
	stream->ops = ops;
	mutex_init(&stream->mutex);
	seqlock_init(&stream->seqlock);
	atomic64_set(&stream->missed, 0);
	atomic_set(&stream->cycle_busy, 0);
	init_waitqueue_head(&stream->waitq);
	hrtimer_setup(&stream->timer, stat_stream_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS);
	INIT_WORK(&stream->work, stat_stream_workfn);
}

/**
 * cgroup_stat_stream_interval_show - show the root's <ctrl>.stat.stream_interval
 * @sf: seq_file of the interval file
 * @v: unused
 *
 * Return: 0.
 */
int cgroup_stat_stream_interval_show(struct seq_file *sf, void *v)
{
	struct cgroup_stat_stream *stream = of_stream(sf->private);

	seq_printf(sf, "%u\n", READ_ONCE(stream->interval_ms));
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
	struct cgroup_stat_stream *stream = of_stream(of);
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

	mutex_lock(&stream->mutex);
	if (stream->interval_ms && !ms) {
		/* never leave a poller asleep without telling it */
		WRITE_ONCE(stream->stops, stream->stops + 1);
		wake_up_interruptible_poll(&stream->waitq, EPOLLPRI);
	}
	WRITE_ONCE(stream->interval_ms, ms);
	stat_stream_reconfigure(stream, true);
	mutex_unlock(&stream->mutex);

	return nbytes;
}

/**
 * cgroup_stat_stream_open - count an open stream file
 * @of: the file being opened: <ctrl>.stat.stream or <ctrl>.stat.stream.subtree
 *
 * The flusher runs only while at least one of its stream's files is open.
 * A file opened while it is idle is readable (poll) only after a flush
 * that completes after the open: the last one may be hours old.
 *
 * Return: 0.
 */
int cgroup_stat_stream_open(struct kernfs_open_file *of)
{
	struct cgroup_stat_stream *stream = of_stream(of);
	struct cgroup_file_ctx *ctx = of->priv;

	mutex_lock(&stream->mutex);
	if (!stat_stream_active(stream))
		ctx->stream.last_seen = stat_stream_read_seq(stream, NULL);
	ctx->stream.stops_seen = stream->stops;
	stream->nr_open++;
	stat_stream_reconfigure(stream, false);
	mutex_unlock(&stream->mutex);
	return 0;
}

/**
 * cgroup_stat_stream_release - count a closed stream file
 * @of: the file being released, on close or when its cgroup is removed
 *
 * When the cgroup is removed, or its controller disabled, kernfs releases
 * its open files once they are deactivated: wake this file's pollers, and
 * only them, so that they poll again and get EPOLLERR from kernfs.  The
 * wake-up carries no key, as a poller may be waiting for EPOLLIN only and
 * still must learn that the file is gone.
 */
void cgroup_stat_stream_release(struct kernfs_open_file *of)
{
	struct cgroup_stat_stream *stream = of_stream(of);
	struct cgroup_file_ctx *ctx = of->priv;
	struct cgroup_subsys_state *css = of_css(of);

	if (cgroup_is_dead(css->cgroup) || css_is_dying(css))
		kernfs_notify(of->kn);

	/* where a <ctrl>.stat.stream.subtree read stopped */
	if (ctx->stream.pos)
		css_put(ctx->stream.pos);

	mutex_lock(&stream->mutex);
	stream->nr_open--;
	stat_stream_reconfigure(stream, false);
	mutex_unlock(&stream->mutex);
}

/**
 * cgroup_stat_stream_show - show a cgroup's stats as of the latest flush
 * @sf: seq_file of the stream file
 * @v: unused
 *
 * Prints what the controller's *.stat prints, as of the latest completed
 * flush, then the flush's sequence number, CLOCK_MONOTONIC time and the
 * total of skipped cycles, and marks that flush, and any stop of
 * streaming, as seen by this open file.  Never flushes, never blocks,
 * takes no global lock.
 *
 * Return: 0 or the error of the controller's show.
 */
int cgroup_stat_stream_show(struct seq_file *sf, void *v)
{
	struct kernfs_open_file *of = sf->private;
	struct cgroup_stat_stream *stream = of_stream(of);
	struct cgroup_file_ctx *ctx = of->priv;
	u64 seen, flush_seq, time_ns, missed, snap_seq, snap_time_ns;
	unsigned int stops = READ_ONCE(stream->stops);
	int ret;

	/* removed, see cgroup_stat_stream_poll() */
	if (!stat_stream_css_live(seq_css(sf)))
		return -ENODEV;

	/*
	 * The values as of the completed flush, even while the next one is
	 * published.  Published before it, they are unchanged since, and
	 * are that flush's values.  Only if two flushes completed meanwhile
	 * do they come from a later one, labelled as such.
	 */
	flush_seq = stat_stream_read_seq(stream, &time_ns);
	seen = flush_seq;
	missed = atomic64_read(&stream->missed);
	ret = stream->ops->show(sf, seq_css(sf), flush_seq, &snap_seq,
				&snap_time_ns);
	if (snap_seq > flush_seq) {
		flush_seq = snap_seq;
		time_ns = snap_time_ns;
	}
	seq_printf(sf, CGROUP_STAT_STREAM_KEY_SEQ " %llu\n"
		       CGROUP_STAT_STREAM_KEY_TIME " %llu\n",
		   flush_seq, div_u64(time_ns, NSEC_PER_USEC));
	if (!stream->ops->flush_lines)
		seq_printf(sf, CGROUP_STAT_STREAM_KEY_MISSED " %llu\n", missed);

	WRITE_ONCE(ctx->stream.last_seen, seen);
	WRITE_ONCE(ctx->stream.stops_seen, stops);
	return ret;
}

/*
 * <ctrl>.stat.stream.subtree: cgroups visited per RCU read-side section.
 * The walk needs no reference inside one; it takes one on the cgroup where
 * the next section, or the next read, starts.
 */
#define STAT_STREAM_WALK_BATCH	64

/*
 * Fills @css's record of at most @size bytes (ops->record_size()) at @buf.
 * Returns the bytes it took: @size, or less where the controller needed
 * less by the time it filled the record.
 */
static size_t stat_stream_fill_record(struct cgroup_stat_stream *stream,
				      struct cgroup_file_ctx *ctx, void *buf,
				      size_t size,
				      struct cgroup_subsys_state *css,
				      struct cgroup_subsys_state *top)
{
	struct cgroup_stat_stream_header *hdr = buf;
	u64 seq, time_ns;

	memset(buf, 0, size);
	hdr->size = size;
	seq = stream->ops->fill_record(buf, css, ctx->stream.layout,
				       ctx->stream.seq, &time_ns);
	if (WARN_ON_ONCE(hdr->size > size || hdr->size < sizeof(*hdr)))
		hdr->size = size;
	/* as of the snapshot's flush, labelled as <ctrl>.stat.stream does */
	if (seq <= ctx->stream.seq) {
		seq = ctx->stream.seq;
		time_ns = ctx->stream.time_ns;
	}
	hdr->cgroup_id = cgroup_id(css->cgroup);
	hdr->parent_id = css == top ? 0 : cgroup_id(cgroup_parent(css->cgroup));
	hdr->flush_seq = seq;
	hdr->flush_time_usec = div_u64(time_ns, NSEC_PER_USEC);
	return hdr->size;
}

static void stat_stream_subtree_reset(struct cgroup_file_ctx *ctx)
{
	if (ctx->stream.pos)
		css_put(ctx->stream.pos);
	ctx->stream.pos = NULL;
	ctx->stream.next_off = 0;
	ctx->stream.keys_done = false;
	ctx->stream.done = false;
}

/* the snapshot's first record, if the controller names its values */
static ssize_t stat_stream_subtree_keys(struct cgroup_stat_stream *stream,
					struct cgroup_file_ctx *ctx,
					char *buf, size_t nbytes)
{
	size_t size = 0;

	if (stream->ops->keys_size)
		size = stream->ops->keys_size(ctx->stream.layout);
	if (!size) {
		ctx->stream.keys_done = true;
		return 0;
	}
	if (size > nbytes)
		return -EINVAL;
	memset(buf, 0, size);
	stream->ops->fill_keys(buf, size, ctx->stream.layout);
	ctx->stream.keys_done = true;
	return size;
}

/**
 * cgroup_stat_stream_subtree_read - read a subtree's stats as of one flush
 * @of: open <ctrl>.stat.stream.subtree
 * @buf: kernel buffer to fill with whole records
 * @nbytes: size of @buf
 * @off: 0 to start a snapshot of the latest flush, else where the last
 *	 read of this open file ended
 *
 * Fills @buf with whole records: the controller's KEYS record first where
 * it has one, then one record per online cgroup that has the controller's
 * files: the opened cgroup, then its descendants in pre-order, continuing at the
 * cgroup the last read stopped at.  A reference on that cgroup keeps the
 * place even if it is removed in between.  Never flushes, never blocks,
 * takes no global lock.  Called again by kernfs (read_fill) until the
 * reader's buffer is full.
 *
 * Return: bytes filled, 0 at the end of the snapshot, -EINVAL for an
 * offset that does not continue the snapshot or a buffer smaller than the
 * next record, -ENODEV once the cgroup is being removed.
 */
ssize_t cgroup_stat_stream_subtree_read(struct kernfs_open_file *of,
					char *buf, size_t nbytes, loff_t off)
{
	struct cgroup_stat_stream *stream = of_stream(of);
	struct cgroup_file_ctx *ctx = of->priv;
	struct cgroup_subsys_state *top = of_css(of);
	struct cgroup_subsys_state *pos, *held;
	size_t len = 0;
	bool full = false;

	BUILD_BUG_ON(sizeof(struct cgroup_stat_stream_header) != 40);

	/*
	 * rmdir takes the cgroup offline before it removes its files: from
	 * then on, as once they are gone, reads fail rather than end empty.
	 * Checked once: the walk below takes @top as online, so a read at
	 * offset 0 that gets here returns @top's record.
	 */
	if (!stat_stream_css_live(top))
		return -ENODEV;

	if (!off) {
		unsigned int stops = READ_ONCE(stream->stops);

		stat_stream_subtree_reset(ctx);
		ctx->stream.seq = stat_stream_read_seq(stream,
						       &ctx->stream.time_ns);
		ctx->stream.layout = stream->ops->layout ?
				     stream->ops->layout() : 0;
		ctx->stream.started = true;
		WRITE_ONCE(ctx->stream.last_seen, ctx->stream.seq);
		/* as for <ctrl>.stat.stream: a read takes the stop's EPOLLPRI */
		WRITE_ONCE(ctx->stream.stops_seen, stops);
	} else if (!ctx->stream.started || off != ctx->stream.next_off) {
		return -EINVAL;
	}
	if (ctx->stream.done)
		return 0;

	if (!ctx->stream.keys_done) {
		ssize_t ret = stat_stream_subtree_keys(stream, ctx, buf, nbytes);

		if (ret < 0)
			return ret;
		len = ret;
	}

	/* the next cgroup to visit, referenced; none at the start: @top */
	held = ctx->stream.pos;
	pos = held ?: top;
	do {
		int n = 0;

		if (len)
			cond_resched();
		rcu_read_lock();
		for (; pos; pos = css_next_descendant_pre(pos, top)) {
			bool online = pos == top || stat_stream_css_listed(pos);
			bool no_room = false;
			size_t size = 0;

			if (online) {
				size = stream->ops->record_size(pos,
							ctx->stream.layout);
				no_room = len + size > nbytes;
			}

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
			if (online)
				len += stat_stream_fill_record(stream, ctx,
							       buf + len, size,
							       pos, top);
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
	struct cgroup_stat_stream *stream = of_stream(of);
	struct cgroup_file_ctx *ctx = of->priv;
	__poll_t mask = 0;

	poll_wait(of->file, &stream->waitq, pt);
	/* for the removal wake-up only, see release: not its mask */
	kernfs_generic_poll(of, pt);

	/*
	 * rmdir takes the cgroup offline before kernfs removes its files:
	 * from then on the files answer as removed ones, reads -ENODEV.
	 */
	if (!stat_stream_css_live(of_css(of)))
		return DEFAULT_POLLMASK | EPOLLERR | EPOLLPRI;

	if (stat_stream_read_seq(stream, NULL) >
	    READ_ONCE(ctx->stream.last_seen))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(stream->stops) != READ_ONCE(ctx->stream.stops_seen))
		mask |= EPOLLPRI;
	return mask;
}

/*
 * cpu.stat.stream: the base stats, flushed from the base rstat tree, the
 * stream's first user.
 */
static void cpu_stat_stream_flush(void)
{
	css_rstat_flush(&cgrp_dfl_root.cgrp.self);
}

static int cpu_stat_stream_show(struct seq_file *sf,
				struct cgroup_subsys_state *css, u64 as_of,
				u64 *seq, u64 *time_ns)
{
	struct cgroup_base_stat bstat;

	*seq = cgroup_base_stat_snapshot(css->cgroup, as_of, &bstat, time_ns);
	cgroup_base_stat_print(sf, &bstat);
#ifdef CONFIG_CGROUP_SCHED
	/* bandwidth counters are not rstat: read as cpu.stat reads them */
	return cgroup_extra_stat_show(sf, cpu_cgrp_id);
#else
	return 0;
#endif
}

static size_t cpu_stat_stream_record_size(struct cgroup_subsys_state *css,
					  u32 layout)
{
	return sizeof(struct cgroup_stat_stream_record);
}

static u64 cpu_stat_stream_fill_record(void *buf,
				       struct cgroup_subsys_state *css,
				       u32 layout, u64 as_of, u64 *time_ns)
{
	struct cgroup_stat_stream_record *rec = buf;
	struct cgroup_base_stat bstat;
	u64 seq;
#ifdef CONFIG_CFS_BANDWIDTH
	struct cgroup_subsys_state *cpu_css;
	struct cpu_cgroup_bandwidth_stat bw;
#endif

	BUILD_BUG_ON(sizeof(*rec) != CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0);
	BUILD_BUG_ON(offsetof(typeof(*rec), flags) != 4);
	BUILD_BUG_ON(offsetof(typeof(*rec), cgroup_id) != 8);
	BUILD_BUG_ON(offsetof(typeof(*rec), parent_id) != 16);
	BUILD_BUG_ON(offsetof(typeof(*rec), flush_seq) != 24);
	BUILD_BUG_ON(offsetof(typeof(*rec), flush_time_usec) != 32);
	BUILD_BUG_ON(offsetof(typeof(*rec), usage_usec) != 40);
	BUILD_BUG_ON(offsetof(typeof(*rec), nice_usec) != 64);
	BUILD_BUG_ON(offsetof(typeof(*rec), nr_periods) != 72);
	BUILD_BUG_ON(offsetof(typeof(*rec), burst_usec) != 104);

	seq = cgroup_base_stat_snapshot(css->cgroup, as_of, &bstat, time_ns);
	rec->type = CGROUP_STAT_STREAM_RECORD_CPU;
	rec->usage_usec = div_u64(bstat.cputime.sum_exec_runtime, NSEC_PER_USEC);
	rec->user_usec = div_u64(bstat.cputime.utime, NSEC_PER_USEC);
	rec->system_usec = div_u64(bstat.cputime.stime, NSEC_PER_USEC);
	rec->nice_usec = div_u64(bstat.ntime, NSEC_PER_USEC);

#ifdef CONFIG_CFS_BANDWIDTH
	/* where cpu.stat shows them: the cpu controller is on (and live) */
	cpu_css = rcu_dereference(css->cgroup->subsys[cpu_cgrp_id]);
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
	return seq;
}

static const struct cgroup_stat_stream_ops cpu_stat_stream_ops = {
	.flush		= cpu_stat_stream_flush,
	.track_changes	= cgroup_base_stat_track_changes,
	.publish	= cgroup_base_stat_publish,
	.show		= cpu_stat_stream_show,
	.record_size	= cpu_stat_stream_record_size,
	.fill_record	= cpu_stat_stream_fill_record,
};

struct cgroup_stat_stream cgroup_cpu_stat_stream;

static int __init cpu_stat_stream_init(void)
{
	cgroup_stat_stream_init(&cgroup_cpu_stat_stream, &cpu_stat_stream_ops);
	return 0;
}
subsys_initcall(cpu_stat_stream_init);
