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
		"Usage: cgstream interval [--controller LIST] [MS] [CTRL=MS...]\n"
		"       cgstream watch [OPTIONS] CGROUP...\n"
		"       cgstream top [OPTIONS] [CGROUP]   (see cgstream top --help)\n"
		"       cgstream --help | --version\n"
		"\n"
		"Read cgroup v2 cpu, memory and io statistics once per kernel flush\n"
		"(cpu.stat.stream, memory.stat.stream, io.stat.stream).\n"
		"\n"
		"  interval          print the kernel's flush interval in ms (0: off): one\n"
		"                    number when every controller it streams has the same,\n"
		"                    else a line 'CTRL MS' per controller\n"
		"  interval MS       set it for every controller the kernel streams: 0 (off)\n"
		"                    or %d..%d ms; needs root\n"
		"  interval CTRL=MS  set one controller's (cpu, memory, io; an empty MS\n"
		"                    leaves it to the MS for all)\n"
		"    --controller LIST   only these controllers (cpu,memory,io); the kernel\n"
		"                    must stream each of them\n"
		"  watch CGROUP...   each cgroup's CPU use, memory and io once per flush; a\n"
		"                    CGROUP is absolute or relative to the cgroup2 mount\n"
		"  top [CGROUP]      a live table of a subtree's cgroups, busiest first\n"
		"\n"
		"watch options:\n"
		"  --controllers LIST        cpu,memory,io (or all): what to read; each must\n"
		"                            be enabled for every CGROUP.  Default: cpu, and\n"
		"                            memory and io where they are enabled\n"
		"  --recursive               each CGROUP with all below it, those made while\n"
		"                            watching too: one read per flush and controller\n"
		"                            for a whole subtree (*.stat.stream.subtree) where\n"
		"                            the kernel has it\n"
		"  --json                    one JSON object per sample or event per line\n"
		"                            (cgroup, cgroup_id, with --recursive parent_id;\n"
		"                            memory: every value by name; io: per device)\n"
		"  --count N                 stop after N cycles (printed ones)\n"
		"  --every N                 print one cycle in N: when flush_seq reaches\n"
		"                            the next multiple of N; CPU%% and io rates are\n"
		"                            averages since the last printed sample\n"
		"  --mode auto|subtree|kernel|fallback\n"
		"                            subtree (--recursive only): the subtree files;\n"
		"                            kernel: a *.stat.stream per cgroup; fallback:\n"
		"                            a timer and *.stat reads; auto (default): for\n"
		"                            each controller the first the kernel has\n"
		"  --fallback-interval MS    timer period of fallback mode (default: the\n"
		"                            kernel's interval if set, else 1000)\n"
		"  --output FILE             append to FILE instead of standard output\n"
		"\n"
		"Exit status: 0 ok, 1 failure, 2 usage error, 3 no such cgroup,\n"
		"4 permission denied, 5 the kernel lacks the stream (or subtree) file, or a\n"
		"controller asked for is not enabled for a cgroup.\n",
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

/* the exit status for @r of getting or setting @ctrl's interval, said */
static int interval_error(unsigned int ctrl, bool set, const char *arg, int r)
{
	switch (r) {
	case -EOPNOTSUPP:
		return cli_no_stream(NULL, ctrl, false);
	case -ENODEV:
		return cli_no_cgroup2();
	case -EACCES:
	case -EPERM:
		if (set) {
			fprintf(stderr, "cgstream: setting the interval needs root (CAP_SYS_ADMIN)\n");
			return EXIT_PERMISSION;
		}
		fprintf(stderr, "cgstream: reading the interval: permission denied\n");
		return EXIT_PERMISSION;
	case -EINVAL:
		if (set)
			return bad_interval(arg);
		break;
	}
	fprintf(stderr, "cgstream: %s the %s interval: %s\n", set ? "setting" : "reading",
		cgstream_controller_name(ctrl), strerror(-r));
	return EXIT_RUNTIME;
}

/* the index of a controller's bit, and back */
#define CTRL_BIT(i)	(1u << (i))

/* "cpu" -> CGSTREAM_CTRL_CPU; 0 when not a controller's name */
static unsigned int ctrl_by_name(const char *name, size_t len)
{
	for (unsigned int i = 0; i < FMT_NCTRL; i++) {
		const char *n = cgstream_controller_name(CTRL_BIT(i));

		if (strlen(n) == len && !strncmp(name, n, len))
			return CTRL_BIT(i);
	}
	return 0;
}

/*
 * cgstream interval [--controller LIST] [MS] [CTRL=MS...]: without a
 * value, each controller's interval (one number when they agree); MS sets
 * every controller the kernel streams (or those of LIST), CTRL=MS one of
 * them (an empty MS: no override, as a configuration file may leave it).
 * Controllers the kernel does not stream are skipped (and said, when
 * setting) unless named by --controller.  Every value is checked before
 * anything is written.
 */
static int cmd_interval(int argc, char **argv)
{
	const char *all_arg = NULL, *arg[FMT_NCTRL] = { NULL };
	uint32_t named = 0, skipped = 0, ms[FMT_NCTRL] = { 0 }, got[FMT_NCTRL];
	unsigned int done[FMT_NCTRL], n_got = 0, n_done = 0;
	bool set = false, options = true, agree = true;
	int r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;

		if (options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			usage(stdout);
			return EXIT_OK;
		}
		if (options && !strcmp(a, "--")) {
			options = false;
			continue;
		}
		if (options && (!strcmp(a, "--controller") || !strncmp(a, "--controller=", 13))) {
			const char *list = a[12] == '=' ? a + 13 : i + 1 < argc ? argv[++i] : NULL;

			if (!list) {
				fprintf(stderr, "cgstream: --controller wants cpu, memory or io\n");
				return EXIT_USAGE;
			}
			if (cli_parse_controllers("controller", list, &named))
				return EXIT_USAGE;
			continue;
		}
		eq = strchr(a, '=');
		if (eq && ctrl_by_name(a, (size_t)(eq - a))) {
			unsigned int k = (unsigned int)__builtin_ctz(ctrl_by_name(a, (size_t)(eq - a)));

			set = true;
			if (!eq[1])
				continue;	/* no override */
			if (!cli_parse_u32(eq + 1, &ms[k]) || !interval_valid(ms[k]))
				return bad_interval(eq + 1);
			arg[k] = eq + 1;
			continue;
		}
		if (options && a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			fprintf(stderr, "cgstream: interval: unknown option '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		}
		if (all_arg) {
			fprintf(stderr, "cgstream: interval takes at most one interval for all "
				"controllers (CTRL=MS sets one)\n");
			usage(stderr);
			return EXIT_USAGE;
		}
		all_arg = a;
		set = true;
	}

	if (all_arg) {
		uint32_t v;

		if (!cli_parse_u32(all_arg, &v) || !interval_valid(v))
			return bad_interval(all_arg);
		for (unsigned int k = 0; k < FMT_NCTRL; k++) {
			if (!arg[k] && (!named || (named & CTRL_BIT(k)))) {
				ms[k] = v;
				arg[k] = all_arg;
			}
		}
	}

	for (unsigned int k = 0; k < FMT_NCTRL; k++) {
		unsigned int b = CTRL_BIT(k);
		bool wanted = set ? arg[k] != NULL : !named || (named & b);
		uint32_t now;

		if (!wanted)
			continue;
		/* does the kernel stream it?  (and, getting, its value) */
		r = cgstream_get_ctrl_interval(NULL, b, &now);
		if (r == -EOPNOTSUPP && !(named & b)) {
			skipped |= b;
			continue;
		}
		if (r < 0)
			return interval_error(b, false, NULL, r);
		if (set && (r = cgstream_set_ctrl_interval(NULL, b, ms[k])) < 0)
			return interval_error(b, true, arg[k], r);
		if (!set) {
			agree &= !n_got || now == got[0];
			got[n_got] = now;
			done[n_got++] = b;
		}
		n_done++;
	}
	if (!n_done)	/* the kernel streams none of them */
		return cli_no_stream(NULL, skipped & -skipped, false);
	for (unsigned int k = 0; set && k < FMT_NCTRL; k++)
		if (skipped & CTRL_BIT(k))
			fprintf(stderr, "cgstream: this kernel does not stream %s (no "
				"%s.stat.stream_interval): skipped\n",
				cgstream_controller_name(CTRL_BIT(k)), cgstream_controller_name(CTRL_BIT(k)));
	if (set)
		return EXIT_OK;
	if (agree) {
		printf("%u\n", got[0]);
		return EXIT_OK;
	}
	for (unsigned int i = 0; i < n_got; i++)
		printf("%s %u\n", cgstream_controller_name(done[i]), got[i]);
	return EXIT_OK;
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
	struct fmt_src fs;	/* what it reads, in which modes */
	uint64_t cycles;	/* printed, for --count */
	uint64_t last_seq;
	bool done;		/* a tree whose root went */
};

struct watch {
	struct cgstream_opts opts;
	uint32_t asked;		/* --controllers; 0: the default */
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
			if (fmt_event(&w->fmt, &ev[i], &s->fs) && fmt_event_seq(&ev[i]) != s->last_seq) {
				s->last_seq = fmt_event_seq(&ev[i]);
				s->cycles++;
			}
		}
	} while (n == BATCH);
	if (any)
		fmt_batch_end(&w->fmt, s->fs.mode, s->last_seq);
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

/* @s's modes, once it is open with @opts */
static void source_modes(struct source *s, const struct cgstream_opts *opts)
{
	s->fs.controllers = opts->controllers;
	s->fs.mode = cgstream_mode_name(s->t ? cgstream_tree_mode(s->t) : cgstream_group_mode(s->g));
	for (unsigned int k = 0; k < FMT_NCTRL; k++) {
		unsigned int b = 1u << k;
		int m;

		if (!(opts->controllers & b))
			continue;
		m = s->t ? cgstream_tree_ctrl_mode(s->t, b) : cgstream_group_ctrl_mode(s->g, b);
		s->fs.ctrl_mode[k] = m < 0 ? NULL : cgstream_mode_name(m);
	}
}

/* the sources of the arguments; 0 or an exit status */
static int open_sources(struct watch *w, char **args, int n_args)
{
	char **paths = calloc((size_t)n_args, sizeof(*paths));
	struct cgstream_opts o = w->opts;
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
	if (r == 0 && !w->recursive)
		r = cli_controllers(&w->opts, w->asked, paths, (size_t)n_args, &o.controllers);
	if (r == 0 && !w->recursive) {
		struct source *s = &w->src[w->n_src++];

		r = cgstream_group_new(&o, &s->g);
		if (r < 0) {
			w->n_src--;
			r = cli_open_error(&o, "/", r);
		} else {
			source_modes(s, &o);
		}
		for (int i = 0; i < n_args && r == 0; i++) {
			r = cgstream_group_add(s->g, paths[i], NULL);
			if (r == -EEXIST)
				r = 0;	/* named twice */
			else if (r < 0)
				r = cli_open_error(&o, args[i], r);
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
		r = cli_controllers(&w->opts, w->asked, &paths[i], 1, &o.controllers);
		if (r)
			break;
		s = &w->src[w->n_src];
		r = cgstream_tree_open(paths[i], &o, &s->t);
		if (r < 0) {
			r = cli_open_error(&o, args[i], r);
			break;
		}
		source_modes(s, &o);
		w->n_src++;
	}
	for (int i = 0; i < n_args; i++)
		free(paths[i]);
	free(paths);
	return r;
}

/*
 * A controller read from the kernel while its interval is 0 gets no new
 * flush: said once at the start (cpu's, or the lead's: no samples at all).
 */
static void warn_interval_off(const struct watch *w)
{
	uint32_t off = 0, ms;

	for (size_t i = 0; i < w->n_src; i++)
		for (unsigned int k = 0; k < FMT_NCTRL; k++) {
			const char *m = w->src[i].fs.ctrl_mode[k];

			if (m && strcmp(m, "fallback") &&
			    cgstream_get_ctrl_interval(&w->opts, 1u << k, &ms) == 0 && ms == 0)
				off |= 1u << k;
		}
	for (unsigned int k = 0; k < FMT_NCTRL; k++) {
		unsigned int b = 1u << k;
		bool lead = false;

		if (!(off & b))
			continue;
		for (size_t i = 0; i < w->n_src; i++)
			lead |= (w->src[i].fs.controllers & (b - 1)) == 0 &&
				(w->src[i].fs.controllers & b);
		if (lead)
			fprintf(stderr, "cgstream: the kernel's flush interval is 0 (streaming off)%s%s: "
				"no samples until it is set, e.g. 'cgstream interval 1000'\n",
				b == CGSTREAM_CTRL_CPU ? "" : " for ",
				b == CGSTREAM_CTRL_CPU ? "" : cgstream_controller_name(b));
		else
			fprintf(stderr, "cgstream: the kernel's flush interval is 0 (streaming off) "
				"for %s: its values stay as of its last flush until it is set, e.g. "
				"'cgstream interval 1000'\n", cgstream_controller_name(b));
	}
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
		{ "controllers", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct watch w = { .opts = { .sz = sizeof(struct cgstream_opts) }, .out = stdout };
	const char *output = NULL;
	struct pollfd *pfd = NULL;
	char rootbuf[PATH_MAX];
	int sfd = -1, r, opt, ret = EXIT_RUNTIME;
	bool fmt_ready = false;
	uint32_t all = 0;
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
		case 'C':
			if (cli_parse_controllers("controllers", optarg, &w.asked))
				return EXIT_USAGE;
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
	for (size_t i = 0; i < w.n_src; i++)
		all |= w.src[i].fs.controllers;
	if (fmt_init(&w.fmt, w.out, style, w.every, w.recursive, all, rootbuf) < 0)
		goto out;
	fmt_ready = true;
	warn_interval_off(&w);

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
