// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgstream: show and set the kernel's cpu.stat flush interval, and watch
 * cgroups' CPU use once per flush: named cgroups through a group, whole
 * subtrees (--recursive) through trees; format.c prints them (a live
 * table, plain lines, or JSON lines); top.c is `cgstream top`.  Also the
 * streaming daemon of the systemd units: it speaks the sd_notify protocol
 * when $NOTIFY_SOCKET is set.
 */
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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/cgroup_stat_stream.h>

#include "cgstream.h"
#include "cli.h"
#include "format.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cgstream interval [MS]\n"
		"       cgstream watch [OPTIONS] CGROUP...\n"
		"       cgstream top [OPTIONS] [CGROUP]   (see cgstream top --help)\n"
		"       cgstream --help | --version\n"
		"\n"
		"Read cgroup v2 CPU statistics once per kernel flush (cpu.stat.stream).\n"
		"\n"
		"  interval          print the kernel's flush interval in ms (0: off)\n"
		"  interval MS       set it: 0 (off) or %d..%d ms; needs root\n"
		"  watch CGROUP...   CPU use of each cgroup once per flush; a CGROUP is\n"
		"                    absolute or relative to the cgroup2 mount\n"
		"  top [CGROUP]      a live table of a subtree's cgroups, busiest first\n"
		"\n"
		"watch options:\n"
		"  --recursive               each CGROUP with all below it, those made while\n"
		"                            watching too: one read per flush for a whole\n"
		"                            subtree (cpu.stat.stream.subtree) where the\n"
		"                            kernel has it\n"
		"  --json                    one JSON object per sample or event per line\n"
		"                            (cgroup, cgroup_id, with --recursive parent_id)\n"
		"  --count N                 stop after N cycles (printed ones)\n"
		"  --every N                 print one cycle in N: when flush_seq reaches\n"
		"                            the next multiple of N; CPU%% is the average\n"
		"                            since the last printed sample\n"
		"  --mode auto|subtree|kernel|fallback\n"
		"                            subtree (--recursive only): the subtree file;\n"
		"                            kernel: a cpu.stat.stream per cgroup; fallback:\n"
		"                            a timer and cpu.stat reads; auto (default): the\n"
		"                            first the kernel has\n"
		"  --fallback-interval MS    timer period of fallback mode (default: the\n"
		"                            kernel's interval if set, else 1000)\n"
		"  --output FILE             append to FILE instead of standard output\n"
		"\n"
		"Exit status: 0 ok, 1 failure, 2 usage error, 3 no such cgroup,\n"
		"4 permission denied, 5 the kernel lacks the stream (or subtree) file.\n",
		CGROUP_STAT_STREAM_INTERVAL_MIN_MS, CGROUP_STAT_STREAM_INTERVAL_MAX_MS);
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
		if (!cli_parse_u32(argv[1], &ms) || !interval_valid(ms))
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
		fputs(cli_msg_no_kernel, stderr);
		return EXIT_NO_KERNEL;
	case -ENODEV:
		return cli_no_cgroup2();
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

/* what is watched: a group of the named cgroups, or a tree per argument */
struct source {
	struct cgstream_group *g;
	struct cgstream_tree *t;
	const char *mode;	/* its mode's name */
	uint64_t cycles;	/* printed, for --count */
	uint64_t last_seq;
	bool done;		/* a tree whose root went */
};

struct watch {
	struct cgstream_opts opts;
	FILE *out;
	struct fmt fmt;
	bool json, recursive;
	uint64_t count, every;
	struct source *src;
	size_t n_src;
};

#define BATCH 256

/* one source's events; 1 when it is done, -1 on failure */
static int drain(struct watch *w, struct source *s)
{
	struct cgstream_event ev[BATCH];
	bool any = false;
	int n;

	do {
		n = s->t ? cgstream_tree_process(s->t, ev, BATCH, sizeof(ev[0]))
			 : cgstream_group_process(s->g, ev, BATCH, sizeof(ev[0]));
		if (n == -ENODEV && s->t) {
			/* its root was removed (the REMOVED events came first) */
			s->done = true;
			return 1;
		}
		if (n < 0) {
			fprintf(stderr, "cgstream: reading the streams: %s\n", strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			any = true;
			if (fmt_event(&w->fmt, &ev[i], s->mode) && ev[i].sample.seq != s->last_seq) {
				s->last_seq = ev[i].sample.seq;
				s->cycles++;
			}
		}
	} while (n == BATCH);
	if (any)
		fmt_batch_end(&w->fmt, s->mode, s->last_seq);
	if (s->g && cgstream_group_size(s->g) == 0) {
		s->done = true;
		return 1;
	}
	return 0;
}

static bool counted_out(const struct watch *w)
{
	if (!w->count)
		return false;
	for (size_t i = 0; i < w->n_src; i++)
		if (!w->src[i].done && w->src[i].cycles < w->count)
			return false;
	return true;
}

/* @path is @root or below it */
static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return true;
	return !strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0');
}

/* the sources of the arguments; 0 or an exit status */
static int open_sources(struct watch *w, char **args, int n_args)
{
	char **paths = calloc((size_t)n_args, sizeof(*paths));
	int r = 0;

	w->src = calloc((size_t)n_args, sizeof(*w->src));
	if (!paths || !w->src) {
		free(paths);
		return EXIT_RUNTIME;
	}
	for (int i = 0; i < n_args && r == 0; i++) {
		char path[PATH_MAX];

		r = cgstream_resolve_path(args[i], &w->opts, path, sizeof(path));
		if (r < 0)
			r = cli_open_error(&w->opts, args[i], r);
		else if (!(paths[i] = strdup(path)))
			r = EXIT_RUNTIME;
	}
	if (r == 0 && !w->recursive) {
		struct source *s = &w->src[w->n_src++];

		r = cgstream_group_new(&w->opts, &s->g);
		if (r < 0) {
			w->n_src--;
			r = cli_open_error(&w->opts, "/", r);
		} else {
			s->mode = cgstream_mode_name(cgstream_group_mode(s->g));
		}
		for (int i = 0; i < n_args && r == 0; i++) {
			r = cgstream_group_add(s->g, paths[i], NULL);
			if (r == -EEXIST)
				r = 0;	/* named twice */
			else if (r < 0)
				r = cli_open_error(&w->opts, args[i], r);
		}
	}
	for (int i = 0; i < n_args && r == 0 && w->recursive; i++) {
		struct source *s;
		bool covered = false;

		/* a cgroup below another argument is in that one's tree */
		for (int j = 0; j < n_args; j++)
			if (j != i && under(paths[i], paths[j]) &&
			    (strcmp(paths[i], paths[j]) || j < i))
				covered = true;
		if (covered)
			continue;
		s = &w->src[w->n_src];
		r = cgstream_tree_open(paths[i], &w->opts, &s->t);
		if (r < 0) {
			r = cli_open_error(&w->opts, args[i], r);
			break;
		}
		s->mode = cgstream_mode_name(cgstream_tree_mode(s->t));
		w->n_src++;
	}
	for (int i = 0; i < n_args; i++)
		free(paths[i]);
	free(paths);
	return r;
}

static void close_sources(struct watch *w)
{
	for (size_t i = 0; i < w->n_src; i++) {
		cgstream_group_free(w->src[i].g);
		cgstream_tree_close(w->src[i].t);
	}
	free(w->src);
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
	struct pollfd *pfd = NULL;
	char rootbuf[PATH_MAX];
	int sfd = -1, r, opt, ret = EXIT_RUNTIME;
	bool fmt_ready = false, kernel = false;
	enum fmt_style style;
	sigset_t mask;
	uint32_t v;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			w.json = true;
			break;
		case 'c':
		case 'e':
			if (!cli_parse_u32(optarg, &v) || v == 0) {
				fprintf(stderr, "cgstream: --%s wants a number of cycles >= 1, not '%s'\n",
					opt == 'c' ? "count" : "every", optarg);
				return EXIT_USAGE;
			}
			*(opt == 'c' ? &w.count : &w.every) = v;
			break;
		case 'm':
			if (cli_parse_mode(optarg, &w.opts.mode))
				return EXIT_USAGE;
			break;
		case 'f':
			if (cli_parse_fallback_interval(optarg, &w.opts.fallback_interval_ms))
				return EXIT_USAGE;
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
	if (w.opts.mode == CGSTREAM_MODE_SUBTREE && !w.recursive) {
		fprintf(stderr, "cgstream: --mode subtree watches whole subtrees: it needs --recursive\n");
		return EXIT_USAGE;
	}

	r = cgstream_resolve_path("/", &w.opts, rootbuf, sizeof(rootbuf));
	if (r < 0)
		return r == -ENODEV ? cli_no_cgroup2() : cli_open_error(&w.opts, "/", r);
	cli_raise_fd_limit();
	r = open_sources(&w, argv + optind, argc - optind);
	if (r) {
		ret = r;
		goto out;
	}

	if (output) {
		w.out = fopen(output, "ae");
		if (!w.out) {
			fprintf(stderr, "cgstream: %s: %s\n", output, strerror(errno));
			w.out = stdout;
			goto out;
		}
	}
	setvbuf(w.out, NULL, _IOLBF, 0);
	style = w.json ? FMT_JSON : isatty(fileno(w.out)) ? FMT_TABLE : FMT_LINES;
	if (fmt_init(&w.fmt, w.out, style, w.every, w.recursive,
		     strcmp(rootbuf, "/") ? strlen(rootbuf) : 0) < 0)
		goto out;
	fmt_ready = true;

	for (size_t i = 0; i < w.n_src; i++)
		kernel |= strcmp(w.src[i].mode, "fallback") != 0;
	if (kernel && cgstream_get_interval(&w.opts, &v) == 0 && v == 0)
		fprintf(stderr, "cgstream: the kernel's flush interval is 0 (streaming off): "
			"no samples until it is set, e.g. 'cgstream interval 1000'\n");

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	pfd = calloc(w.n_src + 1, sizeof(*pfd));
	if (sfd < 0 || !pfd) {
		fprintf(stderr, "cgstream: signalfd: %s\n", strerror(errno));
		goto out;
	}
	pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (size_t i = 0; i < w.n_src; i++) {
		struct source *s = &w.src[i];

		pfd[i + 1] = (struct pollfd){
			.fd = s->t ? cgstream_tree_fd(s->t) : cgstream_group_fd(s->g),
			.events = POLLIN,
		};
	}

	sd_notify_send("READY=1");
	for (;;) {
		size_t live = 0;

		if (poll(pfd, (nfds_t)w.n_src + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "cgstream: poll: %s\n", strerror(errno));
			goto out;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGTERM)
					sd_notify_send("STOPPING=1");
				ret = EXIT_OK;
				goto out;
			}
		}
		for (size_t i = 0; i < w.n_src; i++) {
			if (!pfd[i + 1].revents || w.src[i].done)
				continue;
			if (drain(&w, &w.src[i]) < 0)
				goto out;
			if (w.src[i].done)
				pfd[i + 1].fd = -1;	/* poll() skips it */
		}
		if (fflush(w.out) != 0 || ferror(w.out)) {
			fprintf(stderr, "cgstream: writing the output: %s\n", strerror(errno));
			goto out;
		}
		if (counted_out(&w)) {
			ret = EXIT_OK;
			goto out;
		}
		for (size_t i = 0; i < w.n_src; i++)
			live += !w.src[i].done;
		if (!live) {
			fprintf(stderr, "cgstream: no cgroups left to watch\n");
			ret = EXIT_OK;
			goto out;
		}
	}
out:
	close_sources(&w);
	if (fmt_ready)
		fmt_fini(&w.fmt);
	free(pfd);
	if (sfd >= 0)
		close(sfd);
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
		printf("cgstream %d.%d (libcgstream %s)\n", CGSTREAM_VERSION_MAJOR,
		       CGSTREAM_VERSION_MINOR, cgstream_version());
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "interval"))
		return cmd_interval(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watch"))
		return cmd_watch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "top"))
		return cmd_top(argc - 1, argv + 1);
	fprintf(stderr, "cgstream: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
