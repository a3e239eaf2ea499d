// SPDX-License-Identifier: LGPL-2.1-or-later
/* The intrusive u64-keyed hash table of hash.h. */
#include <errno.h>
#include <stdlib.h>

#include "hash.h"

#define CGS_HASH_MIN_SHIFT 4	/* 16 buckets */

static size_t cgs_hash_slot(uint64_t key, unsigned int shift)
{
	/* Fibonacci hashing: ids and watch numbers are sequential */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> shift);
}

static int cgs_hash_resize(struct cgs_hash *h, unsigned int bits)
{
	unsigned int shift = 64 - bits;
	size_t old = h->buckets ? cgs_hash_buckets(h) : 0;
	struct cgs_hnode **b;

	if (bits > 8 * sizeof(size_t) - 4)
		return -ENOMEM;
	b = calloc((size_t)1 << bits, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < old; i++) {
		struct cgs_hnode *n = h->buckets[i], *next;

		for (; n; n = next) {
			size_t s = cgs_hash_slot(n->key, shift);

			next = n->next;
			n->next = b[s];
			b[s] = n;
		}
	}
	free(h->buckets);
	h->buckets = b;
	h->shift = shift;
	return 0;
}

int cgs_hash_init(struct cgs_hash *h)
{
	*h = (struct cgs_hash){ 0 };
	return cgs_hash_resize(h, CGS_HASH_MIN_SHIFT);
}

void cgs_hash_free(struct cgs_hash *h)
{
	free(h->buckets);
	h->buckets = NULL;
	h->count = 0;
}

void cgs_hash_add(struct cgs_hash *h, struct cgs_hnode *n, uint64_t key)
{
	size_t s;

	if (h->count >= cgs_hash_buckets(h))
		(void)cgs_hash_resize(h, 64 - h->shift + 1);	/* else longer chains */
	n->key = key;
	s = cgs_hash_slot(key, h->shift);
	n->next = h->buckets[s];
	h->buckets[s] = n;
	h->count++;
}

void cgs_hash_del(struct cgs_hash *h, struct cgs_hnode *n)
{
	struct cgs_hnode **pp;

	for (pp = &h->buckets[cgs_hash_slot(n->key, h->shift)]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			h->count--;
			return;
		}
	}
}

static struct cgs_hnode *cgs_hash_scan(struct cgs_hnode *n, uint64_t key)
{
	while (n && n->key != key)
		n = n->next;
	return n;
}

struct cgs_hnode *cgs_hash_first(const struct cgs_hash *h, uint64_t key)
{
	return cgs_hash_scan(h->buckets[cgs_hash_slot(key, h->shift)], key);
}

struct cgs_hnode *cgs_hash_next(const struct cgs_hnode *n)
{
	return cgs_hash_scan(n->next, n->key);
}

uint64_t cgs_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}
