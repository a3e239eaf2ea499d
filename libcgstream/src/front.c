// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Small things every front end (the cgstream command, pycgstream's
 * exporter) needs, kept here once: which arguments are distinct subtrees,
 * a limit of open files fit for many cgroups, systemd's readiness
 * protocol.  Their messages are explain.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

/* @path is @root or below it */
static bool cgs_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return true;
	return !strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0');
}

CGS_EXPORT size_t cgstream_distinct_subtrees(const char *const *paths, size_t n, uint8_t *keep)
{
	size_t kept = 0;

	if (!paths || !keep)
		return 0;
	for (size_t i = 0; i < n; i++) {
		keep[i] = 1;
		for (size_t j = 0; j < n && keep[i]; j++)
			if (j != i && cgs_under(paths[i], paths[j]) &&
			    (strcmp(paths[i], paths[j]) || j < i))
				keep[i] = 0;	/* in that one's tree */
		kept += keep[i];
	}
	return kept;
}

CGS_EXPORT int cgstream_raise_fd_limit(uint64_t *limit)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	if (limit)
		*limit = (uint64_t)rl.rlim_cur;
	return 0;
}

CGS_EXPORT int cgstream_sd_notify(const char *state)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	ssize_t n;
	int fd, err;

	if (!state)
		return -EINVAL;
	if (!e || !*e)
		return 0;	/* not started by systemd (or not as Type=notify) */
	if (e[0] != '/' && e[0] != '@')
		return -EAFNOSUPPORT;	/* vsock: an address family we do not speak */
	len = strlen(e);
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, e, len);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	err = errno;
	close(fd);
	return n < 0 ? -err : 1;
}
