// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The field tables (fields.h): cpu.stat's fields as cpu.stat.stream prints
 * them and as cpu.stat.stream.subtree's type-1 record carries them.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define SAMPLE_OFF(m)	offsetof(struct cgstream_sample, m)
#define RECORD_OFF(m)	offsetof(struct cgroup_stat_stream_record, m)
#define BANDWIDTH	CGROUP_STAT_STREAM_RECORD_F_BANDWIDTH

/* in struct cgstream_sample's order: cgstream_sample_field() lists them so */
static const struct cgs_field cgs_cpu_fields[] = {
	{ "seq", CGROUP_STAT_STREAM_KEY_SEQ, "seq", CGSTREAM_F_SEQ,
	  SAMPLE_OFF(seq), RECORD_OFF(flush_seq), 0 },
	{ "flush_time_usec", CGROUP_STAT_STREAM_KEY_TIME, "usec", CGSTREAM_F_FLUSH_TIME,
	  SAMPLE_OFF(flush_time_usec), RECORD_OFF(flush_time_usec), 0 },
	{ "usage_usec", "usage_usec", "usec", CGSTREAM_F_USAGE,
	  SAMPLE_OFF(usage_usec), RECORD_OFF(usage_usec), 0 },
	{ "user_usec", "user_usec", "usec", CGSTREAM_F_USER,
	  SAMPLE_OFF(user_usec), RECORD_OFF(user_usec), 0 },
	{ "system_usec", "system_usec", "usec", CGSTREAM_F_SYSTEM,
	  SAMPLE_OFF(system_usec), RECORD_OFF(system_usec), 0 },
	{ "nice_usec", "nice_usec", "usec", CGSTREAM_F_NICE,
	  SAMPLE_OFF(nice_usec), RECORD_OFF(nice_usec), 0 },
	{ "nr_periods", "nr_periods", "count", CGSTREAM_F_NR_PERIODS,
	  SAMPLE_OFF(nr_periods), RECORD_OFF(nr_periods), BANDWIDTH },
	{ "nr_throttled", "nr_throttled", "count", CGSTREAM_F_NR_THROTTLED,
	  SAMPLE_OFF(nr_throttled), RECORD_OFF(nr_throttled), BANDWIDTH },
	{ "throttled_usec", "throttled_usec", "usec", CGSTREAM_F_THROTTLED,
	  SAMPLE_OFF(throttled_usec), RECORD_OFF(throttled_usec), BANDWIDTH },
	{ "nr_bursts", "nr_bursts", "count", CGSTREAM_F_NR_BURSTS,
	  SAMPLE_OFF(nr_bursts), RECORD_OFF(nr_bursts), BANDWIDTH },
	{ "burst_usec", "burst_usec", "usec", CGSTREAM_F_BURST,
	  SAMPLE_OFF(burst_usec), RECORD_OFF(burst_usec), BANDWIDTH },
	/* the text's only: the record's reader sees gaps in flush_seq */
	{ "flush_missed", CGROUP_STAT_STREAM_KEY_MISSED, "count", CGSTREAM_F_FLUSH_MISSED,
	  SAMPLE_OFF(flush_missed), 0, 0 },
	/* the record's only: a text reader knows the directory it opened */
	{ "cgroup_id", NULL, "id", CGSTREAM_F_CGROUP_ID,
	  SAMPLE_OFF(cgroup_id), RECORD_OFF(cgroup_id), 0 },
};

const struct cgs_controller cgs_cpu = {
	.name = "cpu",
	.stat_file = "cpu.stat",
	.stream_file = "cpu.stat.stream",
	.subtree_file = "cpu.stat.stream.subtree",
	.interval_file = "cpu.stat.stream_interval",
	.record_type = CGROUP_STAT_STREAM_RECORD_CPU,
	.record_min_size = CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0,
	.fields = cgs_cpu_fields,
	.n_fields = sizeof(cgs_cpu_fields) / sizeof(cgs_cpu_fields[0]),
};

const struct cgs_controller *cgs_controller_of_record(unsigned int type)
{
	return type == cgs_cpu.record_type ? &cgs_cpu : NULL;
}

const struct cgs_field *cgs_field_by_key(const struct cgs_controller *c, const char *key,
					 size_t len)
{
	for (size_t i = 0; i < c->n_fields; i++) {
		const char *k = c->fields[i].key;

		if (k && strlen(k) == len && memcmp(k, key, len) == 0)
			return &c->fields[i];
	}
	return NULL;
}

#define CGS_FIELD_INFO_SIZE_1_2	cgs_offsetofend(struct cgstream_field_info, offset)

CGS_EXPORT int cgstream_sample_field(unsigned int i, struct cgstream_field_info *out,
				     size_t out_size)
{
	struct cgstream_field_info info;
	const struct cgs_field *f;

	if (!out || out_size < CGS_FIELD_INFO_SIZE_1_2)
		return -EINVAL;
	if (i >= cgs_cpu.n_fields)
		return -ENOENT;
	f = &cgs_cpu.fields[i];
	info = (struct cgstream_field_info){
		.name = f->name, .key = f->key, .unit = f->unit, .bit = f->bit,
		.offset = f->sample_off,
	};
	memcpy(out, &info, out_size < sizeof(info) ? out_size : sizeof(info));
	if (out_size > sizeof(info))
		memset((char *)out + sizeof(info), 0, out_size - sizeof(info));
	return 0;
}
