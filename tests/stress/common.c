// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the stress programs: see common.h. */
#define _GNU_SOURCE
#include "common.h"

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

long interval_get(const char *root, const char *stem)
{
	char path[PATH_MAX], name[64], buf[64], *end;
	ssize_t n;
	long ms;

	snprintf(name, sizeof(name), "%s%s", stem, INTERVAL_SUFFIX);
	path_join(path, sizeof(path), root, name);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	errno = 0;
	ms = strtol(buf, &end, 10);
	if (errno || end == buf || strcmp(end, "\n"))
		return -EINVAL;
	return ms;
}

int interval_set(const char *root, const char *stem, long ms)
{
	char path[PATH_MAX], name[64], text[32];

	snprintf(name, sizeof(name), "%s%s", stem, INTERVAL_SUFFIX);
	path_join(path, sizeof(path), root, name);
	snprintf(text, sizeof(text), "%ld\n", ms);
	return write_file(path, text);
}

int parse_u64(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || *v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (*p - '0');
	}
	return 0;
}

int parse_pub_tail(const char *text, size_t len, struct pub_tail *t, size_t *body, char *why)
{
	static const char *const keys[3] = {
		"publication_seq ", "publication_time_usec ", "publications_skipped ",
	};
	uint64_t *vals[3] = { &t->seq, &t->time_usec, &t->skipped };
	size_t end = len, start;
	int k;

	if (!len || text[len - 1] != '\n') {
		snprintf(why, 128, "%zu bytes not ending in a newline", len);
		return -EINVAL;
	}
	for (k = 2; k >= 0; k--) {
		size_t klen = strlen(keys[k]);

		/* the line [start, end - 1), its newline at end - 1 */
		for (start = end - 1; start && text[start - 1] != '\n'; start--)
			;
		if (end - 1 - start < klen || memcmp(text + start, keys[k], klen) ||
		    parse_u64(text + start + klen, text + end - 1, vals[k])) {
			snprintf(why, 128, "'%.*s' where the line '%s<number>' belongs",
				 (int)(end - 1 - start > 60 ? 60 : end - 1 - start), text + start,
				 keys[k]);
			return -EINVAL;
		}
		end = start;
		if (!end && k) {
			snprintf(why, 128, "%s is the first line", keys[k]);
			return -EINVAL;
		}
	}
	*body = end;
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

/* ------------------------------------------------------------------ */
/* snapshots, format 2                                                  */

void snap_decoder_init(struct snap_decoder *d, unsigned int controller)
{
	d->phase = 0;
	d->controller = controller;
	memset(&d->snap, 0, sizeof(d->snap));
	d->schema.nr_values = d->schema.nr_device_values = d->schema.device_size = 0;
	d->schema.size = 0;
}

#define WHY(...) (snprintf(why, 160, __VA_ARGS__), -EINVAL)

static int decode_snapshot(struct snap_decoder *d, const unsigned char *p, uint32_t size,
			   char *why)
{
	struct cgroup_stat_snapshot s;

	if (size != sizeof(s))
		return WHY("SNAPSHOT of %u bytes, not %zu", size, sizeof(s));
	memcpy(&s, p, sizeof(s));
	if (s.hdr.flags & ~(CGROUP_STAT_SNAPSHOT_F_CHANGES | CGROUP_STAT_SNAPSHOT_F_LOST |
			    CGROUP_STAT_SNAPSHOT_F_STOPPED))
		return WHY("SNAPSHOT flags %#x", s.hdr.flags);
	if (s.version != CGROUP_STAT_STREAM_VERSION || s.reserved ||
	    (d->controller && s.controller != d->controller))
		return WHY("SNAPSHOT version %u controller %u reserved %u (want version %d, "
			   "controller %u)", s.version, s.controller, s.reserved,
			   CGROUP_STAT_STREAM_VERSION, d->controller);
	if (!s.seq || !!s.base_seq != !!(s.hdr.flags & CGROUP_STAT_SNAPSHOT_F_CHANGES) ||
	    s.base_seq > s.seq)
		return WHY("SNAPSHOT seq %llu base_seq %llu flags %#x", (unsigned long long)s.seq,
			   (unsigned long long)s.base_seq, s.hdr.flags);
	d->snap = s;
	return 0;
}

static int decode_schema(struct snap_decoder *d, const unsigned char *p, uint32_t size,
			 char *why)
{
	struct cgroup_stat_schema h;
	struct snap_schema *s = &d->schema;
	uint32_t i, n, off = sizeof(h);

	if (size < sizeof(h) + 8 || size - sizeof(h) > sizeof(s->names))
		return WHY("SCHEMA of %u bytes", size);
	memcpy(&h, p, sizeof(h));
	n = h.nr_values + h.nr_device_values;
	if (h.hdr.flags || h.reserved || !n || n > SCHEMA_NAMES_MAX ||
	    h.device_size != (h.nr_device_values ? 8 + 8 * h.nr_device_values : 0))
		return WHY("SCHEMA flags %u reserved %u nr_values %u nr_device_values %u "
			   "device_size %u", h.hdr.flags, h.reserved, h.nr_values,
			   h.nr_device_values, h.device_size);
	memcpy(s->names, p + off, size - off);
	for (i = 0; i < n; i++) {
		const char *name = s->names + (off - sizeof(h));
		size_t len = strnlen(name, size - off);

		if (!len || len == size - off)
			return WHY("SCHEMA name %u of %u is %s", i, n, len ? "not terminated" : "empty");
		s->name[i] = name;
		off += len + 1;
	}
	if (size - off >= 8)
		return WHY("SCHEMA: %u bytes after the names", size - off);
	for (; off < size; off++)
		if (p[off])
			return WHY("SCHEMA: padding byte at %u is %#x", off, p[off]);
	s->nr_values = h.nr_values;
	s->nr_device_values = h.nr_device_values;
	s->device_size = h.device_size;
	s->size = size;
	return 0;
}

static int decode_cgroup(struct snap_decoder *d, const unsigned char *p, uint32_t size,
			 struct snap_rec *r, char *why)
{
	struct cgroup_stat_cgroup h;
	unsigned int known = CGROUP_STAT_CGROUP_F_LATER | CGROUP_STAT_CGROUP_F_PARTIAL;
	size_t want;

	memcpy(&h.hdr, p, sizeof(h.hdr));
	if (size < sizeof(h))
		return WHY("a %s record of %u bytes", h.hdr.type == CGROUP_STAT_REC_CGROUP ?
			   "CGROUP" : "REMOVED", size);
	memcpy(&h, p, sizeof(h));
	if (h.hdr.type == CGROUP_STAT_REC_CGROUP && (d->snap.hdr.flags & CGROUP_STAT_SNAPSHOT_F_CHANGES))
		known |= CGROUP_STAT_CGROUP_F_NEW;
	if (h.hdr.type == CGROUP_STAT_REC_REMOVED)
		known = CGROUP_STAT_CGROUP_F_PARTIAL;
	if (h.hdr.flags & ~known)
		return WHY("%s record of cgroup %llu: flags %#x", h.hdr.type == CGROUP_STAT_REC_CGROUP ?
			   "CGROUP" : "REMOVED", (unsigned long long)h.id, h.hdr.flags);
	if (h.nr_values > d->schema.nr_values || (h.nr_devices && !d->schema.device_size))
		return WHY("cgroup %llu: %u values, %u devices; the SCHEMA has %u values, "
			   "devices of %u bytes", (unsigned long long)h.id, h.nr_values,
			   h.nr_devices, d->schema.nr_values, d->schema.device_size);
	want = sizeof(h) + 8 * (size_t)h.nr_values + (size_t)h.nr_devices * d->schema.device_size;
	if (size != want)
		return WHY("cgroup %llu: a record of %u bytes, its %u values and %u devices take %zu",
			   (unsigned long long)h.id, size, h.nr_values, h.nr_devices, want);
	if (!h.id || h.id == h.parent_id)
		return WHY("cgroup %llu parent %llu", (unsigned long long)h.id,
			   (unsigned long long)h.parent_id);
	r->type = h.hdr.type;
	r->flags = h.hdr.flags;
	r->size = size;
	r->id = h.id;
	r->parent_id = h.parent_id;
	r->nr_values = h.nr_values;
	r->nr_devices = h.nr_devices;
	r->values = (const uint64_t *)(p + sizeof(h));
	r->devices = p + sizeof(h) + 8 * (size_t)h.nr_values;
	return 0;
}

int snap_next(struct snap_decoder *d, const void *buf, size_t len, size_t *off,
	      struct snap_rec *r, char *why)
{
	const unsigned char *p = (const unsigned char *)buf + *off;
	struct cgroup_stat_rec h;
	int ret;

	if (*off == len)
		return 0;
	if (len - *off < sizeof(h) || ((uintptr_t)p & 7))
		return WHY("%zu bytes (at %p) are no record header", len - *off, (const void *)p);
	memcpy(&h, p, sizeof(h));
	if (h.size < 8 || h.size % 8 || h.size > len - *off)
		return WHY("a record of %u bytes (type %u) with %zu bytes left", h.size, h.type,
			   len - *off);
	switch (h.type) {
	case CGROUP_STAT_REC_SNAPSHOT:
		if (d->phase != 0)
			return WHY("a second SNAPSHOT record");
		ret = decode_snapshot(d, p, h.size, why);
		d->phase = 1;
		break;
	case CGROUP_STAT_REC_SCHEMA:
		if (d->phase != 1)
			return WHY("a SCHEMA record %s", d->phase ? "twice" : "before SNAPSHOT");
		ret = decode_schema(d, p, h.size, why);
		d->phase = 2;
		break;
	case CGROUP_STAT_REC_REMOVED:
	case CGROUP_STAT_REC_CGROUP:
		if (d->phase < 2 || (h.type == CGROUP_STAT_REC_REMOVED && d->phase == 3))
			return WHY("a %s record %s", h.type == CGROUP_STAT_REC_CGROUP ? "CGROUP" :
				   "REMOVED", d->phase < 2 ? "before SNAPSHOT and SCHEMA" :
				   "after a CGROUP record");
		ret = decode_cgroup(d, p, h.size, r, why);
		if (h.type == CGROUP_STAT_REC_CGROUP)
			d->phase = 3;
		break;
	default:
		return WHY("a record of unknown type %u (%u bytes)", h.type, h.size);
	}
	if (ret)
		return ret;
	*off += h.size;
	return h.type == CGROUP_STAT_REC_SNAPSHOT || h.type == CGROUP_STAT_REC_SCHEMA ? 2 : 1;
}

const struct cgroup_stat_device *snap_device(const struct snap_decoder *d,
					     const struct snap_rec *r, unsigned int k)
{
	return (const struct cgroup_stat_device *)(r->devices + (size_t)k * d->schema.device_size);
}

int schema_index(const struct snap_schema *s, const char *name)
{
	for (uint32_t i = 0; i < s->nr_values + s->nr_device_values; i++)
		if (!strcmp(s->name[i], name))
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* text                                                                 */

/* one device line: "MAJ:MIN ", then nothing or @names' values, then (@classic) policies' */
static int parse_device_line(const char *const *names, const char *line, const char *nl,
			     bool classic, struct stat_values *s, char *why)
{
	const char *colon = memchr(line, ':', nl - line), *sp, *p;
	unsigned int i = 0, n = 0, k = s->nr_devices;
	uint64_t maj, min;

	while (names[n])
		n++;
	if (k == STAT_DEVICES_MAX)
		return WHY("more than %d devices", STAT_DEVICES_MAX);
	sp = colon ? memchr(colon, ' ', nl - colon) : NULL;
	if (!sp || parse_u64(line, colon, &maj) || parse_u64(colon + 1, sp, &min) ||
	    maj > UINT32_MAX || min > UINT32_MAX)
		return WHY("line '%.*s' is not 'MAJ:MIN ...'", (int)(nl - line), line);
	memset(&s->dev[k], 0, sizeof(s->dev[k]));
	s->dev[k].major = maj;
	s->dev[k].minor = min;
	for (p = sp + 1; p < nl; p = sp + 1) {
		const char *eq;

		sp = memchr(p, ' ', nl - p);
		sp = sp ? sp : nl;
		eq = memchr(p, '=', sp - p);
		if (i < n && eq && (size_t)(eq - p) == strlen(names[i]) && !memcmp(p, names[i], eq - p)) {
			if (parse_u64(eq + 1, sp, &s->dev[k].v[i]))
				return WHY("bad value in '%.*s'", (int)(nl - line), line);
			i++;
		} else if (!classic || (i && i < n) || !eq || eq == p) {
			return WHY("'%.*s' in '%.*s' is not the next of %s=..%s=", (int)(sp - p), p,
				   (int)(nl - line), line, names[0], names[n - 1]);
		} else {
			i = n;	/* a policy's field: the values are behind */
		}
	}
	if (i && i < n)
		return WHY("'%.*s' stops after %u values", (int)(nl - line), line, i);
	for (unsigned int j = 0; j < k; j++)
		if (s->dev[j].major == maj && s->dev[j].minor == min)
			return WHY("device %u:%u twice", (unsigned int)maj, (unsigned int)min);
	s->nr_devices++;
	return 0;
}

int parse_stat_text(const char *text, size_t len, const char *const *names, unsigned int nr_names,
		    const char *const *dev_names, bool classic, struct stat_values *s, char *why)
{
	size_t pos = 0;

	s->nr_values = s->nr_devices = s->unknown = 0;
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *sp;
		unsigned int i = s->nr_values;

		if (!nl)
			return WHY("'%.40s' does not end in a newline", line);
		pos = nl - text + 1;
		if (dev_names && classic && nl - line >= 10 && !memcmp(line, "(unknown) ", 10)) {
			s->unknown++;
			continue;
		}
		if (dev_names) {
			if (parse_device_line(dev_names, line, nl, classic, s, why))
				return -EINVAL;
			continue;
		}
		sp = memchr(line, ' ', nl - line);
		if (!sp || i >= nr_names || strlen(names[i]) != (size_t)(sp - line) ||
		    memcmp(line, names[i], sp - line))
			return WHY("line '%.*s' where %s belongs", (int)(nl - line), line,
				   i < nr_names ? names[i] : "nothing");
		if (parse_u64(sp + 1, nl, &s->values[i]))
			return WHY("bad value in '%.*s'", (int)(nl - line), line);
		s->nr_values++;
	}
	return 0;
}

/* is @want "<@res>.<@kind>.@field"? */
static bool pressure_name_is(const char *res, size_t res_len, const char *kind, size_t kind_len,
			     const char *field, const char *want)
{
	size_t field_len = strlen(field);

	return strlen(want) == res_len + kind_len + field_len + 2 && !memcmp(want, res, res_len) &&
	       want[res_len] == '.' && !memcmp(want + res_len + 1, kind, kind_len) &&
	       want[res_len + 1 + kind_len] == '.' &&
	       !memcmp(want + res_len + kind_len + 2, field, field_len);
}

/*
 * "@field=value" of a pressure line, [@p, @end), into *@v: an @average
 * "A.AA" as hundredths (PSI clamps each sample to its period: at most
 * 100.00), else a decimal number.  0, or -1.
 */
static int parse_pressure_field(const char *field, const char *p, const char *end, bool average,
				uint64_t *v)
{
	size_t len = strlen(field);
	uint64_t whole, hundredths;

	if ((size_t)(end - p) <= len || memcmp(p, field, len) || p[len] != '=')
		return -1;
	p += len + 1;
	if (!average)
		return parse_u64(p, end, v);
	if (end - p < 4 || end[-3] != '.' || parse_u64(p, end - 3, &whole) ||
	    parse_u64(end - 2, end, &hundredths) || whole > 100)
		return -1;
	*v = whole * 100 + hundredths;
	return *v > 10000 ? -1 : 0;
}

int parse_pressure_text(const char *text, size_t len, const char *const *names,
			unsigned int nr_names, struct stat_values *s, char *why)
{
	static const char *const fields[4] = { "avg10", "avg60", "avg300", "total" };
	size_t pos = 0;

	s->nr_values = s->nr_devices = s->unknown = 0;
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *kind, *p, *end;
		unsigned int i = s->nr_values, k;
		size_t res_len, kind_len;

		if (!nl)
			return WHY("'%.40s' does not end in a newline", line);
		pos = nl - text + 1;
		/* "<res> <kind> ": the names of the line's four values */
		kind = memchr(line, ' ', nl - line);
		p = kind ? memchr(kind + 1, ' ', nl - kind - 1) : NULL;
		if (!p || i + 4 > nr_names)
			return WHY("line '%.*s' where %s belongs", (int)(nl - line), line,
				   i < nr_names ? names[i] : "nothing");
		res_len = kind - line;
		kind++;
		kind_len = p - kind;
		for (k = 0, p++; k < 4; k++, p = end + 1) {
			if (!pressure_name_is(line, res_len, kind, kind_len, fields[k], names[i + k]))
				return WHY("line '%.*s' where %s belongs", (int)(nl - line), line,
					   names[i + k]);
			end = p < nl ? memchr(p, ' ', nl - p) : NULL;
			end = end ? end : nl;
			/* four fields, the last one ending the line */
			if (p >= nl || (k < 3) != (end < nl) ||
			    parse_pressure_field(fields[k], p, end, k < 3, &s->values[i + k]))
				return WHY("no valid %s= where it belongs in '%.*s'", fields[k],
					   (int)(nl - line), line);
		}
		s->nr_values += 4;
	}
	return 0;
}
