// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one printer of cgstream watch: JSON lines, plain lines and the live
 * table, for a group and for trees alike (see format.h), and the numbers
 * behind cgstream top's table (FMT_NONE, top.c draws).  A cgroup's state
 * (its last printed sample) is keyed by its id: a cgroup made again under
 * the same path starts afresh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"

const struct fmt_psi_column fmt_psi_columns[FMT_PSI_NR] = {
	[FMT_PSI_CPU_SOME] = { "CPU-SOME", "cpu-some", "cpu.some.total" },
	[FMT_PSI_MEM_SOME] = { "MEM-SOME", "mem-some", "memory.some.total" },
	[FMT_PSI_MEM_FULL] = { "MEM-FULL", "mem-full", "memory.full.total" },
	[FMT_PSI_IO_SOME] = { "IO-SOME", "io-some", "io.some.total" },
	[FMT_PSI_IO_FULL] = { "IO-FULL", "io-full", "io.full.total" },
};

int fmt_init(struct fmt *f, FILE *out, enum fmt_style style, uint64_t every, bool parents,
	     uint32_t controllers, const char *mount)
{
	*f = (struct fmt){ .out = out, .style = style, .every = every, .parents = parents,
			   .controllers = controllers, .mount = mount };
	return 0;
}

void fmt_src_modes(struct fmt_src *src, int mode, int (*ctrl_mode)(const void *, unsigned int),
		   const void *obj)
{
	src->controllers = 0;
	src->mode = cgstream_mode_name(mode);
	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		unsigned int k = cli_ctrl_index(b);
		int m = ctrl_mode(obj, b);

		src->modes[k] = m > 0 ? m : 0;
		src->ctrl_mode[k] = m > 0 ? cgstream_mode_name(m) : NULL;
		if (m > 0)
			src->controllers |= b;
	}
}

/* @path as every output shows it (cgstream_shown_path()), in f->shown */
static const char *fmt_path(struct fmt *f, const char *path)
{
	if (cgstream_shown_path(path, f->mount, f->shown, sizeof(f->shown)) < 0)
		return "?";	/* longer than any path the library hands out */
	return f->shown;
}

static struct fmt_cg *fmt_find(struct fmt *f, uint64_t id)
{
	return cli_ids_find(&f->by_id, id);
}

static void fmt_cg_free(void *p)
{
	struct fmt_cg *c = p;

	free(c->path);
	free(c->shown);
	free(c);
}

static void fmt_forget(struct fmt *f, struct fmt_cg *c)
{
	cli_ids_del(&f->by_id, c);
	fmt_cg_free(c);
}

void fmt_fini(struct fmt *f)
{
	cli_ids_free(&f->by_id, fmt_cg_free);
}

static struct fmt_cg *fmt_get(struct fmt *f, const struct cgstream_event *ev)
{
	struct fmt_cg *c = fmt_find(f, ev->sample.cgroup_id);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = ev->sample.cgroup_id;
	c->path = strdup(ev->path);
	c->shown = strdup(fmt_path(f, ev->path));
	if (!c->path || !c->shown || cli_ids_add(&f->by_id, c) < 0) {
		fmt_cg_free(c);
		return NULL;
	}
	return c;
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* {"cgroup": ..., "cgroup_id": N[, "parent_id": N]: the path as shown,
 * a JSON string of it */
static void json_head(struct fmt *f, const struct cgstream_event *ev)
{
	fputs("{\"cgroup\": ", f->out);
	json_string(f->out, fmt_path(f, ev->path));
	fprintf(f->out, ", \"cgroup_id\": %llu", (unsigned long long)ev->sample.cgroup_id);
	if (f->parents)
		fprintf(f->out, ", \"parent_id\": %llu", (unsigned long long)ev->parent_id);
}

/*
 * A sample's fields in the line, in the library's order and names
 * (cgstream_sample_field()): all but the cgroup's id (in the line's head)
 * and flush_missed (a count of the stream's, not of the cgroup's).
 */
static void json_fields(FILE *out, const struct cgstream_sample *s)
{
	struct cgstream_field_info fi;

	for (unsigned int i = 0; cgstream_sample_field(i, &fi, sizeof(fi)) == 0; i++) {
		uint64_t v;

		if (fi.bit == CGSTREAM_F_CGROUP_ID || fi.bit == CGSTREAM_F_FLUSH_MISSED)
			continue;
		fprintf(out, ", \"%s\": ", fi.name);
		memcpy(&v, (const char *)s + fi.offset, sizeof(v));
		if (s->present & fi.bit)
			fprintf(out, "%llu", (unsigned long long)v);
		else
			fputs("null", out);
	}
}

/* a name of the library's sample fields (their keys: the kernel's names) */
static bool sample_key(const char *name)
{
	struct cgstream_field_info fi;

	for (unsigned int i = 0; cgstream_sample_field(i, &fi, sizeof(fi)) == 0; i++)
		if (fi.key && !strcmp(fi.key, name))
			return true;
	return false;
}

/* cpu's values the kernel names that struct cgstream_sample has no field
 * for ("core_sched.force_idle_usec"), by their names */
static void json_cpu_others(FILE *out, const struct cgstream_values *cpu)
{
	for (uint32_t i = 0; cpu && i < cpu->nr; i++) {
		if (sample_key(cpu->names[i]))
			continue;
		fputs(", ", out);
		json_string(out, cpu->names[i]);
		fprintf(out, ": %llu", (unsigned long long)cpu->values[i]);
	}
}

/* ", "@key": ["cpu", "memory"]": the controllers of @mask */
static void json_ctrls(FILE *out, const char *key, uint32_t mask)
{
	const char *sep = "";

	fprintf(out, ", \"%s\": [", key);
	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		if (!(mask & b))
			continue;
		fprintf(out, "%s\"%s\"", sep, cli_ctrl(b));
		sep = ", ";
	}
	fputc(']', out);
}

static double pct(uint64_t a, uint64_t b, uint64_t dt)
{
	return b >= a ? 100.0 * (double)(b - a) / (double)dt : 0.0;
}

const char *fmt_bytes(char *buf, size_t size, double bytes)
{
	static const char units[] = "BKMGTPE";
	size_t u = 0;

	while (bytes >= 1000.0 && u + 1 < sizeof(units) - 1) {
		bytes /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%.0fB", bytes);
	else if (bytes < 9.995)
		snprintf(buf, size, "%.2f%c", bytes, units[u]);
	else if (bytes < 99.95)
		snprintf(buf, size, "%.1f%c", bytes, units[u]);
	else
		snprintf(buf, size, "%.0f%c", bytes, units[u]);
	return buf;
}

uint64_t fmt_event_seq(const struct cgstream_event *ev)
{
	if (ev->controllers & CGSTREAM_CTRL_CPU)
		return ev->sample.seq;
	if ((ev->controllers & CGSTREAM_CTRL_MEMORY) && ev->memory)
		return ev->memory->seq;
	if ((ev->controllers & CGSTREAM_CTRL_IO) && ev->io)
		return ev->io->seq;
	if ((ev->controllers & CGSTREAM_CTRL_PRESSURE) && ev->pressure)
		return ev->pressure->seq;
	return ev->sample.seq;
}

static const struct cgstream_memory *ev_memory(const struct cgstream_event *ev)
{
	return ev->controllers & CGSTREAM_CTRL_MEMORY ? ev->memory : NULL;
}

static const struct cgstream_io *ev_io(const struct cgstream_event *ev)
{
	return ev->controllers & CGSTREAM_CTRL_IO ? ev->io : NULL;
}

static const struct cgstream_values *ev_pressure(const struct cgstream_event *ev)
{
	return ev->controllers & CGSTREAM_CTRL_PRESSURE ? ev->pressure : NULL;
}

/* ", "@key": {"anon": N, ...}": every value, by the names the library gives */
static void json_named(FILE *out, const char *key, uint32_t nr, const char *const *names,
		       const uint64_t *values)
{
	fprintf(out, ", \"%s\": {", key);
	for (uint32_t i = 0; i < nr; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, names[i]);
		fprintf(out, ": %llu", (unsigned long long)values[i]);
	}
	fputc('}', out);
}

/*
 * "io": [{"major": 7, "minor": 0, "rbytes": N, ...}, ...]: as io.stat lists
 * them, each device's counters as the library names them (cgstream_io_field())
 */
static void json_io(FILE *out, const struct cgstream_io *io)
{
	fputs(", \"io\": [", out);
	for (uint32_t i = 0; i < io->nr_devices; i++) {
		const struct cgstream_io_device *d = &io->devices[i];

		fprintf(out, "%s{\"major\": %u, \"minor\": %u", i ? ", " : "", d->major, d->minor);
		/* each value by the name the kernel (or io.stat) gives it */
		for (uint32_t k = 0; k < io->nr_values; k++) {
			fputs(", ", out);
			json_string(out, io->names[k]);
			fprintf(out, ": %llu",
				(unsigned long long)io->values[(size_t)i * io->nr_values + k]);
		}
		fputc('}', out);
	}
	fputc(']', out);
}

/*
 * "<ctrl>_mode", "<ctrl>_seq", "<ctrl>_flush_time_usec": a controller
 * other than cpu (whose keys are the sample's own, unprefixed); null, and
 * "<ctrl>": null, where this cgroup has none of its values.  True when
 * the caller is to print "<ctrl>".
 */
static bool json_ctrl_head(FILE *out, const char *ctrl, const char *mode, bool have, uint64_t seq,
			   uint64_t time)
{
	fprintf(out, ", \"%s_mode\": \"%s\"", ctrl, mode ? mode : "");
	if (have)
		fprintf(out, ", \"%s_seq\": %llu, \"%s_flush_time_usec\": %llu", ctrl,
			(unsigned long long)seq, ctrl, (unsigned long long)time);
	else
		fprintf(out, ", \"%s_seq\": null, \"%s_flush_time_usec\": null, \"%s\": null", ctrl,
			ctrl, ctrl);
	return have;
}

/* the values of every controller @src reads (null where @ev has none) */
static void json_values(struct fmt *f, const struct fmt_cg *c, const struct cgstream_event *ev,
			const struct fmt_src *src)
{
	const struct cgstream_memory *m = ev_memory(ev);
	const struct cgstream_io *io = ev_io(ev);
	const struct cgstream_values *p = ev_pressure(ev);
	FILE *out = f->out;

	if (src->controllers & CGSTREAM_CTRL_CPU) {
		json_fields(out, &ev->sample);
		json_cpu_others(out, ev->controllers & CGSTREAM_CTRL_CPU ? ev->cpu : NULL);
		if (c && c->have_delta)
			fprintf(out, ", \"cpu_percent\": %.2f", c->cpu);
		else
			fputs(", \"cpu_percent\": null", out);
	}
	fprintf(out, ", \"mode\": \"%s\"", src->mode);
	if ((src->controllers & CGSTREAM_CTRL_MEMORY) &&
	    json_ctrl_head(out, "memory", src->ctrl_mode[cli_ctrl_index(CGSTREAM_CTRL_MEMORY)], m,
			   m ? m->seq : 0,
			   m ? m->flush_time_usec : 0))
		json_named(out, "memory", m->nr, m->names, m->values);
	if ((src->controllers & CGSTREAM_CTRL_IO) &&
	    json_ctrl_head(out, "io", src->ctrl_mode[cli_ctrl_index(CGSTREAM_CTRL_IO)], io,
			   io ? io->seq : 0,
			   io ? io->flush_time_usec : 0))
		json_io(out, io);
	if ((src->controllers & CGSTREAM_CTRL_PRESSURE) &&
	    json_ctrl_head(out, "pressure", src->ctrl_mode[cli_ctrl_index(CGSTREAM_CTRL_PRESSURE)],
			   p, p ? p->seq : 0, p ? p->time_usec : 0))
		json_named(out, "pressure", p->nr, p->names, p->values);
}

static void fmt_json_sample(struct fmt *f, const struct fmt_cg *c,
			    const struct cgstream_event *ev, const struct fmt_src *src)
{
	json_head(f, ev);
	if (ev->type == CGSTREAM_EVENT_CHANGED)
		fputs(", \"event\": \"changed\"", f->out);
	json_ctrls(f->out, "changed", ev->changed);
	json_values(f, c, ev, src);
	fputs("}\n", f->out);
}

/* "pressure cpu-some 1.2%, mem-some 0.0%, ...": the columns the cgroup has
 * (the first sample: "pressure: first sample") */
static void fmt_line_pressure(const struct fmt *f, const struct fmt_cg *c, const char *sep)
{
	const char *comma = " ";
	double pct;

	fprintf(f->out, "%spressure", sep);
	if (!c->psi_ok) {
		fputs(": first sample", f->out);
		return;
	}
	for (unsigned int k = 0; k < FMT_PSI_NR; k++) {
		if (!fmt_psi(c, k, &pct))
			continue;
		fprintf(f->out, "%s%s %.1f%%", comma, fmt_psi_columns[k].name, pct);
		comma = ", ";
	}
}

/* "; memory 1.20G (anon 1.00G, file 200M); io read 1.20M/s, write 0B/s;
 * pressure cpu-some 0.5%, ..." */
static void fmt_line_others(const struct fmt *f, const struct fmt_cg *c, const struct fmt_src *src,
			    const char *sep)
{
	char a[16], b[16], d[16];

	if ((src->controllers & CGSTREAM_CTRL_MEMORY) && c->have_mem) {
		fputs(sep, f->out);
		sep = "; ";
		if (c->mem_has_current)
			fprintf(f->out, "memory %s (anon %s, file %s)",
				fmt_bytes(a, sizeof(a), (double)c->mem_current),
				fmt_bytes(b, sizeof(b), (double)c->mem_anon),
				fmt_bytes(d, sizeof(d), (double)c->mem_file));
		else
			fprintf(f->out, "memory anon %s, file %s",
				fmt_bytes(b, sizeof(b), (double)c->mem_anon),
				fmt_bytes(d, sizeof(d), (double)c->mem_file));
	}
	if ((src->controllers & CGSTREAM_CTRL_IO) && c->have_io) {
		fputs(sep, f->out);
		sep = "; ";
		if (c->have_io_delta)
			fprintf(f->out, "io read %s/s, write %s/s", fmt_bytes(a, sizeof(a), c->io_rbps),
				fmt_bytes(b, sizeof(b), c->io_wbps));
		else
			fprintf(f->out, "io %s read, %s written so far",
				fmt_bytes(a, sizeof(a), (double)c->io_rbytes),
				fmt_bytes(b, sizeof(b), (double)c->io_wbytes));
	}
	if ((src->controllers & CGSTREAM_CTRL_PRESSURE) && c->have_psi)
		fmt_line_pressure(f, c, sep);
}

static void fmt_line_sample(const struct fmt *f, const struct fmt_cg *c,
			    const struct cgstream_event *ev, const struct fmt_src *src)
{
	const struct cgstream_sample *s = &ev->sample;

	fprintf(f->out, "seq %llu %s: ", (unsigned long long)fmt_event_seq(ev), c->shown);
	if (!(src->controllers & CGSTREAM_CTRL_CPU)) {
		fmt_line_others(f, c, src, "");
		fputc('\n', f->out);
		return;
	}
	if (!c->have_delta) {
		fprintf(f->out, "first sample, %.3f s of CPU so far", (double)s->usage_usec / 1e6);
	} else {
		fprintf(f->out, "cpu %.1f%% (user %.1f%%, system %.1f%%)", c->cpu, c->user, c->sys);
		if (c->has_thr)
			fprintf(f->out, ", throttled %llu times for %.1f ms",
				(unsigned long long)c->thr_n, (double)c->thr_usec / 1000.0);
	}
	fmt_line_others(f, c, src, "; ");
	fputc('\n', f->out);
}

/* the io devices' bytes, summed */
static void io_sums(const struct cgstream_io *io, uint64_t *r, uint64_t *w)
{
	*r = *w = 0;
	for (uint32_t i = 0; i < io->nr_devices; i++) {
		*r += io->devices[i].rbytes;
		*w += io->devices[i].wbytes;
	}
}

/*
 * Since the last printed sample (or the base): CPU% and throttling.  With
 * changes only, a cgroup without a sample in its source's last batch had
 * the same values then: the time from @floor (that batch's) is when they
 * moved.
 */
static void cpu_numbers(struct fmt_cg *c, const struct cgstream_event *ev, uint64_t floor)
{
	const struct cgstream_sample *s = &ev->sample, *p = &c->prev;
	uint64_t dt, from = p->flush_time_usec > floor ? p->flush_time_usec : floor;

	c->have_delta = (ev->controllers & CGSTREAM_CTRL_CPU) && c->have_prev &&
			(p->present & CGSTREAM_F_USAGE) && s->flush_time_usec > from;
	if (!c->have_delta)
		return;
	dt = s->flush_time_usec - from;
	c->cpu = pct(p->usage_usec, s->usage_usec, dt);
	c->user = pct(p->user_usec, s->user_usec, dt);
	c->sys = pct(p->system_usec, s->system_usec, dt);
	c->has_thr = (s->present & p->present & CGSTREAM_F_NR_PERIODS) &&
		     (s->present & p->present & CGSTREAM_F_NR_THROTTLED) &&
		     (s->present & p->present & CGSTREAM_F_THROTTLED);
	c->thr_periods = c->has_thr && s->nr_periods >= p->nr_periods ?
			 s->nr_periods - p->nr_periods : 0;
	c->thr_n = c->has_thr && s->nr_throttled >= p->nr_throttled ?
		   s->nr_throttled - p->nr_throttled : 0;
	c->thr_usec = c->has_thr && s->throttled_usec >= p->throttled_usec ?
		      s->throttled_usec - p->throttled_usec : 0;
}

/*
 * io rates since the last printed sample.  Each controller's values are as
 * of its own latest flush: a cycle (begun by the lead controller's flush)
 * may find io's flush the one it already had; the rate over io's last two
 * flushes then still holds.
 */
static void io_numbers(struct fmt_cg *c, const struct cgstream_io *io, uint64_t floor)
{
	uint64_t r, w, from = c->io_time > floor ? c->io_time : floor;

	if (!io) {
		c->have_io = c->have_io_delta = false;
		return;
	}
	if (c->have_io && io->flush_time_usec == c->io_time)
		return;
	io_sums(io, &r, &w);
	c->have_io_delta = c->have_io && io->flush_time_usec > from;
	if (c->have_io_delta) {
		double dt = (double)(io->flush_time_usec - from) / 1e6;

		/* a device gone makes the sum shrink: no negative rates */
		c->io_rbps = r >= c->io_rbytes ? (double)(r - c->io_rbytes) / dt : 0.0;
		c->io_wbps = w >= c->io_wbytes ? (double)(w - c->io_wbytes) / dt : 0.0;
	}
	c->io_rbytes = r;
	c->io_wbytes = w;
	c->io_time = io->flush_time_usec;
	c->have_io = true;
}

/*
 * Pressure since the last printed sample, as io's rates: each column's
 * share of the time between pressure's publications, from its total's
 * delta (a total in usec; 0 when it went backwards, at most 100).
 */
static void psi_numbers(struct fmt_cg *c, const struct cgstream_values *p, uint64_t floor)
{
	uint64_t from = c->psi_time > floor ? c->psi_time : floor, t[FMT_PSI_NR];
	uint32_t has = 0;

	if (!p) {
		c->have_psi = false;
		c->psi_ok = 0;
		return;
	}
	if (c->have_psi && p->time_usec == c->psi_time)
		return;
	for (unsigned int k = 0; k < FMT_PSI_NR; k++)
		if (cgstream_values_get(p, fmt_psi_columns[k].total, &t[k]) == 0)
			has |= 1u << k;
	c->psi_ok = c->have_psi && p->time_usec > from ? has & c->psi_has : 0;
	for (unsigned int k = 0; k < FMT_PSI_NR; k++) {
		if (c->psi_ok & (1u << k)) {
			double share = pct(c->psi_total[k], t[k], p->time_usec - from);

			c->psi_pct[k] = share > 100.0 ? 100.0 : share;
		}
		if (has & (1u << k))
			c->psi_total[k] = t[k];
	}
	c->psi_has = has;
	c->psi_time = p->time_usec;
	c->have_psi = true;
}

/* memory as it is now; io rates; pressure */
static void other_numbers(struct fmt_cg *c, const struct cgstream_event *ev, uint64_t floor)
{
	const struct cgstream_memory *m = ev_memory(ev);

	c->have_mem = m != NULL;
	if (m) {
		c->mem_has_current = cgstream_memory_get(m, "current", &c->mem_current) == 0;
		if (cgstream_memory_get(m, "anon", &c->mem_anon) < 0)
			c->mem_anon = 0;
		if (cgstream_memory_get(m, "file", &c->mem_file) < 0)
			c->mem_file = 0;
	}
	io_numbers(c, ev_io(ev), floor);
	psi_numbers(c, ev_pressure(ev), floor);
}

/* the base of the next numbers: this sample */
static void take_base(struct fmt_cg *c, const struct cgstream_event *ev)
{
	if (ev->controllers & CGSTREAM_CTRL_CPU)
		c->prev = ev->sample;
	else
		c->prev.present = 0;
	c->have_prev = true;
}

/* the lead controller's publication time of an event's values */
static uint64_t fmt_event_time(const struct cgstream_event *ev)
{
	if (ev->controllers & CGSTREAM_CTRL_CPU)
		return ev->sample.flush_time_usec;
	if ((ev->controllers & CGSTREAM_CTRL_MEMORY) && ev->memory)
		return ev->memory->flush_time_usec;
	if ((ev->controllers & CGSTREAM_CTRL_IO) && ev->io)
		return ev->io->flush_time_usec;
	if ((ev->controllers & CGSTREAM_CTRL_PRESSURE) && ev->pressure)
		return ev->pressure->time_usec;
	return 0;
}

/* the base time of @c's rates: its source's last batch, when it had no
 * sample there with changes only (its values were as they are then) */
static uint64_t rate_floor(const struct fmt_cg *c, const struct fmt_src *src)
{
	return src->changes && c->have_prev && c->last_batch + 1 < src->batches ? src->prev_time : 0;
}

static bool fmt_sample(struct fmt *f, const struct cgstream_event *ev, struct fmt_src *src)
{
	struct fmt_cg *c = fmt_get(f, ev);
	uint64_t floor, t = fmt_event_time(ev);

	if (t > src->cur_time)
		src->cur_time = t;
	if (!c)
		return false;	/* no memory: this one is not shown */
	floor = f->every > 1 ? 0 : rate_floor(c, src);
	c->last_batch = src->batches;
	if (f->every > 1) {
		uint64_t window = fmt_event_seq(ev) / f->every;

		if (!c->have_prev) {
			/* the base of the first printed CPU% and io rates */
			take_base(c, ev);
			other_numbers(c, ev, 0);
			c->window = window;
			return false;
		}
		/* by window, not seq % N: a missed cycle must not skip one */
		if (window <= c->window)
			return false;
		c->window = window;
	}

	cpu_numbers(c, ev, floor);
	other_numbers(c, ev, floor);
	if (f->style == FMT_JSON)
		fmt_json_sample(f, c, ev, src);
	else if (f->style == FMT_LINES)
		fmt_line_sample(f, c, ev, src);
	take_base(c, ev);
	return true;
}

/* "/path: removed, final usage 12.345 s" (or its last read values) */
static void fmt_line_removed(struct fmt *f, const struct cgstream_event *ev)
{
	fprintf(f->out, "%s: removed", fmt_path(f, ev->path));
	if (ev->controllers & CGSTREAM_CTRL_CPU)
		fprintf(f->out, ", %s %.3f s of CPU", ev->final & CGSTREAM_CTRL_CPU ?
			"final:" : "last read:", (double)ev->sample.usage_usec / 1e6);
	fputc('\n', f->out);
}

/* REMOVED: printed with its values; a table keeps its row one table more */
static void fmt_removed(struct fmt *f, const struct cgstream_event *ev, struct fmt_src *src)
{
	struct fmt_cg *c = fmt_find(f, ev->sample.cgroup_id);

	if (f->style == FMT_JSON) {
		json_head(f, ev);
		fputs(", \"event\": \"removed\"", f->out);
		json_ctrls(f->out, "final", ev->final);
		json_values(f, NULL, ev, src);
		fputs("}\n", f->out);
	} else if (f->style == FMT_LINES) {
		fmt_line_removed(f, ev);
	}
	if (c && (f->style == FMT_TABLE || f->style == FMT_NONE)) {
		/* its last numbers, up to its final values where it has them */
		if (ev->controllers)
			cpu_numbers(c, ev, rate_floor(c, src));
		c->removed = true;
		c->removed_batch = f->tables;
	} else if (c) {
		fmt_forget(f, c);
	}
}

static void fmt_change(struct fmt *f, const struct cgstream_event *ev)
{
	static const char *const names[] = {
		[CGSTREAM_EVENT_ERROR] = "error",
		[CGSTREAM_EVENT_ADDED] = "added",
	};
	const char *what = names[ev->type];
	struct fmt_cg *c;

	if (ev->type == CGSTREAM_EVENT_ERROR && f->style != FMT_NONE)
		fprintf(stderr, "cgstream: %s: %s\n", fmt_path(f, ev->path), strerror(-ev->error));
	if (f->style == FMT_JSON) {
		json_head(f, ev);
		fprintf(f->out, ", \"event\": \"%s\"", what);
		if (ev->type == CGSTREAM_EVENT_ERROR)
			fprintf(f->out, ", \"error\": \"%s\"", strerror(-ev->error));
		fputs("}\n", f->out);
	} else if (f->style == FMT_LINES) {
		fprintf(f->out, "%s: %s\n", fmt_path(f, ev->path), what);
	}
	/* (error) starting afresh when it can be read again */
	c = ev->type == CGSTREAM_EVENT_ERROR ? fmt_find(f, ev->sample.cgroup_id) : NULL;
	if (c)
		fmt_forget(f, c);
}

bool fmt_event(struct fmt *f, const struct cgstream_event *ev, struct fmt_src *src)
{
	switch (ev->type) {
	case CGSTREAM_EVENT_SAMPLE:
	case CGSTREAM_EVENT_CHANGED:
		return fmt_sample(f, ev, src);
	case CGSTREAM_EVENT_REMOVED:
		fmt_removed(f, ev, src);
		break;
	case CGSTREAM_EVENT_ERROR:
	case CGSTREAM_EVENT_ADDED:
		fmt_change(f, ev);
		break;
	}
	return false;
}

static int cmp_cg(const void *a, const void *b)
{
	return strcmp((*(struct fmt_cg *const *)a)->path, (*(struct fmt_cg *const *)b)->path);
}

struct fmt_cg **fmt_cgroups(const struct fmt *f)
{
	struct fmt_cg **v = malloc((f->by_id.count ? f->by_id.count : 1) * sizeof(*v));

	if (v)
		cli_ids_list(&f->by_id, (void **)v);
	return v;
}

/* the table's cells of memory, io and pressure, after the CPU ones */
static void table_others(const struct fmt *f, const struct fmt_cg *c)
{
	char a[16], b[16];

	if (f->controllers & CGSTREAM_CTRL_MEMORY)
		fprintf(f->out, " %7s", c->have_mem && c->mem_has_current ?
			fmt_bytes(a, sizeof(a), (double)c->mem_current) : "-");
	if (f->controllers & CGSTREAM_CTRL_IO) {
		if (c->have_io_delta)
			fprintf(f->out, " %7s %7s", fmt_bytes(a, sizeof(a), c->io_rbps),
				fmt_bytes(b, sizeof(b), c->io_wbps));
		else
			fprintf(f->out, " %7s %7s", "-", "-");
	}
	for (unsigned int k = 0; (f->controllers & CGSTREAM_CTRL_PRESSURE) && k < FMT_PSI_NR; k++) {
		double pct;

		if (fmt_psi(c, k, &pct))
			fprintf(f->out, " %8.1f", pct);
		else
			fprintf(f->out, " %8s", "-");
	}
}

/* one row: a removed cgroup's, its last, says so */
static void table_row(const struct fmt *f, const struct fmt_cg *c)
{
	char name[CGSTREAM_ESCAPED_SIZE(PATH_MAX) + 16];
	FILE *out = f->out;

	snprintf(name, sizeof(name), "%s%s", c->shown, c->removed ? " (removed)" : "");
	fprintf(out, "%-32s", name);
	if ((f->controllers & CGSTREAM_CTRL_CPU) && !c->have_delta)
		fprintf(out, " %7s %7s %7s %10s %10s", "-", "-", "-", "-", "-");
	else if ((f->controllers & CGSTREAM_CTRL_CPU) && c->has_thr)
		fprintf(out, " %7.1f %7.1f %7.1f %10llu %10.1f", c->cpu, c->user, c->sys,
			(unsigned long long)c->thr_n, (double)c->thr_usec / 1000.0);
	else if (f->controllers & CGSTREAM_CTRL_CPU)
		fprintf(out, " %7.1f %7.1f %7.1f %10s %10s", c->cpu, c->user, c->sys, "-", "-");
	table_others(f, c);
	fputc('\n', out);
}

/* the rows of the cgroups removed in an earlier batch go */
static void fmt_forget_removed(struct fmt *f)
{
	struct fmt_cg **v = fmt_cgroups(f);
	size_t n = f->by_id.count;

	for (size_t i = 0; v && i < n; i++)
		if (v[i]->removed && v[i]->removed_batch < f->tables)
			fmt_forget(f, v[i]);
	free(v);
}

static void fmt_table(struct fmt *f, const char *mode, uint64_t seq)
{
	struct fmt_cg **v;
	size_t n = f->by_id.count;
	FILE *out = f->out;

	v = fmt_cgroups(f);
	if (!v)
		return;
	qsort(v, n, sizeof(v[0]), cmp_cg);
	fputs("\033[H\033[2J", out);
	fprintf(out, "cgstream: %zu cgroups, %s mode, seq %llu  (Ctrl-C quits)\n\n", n, mode,
		(unsigned long long)seq);
	fprintf(out, "%-32s", "CGROUP");
	if (f->controllers & CGSTREAM_CTRL_CPU)
		fprintf(out, " %7s %7s %7s %10s %10s", "CPU%", "USER%", "SYS%", "THROTTLED", "THR-MS");
	if (f->controllers & CGSTREAM_CTRL_MEMORY)
		fprintf(out, " %7s", "MEM");
	if (f->controllers & CGSTREAM_CTRL_IO)
		fprintf(out, " %7s %7s", "READ/s", "WRITE/s");
	for (unsigned int k = 0; (f->controllers & CGSTREAM_CTRL_PRESSURE) && k < FMT_PSI_NR; k++)
		fprintf(out, " %8s", fmt_psi_columns[k].heading);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++)
		table_row(f, v[i]);
	free(v);
}

void fmt_batch_end(struct fmt *f, struct fmt_src *src, uint64_t seq)
{
	src->batches++;
	if (src->cur_time)
		src->prev_time = src->cur_time;
	src->cur_time = 0;
	fmt_forget_removed(f);
	if (f->style == FMT_TABLE)
		fmt_table(f, src->mode, seq);
	f->tables++;
}
