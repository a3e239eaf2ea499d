/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each controller reports, described once: the kernel files that
 * carry it (its *.stat file read in emulation, its stream and subtree
 * files, its interval, and for memory the files whose values its records
 * append: memory.current, memory.swap.current, memory.events), its
 * binary record type, and for cpu its fixed fields (name, key in the
 * text, unit, present bit, where it lives in struct cgstream_sample and
 * in the record).  The text parsers, the record decoder, the modes that
 * open and read the files, the intervals and cgstream_sample_field()
 * (which the command's printers and pycgstream read) all walk these
 * tables, so a field or a file added here appears everywhere at once.
 *
 * cpu's fields are fixed and known at build time.  memory names its
 * values at run time (a KEYS record, or the text of its files): its
 * table carries no fields, and the names are shared by every cgroup that
 * reports the same list (memio.c).  io's values come per device, six
 * counters each (struct cgstream_io_device).
 */
#ifndef CGSTREAM_FIELDS_H
#define CGSTREAM_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* one u64 of a sample */
struct cgs_field {
	const char *name;	/* the struct cgstream_sample member; JSON's, Python's name */
	const char *key;	/* its key in the *.stat(.stream) text; NULL: not in the text */
	const char *unit;	/* "usec", "count", "seq", "id" */
	uint64_t bit;		/* CGSTREAM_F_*: in sample.present when it was reported */
	uint16_t sample_off;	/* of its u64 in struct cgstream_sample */
	uint16_t record_off;	/* of its u64 in the record; 0: not in the record */
	uint32_t record_flag;	/* the record flag without which it is absent; 0: always */
};

/*
 * One counter of an io device: io.stat's key (struct cgstream_io_device's
 * member, JSON's and Python's name), where it lives in the library's
 * struct and in the kernel's IO record.
 */
struct cgs_io_field {
	const char *name;	/* "rbytes" */
	const char *unit;	/* "bytes", "count" */
	uint16_t dev_off;	/* of its u64 in struct cgstream_io_device */
	uint16_t record_off;	/* in struct cgroup_stat_stream_io_device */
};

/* the controllers, in lead order: an object's lead is the first it reads */
enum cgs_ctrl {
	CGS_CPU,
	CGS_MEMORY,
	CGS_IO,
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
	CGS_NR_FILES,
};

/*
 * A file whose values follow the *.stat file's (memory.current, ...):
 * not flushed statistics, read as they are in every mode but SUBTREE
 * (whose records carry them).  Absent where the cgroup lacks it (the
 * root, a kernel without swap accounting).
 */
struct cgs_aux_file {
	const char *file;	/* "memory.current" */
	const char *name;	/* a single value: its name ("current"); keyed:
				 * the prefix of its keys ("events.") */
	bool keyed;		/* flat-keyed ("key value" lines) */
	uint8_t slot;		/* enum cgs_file */
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
	const char *interval_file;	/* the root's flush interval */
	uint16_t record_type;		/* its records in the subtree file */
	uint16_t record_min_size;	/* the size of its record as first defined */
	const struct cgs_aux_file *aux;	/* read beside its *.stat file */
	size_t n_aux;
	const struct cgs_field *fields;	/* cpu: the fixed fields */
	size_t n_fields;
	const struct cgs_io_field *dev_fields;	/* io: each device's counters */
	size_t n_dev_fields;
};

extern const struct cgs_controller cgs_cpu, cgs_memory, cgs_io;
/* by enum cgs_ctrl */
extern const struct cgs_controller *const cgs_controllers[CGS_NR_CTRL];

/* the smallest record of any type (type 0, KEYS: its 16-byte header) */
#define CGS_RECORD_MIN_SIZE	16u
/* the common header of CPU, MEMORY and IO records */
#define CGS_RECORD_HDR_SIZE	40u

/* the controller whose records have @type; NULL: KEYS, or a type not decoded here */
const struct cgs_controller *cgs_controller_of_record(unsigned int type);
/* the controller of one CGSTREAM_CTRL_* bit; NULL for anything else */
const struct cgs_controller *cgs_controller_of_bit(unsigned int bit);
/* io's device counter named @key[0..@len); NULL: not one */
const struct cgs_io_field *cgs_io_field_by_key(const char *key, size_t len);
/* @c's field whose text key is @key[0..@len); NULL: a key it does not know */
const struct cgs_field *cgs_field_by_key(const struct cgs_controller *c, const char *key,
					 size_t len);

#endif
