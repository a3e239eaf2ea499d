// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The decoder of the *.stat.stream.subtree records, cgstream_records_next():
 * fields and present bits, the bandwidth flag, records longer than the
 * first size (stepped over by their size, even when that leaves the next
 * one unaligned), unknown types handed back undecoded (to be counted and
 * skipped), an empty buffer, and every malformed input -EBADMSG with the
 * offset unchanged: a size below the smallest header, past the buffer, a
 * CPU record shorter than its first size, a cut header; bad arguments
 * -EINVAL.  KEYS, MEMORY and IO records (the memory and io subtree files):
 * their header, names, values and devices through cgstream_record_value()
 * and cgstream_record_device(), and the lies -EBADMSG: nr_keys names that
 * do not fit (a name not NUL-terminated within the record), values that
 * are not whole u64s, nr_devices past the record; cut and oversized ones.
 * Then a fuzz: random and mutated buffers end in a bounded number of
 * steps.
 */
#include <stddef.h>

#include <linux/cgroup_stat_stream.h>

#include "testutil.h"

typedef struct cgroup_stat_stream_record rec_t;

/* a CPU record of @size bytes at @p, values from @seed */
static size_t put_cpu(unsigned char *p, uint16_t size, uint32_t flags, uint64_t seed)
{
	rec_t r = {
		.size = size, .type = CGROUP_STAT_STREAM_RECORD_CPU, .flags = flags,
		.cgroup_id = seed, .parent_id = seed ? seed - 1 : 0, .flush_seq = 7,
		.flush_time_usec = 1000 + seed, .usage_usec = 10 * seed, .user_usec = 6 * seed,
		.system_usec = 4 * seed, .nice_usec = 1, .nr_periods = 2, .nr_throttled = 3,
		.throttled_usec = 4, .nr_bursts = 5, .burst_usec = 6,
	};

	memset(p, 0xee, size);	/* a future tail: not ours to read */
	memcpy(p, &r, size < sizeof(r) ? size : sizeof(r));
	return size;
}

static size_t put_other(unsigned char *p, uint16_t size, uint16_t type)
{
	memset(p, 0x77, size);
	memcpy(p, &size, 2);
	memcpy(p + 2, &type, 2);
	return size;
}

static int next(const void *buf, size_t len, size_t *off, struct cgstream_record *rec)
{
	return cgstream_records_next(buf, len, off, rec, sizeof(*rec));
}

/* the CPU records of @buf[0..@len) from *@off, the others counted */
static int next_cpu(const void *buf, size_t len, size_t *off, struct cgstream_record *rec,
		    unsigned int *skipped)
{
	int r;

	while ((r = next(buf, len, off, rec)) > 0 && rec->type != CGSTREAM_RECORD_CPU) {
		T_EQ(rec->decoded, 0);
		T_EQ(rec->sample.present, 0);
		(*skipped)++;
	}
	return r;
}

static void expect_bad(const unsigned char *buf, size_t len, size_t off)
{
	struct cgstream_record rec;
	size_t o = off;

	T_EQ(next(buf, len, &o, &rec), -EBADMSG);
	T_EQ(o, off);
}

static void test_fields(void)
{
	static unsigned char buf[4096] __attribute__((aligned(8)));
	struct cgstream_record rec;
	size_t len = 0, off = 0;
	unsigned int skipped = 0;

	len += put_cpu(buf + len, 112, 0, 1);
	len += put_other(buf + len, 24, 99);		/* a kind we do not know */
	len += put_cpu(buf + len, 116, CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH, 2);
	len += put_other(buf + len, 16, 4);		/* header only */
	len += put_cpu(buf + len, 112, 0, 3);		/* at an unaligned offset */

	T_EQ(next_cpu(buf, len, &off, &rec, &skipped), 1);
	T_EQ(off, 112);
	T_EQ(rec.size, 112);
	T_EQ(rec.decoded, 1);
	T_EQ(rec.flags, 0);
	T_ASSERT(rec.data == buf);
	T_EQ(rec.cgroup_id, 1);
	T_EQ(rec.parent_id, 0);
	T_EQ(rec.sample.cgroup_id, 1);
	T_EQ(rec.sample.seq, 7);
	T_EQ(rec.sample.flush_time_usec, 1001);
	T_EQ(rec.sample.usage_usec, 10);
	T_EQ(rec.sample.user_usec, 6);
	T_EQ(rec.sample.system_usec, 4);
	T_EQ(rec.sample.nice_usec, 1);
	T_EQ(rec.sample.nr_periods, 0);	/* not valid without the flag */
	T_EQ(rec.sample.present, CGSTREAM_F_CGROUP_ID | CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
				 CGSTREAM_F_USAGE | CGSTREAM_F_USER | CGSTREAM_F_SYSTEM |
				 CGSTREAM_F_NICE);

	T_EQ(next_cpu(buf, len, &off, &rec, &skipped), 1);
	T_EQ(skipped, 1);
	T_EQ(off, 112 + 24 + 116);
	T_EQ(rec.flags, CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH);
	T_EQ(rec.cgroup_id, 2);
	T_EQ(rec.parent_id, 1);
	T_EQ(rec.sample.nr_periods, 2);
	T_EQ(rec.sample.nr_throttled, 3);
	T_EQ(rec.sample.throttled_usec, 4);
	T_EQ(rec.sample.nr_bursts, 5);
	T_EQ(rec.sample.burst_usec, 6);
	T_ASSERT(rec.sample.present & CGSTREAM_F_BURST);
	T_ASSERT(!(rec.sample.present & CGSTREAM_F_FLUSH_MISSED));

	T_EQ(next_cpu(buf, len, &off, &rec, &skipped), 1);
	T_EQ(skipped, 2);
	T_EQ(rec.cgroup_id, 3);
	T_EQ(rec.sample.usage_usec, 30);
	T_EQ(off, len);
	T_EQ(next(buf, len, &off, &rec), 0);
	T_EQ(off, len);

	/* zero-length: the end at once, and no buffer is needed */
	off = 0;
	T_EQ(next(buf, 0, &off, &rec), 0);
	T_EQ(next(NULL, 0, &off, &rec), 0);
	T_EQ(off, 0);
	/* only unknown kinds: each handed back undecoded, then the end */
	len = put_other(buf, 16, 5);
	len += put_other(buf + len, 40, 77);
	skipped = 0;
	T_EQ(next_cpu(buf, len, &off, &rec, &skipped), 0);
	T_EQ(skipped, 2);
	T_EQ(off, len);
}

/* an older caller's smaller struct, and arguments that are not a call */
static void test_args(void)
{
	static unsigned char buf[256] __attribute__((aligned(8)));
	struct cgstream_record rec;
	size_t len = put_cpu(buf, 112, 0, 1), off = 0;

	T_EQ(cgstream_records_next(buf, len, &off, &rec, sizeof(rec) - 1), -EINVAL);
	T_EQ(cgstream_records_next(buf, len, NULL, &rec, sizeof(rec)), -EINVAL);
	T_EQ(cgstream_records_next(buf, len, &off, NULL, sizeof(rec)), -EINVAL);
	T_EQ(cgstream_records_next(NULL, len, &off, &rec, sizeof(rec)), -EINVAL);
	off = len + 1;
	T_EQ(next(buf, len, &off, &rec), -EINVAL);
	T_EQ(off, len + 1);
	/* a larger struct from a newer header: the rest zeroed */
	{
		unsigned char big[sizeof(rec) + 16];

		memset(big, 0xaa, sizeof(big));
		off = 0;
		T_EQ(cgstream_records_next(buf, len, &off, (void *)big, sizeof(big)), 1);
		for (size_t i = sizeof(rec); i < sizeof(big); i++)
			T_EQ(big[i], 0);
	}
}

static void test_malformed(void)
{
	static unsigned char buf[1024] __attribute__((aligned(8)));
	uint16_t size;
	size_t len;

	/* a size below the smallest header: it would never move on */
	for (size = 0; size < 16; size++) {
		put_other(buf, 16, 9);
		memcpy(buf, &size, 2);
		expect_bad(buf, 112, 0);
	}
	/* a CPU record's size below its header, an unknown kind's not */
	for (size = 16; size < 112; size += 8) {
		put_other(buf, 112, 1);
		memcpy(buf, &size, 2);
		expect_bad(buf, 112, 0);
	}
	/* a size past the buffer */
	len = put_cpu(buf, 112, 0, 1);
	expect_bad(buf, len - 1, 0);
	size = 200;
	memcpy(buf, &size, 2);
	expect_bad(buf, len, 0);
	/* a CPU record shorter than its first size */
	len = put_cpu(buf, 104, 0, 1);
	expect_bad(buf, len, 0);
	/* a cut header after a good record, and after an unknown one */
	len = put_cpu(buf, 112, 0, 1);
	expect_bad(buf, len + 5, 112);
	len = put_other(buf, 16, 9);
	expect_bad(buf, len + 3, len);
}

/* a KEYS record for MEMORY naming @names (NUL-separated, @nr of them) */
static size_t put_keys(unsigned char *p, const char *names, size_t names_len, uint16_t nr)
{
	struct cgroup_stat_stream_keys k = {
		.type = CGROUP_STAT_STREAM_RECORD_KEYS,
		.for_type = CGROUP_STAT_STREAM_RECORD_MEMORY, .nr_keys = nr,
	};
	size_t size = (sizeof(k) + names_len + 7) / 8 * 8;

	k.size = (uint16_t)size;
	memset(p, 0, size);
	memcpy(p, &k, sizeof(k));
	memcpy(p + sizeof(k), names, names_len);
	return size;
}

static size_t put_hdr(unsigned char *p, uint16_t size, uint16_t type, uint64_t id)
{
	struct cgroup_stat_stream_header h = {
		.size = size, .type = type, .cgroup_id = id, .parent_id = id - 1,
		.flush_seq = 40 + id, .flush_time_usec = 5000 + id,
	};

	memcpy(p, &h, sizeof(h));
	return sizeof(h);
}

static size_t put_memory(unsigned char *p, uint64_t id, unsigned int nr)
{
	size_t off = put_hdr(p, (uint16_t)(40 + 8 * nr), CGROUP_STAT_STREAM_RECORD_MEMORY, id);

	for (unsigned int i = 0; i < nr; i++) {
		uint64_t v = 1000 * id + i;

		memcpy(p + off + 8 * i, &v, 8);
	}
	return 40 + 8 * nr;
}

static size_t put_io(unsigned char *p, uint64_t id, uint32_t nr, uint32_t claimed)
{
	size_t size = 48 + 56 * (size_t)nr;

	put_hdr(p, (uint16_t)size, CGROUP_STAT_STREAM_RECORD_IO, id);
	memcpy(p + 40, &claimed, 4);
	memset(p + 44, 0, 4);
	for (uint32_t i = 0; i < nr; i++) {
		struct cgroup_stat_stream_io_device d = {
			.major = 7, .minor = i, .rbytes = 100 * id + i, .wbytes = 2, .rios = 3,
			.wios = 4, .dbytes = 5, .dios = 6,
		};

		memcpy(p + 48 + 56 * i, &d, sizeof(d));
	}
	return size;
}

static void test_memio(void)
{
	static const char names[] = "anon\0file\0current\0events.oom";
	static unsigned char buf[4096] __attribute__((aligned(8)));
	struct cgstream_record rec;
	struct cgstream_io_device dev;
	size_t len = 0, off = 0, keys_len;
	uint64_t v;

	/* a memory snapshot: KEYS, then two MEMORY records, one unaligned */
	len += keys_len = put_keys(buf, names, sizeof(names), 4);
	len += put_memory(buf + len, 1, 4);
	buf[len++] = 0;	/* what follows is not 8-byte aligned */
	T_EQ(next(buf, keys_len, &off, &rec), 1);
	T_EQ(rec.type, CGSTREAM_RECORD_KEYS);
	T_EQ(rec.decoded, 1);
	T_EQ(rec.count, 4);
	T_EQ(rec.for_type, CGSTREAM_RECORD_MEMORY);
	T_ASSERT(!strcmp(rec.items, "anon"));
	T_ASSERT(!strcmp((const char *)rec.items + 5, "file"));
	T_EQ(cgstream_record_value(&rec, 0, &v), -EINVAL);	/* not MEMORY */
	T_EQ(next(buf, keys_len + put_memory(buf + keys_len, 1, 4), &off, &rec), 1);
	T_EQ(rec.type, CGSTREAM_RECORD_MEMORY);
	T_EQ(rec.cgroup_id, 1);
	T_EQ(rec.parent_id, 0);
	T_EQ(rec.seq, 41);
	T_EQ(rec.flush_time_usec, 5001);
	T_EQ(rec.count, 4);
	T_EQ(rec.sample.present, 0);
	T_EQ(cgstream_record_value(&rec, 3, &v), 0);
	T_EQ(v, 1003);
	T_EQ(cgstream_record_value(&rec, 4, &v), -ENOENT);
	T_EQ(cgstream_record_device(&rec, 0, &dev), -EINVAL);	/* not IO */
	off = keys_len + 40 + 8 * 4 + 1;
	len = off + put_memory(buf + off, 2, 4);
	T_EQ(next(buf, len, &off, &rec), 1);
	T_EQ(cgstream_record_value(&rec, 2, &v), 0);
	T_EQ(v, 2002);
	T_EQ(off, len);

	/* nr_keys lying: more names than the record holds (the padding's
	 * zeros are two empty names more), a name not ended */
	len = put_keys(buf, names, sizeof(names), 7);
	off = 0;
	T_EQ(next(buf, len, &off, &rec), 1);
	len = put_keys(buf, names, sizeof(names), 8);
	expect_bad(buf, len, 0);
	len = put_keys(buf, "abcdefgh", 8, 1);	/* 16 + 8 bytes, no NUL in them */
	expect_bad(buf, len, 0);
	len = put_keys(buf, names, sizeof(names), 0);	/* none: fine */
	off = 0;
	T_EQ(next(buf, len, &off, &rec), 1);
	T_EQ(rec.count, 0);
	/* a KEYS record cut short, one claiming more bytes than there are */
	len = put_keys(buf, names, sizeof(names), 4);
	expect_bad(buf, len - 8, 0);
	/* MEMORY: values not whole u64s, a header cut */
	len = put_memory(buf, 3, 2);
	T_EQ(len, 56);
	buf[0] = 52;
	expect_bad(buf, len, 0);
	buf[0] = 36;
	expect_bad(buf, len, 0);
	expect_bad(buf, 39, 0);

	/* IO: devices, then nr_devices lying, a record longer than its devices */
	len = put_io(buf, 5, 2, 2);
	off = 0;
	T_EQ(next(buf, len, &off, &rec), 1);
	T_EQ(rec.type, CGSTREAM_RECORD_IO);
	T_EQ(rec.count, 2);
	T_EQ(rec.seq, 45);
	T_EQ(cgstream_record_device(&rec, 1, &dev), 0);
	T_EQ(dev.major, 7);
	T_EQ(dev.minor, 1);
	T_EQ(dev.rbytes, 501);
	T_EQ(dev.dios, 6);
	T_EQ(cgstream_record_device(&rec, 2, &dev), -ENOENT);
	T_EQ(cgstream_record_value(&rec, 0, &v), -EINVAL);
	len = put_io(buf, 5, 2, 3);
	expect_bad(buf, len, 0);
	len = put_io(buf, 5, 0, 0xffffffffu);
	expect_bad(buf, len, 0);
	len = put_io(buf, 5, 2, 1);	/* room for more than it lists: a later layout */
	off = 0;
	T_EQ(next(buf, len, &off, &rec), 1);
	T_EQ(rec.count, 1);
	expect_bad(buf, 47, 0);	/* below IO's first size */
	len = put_io(buf, 5, 1, 1);
	buf[0] = 47;
	expect_bad(buf, len, 0);
}

static unsigned int rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* any input: 1 only with the offset moved on by at least a header, the
 * end or -EBADMSG within len / 8 + 1 steps */
static void test_fuzz(void)
{
	static unsigned char buf[2048] __attribute__((aligned(8)));
	unsigned int seed = 12345;
	int iters = getenv("CGSTREAM_TEST_FAST") ? 20000 : 200000;

	for (int it = 0; it < iters; it++) {
		size_t len = 0, off = 0, steps = 0;
		struct cgstream_record rec;
		int r;

		if (it % 2) {	/* valid records, then a few bytes flipped */
			while (len + 200 < sizeof(buf))
				len += rnd(&seed) % 4 ? put_cpu(buf + len, (uint16_t)(112 + rnd(&seed) % 40),
								rnd(&seed) % 2, it)
						      : put_other(buf + len, (uint16_t)(16 + rnd(&seed) % 64),
								  (uint16_t)(rnd(&seed) % 4));
			for (int k = rnd(&seed) % 4; k > 0; k--)
				buf[rnd(&seed) % len] ^= (unsigned char)(1u << (rnd(&seed) % 8));
			len -= rnd(&seed) % 16;
		} else {
			len = rnd(&seed) % sizeof(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = (unsigned char)rnd(&seed);
		}
		while ((r = next(buf, len, &off, &rec)) > 0) {
			T_ASSERT(off <= len);
			T_ASSERT(++steps <= len / 16 + 1);
		}
		T_ASSERT(r == 0 || r == -EBADMSG);
		T_ASSERT(off <= len);
	}
}

int main(void)
{
	test_fields();
	test_malformed();
	test_memio();
	test_args();
	test_fuzz();
	t_log("records: all passed");
	return 0;
}
