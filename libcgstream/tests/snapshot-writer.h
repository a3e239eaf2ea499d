/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the kernel's snapshots (format 2, <linux/cgroup_stat_stream.h>)
 * into a growing buffer, for the tests that feed the library's decoder
 * (12-records), the fake kernel the host tests run the tree on
 * (fake-kernel.c) and the fuzzers' seed corpus (tests/fuzz/gen-records.c).
 * It writes what the caller says, lies included: the checks are the
 * decoder's.
 */
#ifndef CGSTREAM_SNAPSHOT_WRITER_H
#define CGSTREAM_SNAPSHOT_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/cgroup_stat_stream.h>

struct sw {
	unsigned char *p;
	size_t len, cap;
};

/* one device of a CGROUP or REMOVED record */
struct sw_dev {
	uint32_t major, minor;
	const uint64_t *values;
};

static inline void sw_put(struct sw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;

		while (cap < w->len + n)
			cap *= 2;
		w->p = realloc(w->p, cap);
		if (!w->p)
			abort();
		w->cap = cap;
	}
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static inline void sw_zeros(struct sw *w, size_t n)
{
	static const unsigned char z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		sw_put(w, z, k);
		n -= k;
	}
}

static inline void sw_snapshot(struct sw *w, uint16_t ctrl, uint16_t flags, uint64_t seq,
			       uint64_t time_usec, uint64_t base, uint64_t skipped)
{
	struct cgroup_stat_snapshot s = {
		.hdr = { .size = sizeof(s), .type = CGROUP_STAT_REC_SNAPSHOT, .flags = flags },
		.version = CGROUP_STAT_STREAM_VERSION, .controller = ctrl,
		.seq = seq, .time_usec = time_usec, .base_seq = base, .skipped = skipped,
	};

	sw_put(w, &s, sizeof(s));
}

/* a SCHEMA of @nv names, then @ndv devices' names, padded to 8 */
static inline void sw_schema(struct sw *w, const char *const *names, uint32_t nv,
			     const char *const *dev_names, uint32_t ndv)
{
	struct cgroup_stat_schema s = {
		.hdr = { .type = CGROUP_STAT_REC_SCHEMA },
		.nr_values = nv, .nr_device_values = ndv,
		.device_size = ndv ? 8 + 8 * ndv : 0,
	};
	size_t text = 0;

	for (uint32_t i = 0; i < nv + ndv; i++)
		text += strlen(i < nv ? names[i] : dev_names[i - nv]) + 1;
	s.hdr.size = (uint32_t)((sizeof(s) + text + 7) / 8 * 8);
	sw_put(w, &s, sizeof(s));
	for (uint32_t i = 0; i < nv + ndv; i++) {
		const char *n = i < nv ? names[i] : dev_names[i - nv];

		sw_put(w, n, strlen(n) + 1);
	}
	sw_zeros(w, s.hdr.size - sizeof(s) - text);
}

/* a CGROUP or REMOVED record; @pad more bytes at its end (a later kernel's) */
static inline void sw_cgroup(struct sw *w, uint16_t type, uint16_t flags, uint64_t id,
			     uint64_t parent, const uint64_t *values, uint32_t nv,
			     const struct sw_dev *devs, uint32_t nd, uint32_t ndv, uint32_t pad)
{
	struct cgroup_stat_cgroup c = {
		.hdr = { .type = type, .flags = flags },
		.id = id, .parent_id = parent, .nr_values = nv, .nr_devices = nd,
	};

	c.hdr.size = (uint32_t)(sizeof(c) + 8 * nv + nd * (8 + 8 * ndv) + pad);
	sw_put(w, &c, sizeof(c));
	sw_put(w, values, 8 * (size_t)nv);
	for (uint32_t d = 0; d < nd; d++) {
		sw_put(w, &devs[d].major, 4);
		sw_put(w, &devs[d].minor, 4);
		sw_put(w, devs[d].values, 8 * (size_t)ndv);
	}
	sw_zeros(w, pad);
}

/* a record of a type the reader may not know, @size bytes */
static inline void sw_other(struct sw *w, uint16_t type, uint32_t size)
{
	struct cgroup_stat_rec h = { .size = size, .type = type };

	sw_put(w, &h, sizeof(h));
	sw_zeros(w, size - sizeof(h));
}

#endif
