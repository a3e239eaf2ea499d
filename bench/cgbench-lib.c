// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgbench-lib: wake latency of libcgstream's group API (scenario 5a).
 *
 *   cgbench-lib --seconds S CGROUP...
 *
 * Watches the cgroups with one cgstream_group (kernel mode: io_uring on the
 * cpu.stat.stream files), waits with cgstream_group_wait(), takes
 * CLOCK_MONOTONIC as soon as it returns ("at wake"), processes the batch
 * and reports, per wake, wake time minus the newest sample's
 * flush_time_usec.  Output: one JSON object on stdout, as cgbench latency.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgstream.h"

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	double seconds = 10;
	int first = 1;
	if (argc > 2 && !strcmp(argv[1], "--seconds")) {
		seconds = atof(argv[2]);
		first = 3;
	}
	int ncg = argc - first;
	if (ncg < 1) {
		fprintf(stderr, "usage: cgbench-lib --seconds S CGROUP...\n");
		return 2;
	}
	struct cgstream_opts o = { .sz = sizeof(o), .mode = CGSTREAM_MODE_KERNEL };
	/* smoke tests of this program on kernels without the feature only */
	const char *m = getenv("CGBENCH_LIB_MODE");
	if (m && !strcmp(m, "fallback")) {
		o.mode = CGSTREAM_MODE_FALLBACK;
		o.fallback_interval_ms = 100;
	}
	struct cgstream_group *g;
	int r = cgstream_group_new(&o, &g);
	if (r < 0) {
		fprintf(stderr, "cgbench-lib: cgstream_group_new: %s\n", strerror(-r));
		return 1;
	}
	for (int i = first; i < argc; i++) {
		r = cgstream_group_add(g, argv[i], NULL);
		if (r < 0) {
			fprintf(stderr, "cgbench-lib: add %s: %s\n", argv[i], strerror(-r));
			return 1;
		}
	}
	struct cgstream_event *ev = calloc(ncg, sizeof(*ev));
	size_t cap = 1 << 16, n = 0;
	int64_t *lat = malloc(cap * sizeof(*lat));
	int64_t *proc = malloc(cap * sizeof(*proc));	/* process() time per batch */
	size_t nproc = 0;
	uint64_t wakes = 0, missed = 0, dups = 0, prev = 0, errors = 0, skipped_first = 0;
	uint64_t end = mono_us() + (uint64_t)(seconds * 1e6);
	int first_batch = 1;
	while (mono_us() < end) {
		r = cgstream_group_wait(g, 200);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "cgbench-lib: wait: %s\n", strerror(-r));
			return 1;
		}
		if (r <= 0)
			continue;
		uint64_t woke = mono_us();
		int k = cgstream_group_process(g, ev, ncg, sizeof(*ev));
		if (k <= 0)
			continue;
		if (nproc < cap)
			proc[nproc++] = (int64_t)(mono_us() - woke);
		wakes++;
		uint64_t seq = 0, ft = 0;
		for (int i = 0; i < k; i++) {
			if (ev[i].type != CGSTREAM_EVENT_SAMPLE) {
				errors++;
				continue;
			}
			if (ev[i].sample.seq > seq) {
				seq = ev[i].sample.seq;
				ft = ev[i].sample.flush_time_usec;
			}
		}
		if (!seq)
			continue;
		if (first_batch) {
			/* the batch already there at start is not a wake-up */
			first_batch = 0;
			prev = seq;
			skipped_first++;
			continue;
		}
		if (seq <= prev) {	/* a batch that brought no new flush */
			dups++;
			continue;
		}
		if (seq > prev + 1)
			missed += seq - prev - 1;
		prev = seq;
		if (n < cap)
			lat[n++] = (int64_t)woke - (int64_t)ft;
	}
	printf("{\"reader\": \"libcgstream-group\", \"mode\": \"%s\", \"cgroups\": %d, "
	       "\"wakes\": %" PRIu64 ", \"missed\": %" PRIu64 ", \"repeat_wakes\": %" PRIu64
	       ", \"errors\": %" PRIu64 ", \"lat_us\": [",
	       cgstream_mode_name(cgstream_group_mode(g)), ncg, wakes, missed, dups, errors);
	for (size_t i = 0; i < n; i++)
		printf("%s%" PRId64, i ? "," : "", lat[i]);
	printf("], \"process_us\": [");
	for (size_t i = 0; i < nproc; i++)
		printf("%s%" PRId64, i ? "," : "", proc[i]);
	printf("]}\n");
	cgstream_group_free(g);
	return 0;
}
