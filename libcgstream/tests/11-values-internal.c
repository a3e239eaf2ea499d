// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's parsers of memory's and io's text (src/parse.c, internal):
 * memory.stat / memory.stat.stream (flat-keyed, every key a value; the
 * stream's publication_seq, publication_time_usec and publications_skipped
 * apart; the previous series' flush_* keys are values like any other),
 * memory.current, memory.events with its "events." prefix, and io.stat /
 * io.stat.stream (a line per device: the six counters, policies' extra
 * fields skipped, a device without counts, "(unknown)" devices skipped,
 * the stream's two last lines).  Junk, cut lines, NUL bytes, signs,
 * overflow: -EBADMSG.  And the values kept (src/values.c, members.c):
 * cgroups with the same keys share one list of names; another list of
 * keys is a second layout; values are reused, not reallocated, from cycle
 * to cycle; a change is told (.changed) only when a value or a name
 * moved; cpu's API fields come from its names; final values are flagged.
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
	T_EQ(keyed("anon 1\nfile 2\npublication_seq 9\npublication_time_usec 123\n"
		   "publications_skipped 1\n", "", &k, &fl), 0);
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
	T_EQ(keyed("publication_seq 1\npublication_seq 2\n", "", &k, &fl), -EBADMSG);
	fl = (struct cgs_flush){ 0 };
	T_EQ(keyed("publication_seq x\n", "", &k, &fl), -EBADMSG);
	/* the previous series' keys are no stream keys: values */
	k.n = 0;
	fl = (struct cgs_flush){ 0 };
	T_EQ(keyed("anon 1\nflush_seq 4\n", "", &k, &fl), 0);
	T_EQ(k.n, 2);
	T_EQ(fl.present, 0);
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
	T_EQ(io("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6\npublication_seq 12\n"
		"publication_time_usec 99\npublications_skipped 3\n", &d, &fl), 0);
	T_EQ(d.n, 1);
	T_EQ(fl.seq, 12);
	T_EQ(fl.time_usec, 99);
	T_EQ(fl.missed, 3);
	fl = (struct cgs_flush){ 0 };
	T_EQ(io("publication_seq 1\npublication_time_usec 2\n", &d, &fl), 0);	/* no devices */
	T_EQ(d.n, 0);
	T_EQ(io("", &d, NULL), 0);
	/* no newline at the end */
	T_EQ(io("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6", &d, NULL), 0);
	dev_is(&d, 0, 8, 0, 1, 2, 6);
	/* junk */
	static const char *const bad[] = {
		"8:0 rbytes=-1\n", "8:0 rbytes=\n", "8:0 rbytes\n", "8:0 =5\n",
		"8:0 rbytes=1x\n", "8:0 wbytes=18446744073709551616\n", "sda rbytes=1\n",
		"\n", " 8:0 rbytes=1\n", "8:0 rbytes=1\n\n", "publication_seq 1\n",
		"8: rbytes=1\n", ":0 rbytes=1\n", "8:0:1 rbytes=1\n", "4294967296:0 rbytes=1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (io(bad[i], &d, NULL) != -EBADMSG)
			T_FAIL("accepted %s", bad[i]);
	T_EQ(cgs_parse_io("8:0 rbytes=1\0\n", 14, &d, NULL), -EBADMSG);
	fl = (struct cgs_flush){ 0 };
	T_EQ(io("publication_seq 1\npublication_seq 1\n", &d, &fl), -EBADMSG);
	free(d.v);
}

/* memory's parsed text (s->kvs) kept as @m's, as of publication @seq */
static int take_memory(struct cgs_set *s, struct cgs_cg *m, uint64_t seq)
{
	struct cgs_in in = { .seq = seq, .pub_present = CGSTREAM_F_SEQ };
	uint64_t vals[64];

	in.layout = cgs_layout_of_kvs(s, &cgs_memory, m->vals[CGS_MEMORY].layout, &s->kvs);
	T_ASSERT(in.layout && s->kvs.n <= 64);
	for (size_t i = 0; i < s->kvs.n; i++)
		vals[i] = s->kvs.v[i].v;
	in.values = vals;
	in.n = (uint32_t)s->kvs.n;
	return cgs_cg_take(s, m, &cgs_memory, &in);
}

/* layouts: shared by members with the same keys, one more for others */
static void test_layouts(void)
{
	struct cgs_set s = { 0 };
	struct cgs_cg *a = cgs_cg_new("/a", 2), *b = cgs_cg_new("/b", 2);
	const struct cgs_vals *av = &a->vals[CGS_MEMORY], *bv = &b->vals[CGS_MEMORY];
	const uint64_t *values;

	T_ASSERT(a && b);
	T_EQ(keyed(memstat, "", &s.kvs, NULL), 0);
	T_EQ(cgs_kvs_push(&s.kvs, "", "current", 7, 999), 0);
	T_EQ(keyed("low 1\noom 2\n", "events.", &s.kvs, NULL), 0);
	T_EQ(take_memory(&s, a, 1), 0);
	T_EQ(av->n, 8);
	T_ASSERT(!strcmp(av->layout->names[5], "current"));
	T_ASSERT(!strcmp(av->layout->names[7], "events.oom"));
	T_EQ(av->v[5], 999);
	T_EQ(a->have, CGSTREAM_CTRL_MEMORY);
	T_EQ(a->changed, CGSTREAM_CTRL_MEMORY);	/* its first values */
	T_EQ(take_memory(&s, b, 1), 0);
	T_ASSERT(av->layout == bv->layout);	/* shared, not copied */
	values = av->v;
	a->changed = 0;
	T_EQ(take_memory(&s, a, 2), 0);
	T_EQ(a->changed, 0);			/* the same values: no change */
	T_EQ(av->seq, 2);			/* as of the later publication */
	s.kvs.v[0].v = 1;
	T_EQ(take_memory(&s, a, 3), 0);
	T_EQ(a->changed, CGSTREAM_CTRL_MEMORY);
	T_ASSERT(av->v == values);		/* reused */
	T_EQ(av->v[0], 1);
	/* the root in emulation: no current, no events */
	s.kvs.n = 0;
	T_EQ(keyed(memstat, "", &s.kvs, NULL), 0);
	b->changed = 0;
	T_EQ(take_memory(&s, b, 2), 0);
	T_EQ(bv->n, 5);
	T_EQ(b->changed, CGSTREAM_CTRL_MEMORY);	/* other names: a change */
	T_ASSERT(av->layout != bv->layout);
	T_ASSERT(!strcmp(av->layout->names[5], "current"));	/* the old layout stays */
	/* the controller gone: a change, and no values */
	b->changed = 0;
	cgs_cg_lose(b, &cgs_memory);
	T_EQ(b->have, 0);
	T_EQ(b->changed, CGSTREAM_CTRL_MEMORY);
	cgs_cg_free(a);
	cgs_cg_free(b);
	cgs_values_free_set(&s);
}

/* cpu: the API's fields from the names, as the kernel's SCHEMA gives them */
static void test_cpu_names(void)
{
	static const char *const names[] = {
		"usage_usec", "user_usec", "system_usec", "nice_usec",
		"core_sched.force_idle_usec", "nr_periods", "nr_throttled", "throttled_usec",
	};
	static const char *const dup[] = { "usage_usec", "usage_usec" };
	const uint64_t vals[] = { 10, 6, 4, 0, 77, 5, 1, 300 };
	struct cgs_set s = { 0 };
	struct cgs_cg *m = cgs_cg_new("/m", 2);
	struct cgs_in in = { .values = vals, .n = 8, .seq = 9, .time_usec = 1000, .skipped = 2,
			     .pub_present = CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
					    CGSTREAM_F_FLUSH_MISSED, .final = true };

	T_ASSERT(m);
	m->id = 42;
	in.layout = cgs_layout_of_names(&s, &cgs_cpu, names, 8);
	T_ASSERT(in.layout);
	T_ASSERT(cgs_layout_of_names(&s, &cgs_cpu, names, 8) == in.layout);
	T_ASSERT(cgs_layout_of_names(&s, &cgs_memory, names, 8) != in.layout);
	T_EQ(cgs_cg_take(&s, m, &cgs_cpu, &in), 0);
	T_EQ(m->sample.usage_usec, 10);
	T_EQ(m->sample.nr_periods, 5);
	T_EQ(m->sample.throttled_usec, 300);
	T_EQ(m->sample.seq, 9);
	T_EQ(m->sample.flush_time_usec, 1000);
	T_EQ(m->sample.flush_missed, 2);
	T_EQ(m->sample.cgroup_id, 42);
	/* the kernel's without bursts: those bits absent */
	T_EQ(m->sample.present & (CGSTREAM_F_NR_BURSTS | CGSTREAM_F_BURST), 0);
	T_ASSERT(m->sample.present & CGSTREAM_F_THROTTLED);
	T_EQ(m->final, CGSTREAM_CTRL_CPU);
	/* a cgroup without the bandwidth values: fewer of the same names */
	in.n = 4;
	in.final = false;
	T_EQ(cgs_cg_take(&s, m, &cgs_cpu, &in), 0);
	T_EQ(m->sample.present & CGSTREAM_F_NR_PERIODS, 0);
	T_EQ(m->vals[CGS_CPU].n, 4);
	/* no usage_usec within the values, or a name twice: no cpu.stat */
	in.n = 0;
	T_EQ(cgs_cg_take(&s, m, &cgs_cpu, &in), -EBADMSG);
	in.layout = cgs_layout_of_names(&s, &cgs_cpu, dup, 2);
	in.n = 2;
	T_EQ(cgs_cg_take(&s, m, &cgs_cpu, &in), -EBADMSG);
	cgs_cg_free(m);
	cgs_values_free_set(&s);
}

int main(void)
{
	test_memory_text();
	test_io_text();
	test_layouts();
	test_cpu_names();
	t_log("values: all passed");
	return 0;
}
