/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each controller reports, described once: the kernel files that
 * carry it, its binary record type, and its fields (name, key in the text,
 * unit, present bit, where it lives in struct cgstream_sample and in the
 * record).  The text parser, the record decoder and cgstream_sample_field()
 * (which the command's printers and pycgstream read) all walk this table,
 * so a field added here appears everywhere at once.
 *
 * cpu's fields are fixed and known at build time.  The controllers still
 * to come fit beside it: memory names its values at run time (a KEYS
 * record, or memory.stat's text), so its table will carry no fields but a
 * decode hook that reads the names; io's values come per device.  Both
 * keep the record header and the file names of struct cgs_controller.
 */
#ifndef CGSTREAM_FIELDS_H
#define CGSTREAM_FIELDS_H

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

/* one controller: its files, its record, its fields */
struct cgs_controller {
	const char *name;		/* "cpu" */
	const char *stat_file;		/* read in emulation: flushes */
	const char *stream_file;	/* per cgroup, text, as of the last flush */
	const char *subtree_file;	/* a whole subtree, binary records */
	const char *interval_file;	/* the root's flush interval */
	uint16_t record_type;		/* its records in the subtree file */
	uint16_t record_min_size;	/* the size of its record as first defined */
	const struct cgs_field *fields;
	size_t n_fields;
};

extern const struct cgs_controller cgs_cpu;

/* the smallest record of any type (type 0, KEYS: its 16-byte header) */
#define CGS_RECORD_MIN_SIZE	16u

/* the controller whose records have @type; NULL: a type not decoded here */
const struct cgs_controller *cgs_controller_of_record(unsigned int type);
/* @c's field whose text key is @key[0..@len); NULL: a key it does not know */
const struct cgs_field *cgs_field_by_key(const struct cgs_controller *c, const char *key,
					 size_t len);

#endif
