/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each controller reports, described once: the kernel files that
 * carry it (its *.stat file read in emulation, its stream and subtree
 * files, its interval, and for memory the files whose values its records
 * append: memory.current, memory.swap.current, memory.events), how their
 * text is written, its number in the kernel's SNAPSHOT records, and the
 * fields the library's API promises by name (struct cgstream_sample's for
 * cpu, struct cgstream_io_device's for io).  The text parsers, the modes
 * that open and read the files, the intervals, the messages and
 * cgstream_sample_field() (which the command's printers and pycgstream
 * read) walk these tables.
 *
 * Pressure stall information is a "controller" here too, though the
 * kernel's are cgroup core files: emulation reads cpu.pressure (its
 * *.stat file) and memory.pressure, io.pressure, irq.pressure (its files
 * read beside it, in emulation only: pressure.stream has them all), and
 * names each value "<resource>.<some|full>.<key>" (cgs_psi_*).
 *
 * The values themselves are named at run time, for every controller:
 * the kernel's SCHEMA record names them in SUBTREE mode, the text's keys
 * elsewhere (values.c keeps the names, shared by every cgroup that
 * reports the same list).  The tables here only say where the API's fixed
 * fields are among those names, and are the emulation's names of io's
 * counters (io.stat's keys, as the text has them).
 */
#ifndef CGSTREAM_FIELDS_H
#define CGSTREAM_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One u64 of a sample.  Where it comes from: a value of the kernel's (its
 * name in the SCHEMA and the text: @key), or the publication the values
 * are as of (@pub: the stream text's own keys, the SNAPSHOT record's
 * fields), or the cgroup (its id).
 */
struct cgs_field {
	const char *name;	/* the struct cgstream_sample member; JSON's, Python's name */
	const char *key;	/* its name among the kernel's values, or its key in the
				 * stream text (@pub); NULL: neither (the id) */
	const char *unit;	/* "usec", "count", "seq", "id" */
	uint64_t bit;		/* CGSTREAM_F_*: in sample.present when it was reported */
	uint16_t sample_off;	/* of its u64 in struct cgstream_sample */
	bool pub;		/* the publication's, not a value of the cgroup's */
};

/*
 * One counter of an io device: io.stat's key (struct cgstream_io_device's
 * member, JSON's and Python's name, the kernel's name of the value in
 * its SCHEMA), where it lives in the library's struct.
 */
struct cgs_io_field {
	const char *name;	/* "rbytes" */
	const char *unit;	/* "bytes", "count" */
	uint16_t dev_off;	/* of its u64 in struct cgstream_io_device */
};

/* the keys a <ctrl>.stat.stream text adds after the controller's own */
#define CGS_KEY_SEQ		"publication_seq"
#define CGS_KEY_TIME		"publication_time_usec"
#define CGS_KEY_SKIPPED		"publications_skipped"

/* the controllers, in lead order: an object's lead is the first it reads */
enum cgs_ctrl {
	CGS_CPU,
	CGS_MEMORY,
	CGS_IO,
	CGS_PRESSURE,
	CGS_NR_CTRL,
};

/* the files a group or tree member holds open, by what they carry */
enum cgs_file {
	CGS_FILE_CPU,		/* cpu.stat or cpu.stat.stream */
	CGS_FILE_MEMORY,	/* memory.stat or memory.stat.stream */
	CGS_FILE_MEM_CURRENT,	/* memory.current */
	CGS_FILE_MEM_SWAP,	/* memory.swap.current */
	CGS_FILE_MEM_EVENTS,	/* memory.events */
	CGS_FILE_IO,		/* io.stat or io.stat.stream */
	CGS_FILE_PSI_CPU,	/* cpu.pressure or pressure.stream */
	CGS_FILE_PSI_MEMORY,	/* memory.pressure */
	CGS_FILE_PSI_IO,	/* io.pressure */
	CGS_FILE_PSI_IRQ,	/* irq.pressure */
	CGS_NR_FILES,
};

/* how a text file is written: which parser reads it (parse.c) */
enum cgs_format {
	CGS_FMT_KEYED,		/* "key value" lines: cpu.stat, memory.stat, memory.events */
	CGS_FMT_VALUE,		/* one value: memory.current */
	CGS_FMT_IO,		/* a line per device, "MAJ:MIN key=value...": io.stat */
	CGS_FMT_PRESSURE,	/* "some avg10=1.23 ... total=N" lines: cpu.pressure;
				 * pressure.stream: each line after its resource */
};

/*
 * A file whose values follow the *.stat file's (memory.current, ...):
 * not flushed statistics, read as they are in every mode but SUBTREE
 * (whose records carry them), or (@emulation_only) one whose values the
 * controller's stream text carries too (memory.pressure: pressure.stream
 * has them).  Absent where the cgroup lacks it (the root, a kernel
 * without swap accounting or irq.pressure).
 */
struct cgs_aux_file {
	const char *file;	/* "memory.current" */
	const char *name;	/* a single value: its name ("current"); keyed:
				 * the prefix of its keys ("events."); pressure:
				 * its resource ("memory") */
	uint8_t format;		/* enum cgs_format */
	uint8_t slot;		/* enum cgs_file */
	bool emulation_only;	/* read in FALLBACK mode only */
};

/*
 * A resource of pressure stall information: its name, first in each line
 * of pressure.stream, and the prefixes of its values' names by the kind
 * of stall ("cpu.some.", "cpu.full.").
 */
struct cgs_psi_resource {
	const char *name;	/* "cpu" */
	const char *prefix[2];	/* by enum cgs_psi_kind */
};

enum cgs_psi_kind {
	CGS_PSI_SOME,		/* "some": at least one task stalled */
	CGS_PSI_FULL,		/* "full": every non-idle task stalled */
	CGS_PSI_NR_KINDS,
};

/* a key of a pressure line: "avg10" (hundredths of a percent), "total" (usec) */
struct cgs_psi_key {
	const char *name;
	bool percent;		/* "1.23": two decimals, the value 123 */
};

/* one controller: its files, its record, its fields */
struct cgs_controller {
	const char *name;		/* "cpu" */
	uint32_t bit;			/* CGSTREAM_CTRL_* */
	uint8_t index;			/* enum cgs_ctrl */
	uint8_t slot;			/* enum cgs_file of its *.stat(.stream) */
	const char *stat_file;		/* read in emulation: flushes */
	const char *stream_file;	/* per cgroup, text, as of the last flush */
	const char *subtree_file;	/* a whole subtree, binary records */
	const char *interval_file;	/* the root's publication interval */
	uint16_t kernel_id;		/* CGROUP_STAT_CTRL_*: its SNAPSHOT records' */
	uint8_t format;			/* enum cgs_format of its *.stat and stream texts */
	bool core;			/* cgroup core files (pressure), not a controller
					 * cgroup.controllers lists */
	bool empty_is_none;		/* no values at all: the cgroup has none of it
					 * (pressure.stream and its records where
					 * cgroup.pressure is 0) */
	const char *stat_name;		/* of the values of its *.stat file: pressure's
					 * resource ("cpu"); else NULL */
	const char *emulated;		/* what its emulation reads, as messages name it */
	const struct cgs_aux_file *aux;	/* read beside its *.stat file */
	size_t n_aux;
	const struct cgs_field *fields;	/* cpu: the fixed fields */
	size_t n_fields;
	const struct cgs_io_field *dev_fields;	/* io: each device's counters */
	size_t n_dev_fields;
};

extern const struct cgs_controller cgs_cpu, cgs_memory, cgs_io, cgs_pressure;
/* by enum cgs_ctrl */
extern const struct cgs_controller *const cgs_controllers[CGS_NR_CTRL];

/* the controller the kernel numbers @id (CGROUP_STAT_CTRL_*); NULL: another */
const struct cgs_controller *cgs_controller_of_kernel(unsigned int id);
/* the controller of one CGSTREAM_CTRL_* bit; NULL for anything else */
const struct cgs_controller *cgs_controller_of_bit(unsigned int bit);
/* io's device counter named @key[0..@len); NULL: not one */
const struct cgs_io_field *cgs_io_field_by_key(const char *key, size_t len);
/* @c's field whose text key is @key[0..@len); NULL: a key it does not know */
const struct cgs_field *cgs_field_by_key(const struct cgs_controller *c, const char *key,
					 size_t len);

/* the resources of pressure (cpu, memory, io, irq) and the keys of its lines */
#define CGS_PSI_NR_RESOURCES	4
#define CGS_PSI_NR_KEYS		4
extern const struct cgs_psi_resource cgs_psi_resources[CGS_PSI_NR_RESOURCES];
extern const struct cgs_psi_key cgs_psi_keys[CGS_PSI_NR_KEYS];
/* the resource named @name[0..@len); NULL: one this library does not know */
const struct cgs_psi_resource *cgs_psi_resource_by_name(const char *name, size_t len);

#endif
