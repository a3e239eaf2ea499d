// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's parsers of memory's and io's text (src/parse.c, internal):
 * memory.stat / memory.stat.stream (flat-keyed, every key a value; the
 * stream's flush_seq, flush_time_usec and flush_missed apart),
 * memory.current, memory.events with its "events." prefix, and io.stat /
 * io.stat.stream (a line per device: the six counters, policies' extra
 * fields skipped, a device without counts, "(unknown)" devices skipped,
 * the stream's two last lines).  Junk, cut lines, NUL bytes, signs,
 * overflow: -EBADMSG.  And the shared names (src/memio.c): cgroups with
 * the same keys share one list; another list of keys is a second layout;
 * values are reused, not reallocated, from cycle to cycle.
 */
#include "testutil.h"
#include "internal.h"

static const char memstat[] =
	"anon 1234\nfile 5678\nkernel 0\nshmem 4096\npgfault 77\n";

static struct cgs_kv *kv_at(struct cgs_kvs *k, size_t i, const char *prefix, const char *key,
			    uint64_t v)
{
	struct cgs_kv *e = &k->v[i];

	T_ASSERT(i < k->n);
	if (strcmp(e->prefix, prefix) || e->len != strlen(key) || memcmp(e->key, key, e->len))
		T_FAIL("kv %zu: %s%.*s, want %s%s", i, e->prefix, (int)e->len, e->key, prefix, key);
	T_EQ(e->v, v);
	return e;
}

static int keyed(const char *text, const char *prefix, struct cgs_kvs *k, struct cgs_flush *fl)
{
	return cgs_parse_keyed(text, strlen(text), prefix, k, fl);
}

static void test_memory_text(void)
{
	struct cgs_kvs k = { 0 };
	struct cgs_flush fl = { 0 };
	uint64_t v;

	T_EQ(keyed(memstat, "", &k, NULL), 0);
	T_EQ(k.n, 5);
	kv_at(&k, 0, "", "anon", 1234);
	kv_at(&k, 4, "", "pgfault", 77);
	/* the stream: its three keys apart, the rest the same */
	k.n = 0;
	T_EQ(keyed("anon 1\nfile 2\nflush_seq 9\nflush_time_usec 123\nflush_missed 1\n", "", &k,
		   &fl), 0);
	T_EQ(k.n, 2);
	T_EQ(fl.seq, 9);
	T_EQ(fl.time_usec, 123);
	T_EQ(fl.missed, 1);
	T_EQ(fl.present, CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED);
	/* memory.events, prefixed */
	T_EQ(keyed("low 0\nhigh 3\nmax 0\noom 0\noom_kill 2\n", "events.", &k, NULL), 0);
	kv_at(&k, 3, "events.", "high", 3);
	kv_at(&k, 6, "events.", "oom_kill", 2);
	/* the last line may lack its newline */
	k.n = 0;
	T_EQ(keyed("anon 1\nfile 2", "", &k, NULL), 0);
	kv_at(&k, 1, "", "file", 2);
	k.n = 0;
	T_EQ(keyed("", "", &k, NULL), 0);	/* memory.events of nothing */
	T_EQ(k.n, 0);
	/* junk */
	static const char *const bad[] = {
		"anon\n", "anon \n", " 1\n", "anon 1\n\nfile 2\n", "anon -1\n", "anon +1\n",
		"anon 1x\n", "anon 0x10\n", "anon 18446744073709551616\n", "anon 1 2\n",
		"anon\t1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k.n = 0;
		if (keyed(bad[i], "", &k, NULL) != -EBADMSG)
			T_FAIL("accepted %s", bad[i]);
	}
	T_EQ(cgs_parse_keyed("anon 1\0\n", 8, "", &k, NULL), -EBADMSG);	/* a NUL */
	/* the stream's key twice, or not a number */
	fl = (struct cgs_flush){ 0 };
	T_EQ(keyed("flush_seq 1\nflush_seq 2\n", "", &k, &fl), -EBADMSG);
	fl = (struct cgs_flush){ 0 };
	T_EQ(keyed("flush_seq x\n", "", &k, &fl), -EBADMSG);
	/* single values */
	T_EQ(cgs_parse_value("123\n", 4, &v), 0);
	T_EQ(v, 123);
	T_EQ(cgs_parse_value("18446744073709551615", 20, &v), 0);
	T_EQ(v, UINT64_MAX);
	T_EQ(cgs_parse_value("max\n", 4, &v), -EBADMSG);
	T_EQ(cgs_parse_value("\n", 1, &v), -EBADMSG);
	T_EQ(cgs_parse_value("", 0, &v), -EBADMSG);
	T_EQ(cgs_parse_value("1 2\n", 4, &v), -EBADMSG);
	free(k.v);
}

static int io(const char *text, struct cgs_devs *d, struct cgs_flush *fl)
{
	return cgs_parse_io(text, strlen(text), d, fl);
}

static void dev_is(const struct cgs_devs *d, uint32_t i, uint32_t major, uint32_t minor,
		   uint64_t rbytes, uint64_t wbytes, uint64_t dios)
{
	T_ASSERT(i < d->n);
	T_EQ(d->v[i].major, major);
	T_EQ(d->v[i].minor, minor);
	T_EQ(d->v[i].rbytes, rbytes);
	T_EQ(d->v[i].wbytes, wbytes);
	T_EQ(d->v[i].dios, dios);
}

static void test_io_text(void)
{
	struct cgs_devs d = { 0 };
	struct cgs_flush fl = { 0 };
	struct cgstream_io_device *kept;

	T_EQ(io("8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n"
		"8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n",
		&d, NULL), 0);
	T_EQ(d.n, 2);
	dev_is(&d, 0, 8, 16, 1459200, 314773504, 0);
	dev_is(&d, 1, 8, 0, 90430464, 299008000, 3021);
	T_EQ(d.v[1].rios, 8950);
	T_EQ(d.v[1].wios, 1252);
	T_EQ(d.v[1].dbytes, 50331648);
	/* policies' fields (iocost, iolatency, debug), a device with no
	 * counts, a disk being removed */
	kept = d.v;
	T_EQ(io("259:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6 cost.vrate=100.00 "
		"cost.usage=12 cost.wait=0 cost.indebt=0 cost.indelay=0\n"
		"7:3 \n"
		"7:4  depth=max avg_lat=0 win=0\n"
		"(unknown) rbytes=9 wbytes=9 rios=9 wios=9 dbytes=9 dios=9\n"
		"253:1 rbytes=7 wbytes=0 rios=1 wios=0 dbytes=0 dios=0 use_delay=0 delay_nsec=0\n",
		&d, NULL), 0);
	T_EQ(d.n, 4);
	T_ASSERT(d.v == kept);	/* the array is reused */
	dev_is(&d, 0, 259, 0, 1, 2, 6);
	dev_is(&d, 1, 7, 3, 0, 0, 0);
	dev_is(&d, 2, 7, 4, 0, 0, 0);
	dev_is(&d, 3, 253, 1, 7, 0, 0);
	/* the stream's last lines */
	T_EQ(io("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6\nflush_seq 12\n"
		"flush_time_usec 99\n", &d, &fl), 0);
	T_EQ(d.n, 1);
	T_EQ(fl.seq, 12);
	T_EQ(fl.time_usec, 99);
	fl = (struct cgs_flush){ 0 };
	T_EQ(io("flush_seq 1\nflush_time_usec 2\n", &d, &fl), 0);	/* no devices */
	T_EQ(d.n, 0);
	T_EQ(io("", &d, NULL), 0);
	/* no newline at the end */
	T_EQ(io("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6", &d, NULL), 0);
	dev_is(&d, 0, 8, 0, 1, 2, 6);
	/* junk */
	static const char *const bad[] = {
		"8:0 rbytes=-1\n", "8:0 rbytes=\n", "8:0 rbytes\n", "8:0 =5\n",
		"8:0 rbytes=1x\n", "8:0 wbytes=18446744073709551616\n", "sda rbytes=1\n",
		"\n", " 8:0 rbytes=1\n", "8:0 rbytes=1\n\n", "flush_seq 1\n",
		"8: rbytes=1\n", ":0 rbytes=1\n", "8:0:1 rbytes=1\n", "4294967296:0 rbytes=1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (io(bad[i], &d, NULL) != -EBADMSG)
			T_FAIL("accepted %s", bad[i]);
	T_EQ(cgs_parse_io("8:0 rbytes=1\0\n", 14, &d, NULL), -EBADMSG);
	fl = (struct cgs_flush){ 0 };
	T_EQ(io("flush_seq 1\nflush_seq 1\n", &d, &fl), -EBADMSG);
	free(d.v);
}

/* layouts: shared by members with the same keys, one more for others */
static void test_layouts(void)
{
	struct cgs_set s = { 0 };
	struct cgs_cg *a = cgs_cg_new("/a", 2), *b = cgs_cg_new("/b", 2);
	const uint64_t *values;
	uint64_t v;

	T_ASSERT(a && b);
	T_EQ(keyed(memstat, "", &s.kvs, NULL), 0);
	T_EQ(cgs_kvs_push(&s.kvs, "", "current", 7, 999), 0);
	T_EQ(keyed("low 1\noom 2\n", "events.", &s.kvs, NULL), 0);
	T_EQ(cgs_memory_store(&s, a, &s.kvs), 0);
	T_EQ(a->mem.nr, 8);
	T_ASSERT(!strcmp(a->mem.names[5], "current"));
	T_ASSERT(!strcmp(a->mem.names[7], "events.oom"));
	T_EQ(cgstream_memory_get(&a->mem, "current", &v), 0);
	T_EQ(v, 999);
	T_EQ(cgstream_memory_get(&a->mem, "events.low", &v), 0);
	T_EQ(v, 1);
	T_EQ(cgstream_memory_get(&a->mem, "swap.current", &v), -ENOENT);
	T_EQ(cgstream_memory_get(&a->mem, "events.", &v), -ENOENT);
	T_EQ(cgstream_memory_get(NULL, "x", &v), -EINVAL);
	T_EQ(cgs_memory_store(&s, b, &s.kvs), 0);
	T_ASSERT(a->mem.names == b->mem.names);	/* shared, not copied */
	values = a->mem.values;
	s.kvs.v[0].v = 1;
	T_EQ(cgs_memory_store(&s, a, &s.kvs), 0);
	T_ASSERT(a->mem.values == values);	/* reused */
	T_EQ(a->mem.values[0], 1);
	/* the root in emulation: no current, no events */
	s.kvs.n = 0;
	T_EQ(keyed(memstat, "", &s.kvs, NULL), 0);
	T_EQ(cgs_memory_store(&s, b, &s.kvs), 0);
	T_EQ(b->mem.nr, 5);
	T_ASSERT(a->mem.names != b->mem.names);
	T_ASSERT(!strcmp(a->mem.names[5], "current"));	/* the old layout stays */
	cgs_cg_free(a);
	cgs_cg_free(b);
	cgs_memio_free_set(&s);
}

int main(void)
{
	test_memory_text();
	test_io_text();
	test_layouts();
	t_log("memio: all passed");
	return 0;
}
