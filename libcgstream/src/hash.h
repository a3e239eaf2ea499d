/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An intrusive hash table keyed by a u64: a cgroup's id, an inotify watch,
 * or the hash of a path (then several nodes may share a key, and the
 * caller compares the paths).  Adds and deletes are O(1) on average; the
 * table doubles when it holds more nodes than buckets.  Once initialized it
 * never fails: when it cannot grow it keeps its buckets and the chains get
 * longer.
 */
#ifndef CGSTREAM_HASH_H
#define CGSTREAM_HASH_H

#include <stddef.h>
#include <stdint.h>

struct cgs_hnode {
	struct cgs_hnode *next;
	uint64_t key;
};

struct cgs_hash {
	struct cgs_hnode **buckets;
	unsigned int shift;	/* 64 - log2(number of buckets) */
	size_t count;
};

#define cgs_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* 0 or -ENOMEM; after it, adding never fails */
int cgs_hash_init(struct cgs_hash *h);
void cgs_hash_free(struct cgs_hash *h);
void cgs_hash_add(struct cgs_hash *h, struct cgs_hnode *n, uint64_t key);
/* @n must be in @h */
void cgs_hash_del(struct cgs_hash *h, struct cgs_hnode *n);
/* the first node with @key, then the next one with the same key, or NULL */
struct cgs_hnode *cgs_hash_first(const struct cgs_hash *h, uint64_t key);
struct cgs_hnode *cgs_hash_next(const struct cgs_hnode *n);
/* the number of buckets: walk buckets[0..n) and each chain's ->next */
static inline size_t cgs_hash_buckets(const struct cgs_hash *h)
{
	return (size_t)1 << (64 - h->shift);
}
/* a key for a string */
uint64_t cgs_hash_str(const char *s);

#endif
