// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Memory and io values (patched kernel, root, in the VM), in each mode
 * (SUBTREE, KERNEL, FALLBACK trees; KERNEL and FALLBACK streams through
 * cgstream_read_event(); a FALLBACK group), against the kernel's own
 * files: a cgroup where a process holds 64 MiB of touched anonymous
 * memory reports "current" and "anon" as memory.current and memory.stat
 * say (within 4 MiB), and a cgroup that wrote 16 MiB with O_DIRECT to a
 * loop device reports that device's wbytes (16 MiB, at most 5% more) and
 * wios.  Also: a stream of memory alone (no cpu values, memory's mode),
 * and a cgroup without the memory controller: -ENOMEDIUM for a stream or
 * a tree that asks for memory, and no memory values in a group.
 */
#include <linux/loop.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "testutil.h"

#define MEM_BYTES	(64ull << 20)
#define IO_BYTES	(16ull << 20)
#define IO_CHUNK	(1u << 20)
#define SLACK		(4ull << 20)

static char top[PATH_MAX], memcg[PATH_MAX], iocg[PATH_MAX], nomem[PATH_MAX];
static pid_t holder = -1;
static int loop_nr = -1, loop_fd = -1;
static unsigned int loop_major, loop_minor;

static void cleanup(void)
{
	t_kill(holder);
	if (loop_fd >= 0) {
		ioctl(loop_fd, LOOP_CLR_FD);
		close(loop_fd);
	}
	if (loop_nr >= 0) {
		int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);

		for (int i = 0; ctl >= 0 && i < 300; i++) {
			if (ioctl(ctl, LOOP_CTL_REMOVE, loop_nr) >= 0 || errno != EBUSY)
				break;
			t_sleep_ms(10);
		}
		if (ctl >= 0)
			close(ctl);
	}
	t_cg_remove(nomem);
	t_cg_remove(memcg);
	t_cg_remove(iocg);
	t_cg_remove(top);
}

static void join(const char *cg)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	if (t_write_file(p, "0") < 0)
		_exit(2);
}

/* a child in @memcg holding MEM_BYTES of touched memory until killed */
static void hold_memory(void)
{
	int pfd[2];
	char c;

	T_EQ(pipe(pfd), 0);
	holder = fork();
	T_ASSERT(holder >= 0);
	if (holder == 0) {
		char *p;

		join(memcg);
		p = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		memset(p, 0x5a, MEM_BYTES);
		if (write(pfd[1], "x", 1) != 1)
			_exit(4);
		alarm(600);
		for (;;)
			pause();
	}
	close(pfd[1]);
	T_EQ(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
}

/* a loop device over a memfd; false where the kernel has none */
static bool make_loop(void)
{
	struct loop_config cfg = { 0 };
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), back;
	char path[64];
	struct stat st;

	if (ctl < 0)
		return false;
	back = memfd_create("cgstest-loop", MFD_CLOEXEC);
	T_ASSERT(back >= 0);
	T_EQ(ftruncate(back, (off_t)(2 * IO_BYTES)), 0);
	loop_nr = ioctl(ctl, LOOP_CTL_ADD, -1);
	close(ctl);
	T_ASSERT(loop_nr >= 0);
	snprintf(path, sizeof(path), "/dev/loop%d", loop_nr);
	for (int i = 0; i < 100 && loop_fd < 0; i++) {
		loop_fd = open(path, O_RDWR | O_CLOEXEC);
		if (loop_fd < 0)
			t_sleep_ms(10);
	}
	T_ASSERT(loop_fd >= 0);
	cfg.fd = (uint32_t)back;
	T_EQ(ioctl(loop_fd, LOOP_CONFIGURE, &cfg), 0);
	close(back);
	T_EQ(fstat(loop_fd, &st), 0);
	loop_major = major(st.st_rdev);
	loop_minor = minor(st.st_rdev);
	return true;
}

/* a child in @iocg writes IO_BYTES with O_DIRECT to the loop device */
static void write_io(void)
{
	pid_t pid = fork();
	int status;

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		char path[64];
		void *buf;
		int fd;

		join(iocg);
		snprintf(path, sizeof(path), "/dev/loop%d", loop_nr);
		if (posix_memalign(&buf, 4096, IO_CHUNK))
			_exit(3);
		memset(buf, 0xa5, IO_CHUNK);
		fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0)
			_exit(4);
		for (uint64_t off = 0; off < IO_BYTES; off += IO_CHUNK)
			if (pwrite(fd, buf, IO_CHUNK, (off_t)off) != IO_CHUNK)
				_exit(5);
		_exit(fsync(fd) ? 6 : 0);
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static uint64_t file_value(const char *cg, const char *file, const char *key)
{
	char p[PATH_MAX + 32], buf[8192], *s;
	int n;

	snprintf(p, sizeof(p), "%s/%s", cg, file);
	n = t_read_file(p, buf, sizeof(buf));
	T_ASSERT(n > 0);
	if (!key)
		return strtoull(buf, NULL, 10);
	for (s = buf; s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, strlen(key)) && s[strlen(key)] == ' ')
			return strtoull(s + strlen(key) + 1, NULL, 10);
	T_FAIL("%s has no %s", p, key);
}

static uint64_t diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* @e is the memory cgroup's: its values as the files say; true once checked */
static bool check_memory(const struct cgstream_event *e, const char *how)
{
	uint64_t current, anon, direct_current, direct_anon;

	if (!(e->controllers & CGSTREAM_CTRL_MEMORY))
		T_FAIL("%s: the memory cgroup's sample has no memory (%#x)", how, e->controllers);
	T_EQ(cgstream_memory_get(e->memory, "current", &current), 0);
	T_EQ(cgstream_memory_get(e->memory, "anon", &anon), 0);
	if (anon < MEM_BYTES)
		return false;	/* a flush from before the memory was touched */
	direct_current = file_value(memcg, "memory.current", NULL);
	direct_anon = file_value(memcg, "memory.stat", "anon");
	t_log("%s: current %llu (memory.current %llu), anon %llu (memory.stat %llu), seq %llu",
	      how, (unsigned long long)current, (unsigned long long)direct_current,
	      (unsigned long long)anon, (unsigned long long)direct_anon,
	      (unsigned long long)e->memory->seq);
	T_ASSERT(diff(current, direct_current) <= SLACK);
	T_ASSERT(diff(anon, direct_anon) <= SLACK);
	T_ASSERT(current >= anon);
	return true;
}

/* @e is the io cgroup's: the loop device's writes; true once checked */
static bool check_io(const struct cgstream_event *e, const char *how)
{
	if (!(e->controllers & CGSTREAM_CTRL_IO))
		T_FAIL("%s: the io cgroup's sample has no io (%#x)", how, e->controllers);
	for (uint32_t i = 0; i < e->io->nr_devices; i++) {
		const struct cgstream_io_device *d = &e->io->devices[i];

		if (d->major != loop_major || d->minor != loop_minor)
			continue;
		if (d->wbytes < IO_BYTES)
			return false;	/* not flushed yet */
		t_log("%s: loop%d (%u:%u) wbytes %llu wios %llu, io seq %llu", how, loop_nr,
		      d->major, d->minor, (unsigned long long)d->wbytes,
		      (unsigned long long)d->wios, (unsigned long long)e->io->seq);
		T_ASSERT(d->wbytes <= IO_BYTES + IO_BYTES / 20);
		T_ASSERT(d->wios >= IO_BYTES / IO_CHUNK);
		return true;
	}
	return false;	/* not listed yet */
}

static void tree_values(int mode)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode, .fallback_interval_ms = 100,
				   .controllers = T_CTRL_MEMIO };
	static struct cgstream_event ev[64];
	bool mem_ok = false, io_ok = loop_nr < 0;
	struct cgstream_tree *t;
	int batches = 0;

	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	T_EQ(cgstream_tree_ctrl_mode(t, CGSTREAM_CTRL_MEMORY), mode);
	T_EQ(cgstream_tree_ctrl_mode(t, CGSTREAM_CTRL_IO), mode);
	while (!(mem_ok && io_ok)) {
		int n = t_tree_batch(t, ev, 64, sizeof(ev[0]));

		if (++batches > 50)
			T_FAIL("%s tree: values not seen in 50 batches (memory %d, io %d)",
			       cgstream_mode_name(mode), mem_ok, io_ok);
		for (int i = 0; i < n; i++) {
			if (ev[i].type != CGSTREAM_EVENT_SAMPLE)
				continue;
			if (!strcmp(ev[i].path, memcg) && !mem_ok)
				mem_ok = check_memory(&ev[i], cgstream_mode_name(mode));
			if (!strcmp(ev[i].path, iocg) && !io_ok)
				io_ok = check_io(&ev[i], cgstream_mode_name(mode));
		}
	}
	/* a sync: a batch at once, as of the latest flushes */
	T_EQ(cgstream_tree_sync(t), 0);
	T_EQ(cgstream_tree_sync(t), -EBUSY);
	{
		int n = 0, k;
		bool seen = false;

		while ((k = cgstream_tree_process(t, ev, 64, sizeof(ev[0]))) > 0 || n == 0) {
			if (k == 0) {
				T_EQ(cgstream_tree_wait(t, 5000), 1);
				continue;
			}
			T_ASSERT(k > 0);
			for (int i = 0; i < k; i++)
				if (ev[i].type == CGSTREAM_EVENT_SAMPLE && !strcmp(ev[i].path, memcg))
					seen = check_memory(&ev[i], "sync");
			n += k;
		}
		T_ASSERT(seen);
	}
	cgstream_tree_close(t);
}

static void stream_values(int mode)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = mode, .fallback_interval_ms = 100,
				   .controllers = T_CTRL_MEMIO };
	struct cgstream_event e;
	struct cgstream *st;
	char how[64];
	bool ok = false;

	snprintf(how, sizeof(how), "%s stream", cgstream_mode_name(mode));
	T_EQ(cgstream_open(memcg, &o, &st), 0);
	T_EQ(cgstream_ctrl_mode(st, CGSTREAM_CTRL_MEMORY), mode);
	for (int i = 0; i < 50 && !ok; i++) {
		int r;

		T_EQ(cgstream_wait(st, 5000), 1);
		r = cgstream_read_event(st, &e, sizeof(e));
		if (r == -EAGAIN)
			continue;
		T_EQ(r, 0);
		T_EQ(e.type, CGSTREAM_EVENT_SAMPLE);
		T_ASSERT(e.sample.present & CGSTREAM_F_USAGE);
		ok = check_memory(&e, how);
	}
	T_ASSERT(ok);
	cgstream_close(st);

	/* memory alone: its mode, no cpu values */
	o.controllers = CGSTREAM_CTRL_MEMORY;
	T_EQ(cgstream_open(memcg, &o, &st), 0);
	T_EQ(cgstream_mode(st), mode);
	T_EQ(cgstream_ctrl_mode(st, CGSTREAM_CTRL_CPU), -ENOENT);
	for (ok = false; !ok;) {
		T_EQ(cgstream_wait(st, 5000), 1);
		if (cgstream_read_event(st, &e, sizeof(e)) != 0)
			continue;
		T_EQ(e.controllers, CGSTREAM_CTRL_MEMORY);
		T_EQ(e.sample.present, CGSTREAM_F_CGROUP_ID);
		T_ASSERT(e.io == NULL);
		ok = check_memory(&e, "memory alone");
	}
	cgstream_close(st);
}

static void group_values(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_FALLBACK,
				   .fallback_interval_ms = 100, .controllers = T_CTRL_MEMIO };
	struct cgstream_event ev[8];
	struct cgstream_group *g;
	bool mem_ok = false, nomem_seen = false;

	T_EQ(cgstream_group_new(&o, &g), 0);
	T_EQ(cgstream_group_add(g, memcg, (void *)1), 0);
	T_EQ(cgstream_group_add(g, nomem, (void *)2), 0);
	for (int b = 0; b < 50 && !(mem_ok && nomem_seen); b++) {
		int n = t_group_batch(g, ev, 8, sizeof(ev[0]));

		for (int i = 0; i < n; i++) {
			T_EQ(ev[i].type, CGSTREAM_EVENT_SAMPLE);
			if (ev[i].userdata == (void *)2) {
				/* no memory or io there: cpu alone */
				T_EQ(ev[i].controllers, CGSTREAM_CTRL_CPU);
				T_ASSERT(!ev[i].memory && !ev[i].io);
				nomem_seen = true;
			} else if (!mem_ok) {
				mem_ok = check_memory(&ev[i], "fallback group");
			}
		}
	}
	T_ASSERT(mem_ok && nomem_seen);
	cgstream_group_free(g);
}

/*
 * A cgroup made just after cpu's publication (the lead's) and before
 * memory's and io's: their change snapshots list it (NEW) before cpu's
 * does, and only once while its values stay as they are.  A SUBTREE tree
 * of changes takes its memory and io values from those records, not only
 * from a full snapshot many cycles later.  cpu publishes every 2 s here,
 * memory and io every 50 ms; a sync reads the cycle in between.
 */
static void late_cgroup_values(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE,
				   .controllers = T_CTRL_MEMIO,
				   .report = CGSTREAM_REPORT_CHANGES };
	static struct cgstream_event ev[64];
	uint32_t want = T_CTRL_MEMIO, got = 0;
	char late[PATH_MAX], cpu_file[PATH_MAX + 32], buf[4096];
	struct cgstream_tree *t;
	struct pollfd p;
	uint64_t start;
	int fd;

	t_use_ctrl_interval(CGSTREAM_CTRL_CPU, 2000);
	t_use_ctrl_interval(CGSTREAM_CTRL_MEMORY, 50);
	t_use_ctrl_interval(CGSTREAM_CTRL_IO, 50);
	T_EQ(cgstream_tree_open(top, &o, &t), 0);
	t_tree_batch(t, ev, 64, sizeof(ev[0]));

	/* right after a cpu publication */
	snprintf(cpu_file, sizeof(cpu_file), "%s/cpu.stat.stream", top);
	fd = open(cpu_file, O_RDONLY | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	T_ASSERT(pread(fd, buf, sizeof(buf), 0) > 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	T_EQ(poll(&p, 1, 5000), 1);
	T_EQ(t_cg_make(top, "late", late, sizeof(late)), 0);
	close(fd);
	usleep(300 * 1000);	/* memory and io publish after it */
	T_EQ(cgstream_tree_sync(t), 0);

	start = t_now_ms();
	while ((got & want) != want) {
		int n = t_tree_batch(t, ev, 64, sizeof(ev[0]));

		for (int i = 0; i < n; i++)
			if (ev[i].type == CGSTREAM_EVENT_CHANGED && !strcmp(ev[i].path, late))
				got |= ev[i].controllers;
		/* cpu lists it at its next publication; 3 of them at most */
		if (t_now_ms() - start > 7000)
			T_FAIL("%s: controllers %#x in 7 s, not %#x", late, got, want);
	}
	t_log("a cgroup made between cpu's and the others' publications: all three in %llu ms",
	      (unsigned long long)(t_now_ms() - start));
	cgstream_tree_close(t);
	T_EQ(rmdir(late), 0);
	t_use_intervals(100);
}

int main(void)
{
	struct cgstream_opts o = { .sz = sizeof(o), .controllers = CGSTREAM_CTRL_MEMORY };
	char p[PATH_MAX + 32];
	struct cgstream *st = NULL;
	struct cgstream_tree *t = NULL;

	t_require_kernel_stream();
	snprintf(p, sizeof(p), "%s/memory.stat.stream", t_cgroup_root());
	if (access(p, F_OK) < 0)
		t_skip("this kernel has no memory stream");
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", t_cgroup_root());
	T_EQ(t_write_file(p, "+memory +io"), 0);
	T_EQ(t_cg_make(t_cgroup_root(), t_name("values"), top, sizeof(top)), 0);
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", top);
	T_EQ(t_write_file(p, "+memory +io"), 0);
	T_EQ(t_cg_make(top, "mem", memcg, sizeof(memcg)), 0);
	T_EQ(t_cg_make(top, "io", iocg, sizeof(iocg)), 0);
	T_EQ(t_cg_make(memcg, "nomem", nomem, sizeof(nomem)), 0);	/* memcg enables nothing */
	t_use_intervals(100);

	/* a cgroup without the controller: the object's own is an error */
	T_EQ(cgstream_open(nomem, &o, &st), -ENOMEDIUM);
	T_EQ(cgstream_tree_open(nomem, &o, &t), -ENOMEDIUM);
	T_ASSERT(!st && !t);

	hold_memory();
	if (make_loop())
		write_io();
	else
		t_log("no loop devices: io values not checked");
	tree_values(CGSTREAM_MODE_SUBTREE);
	tree_values(CGSTREAM_MODE_KERNEL);
	tree_values(CGSTREAM_MODE_FALLBACK);
	stream_values(CGSTREAM_MODE_KERNEL);
	stream_values(CGSTREAM_MODE_FALLBACK);
	group_values();
	late_cgroup_values();
	t_log("memio-values: all passed");
	return 0;
}
