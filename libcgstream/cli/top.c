// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgstream top: a live table of a subtree's cgroups, like systemd-cgtop,
 * redrawn once per flush from one tree (cgstream_tree: the kernel's
 * subtree file, a stream per cgroup, or the emulation on stock kernels,
 * whichever the kernel has; the header says which).  format.c keeps each
 * cgroup's numbers (FMT_NONE); this file sorts and draws them: on a
 * terminal with plain ANSI escapes and termios (the alternate screen, keys
 * read in the same poll() as the tree's fd and a signalfd), or with
 * --batch as plain tables for scripts.
 *
 * The watched cgroup's own usage is the sum of everything below it (cgroup
 * v2 counts a child's CPU time in its parents too), so it is the header's
 * "subtree total", not a row: rows are the cgroups below it, and the
 * busiest of those comes first.
 *
 * Two views of the rows, so that the table stays within 80 columns: the
 * general one (CPU, throttling, memory, io) and, where pressure is read,
 * below's pressure view (CPU%, then the share of the last interval some
 * or all of a cgroup's tasks waited for the CPU, memory and io: format.h's
 * pressure columns).
 *
 * The terminal is given back as it was on every way out: q, ^C, SIGTERM,
 * SIGHUP, an error, the watched cgroup's removal; on ^Z too (and taken
 * again on SIGCONT), and on a crash (a handler puts it back and dies of
 * the same signal).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "cgstream.h"
#include "cli.h"
#include "format.h"

#define BATCH		256
/* the columns after CGROUP: " %7s %7s %7s %6s %8s", then " %6s" for MEM and IO/s;
 * the pressure view's " %7s" (CPU%), then " %8s" for each pressure column */
#define CPU_WIDTH	40
#define OTHER_WIDTH	7
#define PSI_CPU_WIDTH	8
#define PSI_WIDTH	9
#define MIN_PATH_WIDTH	10
/* six header lines and the column heading, then rows, then the footer */
#define HEAD_LINES	7
#define MIN_ROWS	(HEAD_LINES + 2)

enum view { VIEW_GENERAL, VIEW_PRESSURE, VIEW_ANY };

static const char *const view_names[] = { [VIEW_GENERAL] = "general", [VIEW_PRESSURE] = "pressure" };

/* the sort keys: then the pressure columns, SORT_PSI + enum fmt_psi */
enum sort_key { SORT_CPU, SORT_USER, SORT_SYS, SORT_THROTTLED, SORT_MEM, SORT_IO, SORT_NAME,
		SORT_PSI };
#define N_SORTS (SORT_PSI + FMT_PSI_NR)

static const struct {
	char key;		/* the key that picks it */
	const char *name;	/* --sort NAME */
	const char *column;	/* as the header names it */
	enum view view;		/* the view it shows in */
} sorts[SORT_PSI] = {
	[SORT_CPU] = { 'c', "cpu", "CPU%", VIEW_ANY },
	[SORT_USER] = { 'u', "user", "USER%", VIEW_GENERAL },
	[SORT_SYS] = { 's', "sys", "SYS%", VIEW_GENERAL },
	[SORT_THROTTLED] = { 't', "throttled", "THR-MS", VIEW_GENERAL },
	[SORT_MEM] = { 'm', "mem", "MEM", VIEW_GENERAL },
	[SORT_IO] = { 'i', "io", "IO/s", VIEW_GENERAL },
	[SORT_NAME] = { 'n', "name", "CGROUP", VIEW_ANY },
};

/* a sort's --sort name, column, key (the pressure columns: 1 to 5) and view */
static const char *sort_name(enum sort_key k)
{
	return k >= SORT_PSI ? fmt_psi_columns[k - SORT_PSI].name : sorts[k].name;
}

static const char *sort_column(enum sort_key k)
{
	return k >= SORT_PSI ? fmt_psi_columns[k - SORT_PSI].heading : sorts[k].column;
}

static char sort_key_char(enum sort_key k)
{
	return k >= SORT_PSI ? (char)('1' + (k - SORT_PSI)) : sorts[k].key;
}

static enum view sort_view(enum sort_key k)
{
	return k >= SORT_PSI ? VIEW_PRESSURE : sorts[k].view;
}

/* the terminal as found, for every way out (the crash handler included) */
static struct termios saved_tio;
static volatile sig_atomic_t term_active;

static const char term_enter_seq[] = "\033[?1049h\033[?25l\033[H\033[2J";
static const char term_leave_seq[] = "\033[?25h\033[?1049l";

struct top {
	struct cgstream_opts opts;	/* .controllers: --controllers, else the default set */
	struct cgstream_tree *t;
	int mode;			/* the tree's (its lead controller's) */
	unsigned int lead;		/* that controller */
	struct fmt_src src;		/* for fmt_event */
	char mode_text[128];		/* as the header says it */
	const char *root;		/* the tree's path */
	char mount[PATH_MAX];		/* the cgroup2 mount */
	char root_shown[CGSTREAM_ESCAPED_SIZE(PATH_MAX)];	/* its path as shown */
	struct fmt fmt;
	bool fmt_ready;

	/* the cycles */
	uint64_t cycles;		/* batches with samples */
	uint64_t root_id;		/* 0 until its first event */
	uint64_t seq;			/* the root's latest flush_seq */
	uint64_t gaps;			/* flushes between the root's samples */
	uint64_t missed_base, missed_now; /* flush_missed, where the mode has it */
	bool have_seq, have_missed;
	uint32_t interval_ms;
	bool interval_known;
	char note[512];			/* what changed in the last cycle that changed */
	char pending[480];		/* ... being gathered in this cycle */
	struct cli_ids unreadable;	/* ids of cgroups with an ERROR, until a sample */

	/* what is shown, how */
	enum sort_key sort;
	enum view view;
	bool view_asked;		/* --view */
	bool reverse;
	bool batch;
	uint64_t iterations, counted;	/* -n; tables that could show CPU% */
	unsigned int cols, rows;	/* the terminal's */
	char exit_msg[PATH_MAX + 128];	/* said after the terminal is given back */
};

static void usage_top(FILE *f)
{
	fprintf(f,
		"Usage: cgstream top [OPTIONS] [CGROUP]\n"
		"\n"
		"A live table of CGROUP's subtree (default: the whole hierarchy): each cgroup\n"
		"below it with its CPU use in the last flush interval, busiest first, its\n"
		"memory (MEM: memory.current) and io (IO/s: bytes read and written per\n"
		"second), redrawn once per flush.  CGROUP is absolute or relative to the\n"
		"cgroup2 mount.  Where pressure is read, a second view (p) shows it as below\n"
		"does: the share of the last interval in which some task of a cgroup waited\n"
		"for the CPU (CPU-SOME), for memory or io (MEM-SOME, IO-SOME), or all of its\n"
		"tasks did (MEM-FULL, IO-FULL), in percent.\n"
		"\n"
		"  -b, --batch               plain tables on standard output, one per flush\n"
		"                            (from the second: the first has no CPU%% yet)\n"
		"  -n, --iterations N        stop after N tables that can show CPU%%\n"
		"  -s, --sort KEY            cpu (default), user, sys, throttled, mem, io,\n"
		"                            name, or of the pressure view cpu-some,\n"
		"                            mem-some, mem-full, io-some, io-full\n"
		"      --view general|pressure\n"
		"                            the columns shown first (a --sort of the other\n"
		"                            view's shows that one)\n"
		"      --reverse             the other way round (lowest first, or z..a)\n"
		"      --controllers LIST    cpu,memory,io,pressure (or all): the columns;\n"
		"                            each must be there for CGROUP.  Default: cpu,\n"
		"                            and memory, io and pressure where CGROUP has\n"
		"                            them\n"
		"      --mode auto|subtree|kernel|fallback\n"
		"                            as for watch --recursive (default: auto)\n"
		"      --fallback-interval MS\n"
		"                            timer period of fallback mode (default: the\n"
		"                            kernel's interval if set, else 1000)\n"
		"\n"
		"Keys: c u s t m i n sort by CPU%%, USER%%, SYS%%, throttled time, MEM, IO/s,\n"
		"      name (m and i where those columns are shown: --sort mem and io want\n"
		"      them too); 1 to 5 by the pressure columns;\n"
		"      p switches between the general and the pressure view;\n"
		"      r reverses; q (or Ctrl-C) quits.\n"
		"\n");
	cli_exit_statuses(f);
	fprintf(f, "(Also 2: not a terminal without --batch; 3: the cgroup was removed while "
		"shown.)\n");
}

/* --- text in columns ---
 *
 * What top writes is ASCII and cgroup names as every output shows them
 * (cgstream_shown_path(): printable UTF-8, no controls).  A character may
 * take two columns (CJK) or none (a combining mark): widths come from
 * wcwidth() in the C.UTF-8 locale (LC_CTYPE only), one column each where
 * that locale is missing or says nothing.
 */

/* the character of valid UTF-8 at @p: its bytes in *@len; its columns */
static unsigned int char_cols(const char *p, size_t *len)
{
	unsigned char c = (unsigned char)*p;
	wchar_t wc;
	int w;

	if (c < 0x80) {
		*len = 1;
		return 1;
	}
	*len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	wc = c & (0x3f >> (*len - 1));
	for (size_t i = 1; i < *len; i++) {
		if (((unsigned char)p[i] & 0xc0) != 0x80) {
			*len = i;	/* not what the escape makes: one column a byte */
			return 1;
		}
		wc = (wc << 6) | (p[i] & 0x3f);
	}
	w = wcwidth(wc);
	return w < 0 ? 1 : (unsigned int)w;
}

/* the bytes of @s[0..@n) that fit in @cols columns; the columns in *@used */
static size_t fit_cols(const char *s, size_t n, size_t cols, size_t *used)
{
	size_t i = 0, u = 0, len;

	while (i < n && s[i]) {
		unsigned int w = char_cols(s + i, &len);

		if (u + w > cols)
			break;
		u += w;
		i += len;
	}
	*used = u;
	return i;
}

static size_t text_cols(const char *s)
{
	size_t used;

	fit_cols(s, strlen(s), SIZE_MAX, &used);
	return used;
}

/* --- output: a frame of lines, written at once --- */

struct frame {
	char *buf;
	size_t len, cap;
	unsigned int cols;	/* lines are cut here; 0: no limit (batch) */
	bool term;		/* escapes: each line clears what it did not cover */
	bool nomem;
};

static bool frame_room(struct frame *fr, size_t more)
{
	char *b;
	size_t cap;

	if (fr->len + more + 1 <= fr->cap)
		return true;
	cap = fr->cap ? fr->cap : 4096;
	while (cap < fr->len + more + 1)
		cap *= 2;
	b = realloc(fr->buf, cap);
	if (!b) {
		fr->nomem = true;
		return false;
	}
	fr->buf = b;
	fr->cap = cap;
	return true;
}

static void frame_put(struct frame *fr, const char *s)
{
	size_t n = strlen(s);

	if (frame_room(fr, n)) {
		memcpy(fr->buf + fr->len, s, n);
		fr->len += n;
	}
}

/*
 * One line (columns as above), cut at the width; @inverse: in reverse
 * video.  @newline: false for the footer, the screen's last line (a
 * newline there would scroll).
 */
static void __attribute__((format(printf, 4, 5)))
frame_line(struct frame *fr, bool inverse, bool newline, const char *fmt, ...)
{
	size_t cols = 0, bytes;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !frame_room(fr, (size_t)n + 16))
		return;
	if (inverse && fr->term)
		frame_put(fr, "\033[7m");
	va_start(ap, fmt);
	vsnprintf(fr->buf + fr->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	bytes = fit_cols(fr->buf + fr->len, (size_t)n, fr->cols ? fr->cols : SIZE_MAX, &cols);
	fr->len += bytes;
	if (inverse && fr->term)
		frame_put(fr, "\033[m");
	/*
	 * Erase the rest of the line, unless the line filled it: the cursor
	 * then waits on the last column, which an erase would blank.
	 */
	if (fr->term && cols < fr->cols)
		frame_put(fr, "\033[K");
	if (newline)
		frame_put(fr, "\n");
}

/* all of it, through EINTR, partial writes and a non-blocking fd */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* --- the terminal --- */

static void term_leave(void)
{
	if (!term_active)
		return;
	term_active = 0;
	(void)write_all(STDOUT_FILENO, term_leave_seq, sizeof(term_leave_seq) - 1);
	tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

/*
 * Keys one by one, no echo; ^C, ^Z still signal (ISIG).  Taken as found
 * each time we (re)start; while we hold it, @again sets our modes and the
 * screen anew: after a SIGSTOP and SIGCONT that we did not see coming,
 * the shell may have put its own modes back meanwhile.
 */
static int term_enter(bool again)
{
	struct termios raw;

	if (term_active && !again)
		return 0;
	if (!term_active && tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	raw = saved_tio;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
		return -errno;
	term_active = 1;
	return write_all(STDOUT_FILENO, term_enter_seq, sizeof(term_enter_seq) - 1);
}

static void crash_handler(int sig)
{
	if (term_active) {
		ssize_t w = write(STDOUT_FILENO, term_leave_seq, sizeof(term_leave_seq) - 1);

		(void)w;
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	}
	raise(sig);	/* SA_RESETHAND: now the default action */
}

static void catch_crashes(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = { .sa_handler = crash_handler,
				.sa_flags = (int)(SA_RESETHAND | SA_NODEFER) };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void term_size(struct top *tp)
{
	struct winsize ws;

	tp->cols = 80;
	tp->rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		tp->cols = ws.ws_col;
		tp->rows = ws.ws_row;
	}
}

/* ^Z: give the terminal back, stop; on SIGCONT take it again */
static int top_suspend(void)
{
	sigset_t tstp;

	term_leave();
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	signal(SIGTSTP, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	raise(SIGTSTP);		/* stops here (unless the job is orphaned) */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	return term_enter(false);
}

/* --- what is shown --- */

/*
 * @name (as shown: escaped) in @width columns (0: all of it), padded to
 * them with blanks when @pad, into @buf: cut from the left; at a '/' when
 * that loses only a few more characters, so that no stub of a name is
 * left: ".../web/worker-3.service" rather than "...ice/web/worker-3.service".
 */
static const char *fit_name(char *buf, size_t size, const char *name, size_t width, bool pad)
{
	const char *p = name;
	size_t o = 0, total = text_cols(name), used, len;

	if (width && total > width) {
		size_t skip = total - (width > 3 ? width - 3 : width);
		const char *slash;

		/* the characters that make the first @skip columns go */
		p += fit_cols(name, strlen(name), skip, &used);
		while (used < skip) {
			used += char_cols(p, &len);
			p += len;
		}
		slash = width > 3 ? strchr(p, '/') : NULL;
		if (slash && slash[1] && text_cols(p) - text_cols(slash) <= (width - 3) / 4)
			p = slash;
		if (width > 3) {
			memcpy(buf, "...", 3);
			o = 3;
		}
	}
	len = strlen(p);
	if (o + len + 1 > size)
		len = fit_cols(p, size - o - 1, SIZE_MAX, &used);
	memcpy(buf + o, p, len);
	o += len;
	buf[o] = '\0';
	for (used = text_cols(buf); pad && used < width && o + 1 < size; used++)
		buf[o++] = ' ';
	buf[o] = '\0';
	return buf;
}

/* @shown (a path as cgstream_shown_path() gives it) below the watched cgroup */
static const char *relative(const struct top *tp, const char *shown)
{
	size_t n = strlen(tp->root_shown);

	if (n == 1)
		return shown[0] == '/' && shown[1] ? shown + 1 : shown;
	if (!strncmp(shown, tp->root_shown, n) && shown[n] == '/')
		return shown + n + 1;
	return shown;
}

static bool has_value(const struct fmt_cg *c, enum sort_key k)
{
	double pct;

	if (k >= SORT_PSI)
		return fmt_psi(c, k - SORT_PSI, &pct);
	switch (k) {
	case SORT_NAME:
		return true;
	case SORT_MEM:
		return c->have_mem && c->mem_has_current;
	case SORT_IO:
		return c->have_io_delta;
	case SORT_THROTTLED:
		return c->have_delta && c->has_thr;
	default:
		return c->have_delta;
	}
}

static double thr_pct(const struct fmt_cg *c)
{
	return c->thr_periods ? 100.0 * (double)c->thr_n / (double)c->thr_periods : 0.0;
}

static double sort_value(const struct fmt_cg *c, enum sort_key k)
{
	double pct = 0;

	if (k >= SORT_PSI)
		return fmt_psi(c, k - SORT_PSI, &pct) ? pct : 0;
	switch (k) {
	case SORT_CPU:
		return c->cpu;
	case SORT_USER:
		return c->user;
	case SORT_SYS:
		return c->sys;
	case SORT_THROTTLED:
		return (double)c->thr_usec;
	case SORT_MEM:
		return (double)c->mem_current;
	case SORT_IO:
		return fmt_io_bps(c);
	default:
		break;
	}
	return 0;
}

/*
 * Highest first (names: a..z), --reverse the other way; rows without a
 * number in the sort column ("-") last either way; ties by name, a..z.
 */
static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct top *tp = arg;
	const struct fmt_cg *x = *(struct fmt_cg *const *)a, *y = *(struct fmt_cg *const *)b;
	bool hx = has_value(x, tp->sort), hy = has_value(y, tp->sort);
	int r = 0;

	if (hx != hy)
		return hx ? -1 : 1;
	if (tp->sort == SORT_NAME) {
		r = strcmp(x->path, y->path);
		return tp->reverse ? -r : r;
	}
	if (hx) {
		double vx = sort_value(x, tp->sort), vy = sort_value(y, tp->sort);

		if (tp->sort == SORT_THROTTLED && vx == vy) {
			vx = thr_pct(x);
			vy = thr_pct(y);
		}
		if (vx != vy)
			r = vx > vy ? -1 : 1;
	}
	if (r)
		return tp->reverse ? -r : r;
	return strcmp(x->path, y->path);
}

static void cell(char *buf, size_t size, bool ok, double v)
{
	if (ok)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "-");
}

/* the columns of memory and io, where the tree reads them */
static bool has_mem(const struct top *tp)
{
	return tp->src.controllers & CGSTREAM_CTRL_MEMORY;
}

static bool has_io(const struct top *tp)
{
	return tp->src.controllers & CGSTREAM_CTRL_IO;
}

static bool has_psi(const struct top *tp)
{
	return tp->src.controllers & CGSTREAM_CTRL_PRESSURE;
}

/* the width of the columns after CGROUP */
static unsigned int num_width(const struct top *tp)
{
	if (tp->view == VIEW_PRESSURE)
		return PSI_CPU_WIDTH + FMT_PSI_NR * PSI_WIDTH;
	return CPU_WIDTH + (has_mem(tp) ? OTHER_WIDTH : 0) + (has_io(tp) ? OTHER_WIDTH : 0);
}

static unsigned int min_cols(const struct top *tp)
{
	return MIN_PATH_WIDTH + num_width(tp);
}

/* " %6s" cells of MEM and IO/s into @buf (an empty string without them) */
static void other_cells(char *buf, size_t size, const struct top *tp, const struct fmt_cg *c,
			bool heading)
{
	char mem[16] = "-", io[16] = "-";
	size_t n = 0;

	buf[0] = '\0';
	if (!heading && has_value(c, SORT_MEM))
		fmt_bytes(mem, sizeof(mem), (double)c->mem_current);
	if (!heading && has_value(c, SORT_IO))
		fmt_bytes(io, sizeof(io), fmt_io_bps(c));
	if (has_mem(tp))
		n += (size_t)snprintf(buf + n, size - n, " %6s", heading ? "MEM" : mem);
	if (has_io(tp) && n < size)
		snprintf(buf + n, size - n, " %6s", heading ? "IO/s" : io);
}

/* the pressure view's cells after CGROUP: CPU%, the pressure columns
 * (@c NULL: their headings) */
static void psi_cells(char *buf, size_t size, const struct fmt_cg *c)
{
	char cell_text[32];
	size_t n;
	double pct = 0;

	if (c)
		cell(cell_text, sizeof(cell_text), c->have_delta, c->cpu);
	n = (size_t)snprintf(buf, size, " %7s", c ? cell_text : "CPU%");
	for (unsigned int k = 0; k < FMT_PSI_NR && n < size; k++) {
		if (c) {
			bool ok = fmt_psi(c, k, &pct);	/* before pct is read */

			cell(cell_text, sizeof(cell_text), ok, pct);
		}
		n += (size_t)snprintf(buf + n, size - n, " %8s",
				      c ? cell_text : fmt_psi_columns[k].heading);
	}
}

static void draw_row(struct frame *fr, const struct top *tp, const struct fmt_cg *c,
		     size_t pathw)
{
	char name[CGSTREAM_ESCAPED_SIZE(PATH_MAX) + 8], cpu[32], user[32], sys[32], thr[32],
	     thr_ms[32], others[64];
	char label[CGSTREAM_ESCAPED_SIZE(PATH_MAX) + 16];
	bool d = c->have_delta, t = d && c->has_thr;

	/* a removed cgroup's last row, once */
	snprintf(label, sizeof(label), "%s%s", relative(tp, c->shown), c->removed ? " (removed)" : "");
	fit_name(name, sizeof(name), label, pathw, true);
	if (tp->view == VIEW_PRESSURE) {
		psi_cells(others, sizeof(others), c);
		frame_line(fr, false, true, "%s%s", name, others);
		return;
	}
	cell(cpu, sizeof(cpu), d, c->cpu);
	cell(user, sizeof(user), d, c->user);
	cell(sys, sizeof(sys), d, c->sys);
	cell(thr, sizeof(thr), t, thr_pct(c));
	cell(thr_ms, sizeof(thr_ms), t, (double)c->thr_usec / 1000.0);
	other_cells(others, sizeof(others), tp, c, false);
	frame_line(fr, false, true, "%s %7s %7s %7s %6s %8s%s", name, cpu, user, sys, thr, thr_ms,
		   others);
}

/* the pressure view's: "subtree total: cpu 99.5%  cpu-some 12.0%  mem-some ..." */
static void draw_total_psi(struct frame *fr, const char *cpu, const struct fmt_cg *root)
{
	char psi[FMT_PSI_NR * 24] = "", v[16];
	size_t n = 0;
	double pct = 0;

	for (unsigned int k = 0; k < FMT_PSI_NR; k++) {
		bool ok = root && fmt_psi(root, k, &pct);	/* before pct is read */

		cell(v, sizeof(v), ok, pct);
		n += (size_t)snprintf(psi + n, sizeof(psi) - n, "  %s %s%s", fmt_psi_columns[k].name,
				      v, strcmp(v, "-") ? "%" : "");
	}
	frame_line(fr, false, true, "subtree total: cpu %s%%%s", cpu, psi);
}

/*
 * "subtree total: cpu 99.5%  user 98.9%  sys 0.6%  mem 1.21G  io 12.3M/s
 * throttled 3.1% 12.0 ms" (throttling last: on a narrow terminal it is
 * what is cut)
 */
static void draw_total(struct frame *fr, const struct top *tp, const struct fmt_cg *root)
{
	char cpu[32], user[32], sys[32], thr[96] = "", mem[48] = "", io[48] = "", b[16];
	bool d = root && root->have_delta;

	cell(cpu, sizeof(cpu), d, d ? root->cpu : 0);
	cell(user, sizeof(user), d, d ? root->user : 0);
	cell(sys, sizeof(sys), d, d ? root->sys : 0);
	if (has_mem(tp))
		snprintf(mem, sizeof(mem), "  mem %s", root && has_value(root, SORT_MEM) ?
			 fmt_bytes(b, sizeof(b), (double)root->mem_current) : "-");
	if (has_io(tp))
		snprintf(io, sizeof(io), "  io %s/s", root && has_value(root, SORT_IO) ?
			 fmt_bytes(b, sizeof(b), fmt_io_bps(root)) : "-");
	if (d && root->has_thr)
		snprintf(thr, sizeof(thr), "  throttled %.1f%% %.1f ms", thr_pct(root),
			 (double)root->thr_usec / 1000.0);
	if (tp->view == VIEW_PRESSURE) {
		draw_total_psi(fr, cpu, root);
		return;
	}
	frame_line(fr, false, true, "subtree total: cpu %s%%  user %s%%  sys %s%%%s%s%s", cpu, user,
		   sys, mem, io, thr);
}

/*
 * The table into @fr: header, column heading, rows (@max_rows of them at
 * most; 0: all), and on a terminal the footer on its last line.
 */
static void top_render(struct top *tp, struct frame *fr, size_t max_rows)
{
	struct fmt_cg **v = fmt_cgroups(&tp->fmt), *root = NULL;
	char path[CGSTREAM_ESCAPED_SIZE(PATH_MAX) + 8], interval[96], missed[32], unreadable[48] = "",
	     others[64];
	size_t n = 0, shown, pathw;

	if (!v) {
		fr->nomem = true;
		return;
	}
	for (size_t i = 0; i < tp->fmt.by_id.count; i++) {
		if (v[i]->id == tp->root_id)
			root = v[i];
		else
			v[n++] = v[i];
	}
	qsort_r(v, n, sizeof(v[0]), cmp_rows, tp);
	shown = max_rows && n > max_rows ? max_rows : n;

	/* as wide as the longest name (of all rows: steady while scrolling), if it fits */
	pathw = 6;	/* "CGROUP" */
	for (size_t i = 0; i < n; i++) {
		size_t l = text_cols(relative(tp, v[i]->shown)) +
			   (v[i]->removed ? strlen(" (removed)") : 0);

		pathw = l > pathw ? l : pathw;
	}
	if (fr->cols && pathw > fr->cols - num_width(tp))
		pathw = fr->cols - num_width(tp);

	if (!tp->interval_known)
		snprintf(interval, sizeof(interval), "interval ?");
	else if (tp->interval_ms == 0)
		snprintf(interval, sizeof(interval), "interval 0 (streaming off)");
	else
		snprintf(interval, sizeof(interval), "interval %u ms", tp->interval_ms);
	if (tp->have_seq)
		snprintf(missed, sizeof(missed), "%llu",
			 (unsigned long long)(tp->gaps + tp->missed_now - tp->missed_base));
	else
		snprintf(missed, sizeof(missed), "-");

	/* the watched cgroup's path fits with the title, cut from the left */
	frame_line(fr, false, true, "cgstream top: %s",
		   fit_name(path, sizeof(path), tp->root_shown,
			    fr->cols > 14 ? fr->cols - 14 : fr->cols ? 1 : 0, false));
	frame_line(fr, false, true, "mode %s", tp->mode_text);
	if (tp->have_seq)
		frame_line(fr, false, true, "%s  flush_seq %llu  missed %s", interval,
			   (unsigned long long)tp->seq, missed);
	else
		frame_line(fr, false, true, "%s  flush_seq -  missed -", interval);
	if (tp->unreadable.count)
		snprintf(unreadable, sizeof(unreadable), " (%zu more unreadable)",
			 tp->unreadable.count);
	frame_line(fr, false, true, "cgroups %zu/%zu shown%s  sort %s %s", shown, n, unreadable,
		   sort_column(tp->sort),
		   tp->sort == SORT_NAME ? (tp->reverse ? "(z-a)" : "(a-z)")
					 : (tp->reverse ? "(lowest first)" : "(highest first)"));
	draw_total(fr, tp, root);
	if (tp->note[0] || fr->term)
		frame_line(fr, false, true, "%s", tp->note);
	fit_name(path, sizeof(path), "CGROUP", pathw, true);
	if (tp->view == VIEW_PRESSURE) {
		psi_cells(others, sizeof(others), NULL);
		frame_line(fr, true, true, "%s%s", path, others);
	} else {
		other_cells(others, sizeof(others), tp, NULL, true);
		frame_line(fr, true, true, "%s %7s %7s %7s %6s %8s%s", path, "CPU%", "USER%", "SYS%",
			   "THR%", "THR-MS", others);
	}
	for (size_t i = 0; i < shown; i++)
		draw_row(fr, tp, v[i], pathw);
	free(v);
}

/* the screen's last line: the keys */
static void top_footer(struct frame *fr, const struct top *tp)
{
	if (tp->view == VIEW_PRESSURE)
		frame_line(fr, false, false, "q quit  p general  sort: c cpu  1-5 pressure  n name  "
			   "r reverse");
	else if (has_mem(tp) || has_io(tp) || has_psi(tp))
		frame_line(fr, false, false, "q quit%s  sort: c cpu  u user  s sys  t thr%s%s"
			   "  n name  r reverse", has_psi(tp) ? "  p pressure" : "",
			   has_mem(tp) ? "  m mem" : "", has_io(tp) ? "  i io" : "");
	else
		frame_line(fr, false, false, "q quit   sort: c cpu  u user  s sys  "
			   "t throttled  n name   r reverse");
}

/* the whole screen, at once */
static int top_draw(struct top *tp)
{
	struct frame fr = { .term = true };
	char pos[32];
	int r;

	/*
	 * The size as it is now, not as the last SIGWINCH told: a cycle may
	 * be drawn between a resize and its signal, and lines of the old
	 * width would wrap.
	 */
	term_size(tp);
	fr.cols = tp->cols;
	frame_put(&fr, "\033[H");
	if (tp->cols < min_cols(tp) || tp->rows < MIN_ROWS) {
		frame_line(&fr, false, true, "terminal too small (%ux%u)", tp->cols, tp->rows);
		frame_line(&fr, false, true, "cgstream top needs %ux%u", min_cols(tp), MIN_ROWS);
		frame_line(&fr, false, false, "q quits");
		frame_put(&fr, "\033[J");
	} else {
		top_render(tp, &fr, tp->rows - HEAD_LINES - 1);
		frame_put(&fr, "\033[J");
		snprintf(pos, sizeof(pos), "\033[%u;1H", tp->rows);
		frame_put(&fr, pos);
		top_footer(&fr, tp);
	}
	r = fr.nomem ? -ENOMEM : write_all(STDOUT_FILENO, fr.buf, fr.len);
	free(fr.buf);
	return r;
}

/* one plain table (batch mode) */
static int top_print(struct top *tp)
{
	struct frame fr = { 0 };
	int r;

	top_render(tp, &fr, 0);
	frame_put(&fr, "\n");
	r = fr.nomem ? -ENOMEM : write_all(STDOUT_FILENO, fr.buf, fr.len);
	free(fr.buf);
	return r;
}

/* --- the tree --- */

static void top_read_interval(struct top *tp)
{
	uint32_t ms;

	if (tp->mode == CGSTREAM_MODE_FALLBACK) {
		/* the library's rule (cgstream.h), taken once at open as it does */
		if (!tp->interval_known) {
			ms = tp->opts.fallback_interval_ms;
			if (!ms && (cgstream_get_ctrl_interval(&tp->opts, tp->lead, &ms) < 0 || ms == 0))
				ms = 1000;
			tp->interval_ms = ms;
			tp->interval_known = true;
		}
		return;
	}
	tp->interval_known = cgstream_get_ctrl_interval(&tp->opts, tp->lead, &ms) == 0;
	if (tp->interval_known)
		tp->interval_ms = ms;
}

/* the part of @ctrl's file @which after its name ("cpu.stat" -> ".stat"); NULL
 * when the file is not named after it ("*.pressure") */
static const char *file_suffix(unsigned int ctrl, unsigned int which)
{
	const char *f = cgstream_controller_file(ctrl, which), *name = cli_ctrl(ctrl);
	size_t n = strlen(name);

	return f && !strncmp(f, name, n) && f[n] == '.' ? f + n : NULL;
}

/*
 * The files of @mask's controllers for @which (enum cgstream_file), as the
 * library names them, those named alike grouped: "{cpu,memory,io}.stat
 * and *.pressure", "{cpu,io}.stat.stream.subtree and pressure.stream.subtree"
 */
static void ctrl_files(char *out, size_t size, uint32_t mask, unsigned int which)
{
	char items[CGSTREAM_CTRL_SLOTS][128];
	uint32_t used = 0;
	size_t n = 0, len = 0;

	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		const char *rest = file_suffix(b, which);
		size_t k = 0, il = 0;

		if (!(mask & b) || (used & b))
			continue;
		for (unsigned int o = b; rest && cli_ctrl(o); o <<= 1)
			if ((mask & o) && file_suffix(o, which) && !strcmp(file_suffix(o, which), rest)) {
				il += (size_t)snprintf(items[n] + il, sizeof(items[n]) - il, "%s%s",
						       k++ ? "," : "{", cli_ctrl(o));
				used |= o;
			}
		if (k > 1)
			snprintf(items[n] + il, sizeof(items[n]) - il, "}%s", rest);
		else
			snprintf(items[n], sizeof(items[n]), "%s", cgstream_controller_file(b, which));
		n++;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%s",
					!i ? "" : i + 1 == n ? " and " : ", ", items[i]);
}

/*
 * The header's mode line.  One controller: "kernel subtree
 * (cpu.stat.stream.subtree)"; several in the same mode: "kernel subtree
 * ({cpu,memory,io}.stat.stream.subtree and pressure.stream.subtree)"; in
 * different modes: "cpu subtree, memory streams, io emulation".  With
 * --mode auto, a mode below the best says what the kernel lacks.
 */
static void top_describe_mode(struct top *tp, int asked)
{
	static const char *const word[] = {
		[CGSTREAM_MODE_SUBTREE] = "subtree",
		[CGSTREAM_MODE_KERNEL] = "streams",
		[CGSTREAM_MODE_FALLBACK] = "emulation",
	};
	char files[96];
	size_t len = 0;
	int same = -1;
	bool mixed = false;

	for (unsigned int b = 1; cli_ctrl(b); b <<= 1) {
		int m = tp->src.modes[cli_ctrl_index(b)];

		mixed |= m && same >= 0 && m != same;
		same = m ? m : same;
	}
	if (mixed) {
		for (unsigned int b = 1; cli_ctrl(b); b <<= 1)
			if (tp->src.modes[cli_ctrl_index(b)])
				len += (size_t)snprintf(tp->mode_text + len, sizeof(tp->mode_text) - len,
							"%s%s %s", len ? ", " : "", cli_ctrl(b),
							word[tp->src.modes[cli_ctrl_index(b)]]);
		return;
	}
	if (asked == CGSTREAM_MODE_AUTO && same != CGSTREAM_MODE_SUBTREE) {
		/* what the kernel lacks: the files of the mode above */
		ctrl_files(files, sizeof(files), tp->src.controllers,
			   same == CGSTREAM_MODE_KERNEL ? CGSTREAM_FILE_SUBTREE : CGSTREAM_FILE_STREAM);
		snprintf(tp->mode_text, sizeof(tp->mode_text), "%s (this kernel has no %s)",
			 same == CGSTREAM_MODE_KERNEL ? "streams" : "emulation", files);
		return;
	}
	ctrl_files(files, sizeof(files), tp->src.controllers,
		   same == CGSTREAM_MODE_SUBTREE ? CGSTREAM_FILE_SUBTREE :
		   same == CGSTREAM_MODE_KERNEL ? CGSTREAM_FILE_STREAM : CGSTREAM_FILE_STAT);
	snprintf(tp->mode_text, sizeof(tp->mode_text), same == CGSTREAM_MODE_SUBTREE ?
		 "kernel subtree (%s)" : same == CGSTREAM_MODE_KERNEL ? "streams (%s per cgroup)" :
		 "emulation (%s read on a timer)", files);
}

static void note_add(struct top *tp, const char *what, const char *path, int err)
{
	char shown[CGSTREAM_ESCAPED_SIZE(PATH_MAX)];
	const char *name = "?";
	size_t n = strlen(tp->pending);

	if (cgstream_shown_path(path, tp->mount, shown, sizeof(shown)) >= 0)
		name = relative(tp, shown);
	if (err)
		snprintf(tp->pending + n, sizeof(tp->pending) - n, "%s%s %s (%s)", n ? "; " : "",
			 what, name, strerror(err));
	else
		snprintf(tp->pending + n, sizeof(tp->pending) - n, "%s%s %s", n ? "; " : "", what,
			 name);
}

/* a cgroup the tree cannot read (ERROR) is no row until it can again */
static void set_unreadable(struct top *tp, uint64_t id, bool unreadable)
{
	uint64_t *n = cli_ids_find(&tp->unreadable, id);

	if (unreadable && !n && (n = malloc(sizeof(*n)))) {
		*n = id;
		if (cli_ids_add(&tp->unreadable, n) < 0)
			free(n);
	} else if (!unreadable && n) {
		cli_ids_del(&tp->unreadable, n);
		free(n);
	}
}

static void top_event(struct top *tp, const struct cgstream_event *ev)
{
	const struct cgstream_sample *s = &ev->sample;
	uint64_t seq;

	set_unreadable(tp, s->cgroup_id, ev->type == CGSTREAM_EVENT_ERROR);

	if (ev->parent_id == 0 && ev->type != CGSTREAM_EVENT_REMOVED)
		tp->root_id = s->cgroup_id;
	switch (ev->type) {
	case CGSTREAM_EVENT_ADDED:
		/* the first cycle adds every cgroup there is: not news */
		if (tp->cycles && s->cgroup_id != tp->root_id)
			note_add(tp, "added", ev->path, 0);
		break;
	case CGSTREAM_EVENT_REMOVED:
		if (s->cgroup_id != tp->root_id)
			note_add(tp, "removed", ev->path, 0);
		break;
	case CGSTREAM_EVENT_ERROR:
		note_add(tp, "cannot read", ev->path, -ev->error);
		break;
	case CGSTREAM_EVENT_SAMPLE:
		if (s->cgroup_id != tp->root_id)
			break;
		seq = fmt_event_seq(ev);
		/* flushes this program did not see (it fell behind) */
		if (tp->have_seq && seq > tp->seq + 1)
			tp->gaps += seq - tp->seq - 1;
		tp->seq = seq;
		tp->have_seq = true;
		/* cycles the kernel's flusher (or the emulation's timer) skipped */
		if ((ev->controllers & CGSTREAM_CTRL_CPU) && (s->present & CGSTREAM_F_FLUSH_MISSED)) {
			if (!tp->have_missed)
				tp->missed_base = s->flush_missed;
			tp->have_missed = true;
			tp->missed_now = s->flush_missed;
		}
		break;
	}
	fmt_event(&tp->fmt, ev, &tp->src);
}

/* 1: a cycle came in, 0: nothing yet, -errno (-ENODEV: the root went) */
static int top_drain(struct top *tp)
{
	struct cgstream_event ev[BATCH];
	bool samples = false;
	int n;

	do {
		n = cgstream_tree_process(tp->t, ev, BATCH, sizeof(ev[0]));
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			samples |= ev[i].type == CGSTREAM_EVENT_SAMPLE;
			top_event(tp, &ev[i]);
		}
	} while (n == BATCH);
	/* the cgroups removed in the last cycle's table go, this one's stay */
	if (samples)
		fmt_batch_end(&tp->fmt, &tp->src, tp->seq);
	if (samples && !tp->cycles)
		tp->note[0] = '\0';	/* "waiting for the first flush" */
	if (tp->pending[0]) {
		snprintf(tp->note, sizeof(tp->note), "flush_seq %llu: %s",
			 (unsigned long long)tp->seq, tp->pending);
		tp->pending[0] = '\0';
	}
	if (!samples)
		return 0;
	tp->cycles++;
	top_read_interval(tp);
	return 1;
}

static int parse_sort(const char *name, enum sort_key *k)
{
	for (size_t i = 0; i < N_SORTS; i++) {
		if (!strcmp(name, sort_name((enum sort_key)i))) {
			*k = (enum sort_key)i;
			return 0;
		}
	}
	fprintf(stderr, "cgstream: --sort is cpu, user, sys, throttled, mem, io, name, cpu-some, "
		"mem-some, mem-full, io-some or io-full, not '%s'\n", name);
	return CGSTREAM_EXIT_USAGE;
}

static int parse_view(const char *name, enum view *v)
{
	for (size_t i = 0; i < sizeof(view_names) / sizeof(view_names[0]); i++) {
		if (!strcmp(name, view_names[i])) {
			*v = (enum view)i;
			return 0;
		}
	}
	fprintf(stderr, "cgstream: --view is general or pressure, not '%s'\n", name);
	return CGSTREAM_EXIT_USAGE;
}

/* sort by @k, in its view (that of the column it sorts by) */
static void top_sort_by(struct top *tp, enum sort_key k)
{
	tp->sort = k;
	if (sort_view(k) != VIEW_ANY)
		tp->view = sort_view(k);
}

/* 1: quit; 0: redraw if anything changed (*changed) */
static int top_keys(struct top *tp, bool *changed)
{
	char buf[64];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	for (ssize_t i = 0; i < n; i++) {
		char k = buf[i];

		if (k == '\033')
			break;	/* an escape sequence (an arrow key...): none of ours */
		if (k == 'q' || k == 'Q')
			return 1;
		if (k == 'r' || k == 'R') {
			tp->reverse = !tp->reverse;
			*changed = true;
		} else if (k == '\f') {
			*changed = true;	/* ^L: draw again */
		} else if ((k == 'p' || k == 'P') && has_psi(tp)) {
			tp->view = tp->view == VIEW_PRESSURE ? VIEW_GENERAL : VIEW_PRESSURE;
			if (sort_view(tp->sort) != VIEW_ANY && sort_view(tp->sort) != tp->view)
				tp->sort = SORT_CPU;	/* its column is not shown */
			*changed = true;
		}
		for (size_t s = 0; s < N_SORTS; s++) {
			char key = sort_key_char((enum sort_key)s);

			/* m, i, 1-5: only by a column that is read */
			if ((s == SORT_MEM && !has_mem(tp)) || (s == SORT_IO && !has_io(tp)) ||
			    (s >= SORT_PSI && !has_psi(tp)))
				continue;
			if (k == key || (key >= 'a' && k == key - 'a' + 'A')) {
				top_sort_by(tp, (enum sort_key)s);
				*changed = true;
			}
		}
	}
	return 0;
}

/* the way out: @status, and a message (said once the terminal is back) */
static int __attribute__((format(printf, 3, 4)))
top_exit(struct top *tp, int status, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(tp->exit_msg, sizeof(tp->exit_msg), "cgstream: ");

	va_start(ap, fmt);
	vsnprintf(tp->exit_msg + n, sizeof(tp->exit_msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return status;
}

/* -1: go on; else the exit status */
static int top_signals(struct top *tp, int sfd, bool *redraw)
{
	struct signalfd_siginfo si;
	int r;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGWINCH:
			break;
		case SIGTSTP:
			r = top_suspend();
			if (r < 0)
				return top_exit(tp, CGSTREAM_EXIT_FAILURE, "the terminal: %s", strerror(-r));
			break;
		case SIGCONT:
			/* also after a SIGSTOP from someone else: the screen may be anyone's */
			r = term_enter(true);
			if (r < 0)
				return top_exit(tp, CGSTREAM_EXIT_FAILURE, "the terminal: %s", strerror(-r));
			break;
		default:	/* INT, TERM, HUP */
			return CGSTREAM_EXIT_OK;
		}
		*redraw = true;	/* at the terminal's size now */
	}
	return -1;
}

/* -1: go on; else the exit status */
static int top_cycle(struct top *tp, bool *redraw)
{
	int r = top_drain(tp);

	if (r == -ENODEV)
		return top_exit(tp, CGSTREAM_EXIT_NO_CGROUP, "%s: the watched cgroup was removed",
				tp->root_shown);
	if (r < 0)
		return top_exit(tp, CGSTREAM_EXIT_FAILURE, "reading the streams: %s", strerror(-r));
	/* the first cycle is every cgroup's first sample: no CPU% yet */
	if (r == 0 || tp->cycles < 2) {
		*redraw |= r > 0;
		return -1;
	}
	tp->counted++;
	if (tp->batch) {
		r = top_print(tp);
		if (r < 0)
			return top_exit(tp, CGSTREAM_EXIT_FAILURE, "writing the output: %s", strerror(-r));
	}
	*redraw = true;
	return -1;
}

/* the loop: one poll() for signals, the tree and the keys; the exit status */
static int top_loop(struct top *tp, int sfd)
{
	struct pollfd pfd[3] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = cgstream_tree_fd(tp->t), .events = POLLIN },
		{ .fd = tp->batch ? -1 : STDIN_FILENO, .events = POLLIN },
	};
	int r;

	if (!tp->batch) {
		catch_crashes();
		r = term_enter(false);
		if (r == 0)
			r = top_draw(tp);
		if (r < 0)
			return top_exit(tp, CGSTREAM_EXIT_FAILURE, "the terminal: %s", strerror(-r));
	}
	for (;;) {
		bool redraw = false;
		uint32_t interval = tp->interval_ms;

		/*
		 * On a terminal, look at the kernel's interval once a second
		 * too: set to 0, no flush comes to show that it was.
		 */
		r = poll(pfd, 3, tp->batch ? -1 : 1000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return top_exit(tp, CGSTREAM_EXIT_FAILURE, "poll: %s", strerror(errno));
		}
		if (r == 0) {
			top_read_interval(tp);
			redraw = tp->interval_ms != interval;
		}
		if (pfd[0].revents && (r = top_signals(tp, sfd, &redraw)) >= 0)
			return r;
		if (pfd[2].revents & POLLIN) {
			if (top_keys(tp, &redraw))
				return CGSTREAM_EXIT_OK;
		} else if (pfd[2].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			return CGSTREAM_EXIT_OK;	/* the terminal is gone */
		}
		if (pfd[1].revents && (r = top_cycle(tp, &redraw)) >= 0)
			return r;
		if (redraw && !tp->batch && (r = top_draw(tp)) < 0)
			return top_exit(tp, CGSTREAM_EXIT_FAILURE, "the terminal: %s", strerror(-r));
		if (tp->iterations && tp->counted >= tp->iterations)
			return CGSTREAM_EXIT_OK;
	}
}

/* -1: go on; else the exit status */
static int top_options(struct top *tp, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "view", required_argument, NULL, 'v' },
		{ "mode", required_argument, NULL, 'm' },
		{ "fallback-interval", required_argument, NULL, 'f' },
		{ "controllers", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int opt;
	uint32_t v;

	while ((opt = getopt_long(argc, argv, "bn:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			tp->batch = true;
			break;
		case 'n':
			if (!cli_parse_u32(optarg, &v) || v == 0) {
				fprintf(stderr, "cgstream: --iterations wants a number >= 1, not '%s'\n",
					optarg);
				return CGSTREAM_EXIT_USAGE;
			}
			tp->iterations = v;
			break;
		case 's':
			if (parse_sort(optarg, &tp->sort))
				return CGSTREAM_EXIT_USAGE;
			break;
		case 'R':
			tp->reverse = true;
			break;
		case 'v':
			if (parse_view(optarg, &tp->view))
				return CGSTREAM_EXIT_USAGE;
			tp->view_asked = true;
			break;
		case 'm':
		case 'f':
		case 'C':
			if (cli_shared_option(opt, optarg, &tp->opts))
				return CGSTREAM_EXIT_USAGE;
			break;
		case 'h':
			usage_top(stdout);
			return CGSTREAM_EXIT_OK;
		default:
			usage_top(stderr);
			return CGSTREAM_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "cgstream: top shows one subtree: give at most one cgroup\n");
		return CGSTREAM_EXIT_USAGE;
	}
	if (!tp->batch && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "cgstream: top draws on a terminal and standard output is not one; "
			"use --batch (-b) for plain tables\n");
		return CGSTREAM_EXIT_USAGE;
	}
	if (!tp->batch && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "cgstream: top reads keys from a terminal and standard input is not one; "
			"use --batch (-b) for plain tables\n");
		return CGSTREAM_EXIT_USAGE;
	}
	return -1;
}

static int top_tree_ctrl_mode(const void *t, unsigned int b)
{
	return cgstream_tree_ctrl_mode(t, b);
}

/* the sort (--sort) and the view (--view) asked for have their columns:
 * 0, or said: the exit status */
static int top_sort_shown(struct top *tp)
{
	enum view v = sort_view(tp->sort);

	if ((tp->sort == SORT_MEM && !has_mem(tp)) || (tp->sort == SORT_IO && !has_io(tp)) ||
	    (tp->sort >= SORT_PSI && !has_psi(tp))) {
		fprintf(stderr, "cgstream: --sort %s: no %s column (%s is not read)\n",
			sort_name(tp->sort), sort_column(tp->sort),
			tp->sort == SORT_MEM ? "memory" : tp->sort == SORT_IO ? "io" : "pressure");
		return CGSTREAM_EXIT_USAGE;
	}
	if (tp->view == VIEW_PRESSURE && !has_psi(tp)) {
		fprintf(stderr, "cgstream: --view pressure: pressure is not read\n");
		return CGSTREAM_EXIT_USAGE;
	}
	if (tp->view_asked && v != VIEW_ANY && v != tp->view) {
		fprintf(stderr, "cgstream: --sort %s is a column of the %s view, not of the %s one\n",
			sort_name(tp->sort), view_names[v], view_names[tp->view]);
		return CGSTREAM_EXIT_USAGE;
	}
	top_sort_by(tp, tp->sort);
	return 0;
}

/* the tree of @arg, what it reads, how its paths are shown: 0 or the exit status */
static int top_open(struct top *tp, const char *arg)
{
	char path[PATH_MAX];
	int r;

	r = cgstream_resolve_path(arg, &tp->opts, path, sizeof(path));
	if (r < 0)
		return cli_fail(r, CGSTREAM_WHAT_OPEN, arg, &tp->opts);
	r = cli_probe(&tp->opts, (char *[]){ path }, 1, true, NULL);
	if (r)
		return r;
	r = cgstream_tree_open(path, &tp->opts, &tp->t);
	if (r < 0)
		return cli_fail(r, CGSTREAM_WHAT_OPEN, arg, &tp->opts);
	tp->mode = cgstream_tree_mode(tp->t);
	fmt_src_modes(&tp->src, tp->mode, top_tree_ctrl_mode, tp->t);
	tp->lead = tp->src.controllers & -tp->src.controllers;
	tp->root = cgstream_tree_path(tp->t);
	if (cgstream_resolve_path("/", &tp->opts, tp->mount, sizeof(tp->mount)) < 0 ||
	    cgstream_shown_path(tp->root, tp->mount, tp->root_shown, sizeof(tp->root_shown)) < 0)
		snprintf(tp->root_shown, sizeof(tp->root_shown), "?");
	top_describe_mode(tp, tp->opts.mode);
	top_read_interval(tp);
	return top_sort_shown(tp);
}

/*
 * The first note: a streamed controller whose kernel interval is 0 (the
 * library's notice: its first line on the screen, all of them on stderr
 * in batch mode), else that the first flush is awaited.
 */
static void top_first_note(struct top *tp)
{
	char off[2048];
	int n = cgstream_notices(tp->src.controllers, tp->src.modes, &tp->opts,
				 CGSTREAM_NOTICE_STREAMING_OFF, off, sizeof(off));

	if (n <= 0) {
		snprintf(tp->note, sizeof(tp->note), "waiting for the first flush");
		return;
	}
	snprintf(tp->note, sizeof(tp->note), "%.*s", (int)strcspn(off, "\n"), off);
	if (tp->batch)
		cli_notices(tp->src.controllers, tp->src.modes, &tp->opts,
			    CGSTREAM_NOTICE_STREAMING_OFF);
}

int cmd_top(int argc, char **argv)
{
	struct top tp = { .opts = { .sz = sizeof(struct cgstream_opts),
				    .controllers = CGSTREAM_CTRL_DEFAULT } };
	int sfd = -1, r, ret = CGSTREAM_EXIT_FAILURE;
	sigset_t mask;

	r = top_options(&tp, argc, argv);
	if (r >= 0)
		return r;
	/* the widths of names' characters (LC_CTYPE only: numbers stay as they are) */
	setlocale(LC_CTYPE, "C.UTF-8");
	cli_raise_fd_limit();
	r = top_open(&tp, optind < argc ? argv[optind] : "/");
	if (r) {
		ret = r;
		goto out;
	}
	if (fmt_init(&tp.fmt, stdout, FMT_NONE, 0, true, tp.src.controllers, tp.mount) < 0) {
		fprintf(stderr, "cgstream: %s\n", strerror(ENOMEM));
		goto out;
	}
	tp.fmt_ready = true;
	top_first_note(&tp);

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (!tp.batch) {
		sigaddset(&mask, SIGWINCH);
		sigaddset(&mask, SIGTSTP);
		sigaddset(&mask, SIGCONT);
	}
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, "cgstream: signalfd: %s\n", strerror(errno));
		goto out;
	}
	ret = top_loop(&tp, sfd);
out:
	term_leave();
	if (tp.exit_msg[0])
		fprintf(stderr, "%s\n", tp.exit_msg);
	cgstream_tree_close(tp.t);
	if (tp.fmt_ready)
		fmt_fini(&tp.fmt);
	cli_ids_free(&tp.unreadable, free);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
