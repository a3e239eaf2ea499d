// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The seed corpus of fuzz_records: cpu.stat.stream.subtree,
 * memory.stat.stream.subtree (a KEYS record, then MEMORY records) and
 * io.stat.stream.subtree (IO records with devices) reads as the kernel
 * returns them, and as a later kernel might (longer records, unknown
 * types), and lying ones (nr_keys, nr_devices), written into the folder
 * given.  Deterministic: the same
 * files on every run.
 *
 * usage: gen-records DIR
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/cgroup_stat_stream.h>

typedef struct cgroup_stat_stream_record rec_t;

static unsigned char buf[4096];
static size_t len;

static void put_cpu(uint16_t size, uint32_t flags, uint64_t id, uint64_t parent)
{
	rec_t r = {
		.size = size, .type = CGROUP_STAT_STREAM_RECORD_CPU, .flags = flags,
		.cgroup_id = id, .parent_id = parent, .flush_seq = 42,
		.flush_time_usec = 5000000 + id, .usage_usec = 900 * id, .user_usec = 600 * id,
		.system_usec = 300 * id, .nice_usec = id & 1,
	};

	if (flags & CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH) {
		r.nr_periods = 100;
		r.nr_throttled = 7;
		r.throttled_usec = 3500;
		r.nr_bursts = 2;
		r.burst_usec = 800;
	}
	memset(buf + len, 0xee, size);	/* a later kernel's tail */
	memcpy(buf + len, &r, size < sizeof(r) ? size : sizeof(r));
	len += size;
}

static void put_other(uint16_t size, uint16_t type)
{
	memset(buf + len, 0x77, size);
	memcpy(buf + len, &size, 2);
	memcpy(buf + len + 2, &type, 2);
	memset(buf + len + 4, 0, 4);
	len += size;
}

static void put_hdr(uint16_t size, uint16_t type, uint64_t id, uint64_t parent)
{
	struct cgroup_stat_stream_header h = {
		.size = size, .type = type, .cgroup_id = id, .parent_id = parent,
		.flush_seq = 42, .flush_time_usec = 5000000 + id,
	};

	memcpy(buf + len, &h, sizeof(h));
}

/* KEYS naming @n of memory's names, @lie more than it holds */
static void put_keys(unsigned int n, unsigned int lie)
{
	static const char *const names[] = {
		"anon", "file", "kernel", "shmem", "pgfault", "current", "swap.current",
		"events.low", "events.oom_kill",
	};
	struct cgroup_stat_stream_keys k = {
		.type = CGROUP_STAT_STREAM_RECORD_KEYS,
		.for_type = CGROUP_STAT_STREAM_RECORD_MEMORY, .nr_keys = (uint16_t)(n + lie),
	};
	size_t at = len, off = sizeof(k);

	memset(buf + len, 0, 256);
	for (unsigned int i = 0; i < n; i++) {
		memcpy(buf + at + off, names[i], strlen(names[i]) + 1);
		off += strlen(names[i]) + 1;
	}
	off = (off + 7) / 8 * 8;
	k.size = (uint16_t)off;
	memcpy(buf + at, &k, sizeof(k));
	len += off;
}

static void put_memory(unsigned int n, uint64_t id, uint64_t parent)
{
	put_hdr((uint16_t)(40 + 8 * n), CGROUP_STAT_STREAM_RECORD_MEMORY, id, parent);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t v = (id << 20) + i;

		memcpy(buf + len + 40 + 8 * i, &v, 8);
	}
	len += 40 + 8 * n;
}

static void put_io(unsigned int n, uint32_t claimed, uint64_t id, uint64_t parent)
{
	put_hdr((uint16_t)(48 + 56 * n), CGROUP_STAT_STREAM_RECORD_IO, id, parent);
	memcpy(buf + len + 40, &claimed, 4);
	memset(buf + len + 44, 0, 4);
	for (unsigned int i = 0; i < n; i++) {
		struct cgroup_stat_stream_io_device d = {
			.major = 7, .minor = i, .rbytes = 4096 * id, .wbytes = 1 << 20,
			.rios = 1, .wios = 256, .dbytes = 0, .dios = 0,
		};

		memcpy(buf + len + 48 + 56 * i, &d, sizeof(d));
	}
	len += 48 + 56 * n;
}

static int emit(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen-records: %s: %s\n", path, strerror(errno));
		return 1;
	}
	len = 0;
	return 0;
}

int main(int argc, char **argv)
{
	const uint32_t bw = CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH;
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-records DIR\n");
		return 2;
	}
	put_cpu(112, 0, 1, 0);
	err |= emit(argv[1], "root-only");

	/* a root, two children, a grandchild with a CPU limit: pre-order */
	put_cpu(112, 0, 1, 0);
	put_cpu(112, 0, 10, 1);
	put_cpu(112, bw, 11, 10);
	put_cpu(112, 0, 20, 1);
	err |= emit(argv[1], "tree");

	/* a later kernel: longer CPU records (the next one unaligned), kinds
	 * of record this decoder does not know, one of them header only */
	put_cpu(116, bw, 1, 0);
	put_other(24, 2);
	put_cpu(112, 0, 2, 1);
	put_other(8, 99);
	put_cpu(120, 0, 3, 1);
	err |= emit(argv[1], "future");

	/* no CPU record at all */
	put_other(16, 7);
	put_other(8, 0);
	err |= emit(argv[1], "other-types");

	/* malformed: a CPU record cut short, and one claiming more than there is */
	put_cpu(112, 0, 1, 0);
	put_cpu(64, 0, 2, 1);
	err |= emit(argv[1], "short-cpu");
	put_cpu(112, 0, 1, 0);
	len -= 40;
	err |= emit(argv[1], "truncated");

	/* memory: KEYS, then a MEMORY record per cgroup, pre-order */
	put_keys(9, 0);
	put_memory(9, 1, 0);
	put_memory(9, 10, 1);
	put_memory(9, 11, 10);
	err |= emit(argv[1], "memory");
	/* nr_keys lying, a MEMORY record of a cut value */
	put_keys(5, 40);
	put_memory(5, 1, 0);
	err |= emit(argv[1], "memory-keys-lie");
	put_keys(5, 0);
	put_memory(5, 1, 0);
	buf[len - 48] = 44;	/* its size: 4 bytes past its header */
	err |= emit(argv[1], "memory-cut-value");

	/* io: devices per cgroup, none for one, then nr_devices lying */
	put_io(2, 2, 1, 0);
	put_io(0, 0, 10, 1);
	put_io(3, 3, 11, 10);
	err |= emit(argv[1], "io");
	put_io(1, 1, 1, 0);
	put_io(1, 9, 10, 1);
	err |= emit(argv[1], "io-devices-lie");
	put_io(2, 1, 1, 0);	/* room for more than it lists: a later layout */
	err |= emit(argv[1], "io-longer");
	return err;
}
