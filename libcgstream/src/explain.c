// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the front ends (the cgstream command, pycgstream's exporter) say
 * and how they end, in one place: the exit statuses, a message for each
 * error of opening a cgroup or of the interval, the shared options'
 * values and their errors, and the notices at start (emulation, streaming
 * off).  A front end adds its program's name; the library never prints.
 *
 * The messages name the cgroup as every output does (cgstream_shown_path())
 * and say what the kernel or the cgroup lacks, found by the same probe the
 * objects open with (cgs_probe()), with the way out.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* what cgs_list() says of each controller: a string of its table */
#define CGS_CTRL_NAME		offsetof(struct cgs_controller, name)
#define CGS_CTRL_STREAM_FILE	offsetof(struct cgs_controller, stream_file)
#define CGS_CTRL_EMULATED	offsetof(struct cgs_controller, emulated)

/*
 * CGSTREAM_INTERVAL_MIN_MS..MAX_MS is the kernel's range as its
 * documentation states it (a policy of the kernel's, which its uapi
 * header no longer spells): a value the kernel refuses is refused here
 * first, with a message, and the kernel's own EINVAL stays the last word.
 */

static const struct cgstream_exit_info cgs_exits[] = {
	{ CGSTREAM_EXIT_OK, "ok", "ok" },
	{ CGSTREAM_EXIT_FAILURE, "failure", "failure" },
	{ CGSTREAM_EXIT_USAGE, "usage", "usage error" },
	{ CGSTREAM_EXIT_NO_CGROUP, "no-cgroup", "no such cgroup" },
	{ CGSTREAM_EXIT_PERMISSION, "permission", "permission denied" },
	{ CGSTREAM_EXIT_NO_KERNEL, "no-kernel", "the kernel lacks the stream (or subtree) file "
	  "of a mode asked for, or a controller asked for is not enabled for a cgroup" },
};

CGS_EXPORT int cgstream_exit_status(unsigned int i, struct cgstream_exit_info *info,
				    size_t info_size)
{
	if (!info || info_size < sizeof(*info))
		return -EINVAL;
	if (i >= sizeof(cgs_exits) / sizeof(cgs_exits[0]))
		return -ENOENT;
	*info = cgs_exits[i];
	if (info_size > sizeof(*info))
		memset((char *)info + sizeof(*info), 0, info_size - sizeof(*info));
	return 0;
}

/* the message into @buf (cut to @size), and @status */
static int __attribute__((format(printf, 4, 5)))
cgs_say(char *buf, size_t size, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return status;
}

/* what a message shows of a cgroup or of the user's text */
struct cgs_shown {
	char mount[PATH_MAX];		/* the cgroup2 mount; "" without one */
	char *path;			/* @arg resolved; NULL when it is not a path */
	char text[CGSTREAM_ESCAPED_SIZE(PATH_MAX)];	/* as shown */
};

static void cgs_shown_init(struct cgs_shown *sh, const char *arg, const struct cgs_opts *o)
{
	char *mount = NULL;

	*sh = (struct cgs_shown){ .text = "?" };
	if (cgs_find_root(o, &mount) == 0 && strlen(mount) < sizeof(sh->mount))
		strcpy(sh->mount, mount);
	free(mount);
	if (sh->mount[0] && arg && cgs_resolve(sh->mount, arg, &sh->path) == 0 &&
	    cgstream_shown_path(sh->path, sh->mount, sh->text, sizeof(sh->text)) >= 0)
		return;
	if (arg)
		cgstream_escape_name(arg, sh->text, sizeof(sh->text));
}

/* @c is not in the cgroup2 hierarchy at all (a hybrid host binds it to v1) */
static bool cgs_hierarchy_lacks(const struct cgs_shown *sh, const struct cgs_controller *c)
{
	return sh->mount[0] &&
	       cgs_mode_pick(sh->mount, CGSTREAM_MODE_AUTO, false, c) == -ENOMEDIUM;
}

static int cgs_not_available(const struct cgs_shown *sh, const struct cgs_controller *c,
			     char *buf, size_t size)
{
	if (c->core)	/* pressure: the root's files are there wherever PSI is on */
		return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "%s is not available (%s/%s "
			       "is missing: the kernel has no PSI, or was booted with psi=0)",
			       c->name, sh->mount, c->stat_file);
	return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "the %s controller is not available "
		       "(%s/cgroup.controllers lacks it)", c->name, sh->mount);
}

/* the controller of @o whose probe at @sh says @err (the first asked for) */
static const struct cgs_controller *cgs_culprit(const struct cgs_shown *sh,
						const struct cgs_opts *o, int err)
{
	struct cgstream_probe p = { .controllers = o->controllers };
	const struct cgs_controller *first = NULL;

	if (sh->path)
		cgs_probe(sh->path, o, o->mode == CGSTREAM_MODE_SUBTREE, &p);
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (!(p.controllers & cgs_controllers[i]->bit))
			continue;
		if (p.modes[i] == err)
			return cgs_controllers[i];
		first = first ? first : cgs_controllers[i];
	}
	return first ? first : &cgs_cpu;
}

/* -EOPNOTSUPP of opening: the file of the mode asked for is missing */
static int cgs_explain_no_stream(const struct cgs_shown *sh, const struct cgs_opts *o,
				 char *buf, size_t size)
{
	const struct cgs_controller *c = cgs_culprit(sh, o, -EOPNOTSUPP);

	if (c != &cgs_cpu && cgs_hierarchy_lacks(sh, c))
		return cgs_not_available(sh, c, buf, size);
	if (o->mode == CGSTREAM_MODE_SUBTREE)
		return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "this kernel has no %s (whole "
			       "subtrees in one read); use --mode auto or a kernel with the cgstream "
			       "patches", c->subtree_file);
	return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "this kernel has no %s (cgroup stat "
		       "streaming); use --mode fallback or a kernel with the cgstream patches",
		       c->stream_file);
}

/* -ENOMEDIUM: the cgroup lacks a controller asked for */
static int cgs_explain_no_ctrl(const struct cgs_shown *sh, const struct cgs_opts *o,
			       char *buf, size_t size)
{
	const struct cgs_controller *c = cgs_culprit(sh, o, -ENOMEDIUM);

	if (cgs_hierarchy_lacks(sh, c))
		return cgs_not_available(sh, c, buf, size);
	if (c->core)
		return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "%s: %s is off for this cgroup "
			       "(no %s: its cgroup.pressure is 0)", sh->text, c->name, c->stat_file);
	return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "%s: the %s controller is not enabled "
		       "for this cgroup (its parent's cgroup.subtree_control lacks it)", sh->text,
		       c->name);
}

/* -EINVAL of opening: the options, or the path */
static int cgs_explain_invalid(const char *arg, const struct cgstream_opts *opts,
			       const struct cgs_shown *sh, char *buf, size_t size)
{
	struct cgstream_opts in = { 0 };
	char *path = NULL;
	int r;

	if (opts)
		memcpy(&in, opts, opts->sz < sizeof(in) ? opts->sz : sizeof(in));
	if (opts && cgs_opts_load(opts, &(struct cgs_opts){ 0 }) < 0) {
		if (!cgs_interval_valid(in.fallback_interval_ms))
			return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "--fallback-interval wants "
				       "%u..%u ms, not %u", CGSTREAM_INTERVAL_MIN_MS,
				       CGSTREAM_INTERVAL_MAX_MS, in.fallback_interval_ms);
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "invalid options (mode %d, "
			       "controllers 0x%x)", in.mode, in.controllers);
	}
	r = sh->mount[0] && arg ? cgs_resolve(sh->mount, arg, &path) : 0;
	free(path);
	if (r == -EINVAL)
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "%s: not a cgroup path (\"..\" is not "
			       "allowed)", sh->text);
	if (in.mode == CGSTREAM_MODE_SUBTREE)
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "--mode subtree is a tree's: it "
			       "watches whole subtrees");
	return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "%s: %s", sh->text, strerror(EINVAL));
}

static int cgs_explain_open(int err, const char *arg, const struct cgstream_opts *opts,
			    const struct cgs_opts *o, const struct cgs_shown *sh, char *buf,
			    size_t size)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
		return cgs_say(buf, size, CGSTREAM_EXIT_NO_CGROUP, "%s: no such cgroup", sh->text);
	case -EACCES:
	case -EPERM:
		return cgs_say(buf, size, CGSTREAM_EXIT_PERMISSION, "%s: permission denied",
			       sh->text);
	case -EINVAL:
		return cgs_explain_invalid(arg, opts, sh, buf, size);
	case -EOPNOTSUPP:
		return cgs_explain_no_stream(sh, o, buf, size);
	case -ENOMEDIUM:
		return cgs_explain_no_ctrl(sh, o, buf, size);
	case -EMFILE:
	case -ENFILE:
		return cgs_say(buf, size, CGSTREAM_EXIT_FAILURE, "%s: too many open files (the "
			       "limit of open files, ulimit -n, is too low for this many cgroups)",
			       sh->text);
	}
	return cgs_say(buf, size, CGSTREAM_EXIT_FAILURE, "%s: %s", sh->text, strerror(-err));
}

/* reading or setting the interval of o->controllers' (first) controller */
static int cgs_explain_interval(int err, bool set, const char *arg, const struct cgs_opts *o,
				const struct cgs_shown *sh, char *buf, size_t size)
{
	const struct cgs_controller *c = cgs_controller_of_bit(o->controllers & -o->controllers);

	c = c ? c : &cgs_cpu;
	switch (err) {
	case -EOPNOTSUPP:
		if (c != &cgs_cpu && cgs_hierarchy_lacks(sh, c))
			return cgs_not_available(sh, c, buf, size);
		return cgs_say(buf, size, CGSTREAM_EXIT_NO_KERNEL, "this kernel has no %s (cgroup "
			       "stat streaming needs a kernel with the cgstream patches)",
			       c->interval_file);
	case -EACCES:
	case -EPERM:
		if (set)
			return cgs_say(buf, size, CGSTREAM_EXIT_PERMISSION, "setting the interval "
				       "needs root (CAP_SYS_ADMIN)");
		return cgs_say(buf, size, CGSTREAM_EXIT_PERMISSION, "reading the %s interval: "
			       "permission denied", c->name);
	case -EINVAL:
		if (set)
			return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "%s is not a valid interval: "
				       "use 0 (off) or %u..%u ms", arg ? sh->text : "?",
				       CGSTREAM_INTERVAL_MIN_MS, CGSTREAM_INTERVAL_MAX_MS);
		break;
	}
	return cgs_say(buf, size, CGSTREAM_EXIT_FAILURE, "%s the %s interval: %s",
		       set ? "setting" : "reading", c->name, strerror(-err));
}

/* "cpu", "cpu and io", "cpu, memory and io": of each controller of @mask
 * the string at @field of its table (CGS_CTRL_NAME: its name) */
static void cgs_list(char *out, size_t size, uint32_t mask, size_t field)
{
	int n = __builtin_popcount(mask), k = 0;
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < CGS_NR_CTRL; i++) {
		if (!(mask & cgs_controllers[i]->bit))
			continue;
		k++;
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%s",
					k == 1 ? "" : k == n ? " and " : ", ",
					*(const char *const *)((const char *)cgs_controllers[i] +
							       field));
	}
}

/* a shared option's value that cgstream_parse_option() refused */
static int cgs_explain_option(int what, const struct cgs_shown *sh, char *buf, size_t size)
{
	char names[128];

	switch (what) {
	case CGSTREAM_WHAT_MODE:
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "--mode is auto, subtree, kernel or "
			       "fallback, not '%s'", sh->text);
	case CGSTREAM_WHAT_CONTROLLERS:
		cgs_list(names, sizeof(names), CGSTREAM_CTRL_ALL, CGS_CTRL_NAME);
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "--controllers is a comma-separated "
			       "list of %s (or all), not '%s'", names, sh->text);
	case CGSTREAM_WHAT_FALLBACK_INTERVAL:
		return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "--fallback-interval wants %u..%u ms, "
			       "not '%s'", CGSTREAM_INTERVAL_MIN_MS, CGSTREAM_INTERVAL_MAX_MS,
			       sh->text);
	}
	return cgs_say(buf, size, CGSTREAM_EXIT_USAGE, "%s is not a valid interval: use 0 (off) "
		       "or %u..%u ms", sh->text, CGSTREAM_INTERVAL_MIN_MS, CGSTREAM_INTERVAL_MAX_MS);
}

CGS_EXPORT int cgstream_explain(int err, int what, const char *arg,
				const struct cgstream_opts *opts, char *buf, size_t size)
{
	struct cgs_opts o = { .controllers = CGSTREAM_CTRL_CPU };
	struct cgs_shown *sh;
	char none[1];
	int r;

	if (what < CGSTREAM_WHAT_OPEN || what > CGSTREAM_WHAT_INTERVAL || (!buf && size))
		return -EINVAL;
	if (!size) {
		buf = none;	/* the status alone */
		size = sizeof(none);
	}
	if (err == 0) {
		buf[0] = '\0';
		return CGSTREAM_EXIT_OK;
	}
	sh = malloc(sizeof(*sh));
	if (!sh)
		return cgs_say(buf, size, CGSTREAM_EXIT_FAILURE, "%s", strerror(ENOMEM));
	if (cgs_opts_load(opts, &o) < 0)
		o = (struct cgs_opts){ .controllers = CGSTREAM_CTRL_CPU };
	if (what >= CGSTREAM_WHAT_MODE) {
		*sh = (struct cgs_shown){ .text = "" };
		if (arg)
			cgstream_escape_name(arg, sh->text, sizeof(sh->text));
	} else {
		cgs_shown_init(sh, what == CGSTREAM_WHAT_OPEN ? arg : NULL, &o);
		if (what == CGSTREAM_WHAT_SET_INTERVAL && arg)
			cgstream_escape_name(arg, sh->text, sizeof(sh->text));
	}
	if (err == -ENODEV && what <= CGSTREAM_WHAT_SET_INTERVAL)
		r = cgs_say(buf, size, CGSTREAM_EXIT_FAILURE, "no cgroup2 file system is mounted");
	else if (what == CGSTREAM_WHAT_OPEN)
		r = cgs_explain_open(err, arg, opts, &o, sh, buf, size);
	else if (what <= CGSTREAM_WHAT_SET_INTERVAL)
		r = cgs_explain_interval(err, what == CGSTREAM_WHAT_SET_INTERVAL, arg, &o, sh, buf,
					 size);
	else
		r = cgs_explain_option(what, sh, buf, size);
	free(sh->path);
	free(sh);
	return r;
}

/* --- the shared options --- */

/* strict decimal: digits only, no sign, no blanks, fits in uint32_t */
static bool cgs_parse_u32(const char *s, uint32_t *v)
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

/* "cpu,memory", "all": names between commas, none empty */
static int cgs_parse_controllers(const char *text, uint32_t *mask)
{
	uint32_t m = 0;

	for (const char *p = text;; p++) {
		size_t len = strcspn(p, ",");
		uint32_t bit = len == 3 && !strncmp(p, "all", 3) ? CGSTREAM_CTRL_ALL : 0;

		for (int i = 0; i < CGS_NR_CTRL && !bit; i++)
			if (strlen(cgs_controllers[i]->name) == len &&
			    !strncmp(p, cgs_controllers[i]->name, len))
				bit = cgs_controllers[i]->bit;
		if (!bit)
			return -EINVAL;
		m |= bit;
		p += len;
		if (!*p)
			break;
	}
	*mask = m;
	return 0;
}

CGS_EXPORT int cgstream_parse_option(int what, const char *text, uint32_t *value)
{
	static const int modes[] = {
		CGSTREAM_MODE_AUTO, CGSTREAM_MODE_SUBTREE, CGSTREAM_MODE_KERNEL,
		CGSTREAM_MODE_FALLBACK,
	};
	uint32_t v;

	if (!text || !value)
		return -EINVAL;
	switch (what) {
	case CGSTREAM_WHAT_MODE:
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			if (!strcmp(text, cgstream_mode_name(modes[i]))) {
				*value = (uint32_t)modes[i];
				return 0;
			}
		}
		return -EINVAL;
	case CGSTREAM_WHAT_CONTROLLERS:
		return cgs_parse_controllers(text, value);
	case CGSTREAM_WHAT_FALLBACK_INTERVAL:
	case CGSTREAM_WHAT_INTERVAL:
		if (!cgs_parse_u32(text, &v) || !cgs_interval_valid(v) ||
		    (v == 0 && what == CGSTREAM_WHAT_FALLBACK_INTERVAL))
			return -EINVAL;
		*value = v;
		return 0;
	}
	return -EINVAL;
}

/* --- the notices at start --- */

/* the line saying that @emu (emulated controllers of @controllers) are */
static void cgs_notice_emulation(char *line, size_t size, uint32_t controllers, uint32_t emu,
				 const int *modes, const struct cgs_opts *o, const char *mount)
{
	const struct cgs_controller *lead = cgs_controller_of_bit(controllers & -controllers);
	char names[128], files[128], when[64];

	cgs_list(files, sizeof(files), emu, CGS_CTRL_EMULATED);
	if (lead && modes[lead->index] == CGSTREAM_MODE_FALLBACK)
		snprintf(when, sizeof(when), "every %u ms",
			 cgs_fallback_ms(mount, o->fallback_interval_ms, lead));
	else
		snprintf(when, sizeof(when), "at each %s flush", lead ? lead->name : "cpu");
	if (o->mode == CGSTREAM_MODE_FALLBACK) {
		snprintf(line, size, "fallback mode, as asked: %s read %s\n", files, when);
		return;
	}
	cgs_list(names, sizeof(names), emu, CGS_CTRL_STREAM_FILE);
	snprintf(line, size, "this kernel has no %s: fallback mode (the stream emulated: %s read "
		 "%s)\n", names, files, when);
}

/* the line saying that @c's kernel interval is 0 */
static void cgs_notice_off(char *line, size_t size, const struct cgs_controller *c, bool lead)
{
	if (lead)
		snprintf(line, size, "the kernel's flush interval is 0 (streaming off)%s%s: no "
			 "samples until it is set, e.g. 'cgstream interval 1000'\n",
			 c == &cgs_cpu ? "" : " for ", c == &cgs_cpu ? "" : c->name);
	else
		snprintf(line, size, "the kernel's flush interval is 0 (streaming off) for %s: its "
			 "values stay as of its last flush until it is set, e.g. 'cgstream "
			 "interval 1000'\n", c->name);
}

CGS_EXPORT int cgstream_notices(uint32_t controllers, const int *modes,
				const struct cgstream_opts *opts, unsigned int which, char *buf,
				size_t size)
{
	char lines[CGS_NR_CTRL + 1][512] = { { 0 } }, *mount = NULL;
	uint32_t emu = 0, ms;
	struct cgs_opts o;
	size_t len = 0;
	int n = 0, r;

	if (!modes || (!buf && size) || (controllers & ~(uint32_t)CGSTREAM_CTRL_ALL))
		return -EINVAL;
	r = cgs_opts_root(opts, &o, &mount);
	if (r < 0)
		return r;
	for (int i = 0; i < CGS_NR_CTRL; i++)
		if ((controllers & cgs_controllers[i]->bit) && modes[i] == CGSTREAM_MODE_FALLBACK)
			emu |= cgs_controllers[i]->bit;
	if ((which & CGSTREAM_NOTICE_EMULATION) && emu)
		cgs_notice_emulation(lines[n++], sizeof(lines[0]), controllers, emu, modes, &o, mount);
	for (int i = 0; i < CGS_NR_CTRL && (which & CGSTREAM_NOTICE_STREAMING_OFF); i++) {
		const struct cgs_controller *c = cgs_controllers[i];

		if ((controllers & c->bit) && modes[i] > 0 && modes[i] != CGSTREAM_MODE_FALLBACK &&
		    cgs_read_interval(mount, c, &ms) == 0 && ms == 0)
			cgs_notice_off(lines[n++], sizeof(lines[0]), c,
				       (controllers & (c->bit - 1)) == 0);
	}
	free(mount);
	for (int i = 0; i < n; i++)
		len += strlen(lines[i]);
	if (len >= size)
		return -ERANGE;
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		strcat(buf, lines[i]);
	return (int)len;
}
