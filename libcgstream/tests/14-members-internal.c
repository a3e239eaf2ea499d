// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether a cgroup should still have a controller's files
 * (cgs_cg_keeps_files(), src/members.c), on made-up cgroup directories:
 * a stream file that answers ENODEV while its cgroup's directory is there
 * means that the controller went for that cgroup (its cgroup.controllers
 * no longer lists it; pressure: its cgroup.pressure is 0), and the member
 * stays without it; or that the cgroup's rmdir is under way (its stream
 * files answer so before its directory goes), and the member is REMOVED.
 * cpu's files are on every cgroup; a controller's name is a whole word of
 * cgroup.controllers; a file that cannot be read says nothing went.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "internal.h"

static char dir[] = "/tmp/cgs-members-XXXXXX";

static void put(const char *name, const char *text)
{
	char p[PATH_MAX];

	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!text) {
		T_EQ(unlink(p), 0);
		return;
	}
	f = fopen(p, "w");
	T_ASSERT(f != NULL);
	T_EQ(fputs(text, f) >= 0, 1);
	T_EQ(fclose(f), 0);
}

int main(void)
{
	struct cgs_cg m = { .path = dir };

	T_ASSERT(mkdtemp(dir) != NULL);
	/* nothing to read: nothing says a controller went */
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_memory));
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_pressure));

	put("cgroup.controllers", "cpuset cpu io memory pids\n");
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_cpu));
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_memory));
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_io));
	put("cgroup.controllers", "cpu io pids\n");
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_memory));
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_io));
	put("cgroup.controllers", "memory\n");
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_memory));
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_io));
	/* a whole word: neither "iomem" nor "xmemory" is memory or io */
	put("cgroup.controllers", "iomem xmemory memoryx\n");
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_memory));
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_io));
	put("cgroup.controllers", "");
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_memory));
	/* cpu.stat.stream is on every cgroup, whatever is enabled */
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_cpu));

	/* pressure: by cgroup.pressure, not cgroup.controllers */
	put("cgroup.pressure", "1\n");
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_pressure));
	put("cgroup.pressure", "0\n");
	T_ASSERT(!cgs_cg_keeps_files(&m, &cgs_pressure));
	put("cgroup.pressure", NULL);
	T_ASSERT(cgs_cg_keeps_files(&m, &cgs_pressure));

	put("cgroup.controllers", NULL);
	T_EQ(rmdir(dir), 0);
	t_log("members: all passed");
	return 0;
}
