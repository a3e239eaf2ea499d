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

#include "format.h"

int fmt_init(struct fmt *f, FILE *out, enum fmt_style style, uint64_t every, bool parents,
	     size_t rootlen)
{
	*f = (struct fmt){ .out = out, .style = style, .every = every, .parents = parents,
			   .rootlen = rootlen };
	return cgs_hash_init(&f->by_id);
}

static struct fmt_cg *fmt_find(struct fmt *f, uint64_t id)
{
	struct cgs_hnode *n = cgs_hash_first(&f->by_id, id);

	return n ? cgs_container_of(n, struct fmt_cg, node) : NULL;
}

static void fmt_forget(struct fmt *f, struct fmt_cg *c)
{
	cgs_hash_del(&f->by_id, &c->node);
	f->n_cgroups--;
	free(c->path);
	free(c);
}

void fmt_fini(struct fmt *f)
{
	struct cgs_hnode *n;

	for (size_t i = 0; i < cgs_hash_buckets(&f->by_id); i++)
		while ((n = f->by_id.buckets[i]))
			fmt_forget(f, cgs_container_of(n, struct fmt_cg, node));
	cgs_hash_free(&f->by_id);
}

static struct fmt_cg *fmt_get(struct fmt *f, const struct cgstream_event *ev)
{
	struct fmt_cg *c = fmt_find(f, ev->sample.cgroup_id);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(ev->path))) {
		free(c);
		return NULL;
	}
	cgs_hash_add(&f->by_id, &c->node, ev->sample.cgroup_id);
	f->n_cgroups++;
	return c;
}

static const char *fmt_shown(const struct fmt *f, const char *path)
{
	const char *p = path + f->rootlen;

	return strlen(path) > f->rootlen && *p ? p : "/";
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

/* {"cgroup": ..., "cgroup_id": N[, "parent_id": N] */
static void json_head(const struct fmt *f, const struct cgstream_event *ev)
{
	fputs("{\"cgroup\": ", f->out);
	json_string(f->out, ev->path);
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

static double pct(uint64_t a, uint64_t b, uint64_t dt)
{
	return b >= a ? 100.0 * (double)(b - a) / (double)dt : 0.0;
}

static void fmt_json_sample(const struct fmt *f, const struct fmt_cg *c,
			    const struct cgstream_event *ev, const char *mode)
{
	const struct cgstream_sample *s = &ev->sample;
	FILE *out = f->out;

	json_head(f, ev);
	json_fields(out, s);
	if (c->have_delta)
		fprintf(out, ", \"cpu_percent\": %.2f", c->cpu);
	else
		fputs(", \"cpu_percent\": null", out);
	fprintf(out, ", \"mode\": \"%s\"}\n", mode);
}

static void fmt_line_sample(const struct fmt *f, const struct fmt_cg *c,
			    const struct cgstream_sample *s)
{
	fprintf(f->out, "seq %llu %s: ", (unsigned long long)s->seq, fmt_shown(f, c->path));
	if (!c->have_delta) {
		fprintf(f->out, "first sample, %.3f s of CPU so far\n", (double)s->usage_usec / 1e6);
		return;
	}
	fprintf(f->out, "cpu %.1f%% (user %.1f%%, system %.1f%%)", c->cpu, c->user, c->sys);
	if (c->has_thr)
		fprintf(f->out, ", throttled %llu times for %.1f ms",
			(unsigned long long)c->thr_n, (double)c->thr_usec / 1000.0);
	fputc('\n', f->out);
}

static bool fmt_sample(struct fmt *f, const struct cgstream_event *ev, const char *mode)
{
	const struct cgstream_sample *s = &ev->sample;
	struct fmt_cg *c = fmt_get(f, ev);
	const struct cgstream_sample *p;

	if (!c)
		return false;	/* no memory: this one is not shown */
	p = &c->prev;
	if (f->every > 1) {
		uint64_t window = s->seq / f->every;

		if (!c->have_prev) {
			/* the base of the first printed CPU% */
			c->prev = *s;
			c->have_prev = true;
			c->window = window;
			return false;
		}
		/* by window, not seq % N: a missed cycle must not skip one */
		if (window <= c->window)
			return false;
		c->window = window;
	}

	c->have_delta = c->have_prev && s->flush_time_usec > p->flush_time_usec;
	if (c->have_delta) {
		uint64_t dt = s->flush_time_usec - p->flush_time_usec;

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
	if (f->style == FMT_JSON)
		fmt_json_sample(f, c, ev, mode);
	else if (f->style == FMT_LINES)
		fmt_line_sample(f, c, s);
	c->prev = *s;
	c->have_prev = true;
	return true;
}

static void fmt_change(struct fmt *f, const struct cgstream_event *ev)
{
	static const char *const names[] = {
		[CGSTREAM_EVENT_REMOVED] = "removed",
		[CGSTREAM_EVENT_ERROR] = "error",
		[CGSTREAM_EVENT_ADDED] = "added",
	};
	const char *what = names[ev->type];
	struct fmt_cg *c;

	if (ev->type == CGSTREAM_EVENT_ERROR && f->style != FMT_NONE)
		fprintf(stderr, "cgstream: %s: %s\n", ev->path, strerror(-ev->error));
	if (f->style == FMT_JSON) {
		json_head(f, ev);
		fprintf(f->out, ", \"event\": \"%s\"", what);
		if (ev->type == CGSTREAM_EVENT_ERROR)
			fprintf(f->out, ", \"error\": \"%s\"", strerror(-ev->error));
		fputs("}\n", f->out);
	} else if (f->style == FMT_LINES) {
		fprintf(f->out, "%s: %s\n", fmt_shown(f, ev->path), what);
	} else if (f->style == FMT_TABLE && ev->type != CGSTREAM_EVENT_ADDED) {
		size_t n = strlen(f->removed_note);

		snprintf(f->removed_note + n, sizeof(f->removed_note) - n, "%s%s",
			 n ? ", " : "", fmt_shown(f, ev->path));
	}
	/* gone, or (error) starting afresh when it can be read again */
	c = ev->type == CGSTREAM_EVENT_ADDED ? NULL : fmt_find(f, ev->sample.cgroup_id);
	if (c)
		fmt_forget(f, c);
}

bool fmt_event(struct fmt *f, const struct cgstream_event *ev, const char *mode)
{
	switch (ev->type) {
	case CGSTREAM_EVENT_SAMPLE:
		return fmt_sample(f, ev, mode);
	case CGSTREAM_EVENT_REMOVED:
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
	struct fmt_cg **v = malloc((f->n_cgroups ? f->n_cgroups : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < cgs_hash_buckets(&f->by_id); i++)
		for (struct cgs_hnode *h = f->by_id.buckets[i]; h; h = h->next)
			v[n++] = cgs_container_of(h, struct fmt_cg, node);
	return v;
}

void fmt_batch_end(struct fmt *f, const char *mode, uint64_t seq)
{
	struct fmt_cg **v;
	size_t n = f->n_cgroups;
	FILE *out = f->out;

	if (f->style != FMT_TABLE)
		return;
	v = fmt_cgroups(f);
	if (!v)
		return;
	qsort(v, n, sizeof(v[0]), cmp_cg);
	fputs("\033[H\033[2J", out);
	fprintf(out, "cgstream: %zu cgroups, %s mode, seq %llu  (Ctrl-C quits)\n\n", n, mode,
		(unsigned long long)seq);
	fprintf(out, "%-40s %7s %7s %7s %10s %10s\n", "CGROUP", "CPU%", "USER%", "SYS%",
		"THROTTLED", "THR-MS");
	for (size_t i = 0; i < n; i++) {
		const struct fmt_cg *c = v[i];

		fprintf(out, "%-40s ", fmt_shown(f, c->path));
		if (!c->have_delta) {
			fprintf(out, "%7s %7s %7s %10s %10s\n", "-", "-", "-", "-", "-");
			continue;
		}
		fprintf(out, "%7.1f %7.1f %7.1f ", c->cpu, c->user, c->sys);
		if (c->has_thr)
			fprintf(out, "%10llu %10.1f\n", (unsigned long long)c->thr_n,
				(double)c->thr_usec / 1000.0);
		else
			fprintf(out, "%10s %10s\n", "-", "-");
	}
	if (f->removed_note[0])
		fprintf(out, "\nremoved: %s\n", f->removed_note);
	fflush(out);
	f->removed_note[0] = '\0';
	free(v);
}
