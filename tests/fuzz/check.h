/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fuzz targets' assertion: a broken invariant is a crash libFuzzer keeps. */
#ifndef CGSTREAM_FUZZ_CHECK_H
#define CGSTREAM_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();					\
		}							\
	} while (0)

#endif
