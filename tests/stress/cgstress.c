// SPDX-License-Identifier: GPL-2.0
/*
 * cgstress: randomized stress of the cgroup statistics streams (cpu,
 * memory, io, pressure), invariants checked as it goes.  One table,
 * ctrls[] (ctrls.c), says what each stream is (its files, its controller
 * if it has one, its CGROUP_STAT_CTRL_*, the names of its values and how
 * its classic files give them, which of them never go back, how its load
 * is made) and drives every role: a fifth stream is a row.  For --seconds:
 *
 *   churn (3)       nested mkdir/rmdir of small trees under a private
 *                   subtree, controllers on in some subtree_control, cpu.max
 *                   on some, some directories 0700; every rmdir timed
 *   migrator        moves 4 processes between leaves; each makes every
 *                   stream's load (cpu: burns; memory: maps, touches,
 *                   drops up to 8 MiB, fills memfds; io: O_DIRECT I/O on two
 *                   loop devices, one removed and re-created every 1-4 s;
 *                   pressure: two threads busy on one CPU, one waiting)
 *   poll (2), epoll, io_uring
 *                   ~10 text and subtree files each, of random streams
 *                   and cgroups (removed ones too), replaced now and then,
 *                   waited on (POLLIN|POLLPRI; epoll level and edge
 *                   triggered; io_uring one-shot and multishot), read whole
 *                   or in pieces, full or change snapshots
 *   walker          full and change snapshots without waiting
 *   changes         per stream, change snapshots and full ones on one
 *                   file: the changes and REMOVED records applied to a state
 *   accounting      (cpu) children of a parent without processes, burners
 *                   moved in and out, children removed: REMOVED accounting
 *   pinning         subtree files read up to their first cgroup and kept
 *                   while cgroups go, some resumed later
 *   storm           --storm-fds files on one cgroup, epolled, the cgroup
 *                   removed
 *   quick           open/read/close of stream and classic files (*.stat,
 *                   the four *.pressure read as one text),
 *                   interval reads, opens closed unread
 *   interval, monitor (one each per stream)
 *                   valid, invalid and 0 intervals (streaming stops for a
 *                   moment); the root's text read at every publication: the
 *                   timeline the wake-up checks compare against
 *   unprivileged    a process as uid 65534 reading snapshots of the subtree
 *
 * Invariants, each against the stream's own publications, stops and
 * interval (a violation prints a FAIL line, the first three again at the
 * end; the run fails):
 *   - publication_seq never goes back for one open file (text, SNAPSHOT),
 *     nor publications_skipped, nor per cgroup the values the table calls
 *     monotone (cpu: usage, user, system, nice; memory: pgfault,
 *     pgmajfault, events.*; io: a device's, while it is one disk;
 *     pressure: the *.total), REMOVED records' final values included;
 *   - no error but ENODEV / EPOLLERR / ENOENT once the cgroup's rmdir has
 *     started (EPOLLERR with ENODEV reads; io_uring: EINVAL); ENODATA only
 *     where there is nothing to read: a text file of a cgroup newer than
 *     the latest publication, or a stream not armed (before its first
 *     publication, or disarmed: interval 0 and no file open; the monitors
 *     keep every stream armed through the run, and at the end each,
 *     stopped with no file open, must come to ENODATA);
 *   - an rmdir returns within 2 s (times --slow);
 *   - at most one POLLIN wake-up per publication per open file: at most
 *     1 + (publication_seq last read) - (publications before the open);
 *   - EPOLLPRI only after a stop, SNAPSHOT's STOPPED flag only near one and
 *     always inside one; no poller asleep over a second (times --slow)
 *     through a publication, a stop or its cgroup's removal;
 *   - a stopped stream's publication_seq stays put (but for the one cycle
 *     under way at the stop);
 *   - snapshots: every record valid (common.c's decoder), whole records in
 *     each read, SCHEMA = the text's keys (cpu.stat's; memory.stat's, then
 *     current, swap.current, events.*; io.stat's device keys; pressure:
 *     <res>.<some|full>.avg10, .avg60, .avg300, .total of each line of the
 *     *.pressure files); full: the opened cgroup first with parent 0,
 *     parents before children, no cgroup twice, every cgroup of ours older
 *     than the publication and alive through the read, none without the
 *     controller's files, each with its controllers' values (cpu:
 *     bandwidth where cpu is on; pressure: all on every cgroup of ours,
 *     none allowed on one not ours: its cgroup.pressure may be 0);
 *     changes: base_seq = the file's last complete snapshot, parents known,
 *     NEW only there; REMOVED only for cgroups of ours being removed, with
 *     their parent, below the opened cgroup, once per file, never listed;
 *     io: no device twice;
 *   - reads: a buffer smaller than the next record and an offset inside a
 *     record fail with EINVAL (a read with room then returns a record
 *     larger than the buffer, unless something changed between); a read
 *     at offset 0 never returns 0 bytes;
 *   - text: the controller's lines (cpu.stat's and memory.stat's keys in
 *     order, bandwidth keys where cpu is on; io: "MAJ:MIN" lines, each
 *     device once, no counters or rbytes= .. dios=; pressure: each
 *     *.pressure file's lines behind its resource, "cpu some avg10=A.AA
 *     avg60=A.AA avg300=A.AA total=T", averages at most 100.00), then
 *     exactly publication_seq, publication_time_usec, publications_skipped;
 *     the classic files alike (io.stat: policies' fields and "(unknown)";
 *     pressure: cpu.pressure, memory.pressure, io.pressure and irq.pressure
 *     where shown, each line behind its resource's name);
 *   - changes: the state of a file's snapshot, changes and REMOVED records
 *     applied, equals its next full snapshot of the same publication, but
 *     for cgroups removed, or made after the publication, between the two,
 *     and LATER records;
 *   - accounting (cpu; not pressure: a parent's stall time is not its
 *     children's sum): at every publication the parent's usage_usec = its
 *     live children's + its removed children's (REMOVED), at most one usec
 *     per child below (each child is floored on its own); a REMOVED record in
 *     the first snapshot after the rmdir, once, equal to the child's
 *     cpu.stat read before it (exact: the burners are moved out, never
 *     left to exit in it, so no last tick lands after the rmdir);
 *   - pinning: with the churn stopped and every pinning file open, the pin
 *     area's nr_dying_descendants drains to 0 within 20 s (times --slow);
 *   - unprivileged: no CGROUP or REMOVED record of a cgroup at or under a
 *     0700 directory made before the read, the long-lived cgroups listed,
 *     no error;
 *   - storms: every file of the removed cgroup reports EPOLLERR and reads
 *     ENODEV within 60 s (times --slow); at the end, rmdir with 500 and
 *     4,000 epolled files timed and printed with the ratio (no bound);
 *   - the migrants' I/O never fails; in 30 s or more each stream has
 *     a value rising below the root, change states compared, unprivileged
 *     snapshots and pinning files, and the accounting checked;
 *   - intervals: valid ones read back, invalid ones EINVAL, value kept.
 *
 * usage: cgstress [--seconds N] [--seed S] [--max-failures N] [--slow N]
 *                 [--storm-fds N] [--no-zero-interval] [--no-memory] [--no-io]
 *                 [--no-pressure]
 * Exit: 0 pass, 1 fail, 77 skip (not root, no cgroup2, no cpu.stat.stream).
 * A stream the kernel lacks (pressure: also where psi=0), whose controller
 * the root lacks, or whose load cannot be made (io without loop devices),
 * is left out with a message.  Everything runs under
 * <cgroup2>/cgstress.<pid>, removed at the end (also after a failure or
 * SIGINT/SIGTERM); the intervals it changed, the root's subtree_control
 * and the loop devices are restored.
 */
#include "cgstress.h"

int64_t slow = 1;
atomic_ulong *counters;	/* shared with the migrants, which count their load */
#define X(n) #n,
static const char *const counter_names[C_NR] = { COUNTERS(X) };
static const char *const ctrl_counter_names[CC_NR] = { CTRL_COUNTERS(X) };
#undef X

static atomic_long max_rmdir_ns, max_read_ns;
/* --no-zero-interval: never stop streaming (to look past a stop-related failure) */
static bool zero_interval = true;
long storm_fds = 2000;
static atomic_long failures;
static long max_failures = 20;
int64_t t_start;
static volatile sig_atomic_t stop_signal;
static atomic_bool stopping;
uint64_t seed;

void note_max(atomic_long *m, long v)
{
	long cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

bool running(void)
{
	return !stop_signal && !atomic_load(&stopping);
}

static double elapsed(void)
{
	return (now_ns() - t_start) / 1e9;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		perror("malloc");
		exit(EXIT_FAIL);
	}
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(EXIT_FAIL);
	}
	return p;
}

/* memory the forked processes share with this one (made before they are) */
static void *shared_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(EXIT_FAIL);
	}
	return p;
}

/* the first failures, said again at the end: a log's tail then names them */
#define FIRST_FAILURES	3
static char first_failures[FIRST_FAILURES][1024];
static atomic_int nr_first_failures;
/* the unprivileged reader, a process of its own, counts its failures here */
atomic_long *child_failures;
bool in_child;

void report_failure(const char *where, const char *fmt, ...)
{
	long n = atomic_fetch_add(in_child ? child_failures : &failures, 1) + 1;
	char line[sizeof(first_failures[0])];
	va_list ap;
	int len;

	if (n > max_failures)
		goto out;
	len = snprintf(line, sizeof(line), "FAIL [%8.3f s] %s: ", elapsed(), where);
	va_start(ap, fmt);
	if (len >= 0 && (size_t)len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	flockfile(stdout);
	puts(line);
	fflush(stdout);
	funlockfile(stdout);
	if (n <= FIRST_FAILURES && !in_child) {
		memcpy(first_failures[n - 1], line, sizeof(line));
		atomic_fetch_add(&nr_first_failures, 1);
	}
out:
	if (n >= max_failures && !in_child)
		atomic_store(&stopping, true);
}

/* "<stem>.stream[.subtree]" */
const char *file_name(const struct ctrl *c, bool subtree)
{
	static char names[CTRLS_MAX][2][64];
	int i = c - ctrls;

	if (!names[i][subtree][0])
		snprintf(names[i][subtree], sizeof(names[i][subtree]), "%s%s", c->stem,
			 subtree ? SUBTREE_SUFFIX : STREAM_SUFFIX);
	return names[i][subtree];
}

/* "<cgroup>/<stem>.stream[.subtree]" */
void ctrl_file(char *out, size_t len, const char *cg, const struct ctrl *c, bool subtree)
{
	path_join(out, len, cg, file_name(c, subtree));
}

/*
 * @c's classic values of cgroup @cg, as text its parser takes (the row's
 * reader, or its classic file): the length, or -errno
 */
ssize_t classic_text(const struct ctrl *c, const char *cg, char *buf, size_t len)
{
	char path[PATH_MAX];

	if (c->read_classic)
		return c->read_classic(c, cg, buf, len);
	path_join(path, sizeof(path), cg, c->classic);
	return read_file(path, buf, len);
}

/* whether @cg has @c's files */
bool has_files(const struct ctrl *c, const struct cg_pick *cg)
{
	return !c->files_need_controller || !cg->known || (cg->on & CTRL_BIT(c));
}

/*
 * The values @c gives a cgroup (text: of them, the ones its text shows)
 * whose controllers are @on: -1 if that is not known (then those of a
 * cgroup with or without the controller, or with its values off, are).
 */
static int values_for(const struct ctrl *c, const struct cg_pick *cg, bool text)
{
	if ((c->nr_short || c->can_be_off) && !cg->known)
		return -1;
	if (c->nr_short && !(cg->on & CTRL_BIT(c)))
		return c->nr_short;
	return text ? c->nr_text : c->nr_names;
}

/* a random controller of those stressed */
struct ctrl *pick_ctrl(struct rng *r)
{
	struct ctrl *on[CTRLS_MAX];
	int n = 0;

	for_each_ctrl(c)
		on[n++] = c;
	return on[rng_below(r, n)];
}

/* ------------------------------------------------------------------ */
/* what cgstress made: every cgroup by id, shared with the unprivileged reader */

struct shared *sh;
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t dirs_nr;

static size_t dir_hash(uint64_t id)
{
	return (id * 0x9e3779b97f4a7c15ULL) >> 20 & (DIRS_CAP - 1);
}

struct dir *dir_find(uint64_t id)
{
	size_t i = dir_hash(id);
	uint64_t cur;

	while ((cur = atomic_load_explicit(&sh->dirs[i].id, memory_order_acquire)) && cur != id)
		i = (i + 1) & (DIRS_CAP - 1);
	return cur ? &sh->dirs[i] : NULL;
}

static void dir_add(uint64_t id, const struct dir *d)
{
	size_t i = dir_hash(id);

	pthread_mutex_lock(&dirs_lock);
	/* a full table would not end a search: past 3/4, new ones stay unknown */
	if (4 * ++dirs_nr > 3 * DIRS_CAP) {
		pthread_mutex_unlock(&dirs_lock);
		return;
	}
	while (atomic_load(&sh->dirs[i].id))
		i = (i + 1) & (DIRS_CAP - 1);
	sh->dirs[i].parent = d->parent;
	sh->dirs[i].t_created = d->t_created;
	sh->dirs[i].t_private = d->t_private;
	sh->dirs[i].on = d->on;
	atomic_store_explicit(&sh->dirs[i].id, id, memory_order_release);
	pthread_mutex_unlock(&dirs_lock);
}

/* is @id a strict descendant of @anc (in the table, or the root)? */
static bool dir_below(uint64_t id, uint64_t anc)
{
	const struct dir *d;

	while ((d = dir_find(id))) {
		if (d->parent == anc)
			return true;
		id = d->parent;
	}
	return false;
}

static char root[PATH_MAX];	/* the cgroup2 mount */
char top[PATH_MAX];	/* <root>/cgstress.<pid> */
uint64_t root_id, top_id;

/* the churn's parent; cgroups no process enters: the pinning's, the accounting's, the storms' */
struct area pool, pin_area, acct_area, storm_area;
struct area park;	/* where the burners wait, stopped */

/* cg_mkdir() without the count of calls under way */
static uint64_t cg_mkdir_recorded(const char *path, uint64_t parent, unsigned int on,
				  bool private)
{
	struct dir d = { .parent = parent, .on = on };
	int64_t t0 = now_ns();
	struct stat st;

	if (mkdir(path, private ? 0700 : 0755) || stat(path, &st))
		return 0;
	d.t_created = now_ns();
	if (private) {
		/* mkdir's mode, if the kernel took it, hid it from its start */
		d.t_private = t0;
		if ((st.st_mode & 0777) != 0700) {
			if (chmod(path, 0700))
				return 0;
			d.t_private = now_ns();
		}
		COUNT(private_dirs);
	}
	COUNT(mkdir);
	dir_add(st.st_ino, &d);
	return st.st_ino;
}

/*
 * mkdir of a cgroup of ours, @private ones 0700 from the start, recorded
 * in the table: its id, or 0 (errno set).  The kernel lists the cgroup
 * from the mkdir on; until the table has it, the call counts as under way
 * (sh->mkdir_inflight), for the unprivileged reader's check.
 */
uint64_t cg_mkdir(const char *path, uint64_t parent, unsigned int on, bool private)
{
	uint64_t id;

	atomic_fetch_add(&sh->mkdir_inflight, 1);
	id = cg_mkdir_recorded(path, parent, on, private);
	atomic_fetch_sub(&sh->mkdir_inflight, 1);
	return id;
}

/* +<controller> for each controller in @on: the ones that took */
unsigned int enable_children(const char *cg, unsigned int on)
{
	char path[PATH_MAX], plus[64];
	unsigned int got = 0;
	int err;

	path_join(path, sizeof(path), cg, "cgroup.subtree_control");
	for_each_ctrl(c) {
		if (!(on & CTRL_BIT(c)) || !c->controller)
			continue;
		snprintf(plus, sizeof(plus), "+%s", c->controller);
		err = write_file(path, plus);
		if (err) {
			FAIL("%s in %s: %s", plus, path, strerror(-err));
			continue;
		}
		got |= CTRL_BIT(c);
		CCOUNT(c, subtree_control);
	}
	return got;
}

/* ------------------------------------------------------------------ */
/* the registry: cgroups the readers and the migrator pick               */

struct cg cgs[MAX_CGS];
static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static int fixed_leaf_a = 1;	/* where processes go when evacuated */

/*
 * A random live (or being removed) cgroup with @c's files (any with @c
 * NULL); leaves only if @leaf.
 */
bool pick_cg(struct rng *r, bool leaf, bool removing_too, const struct ctrl *c,
	     struct cg_pick *out)
{
	int cand[MAX_CGS], n = 0, i;

	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < MAX_CGS; i++) {
		if (cgs[i].state == CG_FREE || (leaf && !cgs[i].leaf) ||
		    (c && !has_files(c, &cgs[i].p)) ||
		    (cgs[i].state == CG_REMOVING && !removing_too))
			continue;
		cand[n++] = i;
	}
	if (n)
		*out = cgs[cand[rng_below(r, n)]].p;
	pthread_mutex_unlock(&cg_lock);
	return n > 0;
}

/*
 * Removals: rmdirs started and returned (while the two differ, one is
 * under way), and when each cgroup's rmdir started and returned.  An
 * ENODEV, EPOLLERR or ENOENT is only fine for a cgroup whose rmdir has
 * started.
 */
atomic_ulong rm_starts, rm_ends;

void rm_start(uint64_t id)
{
	struct dir *d = dir_find(id);

	if (d) {
		atomic_store(&d->t_rm_done, 0);
		atomic_store(&d->t_rm_start, now_ns());
	}
	atomic_fetch_add(&rm_starts, 1);
}

void rm_done(uint64_t id)
{
	struct dir *d = dir_find(id);

	if (d)
		atomic_store(&d->t_rm_done, now_ns());
}

/* has @id's rmdir started?  *@t_done: when it returned, 0 if not yet; @enodev: note one */
bool rm_started(uint64_t id, int64_t *t_done, bool enodev)
{
	struct dir *d = dir_find(id);

	if (!d || !atomic_load(&d->t_rm_start))
		return false;
	if (t_done)
		*t_done = atomic_load(&d->t_rm_done);
	if (enodev)
		atomic_store(&d->enodev, true);
	return true;
}

/* rmdir, timed against @limit: 0 or -errno */
int timed_rmdir(const char *path, int64_t limit)
{
	int64_t t0 = now_ns(), dt;
	int r = rmdir(path), err = errno;

	dt = now_ns() - t0;
	note_max(&max_rmdir_ns, dt);
	if (dt > limit * slow)
		FAIL("rmdir %s took %.3f s", path, dt / 1e9);
	if (!r)
		COUNT(rmdir);
	return r ? -err : 0;
}

/* ------------------------------------------------------------------ */
/* per stream: its monitor's timeline, its stops, its knob              */

static void mon_append(struct ctrl *c, int64_t t_end, uint64_t seq, uint64_t time_usec)
{
	pthread_mutex_lock(&c->mon_lock);
	if (c->mon_nr == c->mon_cap) {
		c->mon_cap = c->mon_cap ? 2 * c->mon_cap : 4096;
		c->mon_log = realloc(c->mon_log, c->mon_cap * sizeof(*c->mon_log));
		if (!c->mon_log) {
			perror("realloc");
			exit(EXIT_FAIL);
		}
	}
	if (c->mon_nr && c->mon_log[c->mon_nr - 1].seq > seq) {
		seq = c->mon_log[c->mon_nr - 1].seq;
		time_usec = c->mon_log[c->mon_nr - 1].time_usec;
	}
	c->mon_log[c->mon_nr++] = (struct mon_entry){ t_end, seq, time_usec };
	pthread_mutex_unlock(&c->mon_lock);
}

/*
 * The latest publication @c's monitor had read by @when (seq 0 if none):
 * it had completed by then, as every publication before it.
 */
static struct mon_entry mon_by(struct ctrl *c, int64_t when)
{
	struct mon_entry ret = { 0 };
	size_t lo = 0, hi;

	pthread_mutex_lock(&c->mon_lock);
	hi = c->mon_nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->mon_log[mid].t_end <= when)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		ret = c->mon_log[lo - 1];
	pthread_mutex_unlock(&c->mon_lock);
	return ret;
}

/* publications of @c that had certainly completed by @when */
static uint64_t completed_by(struct ctrl *c, int64_t when)
{
	return mon_by(c, when).seq;
}

/*
 * Was @cg new at @when: had no publication after its mkdir completed by
 * then (so that its stream files had nothing to read)?
 */
static bool newer_than_publication(struct ctrl *c, const struct cg_pick *cg, int64_t when)
{
	return cg->t_created && (int64_t)mon_by(c, when).time_usec * 1000 <= cg->t_created;
}

/* waits (up to @timeout_ns) until @c's monitor read a publication made after @t */
bool wait_publication_after(struct ctrl *c, int64_t t, int64_t timeout_ns)
{
	int64_t end = now_ns() + timeout_ns * slow;

	while (running() && now_ns() < end) {
		if ((int64_t)mon_by(c, now_ns()).time_usec * 1000 > t)
			return true;
		sleep_ms(5);
	}
	return false;
}

/* the stop record @k of @c, field @f, if published */
static bool stop_field(struct ctrl *c, long k, int f, int64_t *t)
{
	if (k >= atomic_load(&c->stops[f]))
		return false;
	*t = c->stop_t[k][f];
	return true;
}

/*
 * SNAPSHOT's STOPPED flag, set at a read between @r0 and @r1: may it be
 * set (a stop overlapping the read), must it be (a stop all through it)?
 */
static void stopped_bounds(struct ctrl *c, int64_t r0, int64_t r1, bool *may, bool *must)
{
	long k;
	int64_t t0, t1, t2, t3;

	*may = *must = false;
	for (k = atomic_load(&c->stops[STOP_BEGIN]) - 1; k >= 0; k--) {
		if (!stop_field(c, k, STOP_BEGIN, &t0))
			continue;
		if (stop_field(c, k, RESTART_DONE, &t3) && t3 < r0)
			break;
		if (t0 < r1)
			*may = true;
		if (stop_field(c, k, STOP_DONE, &t1) && t1 < r0 &&
		    (!stop_field(c, k, RESTART_BEGIN, &t2) || r1 < t2))
			*must = true;
	}
}

/*
 * The publication_seq the root's text file of @c gives now, through a file
 * opened for this read only: -1 if it cannot be had (reported).
 */
int64_t seq_now(struct ctrl *c)
{
	char path[PATH_MAX], why[160], *buf = xmalloc(TEXT_MAX);
	struct pub_tail t;
	size_t body;
	ssize_t n;
	int64_t ret = -1;

	ctrl_file(path, sizeof(path), root, c, false);
	n = read_file(path, buf, TEXT_MAX);
	if (n < 0)
		FAIL("read %s: %s", path, strerror(-n));
	else if (parse_pub_tail(buf, n, &t, &body, why))
		FAIL("%s: %s", path, why);
	else
		ret = t.seq;
	free(buf);
	return ret;
}

/* ------------------------------------------------------------------ */
/* text: the controller's lines, then the publication's                */

/*
 * @c's lines of a text file (@classic: of its classic values), @want
 * values (-1: as many as a cgroup with or without its controller has).
 */
int parse_body(const struct ctrl *c, const char *text, size_t len, bool classic, int want,
	       struct stat_values *s, char *why)
{
	if (c->parse ? c->parse(c, text, len, classic, s, why) :
	    parse_stat_text(text, len, (const char *const *)c->names, c->nr_names, c->device_names,
			    classic, s, why))
		return -EINVAL;
	COUNT_N(io_stat_unknown_lines, s->unknown);
	if (!c->device_names && (want >= 0 ? s->nr_values != (unsigned int)want :
				 s->nr_values != c->nr_text && s->nr_values != c->nr_short))
		return snprintf(why, 160, "%u values, not %d", s->nr_values,
				want >= 0 ? want : (int)c->nr_text), -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* per-file state of the readers                                        */

/*
 * Changes that may make the next record of a snapshot another one: an
 * rmdir, a device removed, a publication (a reader two behind gets newer
 * copies).  The same stamp before and after a read proves none came
 * between, unless one was under way at the first: CHANGING then.
 */
#define CHANGING	UINT64_MAX
static uint64_t change_stamp(struct ctrl *c)
{
	uint64_t ends = atomic_load(&rm_ends), sum = atomic_load(&rm_starts);

	if (sum != ends)
		return CHANGING;
	for (int k = 0; k < nr_loops; k++) {
		uint64_t e = atomic_load(&loops[k].epoch);

		if (e & 1)
			return CHANGING;
		sum += e << 20;
	}
	return sum + (completed_by(c, now_ns()) << 40);
}

static size_t idmap_hash(const struct idmap *m, uint64_t id, uint64_t dev)
{
	return ((id ^ dev * 0xff51afd7ed558ccdULL) * 0x9e3779b97f4a7c15ULL) & (m->cap - 1);
}

/* the entry of @id (@dev 0) or of its device, made if new (and @make), else NULL */
struct idmap_entry *idmap_get(struct idmap *m, uint64_t id, uint64_t dev, bool make)
{
	size_t i;

	if (make && 2 * (m->nr + 1) > m->cap) {
		struct idmap old = *m;

		m->cap = m->cap ? 2 * m->cap : 64;
		m->e = xcalloc(m->cap, sizeof(*m->e));
		m->nr = 0;
		for (i = 0; i < old.cap; i++)
			if (old.e[i].id)
				*idmap_get(m, old.e[i].id, old.e[i].dev, true) = old.e[i];
		free(old.e);
	}
	if (!m->cap)
		return NULL;
	i = idmap_hash(m, id, dev);
	while (m->e[i].id && (m->e[i].id != id || m->e[i].dev != dev))
		i = (i + 1) & (m->cap - 1);
	if (!m->e[i].id) {
		if (!make)
			return NULL;
		m->e[i].id = id;
		m->e[i].dev = dev;
		m->nr++;
	}
	return &m->e[i];
}

/* linear probing: the entries after a deleted one move up into its place */
void idmap_del(struct idmap *m, uint64_t id)
{
	struct idmap_entry *e = idmap_get(m, id, 0, false);
	size_t j;

	if (!e)
		return;
	free(e->rec);
	*e = (struct idmap_entry){ 0 };
	m->nr--;
	for (j = (e - m->e + 1) & (m->cap - 1); m->e[j].id; j = (j + 1) & (m->cap - 1)) {
		struct idmap_entry moved = m->e[j];

		m->e[j] = (struct idmap_entry){ 0 };
		m->nr--;
		*idmap_get(m, moved.id, moved.dev, true) = moved;
	}
}

void idmap_clear(struct idmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].rec);
	free(m->e);
	*m = (struct idmap){ 0 };
}


/* An ENODEV/ENOENT/EPOLLERR for @f's cgroup: fine once its rmdir started. */
static void check_gone(struct sfile *f, const char *what)
{
	if (!rm_started(f->cg.id, NULL, true))
		FFAIL(f, "%s, a cgroup whose rmdir had not started", what);
	if (!f->gone)
		CCOUNT(f->c, gone);
	f->gone = true;
}

/* the registry entry of slot @slot, or a random cgroup with @c's files */
bool pick_for(struct rng *r, struct ctrl *c, int slot, struct cg_pick *cg)
{
	if (slot < 0)
		return pick_cg(r, false, true, c, cg);
	pthread_mutex_lock(&cg_lock);
	*cg = cgs[slot].p;
	pthread_mutex_unlock(&cg_lock);
	return true;
}

/*
 * Opens @c's text or @subtree file of @cg, a removed one too: 0, or -errno
 * (failures other than a removal are reported).
 */
int file_open(struct sfile *f, struct ctrl *c, bool subtree, const struct cg_pick *cg)
{
	uint32_t gen = f->gen;	/* completions of earlier files carry older ones */
	int dfd, fd;
	struct stat st;
	int64_t t0;

	memset(f, 0, sizeof(*f));
	f->gen = gen;
	f->fd = -1;
	f->c = c;
	f->subtree = subtree;
	f->cg = *cg;
	f->stops_ref = atomic_load(&c->stops[STOP_DONE]);
	t0 = now_ns();
	dfd = open(cg->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT && rm_started(cg->id, NULL, false)) {
			COUNT(opens_of_removed);
			return -ENOENT;
		}
		FAIL("open %s: %s", cg->path, strerror(errno));
		return -errno;
	}
	/* the path may name a new cgroup by now: only the picked one counts */
	if (fstat(dfd, &st) || (uint64_t)st.st_ino != cg->id) {
		close(dfd);
		return -ESTALE;
	}
	fd = openat(dfd, file_name(c, subtree), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV) {
			check_gone(f, "open failing with ENOENT/ENODEV");
			COUNT(opens_of_removed);
			return -ENOENT;
		}
		FFAIL(f, "open: %s", strerror(errno));
		return -errno;
	}
	f->fd = fd;
	f->t_open = t0;
	f->t_read_end = now_ns();
	f->gen++;
	if (subtree)
		CCOUNT(c, subtree_opens);
	else
		CCOUNT(c, text_opens);
	return 0;
}

/*
 * At most one wake-up per publication: wake-up i was followed by a read
 * that marked publication P_i seen, and wake-up i+1 needs a publication
 * after P_i, so the P_i strictly grow from at least the publications
 * completed at the open.
 */
void file_close(struct sfile *f)
{
	if (f->fd < 0)
		return;
	if (f->wakes && f->have_seq) {
		uint64_t before = completed_by(f->c, f->t_open);
		uint64_t limit = 1 + (f->seq_max > before ? f->seq_max - before : 0);

		if (f->wakes > limit)
			FFAIL(f, "%llu POLLIN wake-ups (via %s), more than one per publication: "
			      "publication_seq %llu at the last read, %llu completed before the open",
			      (unsigned long long)f->wakes, f->via, (unsigned long long)f->seq_max,
			      (unsigned long long)before);
	}
	if (f->hook && f->hook->abandon)
		f->hook->abandon(f->hook->arg);
	close(f->fd);
	f->fd = -1;
	free(f->ids.e);
	f->ids = (struct idmap){ 0 };
	COUNT(closes);
}

/* one publication read through @f (text, or a SNAPSHOT record): never goes back */
static void check_label(struct sfile *f, uint64_t seq, uint64_t time_usec, uint64_t skipped,
			const char *what)
{
	if (f->have_seq && (seq < f->seq_last || skipped < f->skipped_last ||
			    (seq == f->seq_last && time_usec != f->time_last)))
		FFAIL(f, "went back (%s): publication_seq %llu -> %llu, time %llu -> %llu, "
		      "skipped %llu -> %llu", what, (unsigned long long)f->seq_last,
		      (unsigned long long)seq, (unsigned long long)f->time_last,
		      (unsigned long long)time_usec, (unsigned long long)f->skipped_last,
		      (unsigned long long)skipped);
	if ((int64_t)time_usec * 1000 > now_ns())
		FFAIL(f, "publication_time_usec %llu is in the future", (unsigned long long)time_usec);
	f->have_seq = true;
	f->seq_last = seq;
	f->time_last = time_usec;
	f->skipped_last = skipped;
	if (seq > f->seq_max)
		f->seq_max = seq;
}

/*
 * The values of cgroup @id as @f read them, as of @from (their
 * publication; 0: not known): the monotone ones never go back, nor does a
 * device's while it is one disk; rises are counted, as proof that the
 * load shows.
 */
static void check_values(struct sfile *f, uint64_t id, const struct stat_values *s, int64_t from,
			 const char *what)
{
	struct ctrl *c = f->c;
	struct idmap_entry *e = idmap_get(&f->ids, id, 0, true);
	bool rose = false;
	unsigned int i, k, n = 0;

	for (i = 0; i < c->nr_mono; i++) {
		uint64_t v;

		if ((unsigned int)c->mono[i] >= s->nr_values)
			continue;
		v = s->values[c->mono[i]];
		if (e->have && v < e->v[i])
			FFAIL(f, "cgroup %llu: %s went back from %llu to %llu (%s)",
			      (unsigned long long)id, c->names[c->mono[i]],
			      (unsigned long long)e->v[i], (unsigned long long)v, what);
		rose |= e->have && v > e->v[i];
		e->v[i] = v;
	}
	e->have = true;
	if (c->limit_idx >= 0 && (unsigned int)c->limit_idx < s->nr_values &&
	    s->values[c->limit_idx])
		CCOUNT(c, limited);
	for (k = 0; k < s->nr_devices; k++) {
		uint64_t dev = (uint64_t)s->dev[k].major << 32 | s->dev[k].minor;
		uint64_t epoch = from ? dev_epoch(s->dev[k].major, s->dev[k].minor, from) :
				 EPOCH_UNSTABLE;
		struct idmap_entry *d = idmap_get(&f->ids, id, dev + 1, true);

		if (d->have && (d->epoch != epoch || epoch == EPOCH_UNSTABLE)) {
			COUNT(epoch_skips);
		} else if (d->have) {
			for (i = 0; i < c->nr_device_names; i++) {
				if (s->dev[k].v[i] < d->v[i]) {
					FFAIL(f, "cgroup %llu device %u:%u: %s went back from %llu to "
					      "%llu (%s)", (unsigned long long)id, s->dev[k].major,
					      s->dev[k].minor, c->device_names[i],
					      (unsigned long long)d->v[i],
					      (unsigned long long)s->dev[k].v[i], what);
					break;
				}
				rose |= s->dev[k].v[i] > d->v[i];
			}
		}
		memcpy(d->v, s->dev[k].v, sizeof(s->dev[k].v));
		d->epoch = epoch;
		d->have = true;
		n++;
	}
	CCOUNT_N(c, devices, n);
	if (rose) {
		CCOUNT(c, rises);
		if (id != root_id)
			CCOUNT(c, cgroup_rises);
	}
}

static void note_read_time(int64_t t0)
{
	note_max(&max_read_ns, now_ns() - t0);
}

/* a failed read of @f: 0 if fine (a removal, checked), else -EIO (reported) */
static int read_error(struct sfile *f, const char *what)
{
	if (errno == ENODEV) {
		check_gone(f, "a read failing with ENODEV");
		COUNT(enodev_reads);
		return -ENODEV;
	}
	FFAIL(f, "%s: %s", what, strerror(errno));
	return -EIO;
}

/* text, read whole or in pieces: 0, -ENODEV (removed), -ENODATA (new: replace it), or -EIO */
static int read_text(struct reader *rd, struct sfile *f)
{
	struct ctrl *c = f->c;
	struct pub_tail t;
	char why[160];
	ssize_t len = 0, n;
	int64_t t0 = now_ns();
	bool small = rng_pct(&rd->rng, 40);
	size_t body;

	if (!small) {
		len = n = pread(f->fd, rd->buf, TEXT_MAX, 0);
		CCOUNT(c, text_reads);
	} else {
		/* a seq_file read in pieces: one show(), handed out piecewise */
		size_t chunk = rng_range(&rd->rng, 1, 256);

		n = lseek(f->fd, 0, SEEK_SET);
		while (n >= 0 && len < TEXT_MAX) {
			n = read(f->fd, rd->buf + len, chunk < (size_t)(TEXT_MAX - len) ? chunk :
				 (size_t)(TEXT_MAX - len));
			if (n <= 0)
				break;
			len += n;
		}
		CCOUNT(c, text_reads_small);
	}
	note_read_time(t0);
	if (n < 0 && errno == ENODATA) {
		if (!newer_than_publication(c, &f->cg, t0)) {
			FFAIL(f, "ENODATA, though a publication after its mkdir had completed");
			return -EIO;
		}
		CCOUNT(c, enodata_new);
		f->replace = true;
		return -ENODATA;
	}
	if (n < 0)
		return read_error(f, small ? "read" : "pread");
	if (len >= TEXT_MAX) {
		FFAIL(f, "more than %d bytes", TEXT_MAX);
		return -EIO;
	}
	/* a cgroup is published while its mkdir runs, before its controllers' css's */
	if (parse_pub_tail(rd->buf, len, &t, &body, why) ||
	    parse_body(c, rd->buf, body, false, (int64_t)t.time_usec * 1000 > f->cg.t_created ?
		       values_for(c, &f->cg, true) : -1, rd->sample, why)) {
		FFAIL(f, "%s: %.*s", why, (int)(len < 300 ? len : 300), rd->buf);
		return -EIO;
	}
	check_label(f, t.seq, t.time_usec, t.skipped, small ? "small reads" : "pread");
	check_values(f, f->cg.id, rd->sample, t.time_usec * 1000, "text");
	return 0;
}

/* ------------------------------------------------------------------ */
/* snapshots                                                            */

/* a snapshot being read through a file */
struct snapread {
	struct snap_decoder d;
	bool changes;		/* asked for */
	uint64_t snap;		/* its number in the file */
	size_t cgroups, removed;
	bool first_seen;	/* the record with parent 0 */
	int64_t r0, r1;		/* the first read's window */
};

/* a record's values as a sample */
static void sample_from_rec(const struct snap_decoder *d, const struct snap_rec *r,
			    struct stat_values *s)
{
	s->nr_values = r->nr_values;
	memcpy(s->values, r->values, 8 * (size_t)r->nr_values);
	s->nr_devices = r->nr_devices < STAT_DEVICES_MAX ? r->nr_devices : STAT_DEVICES_MAX;
	for (unsigned int k = 0; k < s->nr_devices; k++) {
		const struct cgroup_stat_device *dev = snap_device(d, r, k);

		s->dev[k].major = dev->major;
		s->dev[k].minor = dev->minor;
		memcpy(s->dev[k].v, dev->values, 8 * (size_t)d->schema.nr_device_values);
	}
}

/* the SCHEMA names @c's values and devices' values as its files do */
static void check_schema(struct sfile *f, const struct snap_schema *s)
{
	struct ctrl *c = f->c;
	unsigned int i;

	atomic_store(&c->schema_size, s->size);
	if (s->nr_values != c->nr_names || s->nr_device_values != c->nr_device_names) {
		FFAIL(f, "SCHEMA of %u values and %u per device, not %u and %u", s->nr_values,
		      s->nr_device_values, c->nr_names, c->nr_device_names);
		return;
	}
	for (i = 0; i < s->nr_values + s->nr_device_values; i++) {
		const char *want = i < s->nr_values ? c->names[i] : c->device_names[i - s->nr_values];

		if (strcmp(s->name[i], want)) {
			FFAIL(f, "SCHEMA name %u is %.40s where the text files have %s", i,
			      s->name[i], want);
			return;
		}
	}
}

static void check_snapshot_rec(struct sfile *f, struct snapread *s)
{
	const struct cgroup_stat_snapshot *h = &s->d.snap;
	bool changes = h->hdr.flags & CGROUP_STAT_SNAPSHOT_F_CHANGES, may, must;

	check_label(f, h->seq, h->time_usec, h->skipped, "snapshot");
	if (s->changes && f->complete_seq ? !changes || h->base_seq != f->complete_seq : changes)
		FFAIL(f, "a %s snapshot with flags %#x base_seq %llu; the file's last complete "
		      "snapshot is %llu", s->changes ? "change" : "full", h->hdr.flags,
		      (unsigned long long)h->base_seq, (unsigned long long)f->complete_seq);
	stopped_bounds(f->c, s->r0, s->r1, &may, &must);
	if (h->hdr.flags & CGROUP_STAT_SNAPSHOT_F_STOPPED) {
		CCOUNT(f->c, stopped_snapshots);
		if (!may)
			FFAIL(f, "snapshot %llu says STOPPED; the interval was not 0 near the read",
			      (unsigned long long)h->seq);
	} else if (must) {
		FFAIL(f, "snapshot %llu does not say STOPPED, read while the interval was 0",
		      (unsigned long long)h->seq);
	}
	if (h->hdr.flags & CGROUP_STAT_SNAPSHOT_F_LOST)
		CCOUNT(f->c, lost_snapshots);
}

/* a REMOVED record: of a cgroup of ours being removed, below the opened one, once */
static void check_removed(struct sfile *f, struct snapread *s, const struct snap_rec *r,
			  struct stat_values *smp)
{
	const struct dir *d = dir_find(r->id);
	struct idmap_entry *e;
	int64_t t_rm = 0;

	s->removed++;
	CCOUNT(f->c, removed_records);
	if (d) {
		if (!rm_started(r->id, NULL, false))
			FFAIL(f, "a REMOVED record of cgroup %llu, whose rmdir had not started",
			      (unsigned long long)r->id);
		else
			t_rm = atomic_load(&d->t_rm_start);
		if (r->parent_id != d->parent)
			FFAIL(f, "REMOVED cgroup %llu has parent %llu, not %llu",
			      (unsigned long long)r->id, (unsigned long long)r->parent_id,
			      (unsigned long long)d->parent);
	} else {
		COUNT(foreign_removed);
	}
	if (f->cg.under_top && !dir_below(r->id, f->cg.id))
		FFAIL(f, "a REMOVED record of cgroup %llu, not below the opened one",
		      (unsigned long long)r->id);
	e = idmap_get(&f->ids, r->id, 0, true);
	if (e->removed_snap && !f->abandoned)
		FFAIL(f, "cgroup %llu REMOVED in snapshots %llu and %llu of one open file",
		      (unsigned long long)r->id, (unsigned long long)e->removed_snap,
		      (unsigned long long)s->snap);
	e->removed_snap = s->snap;
	sample_from_rec(&s->d, r, smp);
	check_values(f, r->id, smp, t_rm, "REMOVED");
}

/*
 * A CGROUP record: in pre-order (a parent listed before, or in a change
 * snapshot known to the file), once, with the values and files its
 * controllers give it.
 */
static void check_cgroup(struct sfile *f, struct snapread *s, const struct snap_rec *r,
			 struct stat_values *smp)
{
	struct ctrl *c = f->c;
	const struct dir *d = dir_find(r->id);
	struct idmap_entry *e, *p;
	struct cg_pick pick = { .known = d != NULL, .on = d ? d->on : 0 };
	int want = values_for(c, &pick, false);

	s->cgroups++;
	if (r->flags & CGROUP_STAT_CGROUP_F_NEW)
		CCOUNT(c, new_records);
	if (r->flags & CGROUP_STAT_CGROUP_F_LATER)
		CCOUNT(c, later_records);
	if (r->flags & CGROUP_STAT_CGROUP_F_PARTIAL)
		CCOUNT(c, partial_records);
	if (!r->parent_id || (s->cgroups == 1 && !s->d.snap.base_seq)) {
		if (r->parent_id || r->id != f->cg.id || s->cgroups != 1)
			FFAIL(f, "record %zu is cgroup %llu parent %llu: only the first record, the "
			      "opened cgroup's (%llu), has parent 0", s->cgroups,
			      (unsigned long long)r->id, (unsigned long long)r->parent_id,
			      (unsigned long long)f->cg.id);
		s->first_seen = true;
	} else {
		p = idmap_get(&f->ids, r->parent_id, 0, false);
		if (!p || !(p->snap == s->snap || (s->d.snap.base_seq && p->snap && !p->removed_snap)))
			FFAIL(f, "record of %llu before (or without) its parent %llu",
			      (unsigned long long)r->id, (unsigned long long)r->parent_id);
		if (d && d->parent != r->parent_id)
			FFAIL(f, "cgroup %llu has parent %llu, not %llu", (unsigned long long)r->id,
			      (unsigned long long)r->parent_id, (unsigned long long)d->parent);
	}
	e = idmap_get(&f->ids, r->id, 0, true);
	if (e->snap == s->snap)
		FFAIL(f, "cgroup %llu twice in one snapshot", (unsigned long long)r->id);
	if (e->removed_snap)
		FFAIL(f, "cgroup %llu listed after its REMOVED record", (unsigned long long)r->id);
	e->snap = s->snap;
	if (d && c->files_need_controller && !(d->on & CTRL_BIT(c)))
		FFAIL(f, "a record of cgroup %llu, which has no %s controller",
		      (unsigned long long)r->id, c->name);
	/* a cgroup is published while its mkdir runs, before its controllers' css's */
	if (d && (int64_t)s->d.snap.time_usec * 1000 <= d->t_created)
		want = -1;
	if (want >= 0 ? r->nr_values != (unsigned int)want :
	    r->nr_values != c->nr_names && r->nr_values != c->nr_short)
		FFAIL(f, "cgroup %llu has %u values, not %d (controllers %#x)",
		      (unsigned long long)r->id, r->nr_values, want, pick.on);
	sample_from_rec(&s->d, r, smp);
	check_values(f, r->id, smp, s->d.snap.time_usec * 1000, "record");
}

/*
 * A complete snapshot: a full one lists the opened cgroup (but where it is
 * newer than the publication) and every cgroup of ours below it that is
 * older than the publication and lived through the read.
 */
static void finish_snapshot(struct sfile *f, struct snapread *s)
{
	struct ctrl *c = f->c;
	int64_t t_pub = s->d.snap.time_usec * 1000;
	struct cg_pick live[MAX_CGS];
	int i, n = 0;

	CCOUNT(c, snapshots);
	if (s->d.snap.base_seq)
		CCOUNT(c, change_snapshots);
	CCOUNT_N(c, records, s->cgroups);
	if (!s->d.snap.base_seq && !s->first_seen &&
	    !(f->cg.t_created && t_pub <= f->cg.t_created))
		FFAIL(f, "snapshot %llu (of %.3f s) lacks the opened cgroup (made at %.3f s)",
		      (unsigned long long)s->d.snap.seq, (t_pub - t_start) / 1e9,
		      (f->cg.t_created - t_start) / 1e9);
	if (!s->d.snap.base_seq && (f->cg.id == top_id || f->cg.id == root_id)) {
		pthread_mutex_lock(&cg_lock);
		for (i = 0; i < MAX_CGS; i++)
			if (cgs[i].state == CG_LIVE && cgs[i].p.under_top && has_files(c, &cgs[i].p))
				live[n++] = cgs[i].p;
		pthread_mutex_unlock(&cg_lock);
		for (i = 0; i < n; i++) {
			struct idmap_entry *e = idmap_get(&f->ids, live[i].id, 0, false);

			if (live[i].t_created < t_pub && !rm_started(live[i].id, NULL, false) &&
			    (!e || e->snap != s->snap))
				FFAIL(f, "snapshot %llu lacks %s, alive all through it",
				      (unsigned long long)s->d.snap.seq, live[i].path);
		}
	}
	f->complete_seq = s->d.snap.seq;
	f->abandoned = false;
	if (f->hook && f->hook->done)
		f->hook->done(f->hook->arg, &s->d);
}

static void abandon_snapshot(struct sfile *f)
{
	f->abandoned = true;
	if (f->hook && f->hook->abandon)
		f->hook->abandon(f->hook->arg);
}

/* a read of a bad size or at a bad offset: EINVAL.  0, or an error of read_snapshot() */
static int expect_einval(struct sfile *f, ssize_t n, const char *what)
{
	if (n < 0 && errno == EINVAL)
		return 0;
	if (n < 0 && errno == ENODEV)
		return read_error(f, what);
	FFAIL(f, "%s returned %zd (%s)", what, n, n < 0 ? strerror(errno) : "no error");
	return -EIO;
}

/* this read's bytes: whole, valid records, each checked */
static int snapshot_records(struct reader *rd, struct sfile *f, struct snapread *s, size_t n,
			    size_t len)
{
	struct snap_rec r;
	char why[160];
	size_t off = 0;
	int ret;

	while ((ret = snap_next(&s->d, rd->buf, n, &off, &r, why)) > 0) {
		if (ret == 2 && s->d.phase == 1)
			check_snapshot_rec(f, s);
		else if (ret == 2)
			check_schema(f, &s->d.schema);
		else if (r.type == CGROUP_STAT_REC_REMOVED)
			check_removed(f, s, &r, rd->sample);
		else
			check_cgroup(f, s, &r, rd->sample);
		if (ret == 1 && f->hook)
			f->hook->rec(f->hook->arg, &s->d, &r);
	}
	if (ret < 0)
		FFAIL(f, "a read at offset %zu returned %zu bytes, not whole valid records: at %zu: %s",
		      len, n, off, why);
	return ret;
}

/*
 * One whole snapshot, full or of the changes since the file's last
 * complete one, in pieces of random size: 0, -ENODEV or -EIO.  Modes: 0
 * pread 1 MiB, 1 pread then read() on, 2 pread at the running offset, 3
 * tight: 48 bytes to 1 KiB per read, twice as much after each EINVAL (the
 * next record is larger: checked once a read with room returns it, unless
 * something changed between).
 */
int read_snapshot(struct reader *rd, struct sfile *f, bool changes)
{
	struct ctrl *c = f->c;
	const off_t start = changes ? (off_t)CGROUP_STAT_STREAM_CHANGES : 0;
	struct snapread s = { .changes = changes };
	int mode = rng_below(&rd->rng, 4);
	size_t len = 0, chunk = BIG_BUF, failed = 0;
	uint64_t failed_stamp = CHANGING;
	ssize_t n;
	int ret;

	snap_decoder_init(&s.d, c->id);
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, rng_range(&rd->rng, 1, 47), start);
		ret = expect_einval(f, n, "a read smaller than the SNAPSHOT record");
		if (ret)
			return abandon_snapshot(f), ret;
		CCOUNT(c, small_buf_einval);
	}
	if (rng_pct(&rd->rng, 5)) {
		n = pread(f->fd, rd->buf, 4096, start + rng_range(&rd->rng, 1, 47));
		ret = expect_einval(f, n, "a read at an offset inside the SNAPSHOT record");
		if (ret)
			return abandon_snapshot(f), ret;
		CCOUNT(c, bad_offset_einval);
	}
	s.snap = ++f->snaps;
	if (mode == 1 || mode == 2)
		chunk = rng_range(&rd->rng, 512, 16384);
	else if (mode == 3)
		chunk = rng_range(&rd->rng, 48, 1024);
	for (;;) {
		uint64_t stamp = change_stamp(c);
		int64_t t0 = now_ns();

		if (!len || mode != 1)
			n = pread(f->fd, rd->buf, chunk, start + len);
		else
			n = read(f->fd, rd->buf, chunk);
		note_read_time(t0);
		if (!len && !s.r0) {
			s.r0 = t0;
			s.r1 = now_ns();
		}
		if (n < 0 && errno == EINVAL && chunk < BIG_BUF) {
			CCOUNT(c, next_record_einval);
			failed = chunk;
			failed_stamp = stamp;
			chunk = mode == 3 && 2 * chunk < BIG_BUF ? 2 * chunk : BIG_BUF;
			continue;
		}
		if (n < 0) {
			abandon_snapshot(f);
			if (errno == ENODATA) {
				FFAIL(f, "ENODATA from an armed stream's subtree file");
				return -EIO;
			}
			return read_error(f, len ? "a continued read" : "a read");
		}
		if (!len && !n) {
			FFAIL(f, "a read at offset 0 returned 0 bytes (rmdir %s)",
			      rm_started(f->cg.id, NULL, false) ? "started" : "not started");
			return abandon_snapshot(f), -EIO;
		}
		if (failed && n) {
			uint32_t size;

			memcpy(&size, rd->buf, sizeof(size));
			if (failed_stamp != CHANGING && failed_stamp == change_stamp(c)) {
				if (size <= failed)
					FFAIL(f, "a %zu-byte read at offset %zu failed with EINVAL, yet "
					      "the next record has %u bytes", failed, len, size);
				CCOUNT(c, einval_checked);
			}
			failed = 0;
		}
		if (snapshot_records(rd, f, &s, n, len) < 0)
			return abandon_snapshot(f), -EIO;
		if (!n)
			break;
		/* read() goes on from the file position pread() did not move */
		if (!len && mode == 1 && lseek(f->fd, start + n, SEEK_SET) != start + n)
			return abandon_snapshot(f), read_error(f, "lseek");
		len += n;
		if (mode == 3)
			chunk = rng_range(&rd->rng, 48, 1024);
	}
	if (s.d.phase < 2) {
		FFAIL(f, "a snapshot of %zu bytes without SNAPSHOT and SCHEMA", len);
		return abandon_snapshot(f), -EIO;
	}
	finish_snapshot(f, &s);
	return 0;
}

/*
 * A read after a wake-up or just like that (a subtree file: a change
 * snapshot at random); updates the stop bookkeeping.
 */
static int file_read(struct reader *rd, struct sfile *f)
{
	long ref = atomic_load(&f->c->stops[STOP_DONE]);
	int ret;

	if (f->subtree)
		ret = read_snapshot(rd, f, rng_pct(&rd->rng, 30));
	else
		ret = read_text(rd, f);
	if (!ret) {
		f->stops_ref = ref;
		f->t_read_end = now_ns();
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* the waiting readers                                                  */

/*
 * What poll/epoll/io_uring reported for @f: EPOLLERR only once removed
 * (and reads then fail with ENODEV), EPOLLPRI only after a stop, EPOLLIN
 * counted as a wake-up once the read after it worked.
 */
static void reader_event(struct reader *rd, struct sfile *f, unsigned int revents,
			 enum counter wake_counter)
{
	struct ctrl *c = f->c;
	uint64_t prev;
	bool had;
	int ret;

	if (revents & POLLNVAL) {
		FFAIL(f, "POLLNVAL: the test lost track of its fds");
		return;
	}
	if (revents & POLLERR) {
		COUNT(err_wakes);
		check_gone(f, "EPOLLERR");
		if (pread(f->fd, rd->buf, TEXT_MAX, 0) >= 0 || errno != ENODEV)
			FFAIL(f, "EPOLLERR but a read did not fail with ENODEV (%s)", strerror(errno));
		return;
	}
	if (revents & POLLPRI) {
		CCOUNT(c, pri_wakes);
		if (atomic_load(&c->stops[STOP_BEGIN]) <= f->stops_ref) {
			/*
			 * An epoll or io_uring event is the file's state when it
			 * was queued: one queued for a stop that a read has
			 * taken since is stale.  Only a POLLPRI the file still
			 * reports now, with no stop since its last read, is wrong;
			 * unless it comes with POLLERR: the cgroup was removed
			 * since the event was queued (checked at the next event).
			 */
			struct pollfd p = { .fd = f->fd, .events = POLLPRI };

			if (poll(&p, 1, 0) == 1 && (p.revents & POLLPRI) && !(p.revents & POLLERR) &&
			    atomic_load(&c->stops[STOP_BEGIN]) <= f->stops_ref)
				FFAIL(f, "EPOLLPRI but streaming was not stopped since its last read");
			else
				COUNT(stale_pri_events);
		}
	}
	if (!(revents & (POLLIN | POLLPRI))) {
		FFAIL(f, "poll mask %#x", revents);
		return;
	}
	had = f->have_seq;
	prev = f->seq_last;
	ret = file_read(rd, f);
	if (ret == -ENODEV) {
		/* removed meanwhile: from now on polls say EPOLLERR */
		struct pollfd p = { .fd = f->fd, .events = POLLIN | POLLPRI };

		if (poll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
			FFAIL(f, "reads fail with ENODEV, poll says %#x", p.revents);
		return;
	}
	/*
	 * io_uring's poll takes the wake-up's mask as the answer: a file that
	 * read the new publication before its wait queue was woken is told
	 * POLLIN once more and reads that publication again.  poll and epoll
	 * ask the file, so there POLLIN with nothing new is wrong.
	 */
	if (!ret && (revents & POLLIN) && had && f->seq_last == prev) {
		if (strncmp(f->via, "io_uring", 8))
			FFAIL(f, "POLLIN (via %s), but the read gave publication %llu again",
			      f->via, (unsigned long long)prev);
		else
			COUNT(stale_in_events);
		return;
	}
	/* only a wake-up followed by a read of a publication counts */
	if (!ret && (revents & POLLIN)) {
		f->wakes++;
		atomic_fetch_add_explicit(&counters[wake_counter], 1, memory_order_relaxed);
		CCOUNT(c, wakes);
	}
}

/*
 * A wait on @f timed out at @t1: nothing it must be woken for may have
 * happened more than the wake-up margin before @t1.
 */
static void reader_timeout(struct sfile *f, int64_t t1)
{
	int64_t by = t1 - WAKE_MARGIN_NS * slow, t_done = 0, t0, t;
	struct ctrl *c = f->c;
	long k;

	if (f->fd < 0 || f->gone || f->replace)
		return;
	if (rm_started(f->cg.id, &t_done, false) && t_done && t_done <= by)
		FFAIL(f, "a poller slept through the removal of its cgroup (rmdir returned %.3f s "
		      "before the wait timed out)", (t1 - t_done) / 1e9);
	for (k = atomic_load(&c->stops[STOP_DONE]) - 1;
	     k >= 0 && stop_field(c, k, STOP_BEGIN, &t0) && t0 > f->t_read_end; k--)
		if (stop_field(c, k, STOP_DONE, &t) && t <= by) {
			FFAIL(f, "a poller slept through a stop of streaming (EPOLLPRI)");
			break;
		}
	if (f->have_seq && completed_by(c, by) > f->seq_last)
		FFAIL(f, "a poller slept through a publication: it last read publication_seq %llu, "
		      "%llu had completed %.1f s before the wait timed out",
		      (unsigned long long)f->seq_last, (unsigned long long)completed_by(c, by),
		      WAKE_MARGIN_NS * slow / 1e9);
}

/* (re)fill @f with a random controller's file of a random cgroup, read once at random */
static bool reader_refill(struct reader *rd, struct sfile *f)
{
	struct ctrl *c = pick_ctrl(&rd->rng);
	struct cg_pick cg;

	file_close(f);
	if (!pick_cg(&rd->rng, false, true, c, &cg) ||
	    file_open(f, c, !rng_pct(&rd->rng, 30), &cg))
		return false;
	/* a first read, not a wake-up; half the files stay unread until woken */
	if (rng_pct(&rd->rng, 50))
		file_read(rd, f);
	return f->fd >= 0;
}

void reader_init(struct reader *rd, uint64_t rng_seed_value)
{
	rng_seed(&rd->rng, rng_seed_value);
	rd->buf = xmalloc(BIG_BUF);
	rd->sample = xmalloc(sizeof(*rd->sample));
	for (int i = 0; i < FILES_PER_READER; i++) {
		memset(&rd->f[i], 0, sizeof(rd->f[i]));
		rd->f[i].fd = -1;
	}
}

void reader_fini(struct reader *rd)
{
	for (int i = 0; i < FILES_PER_READER; i++)
		file_close(&rd->f[i]);
	free(rd->buf);
	free(rd->sample);
}

/* files of removed cgroups, and of new ones with nothing to read yet, are replaced, some others */
static bool reader_should_replace(struct reader *rd, struct sfile *f)
{
	return f->fd < 0 || f->gone || f->replace || rng_pct(&rd->rng, 3);
}

/* how the waiting readers wait: poll(), epoll, io_uring */
enum via { VIA_POLL, VIA_EPOLL, VIA_URING };
#define URING_CANCEL_UD	(~0ULL)

struct waiter {
	enum via via;
	int ep;
	struct io_uring ring;
	struct pollfd p[FILES_PER_READER];
	int idx[FILES_PER_READER];
};

static struct io_uring_sqe *uring_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

/* file @i is about to be replaced (its io_uring poll cancelled), or new */
static void waiter_file(struct waiter *w, struct reader *rd, int i, bool fresh)
{
	struct sfile *f = &rd->f[i];
	struct epoll_event e = { .events = EPOLLIN | EPOLLPRI, .data.u64 = (uint64_t)f->gen << 32 | i };

	if (!fresh && w->via == VIA_URING && f->armed) {
		struct io_uring_sqe *sqe = uring_sqe(&w->ring);

		/* a replaced file's last completions are ignored */
		io_uring_prep_poll_remove(sqe, (uint64_t)f->gen << 32 | i);
		io_uring_sqe_set_data64(sqe, URING_CANCEL_UD);
		f->armed = false;
	}
	if (!fresh)
		return;
	f->edge = f->multishot = rng_pct(&rd->rng, 50);
	f->via = w->via == VIA_POLL ? "poll" : w->via == VIA_URING ?
		 (f->multishot ? "io_uring multishot" : "io_uring one-shot") :
		 f->edge ? "epoll edge-triggered" : "epoll";
	if (f->edge)
		e.events |= EPOLLET;
	if (w->via == VIA_EPOLL && epoll_ctl(w->ep, EPOLL_CTL_ADD, f->fd, &e))
		FAIL("epoll_ctl ADD: %s", strerror(errno));
}

/*
 * Waits on the files: an event for file i is (i << 32) | mask in @ev (of
 * EVENTS_MAX).  Events, 0 on a timeout, -1 if none to take.
 */
#define EVENTS_MAX	(8 * FILES_PER_READER)
static int waiter_wait(struct waiter *w, struct reader *rd, int n, uint64_t *ev)
{
	struct __kernel_timespec ts = { POLL_TIMEOUT_MS / 1000, POLL_TIMEOUT_MS % 1000 * NSEC_PER_MSEC };
	struct epoll_event eev[FILES_PER_READER];
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;
	int r, k = 0;

	switch (w->via) {
	case VIA_POLL:
		r = poll(w->p, n, POLL_TIMEOUT_MS);
		for (int i = 0; i < n && r > 0; i++)
			if (w->p[i].revents)
				ev[k++] = (uint64_t)w->idx[i] << 32 | w->p[i].revents;
		return r < 0 && errno != EINTR ? FAIL("poll: %s", strerror(errno)), -1 : r < 0 ? -1 : k;
	case VIA_EPOLL:
		r = epoll_wait(w->ep, eev, FILES_PER_READER, POLL_TIMEOUT_MS);
		for (int i = 0; i < r; i++) {
			struct sfile *f = &rd->f[eev[i].data.u64 & 0xffffffff];

			if (f->fd >= 0 && f->gen == eev[i].data.u64 >> 32)
				ev[k++] = (eev[i].data.u64 & 0xffffffff) << 32 | eev[i].events;
		}
		return r < 0 && errno != EINTR ? FAIL("epoll_wait: %s", strerror(errno)), -1 :
		       r < 0 ? -1 : r ? (k ? k : -1) : 0;
	default:
		r = io_uring_wait_cqe_timeout(&w->ring, &cqe, &ts);
		if (r == -ETIME)
			return 0;
		if (r)
			return r != -EINTR ? FAIL("io_uring_wait_cqe_timeout: %s", strerror(-r)), -1 : -1;
		io_uring_for_each_cqe(&w->ring, head, cqe) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			struct sfile *f;

			if (k == EVENTS_MAX)
				break;	/* the rest at the next wait */
			seen++;
			if (ud == URING_CANCEL_UD)
				continue;
			f = &rd->f[ud & 0xffffffff];
			if (f->fd < 0 || f->gen != ud >> 32)
				continue;	/* a replaced file's */
			if (!(cqe->flags & IORING_CQE_F_MORE))
				f->armed = false;
			/*
			 * A kernfs file whose active reference cannot be had
			 * adds no wait queue to a poll (it answers EPOLLERR),
			 * and io_uring fails such a poll with EINVAL: fine once
			 * the cgroup's rmdir began; the file is replaced.
			 */
			if (cqe->res == -EINVAL && rm_started(f->cg.id, NULL, false)) {
				COUNT(uring_einval_removed);
				f->gone = true;
			} else if (cqe->res < 0) {
				FFAIL(f, "io_uring poll: %s", strerror(-cqe->res));
			} else {
				ev[k++] = (ud & 0xffffffff) << 32 | (unsigned int)cqe->res;
			}
		}
		io_uring_cq_advance(&w->ring, seen);
		return k ? k : -1;
	}
}

/*
 * The waiting readers: ~10 files each, replaced now and then, waited on
 * (poll; epoll level and edge triggered; io_uring one-shot and multishot
 * polls); a wait that times out checks that nothing was due.
 */
static void *waiting_reader(void *arg)
{
	static const enum counter wake_counter[] = { C_poll_wakes, C_epoll_wakes,
						     C_uring_oneshot_wakes, C_uring_multishot_wakes };
	struct role_arg *a = arg;
	struct waiter w = { .via = a->param, .ep = -1 };
	uint64_t ev[EVENTS_MAX];
	struct reader rd;
	int i, k, n, r;

	reader_init(&rd, a->seed);
	if (w.via == VIA_EPOLL && (w.ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return FAIL("epoll_create1: %s", strerror(errno)), NULL;
	if (w.via == VIA_URING && (r = io_uring_queue_init(4 * FILES_PER_READER, &w.ring, 0)))
		return FAIL("io_uring_queue_init: %s", strerror(-r)), NULL;
	while (running()) {
		for (i = n = 0; i < FILES_PER_READER; i++) {
			struct sfile *f = &rd.f[i];

			if (reader_should_replace(&rd, f)) {
				waiter_file(&w, &rd, i, false);
				if (reader_refill(&rd, f))
					waiter_file(&w, &rd, i, true);
			}
			if (f->fd < 0 || f->replace)
				continue;
			if (w.via == VIA_URING && !f->armed) {
				struct io_uring_sqe *sqe = uring_sqe(&w.ring);

				if (f->multishot)
					io_uring_prep_poll_multishot(sqe, f->fd, POLLIN | POLLPRI);
				else
					io_uring_prep_poll_add(sqe, f->fd, POLLIN | POLLPRI);
				io_uring_sqe_set_data64(sqe, (uint64_t)f->gen << 32 | i);
				f->armed = true;
			}
			w.p[n] = (struct pollfd){ .fd = f->fd, .events = POLLIN | POLLPRI };
			w.idx[n++] = i;
		}
		if (w.via == VIA_URING)
			io_uring_submit(&w.ring);
		if (!n) {
			sleep_ms(10);
			continue;
		}
		r = waiter_wait(&w, &rd, n, ev);
		if (!r) {
			int64_t t1 = now_ns();

			COUNT(poll_timeouts);
			for (i = 0; i < FILES_PER_READER; i++)
				reader_timeout(&rd.f[i], t1);
		}
		for (k = 0; k < r; k++) {
			struct sfile *f = &rd.f[ev[k] >> 32];

			if (f->fd >= 0 && !f->replace)
				reader_event(&rd, f, (unsigned int)ev[k],
					     wake_counter[w.via + (w.via == VIA_URING && f->multishot)]);
		}
	}
	reader_fini(&rd);
	if (w.ep >= 0)
		close(w.ep);
	if (w.via == VIA_URING)
		io_uring_queue_exit(&w.ring);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* readers that do not wait                                             */

/*
 * Full and change snapshots without waiting, per controller: one file on
 * top (the cgroups of ours must be in it), one anywhere.
 */
static void *walker(void *arg)
{
	struct role_arg *a = arg;
	struct reader rd;

	reader_init(&rd, a->seed);
	while (running()) {
		int i = 0;

		for_each_ctrl(c) {
			for (int k = 0; k < 2 && i < FILES_PER_READER; k++, i++) {
				struct sfile *f = &rd.f[i];
				struct cg_pick cg;

				if ((f->fd < 0 || f->gone || rng_pct(&rd.rng, 2)) &&
				    pick_for(&rd.rng, c, k ? -1 : 0, &cg)) {
					file_close(f);
					file_open(f, c, true, &cg);
				}
				if (f->fd >= 0)
					file_read(&rd, f);
			}
		}
		sleep_ms(rng_range(&rd.rng, 0, 20));
	}
	reader_fini(&rd);
	return NULL;
}

/*
 * The classic values of a random cgroup (cpu.stat, ...: its own flush;
 * the *.pressure files: their own aggregation), the same lines as the
 * stream's
 */
static void read_classic(struct reader *rd, struct ctrl *c)
{
	char why[160];
	struct cg_pick cg;
	ssize_t n;

	if (!pick_cg(&rd->rng, false, true, c, &cg))
		return;
	n = classic_text(c, cg.path, rd->buf, TEXT_MAX);
	if (n < 0 && (n == -ENOENT || n == -ENODEV) && rm_started(cg.id, NULL, false))
		return;
	if (n < 0)
		FAIL("read %s/%s: %s", cg.path, c->classic, strerror(-n));
	else if (parse_body(c, rd->buf, n, true, values_for(c, &cg, true), rd->sample, why))
		FAIL("%s/%s: %s", cg.path, c->classic, why);
	else
		CCOUNT(c, classic_reads);
}

/* open, read, close: text, snapshots, classic files, intervals */
static void *quick(void *arg)
{
	struct role_arg *a = arg;
	struct reader rd;
	struct sfile *f;

	reader_init(&rd, a->seed);
	f = &rd.f[0];
	while (running()) {
		struct ctrl *c = pick_ctrl(&rd.rng);
		unsigned int op = rng_below(&rd.rng, 5);
		struct cg_pick cg;
		long ms;

		switch (op) {
		case 0:	/* text, read once */
		case 1:	/* subtree, one snapshot */
		case 2:	/* opened and closed unread: open/release against rmdir */
			if (!pick_cg(&rd.rng, false, true, c, &cg) || file_open(f, c, op != 0, &cg))
				break;
			if (op == 2) {
				COUNT(quick_unread_closes);
			} else {
				COUNT(quick_opens);
				file_read(&rd, f);
			}
			file_close(f);
			break;
		case 3:
			read_classic(&rd, c);
			break;
		default:
			ms = interval_get(root, c->stem);
			if (ms < 0 || (ms && (ms < INTERVAL_MIN_MS || ms > INTERVAL_MAX_MS)))
				FAIL("%s/%s%s reads %ld", root, c->stem, INTERVAL_SUFFIX, ms);
			else
				CCOUNT(c, interval_reads);
			break;
		}
		sleep_ms(rng_range(&rd.rng, 0, 5));
	}
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* per controller: the monitor and the interval writer                  */

/* the root's text file of @c, read at every publication: @c's timeline */
static void *monitor(void *arg)
{
	struct role_arg *a = arg;
	struct ctrl *c = a->c;
	struct reader rd;
	struct sfile *f = &rd.f[0];
	struct cg_pick cg;
	uint64_t first = 0;

	reader_init(&rd, a->seed);
	pick_for(&rd.rng, c, 6, &cg);
	if (file_open(f, c, false, &cg))
		return reader_fini(&rd), NULL;
	f->via = "monitor";
	while (running()) {
		struct pollfd p = { .fd = f->fd, .events = POLLIN | POLLPRI };
		int r = poll(&p, 1, POLL_TIMEOUT_MS);

		if (r < 0 && errno != EINTR)
			FAIL("poll: %s", strerror(errno));
		if (r <= 0 || file_read(&rd, f))
			continue;
		if (p.revents & POLLIN)
			f->wakes++;
		if (!first)
			first = f->seq_last;
		mon_append(c, now_ns(), f->seq_last, f->time_last);
	}
	CCOUNT_N(c, publications_seen, f->seq_last - first);
	reader_fini(&rd);
	return NULL;
}

/* @c's stop @k: field @f now */
static void stop_note(struct ctrl *c, long k, int f)
{
	c->stop_t[k][f] = now_ns();
	atomic_store(&c->stops[f], k + 1);
}

/*
 * Streaming stays off only briefly: the publisher runs most of the time.
 * Meanwhile this stream's publication_seq stays put: the cycle under way
 * at the stop may still complete, no other; the other streams'
 * publications go on and must not count here.  Then the minimum again.
 */
static void interval_stopped(struct ctrl *c, struct rng *rng, long k)
{
	int64_t s0 = seq_now(c), s1;
	long ms = rng_range(rng, 50, 300);
	int ret;

	sleep_ms(ms);
	s1 = seq_now(c);
	if (s0 >= 0 && s1 >= 0) {
		if (s1 > s0 + 1)
			FAIL("%s/%s: publication_seq went from %lld to %lld in %ld ms while the %s "
			     "interval was 0", root, file_name(c, false), (long long)s0,
			     (long long)s1, ms, c->name);
		CCOUNT(c, stop_checks);
	}
	stop_note(c, k, RESTART_BEGIN);
	ret = interval_set(root, c->stem, INTERVAL_MIN_MS);
	stop_note(c, k, RESTART_DONE);
	if (ret)
		FAIL("setting the %s interval back: %s", c->name, strerror(-ret));
	CCOUNT(c, interval_min);
}

/* random writes to @c's knob, valid, invalid, and 0 for a moment */
static void *interval_writer(void *arg)
{
	static const char *const invalid[] = {
		"9", "3600001", "-5", "+5", "0x10", "abc", "\n", " ", "\t\n", "10 10",
		"10abc", "4294967296", "99999999999999999999", "1e3", "010x", "-0",
		"4294967306", " 5\n",
	};
	struct role_arg *a = arg;
	struct ctrl *c = a->c;
	struct rng rng;
	long cur = interval_get(root, c->stem);
	char path[PATH_MAX], name[64];

	snprintf(name, sizeof(name), "%s%s", c->stem, INTERVAL_SUFFIX);
	path_join(path, sizeof(path), root, name);
	rng_seed(&rng, a->seed);
	while (running()) {
		unsigned int what = rng_below(&rng, 100);
		long want, got, k = -1;
		char text[64];
		int ret;

		sleep_ms(rng_range(&rng, 100, 600));
		if (what < 30)
			want = INTERVAL_MIN_MS;
		else if (what < 75)
			want = rng_range(&rng, 11, 100);
		else if (what < 82)
			want = rng_range(&rng, 101, 1000);
		else if (what < 90)
			want = zero_interval ? 0 : INTERVAL_MIN_MS;
		else
			want = -1;
		if (want >= 0) {
			/* leading zeros and a missing or doubled newline are fine too */
			static const char *const forms[] = { "%ld", "%ld\n", "000%ld\n", "  %ld  \n" };

			snprintf(text, sizeof(text), forms[rng_below(&rng, 4)], want);
		} else if (rng_pct(&rng, 10)) {
			text[0] = '\0';		/* a zero-byte write: 0, nothing changes */
		} else {
			snprintf(text, sizeof(text), "%s",
				 invalid[rng_below(&rng, sizeof(invalid) / sizeof(invalid[0]))]);
		}
		if (want == 0 && cur > 0) {
			k = atomic_load(&c->stops[STOP_BEGIN]);
			if (k == MAX_STOPS)
				continue;
			stop_note(c, k, STOP_BEGIN);
		}
		ret = write_file(path, text);
		if (k >= 0)
			stop_note(c, k, STOP_DONE);
		got = interval_get(root, c->stem);
		if (want >= 0) {
			if (ret)
				FAIL("writing '%s' to %s: %s", text, path, strerror(-ret));
			else if (got != want)
				FAIL("wrote '%s' to %s, reads %ld", text, path, got);
			if (want == 0)
				CCOUNT(c, interval_zero);
			else if (want == INTERVAL_MIN_MS)
				CCOUNT(c, interval_min);
			else
				CCOUNT(c, interval_valid);
		} else if (!text[0]) {
			if (ret || got != cur)
				FAIL("a zero-byte write to %s: %s, %ld -> %ld", path, strerror(-ret),
				     cur, got);
			CCOUNT(c, interval_empty);
		} else {
			if (ret != -EINVAL)
				FAIL("writing invalid '%s' to %s: %s", text, path,
				     ret ? strerror(-ret) : "accepted");
			if (got != cur)
				FAIL("invalid '%s' changed %s from %ld to %ld", text, path, cur, got);
			CCOUNT(c, interval_invalid);
		}
		if (got >= 0)
			cur = got;
		if (k >= 0) {
			interval_stopped(c, &rng, k);
			cur = INTERVAL_MIN_MS;
		}
	}
	return NULL;
}

/* moves @pid into @cg: 0 or -errno */
int move_pid(const char *cg, pid_t pid)
{
	char path[PATH_MAX], text[32];

	path_join(path, sizeof(path), cg, "cgroup.procs");
	snprintf(text, sizeof(text), "%d\n", pid);
	return write_file(path, text);
}

/* rmdir of a cgroup of ours not in the registry, as the churn does it */
void remove_ours(const char *path, uint64_t id)
{
	int err;

	rm_start(id);
	err = timed_rmdir(path, RMDIR_LIMIT_NS);
	if (!err)
		rm_done(id);
	else
		FAIL("rmdir %s: %s", path, strerror(-err));
	atomic_fetch_add(&rm_ends, 1);
}

static pid_t migrants[NR_MIGRANTS];

/* a child making every controller's load, niced for one */
static void migrant_main(int i)
{
	struct migrant m = { .memfd = -1, .page = sysconf(_SC_PAGESIZE) };
	struct rng rng;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rng_seed(&rng, seed + i);
	if (i == 0 && nice(10) < 0)
		_exit(1);
	for (;;) {
		for_each_ctrl(c)
			if (rng_pct(&rng, c->load_pct))
				c->load(&rng, &m);
		sleep_ms(rng_range(&rng, 2, 6));
	}
}

static void *migrator(void *arg)
{
	struct role_arg *a = arg;
	struct rng rng;

	rng_seed(&rng, a->seed);
	while (running()) {
		pid_t pid = migrants[rng_below(&rng, NR_MIGRANTS)];
		struct cg_pick cg;
		int ret;

		sleep_ms(rng_range(&rng, 2, 20));
		if (!pick_cg(&rng, true, true, NULL, &cg))
			continue;
		ret = move_pid(cg.path, pid);
		if (!ret)
			COUNT(migrations);
		else if ((ret == -ENOENT || ret == -ENODEV) && rm_started(cg.id, NULL, false))
			COUNT(migrations_to_removed);
		else
			FAIL("moving %d to %s: %s", pid, cg.path, strerror(-ret));
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* churn: nested mkdir / rmdir                                           */


struct churn_node {
	struct cg_pick p;
	int parent, depth;
	unsigned int children_on;
	bool leaf;
};

/* moves the processes of @path to the fixed leaf, so it can be removed */
static void evacuate_to_fixed(const char *path)
{
	char procs[PATH_MAX + 16], buf[4096], *line, *save;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	if (read_file(procs, buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		move_pid(cgs[fixed_leaf_a].p.path, atoi(line));
}

/* rmdir, timed, retried while a migrant is inside: true once removed */
static bool churn_rmdir(struct churn_node *n)
{
	for (int tries = 0; tries < 200; tries++) {
		int err = timed_rmdir(n->p.path, RMDIR_LIMIT_NS);

		if (!err) {
			rm_done(n->p.id);
			return true;
		}
		if (err != -EBUSY) {
			FAIL("rmdir %s: %s", n->p.path, strerror(-err));
			return false;
		}
		COUNT(rmdir_ebusy);
		/* a failed rmdir has not deactivated anything */
		if (atomic_load(&(dir_find(n->p.id))->enodev))
			FAIL("ENODEV/EPOLLERR seen for %s, yet its rmdir failed with EBUSY", n->p.path);
		evacuate_to_fixed(n->p.path);
		sleep_ms(2);
	}
	FAIL("rmdir %s: still busy after 200 tries", n->p.path);
	return false;
}

/* a new churned cgroup: some of the controllers' limits, and theirs for its children */
static void churn_configure(struct rng *rng, struct churn_node *p, bool kids)
{
	char path[PATH_MAX];
	int err;

	for_each_ctrl(c) {
		if (!c->limit_file || !(p->p.on & CTRL_BIT(c)) || !rng_pct(rng, 30))
			continue;
		path_join(path, sizeof(path), p->p.path, c->limit_file);
		err = write_file(path, c->limits[rng_below(rng, 2)]);
		if (err)
			FAIL("write %s: %s", path, strerror(-err));
		else
			COUNT(limits_set);
	}
	for_each_ctrl(c)
		if (kids && (p->p.on & CTRL_BIT(c)) && rng_pct(rng, 50))
			p->children_on |= enable_children(p->p.path, CTRL_BIT(c));
}

static void churn_round(struct rng *rng, int w, unsigned long gen)
{
	struct churn_node nodes[MAX_CHAIN];
	int nr = 1, maxdepth = rng_range(rng, 1, 4), i, j;
	char name[64];

	memset(nodes, 0, sizeof(nodes));
	snprintf(name, sizeof(name), "pool/w%d-%lu", w, gen);
	path_join(nodes[0].p.path, sizeof(nodes[0].p.path), top, name);
	nodes[0].parent = -1;
	nodes[0].depth = 1;
	nodes[0].p.on = pool.on;
	nodes[0].leaf = true;

	/* breadth first: a parent exists, and has its controllers, before its children */
	for (i = 0; i < nr; i++) {
		struct churn_node *p = &nodes[i];
		int kids = p->depth < maxdepth ? rng_range(rng, 0, 2) : 0;
		uint64_t parent = p->parent < 0 ? cgs[5].p.id : nodes[p->parent].p.id;

		if (!running() ||
		    !(p->p.id = cg_mkdir(p->p.path, parent, p->p.on, rng_pct(rng, 15)))) {
			if (running())
				FAIL("mkdir %s: %s", p->p.path, strerror(errno));
			nr = i;	/* the ones made so far */
			break;
		}
		p->p.t_created = now_ns();
		p->p.known = p->p.under_top = true;
		kids = nr + kids > MAX_CHAIN ? 0 : kids;
		churn_configure(rng, p, kids > 0);
		p->leaf = !kids;
		for (j = 0; j < kids; j++) {
			struct churn_node *c = &nodes[nr++];

			snprintf(name, sizeof(name), "c%d", j);
			path_join(c->p.path, sizeof(c->p.path), p->p.path, name);
			c->parent = i;
			c->depth = p->depth + 1;
			c->p.on = p->children_on;
			c->leaf = true;
		}
	}

	/* published only once complete: leaves stay leaves */
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++) {
		struct cg *s = &cgs[NR_FIXED + w * MAX_CHAIN + i];

		s->p = nodes[i].p;
		s->p.slot = s - cgs;
		s->state = CG_LIVE;
		s->leaf = nodes[i].leaf;
	}
	pthread_mutex_unlock(&cg_lock);

	sleep_ms(rng_range(rng, 20, 400));

	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++)
		cgs[NR_FIXED + w * MAX_CHAIN + i].state = CG_REMOVING;
	pthread_mutex_unlock(&cg_lock);
	for (i = 0; i < nr; i++)
		rm_start(nodes[i].p.id);
	/* children first; a node whose rmdir failed keeps its parent too */
	for (i = nr - 1; i >= 0; i--) {
		churn_rmdir(&nodes[i]);
		atomic_fetch_add(&rm_ends, 1);
	}
	pthread_mutex_lock(&cg_lock);
	for (i = 0; i < nr; i++)
		cgs[NR_FIXED + w * MAX_CHAIN + i].state = CG_FREE;
	pthread_mutex_unlock(&cg_lock);
}

static void *churn(void *arg)
{
	struct role_arg *a = arg;
	struct rng rng;
	unsigned long gen = 0;

	rng_seed(&rng, a->seed);
	while (running())
		churn_round(&rng, a->idx, gen++);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* setup, teardown                                                      */

/* is @word one of the blank-separated words of @list? */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (!p[len] || p[len] == ' ' || p[len] == '\n'))
			return true;
		p += len;
	}
	return false;
}

/* @c is left out, which is no failure but for the first row: says why */
static int __attribute__((format(printf, 2, 3))) ctrl_skip(struct ctrl *c, const char *fmt, ...)
{
	va_list ap;

	printf("cgstress: the %s stream is not stressed: ", c->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	c->on = false;
	return c == ctrls ? -1 : 0;
}

/* each stream's controller (where it has one) on in the root's subtree_control: 0, or -1 */
static int setup_root(void)
{
	char path[PATH_MAX], ctl[512], sub[512], plus[64];
	int err;

	path_join(path, sizeof(path), root, "cgroup.controllers");
	if (read_file(path, ctl, sizeof(ctl)) < 0)
		ctl[0] = '\0';
	path_join(path, sizeof(path), root, "cgroup.subtree_control");
	if (read_file(path, sub, sizeof(sub)) < 0)
		sub[0] = '\0';
	for_each_ctrl(c) {
		if (!c->controller)
			continue;
		if (!has_word(ctl, c->controller) && ctrl_skip(c, "no %s controller", c->controller))
			return -1;
		if (!c->on || has_word(sub, c->controller))
			continue;
		snprintf(plus, sizeof(plus), "+%s", c->controller);
		err = write_file(path, plus);
		if (err && ctrl_skip(c, "%s in %s: %s", plus, path, strerror(-err)))
			return -1;
		c->enabled_by_us = !err;
	}
	return 0;
}

/*
 * The private subtree: top (registry slot 0) with every stream's
 * controller for its children; fixed-a and fixed-b, leaves (fixed-a with
 * the limits); inner, its child inner/nocpu without controllers; pool,
 * the churn's parent; the roles' areas; the real root (slot 6, read,
 * never removed, no process moved there).
 */
static const struct fixed {
	const char *rel;
	int slot;		/* in the registry, -1: none */
	bool leaf;		/* may hold processes */
	bool bare;		/* no controller (its parent enables none) */
	struct area *area;	/* a role's, its children with every controller */
} fixed[] = {
	{ "fixed-a", 1, true, false, NULL }, { "fixed-b", 2, true, false, NULL },
	{ "inner", 3, false, false, NULL }, { "inner/nocpu", 4, true, true, NULL },
	{ "pool", 5, false, false, &pool }, { "pin", -1, false, false, &pin_area },
	{ "acct", -1, false, false, &acct_area }, { "park", -1, true, false, &park },
	{ "storm", -1, false, false, &storm_area },
};

static void registry_add(int slot, const char *path, uint64_t id, unsigned int on, bool known,
			 bool leaf)
{
	cgs[slot].p = (struct cg_pick){ .id = id, .slot = slot, .on = on, .known = known,
					.under_top = known };
	snprintf(cgs[slot].p.path, sizeof(cgs[slot].p.path), "%s", path);
	cgs[slot].state = CG_LIVE;
	cgs[slot].leaf = leaf;
}

static int setup_tree(void)
{
	unsigned int on = 0, all;
	char path[PATH_MAX], name[64];

	for_each_ctrl(c)
		if (c->controller)
			on |= CTRL_BIT(c);
	snprintf(name, sizeof(name), "cgstress.%d", getpid());
	path_join(top, sizeof(top), root, name);
	top_id = cg_mkdir(top, root_id, on, false);
	if (!top_id)
		return fprintf(stderr, "cgstress: mkdir %s: %s\n", top, strerror(errno)), -1;
	registry_add(0, top, top_id, on, true, false);
	registry_add(6, root, root_id, 0, false, false);
	all = enable_children(top, on);
	for (const struct fixed *x = fixed; x < fixed + sizeof(fixed) / sizeof(fixed[0]); x++) {
		uint64_t id;

		path_join(path, sizeof(path), top, x->rel);
		id = cg_mkdir(path, x->bare ? cgs[3].p.id : top_id, x->bare ? 0 : all, false);
		if (!id)
			return fprintf(stderr, "cgstress: mkdir %s: %s\n", path, strerror(errno)), -1;
		if (x->slot >= 0)
			registry_add(x->slot, path, id, x->bare ? 0 : all, true, x->leaf);
		if (x->area) {
			snprintf(x->area->path, sizeof(x->area->path), "%s", path);
			x->area->id = id;
			x->area->on = x->leaf ? 0 : enable_children(path, all);
		}
	}
	for_each_ctrl(c) {
		if (!c->limit_file)
			continue;
		path_join(path, sizeof(path), cgs[1].p.path, c->limit_file);
		if (write_file(path, c->limits[0]))
			return fprintf(stderr, "cgstress: write %s: %s\n", path, strerror(errno)), -1;
	}
	return 0;
}

/* each stream's names and load; what its checks derive from them */
static int setup_ctrls(void)
{
	for_each_ctrl(c) {
		int i;

		if (c->setup(c, cgs[1].p.path, cgs[4].p.path)) {
			if (c->teardown)
				c->teardown(c);
			if (ctrl_skip(c, "its setup failed (said above)"))
				return -1;
			continue;
		}
		c->acct_idx = c->limit_idx = -1;
		for (i = 0; i < (int)c->nr_names; i++) {
			if (c->monotone(c->names[i]) && c->nr_mono < MONO_MAX)
				c->mono[c->nr_mono++] = i;
			if (c->acct_value && !strcmp(c->names[i], c->acct_value))
				c->acct_idx = i;
			if (c->limit_value && !strcmp(c->names[i], c->limit_value))
				c->limit_idx = i;
		}
		if (c->acct_value && c->acct_idx < 0)
			c->acct_value = NULL;
		c->interval_saved = interval_get(root, c->stem);
		if (c->interval_saved < 0)
			return fprintf(stderr, "cgstress: read %s%s: %s\n", c->stem, INTERVAL_SUFFIX,
				       strerror(-c->interval_saved)), -1;
		c->mon_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		c->stop_t = xcalloc(MAX_STOPS, sizeof(*c->stop_t));
		printf("cgstress: %s: %u values (%u in its text%s%u without its controller)%s%s\n",
		       c->name, c->nr_names, c->nr_text, c->nr_short ? ", " : "; ", c->nr_short,
		       c->device_names ? ", devices" : "", c->acct_value ? ", accounting" : "");
	}
	return 0;
}

/* every stream armed at 20 ms, and its first publication made: 0, or -1 */
static int arm_streams(void)
{
	char path[PATH_MAX], *buf = xmalloc(TEXT_MAX);
	int ret = 0;

	for_each_ctrl(c) {
		int64_t end = now_ns() + 10 * NSEC_PER_SEC * slow;
		ssize_t n;
		int err = interval_set(root, c->stem, 20);

		if (err) {
			FAIL("setting the %s interval to 20 ms: %s", c->name, strerror(-err));
			ret = -1;
			continue;
		}
		ctrl_file(path, sizeof(path), root, c, false);
		while ((n = read_file(path, buf, TEXT_MAX)) == -ENODATA && now_ns() < end)
			sleep_ms(10);
		if (n < 0) {
			FAIL("%s: %s after the interval was set", path, strerror(-n));
			ret = -1;
		}
	}
	free(buf);
	return ret;
}

/* the burners, migrants and the unprivileged reader, before any thread */
static int start_processes(void)
{
	int i, err;

	ls = shared_map(sizeof(*ls));
	for (i = 0; i < nr_loops; i++)
		atomic_store(&ls->loop[i].ready, 1);
	fflush(NULL);
	for (i = 0; i < NR_MIGRANTS + NR_BURNERS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return perror("fork"), -1;
		if (!pid && i < NR_MIGRANTS)
			migrant_main(i);
		if (!pid)
			burner_main();
		if (i < NR_MIGRANTS) {
			migrants[i] = pid;
			err = move_pid(cgs[1 + (i & 1)].p.path, pid);
		} else {
			burners[i - NR_MIGRANTS] = pid;
			err = move_pid(park.path, pid);
			kill(pid, SIGSTOP);
		}
		if (err)
			FAIL("moving %d: %s", pid, strerror(-err));
	}
	if (arm_streams())
		return -1;
	noperm_pid = fork();
	if (noperm_pid < 0)
		return perror("fork"), -1;
	if (!noperm_pid)
		noperm_main();
	return 0;
}

static void stop_processes(void)
{
	int status;

	atomic_store(&sh->stop, true);
	if (noperm_pid > 0) {
		if (waitpid(noperm_pid, &status, 0) != noperm_pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			FAIL("the unprivileged reader ended with status %#x", status);
		atomic_fetch_add(&failures, atomic_load(&sh->child_failures));
		noperm_pid = 0;
	}
	for (int i = 0; i < NR_MIGRANTS + NR_BURNERS; i++) {
		pid_t pid = i < NR_MIGRANTS ? migrants[i] : burners[i - NR_MIGRANTS];

		if (pid <= 0)
			continue;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (i < NR_MIGRANTS)
			migrants[i] = 0;
		else
			burners[i - NR_MIGRANTS] = 0;
	}
}

/*
 * Each stream with its interval 0 and none of its files open is disarmed:
 * reads find nothing (ENODATA) once the kernel has freed its copies.
 */
static void disarm_checks(void)
{
	char path[PATH_MAX], *buf = xmalloc(BIG_BUF);

	for_each_ctrl(c) {
		int64_t end = now_ns() + 5 * NSEC_PER_SEC * slow;
		ssize_t n = 0;

		if (c->interval_saved || interval_set(root, c->stem, 0))
			continue;
		for (bool subtree = false;; subtree = !subtree) {
			ctrl_file(path, sizeof(path), root, c, subtree);
			n = read_file(path, buf, BIG_BUF);
			if (n == -ENODATA || now_ns() > end)
				break;
			sleep_ms(50);
		}
		if (n != -ENODATA)
			FAIL("%s: %s with the %s interval 0 and no file open for %.0f s", path,
			     n < 0 ? strerror(-n) : "values", c->name, 5.0 * slow);
		else
			CCOUNT(c, disarm_checks);
	}
	free(buf);
}

static void teardown(void)
{
	char path[PATH_MAX], minus[64];

	stop_processes();
	if (top[0] && remove_tree(top))
		fprintf(stderr, "cgstress: could not remove %s\n", top);
	path_join(path, sizeof(path), root, "cgroup.subtree_control");
	for (struct ctrl *c = ctrls; c < ctrls + nr_ctrls; c++) {
		if (c->interval_saved >= 0 && interval_set(root, c->stem, c->interval_saved))
			fprintf(stderr, "cgstress: could not restore the %s interval %ld\n", c->name,
				c->interval_saved);
		/* the migrants, which did I/O on them, are gone */
		if (c->on && c->teardown)
			c->teardown(c);
		/* busy if other cgroups use it meanwhile: then it stays */
		if (c->enabled_by_us) {
			snprintf(minus, sizeof(minus), "-%s", c->controller);
			write_file(path, minus);
		}
	}
}

/* ------------------------------------------------------------------ */
/* the roles, the run                                                   */

static const struct role {
	void *(*fn)(void *);
	const char *name;
	int count;
	bool per_ctrl;		/* @count per stream stressed */
	int param;
} roles[] = {
	{ monitor, "monitor", 1, true, 0 }, { interval_writer, "interval", 1, true, 0 },
	{ churn, "churn", NR_CHURN, false, 0 }, { migrator, "migrator", 1, false, 0 },
	{ waiting_reader, "poll", NR_POLL_READERS, false, VIA_POLL },
	{ waiting_reader, "epoll", 1, false, VIA_EPOLL },
	{ waiting_reader, "io_uring", 1, false, VIA_URING }, { walker, "walker", 1, false, 0 },
	{ changes_reader, "changes", 1, false, 0 }, { accounting, "accounting", 1, true, 0 },
	{ pinner, "pinning", 1, false, 0 }, { stormer, "storm", 1, false, 0 },
	{ quick, "quick", 1, false, 0 }, { NULL, "load", 1, true, 0 },
};
#define MAX_THREADS	64
static pthread_t threads[MAX_THREADS];
static struct role_arg role_args[MAX_THREADS];
static int nr_threads;

/* a controller's role, where it has one: its load's thread, its accounting */
static void *(*role_fn(const struct role *r, const struct ctrl *c))(void *)
{
	if (r->fn == accounting && !c->acct_value)
		return NULL;
	return r->fn ? r->fn : c->load_thread;
}

static int start_roles(void)
{
	for (const struct role *r = roles; r < roles + sizeof(roles) / sizeof(roles[0]); r++) {
		for (struct ctrl *c = ctrls; c < ctrls + (r->per_ctrl ? nr_ctrls : 1); c++) {
			void *(*fn)(void *) = r->per_ctrl ? role_fn(r, c) : r->fn;

			for (int i = 0; fn && (c->on || !r->per_ctrl) && i < r->count; i++) {
				struct role_arg *a = &role_args[nr_threads];
				int err;

				*a = (struct role_arg){ .c = c, .idx = i, .param = r->param,
							.seed = seed ^ ((uint64_t)(r - roles + 1) << 40 |
									(uint64_t)(c - ctrls) << 32 | i) };
				err = pthread_create(&threads[nr_threads], NULL, fn, a);
				if (err)
					return FAIL("pthread_create %s: %s", r->name, strerror(err)), -1;
				nr_threads++;
			}
		}
	}
	return 0;
}

static void stop_roles(void)
{
	atomic_store(&stopping, true);
	while (nr_threads)
		pthread_join(threads[--nr_threads], NULL);
}

/* runs until @seconds are over or it must stop, a line per stream every 30 s */
static void run_for(long seconds)
{
	int64_t end = t_start + seconds * NSEC_PER_SEC, next = t_start + 30 * NSEC_PER_SEC;

	while (running() && now_ns() < end) {
		sleep_ms(200);
		if (now_ns() < next)
			continue;
		next += 30 * NSEC_PER_SEC;
		for_each_ctrl(c)
			printf("cgstress: %.0f s: %s: %lu text reads, %lu snapshots (%lu of changes, "
			       "%lu compared), %lu wake-ups, %lu rmdir, %ld failures\n", elapsed(),
			       c->name, CVAL(c, text_reads) + CVAL(c, text_reads_small),
			       CVAL(c, snapshots), CVAL(c, change_snapshots), CVAL(c, change_compared),
			       CVAL(c, wakes), atomic_load(&counters[C_rmdir]), atomic_load(&failures));
	}
	if (stop_signal)
		FAIL("interrupted by a signal after %.1f s", elapsed());
}

/* what a run of 30 s or more must have seen, with the run's churn stopped */
static void end_checks(long seconds)
{
	pins_check();
	storm_measure();
	disarm_checks();
	if (atomic_load(&counters[C_io_errors]))
		FAIL("%lu O_DIRECT opens, reads or writes of the loop devices failed, the first on "
		     "loop%d with %s", atomic_load(&counters[C_io_errors]),
		     loops[atomic_load(&ls->first_error_loop)].index,
		     strerror(atomic_load(&ls->first_errno)));
	for_each_ctrl(c) {
		if (seconds < 30)
			continue;
		if (!CVAL(c, cgroup_rises))
			FAIL("%s: no value of a cgroup below the root rose between two reads in %ld s",
			     c->name, seconds);
		if (!CVAL(c, change_compared) || !CVAL(c, pins) || !counters[C_noperm_snapshots])
			FAIL("%s: in %ld s, %lu change states compared with a full snapshot, %lu "
			     "pinning files, %lu unprivileged snapshots", c->name, seconds,
			     CVAL(c, change_compared), CVAL(c, pins), counters[C_noperm_snapshots]);
		if (c->acct_value && !atomic_load(&counters[C_acct_checks_quiet]))
			FAIL("%s: no accounting check in %ld s", c->name, seconds);
	}
}

static int summary(void)
{
	int i;

	printf("cgstress: ran %.1f s, seed %#llx\n", elapsed(), (unsigned long long)seed);
	for (i = 0; i < C_NR; i++)
		printf("count %s %lu\n", counter_names[i], atomic_load(&counters[i]));
	for_each_ctrl(c)
		for (i = 0; i < CC_NR; i++)
			printf("count %s_%s %lu\n", c->name, ctrl_counter_names[i],
			       atomic_load(&c->cnt[i]));
	printf("count max_rmdir_usec %ld\n", atomic_load(&max_rmdir_ns) / 1000);
	printf("count max_storm_rmdir_usec %ld\n", atomic_load(&max_storm_rmdir_ns) / 1000);
	printf("count max_read_usec %ld\n", atomic_load(&max_read_ns) / 1000);
	if (atomic_load(&failures)) {
		for (i = 0; i < atomic_load(&nr_first_failures); i++)
			printf("cgstress: failure %d: %s\n", i + 1, first_failures[i]);
		printf("cgstress: FAIL: %ld invariant violations (the first %ld printed above)\n",
		       atomic_load(&failures), max_failures);
		return EXIT_FAIL;
	}
	printf("cgstress: PASS\n");
	return EXIT_PASS;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: cgstress [--seconds N] [--seed S] [--max-failures N] "
		"[--slow N] [--storm-fds N] [--no-zero-interval] [--no-memory] [--no-io]\n"
		"                [--no-pressure]\n"
		"  --slow N            the kernel is about N (1-10) times slower than the lockdep\n"
		"                      test kernel: its time bounds are N times longer (KASAN,\n"
		"                      KCSAN: 3)\n"
		"  --storm-fds N       files open on each cgroup the storm removes (2000)\n"
		"  --no-zero-interval  never set an interval to 0 (streaming never stops)\n"
		"  --no-<stream>       leave that stream out (memory, io, pressure), and its load\n"
		"exit: 0 pass, 1 fail, 77 skip (not root, no cgroup2, no cpu.stat.stream)\n");
	exit(status);
}

/* the options: the run's length in seconds */
static long parse_options(int argc, char **argv)
{
	static struct option opts[8 + CTRLS_MAX] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "max-failures", required_argument, NULL, 'm' },
		{ "slow", required_argument, NULL, 'S' },
		{ "storm-fds", required_argument, NULL, 'f' },
		{ "no-zero-interval", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
	};
	long seconds = 60;
	int c;

	for (int i = 1; i < nr_ctrls; i++) {
		char *name;

		if (asprintf(&name, "no-%s", ctrls[i].name) < 0)
			exit(EXIT_FAIL);
		opts[7 + i - 1] = (struct option){ name, no_argument, NULL, 0x100 + i };
	}
	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	for (struct ctrl *x = ctrls; x < ctrls + nr_ctrls; x++) {
		x->on = true;
		x->interval_saved = -1;
	}
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *e;

		switch (c) {
		case 's': seconds = strtol(optarg, &e, 10); if (*e || seconds <= 0) usage(2); break;
		case 'r': seed = strtoull(optarg, &e, 0); if (*e) usage(2); break;
		case 'm': max_failures = strtol(optarg, &e, 10); if (*e || max_failures <= 0) usage(2); break;
		case 'S': slow = strtol(optarg, &e, 10); if (*e || slow < 1 || slow > 10) usage(2); break;
		case 'f': storm_fds = strtol(optarg, &e, 10); if (*e || storm_fds < 1) usage(2); break;
		case 'z': zero_interval = false; break;
		case 'h': usage(0); break;
		default:
			if (c < 0x100 || c >= 0x100 + nr_ctrls)
				usage(2);
			ctrls[c - 0x100].on = false;
		}
	}
	return seconds;
}

/* root, cgroup2, the streams this kernel has: 0, or EXIT_SKIP */
static int preflight(void)
{
	char path[PATH_MAX], name[64];

	if (geteuid())
		return printf("SKIP: cgstress needs root\n"), EXIT_SKIP;
	if (cgroup2_mount(root, sizeof(root)))
		return printf("SKIP: no cgroup2 mount\n"), EXIT_SKIP;
	root_id = dir_id(root);
	for_each_ctrl(c) {
		snprintf(name, sizeof(name), "%s%s", c->stem, INTERVAL_SUFFIX);
		path_join(path, sizeof(path), root, name);
		if (access(path, W_OK) && ctrl_skip(c, "no %s: a kernel without it", path))
			return printf("SKIP: not a cgstream kernel\n"), EXIT_SKIP;
	}
	printf("cgstress: seed %#llx (--seed to repeat the choices; the timing differs); bounds: "
	       "rmdir %.0f s, wake-up margin %.0f s (--slow %lld); storms of %ld files\n",
	       (unsigned long long)seed, RMDIR_LIMIT_NS * slow / 1e9, WAKE_MARGIN_NS * slow / 1e9,
	       (long long)slow, storm_fds);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	long seconds = parse_options(argc, argv);
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = preflight();
	if (ret)
		return ret;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	t_start = now_ns();
	sh = shared_map(sizeof(*sh));
	counters = shared_map(C_NR * sizeof(*counters));
	if (raise_nofile(2 * 4000 + 2 * storm_fds + 4096))
		printf("cgstress: RLIMIT_NOFILE stays: %s\n", strerror(errno));
	if (setup_root() || setup_tree() || setup_ctrls() || start_processes() || start_roles()) {
		stop_roles();
		teardown();
		printf("cgstress: FAIL (setup)\n");
		return EXIT_FAIL;
	}
	printf("cgstress: %ld s: %d threads, %d migrants making the load of every stream, %d "
	       "burners, an unprivileged reader\n", seconds, nr_threads, NR_MIGRANTS, NR_BURNERS);
	run_for(seconds);
	stop_roles();
	stop_processes();
	end_checks(seconds);
	teardown();
	return summary();
}
