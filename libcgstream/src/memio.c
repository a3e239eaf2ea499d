// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A member's memory values and io devices, as the modes decode them (text
 * parsed by parse.c, records decoded by records.c), and
 * cgstream_memory_get().
 *
 * Memory's values are named at run time.  The names are not copied per
 * cgroup: a set keeps one list (a layout) per distinct list of names it
 * has seen, and each member points to its own.  A member's new values are
 * matched first against the layout it had, then the others; a new layout
 * is made only for a list never seen.  Layouts live as long as the set,
 * so that the names handed out stay valid; the kernel has a handful at
 * most (memory.stat's keys, then "current", "swap.current" where swap is
 * accounted, "events.*"; the root lacks the last ones in emulation).
 * Values and devices are kept per member in arrays that only grow: no
 * allocation per cycle once a member has been read.
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

static bool cgs_layout_matches(const struct cgs_names *l, const struct cgs_kvs *kvs)
{
	if (!l || l->nr != kvs->n)
		return false;
	for (size_t i = 0; i < kvs->n; i++)
		if (!cgs_kv_is(&kvs->v[i], l->names[i]))
			return false;
	return true;
}

/* a layout of @nr names whose text takes @bytes (NULs included) */
static struct cgs_names *cgs_layout_alloc(struct cgs_set *s, size_t nr, size_t bytes)
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
	l->nr = (uint32_t)nr;
	l->next = s->layouts;
	s->layouts = l;
	return l;
}

static const struct cgs_names *cgs_layout_of_kvs(struct cgs_set *s, const struct cgs_names *had,
						 const struct cgs_kvs *kvs)
{
	struct cgs_names *l;
	size_t bytes = 0;
	char *p;

	if (cgs_layout_matches(had, kvs))
		return had;
	for (l = s->layouts; l; l = l->next)
		if (l != had && cgs_layout_matches(l, kvs))
			return l;
	for (size_t i = 0; i < kvs->n; i++)
		bytes += strlen(kvs->v[i].prefix) + kvs->v[i].len + 1;
	l = cgs_layout_alloc(s, kvs->n, bytes);
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
	return l;
}

static int cgs_mem_reserve(struct cgs_cg *m, uint32_t n)
{
	return cgs_grow((void **)&m->mem_values, &m->mem_cap, n, sizeof(*m->mem_values), 64);
}

int cgs_memory_store(struct cgs_set *s, struct cgs_cg *m, const struct cgs_kvs *kvs)
{
	const struct cgs_names *l = cgs_layout_of_kvs(s, m->mem_layout, kvs);

	if (!l || cgs_mem_reserve(m, l->nr) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->nr; i++)
		m->mem_values[i] = kvs->v[i].v;
	m->mem_layout = l;
	m->mem.nr = l->nr;
	m->mem.names = l->names;
	m->mem.values = m->mem_values;
	return 0;
}

int cgs_memory_layout(struct cgs_set *s, const struct cgstream_record *keys,
		      const struct cgs_names **ret)
{
	const char *names = keys->items, *p;
	struct cgs_names *l;
	size_t bytes;

	if (keys->type != CGSTREAM_RECORD_KEYS || keys->for_type != CGSTREAM_RECORD_MEMORY)
		return -EBADMSG;
	/* the names' bytes: records_next() checked that each ends in the record */
	p = names;
	for (uint32_t i = 0; i < keys->count; i++)
		p += strlen(p) + 1;
	bytes = (size_t)(p - names);
	for (l = s->layouts; l; l = l->next) {
		if (l->nr != keys->count)
			continue;
		p = names;
		uint32_t i;

		for (i = 0; i < l->nr && strcmp(l->names[i], p) == 0; i++)
			p += strlen(p) + 1;
		if (i == l->nr) {
			*ret = l;
			return 0;
		}
	}
	l = cgs_layout_alloc(s, keys->count, bytes);
	if (!l)
		return -ENOMEM;
	memcpy(l->blob, names, bytes);
	p = l->blob;
	for (uint32_t i = 0; i < l->nr; i++) {
		l->names[i] = p;
		p += strlen(p) + 1;
	}
	*ret = l;
	return 0;
}

int cgs_memory_record(struct cgs_cg *m, const struct cgstream_record *rec,
		      const struct cgs_names *names)
{
	if (!names || rec->count != names->nr)
		return -EBADMSG;	/* no KEYS record before it, or another count */
	if (cgs_mem_reserve(m, names->nr) < 0)
		return -ENOMEM;
	memcpy(m->mem_values, rec->items, (size_t)names->nr * sizeof(uint64_t));
	m->mem_layout = names;
	m->mem.seq = rec->seq;
	m->mem.flush_time_usec = rec->flush_time_usec;
	m->mem.nr = names->nr;
	m->mem.names = names->names;
	m->mem.values = m->mem_values;
	return 0;
}

int cgs_devs_reserve(struct cgs_devs *d, uint32_t n)
{
	return cgs_grow((void **)&d->v, &d->cap, n, sizeof(*d->v), 4);
}

int cgs_io_record(struct cgs_cg *m, const struct cgstream_record *rec)
{
	int r = cgs_devs_reserve(&m->devs, rec->count);

	if (r < 0)
		return r;
	for (uint32_t i = 0; i < rec->count; i++)
		cgstream_record_device(rec, i, &m->devs.v[i]);
	m->devs.n = rec->count;
	m->io.seq = rec->seq;
	m->io.flush_time_usec = rec->flush_time_usec;
	m->io.nr_devices = rec->count;
	m->io.devices = m->devs.v;
	return 0;
}

void cgs_memio_free_member(struct cgs_cg *m)
{
	free(m->mem_values);
	free(m->devs.v);
}

void cgs_memio_free_set(struct cgs_set *s)
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
}

CGS_EXPORT int cgstream_memory_get(const struct cgstream_memory *m, const char *name,
				   uint64_t *value)
{
	if (!m || !name || !value)
		return -EINVAL;
	for (uint32_t i = 0; i < m->nr; i++) {
		if (strcmp(m->names[i], name) == 0) {
			*value = m->values[i];
			return 0;
		}
	}
	return -ENOENT;
}
