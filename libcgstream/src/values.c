// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every controller's values of a member, named, as the modes decode them
 * (text parsed by parse.c, records decoded by records.c), and
 * cgstream_memory_get(), cgstream_values_get().
 *
 * Values are named at run time: by the kernel's SCHEMA record in SUBTREE
 * mode, by the text's keys elsewhere.  The names are not copied per
 * cgroup: a set keeps one list (a layout) per controller and distinct
 * list of names it has seen, and each member points to its own.  New
 * values are matched first against the layout the member had, then the
 * others; a layout is made only for a list never seen.  Layouts live as
 * long as the set, so that the names handed out stay valid, and since
 * one list has one layout, two lists of values are alike when their
 * layouts are the same address and their numbers the same bytes: that is
 * how a member's values are known to have changed.  Values are kept per
 * member in arrays that only grow: no allocation per cycle once a member
 * has been read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* @name is @kv's prefix and key */
static bool cgs_kv_is(const struct cgs_kv *kv, const char *name)
{
	size_t plen = strlen(kv->prefix);

	return strncmp(name, kv->prefix, plen) == 0 && memcmp(name + plen, kv->key, kv->len) == 0 &&
	       name[plen + kv->len] == '\0';
}

static bool cgs_layout_matches_kvs(const struct cgs_names *l, const struct cgs_controller *c,
				   const struct cgs_kvs *kvs)
{
	if (!l || l->ctrl != c || l->nr != kvs->n)
		return false;
	for (size_t i = 0; i < kvs->n; i++)
		if (!cgs_kv_is(&kvs->v[i], l->names[i]))
			return false;
	return true;
}

static bool cgs_layout_matches_names(const struct cgs_names *l, const struct cgs_controller *c,
				     const char *const *names, uint32_t nr)
{
	if (l->ctrl != c || l->nr != nr)
		return false;
	for (uint32_t i = 0; i < nr; i++)
		if (strcmp(l->names[i], names[i]))
			return false;
	return true;
}

/* where the API's fixed fields of @l's controller are among its names */
static void cgs_layout_fixed(struct cgs_names *l)
{
	const struct cgs_controller *c = l->ctrl;
	size_t nfixed = c->n_fields ? c->n_fields : c->n_dev_fields;

	for (size_t k = 0; k < CGS_MAX_FIXED; k++)
		l->fixed[k] = -1;
	for (size_t k = 0; k < nfixed && k < CGS_MAX_FIXED; k++) {
		const char *key = c->n_fields ? c->fields[k].key : c->dev_fields[k].name;

		if (!key || (c->n_fields && c->fields[k].pub))
			continue;	/* the id, the publication's keys: not values */
		for (uint32_t i = 0; i < l->nr; i++) {
			if (strcmp(l->names[i], key))
				continue;
			if (l->fixed[k] >= 0)
				l->dup_fixed = true;
			else if (i <= INT16_MAX)
				l->fixed[k] = (int16_t)i;
		}
	}
}

/* a layout of @c, @nr names whose text takes @bytes (NULs included) */
static struct cgs_names *cgs_layout_alloc(struct cgs_set *s, const struct cgs_controller *c,
					  size_t nr, size_t bytes)
{
	struct cgs_names *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->names = malloc((nr ? nr : 1) * sizeof(*l->names));
	l->blob = malloc(bytes ? bytes : 1);
	if (!l->names || !l->blob) {
		free(l->names);
		free(l->blob);
		free(l);
		return NULL;
	}
	l->ctrl = c;
	l->nr = (uint32_t)nr;
	l->next = s->layouts;
	s->layouts = l;
	return l;
}

const struct cgs_names *cgs_layout_of_kvs(struct cgs_set *s, const struct cgs_controller *c,
					  const struct cgs_names *had, const struct cgs_kvs *kvs)
{
	struct cgs_names *l;
	size_t bytes = 0;
	char *p;

	if (cgs_layout_matches_kvs(had, c, kvs))
		return had;
	for (l = s->layouts; l; l = l->next)
		if (l != had && cgs_layout_matches_kvs(l, c, kvs))
			return l;
	for (size_t i = 0; i < kvs->n; i++)
		bytes += strlen(kvs->v[i].prefix) + kvs->v[i].len + 1;
	l = cgs_layout_alloc(s, c, kvs->n, bytes);
	if (!l)
		return NULL;
	p = l->blob;
	for (size_t i = 0; i < kvs->n; i++) {
		size_t plen = strlen(kvs->v[i].prefix);

		l->names[i] = p;
		memcpy(p, kvs->v[i].prefix, plen);
		memcpy(p + plen, kvs->v[i].key, kvs->v[i].len);
		p += plen + kvs->v[i].len;
		*p++ = '\0';
	}
	cgs_layout_fixed(l);
	return l;
}

const struct cgs_names *cgs_layout_of_names(struct cgs_set *s, const struct cgs_controller *c,
					    const char *const *names, uint32_t nr)
{
	struct cgs_names *l;
	size_t bytes = 0;
	char *p;

	for (l = s->layouts; l; l = l->next)
		if (cgs_layout_matches_names(l, c, names, nr))
			return l;
	for (uint32_t i = 0; i < nr; i++)
		bytes += strlen(names[i]) + 1;
	l = cgs_layout_alloc(s, c, nr, bytes);
	if (!l)
		return NULL;
	p = l->blob;
	for (uint32_t i = 0; i < nr; i++) {
		size_t len = strlen(names[i]) + 1;

		l->names[i] = p;
		memcpy(p, names[i], len);
		p += len;
	}
	cgs_layout_fixed(l);
	return l;
}

int cgs_vals_store(struct cgs_vals *v, const struct cgs_in *in)
{
	size_t bytes = (size_t)in->n * sizeof(uint64_t);
	bool same;

	same = v->layout == in->layout && v->n == in->n && !memcmp(v->v, in->values, bytes);
	if (!same) {
		if (cgs_grow((void **)&v->v, &v->cap, in->n ? in->n : 1, sizeof(*v->v), 64) < 0)
			return -ENOMEM;
		memcpy(v->v, in->values, bytes);
		v->layout = in->layout;
		v->n = in->n;
	}
	v->seq = in->seq;
	v->time_usec = in->time_usec;
	v->skipped = in->skipped;
	v->pub_present = in->pub_present;
	return !same;
}

/* room for @n u64s in the set's scratch: 0 or -ENOMEM */
static int cgs_scratch(struct cgs_set *s, size_t n)
{
	return cgs_grow((void **)&s->scratch, &s->scratch_cap, n ? n : 1, sizeof(uint64_t), 128);
}

int cgs_io_text_values(struct cgs_set *s, struct cgs_in *in)
{
	const char *names[CGS_MAX_FIXED];
	size_t nf = cgs_io.n_dev_fields;

	for (size_t k = 0; k < nf; k++)
		names[k] = cgs_io.dev_fields[k].name;
	in->layout = cgs_layout_of_names(s, &cgs_io, names, (uint32_t)nf);
	if (!in->layout || cgs_scratch(s, (size_t)s->devs.n * nf) < 0)
		return -ENOMEM;
	for (uint32_t d = 0; d < s->devs.n; d++)
		for (size_t k = 0; k < nf; k++)
			memcpy(&s->scratch[d * nf + k],
			       (const char *)&s->devs.v[d] + cgs_io.dev_fields[k].dev_off,
			       sizeof(uint64_t));
	in->values = s->scratch;
	in->n = (uint32_t)(s->devs.n * nf);
	in->devs = s->devs.v;
	in->nr_devices = s->devs.n;
	return 0;
}

int cgs_io_record_values(struct cgs_set *s, const struct cgstream_rec *rec,
			 const struct cgs_names *l, struct cgs_in *in)
{
	size_t nv = rec->device_values;
	int r = cgs_devs_reserve(&s->devs, rec->nr_devices ? rec->nr_devices : 1);

	if (r < 0 || cgs_scratch(s, (size_t)rec->nr_devices * nv) < 0)
		return -ENOMEM;
	for (uint32_t d = 0; d < rec->nr_devices; d++) {
		struct cgstream_io_device *dev = &s->devs.v[d];
		const unsigned char *p = cgs_rec_device_at(rec, d);

		*dev = (struct cgstream_io_device){ 0 };
		memcpy(&dev->major, p + offsetof(struct cgroup_stat_device, major), 4);
		memcpy(&dev->minor, p + offsetof(struct cgroup_stat_device, minor), 4);
		p += offsetof(struct cgroup_stat_device, values);
		memcpy(&s->scratch[d * nv], p, nv * sizeof(uint64_t));
		for (size_t k = 0; k < cgs_io.n_dev_fields && k < CGS_MAX_FIXED; k++)
			if (l->fixed[k] >= 0)
				memcpy((char *)dev + cgs_io.dev_fields[k].dev_off,
				       p + 8 * (size_t)l->fixed[k], sizeof(uint64_t));
	}
	s->devs.n = rec->nr_devices;
	in->layout = l;
	in->values = s->scratch;
	in->n = (uint32_t)(rec->nr_devices * nv);
	in->devs = s->devs.v;
	in->nr_devices = rec->nr_devices;
	in->partial = rec->flags & CGROUP_STAT_CGROUP_F_PARTIAL;
	return 0;
}

int cgs_devs_reserve(struct cgs_devs *d, uint32_t n)
{
	return cgs_grow((void **)&d->v, &d->cap, n, sizeof(*d->v), 4);
}

void cgs_values_free_member(struct cgs_cg *m)
{
	for (int i = 0; i < CGS_NR_CTRL; i++)
		free(m->vals[i].v);
	free(m->devs.v);
}

void cgs_values_free_set(struct cgs_set *s)
{
	while (s->layouts) {
		struct cgs_names *l = s->layouts;

		s->layouts = l->next;
		free(l->names);
		free(l->blob);
		free(l);
	}
	free(s->kvs.v);
	s->kvs = (struct cgs_kvs){ 0 };
	free(s->devs.v);
	s->devs = (struct cgs_devs){ 0 };
	free(s->scratch);
	s->scratch = NULL;
	s->scratch_cap = 0;
}

CGS_EXPORT int cgstream_values_get(const struct cgstream_values *v, const char *name,
				   uint64_t *value)
{
	if (!v || !name || !value)
		return -EINVAL;
	for (uint32_t i = 0; i < v->nr; i++) {
		if (strcmp(v->names[i], name) == 0) {
			*value = v->values[i];
			return 0;
		}
	}
	return -ENOENT;
}

CGS_EXPORT int cgstream_memory_get(const struct cgstream_memory *m, const char *name,
				   uint64_t *value)
{
	struct cgstream_values v;

	if (!m)
		return -EINVAL;
	v = (struct cgstream_values){ .nr = m->nr, .names = m->names, .values = m->values };
	return cgstream_values_get(&v, name, value);
}
