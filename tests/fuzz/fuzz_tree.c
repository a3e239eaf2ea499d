// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: any bytes -> what a cgstream_tree makes of them as the
 * kernel's cpu.stat.stream.subtree: the whole library (its sources built
 * in), a tree in SUBTREE mode over a few real cgroups made at start under
 * the cgroup2 mount, whose subtree file is this program's: openat() of it
 * gives an eventfd, and each pread() of it the next chunk of the input.
 * So the tree's handling of snapshots is fuzzed, not only the decoder's:
 * REMOVED records of ids it does not know or of its root, change
 * snapshots without its base, ids that move between parents, a snapshot
 * that ends early or fails mid-way (ENODATA, EINVAL, ENODEV), records that
 * lie.
 *
 * The input: byte 0 says CGSTREAM_REPORT_CHANGES (bit 0) or ALL; then
 * chunks, each a little-endian u16 length and its bytes; length 0 is a
 * read that returns 0 (a snapshot's end), 0xffff, 0xfffe, 0xfffd the
 * errors ENODATA, EINVAL, ENODEV.  Ids in CGROUP and REMOVED records are
 * taken modulo 9 to one of the 8 cgroups' ids (or left as they are), so
 * that records name cgroups the tree knows.  Up to 8 cycles (a sync, then
 * every event handed out) per input.  It asserts besides the sanitizers:
 * events of known types, paths, ids of the test's cgroups only; a
 * cgroup's ADDED before its values and once, nothing after its REMOVED
 * but a new ADDED (the input may say a cgroup went whose directory is
 * there, then list it); a CHANGED only with CGSTREAM_REPORT_CHANGES, with the
 * controllers it says changed; process ends with 0 or an errno.
 *
 * Needs root and a cgroup2 mount (make check runs it as root on the
 * host); without them every input is a no-op, said once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "check.h"

#define NR_CG		8
#define MAX_CYCLES	8

static char top[PATH_MAX];
static char paths[NR_CG][PATH_MAX + 16];
static uint64_t ids[NR_CG];
static bool ready;

/* the input being served */
static const uint8_t *in;
static size_t in_len, in_pos;
static int fake_fd = -1;

#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	if (!real_##name)						\
		real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static bool is_subtree(const char *name)
{
	size_t n = strlen(name), k = strlen("cpu.stat.stream.subtree");

	return n >= k && !strcmp(name + n - k, "cpu.stat.stream.subtree");
}

int openat(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	REAL(int, openat, int, const char *, int, ...);

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!is_subtree(name))
		return real_openat(dfd, name, flags, mode);
	/* pollable, never readable: the cycles are the harness's syncs */
	fake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return fake_fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

int close(int fd)
{
	REAL(int, close, int);

	if (fd == fake_fd)
		fake_fd = -1;
	return real_close(fd);
}

/* the chunk's CGROUP and REMOVED records' ids as the test's cgroups' */
static void map_ids(uint8_t *p, size_t len)
{
	for (size_t off = 0; off + 8 <= len;) {
		uint32_t size;
		uint16_t type;

		memcpy(&size, p + off, 4);
		memcpy(&type, p + off + 4, 2);
		if (size < 8 || size % 8 || size > len - off)
			return;
		if ((type == CGROUP_STAT_REC_CGROUP || type == CGROUP_STAT_REC_REMOVED) &&
		    size >= sizeof(struct cgroup_stat_cgroup)) {
			for (size_t f = 8; f <= 16; f += 8) {
				uint64_t id;

				memcpy(&id, p + off + f, 8);
				if (id % (NR_CG + 1) < NR_CG)
					id = ids[id % (NR_CG + 1)];
				memcpy(p + off + f, &id, 8);
			}
		}
		off += size;
	}
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	uint16_t len;
	REAL(ssize_t, pread, int, void *, size_t, off_t);

	if (fd != fake_fd || fd < 0)
		return real_pread(fd, buf, n, off);
	if (in_pos + 2 > in_len)
		return 0;
	memcpy(&len, in + in_pos, 2);
	if (len >= 0xfffd) {
		in_pos += 2;
		errno = len == 0xffff ? ENODATA : len == 0xfffe ? EINVAL : ENODEV;
		return -1;
	}
	if (len > in_len - in_pos - 2)
		len = (uint16_t)(in_len - in_pos - 2);
	if (len > n) {
		errno = EINVAL;	/* the next record does not fit: asked again, larger */
		return -1;
	}
	memcpy(buf, in + in_pos + 2, len);
	map_ids(buf, len);
	in_pos += 2 + (size_t)len;
	return len;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

static void cleanup(void)
{
	for (int i = NR_CG; i-- > 0;)
		rmdir(paths[i]);
}

/* the cgroups of earlier runs that ended without their atexit (libFuzzer
 * leaves by _exit() on a crash or when its time is up) */
static void cleanup_old(const char *mount)
{
	char cmd[PATH_MAX + 160];

	snprintf(cmd, sizeof(cmd),
		 "for d in '%s'/cgstest-fuzz-tree-*; do [ -d \"$d\" ] && "
		 "! kill -0 \"${d##*-}\" 2>/dev/null && find \"$d\" -depth -type d -delete; done; true",
		 mount);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_tree: could not remove old test cgroups\n");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const rel[NR_CG] = { "", "/a", "/b", "/a/c", "/a/d", "/b/e", "/a/c/f",
						"/g" };
	struct stat st;

	(void)argc;
	(void)argv;
	if (geteuid() != 0 || cgstream_resolve_path("/", NULL, top, sizeof(top)) < 0) {
		fprintf(stderr, "fuzz_tree: needs root and a cgroup2 mount: inputs are not run\n");
		return 0;
	}
	cleanup_old(top);
	snprintf(top + strlen(top), sizeof(top) - strlen(top), "/cgstest-fuzz-tree-%d", getpid());
	for (int i = 0; i < NR_CG; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s%s", top, rel[i]);
		if (mkdir(paths[i], 0755) < 0 || stat(paths[i], &st) < 0) {
			fprintf(stderr, "fuzz_tree: mkdir %s: %s\n", paths[i], strerror(errno));
			cleanup();
			return 0;
		}
		ids[i] = st.st_ino;
	}
	atexit(cleanup);
	ready = true;
	return 0;
}

/* the state of each of the test's cgroups, as the events told it */
struct seen {
	bool added, removed;
};

static struct seen *seen_of(struct seen *s, uint64_t id)
{
	for (int i = 0; i < NR_CG; i++)
		if (ids[i] == id)
			return &s[i];
	return NULL;
}

static void check_event(const struct cgstream_event *e, struct seen *s, bool changes)
{
	struct seen *c = seen_of(s, e->sample.cgroup_id);

	CHECK(e->path && c);	/* only cgroups there are */
	switch (e->type) {
	case CGSTREAM_EVENT_ADDED:
		/* again after a REMOVED: the input said a cgroup whose directory is
		 * there went, then listed it (a kernel reuses no id) */
		CHECK(!c->added || c->removed);
		c->added = true;
		c->removed = false;
		break;
	case CGSTREAM_EVENT_SAMPLE:
	case CGSTREAM_EVENT_CHANGED:
		CHECK(c->added);
		CHECK((e->type == CGSTREAM_EVENT_CHANGED) == changes);
		CHECK((e->changed & ~e->controllers) == 0 && (!changes || e->changed));
		CHECK(e->controllers == CGSTREAM_CTRL_CPU && e->cpu);
		CHECK(e->cpu->nr == 0 || (e->cpu->names && e->cpu->values));
		break;
	case CGSTREAM_EVENT_REMOVED:
		CHECK(c->added && !c->removed);
		CHECK((e->final & ~e->controllers) == 0);
		c->removed = true;
		break;
	default:
		CHECK(e->type == CGSTREAM_EVENT_ERROR && e->error < 0);
	}
	CHECK(e->type == CGSTREAM_EVENT_REMOVED || !c->removed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_SUBTREE };
	struct cgstream_event ev[64];
	struct seen seen[NR_CG] = { { 0 } };
	struct cgstream_tree *t;
	int r = 0;

	if (!ready || size < 1)
		return 0;
	o.report = data[0] & 1 ? CGSTREAM_REPORT_CHANGES : CGSTREAM_REPORT_ALL;
	in = data;
	in_len = size;
	in_pos = 1;
	CHECK(cgstream_tree_open(top, &o, &t) == 0);
	for (int cycle = 0; cycle < MAX_CYCLES && r >= 0 && in_pos < in_len; cycle++) {
		r = cgstream_tree_sync(t);
		CHECK(r == 0 || r < 0);
		while (r >= 0) {
			int n = cgstream_tree_process(t, ev, 64, sizeof(ev[0]));

			CHECK(n <= 64);
			for (int i = 0; i < n; i++)
				check_event(&ev[i], seen, o.report == CGSTREAM_REPORT_CHANGES);
			if (n <= 0) {
				r = n;
				break;
			}
		}
	}
	cgstream_tree_close(t);
	return 0;
}
