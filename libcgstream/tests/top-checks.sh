# Sourced (not run) by the tests of `cgstream top` (host and VM): a reader
# of its batch tables, and its use as a person uses it: in a tmux pane (a
# real terminal of a known size, on its own server socket), reading the
# screen back with capture-pane.  Every wait polls the pane with a limit,
# never a fixed sleep: a slow host (or a TCG guest) only takes longer.
#
#   fail, expect                from cli-lib.sh (beside this file)
#   burn CGROUP                 a busy loop in CGROUP (burners_stop ends them)
#   ctrl_names CGROUP           the controllers of the *.stat files top reads
#                               there by default, as its mode line names
#                               them: "cpu", "{cpu,memory,io}"; $ctrl_cols:
#                               the columns they add ("MEM,IO/s"), for
#                               tables' cols=
#   mode_line CGROUP MODE       the mode line top says at CGROUP with --mode
#                               MODE and the default controllers (pressure
#                               too where CGROUP has cpu.pressure), from the
#                               files there: "emulation (this kernel has no
#                               cpu.stat.stream and pressure.stream)"
#   tables FILE N CHECK...      FILE holds N tables of top -b, as CHECKs say
#   tmux_start TMPDIR           a detached 80x24 session running bash (a
#                               server of its own: socket TMPDIR/tmux.sock,
#                               gone with TMPDIR)
#   tmux_type TEXT              type TEXT and Enter into the pane
#   tmux_keys KEY...            send keys (tmux names: q, C-c, C-z)
#   pane_wait REGEX [SECONDS]   until a line of the screen matches
#   pane_check ARGS...          the screen is top's table, as ARGS say
#   pane_wait_check S ARGS...   until pane_check ARGS passes (S seconds)
#   pane_flag FORMAT            a tmux format of the pane: #{alternate_on}
#   pane_flag_wait FORMAT VALUE [SECONDS]   until it has that value
#   tmux_stop                   the server goes (the caller's cleanup)

tmux_sock= tmux_tmp=
burners=()

. "${BASH_SOURCE[0]%/*}/cli-lib.sh" || { echo "FAIL: ${BASH_SOURCE[0]%/*}/cli-lib.sh missing"; exit 1; }

# back once the loop has run 20 ms: a loaded host (or a TCG guest) may
# keep a new process waiting, and the tests want it busy in every cycle
burn() {
	local usage
	sh -c 'echo $$ >'"$1/cgroup.procs"'; exec sh -c "while :; do :; done"' &
	burners+=($!)
	for _ in $(seq 600); do
		usage=$(awk '$1 == "usage_usec" { print $2 }' "$1/cpu.stat")
		((usage > 20000)) && return 0
		sleep 0.1
	done
	fail "the busy loop in $1 did not run"
}

ctrl_names() {
	local names=cpu c
	ctrl_cols=
	for c in memory io; do
		[[ -e $1/$c.stat ]] || continue
		names+=",$c"
		[[ $c == memory ]] && ctrl_cols+=${ctrl_cols:+,}MEM || ctrl_cols+=${ctrl_cols:+,}IO/s
	done
	[[ $names == *,* ]] && names="{$names}"
	echo "$names"
}

# the library's choice of each default controller's mode, and top's
# words for it (its own reading of the rules, on purpose: an oracle)
mode_line() {
	"${python:-python3}" - "$1" "$2" <<'PY'
import os, sys
cg, asked = sys.argv[1], sys.argv[2]
def files(c):
    if c == "pressure":
        return dict(stat="cpu.pressure", emu="*.pressure", stream="pressure.stream",
                    subtree="pressure.stream.subtree")
    return dict(stat=c + ".stat", emu=c + ".stat", stream=c + ".stat.stream",
                subtree=c + ".stat.stream.subtree")
modes = {}
for c in ("cpu", "memory", "io", "pressure"):
    f = files(c)
    if not os.path.exists(os.path.join(cg, f["stat"])):
        continue
    has = lambda k: os.path.exists(os.path.join(cg, f[k]))
    if asked == "auto":
        modes[c] = "subtree" if has("subtree") else "streams" if has("stream") else "emulation"
    elif asked == "fallback":
        modes[c] = "emulation"
    elif has("subtree" if asked == "subtree" else "stream"):
        modes[c] = "subtree" if asked == "subtree" else "streams"
    # else: left out of the default set (cpu's missing file is an error)
# "{cpu,memory}.stat and *.pressure": the files named alike grouped
def listed(kind):
    items, done = [], set()
    for c in modes:
        if c in done:
            continue
        name = files(c)[kind]
        rest = name[len(c):] if name.startswith(c + ".") else None
        group = [o for o in modes if files(o)[kind] == o + rest] if rest else [c]
        done.update(group)
        items.append("{%s}%s" % (",".join(group), rest) if len(group) > 1 else name)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
kinds = set(modes.values())
if len(kinds) > 1:
    print(", ".join("%s %s" % (c, m) for c, m in modes.items()))
elif asked == "auto" and kinds != {"subtree"}:
    above = "subtree" if kinds == {"streams"} else "stream"
    print("%s (this kernel has no %s)" % (kinds.pop(), listed(above)))
elif kinds == {"subtree"}:
    print("kernel subtree (%s)" % listed("subtree"))
elif kinds == {"streams"}:
    print("streams (%s per cgroup)" % listed("stream"))
else:
    print("emulation (%s read on a timer)" % listed("emu"))
PY
}

burners_stop() {
	local p
	for p in "${burners[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	burners=()
}

tm() { tmux -S "$tmux_sock" "$@"; }

# the pane's screen as shown, wrapped lines joined (a line that did not fit
# the width comes back longer than it); -J keeps trailing blanks: cut them
pane() { tm capture-pane -p -J -t top:0.0 | sed 's/ *$//'; }

pane_flag() { tm display-message -p -t top:0.0 "$1"; }

tmux_start() {
	tmux_tmp=$1 tmux_sock=$1/tmux.sock
	unset TMUX
	# our own configuration, not the user's: no status line, so that the
	# pane is all of the 80x24 window
	echo "set -g status off" >"$tmux_tmp/tmux.conf"
	tmux -S "$tmux_sock" -f "$tmux_tmp/tmux.conf" new-session -d -x 80 -y 24 -s top \
		"env PS1='$ ' bash --norc --noprofile" || return 1
	[[ $(pane_flag '#{pane_width}x#{pane_height}') == 80x24 ]] ||
		{ echo "the pane is $(pane_flag '#{pane_width}x#{pane_height}'), not 80x24"; return 1; }
	pane_wait '^\$' 60
}

tmux_stop() {
	[[ -n $tmux_sock ]] && tmux -S "$tmux_sock" kill-server 2>/dev/null
	tmux_sock=
}

tmux_type() { tm send-keys -t top:0.0 -l "$1" && tm send-keys -t top:0.0 Enter; }

tmux_keys() { tm send-keys -t top:0.0 "$@"; }

pane_dump() { pane | sed 's/^/  | /'; }

pane_wait() {
	local re=$1 limit=${2:-60} end=$((SECONDS + ${2:-60}))
	while ((SECONDS < end)); do
		pane | grep -Eq -- "$re" && return 0
		sleep 0.2
	done
	echo "the screen after ${limit}s, without /$re/:"
	pane_dump
	return 1
}

# pane_flag_wait FORMAT VALUE [SECONDS]
pane_flag_wait() {
	local end=$((SECONDS + ${3:-60}))
	while ((SECONDS < end)); do
		[[ $(pane_flag "$1") == "$2" ]] && return 0
		sleep 0.2
	done
	echo "$1 is $(pane_flag "$1"), not $2, after ${3:-60}s; the screen:"
	pane_dump
	return 1
}

# pane_check WIDTH HEIGHT [CHECK...]: the screen is top's table, WIDTH x
# HEIGHT, every line fits the width, the column heading, the footer on the
# last line.  CHECKs:
#   first=NAME      the first row is NAME, with a number in CPU%
#   top=NAME        the first row is NAME
#   last=NAME       the last row shown is NAME
#   order=name      rows in name order (a..z; names cut short not
#                   compared); order=name-rev: z..a
#   sort=TEXT       the header says "sort TEXT"
#   cut=SUFFIX      a row's name is cut from the left: "...SUFFIX"
#   num=NAME:COL    NAME's COL (CPU%, USER%, SYS%, THR%, THR-MS, MEM,
#                   IO/s) is a number (MEM, IO/s: bytes, "1.50M")
#   dash=NAME:COL   ... is "-"
#   cols=A,B        the columns after CGROUP are the CPU ones and A, B
#                   (cols=: none more)
#   text=REGEX      a line of the screen matches
#   joined=0        the screen as the lines are, not joined where tmux
#                   marked one wrapped: after a resize that mark stays
#                   on lines that wrapped before the redraw (the checks
#                   of the table's layout still see a line that wraps)
pane_check() {
	if [[ " $* " == *" joined=0 "* ]]; then
		tm capture-pane -p -t top:0.0 | sed 's/ *$//' >"$tmux_tmp/pane" || return 1
	else
		pane >"$tmux_tmp/pane" || return 1
	fi
	"${python:-python3}" - "$tmux_tmp/pane" "$@" <<'PY'
import re, sys
path, width, height, checks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
lines = [l.rstrip() for l in open(path).read().split("\n")]
if lines and lines[-1] == "":
    lines.pop()     # capture-pane ends the last line with a newline
def fail(why):
    print("pane_check: " + why)
    sys.exit(1)
if len(lines) != height:
    fail("%d lines, want %d" % (len(lines), height))
for l in lines:
    if len(l) > width:
        fail("a line is %d columns wide, the pane %d: %r" % (len(l), width, l))
if not lines[0].startswith("cgstream top: "):
    fail("no title line")
if not lines[-1].startswith("q quit"):
    fail("the last line is not the footer: %r" % lines[-1])
head = [i for i, l in enumerate(lines)
        if re.match(r"^CGROUP +CPU% +(USER% +SYS% +THR% +THR-MS( +MEM)?( +IO/s)?|"
                    r"CPU-SOME +MEM-SOME +MEM-FULL +IO-SOME +IO-FULL)$", l)]
if len(head) != 1:
    fail("no column heading")
cols = lines[head[0]].split()[1:]
rows = {}
order = []
for l in lines[head[0] + 1:-1]:
    if not l:
        break
    f = l.split()
    if len(f) != len(cols) + 1:
        fail("not a row: %r" % l)
    order.append(f[0])
    rows[f[0]] = dict(zip(cols, f[1:]))
def number(s, col=""):
    if col in ("MEM", "IO/s"):
        return re.match(r"^[0-9.]+[BKMGTPE]$", s) is not None
    return re.match(r"^[0-9]+\.[0-9]$", s) is not None
for c in checks:
    k, v = c.split("=", 1)
    if k == "first":
        if not order or order[0] != v or not number(rows[v]["CPU%"]):
            fail("first row %r, want %s with a CPU%%" % (order[:1], v))
    elif k == "top":
        if not order or order[0] != v:
            fail("first row %r, want %s" % (order[:1], v))
    elif k == "last":
        if not order or order[-1] != v:
            fail("last row %r, want %s" % (order[-1:], v))
    elif k == "order":
        whole = [n for n in order if not n.startswith("...")]   # cut names sort elsewhere
        if whole != sorted(whole, reverse=(v == "name-rev")):
            fail("rows %s, not in %s order" % (order, v))
    elif k == "sort":
        if not any(re.search(r"\bsort " + re.escape(v) + r"$", l) for l in lines):
            fail("no 'sort %s' in the header" % v)
    elif k == "cut":
        if not any(n.startswith("...") and n.endswith(v) for n in order):
            fail("no row cut to ...%s: %s" % (v, order))
    elif k in ("num", "dash"):
        name, col = v.split(":")
        if name not in rows:
            fail("no row %s: %s" % (name, order))
        if col not in rows[name]:
            fail("no column %s: %s" % (col, cols))
        got = rows[name][col]
        if (k == "num") != number(got, col):
            fail("%s %s is %r" % (name, col, got))
    elif k == "cols":
        want = cols[:5] + (v.split(",") if v else [])
        if cols != want:
            fail("columns %s, want %s" % (cols, want))
    elif k == "text":
        if not any(re.search(v, l) for l in lines):
            fail("no line matches /%s/" % v)
    elif k == "joined":
        pass
    else:
        fail("unknown check " + c)
PY
}

pane_wait_check() {
	local limit=$1 end=$(($SECONDS + $1)) out
	shift
	while ((SECONDS < end)); do
		out=$(pane_check "$@") && return 0
		sleep 0.2
	done
	echo "after ${limit}s: $out; the screen:"
	pane_dump
	return 1
}

# tables FILE N [CHECK...]: FILE holds N tables of top -b, each with the
# header, the column heading and rows.  CHECKs, of every table:
#   mode=TEXT interval=MS sort=TEXT   the header says so
#   rows=A,B,C      the rows, in this order
#   first=NAME      the first row is NAME, with CPU% > 0
#   top=NAME        the first row is NAME
#   sorted=COL      rows in falling order of COL, "-" last
#   idle=NAME       every row but NAME has CPU% 0.0
#   nothr=1         no row has throttling numbers (all "-")
#   note=REGEX      the note line matches
#   unreadable=N    the header counts N unreadable cgroups
#   num=NAME:COL    NAME's COL (CPU%, USER%, SYS%, THR%, THR-MS, MEM,
#                   IO/s) is a number (MEM, IO/s: bytes, "1.50M")
#   dash=NAME:COL   ... is "-"
#   cols=A,B        the columns after CGROUP are the CPU ones and A, B
#                   (cols=: none more)
#   total=REGEX     the "subtree total" line matches
#   view=pressure   the pressure view's columns (CPU%, then CPU-SOME ...);
#                   view=general: the others
#   zero=NAME:COL   NAME's COL is 0.0
# and of them all:
#   seqs=1          flush_seq grows from table to table
#   anypos=NAME:COL NAME's COL is above 0 in at least one table
#   anyabove=NAME:COL:BYTES  NAME's COL (MEM, IO/s) is above BYTES in at
#                   least one table
tables() {
	"${python:-python3}" - "$@" <<'PY'
import re, sys
path, n, checks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
text = open(path).read()
def fail(why):
    print("tables: %s\n%s" % (why, text))
    sys.exit(1)
if not text.endswith("\n\n"):
    fail("the output does not end with a table and a blank line")
tables = [t.split("\n") for t in text[:-2].split("\n\n")]
if len(tables) != n:
    fail("%d tables, want %d" % (len(tables), n))
parsed = []
units = dict(B=1, K=1 << 10, M=1 << 20, G=1 << 30, T=1 << 40, P=1 << 50, E=1 << 60)
def nbytes(s):
    m = re.match(r"^([0-9.]+)([BKMGTPE])$", s)
    return float(m.group(1)) * units[m.group(2)] if m else None
for t in tables:
    if not t[0].startswith("cgstream top: /"):
        fail("no title: %r" % t[0])
    if not re.match(r"^mode (kernel subtree|streams|emulation) \(.*\)$", t[1]):
        fail("no mode line: %r" % t[1])
    m = re.match(r"^interval (\d+) ms  flush_seq (\d+)  missed (\d+)$", t[2])
    if not m:
        fail("no interval line: %r" % t[2])
    m3 = re.match(r"^cgroups (\d+)/(\d+) shown( \((\d+) more unreadable\))?  sort (\S+) \((.*)\)$", t[3])
    if not m3:
        fail("no cgroups line: %r" % t[3])
    if not re.match(r"^subtree total: cpu ([0-9.]+|-)%  (user [0-9.]+%  sys [0-9.]+%|"
                    r"cpu-some ([0-9.]+%|-)  mem-some ([0-9.]+%|-)  mem-full ([0-9.]+%|-)  "
                    r"io-some ([0-9.]+%|-)  io-full ([0-9.]+%|-)$)", t[4]):
        fail("no total line: %r" % t[4])
    h = 5 if t[5].startswith("CGROUP") else 6
    note = t[5] if h == 6 else ""
    if not re.match(r"^CGROUP +CPU% +(USER% +SYS% +THR% +THR-MS( +MEM)?( +IO/s)?|"
                    r"CPU-SOME +MEM-SOME +MEM-FULL +IO-SOME +IO-FULL)$", t[h]):
        fail("no column heading: %r" % t[h])
    cols = t[h].split()[1:]
    rows = []
    for l in t[h + 1:]:
        f = l.split()
        if len(f) != len(cols) + 1:
            fail("not a row: %r" % l)
        rows.append((f[0], dict(zip(cols, f[1:]))))
    if int(m3.group(1)) != len(rows) or int(m3.group(2)) != len(rows):
        fail("%r, but %d rows" % (t[3], len(rows)))
    parsed.append(dict(mode=t[1], interval=int(m.group(1)), seq=int(m.group(2)),
                       sort="%s (%s)" % (m3.group(5), m3.group(6)),
                       unreadable=int(m3.group(4) or 0), note=note, rows=rows, cols=cols,
                       total=t[4]))
def num(s, col=""):
    if col in ("MEM", "IO/s"):
        return nbytes(s) is not None
    return re.match(r"^[0-9]+\.[0-9]$", s) is not None
for c in checks:
    k, v = c.split("=", 1)
    for i, t in enumerate(parsed):
        names = [r[0] for r in t["rows"]]
        if k == "mode" and t["mode"] != "mode " + v:
            fail("table %d: %r, want mode %s" % (i, t["mode"], v))
        if k == "interval" and t["interval"] != int(v):
            fail("table %d: interval %d, want %s" % (i, t["interval"], v))
        if k == "sort" and t["sort"] != v:
            fail("table %d: sort %r, want %r" % (i, t["sort"], v))
        if k == "rows" and names != v.split(","):
            fail("table %d: rows %s, want %s" % (i, names, v))
        if k == "first" and (not names or names[0] != v or not num(t["rows"][0][1]["CPU%"])
                             or float(t["rows"][0][1]["CPU%"]) <= 0):
            fail("table %d: first row %r, want %s with CPU%% > 0" % (i, t["rows"][:1], v))
        if k == "top" and (not names or names[0] != v):
            fail("table %d: first row %r, want %s" % (i, names[:1], v))
        if k == "sorted":
            vals = [r[v] for _, r in t["rows"]]
            key = [nbytes(x) if v in ("MEM", "IO/s") else float(x) for x in vals if x != "-"]
            if key != sorted(key, reverse=True) or "-" in vals[:len(key)]:
                fail("table %d: %s not in falling order: %s" % (i, v, vals))
        if k == "idle":
            for name, r in t["rows"]:
                if name != v and r["CPU%"] != "0.0":
                    fail("table %d: idle %s has CPU%% %s" % (i, name, r["CPU%"]))
        if k == "nothr":
            for name, r in t["rows"]:
                if r["THR%"] != "-" or r["THR-MS"] != "-":
                    fail("table %d: %s shows throttling without the cpu controller" % (i, name))
        if k == "note" and not re.search(v, t["note"]):
            fail("table %d: note %r lacks /%s/" % (i, t["note"], v))
        if k == "unreadable" and t["unreadable"] != int(v):
            fail("table %d: %d unreadable, want %s" % (i, t["unreadable"], v))
        if k in ("num", "dash"):
            name, col = v.split(":")
            r = dict(t["rows"]).get(name)
            if r is None:
                fail("table %d: no row %s" % (i, name))
            if col not in r:
                fail("table %d: no column %s" % (i, col))
            if (k == "num") != num(r[col], col):
                fail("table %d: %s %s is %r" % (i, name, col, r[col]))
        if k == "cols" and t["cols"] != t["cols"][:5] + (v.split(",") if v else []):
            fail("table %d: columns %s, want the CPU ones and %r" % (i, t["cols"], v))
        if k == "total" and not re.search(v, t["total"]):
            fail("table %d: %r lacks /%s/" % (i, t["total"], v))
        if k == "view" and ("CPU-SOME" in t["cols"]) != (v == "pressure"):
            fail("table %d: columns %s, not the %s view" % (i, t["cols"], v))
        if k == "zero":
            name, col = v.split(":")
            got = dict(t["rows"]).get(name, {}).get(col)
            if got != "0.0":
                fail("table %d: %s %s is %r, want 0.0" % (i, name, col, got))
    if k == "seqs":
        seqs = [t["seq"] for t in parsed]
        if seqs != sorted(set(seqs)):
            fail("flush_seq %s" % seqs)
    if k == "anypos":
        name, col = v.split(":")
        got = [dict(t["rows"]).get(name, {}).get(col, "-") for t in parsed]
        if not any(num(g) and float(g) > 0 for g in got):
            fail("%s %s never above 0: %s" % (name, col, got))
    if k == "anyabove":
        name, col, least = v.split(":")
        got = [dict(t["rows"]).get(name, {}).get(col, "-") for t in parsed]
        if not any(nbytes(g) is not None and nbytes(g) > float(least) for g in got):
            fail("%s %s never above %s bytes: %s" % (name, col, least, got))
PY
}
