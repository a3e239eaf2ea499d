// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgstream: show and set the kernel's publication intervals, and watch
 * cgroups' CPU use, memory, io and pressure once per publication: named
 * cgroups through a group, whole
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
#include <sys/signalfd.h>
#include <unistd.h>

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
		"Read cgroup v2 cpu, memory and io statistics and pressure stall\n"
		"information once per kernel flush (cpu.stat.stream, memory.stat.stream,\n"
		"io.stat.stream, pressure.stream).\n"
		"\n"
		"  interval          print the kernel's flush interval in ms (0: off): one\n"
		"                    number when every controller it streams has the same,\n"
		"                    else a line 'CTRL MS' per controller\n"
		"  interval MS       set it for every controller the kernel streams: 0 (off)\n"
		"                    or %u..%u ms; needs root\n"
		"  interval CTRL=MS  set one controller's (cpu, memory, io, pressure; an\n"
		"                    empty MS leaves it to the MS for all)\n"
		"    --controllers LIST  only these controllers (cpu,memory,io,pressure);\n"
		"                    the kernel must stream each of them (also --controller)\n"
		"  watch CGROUP...   each cgroup's CPU use, memory, io and pressure once per\n"
		"                    flush; a CGROUP is absolute or relative to the cgroup2\n"
		"                    mount\n"
		"  top [CGROUP]      a live table of a subtree's cgroups, busiest first\n"
		"\n"
		"watch options:\n"
		"  --controllers LIST        cpu,memory,io,pressure (or all): what to read;\n"
		"                            each must be there for every CGROUP.  Default:\n"
		"                            cpu, and memory, io and pressure where the\n"
		"                            cgroups have them\n"
		"  --recursive               each CGROUP with all below it, those made while\n"
		"                            watching too: one read per flush and controller\n"
		"                            for a whole subtree (*.stat.stream.subtree,\n"
		"                            pressure.stream.subtree) where the kernel has it\n"
		"  --json                    one JSON object per sample or event per line\n"
		"                            (cgroup, cgroup_id, with --recursive parent_id;\n"
		"                            changed: the controllers whose values moved;\n"
		"                            memory and pressure: every value by name; io:\n"
		"                            per device; \"event\": \"removed\" with the\n"
		"                            cgroup's last values, final: those that are\n"
		"                            the kernel's as of its removal)\n"
		"  --changes                 a cgroup only when its values changed (JSON:\n"
		"                            \"event\": \"changed\"); with --recursive the\n"
		"                            kernel's change snapshots, where it has them,\n"
		"                            make a cycle cost what changed\n"
		"  --count N                 stop after N cycles (printed ones)\n"
		"  --every N                 print one cycle in N: when flush_seq reaches\n"
		"                            the next multiple of N; CPU%%, io rates and\n"
		"                            pressure are averages since the last printed\n"
		"                            sample\n"
		"  --mode auto|subtree|kernel|fallback\n"
		"                            subtree (--recursive only): the subtree files;\n"
		"                            kernel: a *.stat.stream (pressure.stream) per\n"
		"                            cgroup; fallback: a timer and *.stat (and\n"
		"                            *.pressure) reads; auto (default): for each\n"
		"                            controller the first the kernel has\n"
		"  --fallback-interval MS    timer period of fallback mode (default: the\n"
		"                            kernel's interval if set, else 1000)\n"
		"  --output FILE             append to FILE instead of standard output\n"
		"\n", CGSTREAM_INTERVAL_MIN_MS, CGSTREAM_INTERVAL_MAX_MS);
	cli_exit_statuses(f);
}

/* the exit status of @r getting or setting controller @ctrl's interval, said */
static int interval_error(unsigned int ctrl, bool set, const char *arg, int r)
{
	struct cgstream_opts o = { .sz = sizeof(o), .controllers = ctrl };

	return cli_fail(r, set ? CGSTREAM_WHAT_SET_INTERVAL : CGSTREAM_WHAT_GET_INTERVAL, arg, &o);
}

/* an interval to set, checked before anything is written: 0, or said */
static int interval_arg(const char *arg, uint32_t *ms)
{
	return cli_option(CGSTREAM_WHAT_INTERVAL, arg, ms);
}

/* "cpu" -> CGSTREAM_CTRL_CPU; 0 when not a controller's name */
static unsigned int ctrl_by_name(const char *name, size_t len)
{
	for (unsigned int b = 1; cli_ctrl(b); b <<= 1)
		if (strlen(cli_ctrl(b)) == len && !strncmp(name, cli_ctrl(b), len))
			return b;
	return 0;
}

/*
 * cgstream interval [--controllers LIST] [MS] [CTRL=MS...]: without a
 * value, each controller's interval (one number when they agree); MS sets
 * every controller the kernel streams (or those of LIST), CTRL=MS one of
 * them (an empty MS: no override, as a configuration file may leave it).
 * Controllers the kernel does not stream are skipped (and said, when
 * setting) unless named by --controllers.  Every value is checked before
 * anything is written.
 */
struct interval_args {
	const char *all;			/* MS for all */
	const char *arg[CGSTREAM_CTRL_SLOTS];	/* per controller, as given */
	uint32_t ms[CGSTREAM_CTRL_SLOTS];
	uint32_t named;				/* --controllers */
	bool set;
};

/* one argument of interval: -1 taken; else the exit status */
static int interval_parse_one(struct interval_args *ia, int argc, char **argv, int *i,
			      bool *options)
{
	const char *a = argv[*i], *eq = strchr(a, '=');
	unsigned int b;

	if (*options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
		usage(stdout);
		return CGSTREAM_EXIT_OK;
	}
	if (*options && !strcmp(a, "--")) {
		*options = false;
		return -1;
	}
	if (*options && (!strncmp(a, "--controllers", 13) || !strncmp(a, "--controller", 12))) {
		const char *v = strchr(a, '=');

		if (v && strncmp(a, "--controllers=", 14) && strncmp(a, "--controller=", 13))
			v = NULL;
		if (!v && strcmp(a, "--controllers") && strcmp(a, "--controller"))
			goto unknown;
		v = v ? v + 1 : *i + 1 < argc ? argv[++*i] : NULL;
		/* none: the library's message of an empty list names them all */
		return cli_option(CGSTREAM_WHAT_CONTROLLERS, v ? v : "", &ia->named) ?
		       CGSTREAM_EXIT_USAGE : -1;
	}
	b = eq ? ctrl_by_name(a, (size_t)(eq - a)) : 0;
	if (b) {
		ia->set = true;
		if (!eq[1])
			return -1;	/* no override */
		ia->arg[cli_ctrl_index(b)] = eq + 1;
		return interval_arg(eq + 1, &ia->ms[cli_ctrl_index(b)]) ? CGSTREAM_EXIT_USAGE : -1;
	}
	if (*options && a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9'))
		goto unknown;
	if (ia->all) {
		fprintf(stderr, "cgstream: interval takes at most one interval for all "
			"controllers (CTRL=MS sets one)\n");
		usage(stderr);
		return CGSTREAM_EXIT_USAGE;
	}
	ia->all = a;
	ia->set = true;
	return -1;
unknown:
	fprintf(stderr, "cgstream: interval: unknown option '%s'\n", a);
	usage(stderr);
	return CGSTREAM_EXIT_USAGE;
}

/* the arguments of interval, each value checked: -1, or the exit status */
static int interval_parse(struct interval_args *ia, int argc, char **argv)
{
	bool options = true;
	uint32_t v;
	int r;

	for (int i = 1; i < argc; i++)
		if ((r = interval_parse_one(ia, argc, argv, &i, &options)) >= 0)
			return r;
	if (!ia->all)
		return -1;
	if (interval_arg(ia->all, &v))
		return CGSTREAM_EXIT_USAGE;
	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		unsigned int k = cli_ctrl_index(b);

		if (!ia->arg[k] && (!ia->named || (ia->named & b))) {
			ia->ms[k] = v;
			ia->arg[k] = ia->all;
		}
	}
	return -1;
}

static int cmd_interval(int argc, char **argv)
{
	struct interval_args ia = { 0 };
	uint32_t skipped = 0, got[CGSTREAM_CTRL_SLOTS];
	unsigned int done[CGSTREAM_CTRL_SLOTS], n_got = 0, n_done = 0;
	bool agree = true;
	int r = interval_parse(&ia, argc, argv);

	if (r >= 0)
		return r;
	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		unsigned int k = cli_ctrl_index(b);
		bool wanted = ia.set ? ia.arg[k] != NULL : !ia.named || (ia.named & b);
		uint32_t now;

		if (!wanted)
			continue;
		/* does the kernel stream it?  (and, getting, its value) */
		r = cgstream_get_ctrl_interval(NULL, b, &now);
		if (r == -EOPNOTSUPP && !(ia.named & b)) {
			skipped |= b;
			continue;
		}
		if (r < 0)
			return interval_error(b, false, NULL, r);
		if (ia.set && (r = cgstream_set_ctrl_interval(NULL, b, ia.ms[k])) < 0)
			return interval_error(b, true, ia.arg[k], r);
		if (!ia.set) {
			agree &= !n_got || now == got[0];
			got[n_got] = now;
			done[n_got++] = b;
		}
		n_done++;
	}
	if (!n_done)	/* the kernel streams none of them */
		return interval_error(skipped & -skipped, ia.set, NULL, -EOPNOTSUPP);
	for (unsigned int b = 1; ia.set && cli_ctrl(b); b <<= 1)
		if (skipped & b)
			fprintf(stderr, "cgstream: this kernel does not stream %s (no %s): skipped\n",
				cli_ctrl(b), cgstream_controller_file(b, CGSTREAM_FILE_INTERVAL));
	if (ia.set)
		return CGSTREAM_EXIT_OK;
	if (agree) {
		printf("%u\n", got[0]);
		return CGSTREAM_EXIT_OK;
	}
	for (unsigned int i = 0; i < n_got; i++)
		printf("%s %u\n", cli_ctrl(done[i]), got[i]);
	return CGSTREAM_EXIT_OK;
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
	struct cgstream_opts opts;	/* .controllers: --controllers, else the default set */
	FILE *out;
	struct fmt fmt;
	bool fmt_ready;
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
		fmt_batch_end(&w->fmt, &s->fs, s->last_seq);
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

static int group_ctrl_mode(const void *g, unsigned int b)
{
	return cgstream_group_ctrl_mode(g, b);
}

static int tree_ctrl_mode(const void *t, unsigned int b)
{
	return cgstream_tree_ctrl_mode(t, b);
}

/* @s's controllers and modes, once it is open */
static void source_modes(struct source *s)
{
	if (s->t)
		fmt_src_modes(&s->fs, cgstream_tree_mode(s->t), tree_ctrl_mode, s->t);
	else
		fmt_src_modes(&s->fs, cgstream_group_mode(s->g), group_ctrl_mode, s->g);
}

/* @s reads with @opts: what its batches carry */
static void source_report(struct source *s, const struct cgstream_opts *opts)
{
	s->fs.changes = opts->report == CGSTREAM_REPORT_CHANGES;
}

/* the group of the named cgroups @paths; 0 or an exit status */
static int open_group(struct watch *w, char **args, char *const *paths, int n_args)
{
	struct source *s = &w->src[w->n_src];
	struct cgstream_opts o = w->opts;
	uint32_t ctrls;
	int r = cli_probe(&w->opts, paths, (size_t)n_args, false, &ctrls);

	if (r)
		return r;
	/*
	 * The default set: the controllers enabled for one of the cgroups
	 * at least (cpu alone for cgroups without memory, io and pressure),
	 * not every controller the hierarchy has
	 */
	if (o.controllers == CGSTREAM_CTRL_DEFAULT)
		o.controllers = ctrls;
	r = cgstream_group_new(&o, &s->g);
	if (r < 0)
		return cli_fail(r, CGSTREAM_WHAT_OPEN, "/", &w->opts);
	w->n_src++;
	source_modes(s);
	source_report(s, &w->opts);
	for (int i = 0; i < n_args; i++) {
		r = cgstream_group_add(s->g, paths[i], NULL);
		if (r < 0 && r != -EEXIST)	/* EEXIST: named twice */
			return cli_fail(r, CGSTREAM_WHAT_OPEN, args[i], &w->opts);
	}
	return 0;
}

/* a tree per argument that is not in another one's; 0 or an exit status */
static int open_trees(struct watch *w, char **args, char *const *paths, int n_args)
{
	uint8_t *keep = calloc((size_t)n_args, 1);
	int r = keep ? 0 : CGSTREAM_EXIT_FAILURE;

	if (keep)
		cgstream_distinct_subtrees((const char *const *)paths, (size_t)n_args, keep);
	for (int i = 0; i < n_args && r == 0; i++) {
		struct source *s = &w->src[w->n_src];

		if (!keep[i] || (r = cli_probe(&w->opts, &paths[i], 1, true, NULL)))
			continue;
		r = cgstream_tree_open(paths[i], &w->opts, &s->t);
		if (r < 0) {
			r = cli_fail(r, CGSTREAM_WHAT_OPEN, args[i], &w->opts);
			break;
		}
		source_modes(s);
		source_report(s, &w->opts);
		w->n_src++;
	}
	free(keep);
	return r;
}

/* the sources of the arguments; 0 or an exit status */
static int open_sources(struct watch *w, char **args, int n_args)
{
	char **paths = calloc((size_t)n_args, sizeof(*paths));
	int r = 0;

	w->src = calloc((size_t)n_args, sizeof(*w->src));
	if (!paths || !w->src) {
		free(paths);
		return CGSTREAM_EXIT_FAILURE;
	}
	for (int i = 0; i < n_args && r == 0; i++) {
		char path[PATH_MAX];

		r = cgstream_resolve_path(args[i], &w->opts, path, sizeof(path));
		if (r < 0)
			r = cli_fail(r, CGSTREAM_WHAT_OPEN, args[i], &w->opts);
		else if (!(paths[i] = strdup(path)))
			r = CGSTREAM_EXIT_FAILURE;
	}
	if (r == 0)
		r = w->recursive ? open_trees(w, args, paths, n_args)
				 : open_group(w, args, paths, n_args);
	for (int i = 0; i < n_args; i++)
		free(paths[i]);
	free(paths);
	return r;
}

/*
 * Said once at the start, of every source: the controllers emulated
 * (fallback mode), and those read from the kernel while its interval is
 * 0 (no new flush comes: cpu's, or the lead's, means no samples at all).
 */
static void say_notices(const struct watch *w)
{
	int modes[CGSTREAM_CTRL_SLOTS] = { 0 };
	uint32_t all = 0;

	for (size_t i = 0; i < w->n_src; i++) {
		all |= w->src[i].fs.controllers;
		for (unsigned int k = 0; k < CGSTREAM_CTRL_SLOTS; k++)
			if (!modes[k] || w->src[i].fs.modes[k] == CGSTREAM_MODE_FALLBACK)
				modes[k] = w->src[i].fs.modes[k];
	}
	cli_notices(all, modes, &w->opts, CGSTREAM_NOTICE_EMULATION | CGSTREAM_NOTICE_STREAMING_OFF);
}

static void close_sources(struct watch *w)
{
	for (size_t i = 0; i < w->n_src; i++) {
		cgstream_group_free(w->src[i].g);
		cgstream_tree_close(w->src[i].t);
	}
	free(w->src);
}

/* watch's options into @w (and *@output); -1: go on, else the exit status */
static int watch_options(struct watch *w, int argc, char **argv, const char **output)
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
		{ "changes", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	uint32_t v;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'j' || opt == 'r') {
			*(opt == 'j' ? &w->json : &w->recursive) = true;
		} else if (opt == 'c' || opt == 'e') {
			if (!cli_parse_u32(optarg, &v) || v == 0) {
				fprintf(stderr, "cgstream: --%s wants a number of cycles >= 1, not '%s'\n",
					opt == 'c' ? "count" : "every", optarg);
				return CGSTREAM_EXIT_USAGE;
			}
			*(opt == 'c' ? &w->count : &w->every) = v;
		} else if (opt == 'm' || opt == 'f' || opt == 'C') {
			if (cli_shared_option(opt, optarg, &w->opts))
				return CGSTREAM_EXIT_USAGE;
		} else if (opt == 'o') {
			*output = optarg;
		} else if (opt == 'x') {
			w->opts.report = CGSTREAM_REPORT_CHANGES;
		} else {
			usage(opt == 'h' ? stdout : stderr);
			return opt == 'h' ? CGSTREAM_EXIT_OK : CGSTREAM_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cgstream: watch needs at least one cgroup\n");
		usage(stderr);
		return CGSTREAM_EXIT_USAGE;
	}
	if (w->opts.mode == CGSTREAM_MODE_SUBTREE && !w->recursive) {
		fprintf(stderr, "cgstream: --mode subtree watches whole subtrees: it needs --recursive\n");
		return CGSTREAM_EXIT_USAGE;
	}
	return -1;
}

/* SIGINT, SIGTERM (said to systemd) end it: -1 go on, else the exit status */
static int watch_signal(int sfd)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return -1;
	if (si.ssi_signo == SIGTERM)
		cgstream_sd_notify("STOPPING=1");
	return CGSTREAM_EXIT_OK;
}

/* one poll() for the signals and every source until the end: the exit status */
static int watch_loop(struct watch *w, struct pollfd *pfd)
{
	for (;;) {
		size_t live = 0;
		int r;

		if (poll(pfd, (nfds_t)w->n_src + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "cgstream: poll: %s\n", strerror(errno));
			return CGSTREAM_EXIT_FAILURE;
		}
		if (pfd[0].revents && (r = watch_signal(pfd[0].fd)) >= 0)
			return r;
		for (size_t i = 0; i < w->n_src; i++) {
			if (!pfd[i + 1].revents || w->src[i].done)
				continue;
			if (drain(w, &w->src[i]) < 0)
				return CGSTREAM_EXIT_FAILURE;
			if (w->src[i].done)
				pfd[i + 1].fd = -1;	/* poll() skips it */
		}
		if (fflush(w->out) != 0 || ferror(w->out)) {
			fprintf(stderr, "cgstream: writing the output: %s\n", strerror(errno));
			return CGSTREAM_EXIT_FAILURE;
		}
		if (counted_out(w))
			return CGSTREAM_EXIT_OK;
		for (size_t i = 0; i < w->n_src; i++)
			live += !w->src[i].done;
		if (!live) {
			fprintf(stderr, "cgstream: no cgroups left to watch\n");
			return CGSTREAM_EXIT_OK;
		}
	}
}

/* the output, the printer, the signals, the fds to poll: 0, or -1 said */
static int watch_setup(struct watch *w, const char *output, const char *mount, int *sfd,
		       struct pollfd **pfd)
{
	uint32_t all = 0;
	sigset_t mask;

	if (output && !(w->out = fopen(output, "ae"))) {
		fprintf(stderr, "cgstream: %s: %s\n", output, strerror(errno));
		w->out = stdout;
		return -1;
	}
	setvbuf(w->out, NULL, _IOLBF, 0);
	for (size_t i = 0; i < w->n_src; i++)
		all |= w->src[i].fs.controllers;
	if (fmt_init(&w->fmt, w->out, w->json ? FMT_JSON : isatty(fileno(w->out)) ? FMT_TABLE :
		     FMT_LINES, w->every, w->recursive, all, mount) < 0)
		return -1;
	w->fmt_ready = true;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	*sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	*pfd = calloc(w->n_src + 1, sizeof(**pfd));
	if (*sfd < 0 || !*pfd) {
		fprintf(stderr, "cgstream: signalfd: %s\n", strerror(errno));
		return -1;
	}
	(*pfd)[0] = (struct pollfd){ .fd = *sfd, .events = POLLIN };
	for (size_t i = 0; i < w->n_src; i++) {
		struct source *s = &w->src[i];

		(*pfd)[i + 1] = (struct pollfd){
			.fd = s->t ? cgstream_tree_fd(s->t) : cgstream_group_fd(s->g),
			.events = POLLIN,
		};
	}
	return 0;
}

static int cmd_watch(int argc, char **argv)
{
	struct watch w = { .opts = { .sz = sizeof(struct cgstream_opts),
				     .controllers = CGSTREAM_CTRL_DEFAULT }, .out = stdout };
	const char *output = NULL;
	struct pollfd *pfd = NULL;
	char mount[PATH_MAX];
	int sfd = -1, r, ret;

	ret = watch_options(&w, argc, argv, &output);
	if (ret >= 0)
		return ret;
	r = cgstream_resolve_path("/", &w.opts, mount, sizeof(mount));
	if (r < 0)
		return cli_fail(r, CGSTREAM_WHAT_OPEN, "/", &w.opts);
	cli_raise_fd_limit();
	ret = open_sources(&w, argv + optind, argc - optind);
	if (ret == 0) {
		ret = CGSTREAM_EXIT_FAILURE;
		if (watch_setup(&w, output, mount, &sfd, &pfd) == 0) {
			say_notices(&w);
			cgstream_sd_notify("READY=1");
			ret = watch_loop(&w, pfd);
		}
	}
	close_sources(&w);
	if (w.fmt_ready)
		fmt_fini(&w.fmt);
	free(pfd);
	if (sfd >= 0)
		close(sfd);
	if (w.out != stdout && fclose(w.out) != 0 && ret == CGSTREAM_EXIT_OK) {
		fprintf(stderr, "cgstream: %s: %s\n", output, strerror(errno));
		ret = CGSTREAM_EXIT_FAILURE;
	}
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CGSTREAM_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CGSTREAM_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cgstream %d.%d (libcgstream %s)\n", CGSTREAM_VERSION_MAJOR,
		       CGSTREAM_VERSION_MINOR, cgstream_version());
		return CGSTREAM_EXIT_OK;
	}
	if (!strcmp(argv[1], "interval"))
		return cmd_interval(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watch"))
		return cmd_watch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "top"))
		return cmd_top(argc - 1, argv + 1);
	fprintf(stderr, "cgstream: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CGSTREAM_EXIT_USAGE;
}
