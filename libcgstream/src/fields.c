// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The controller tables (fields.h): cpu.stat's fields as cpu.stat.stream
 * prints them and as cpu.stat.stream.subtree's type-1 record carries them;
 * memory's and io's files and records.
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
	.bit = CGSTREAM_CTRL_CPU,
	.index = CGS_CPU,
	.slot = CGS_FILE_CPU,
	.stat_file = "cpu.stat",
	.stream_file = "cpu.stat.stream",
	.subtree_file = "cpu.stat.stream.subtree",
	.interval_file = "cpu.stat.stream_interval",
	.record_type = CGROUP_STAT_STREAM_RECORD_CPU,
	.record_min_size = CGROUP_STAT_STREAM_RECORD_CPU_SIZE_VER0,
	.fields = cgs_cpu_fields,
	.n_fields = sizeof(cgs_cpu_fields) / sizeof(cgs_cpu_fields[0]),
};

/* in the order the MEMORY record appends them after memory.stat's keys */
static const struct cgs_aux_file cgs_memory_aux[] = {
	{ "memory.current", "current", false, CGS_FILE_MEM_CURRENT },
	{ "memory.swap.current", "swap.current", false, CGS_FILE_MEM_SWAP },
	{ "memory.events", "events.", true, CGS_FILE_MEM_EVENTS },
};

const struct cgs_controller cgs_memory = {
	.name = "memory",
	.bit = CGSTREAM_CTRL_MEMORY,
	.index = CGS_MEMORY,
	.slot = CGS_FILE_MEMORY,
	.stat_file = "memory.stat",
	.stream_file = "memory.stat.stream",
	.subtree_file = "memory.stat.stream.subtree",
	.interval_file = "memory.stat.stream_interval",
	.record_type = CGROUP_STAT_STREAM_RECORD_MEMORY,
	.record_min_size = CGS_RECORD_HDR_SIZE,
	.aux = cgs_memory_aux,
	.n_aux = sizeof(cgs_memory_aux) / sizeof(cgs_memory_aux[0]),
};

#define DEV_OFF(m)	offsetof(struct cgstream_io_device, m)
#define DEV_REC_OFF(m)	offsetof(struct cgroup_stat_stream_io_device, m)

/* in struct cgstream_io_device's order, after major and minor */
static const struct cgs_io_field cgs_io_dev_fields[] = {
	{ "rbytes", "bytes", DEV_OFF(rbytes), DEV_REC_OFF(rbytes) },
	{ "wbytes", "bytes", DEV_OFF(wbytes), DEV_REC_OFF(wbytes) },
	{ "rios", "count", DEV_OFF(rios), DEV_REC_OFF(rios) },
	{ "wios", "count", DEV_OFF(wios), DEV_REC_OFF(wios) },
	{ "dbytes", "bytes", DEV_OFF(dbytes), DEV_REC_OFF(dbytes) },
	{ "dios", "count", DEV_OFF(dios), DEV_REC_OFF(dios) },
};

const struct cgs_controller cgs_io = {
	.name = "io",
	.bit = CGSTREAM_CTRL_IO,
	.index = CGS_IO,
	.slot = CGS_FILE_IO,
	.stat_file = "io.stat",
	.stream_file = "io.stat.stream",
	.subtree_file = "io.stat.stream.subtree",
	.interval_file = "io.stat.stream_interval",
	.record_type = CGROUP_STAT_STREAM_RECORD_IO,
	.record_min_size = offsetof(struct cgroup_stat_stream_io, devices),
	.dev_fields = cgs_io_dev_fields,
	.n_dev_fields = sizeof(cgs_io_dev_fields) / sizeof(cgs_io_dev_fields[0]),
};

const struct cgs_controller *const cgs_controllers[CGS_NR_CTRL] = {
	[CGS_CPU] = &cgs_cpu,
	[CGS_MEMORY] = &cgs_memory,
	[CGS_IO] = &cgs_io,
};

const struct cgs_controller *cgs_controller_of_record(unsigned int type)
{
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (cgs_controllers[i]->record_type == type)
			return cgs_controllers[i];
	return NULL;
}

const struct cgs_controller *cgs_controller_of_bit(unsigned int bit)
{
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (cgs_controllers[i]->bit == bit)
			return cgs_controllers[i];
	return NULL;
}

CGS_EXPORT const char *cgstream_controller_name(unsigned int ctrl)
{
	const struct cgs_controller *c = cgs_controller_of_bit(ctrl);

	return c ? c->name : NULL;
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

const struct cgs_io_field *cgs_io_field_by_key(const char *key, size_t len)
{
	for (size_t i = 0; i < cgs_io.n_dev_fields; i++) {
		const char *k = cgs_io.dev_fields[i].name;

		if (strlen(k) == len && memcmp(k, key, len) == 0)
			return &cgs_io.dev_fields[i];
	}
	return NULL;
}

CGS_EXPORT int cgstream_io_field(unsigned int i, struct cgstream_io_field_info *out,
				 size_t out_size)
{
	struct cgstream_io_field_info info;
	const struct cgs_io_field *f;

	if (!out || out_size < sizeof(info))
		return -EINVAL;
	if (i >= cgs_io.n_dev_fields)
		return -ENOENT;
	f = &cgs_io.dev_fields[i];
	info = (struct cgstream_io_field_info){ .name = f->name, .unit = f->unit,
						 .offset = f->dev_off };
	memcpy(out, &info, sizeof(info));
	if (out_size > sizeof(info))
		memset((char *)out + sizeof(info), 0, out_size - sizeof(info));
	return 0;
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
