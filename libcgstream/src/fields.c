// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The controller tables (fields.h): cpu.stat's fields as struct
 * cgstream_sample has them, by the names the kernel gives them in its
 * SCHEMA records and its texts; memory's, io's and pressure's files; the
 * resources and keys of pressure's lines.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define SAMPLE_OFF(m)	offsetof(struct cgstream_sample, m)

/* in struct cgstream_sample's order: cgstream_sample_field() lists them so */
static const struct cgs_field cgs_cpu_fields[] = {
	{ "seq", CGS_KEY_SEQ, "seq", CGSTREAM_F_SEQ, SAMPLE_OFF(seq), true },
	{ "flush_time_usec", CGS_KEY_TIME, "usec", CGSTREAM_F_FLUSH_TIME,
	  SAMPLE_OFF(flush_time_usec), true },
	{ "usage_usec", "usage_usec", "usec", CGSTREAM_F_USAGE, SAMPLE_OFF(usage_usec), false },
	{ "user_usec", "user_usec", "usec", CGSTREAM_F_USER, SAMPLE_OFF(user_usec), false },
	{ "system_usec", "system_usec", "usec", CGSTREAM_F_SYSTEM, SAMPLE_OFF(system_usec),
	  false },
	{ "nice_usec", "nice_usec", "usec", CGSTREAM_F_NICE, SAMPLE_OFF(nice_usec), false },
	{ "nr_periods", "nr_periods", "count", CGSTREAM_F_NR_PERIODS, SAMPLE_OFF(nr_periods),
	  false },
	{ "nr_throttled", "nr_throttled", "count", CGSTREAM_F_NR_THROTTLED,
	  SAMPLE_OFF(nr_throttled), false },
	{ "throttled_usec", "throttled_usec", "usec", CGSTREAM_F_THROTTLED,
	  SAMPLE_OFF(throttled_usec), false },
	{ "nr_bursts", "nr_bursts", "count", CGSTREAM_F_NR_BURSTS, SAMPLE_OFF(nr_bursts), false },
	{ "burst_usec", "burst_usec", "usec", CGSTREAM_F_BURST, SAMPLE_OFF(burst_usec), false },
	/* the publications the kernel skipped (late), since boot */
	{ "flush_missed", CGS_KEY_SKIPPED, "count", CGSTREAM_F_FLUSH_MISSED,
	  SAMPLE_OFF(flush_missed), true },
	/* a text reader knows the directory it opened */
	{ "cgroup_id", NULL, "id", CGSTREAM_F_CGROUP_ID, SAMPLE_OFF(cgroup_id), false },
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
	.kernel_id = CGROUP_STAT_CTRL_CPU,
	.format = CGS_FMT_KEYED,
	.emulated = "cpu.stat",
	.fields = cgs_cpu_fields,
	.n_fields = sizeof(cgs_cpu_fields) / sizeof(cgs_cpu_fields[0]),
};

/* in the order the MEMORY record appends them after memory.stat's keys */
static const struct cgs_aux_file cgs_memory_aux[] = {
	{ "memory.current", "current", CGS_FMT_VALUE, CGS_FILE_MEM_CURRENT, false },
	{ "memory.swap.current", "swap.current", CGS_FMT_VALUE, CGS_FILE_MEM_SWAP, false },
	{ "memory.events", "events.", CGS_FMT_KEYED, CGS_FILE_MEM_EVENTS, false },
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
	.kernel_id = CGROUP_STAT_CTRL_MEMORY,
	.format = CGS_FMT_KEYED,
	.emulated = "memory.stat",
	.aux = cgs_memory_aux,
	.n_aux = sizeof(cgs_memory_aux) / sizeof(cgs_memory_aux[0]),
};

#define DEV_OFF(m)	offsetof(struct cgstream_io_device, m)

/* in struct cgstream_io_device's order, after major and minor */
static const struct cgs_io_field cgs_io_dev_fields[] = {
	{ "rbytes", "bytes", DEV_OFF(rbytes) },
	{ "wbytes", "bytes", DEV_OFF(wbytes) },
	{ "rios", "count", DEV_OFF(rios) },
	{ "wios", "count", DEV_OFF(wios) },
	{ "dbytes", "bytes", DEV_OFF(dbytes) },
	{ "dios", "count", DEV_OFF(dios) },
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
	.kernel_id = CGROUP_STAT_CTRL_IO,
	.format = CGS_FMT_IO,
	.emulated = "io.stat",
	.dev_fields = cgs_io_dev_fields,
	.n_dev_fields = sizeof(cgs_io_dev_fields) / sizeof(cgs_io_dev_fields[0]),
};

/*
 * Pressure: in the order pressure.stream prints them (and its SCHEMA
 * names them), cpu's lines, memory's, io's, irq's (a "full" line only,
 * where the kernel has irq.pressure).  Its values' names are the prefix
 * of the resource and kind, then the key: "memory.full.avg10".
 */
#define CGS_PSI_RESOURCE(r)	{ r, { r ".some.", r ".full." } }
const struct cgs_psi_resource cgs_psi_resources[CGS_PSI_NR_RESOURCES] = {
	CGS_PSI_RESOURCE("cpu"),
	CGS_PSI_RESOURCE("memory"),
	CGS_PSI_RESOURCE("io"),
	CGS_PSI_RESOURCE("irq"),
};

/* in the order the kernel prints them, which is the order of the values */
const struct cgs_psi_key cgs_psi_keys[CGS_PSI_NR_KEYS] = {
	{ "avg10", true },
	{ "avg60", true },
	{ "avg300", true },
	{ "total", false },
};

/* emulation: cpu.pressure is the *.stat file, the others' values follow */
static const struct cgs_aux_file cgs_pressure_aux[] = {
	{ "memory.pressure", "memory", CGS_FMT_PRESSURE, CGS_FILE_PSI_MEMORY, true },
	{ "io.pressure", "io", CGS_FMT_PRESSURE, CGS_FILE_PSI_IO, true },
	{ "irq.pressure", "irq", CGS_FMT_PRESSURE, CGS_FILE_PSI_IRQ, true },
};

const struct cgs_controller cgs_pressure = {
	.name = "pressure",
	.bit = CGSTREAM_CTRL_PRESSURE,
	.index = CGS_PRESSURE,
	.slot = CGS_FILE_PSI_CPU,
	.stat_file = "cpu.pressure",
	.stream_file = "pressure.stream",
	.subtree_file = "pressure.stream.subtree",
	.interval_file = "pressure.stream_interval",
	.kernel_id = CGROUP_STAT_CTRL_PRESSURE,
	.format = CGS_FMT_PRESSURE,
	.core = true,
	.empty_is_none = true,
	.stat_name = "cpu",
	.emulated = "*.pressure",
	.aux = cgs_pressure_aux,
	.n_aux = sizeof(cgs_pressure_aux) / sizeof(cgs_pressure_aux[0]),
};

const struct cgs_controller *const cgs_controllers[CGS_NR_CTRL] = {
	[CGS_CPU] = &cgs_cpu,
	[CGS_MEMORY] = &cgs_memory,
	[CGS_IO] = &cgs_io,
	[CGS_PRESSURE] = &cgs_pressure,
};

const struct cgs_psi_resource *cgs_psi_resource_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < CGS_PSI_NR_RESOURCES; i++) {
		const char *r = cgs_psi_resources[i].name;

		if (strlen(r) == len && memcmp(r, name, len) == 0)
			return &cgs_psi_resources[i];
	}
	return NULL;
}

const struct cgs_controller *cgs_controller_of_kernel(unsigned int id)
{
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if (cgs_controllers[i]->kernel_id == id)
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

CGS_EXPORT const char *cgstream_controller_file(unsigned int ctrl, unsigned int which)
{
	const struct cgs_controller *c = cgs_controller_of_bit(ctrl);

	if (!c)
		return NULL;
	switch (which) {
	case CGSTREAM_FILE_STAT:
		return c->emulated;
	case CGSTREAM_FILE_STREAM:
		return c->stream_file;
	case CGSTREAM_FILE_SUBTREE:
		return c->subtree_file;
	case CGSTREAM_FILE_INTERVAL:
		return c->interval_file;
	}
	return NULL;
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
