// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgstream: show and set the kernel's cpu.stat flush interval, and watch
 * cgroups' CPU use once per flush (a live table, plain lines, or JSON
 * lines).  Also the streaming daemon of the systemd units: it speaks the
 * sd_notify protocol when $NOTIFY_SOCKET is set.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"

enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_NO_CGROUP = 3,
	EXIT_PERMISSION = 4,
	EXIT_NO_KERNEL = 5,
};

#define RESCAN_SECONDS 5
#define MAX_DEPTH 64

static const char msg_no_kernel[] =
	"cgstream: this kernel has no cpu.stat.stream (cgroup stat streaming); "
	"use --mode fallback or a kernel with the cgstream patches\n";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cgstream interval [MS]\n"
		"       cgstream watch [OPTIONS] CGROUP...\n"
		"       cgstream --help | --version\n"
		"\n"
		"Read cgroup v2 CPU statistics once per kernel flush (cpu.stat.stream).\n"
		"\n"
		"  interval          print the kernel's flush interval in ms (0: off)\n"
		"  interval MS       set it: 0 (off) or %d..%d ms; needs root\n"
		"  watch CGROUP...   CPU use of each cgroup once per flush; a CGROUP is\n"
		"                    absolute or relative to the cgroup2 mount\n"
		"\n"
		"watch options:\n"
		"  --json                    one JSON object per sample per line\n"
		"  --count N                 stop after N cycles (printed ones)\n"
		"  --every N                 print one cycle in N: when flush_seq reaches\n"
		"                            the next multiple of N; CPU%% is the average\n"
		"                            since the last printed sample\n"
		"  --mode auto|kernel|fallback\n"
		"                            kernel: cpu.stat.stream; fallback: a timer and\n"
		"                            cpu.stat reads; auto (default): kernel if there\n"
		"  --fallback-interval MS    timer period of fallback mode (default: the\n"
		"                            kernel's interval if set, else 1000)\n"
		"  --recursive               also watch descendants, and new ones as they come\n"
		"  --output FILE             append to FILE instead of standard output\n"
		"\n"
		"Exit status: 0 ok, 1 failure, 2 usage error, 3 no such cgroup,\n"
		"4 permission denied, 5 the kernel lacks cpu.stat.stream.\n",
		CGROUP_STAT_STREAM_INTERVAL_MIN_MS, CGROUP_STAT_STREAM_INTERVAL_MAX_MS);
}

/* strict decimal: digits only, no sign, no blanks, fits in uint32_t */
static bool parse_u32(const char *s, uint32_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

static bool interval_valid(uint32_t ms)
{
	return ms == 0 || (ms >= CGROUP_STAT_STREAM_INTERVAL_MIN_MS &&
			   ms <= CGROUP_STAT_STREAM_INTERVAL_MAX_MS);
}

static int bad_interval(const char *arg)
{
	fprintf(stderr, "cgstream: %s is not a valid interval: use 0 (off) or %d..%d ms\n",
		arg, CGROUP_STAT_STREAM_INTERVAL_MIN_MS, CGROUP_STAT_STREAM_INTERVAL_MAX_MS);
	return EXIT_USAGE;
}

static int no_cgroup2(void)
{
	fprintf(stderr, "cgstream: no cgroup2 file system is mounted\n");
	return EXIT_RUNTIME;
}

static int cmd_interval(int argc, char **argv)
{
	uint32_t ms;
	int r;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--")) {
		argv++;
		argc--;
	}
	if (argc > 2) {
		fprintf(stderr, "cgstream: interval takes at most one argument\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc == 1) {
		r = cgstream_get_interval(NULL, &ms);
		if (r == 0) {
			printf("%u\n", ms);
			return EXIT_OK;
		}
	} else {
		if (!parse_u32(argv[1], &ms) || !interval_valid(ms))
			return bad_interval(argv[1]);
		r = cgstream_set_interval(NULL, ms);
		if (r == 0)
			return EXIT_OK;
		if (r == -EPERM || r == -EACCES) {
			fprintf(stderr, "cgstream: setting the interval needs root (CAP_SYS_ADMIN)\n");
			return EXIT_PERMISSION;
		}
		if (r == -EINVAL)
			return bad_interval(argv[1]);
	}
	switch (r) {
	case -EOPNOTSUPP:
		fputs(msg_no_kernel, stderr);
		return EXIT_NO_KERNEL;
	case -ENODEV:
		return no_cgroup2();
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "cgstream: reading the interval: permission denied\n");
		return EXIT_PERMISSION;
	}
	fprintf(stderr, "cgstream: %s the interval: %s\n", argc == 1 ? "reading" : "setting",
		strerror(-r));
	return EXIT_RUNTIME;
}

/* --- sd_notify, by hand: one datagram to $NOTIFY_SOCKET --- */
static void sd_notify_send(const char *msg)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!e || (e[0] != '/' && e[0] != '@'))
		return;	/* unset, or an address family we do not speak */
	len = strlen(e);
	if (len >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, e, len);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	close(fd);
}

/* --- watch --- */
struct cg {
	char *path;		/* absolute, as the library reports it */
	bool dead;
	bool have_prev;
	bool have_delta;
	struct cgstream_sample prev;	/* the last printed sample (or the first seen) */
	uint64_t window;		/* --every: flush_seq / N of prev */
	/* the last cycle, for the table */
	double cpu, user, sys;
	uint64_t thr_n, thr_usec;
	bool has_thr;
};

struct watch {
	struct cgstream_group *g;
	struct cgstream_opts opts;
	FILE *out;
	bool json, tty, recursive;
	uint64_t count, cycles, last_seq, every;
	const char *mode_name;
	size_t rootlen;
	char **roots;		/* absolute paths of the arguments, for rescans */
	size_t n_roots;
	struct cg **cgs;
	size_t n_cgs, cap_cgs;
	char removed_note[512];
};

static const char *display_path(const struct watch *w, const char *path)
{
	const char *p = path + w->rootlen;

	return *p ? p : "/";
}

static struct cg *cg_new(struct watch *w, const char *path)
{
	struct cg *c;

	if (w->n_cgs == w->cap_cgs) {
		size_t cap = w->cap_cgs ? w->cap_cgs * 2 : 32;
		struct cg **v = realloc(w->cgs, cap * sizeof(*v));

		if (!v)
			return NULL;
		w->cgs = v;
		w->cap_cgs = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->path = strdup(path);
	if (!c->path) {
		free(c);
		return NULL;
	}
	w->cgs[w->n_cgs++] = c;
	return c;
}

static void cg_forget(struct watch *w, struct cg *c)
{
	for (size_t i = 0; i < w->n_cgs; i++) {
		if (w->cgs[i] == c) {
			w->cgs[i] = w->cgs[--w->n_cgs];
			break;
		}
	}
	free(c->path);
	free(c);
}

/* add one cgroup (absolute path); the library's errno */
static int watch_add(struct watch *w, const char *path)
{
	struct cg *c = cg_new(w, path);
	int r;

	if (!c)
		return -ENOMEM;
	r = cgstream_group_add(w->g, path, c);
	if (r < 0)
		cg_forget(w, c);
	return r;
}

static void walk(struct watch *w, const char *dir, int depth)
{
	struct dirent *de;
	DIR *d;

	if (depth > MAX_DEPTH)
		return;
	d = opendir(dir);
	if (!d)
		return;	/* removed meanwhile, or not ours to read */
	while ((de = readdir(d))) {
		char child[PATH_MAX];
		struct stat stbuf;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", dir, de->d_name) >= sizeof(child))
			continue;
		if (de->d_type != DT_DIR &&
		    (de->d_type != DT_UNKNOWN || stat(child, &stbuf) < 0 || !S_ISDIR(stbuf.st_mode)))
			continue;
		(void)watch_add(w, child);	/* -EEXIST: watched already */
		walk(w, child, depth + 1);
	}
	closedir(d);
}

static void rescan(struct watch *w)
{
	for (size_t i = 0; i < w->n_roots; i++)
		walk(w, w->roots[i], 0);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_u64(FILE *f, const char *key, const struct cgstream_sample *s,
		     uint64_t bit, uint64_t v)
{
	fprintf(f, ", \"%s\": ", key);
	if (s->present & bit)
		fprintf(f, "%llu", (unsigned long long)v);
	else
		fputs("null", f);
}

static double pct(uint64_t a, uint64_t b, uint64_t dt)
{
	return b >= a ? 100.0 * (double)(b - a) / (double)dt : 0.0;
}

/* false when --every skips this cycle */
static bool on_sample(struct watch *w, struct cg *c, const struct cgstream_sample *s)
{
	const struct cgstream_sample *p = &c->prev;
	FILE *f = w->out;

	if (w->every > 1) {
		uint64_t window = s->seq / w->every;

		if (!c->have_prev) {
			/* the base of the first printed CPU% */
			c->prev = *s;
			c->have_prev = true;
			c->window = window;
			return false;
		}
		/* by window, not seq % N: a missed cycle must not skip one */
		if (window <= c->window)
			return false;
		c->window = window;
	}

	c->have_delta = c->have_prev && s->flush_time_usec > p->flush_time_usec;
	if (c->have_delta) {
		uint64_t dt = s->flush_time_usec - p->flush_time_usec;

		c->cpu = pct(p->usage_usec, s->usage_usec, dt);
		c->user = pct(p->user_usec, s->user_usec, dt);
		c->sys = pct(p->system_usec, s->system_usec, dt);
		c->has_thr = (s->present & p->present & CGSTREAM_F_NR_THROTTLED) &&
			     (s->present & p->present & CGSTREAM_F_THROTTLED);
		c->thr_n = c->has_thr && s->nr_throttled >= p->nr_throttled ?
			   s->nr_throttled - p->nr_throttled : 0;
		c->thr_usec = c->has_thr && s->throttled_usec >= p->throttled_usec ?
			      s->throttled_usec - p->throttled_usec : 0;
	}

	if (w->json) {
		fputs("{\"cgroup\": ", f);
		json_string(f, c->path);
		json_u64(f, "seq", s, CGSTREAM_F_SEQ, s->seq);
		json_u64(f, "flush_time_usec", s, CGSTREAM_F_FLUSH_TIME, s->flush_time_usec);
		json_u64(f, "usage_usec", s, CGSTREAM_F_USAGE, s->usage_usec);
		json_u64(f, "user_usec", s, CGSTREAM_F_USER, s->user_usec);
		json_u64(f, "system_usec", s, CGSTREAM_F_SYSTEM, s->system_usec);
		json_u64(f, "nice_usec", s, CGSTREAM_F_NICE, s->nice_usec);
		json_u64(f, "nr_periods", s, CGSTREAM_F_NR_PERIODS, s->nr_periods);
		json_u64(f, "nr_throttled", s, CGSTREAM_F_NR_THROTTLED, s->nr_throttled);
		json_u64(f, "throttled_usec", s, CGSTREAM_F_THROTTLED, s->throttled_usec);
		json_u64(f, "nr_bursts", s, CGSTREAM_F_NR_BURSTS, s->nr_bursts);
		json_u64(f, "burst_usec", s, CGSTREAM_F_BURST, s->burst_usec);
		if (c->have_delta)
			fprintf(f, ", \"cpu_percent\": %.2f", c->cpu);
		else
			fputs(", \"cpu_percent\": null", f);
		fprintf(f, ", \"mode\": \"%s\"}\n", w->mode_name);
	} else if (!w->tty) {
		fprintf(f, "seq %llu %s: ", (unsigned long long)s->seq, display_path(w, c->path));
		if (!c->have_delta) {
			fprintf(f, "first sample, %.3f s of CPU so far\n", (double)s->usage_usec / 1e6);
		} else {
			fprintf(f, "cpu %.1f%% (user %.1f%%, system %.1f%%)", c->cpu, c->user, c->sys);
			if (c->has_thr)
				fprintf(f, ", throttled %llu times for %.1f ms",
					(unsigned long long)c->thr_n, (double)c->thr_usec / 1000.0);
			fputc('\n', f);
		}
	}
	c->prev = *s;
	c->have_prev = true;
	return true;
}

static void on_gone(struct watch *w, struct cg *c, int type, int error)
{
	if (type == CGSTREAM_EVENT_ERROR)
		fprintf(stderr, "cgstream: %s: %s; no longer watched\n", c->path, strerror(-error));
	if (w->json) {
		fputs("{\"cgroup\": ", w->out);
		json_string(w->out, c->path);
		if (type == CGSTREAM_EVENT_REMOVED)
			fputs(", \"event\": \"removed\"}\n", w->out);
		else
			fprintf(w->out, ", \"event\": \"error\", \"error\": \"%s\"}\n",
				strerror(-error));
	} else if (!w->tty) {
		fprintf(w->out, "%s: %s\n", display_path(w, c->path),
			type == CGSTREAM_EVENT_REMOVED ? "removed" : "error, no longer watched");
	} else {
		size_t n = strlen(w->removed_note);

		snprintf(w->removed_note + n, sizeof(w->removed_note) - n, "%s%s",
			 n ? ", " : "", display_path(w, c->path));
	}
	c->dead = true;
}

static int cmp_cg(const void *a, const void *b)
{
	return strcmp((*(struct cg *const *)a)->path, (*(struct cg *const *)b)->path);
}

static void draw_table(struct watch *w)
{
	FILE *f = w->out;

	qsort(w->cgs, w->n_cgs, sizeof(w->cgs[0]), cmp_cg);
	fputs("\033[H\033[2J", f);
	fprintf(f, "cgstream: %zu cgroups, %s mode, seq %llu  (Ctrl-C quits)\n\n",
		cgstream_group_size(w->g), w->mode_name, (unsigned long long)w->last_seq);
	fprintf(f, "%-40s %7s %7s %7s %10s %10s\n", "CGROUP", "CPU%", "USER%", "SYS%",
		"THROTTLED", "THR-MS");
	for (size_t i = 0; i < w->n_cgs; i++) {
		const struct cg *c = w->cgs[i];

		if (c->dead)
			continue;
		fprintf(f, "%-40s ", display_path(w, c->path));
		if (!c->have_delta) {
			fprintf(f, "%7s %7s %7s %10s %10s\n", "-", "-", "-", "-", "-");
			continue;
		}
		fprintf(f, "%7.1f %7.1f %7.1f ", c->cpu, c->user, c->sys);
		if (c->has_thr)
			fprintf(f, "%10llu %10.1f\n", (unsigned long long)c->thr_n,
				(double)c->thr_usec / 1000.0);
		else
			fprintf(f, "%10s %10s\n", "-", "-");
	}
	if (w->removed_note[0])
		fprintf(f, "\nremoved: %s\n", w->removed_note);
	fflush(f);
	w->removed_note[0] = '\0';
}

/* one batch from the library; 1 when --count is reached */
static int handle_events(struct watch *w)
{
	struct cgstream_event ev[128];
	bool any = false;
	int n;

	do {
		n = cgstream_group_process(w->g, ev, 128, sizeof(ev[0]));
		if (n < 0) {
			fprintf(stderr, "cgstream: reading the streams: %s\n", strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct cg *c = ev[i].userdata;

			any = true;
			if (ev[i].type == CGSTREAM_EVENT_SAMPLE) {
				if (on_sample(w, c, &ev[i].sample) &&
				    ev[i].sample.seq != w->last_seq) {
					w->last_seq = ev[i].sample.seq;
					w->cycles++;
				}
			} else {
				on_gone(w, c, ev[i].type, ev[i].error);
			}
		}
	} while (n == 128);

	if (any && w->tty && !w->json)
		draw_table(w);
	for (size_t i = 0; i < w->n_cgs;) {
		if (w->cgs[i]->dead)
			cg_forget(w, w->cgs[i]);	/* swaps the last one in */
		else
			i++;
	}
	if (fflush(w->out) != 0 || ferror(w->out)) {
		fprintf(stderr, "cgstream: writing the output: %s\n", strerror(errno));
		return -1;
	}
	return w->count && w->cycles >= w->count;
}

static int add_error(struct watch *w, const char *arg, int r)
{
	char path[PATH_MAX];
	const char *shown = arg;

	if (cgstream_resolve_path(arg, &w->opts, path, sizeof(path)) == 0)
		shown = path;
	switch (r) {
	case -ENOENT:
	case -ENOTDIR:
		fprintf(stderr, "cgstream: %s: no such cgroup\n", shown);
		return EXIT_NO_CGROUP;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "cgstream: %s: permission denied\n", shown);
		return EXIT_PERMISSION;
	case -EINVAL:
		fprintf(stderr, "cgstream: %s: not a cgroup path (\"..\" is not allowed)\n", arg);
		return EXIT_USAGE;
	case -EOPNOTSUPP:
		fputs(msg_no_kernel, stderr);
		return EXIT_NO_KERNEL;
	case -ENODEV:
		return no_cgroup2();
	}
	fprintf(stderr, "cgstream: %s: %s\n", shown, strerror(-r));
	return EXIT_RUNTIME;
}

static int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'c' },
		{ "every", required_argument, NULL, 'e' },
		{ "mode", required_argument, NULL, 'm' },
		{ "fallback-interval", required_argument, NULL, 'f' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct watch w = { .opts = { .sz = sizeof(struct cgstream_opts) }, .out = stdout };
	const char *output = NULL;
	struct pollfd pfd[3];
	char rootbuf[PATH_MAX];
	int sfd = -1, tfd = -1, npfd, r, opt, ret = EXIT_RUNTIME;
	sigset_t mask;
	uint32_t v;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			w.json = true;
			break;
		case 'c':
		case 'e':
			if (!parse_u32(optarg, &v) || v == 0) {
				fprintf(stderr, "cgstream: --%s wants a number of cycles >= 1, not '%s'\n",
					opt == 'c' ? "count" : "every", optarg);
				return EXIT_USAGE;
			}
			*(opt == 'c' ? &w.count : &w.every) = v;
			break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				w.opts.mode = CGSTREAM_MODE_AUTO;
			else if (!strcmp(optarg, "kernel"))
				w.opts.mode = CGSTREAM_MODE_KERNEL;
			else if (!strcmp(optarg, "fallback"))
				w.opts.mode = CGSTREAM_MODE_FALLBACK;
			else {
				fprintf(stderr, "cgstream: --mode is auto, kernel or fallback, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f':
			if (!parse_u32(optarg, &v) || v < CGROUP_STAT_STREAM_INTERVAL_MIN_MS ||
			    v > CGROUP_STAT_STREAM_INTERVAL_MAX_MS) {
				fprintf(stderr, "cgstream: --fallback-interval wants %d..%d ms, not '%s'\n",
					CGROUP_STAT_STREAM_INTERVAL_MIN_MS,
					CGROUP_STAT_STREAM_INTERVAL_MAX_MS, optarg);
				return EXIT_USAGE;
			}
			w.opts.fallback_interval_ms = v;
			break;
		case 'r':
			w.recursive = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cgstream: watch needs at least one cgroup\n");
		usage(stderr);
		return EXIT_USAGE;
	}

	r = cgstream_resolve_path("/", &w.opts, rootbuf, sizeof(rootbuf));
	if (r < 0)
		return r == -ENODEV ? no_cgroup2() : add_error(&w, "/", r);
	w.rootlen = strcmp(rootbuf, "/") ? strlen(rootbuf) : 0;

	r = cgstream_group_new(&w.opts, &w.g);
	if (r < 0) {
		if (r == -EOPNOTSUPP) {
			fputs(msg_no_kernel, stderr);
			return EXIT_NO_KERNEL;
		}
		if (r == -ENODEV)
			return no_cgroup2();
		fprintf(stderr, "cgstream: cannot set up the watch: %s\n", strerror(-r));
		return EXIT_RUNTIME;
	}
	w.mode_name = cgstream_mode_name(cgstream_group_mode(w.g));

	w.roots = calloc((size_t)(argc - optind), sizeof(*w.roots));
	if (!w.roots)
		goto out;
	for (int i = optind; i < argc; i++) {
		char path[PATH_MAX];

		r = cgstream_resolve_path(argv[i], &w.opts, path, sizeof(path));
		if (r == 0)
			r = watch_add(&w, path);
		if (r == -EEXIST)
			continue;
		if (r < 0) {
			ret = add_error(&w, argv[i], r);
			goto out;
		}
		w.roots[w.n_roots] = strdup(path);
		if (!w.roots[w.n_roots])
			goto out;
		w.n_roots++;
	}
	if (w.recursive)
		rescan(&w);

	if (output) {
		w.out = fopen(output, "ae");
		if (!w.out) {
			fprintf(stderr, "cgstream: %s: %s\n", output, strerror(errno));
			w.out = stdout;
			goto out;
		}
	}
	setvbuf(w.out, NULL, _IOLBF, 0);
	w.tty = !w.json && isatty(fileno(w.out));

	if (cgstream_group_mode(w.g) == CGSTREAM_MODE_KERNEL &&
	    cgstream_get_interval(&w.opts, &v) == 0 && v == 0)
		fprintf(stderr, "cgstream: the kernel's flush interval is 0 (streaming off): "
			"no samples until it is set, e.g. 'cgstream interval 1000'\n");

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, "cgstream: signalfd: %s\n", strerror(errno));
		goto out;
	}
	pfd[0] = (struct pollfd){ .fd = cgstream_group_fd(w.g), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	npfd = 2;
	if (w.recursive) {
		struct itimerspec its = { .it_interval = { RESCAN_SECONDS, 0 },
					  .it_value = { RESCAN_SECONDS, 0 } };

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0) {
			fprintf(stderr, "cgstream: timerfd: %s\n", strerror(errno));
			goto out;
		}
		pfd[2] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		npfd = 3;
	}

	sd_notify_send("READY=1");
	for (;;) {
		if (poll(pfd, (nfds_t)npfd, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "cgstream: poll: %s\n", strerror(errno));
			goto out;
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGTERM)
					sd_notify_send("STOPPING=1");
				ret = EXIT_OK;
				goto out;
			}
		}
		if (npfd > 2 && pfd[2].revents) {
			uint64_t ticks;

			if (read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks))
				rescan(&w);
		}
		if (pfd[0].revents) {
			r = handle_events(&w);
			if (r < 0)
				goto out;
			if (r > 0) {
				ret = EXIT_OK;
				goto out;
			}
			if (cgstream_group_size(w.g) == 0 && !w.recursive) {
				fprintf(stderr, "cgstream: no cgroups left to watch\n");
				ret = EXIT_OK;
				goto out;
			}
		}
	}
out:
	cgstream_group_free(w.g);
	for (size_t i = 0; i < w.n_cgs; i++) {
		free(w.cgs[i]->path);
		free(w.cgs[i]);
	}
	free(w.cgs);
	for (size_t i = 0; i < w.n_roots; i++)
		free(w.roots[i]);
	free(w.roots);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (w.out != stdout && fclose(w.out) != 0 && ret == EXIT_OK) {
		fprintf(stderr, "cgstream: %s: %s\n", output, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cgstream %d.%d\n", CGSTREAM_VERSION_MAJOR, CGSTREAM_VERSION_MINOR);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "interval"))
		return cmd_interval(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watch"))
		return cmd_watch(argc - 1, argv + 1);
	fprintf(stderr, "cgstream: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
