// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pressure stall information, as the library reads it (src/parse.c,
 * src/mode.c, internal), on made-up text: a *.pressure file's lines ("some
 * avg10=1.23 avg60=... total=N") and pressure.stream's (each line after
 * its resource, then the publication's three lines) become values named
 * "<resource>.<some|full>.<key>", the averages in hundredths of a percent
 * and the totals in microseconds, in the kernel's SCHEMA order (the names
 * listed in SPEC.md, here the oracle); a resource without "full" (cpu
 * before Linux 5.13) or with "full" only (irq) has just those; a key a
 * later kernel adds is skipped, so is a resource this library does not
 * know.  Junk is -EBADMSG: a missing key, a key or a kind twice, another
 * kind, values that are not two decimals or a decimal u64, overflow,
 * blanks, NUL bytes.  Then the emulation's decoding of a member's four
 * files (irq.pressure absent: no irq values, not zeros; a bad one: the
 * member's read fails) and the stream's (its publication_seq required, an
 * unmoved one of the lead: no sample; the publication's lines alone, as
 * the kernel's pressure.stream has them where cgroup.pressure is 0: no
 * pressure, told as a change).
 */
#include "testutil.h"
#include "internal.h"

/* SPEC.md's SCHEMA names, in order (irq where the kernel has irq.pressure) */
static const char *const schema[] = {
	"cpu.some.avg10", "cpu.some.avg60", "cpu.some.avg300", "cpu.some.total",
	"cpu.full.avg10", "cpu.full.avg60", "cpu.full.avg300", "cpu.full.total",
	"memory.some.avg10", "memory.some.avg60", "memory.some.avg300", "memory.some.total",
	"memory.full.avg10", "memory.full.avg60", "memory.full.avg300", "memory.full.total",
	"io.some.avg10", "io.some.avg60", "io.some.avg300", "io.some.total",
	"io.full.avg10", "io.full.avg60", "io.full.avg300", "io.full.total",
	"irq.full.avg10", "irq.full.avg60", "irq.full.avg300", "irq.full.total",
};
#define N_SCHEMA	(sizeof(schema) / sizeof(schema[0]))

static const char cpu_text[] =
	"some avg10=1.23 avg60=45.06 avg300=100.00 total=12345\n"
	"full avg10=0.00 avg60=0.01 avg300=0.10 total=7\n";

static const char stream_text[] =
	"cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=12345\n"
	"cpu full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	"memory some avg10=2.50 avg60=0.00 avg300=0.00 total=11\n"
	"memory full avg10=1.25 avg60=0.00 avg300=0.00 total=10\n"
	"io some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	"io full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	"irq full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
	"publication_seq 7\n"
	"publication_time_usec 123456789\n"
	"publications_skipped 1\n";

static int psi(const char *text, const char *resource, struct cgs_kvs *k, struct cgs_flush *fl)
{
	k->n = 0;
	return cgs_parse_pressure(text, strlen(text), resource, k, fl);
}

/* @k's value @i is named @name and is @v */
static void kv_is(const struct cgs_kvs *k, size_t i, const char *name, uint64_t v)
{
	char got[128];

	T_ASSERT(i < k->n);
	snprintf(got, sizeof(got), "%s%.*s", k->v[i].prefix, (int)k->v[i].len, k->v[i].key);
	if (strcmp(got, name))
		T_FAIL("value %zu: %s, want %s", i, got, name);
	if (k->v[i].v != v)
		T_FAIL("%s: %llu, want %llu", name, (unsigned long long)k->v[i].v,
		       (unsigned long long)v);
}

static void test_file_text(void)
{
	struct cgs_kvs k = { 0 };

	T_EQ(psi(cpu_text, "cpu", &k, NULL), 0);
	T_EQ(k.n, 8);
	for (size_t i = 0; i < 8; i++)
		kv_is(&k, i, schema[i], k.v[i].v);
	kv_is(&k, 0, "cpu.some.avg10", 123);
	kv_is(&k, 1, "cpu.some.avg60", 4506);
	kv_is(&k, 2, "cpu.some.avg300", 10000);
	kv_is(&k, 3, "cpu.some.total", 12345);
	kv_is(&k, 5, "cpu.full.avg60", 1);
	kv_is(&k, 6, "cpu.full.avg300", 10);
	kv_is(&k, 7, "cpu.full.total", 7);
	/* irq: full only */
	T_EQ(psi("full avg10=0.50 avg60=0.00 avg300=0.00 total=3", "irq", &k, NULL), 0);
	T_EQ(k.n, 4);
	kv_is(&k, 0, "irq.full.avg10", 50);
	kv_is(&k, 3, "irq.full.total", 3);
	/* a resource without "full" (cpu.pressure before 5.13): its some values only */
	T_EQ(psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", "cpu", &k, NULL), 0);
	T_EQ(k.n, 4);
	kv_is(&k, 3, "cpu.some.total", 5);
	/* keys in another order: the values in the table's */
	T_EQ(psi("some total=9 avg300=0.03 avg60=0.02 avg10=0.01\n", "io", &k, NULL), 0);
	kv_is(&k, 0, "io.some.avg10", 1);
	kv_is(&k, 2, "io.some.avg300", 3);
	kv_is(&k, 3, "io.some.total", 9);
	/* a key a later kernel adds: skipped */
	T_EQ(psi("some avg10=0.00 avg60=0.00 avg300=0.00 avg900=0.00 total=1 extra=x\n", "memory",
		 &k, NULL), 0);
	T_EQ(k.n, 4);
	kv_is(&k, 3, "memory.some.total", 1);
	/* the extremes */
	T_EQ(psi("some avg10=184467440737095516.15 avg60=0.00 avg300=0.00 "
		 "total=18446744073709551615\n", "cpu", &k, NULL), 0);
	kv_is(&k, 0, "cpu.some.avg10", UINT64_MAX);
	kv_is(&k, 3, "cpu.some.total", UINT64_MAX);
	T_EQ(psi("", "cpu", &k, NULL), 0);
	T_EQ(k.n, 0);
	T_EQ(psi(cpu_text, "gpu", &k, NULL), -EINVAL);	/* a file of no resource we know */
	free(k.v);
	t_log("ok: a *.pressure file's text");
}

static void test_stream_text(void)
{
	struct cgs_kvs k = { 0 };
	struct cgs_flush fl = { 0 };

	T_EQ(psi(stream_text, NULL, &k, &fl), 0);
	T_EQ(k.n, N_SCHEMA);
	for (size_t i = 0; i < N_SCHEMA; i++)
		kv_is(&k, i, schema[i], k.v[i].v);
	kv_is(&k, 3, "cpu.some.total", 12345);
	kv_is(&k, 8, "memory.some.avg10", 250);
	kv_is(&k, 12, "memory.full.avg10", 125);
	kv_is(&k, 27, "irq.full.total", 99);
	T_EQ(fl.seq, 7);
	T_EQ(fl.time_usec, 123456789);
	T_EQ(fl.missed, 1);
	T_EQ(fl.present, CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME | CGSTREAM_F_FLUSH_MISSED);
	/* a resource this library does not know: checked, skipped */
	fl = (struct cgs_flush){ 0 };
	T_EQ(psi("gpu_0 some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"
		 "cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=2\npublication_seq 1\n", NULL,
		 &k, &fl), 0);
	T_EQ(k.n, 4);
	kv_is(&k, 3, "cpu.some.total", 2);
	T_EQ(psi("gpu some avg10=junk\n", NULL, &k, NULL), -EBADMSG);
	free(k.v);
	t_log("ok: pressure.stream's text");
}

static void test_junk(void)
{
	static const char *const bad_file[] = {
		/* missing keys */
		"some avg10=0.00 avg60=0.00 total=0\n", "some avg10=0.00 avg60=0.00 avg300=0.00\n",
		"some\n", "some \n", "full total=1\n",
		/* another kind, junk */
		"partial avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"Some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10 avg60=0.00 avg300=0.00 total=0\n",
		"some =1 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10= avg60=0.00 avg300=0.00 total=0\n",
		/* values: not two decimals, signed, not decimal, overflow */
		"some avg10=1.2 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=1 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=1.234 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=+1.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=1,00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=1.0x avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=1.00\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0x10\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n",
		"some avg10=184467440737095516.16 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=999999999999999999999.00 avg60=0.00 avg300=0.00 total=0\n",
		/* twice: a key, a kind */
		"some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		/* blanks */
		"\n", " some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some  avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 \n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n\n",
		"some\tavg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	};
	static const char *const bad_stream[] = {
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",	/* no resource */
		"Cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"cpu-1 some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"cpu\n", "cpu \n",
		"cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		"cpu some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
		"cpu some avg10=0.00 avg60=0.00 total=0\n",
		"publication_seq x\n", "publication_seq 1\npublication_seq 1\n",
	};
	struct cgs_kvs k = { 0 };
	struct cgs_flush fl;

	for (size_t i = 0; i < sizeof(bad_file) / sizeof(bad_file[0]); i++)
		if (psi(bad_file[i], "cpu", &k, NULL) != -EBADMSG)
			T_FAIL("accepted as cpu.pressure: %s", bad_file[i]);
	for (size_t i = 0; i < sizeof(bad_stream) / sizeof(bad_stream[0]); i++) {
		fl = (struct cgs_flush){ 0 };
		if (psi(bad_stream[i], NULL, &k, &fl) != -EBADMSG)
			T_FAIL("accepted as pressure.stream: %s", bad_stream[i]);
	}
	T_EQ(cgs_parse_pressure("some avg10=0.00\0 avg60=0.00 avg300=0.00 total=0\n", 48, "cpu",
				&k, NULL), -EBADMSG);
	/* without @fl the stream's own lines are no resource's */
	T_EQ(psi("publication_seq 1\n", NULL, &k, NULL), -EBADMSG);
	free(k.v);
	t_log("ok: junk is -EBADMSG");
}

/* what the set's reads told of a failed member */
static int failed_err;

static void record_failed(struct cgs_set *s, struct cgs_cg *m, int err)
{
	(void)s;
	(void)m;
	failed_err = err;
}

static const struct cgs_set_ops ops = { .failed = record_failed };

static struct cgs_text text_of(const char *t)
{
	return (struct cgs_text){ t, (ssize_t)strlen(t), CGS_READ_BUF };
}

/* the emulation's reads of a member's *.pressure files, decoded */
static void test_emulation_decode(void)
{
	struct cgs_set s = { .ops = &ops, .lead = &cgs_cpu, .cycle = 1 };
	struct cgs_cg *m = cgs_cg_new("/m", 2);
	struct cgs_text t[CGS_NR_FILES] = { { 0 } };
	struct cgs_flush own = { 5, 1000, 0, CGSTREAM_F_SEQ | CGSTREAM_F_FLUSH_TIME |
					     CGSTREAM_F_FLUSH_MISSED };
	const struct cgs_vals *v = &m->vals[CGS_PRESSURE];
	struct cgstream_event ev = { 0 };
	struct cgs_ev e = { .cg = m, .type = CGSTREAM_EVENT_SAMPLE };
	uint64_t x;

	T_ASSERT(m);
	T_EQ(cgs_set_link(&s, m), 0);
	t[CGS_FILE_PSI_CPU] = text_of(cpu_text);
	t[CGS_FILE_PSI_MEMORY] = text_of("some avg10=0.00 avg60=0.00 avg300=0.00 total=4\n"
					 "full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
	t[CGS_FILE_PSI_IO] = text_of("some avg10=0.00 avg60=0.00 avg300=0.00 total=2\n"
				     "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
	/* irq.pressure absent: no irq values (not zeros) */
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, &own), 0);
	T_EQ(m->have, CGSTREAM_CTRL_PRESSURE);
	T_EQ(v->n, 24);
	for (size_t i = 0; i < 24; i++)
		T_ASSERT(!strcmp(v->layout->names[i], schema[i]));
	T_EQ(v->seq, 5);
	cgs_event_values(&s, &e, &ev);
	T_EQ(ev.controllers, CGSTREAM_CTRL_PRESSURE);
	T_ASSERT(ev.pressure && !ev.cpu && !ev.memory && !ev.io);
	T_EQ(ev.pressure->nr, 24);
	T_EQ(ev.pressure->seq, 5);
	T_EQ(cgstream_values_get(ev.pressure, "cpu.some.avg10", &x), 0);
	T_EQ(x, 123);
	T_EQ(cgstream_values_get(ev.pressure, "memory.full.total", &x), 0);
	T_EQ(x, 3);
	T_EQ(cgstream_values_get(ev.pressure, "irq.full.total", &x), -ENOENT);
	/* with irq.pressure: its four values at the end */
	t[CGS_FILE_PSI_IRQ] = text_of("full avg10=0.00 avg60=0.00 avg300=0.00 total=8\n");
	m->changed = 0;
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, &own), 0);
	T_EQ(v->n, N_SCHEMA);
	T_EQ(m->changed, CGSTREAM_CTRL_PRESSURE);
	/* the same again: no change */
	m->changed = 0;
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, &own), 0);
	T_EQ(m->changed, 0);
	/* a bad file: the read fails, told to the owner */
	t[CGS_FILE_PSI_IO] = text_of("some avg10=1 avg60=0.00 avg300=0.00 total=2\n");
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, &own), -EBADMSG);
	T_EQ(failed_err, -EBADMSG);
	/* no cpu.pressure (its pressure off): no values this cycle, no error */
	failed_err = 0;
	t[CGS_FILE_PSI_CPU] = (struct cgs_text){ 0 };
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, &own), 0);
	T_EQ(failed_err, 0);
	cgs_set_free_members(&s);
	cgs_values_free_set(&s);
	t_log("ok: the emulation's files of a member, decoded");
}

/* KERNEL mode: pressure.stream's text, the lead's publication */
static void test_stream_decode(void)
{
	struct cgs_set s = { .ops = &ops, .lead = &cgs_pressure, .cycle = 1 };
	struct cgs_cg *m = cgs_cg_new("/m", 2);
	struct cgs_text t[CGS_NR_FILES] = { { 0 } };
	const struct cgs_vals *v = &m->vals[CGS_PRESSURE];

	T_ASSERT(m);
	T_EQ(cgs_set_link(&s, m), 0);
	t[CGS_FILE_PSI_CPU] = text_of(stream_text);
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, NULL), 0);
	T_EQ(v->n, N_SCHEMA);
	T_EQ(v->seq, 7);
	T_EQ(v->time_usec, 123456789);
	T_EQ(v->skipped, 1);
	/* the lead's publication did not move: no sample this cycle */
	s.cycle++;
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, NULL), 1);
	T_EQ(m->skip_cycle, s.cycle);
	/* cgroup.pressure 0: the publication alone, no values: none, a change */
	s.cycle++;
	m->changed = 0;
	t[CGS_FILE_PSI_CPU] = text_of("publication_seq 9\npublication_time_usec 2\n"
				      "publications_skipped 0\n");
	T_EQ(m->have, CGSTREAM_CTRL_PRESSURE);
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, NULL), 0);
	T_EQ(m->have, 0);
	T_EQ(m->changed, CGSTREAM_CTRL_PRESSURE);
	/* a stream without publication_seq is no stream */
	t[CGS_FILE_PSI_CPU] = text_of(cpu_text);
	T_EQ(cgs_mode_decode_text(&s, m, &cgs_pressure, t, NULL), -EBADMSG);
	cgs_set_free_members(&s);
	cgs_values_free_set(&s);
	t_log("ok: pressure.stream, decoded");
}

int main(void)
{
	test_file_text();
	test_stream_text();
	test_junk();
	test_emulation_decode();
	test_stream_decode();
	t_log("pressure: all passed");
	return 0;
}
