// SPDX-License-Identifier: GPL-2.0
/*
 * cgstress's table: a row per stream it stresses (cpu, memory, io, and
 * pressure, whose files are cgroup core files of every cgroup, no
 * controller's), and what only a row knows: its files, the names of its
 * values (from its classic files), how to read and parse those, which of
 * the values never go back, its load (cpu: burn; memory: charge and
 * uncharge; io: O_DIRECT I/O on loop devices, one of them removed and
 * re-created now and then; pressure: two busy threads on one CPU).
 * cgstress.c knows no controller: a fifth is a row here.
 */
#include "cgstress.h"

static bool cpu_monotone(const char *name);
static bool memory_monotone(const char *name);
static bool io_monotone(const char *name);
static bool pressure_monotone(const char *name);
static int cpu_setup(struct ctrl *c, const char *with, const char *without);
static int memory_setup(struct ctrl *c, const char *with, const char *without);
static int io_setup(struct ctrl *c, const char *with, const char *without);
static int pressure_setup(struct ctrl *c, const char *with, const char *without);
static ssize_t pressure_read_classic(const struct ctrl *c, const char *cg, char *buf, size_t len);
static int pressure_parse(const struct ctrl *c, const char *text, size_t len, bool classic,
			  struct stat_values *s, char *why);
static void *loop_cycler(void *arg);
static void io_teardown(struct ctrl *c);
static void cpu_load(struct rng *r, struct migrant *m);
static void memory_load(struct rng *r, struct migrant *m);
static void io_load(struct rng *r, struct migrant *m);
static void pressure_load(struct rng *r, struct migrant *m);

static const char *const io_device_names[] = {
	"rbytes", "wbytes", "rios", "wios", "dbytes", "dios", NULL,
};
static const char *const cpu_limits[] = { "20000 100000", "5000 10000", NULL };

struct ctrl ctrls[] = {
	{
		.name = "cpu", .stem = "cpu.stat", .controller = "cpu", .classic = "cpu.stat",
		.id = CGROUP_STAT_CTRL_CPU, .monotone = cpu_monotone,
		.setup = cpu_setup, .load = cpu_load, .load_pct = 100,
		.limit_file = "cpu.max", .limits = cpu_limits, .limit_value = "nr_throttled",
		.acct_value = "usage_usec",
	},
	{
		.name = "memory", .stem = "memory.stat", .controller = "memory",
		.classic = "memory.stat", .id = CGROUP_STAT_CTRL_MEMORY,
		.files_need_controller = true,
		.monotone = memory_monotone, .setup = memory_setup, .load = memory_load,
		.load_pct = 5,
	},
	{
		.name = "io", .stem = "io.stat", .controller = "io", .classic = "io.stat",
		.id = CGROUP_STAT_CTRL_IO, .files_need_controller = true,
		.device_names = io_device_names, .monotone = io_monotone, .setup = io_setup,
		.teardown = io_teardown, .load = io_load, .load_pct = 2, .load_thread = loop_cycler,
	},
	/*
	 * Not the REMOVED accounting: a parent's stall time is not its
	 * children's sum (stalls of two children at once count once).
	 */
	{
		.name = "pressure", .stem = "pressure", .classic = "{cpu,memory,io,irq}.pressure",
		.id = CGROUP_STAT_CTRL_PRESSURE, .can_be_off = true,
		.read_classic = pressure_read_classic, .parse = pressure_parse,
		.monotone = pressure_monotone, .setup = pressure_setup, .load = pressure_load,
		.load_pct = 10,
	},
};
const int nr_ctrls = sizeof(ctrls) / sizeof(ctrls[0]);

/*
 * The loop devices: a device removed and re-created is a new disk whose
 * counters start at 0.  Its epoch moves on before the removal and before
 * the re-creation (odd while the removal is under way), each change
 * logged with its time, and a device's values are only compared between
 * reads of values that were one disk's from their publication to the
 * read (the same even epoch all along).
 */
struct loopdev loops[NR_LOOPS];
int nr_loops;

/* the loop cycler: the next epoch of loop @k, from now */
static void epoch_next(int k)
{
	uint64_t e = atomic_load(&loops[k].epoch);

	if (e < EPOCH_LOG)
		loops[k].epoch_t[e] = now_ns();
	atomic_store(&loops[k].epoch, e + 1);
}

/* loop @k's epoch at @t (t <= now) */
static uint64_t epoch_at(int k, int64_t t)
{
	uint64_t e = atomic_load(&loops[k].epoch);

	while (e && (e > EPOCH_LOG || loops[k].epoch_t[e - 1] > t))
		e--;
	return e;
}

/* the epoch device @major:@minor was in from @from to now, if one even one, else UNSTABLE */
uint64_t dev_epoch(uint32_t major, uint32_t minor, int64_t from)
{
	for (int k = 0; k < nr_loops; k++) {
		uint64_t e;

		if (loops[k].major != major || loops[k].minor != minor)
			continue;
		e = epoch_at(k, from);
		return e == atomic_load(&loops[k].epoch) && !(e & 1) ? e : EPOCH_UNSTABLE;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the load: each controller's, made by the migrants                    */

struct load_stats *ls;

/* cpu: 1-4 ms of user and system time (a syscall in the loop) */
static void cpu_load(struct rng *rng, struct migrant *m)
{
	int64_t until = now_ns() + rng_range(rng, 1, 4) * NSEC_PER_MSEC;
	volatile uint64_t x = 0;

	(void)m;
	while (now_ns() < until)
		x += getppid();
	if (getppid() == 1)
		_exit(0);
}

/* a write to every page of [@p, @p + @len): charged to the cgroup the task is in now */
static void migrant_touch(struct migrant *m, char *p, size_t len)
{
	volatile char *v = p;

	for (size_t off = 0; off < len; off += m->page)
		v[off] = (char)(off >> 12 | 1);
	COUNT_N(mem_touched_pages, len / m->page);
}

/*
 * memory: map and touch some MiB, touch them again (after a move: pages
 * dropped since are charged to the new cgroup), drop part, unmap
 * (uncharging the cgroup that was charged, maybe removed by now); fill a
 * memfd (shmem) and close it.
 */
static void memory_load(struct rng *rng, struct migrant *m)
{
	static char chunk[65536];
	unsigned int what = rng_below(rng, 100);
	size_t len;

	if (what < 80 && !m->anon) {
		void *p;

		len = rng_range(rng, 1, MIGRANT_ANON_MAX_MB) << 20;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		m->anon = p;
		m->anon_len = len;
		migrant_touch(m, m->anon, m->anon_len);
		COUNT(mem_maps);
	} else if (what < 30) {
		munmap(m->anon, m->anon_len);
		m->anon = NULL;
		COUNT(mem_unmaps);
	} else if (what < 55) {
		size_t pages = m->anon_len / m->page;
		size_t first = rng_below(rng, pages), nr = rng_range(rng, 1, pages - first);

		madvise(m->anon + first * m->page, nr * m->page, MADV_DONTNEED);
		COUNT(mem_dontneeds);
	} else if (what < 80) {
		migrant_touch(m, m->anon, m->anon_len);
		COUNT(mem_touches);
	} else if (m->memfd >= 0) {
		close(m->memfd);
		m->memfd = -1;
		COUNT(mem_memfd_closes);
	} else if ((m->memfd = memfd_create("cgstress", MFD_CLOEXEC)) >= 0) {
		len = rng_range(rng, 1, MIGRANT_MEMFD_MAX_MB * 16) * sizeof(chunk);
		memset(chunk, 0x5a, sizeof(chunk));
		for (size_t off = 0; off < len; off += sizeof(chunk))
			if (pwrite(m->memfd, chunk, sizeof(chunk), off) != sizeof(chunk))
				break;
		COUNT(mem_memfd_fills);
	}
}

/*
 * io: one O_DIRECT read or write of 64-512 KiB on a random loop device,
 * from the cgroup the migrant is in now (where io.stat counts it),
 * through a file opened for it alone: the loop cycler can remove the
 * device whenever no migrant uses it.
 */
static void io_load(struct rng *rng, struct migrant *m)
{
	int k = rng_below(rng, nr_loops), fd, err = 0, none = 0;
	size_t len = rng_range(rng, IO_MIN_KB / 4, IO_MAX_KB / 4) * 4096;
	off_t off = rng_below(rng, ((size_t)LOOP_BACKING_MB << 20) / 4096 - len / 4096 + 1) * 4096;
	bool wr = rng_pct(rng, 50);
	ssize_t n;

	if (!m->io_buf) {
		m->io_buf = mmap(NULL, IO_MAX_KB << 10, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m->io_buf == MAP_FAILED) {
			m->io_buf = NULL;
			return;
		}
		memset(m->io_buf, 0xa5, IO_MAX_KB << 10);
	}
	if (!atomic_load(&ls->loop[k].ready))
		return;
	atomic_fetch_add(&ls->loop[k].users, 1);
	if (atomic_load(&ls->loop[k].ready)) {
		fd = open(loops[k].node, (wr ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
		} else {
			n = wr ? pwrite(fd, m->io_buf, len, off) : pread(fd, m->io_buf, len, off);
			if (n != (ssize_t)len)
				err = n < 0 ? errno : EIO;
			else if (wr && rng_pct(rng, 20) && fdatasync(fd))
				err = errno;
			close(fd);
		}
		if (err) {
			if (atomic_compare_exchange_strong(&ls->first_errno, &none, err))
				atomic_store(&ls->first_error_loop, k);
			COUNT(io_errors);
		} else {
			COUNT_N(io_kib, len >> 10);
			if (wr)
				COUNT(io_writes);
			else
				COUNT(io_reads);
		}
	}
	atomic_fetch_sub(&ls->loop[k].users, 1);
}

/* a thread of the pressure load: busy until *@arg (a CLOCK_MONOTONIC time) */
static void *pressure_burn(void *arg)
{
	int64_t until = *(const int64_t *)arg;
	volatile uint64_t x = 0;

	while (now_ns() < until)
		x++;
	return NULL;
}

/*
 * pressure: for 2-6 ms two threads of the migrant busy on the one CPU it
 * runs on, so that one of them always waits: the cgroup it is in now
 * stalls on cpu (its cpu.some.total grows by about that time) however
 * many CPUs the other loads leave idle.  The thread moves with the
 * migrant (cgroup.procs moves every thread of a process).
 */
static void pressure_load(struct rng *rng, struct migrant *m)
{
	int64_t until = now_ns() + rng_range(rng, 2, 6) * NSEC_PER_MSEC;
	int cpu = sched_getcpu();
	cpu_set_t all, one;
	pthread_t t;

	(void)m;
	if (cpu < 0 || sched_getaffinity(0, sizeof(all), &all))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* a thread inherits its creator's affinity */
	if (sched_setaffinity(0, sizeof(one), &one))
		return;
	if (!pthread_create(&t, NULL, pressure_burn, &until)) {
		pressure_burn(&until);
		pthread_join(t, NULL);
		COUNT(contended_bursts);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/* ------------------------------------------------------------------ */
/* the controllers' setups: the names of their values, their load       */

/* "@prefix" + the first word of each line of @path into @c->names: how many, or -1 */
static int read_keys(struct ctrl *c, const char *path, const char *prefix)
{
	char *buf = xmalloc(TEXT_MAX), *line, *save, *sp;
	ssize_t n = read_file(path, buf, TEXT_MAX);
	int nr = 0;

	if (n < 0) {
		fprintf(stderr, "cgstress: read %s: %s\n", path, strerror(-n));
		free(buf);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sp = strchr(line, ' ');
		if (!sp || sp == line || c->nr_names == SCHEMA_NAMES_MAX) {
			fprintf(stderr, "cgstress: %s: cannot take '%.60s'\n", path, line);
			free(buf);
			return -1;
		}
		*sp = '\0';
		if (asprintf(&c->names[c->nr_names++], "%s%s", prefix, line) < 0)
			exit(EXIT_FAIL);
		nr++;
	}
	free(buf);
	return nr;
}

/* cpu.stat's keys with the cpu controller on (@with) and off (@without: the first ones) */
static int cpu_setup(struct ctrl *c, const char *with, const char *without)
{
	char path[PATH_MAX];
	int i, n;

	path_join(path, sizeof(path), with, "cpu.stat");
	if (read_keys(c, path, "") < 0)
		return -1;
	c->nr_text = c->nr_names;
	path_join(path, sizeof(path), without, "cpu.stat");
	n = read_keys(c, path, "");
	if (n < 0)
		return -1;
	c->nr_names -= n;
	for (i = 0; i < n; i++)
		if (i >= (int)c->nr_names || strcmp(c->names[i], c->names[c->nr_names + i]))
			return fprintf(stderr, "cgstress: %s's keys are not the first of %s/cpu.stat's\n",
				       path, with), -1;
	c->nr_short = n < (int)c->nr_names ? n : 0;
	return 0;
}

/* memory.stat's keys, then current, swap.current (where it is) and memory.events' as events.* */
static int memory_setup(struct ctrl *c, const char *with, const char *without)
{
	char path[PATH_MAX];

	(void)without;
	path_join(path, sizeof(path), with, "memory.stat");
	if (read_keys(c, path, "") <= 0)
		return -1;
	c->nr_text = c->nr_names;
	c->names[c->nr_names++] = strdup("current");
	path_join(path, sizeof(path), with, "memory.swap.current");
	if (!access(path, F_OK))
		c->names[c->nr_names++] = strdup("swap.current");
	path_join(path, sizeof(path), with, "memory.events");
	return read_keys(c, path, "events.") <= 0 ? -1 : 0;
}

/* the resources of the *.pressure files, in pressure.stream's order */
static const char *const pressure_res[] = { "cpu", "memory", "io", "irq" };
/*
 * irq.pressure is shown where irq time is accounted (else its reads fail
 * with EOPNOTSUPP; without CONFIG_IRQ_TIME_ACCOUNTING there is no such
 * file), and pressure.stream has irq's line where it is: the setup's
 * read decides which, for the run (after it, a failing read of
 * irq.pressure is a failure).
 */
static bool irq_known, irq_shown;

/*
 * pressure's classic values: the lines of cpu.pressure, memory.pressure,
 * io.pressure and irq.pressure (where shown), each behind its resource's
 * name and a space, as pressure.stream prints them; read as they are, so
 * that the parser judges them
 */
static ssize_t pressure_read_classic(const struct ctrl *c, const char *cg, char *buf, size_t len)
{
	char path[PATH_MAX], name[32], file[1024];
	size_t off = 0;

	(void)c;
	buf[0] = '\0';
	for (int k = 0; k < 4; k++) {
		const char *p, *next;
		ssize_t n;

		if (k == 3 && irq_known && !irq_shown)
			break;
		snprintf(name, sizeof(name), "%s.pressure", pressure_res[k]);
		path_join(path, sizeof(path), cg, name);
		n = read_file(path, file, sizeof(file));
		if (k == 3 && !irq_known && (n == -EOPNOTSUPP || n == -ENOENT))
			break;
		if (n < 0)
			return n;
		for (p = file; *p; p = next) {
			const char *nl = strchr(p, '\n');
			int w;

			next = nl ? nl + 1 : p + strlen(p);
			w = snprintf(buf + off, len - off, "%s %.*s", pressure_res[k], (int)(next - p), p);
			if (w < 0 || (size_t)w >= len - off)
				return -EOVERFLOW;
			off += w;
		}
	}
	return off;
}

/* pressure.stream's lines (or the *.pressure files', as read_classic() gives them) */
static int pressure_parse(const struct ctrl *c, const char *text, size_t len, bool classic,
			  struct stat_values *s, char *why)
{
	(void)classic;
	return parse_pressure_text(text, len, (const char *const *)c->names, c->nr_names, s, why);
}

/*
 * @cg's *.pressure files: lines the parser of pressure.stream takes, with
 * all of @c's values.  0, or -1 (said)
 */
static int pressure_check_lines(const struct ctrl *c, const char *cg, char *buf,
				struct stat_values *s)
{
	ssize_t n = pressure_read_classic(c, cg, buf, TEXT_MAX);
	char why[160] = "";

	if (n < 0)
		snprintf(why, sizeof(why), "%s", strerror(-n));
	else if (!pressure_parse(c, buf, n, true, s, why) && s->nr_values != c->nr_names)
		snprintf(why, sizeof(why), "%u values, not %u", s->nr_values, c->nr_names);
	if (!why[0])
		return 0;
	fprintf(stderr, "cgstress: %s/%s: %s\n", cg, c->classic, why);
	return -1;
}

/*
 * pressure: a line "<res> <some|full> avg10=.. avg60=.. avg300=.. total=.."
 * of @with's *.pressure files names the values <res>.<some|full>.avg10,
 * .avg60, .avg300 and .total; its text shows them all (where a cgroup's
 * pressure is on, as cgstress leaves it).  The files are cgroup core
 * files: @without, without controllers, has the same lines.
 */
static int pressure_setup(struct ctrl *c, const char *with, const char *without)
{
	static const char *const fields[4] = { "avg10", "avg60", "avg300", "total" };
	char *buf = xmalloc(TEXT_MAX);
	struct stat_values *s = xmalloc(sizeof(*s));
	ssize_t n = pressure_read_classic(c, with, buf, TEXT_MAX);
	const char *p, *nl;
	int ret = -1;

	if (n < 0) {
		fprintf(stderr, "cgstress: read %s/%s: %s\n", with, c->classic, strerror(-n));
		goto out;
	}
	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		const char *sp = memchr(p, ' ', nl - p);
		const char *sp2 = sp ? memchr(sp + 1, ' ', nl - sp - 1) : NULL;

		if (!sp2 || sp == p || sp2 == sp + 1 || c->nr_names + 4 > SCHEMA_NAMES_MAX) {
			fprintf(stderr, "cgstress: %s/%s: cannot take '%.*s'\n", with, c->classic,
				(int)(nl - p), p);
			goto out;
		}
		for (int k = 0; k < 4; k++)
			if (asprintf(&c->names[c->nr_names++], "%.*s.%.*s.%s", (int)(sp - p), p,
				     (int)(sp2 - sp - 1), sp + 1, fields[k]) < 0)
				exit(EXIT_FAIL);
	}
	c->nr_text = c->nr_names;
	irq_known = true;
	irq_shown = c->nr_names && !strncmp(c->names[c->nr_names - 1], "irq.", 4);
	if (!c->nr_names)
		fprintf(stderr, "cgstress: %s/%s: no lines\n", with, c->classic);
	else if (!pressure_check_lines(c, with, buf, s) && !pressure_check_lines(c, without, buf, s))
		ret = 0;
out:
	free(buf);
	free(s);
	return ret;
}

static bool cpu_monotone(const char *name)
{
	return !strcmp(name, "usage_usec") || !strcmp(name, "user_usec") ||
	       !strcmp(name, "system_usec") || !strcmp(name, "nice_usec");
}

static bool memory_monotone(const char *name)
{
	return !strcmp(name, "pgfault") || !strcmp(name, "pgmajfault") ||
	       !strncmp(name, "events.", 7);
}

static bool io_monotone(const char *name)
{
	(void)name;
	return false;	/* no values of a cgroup's own; every device's are */
}

/* the totals (usec stalled); the averages go up and down */
static bool pressure_monotone(const char *name)
{
	size_t len = strlen(name);

	return len > 6 && !strcmp(name + len - 6, ".total");
}

/*
 * The loop devices: backing files on a tmpfs of our own (in /tmp), the
 * devices got with LOOP_CTL_GET_FREE and bound with LOOP_CONFIGURE, device
 * nodes of our own there: devtmpfs removes a node by its numbers when a
 * disk goes, and a disk re-created meanwhile (the legacy autoload) would
 * lose /dev's node to the old one's removal.
 */
static char io_dir[PATH_MAX];
static bool io_dir_mounted;
static int loop_ctl_fd = -1;

/* a device node of ours, @name in io_dir: 0 or -errno */
static int dev_node(char *path, size_t len, const char *name, mode_t type, dev_t dev)
{
	path_join(path, len, io_dir, name);
	return mknod(path, type | 0600, dev) ? -errno : 0;
}

/* loop<index>'s device numbers (sysfs says; 7:index without it) and a node of ours */
static int loop_find(struct loopdev *l)
{
	char path[64], buf[32], name[32];
	unsigned int maj = 7, min = l->index;

	snprintf(path, sizeof(path), "/sys/block/loop%d/dev", l->index);
	if (read_file(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	l->major = maj;
	l->minor = min;
	snprintf(name, sizeof(name), "loop%d", l->index);
	return dev_node(l->node, sizeof(l->node), name, S_IFBLK, makedev(maj, min));
}

/* LOOP_CONFIGURE (@bind) or LOOP_CLR_FD, done when our file, the last one open, is closed */
static int loop_bind(struct loopdev *l, bool bind)
{
	struct loop_config cfg = { .fd = l->backing_fd };
	int fd = open(l->node, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (bind ? ioctl(fd, LOOP_CONFIGURE, &cfg) : ioctl(fd, LOOP_CLR_FD, 0))
		err = -errno;
	close(fd);
	if (!err)
		l->bound = bind;
	return err;
}

/* LOOP_CTL_REMOVE, retried while another opener (udev probing it) holds it: 0 or -errno */
static int loop_remove(struct loopdev *l)
{
	for (int tries = 0; tries < 100; tries++) {
		if (ioctl(loop_ctl_fd, LOOP_CTL_REMOVE, l->index) >= 0)
			return 0;
		if (errno != EBUSY)
			return -errno;
		sleep_ms(20);
	}
	return -EBUSY;
}

/* io: two bound loop devices (io_teardown() cleans up after a failure); says why not */
static int io_setup(struct ctrl *c, const char *with, const char *without)
{
	char path[PATH_MAX], name[32];
	int k, err;

	(void)with;
	(void)without;
	for (c->nr_device_names = 0; c->device_names[c->nr_device_names];)
		c->nr_device_names++;
	for (k = 0; k < NR_LOOPS; k++)
		loops[k].index = loops[k].backing_fd = -1;
	snprintf(io_dir, sizeof(io_dir), "/tmp/cgstress-io.XXXXXX");
	if (!mkdtemp(io_dir))
		return printf("cgstress: mkdtemp %s: %s\n", io_dir, strerror(errno)), io_dir[0] = 0, -1;
	io_dir_mounted = !mount("cgstress", io_dir, "tmpfs", MS_NOSUID, "size=32m,mode=0700");
	err = dev_node(path, sizeof(path), "loop-control", S_IFCHR, makedev(10, LOOP_CTRL_MISC_MINOR));
	if (!err && (loop_ctl_fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		err = -errno;
	if (err)
		return printf("cgstress: no loop devices: %s: %s\n", path, strerror(-err)), -1;
	for (k = 0; k < NR_LOOPS; k++) {
		struct loopdev *l = &loops[k];

		snprintf(name, sizeof(name), "loop%d.img", k);
		path_join(path, sizeof(path), io_dir, name);
		l->backing_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (l->backing_fd < 0 || ftruncate(l->backing_fd, (off_t)LOOP_BACKING_MB << 20))
			return printf("cgstress: backing file %s: %s\n", path, strerror(errno)), -1;
		l->index = ioctl(loop_ctl_fd, LOOP_CTL_GET_FREE);
		if (l->index < 0)
			return printf("cgstress: no free loop device: %s\n", strerror(errno)), -1;
		err = loop_find(l);
		if (err || (err = loop_bind(l, true)))
			return printf("cgstress: loop%d (%s): %s\n", l->index, l->node,
				      strerror(-err)), -1;
		nr_loops++;
	}
	return 0;
}

/* the loop devices unbound and removed; the tmpfs, with the nodes and files, gone */
static void io_teardown(struct ctrl *c)
{
	const char *names[] = { "loop-control", "loop0.img", "loop1.img" };
	char path[PATH_MAX];
	int k, err;

	(void)c;
	for (k = 0; k < NR_LOOPS && io_dir[0]; k++) {
		struct loopdev *l = &loops[k];

		if (l->bound && (err = loop_bind(l, false)))
			fprintf(stderr, "cgstress: LOOP_CLR_FD of loop%d: %s\n", l->index, strerror(-err));
		if (l->index >= 0 && loop_ctl_fd >= 0 && (err = loop_remove(l)) && err != -ENODEV)
			fprintf(stderr, "cgstress: LOOP_CTL_REMOVE of loop%d: %s\n", l->index,
				strerror(-err));
		if (l->backing_fd >= 0)
			close(l->backing_fd);
		if (l->node[0])
			unlink(l->node);
	}
	if (loop_ctl_fd >= 0)
		close(loop_ctl_fd);
	for (k = 0; k < 3 && io_dir[0]; k++) {
		path_join(path, sizeof(path), io_dir, names[k]);
		unlink(path);
	}
	if (io_dir_mounted && umount2(io_dir, MNT_DETACH))
		fprintf(stderr, "cgstress: umount %s: %s\n", io_dir, strerror(errno));
	if (io_dir[0] && rmdir(io_dir))
		fprintf(stderr, "cgstress: rmdir %s: %s\n", io_dir, strerror(errno));
	io_dir[0] = '\0';
}

/*
 * io's own thread: now and then the last loop device goes away while
 * readers read (its blkgs with it: io.stat and the records stop listing
 * it) and comes back as a new disk with the same number and counters from
 * 0, in a new epoch.
 */
static void *loop_cycler(void *arg)
{
	struct role_arg *a = arg;
	int k = nr_loops - 1, err, waited;
	struct loopdev *l = &loops[k];
	struct rng rng;

	rng_seed(&rng, a->seed);
	while (nr_loops == NR_LOOPS && running()) {
		sleep_ms(rng_range(&rng, 1000, 4000));
		if (!running())
			break;
		atomic_store(&ls->loop[k].ready, 0);
		for (waited = 0; atomic_load(&ls->loop[k].users) && waited < 2000; waited++)
			sleep_ms(1);
		if (atomic_load(&ls->loop[k].users)) {
			COUNT(loop_busy);
			atomic_store(&ls->loop[k].ready, 1);
			continue;
		}
		epoch_next(k);
		err = loop_bind(l, false);
		if (!err)
			err = loop_remove(l);
		epoch_next(k);
		if (err == -EBUSY) {
			/* held open by someone else: not ours to fight over */
			COUNT(loop_busy);
			printf("cgstress: loop%d stays busy: no more removals (and no I/O on it)\n",
			       l->index);
			break;
		}
		if (err) {
			FAIL("removing loop%d: %s", l->index, strerror(-err));
			break;
		}
		COUNT(loop_removals);
		/*
		 * EEXIST: loop<index> is back already, re-created by an open of
		 * its node in del_gendisk()'s window (udev probing it, most
		 * likely) through the legacy autoload: an unbound new disk all
		 * the same
		 */
		if (ioctl(loop_ctl_fd, LOOP_CTL_ADD, l->index) != l->index) {
			if (errno != EEXIST) {
				FAIL("re-creating loop%d: %s", l->index, strerror(errno));
				break;
			}
			COUNT(loop_autoloaded);
		}
		err = loop_bind(l, true);
		if (err) {
			FAIL("binding the re-created loop%d: %s", l->index, strerror(-err));
			break;
		}
		COUNT(loop_recreates);
		atomic_store(&ls->loop[k].ready, 1);
	}
	return NULL;
}

