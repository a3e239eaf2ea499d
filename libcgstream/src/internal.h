/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcgstream internals shared by the stream, group and interval code. */
#ifndef CGSTREAM_INTERNAL_H
#define CGSTREAM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgstream.h"
#include <linux/cgroup_stat_stream.h>

#define CGS_EXPORT __attribute__((visibility("default")))

#define CGS_STREAM_FILE		"cpu.stat.stream"
#define CGS_STAT_FILE		"cpu.stat"
#define CGS_INTERVAL_FILE	"cpu.stat.stream_interval"
#define CGS_DEFAULT_FALLBACK_MS	1000u

/*
 * cpu.stat is a few hundred bytes; a read that fills the whole buffer may
 * have been cut, and is reported as -EOVERFLOW rather than parsed.
 */
#define CGS_READ_BUF		4096

/* options after validation, with defaults filled in */
struct cgs_opts {
	int mode;
	uint32_t fallback_interval_ms;
	const char *cgroup_root;
};

int cgs_opts_load(const struct cgstream_opts *in, struct cgs_opts *out);

/* the cgroup2 mount point: malloc()ed, or -ENODEV */
int cgs_find_root(const struct cgs_opts *o, char **root);
/* load @opts into @o, then find the root they name: cgs_find_root() */
int cgs_opts_root(const struct cgstream_opts *opts, struct cgs_opts *o,
		  char **root);
/* canonical absolute path of @cgroup under @root: malloc()ed, or -errno */
int cgs_resolve(const char *root, const char *cgroup, char **path);

/*
 * Open @path (a resolved cgroup directory) for @mode: the stream file
 * (KERNEL), cpu.stat (FALLBACK), or the stream file when it exists (AUTO).
 * Returns the mode opened, and the cgroup's id (its directory's inode
 * number) in @id; -ENOENT when the cgroup does not exist, -EOPNOTSUPP when
 * kernel mode is asked for and the file is missing.
 */
int cgs_open_data(const char *path, int mode, int *fd, uint64_t *id);
/* AUTO resolved against the root cgroup's files */
int cgs_pick_mode(const char *root, int mode);
/* fallback timer period: option, else kernel interval if set, else 1000 */
uint32_t cgs_fallback_ms(const char *root, uint32_t opt_ms);
/* periodic CLOCK_MONOTONIC timerfd, first expiry at once */
int cgs_timerfd(uint32_t ms);

int cgs_read_interval(const char *root, uint32_t *ms);

uint64_t cgs_now_usec(void);
/* errno of a read of a removed cgroup's file, as the library reports it */
static inline int cgs_read_errno(int err)
{
	return (err == ENOENT || err == ENODEV) ? -ENODEV : -err;
}

/*
 * The 1.0 sizes of the structs that carry their size: the least a caller
 * may pass.  Fields were only ever appended after these.
 */
#define cgs_offsetofend(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
#define CGS_SAMPLE_SIZE_1_0	cgs_offsetofend(struct cgstream_sample, flush_missed)
#define CGS_EVENT_SIZE_1_0	(offsetof(struct cgstream_event, sample) + CGS_SAMPLE_SIZE_1_0)

/*
 * Copy a sample or an event into a caller's struct of @size bytes (at
 * least the 1.0 size): the common prefix, zeros beyond ours, and
 * sample.present without the bits of fields the caller's struct lacks.
 */
void cgs_copy_sample(void *dst, size_t size, const struct cgstream_sample *s);
void cgs_copy_event(void *dst, size_t size, const struct cgstream_event *e);

#endif
