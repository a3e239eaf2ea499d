// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the stress programs: see common.h. */
#define _GNU_SOURCE
#include "common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * NSEC_PER_MSEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 of the seed: never the all-zero state */
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	r->s = (z ^ (z >> 31)) | 1;
}

uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo) + 1);
}

bool rng_pct(struct rng *r, unsigned int pct)
{
	return rng_below(r, 100) < pct;
}

int cgroup2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPER */
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (strlen(mnt) >= len)
			continue;
		strcpy(out, mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

void path_join(char *out, size_t len, const char *dir, const char *name)
{
	if (snprintf(out, len, "%s/%s", dir, name) >= (int)len) {
		fprintf(stderr, "path %s/%s too long\n", dir, name);
		exit(EXIT_FAIL);
	}
}

int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

long interval_get(const char *root)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t n;
	long ms;

	path_join(path, sizeof(path), root, INTERVAL_FILE);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	errno = 0;
	ms = strtol(buf, &end, 10);
	if (errno || end == buf || strcmp(end, "\n"))
		return -EINVAL;
	return ms;
}

int interval_set(const char *root, long ms)
{
	char path[PATH_MAX], text[32];

	path_join(path, sizeof(path), root, INTERVAL_FILE);
	snprintf(text, sizeof(text), "%ld\n", ms);
	return write_file(path, text);
}

static const char *const stream_key_names[K_NR] = {
	[K_USAGE] = "usage_usec",
	[K_USER] = "user_usec",
	[K_SYSTEM] = "system_usec",
	[K_NICE] = "nice_usec",
	[K_NR_PERIODS] = "nr_periods",
	[K_NR_THROTTLED] = "nr_throttled",
	[K_THROTTLED_USEC] = "throttled_usec",
	[K_NR_BURSTS] = "nr_bursts",
	[K_BURST_USEC] = "burst_usec",
	[K_FLUSH_SEQ] = CGROUP_STAT_STREAM_KEY_SEQ,
	[K_FLUSH_TIME] = CGROUP_STAT_STREAM_KEY_TIME,
	[K_FLUSH_MISSED] = CGROUP_STAT_STREAM_KEY_MISSED,
};

int parse_stream(const char *text, size_t len, struct stream_sample *s, char *why)
{
	size_t pos = 0;

	memset(s, 0, sizeof(*s));
	if (!len || text[len - 1] != '\n') {
		snprintf(why, 128, "%zu bytes not ending in a newline", len);
		return -EINVAL;
	}
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		const char *sp = memchr(line, ' ', nl - line);
		size_t klen;
		uint64_t v = 0;
		int k, digits = 0;

		if (!sp || sp == line) {
			snprintf(why, 128, "line %.40s has no 'key value'", line);
			return -EINVAL;
		}
		klen = sp - line;
		for (const char *p = sp + 1; p < nl; p++, digits++) {
			if (!isdigit((unsigned char)*p) || v > (UINT64_MAX - 9) / 10) {
				snprintf(why, 128, "bad value in %.*s", (int)(nl - line), line);
				return -EINVAL;
			}
			v = v * 10 + (*p - '0');
		}
		if (!digits) {
			snprintf(why, 128, "no value in %.*s", (int)(nl - line), line);
			return -EINVAL;
		}
		for (k = 0; k < K_NR; k++)
			if (strlen(stream_key_names[k]) == klen &&
			    !memcmp(stream_key_names[k], line, klen))
				break;
		if (k < K_NR) {
			if (s->present & (1u << k)) {
				snprintf(why, 128, "key %s twice", stream_key_names[k]);
				return -EINVAL;
			}
			s->present |= 1u << k;
			s->v[k] = v;
		}
		pos = nl - text + 1;
	}
	if ((s->present & STREAM_KEYS_REQUIRED) != STREAM_KEYS_REQUIRED) {
		snprintf(why, 128, "keys missing (have mask %#x)", s->present);
		return -EINVAL;
	}
	if ((s->present & STREAM_KEYS_BANDWIDTH) &&
	    (s->present & STREAM_KEYS_BANDWIDTH) != STREAM_KEYS_BANDWIDTH) {
		snprintf(why, 128, "some bandwidth keys only (mask %#x)", s->present);
		return -EINVAL;
	}
	return 0;
}

uint64_t dir_id(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* moves every process of @cg to the cgroup2 root, so that @cg can go */
static void evacuate(const char *cg)
{
	char path[PATH_MAX], root[PATH_MAX], buf[8192], *line, *save;

	if (cgroup2_mount(root, sizeof(root)))
		return;
	path_join(path, sizeof(path), cg, "cgroup.procs");
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return;
	path_join(path, sizeof(path), root, "cgroup.procs");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		write_file(path, line);
}

int remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int ret = 0, tries;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char child[PATH_MAX];

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path_join(child, sizeof(child), path, de->d_name);
		if (remove_tree(child) && !ret)
			ret = -EBUSY;
	}
	closedir(d);
	/* a task that just exited keeps a cgroup populated for a moment */
	for (tries = 0; tries < 100; tries++) {
		if (!rmdir(path) || errno == ENOENT)
			return ret;
		if (errno != EBUSY)
			return -errno;
		evacuate(path);
		sleep_ms(20);
	}
	return -EBUSY;
}

int raise_nofile(unsigned long want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}
