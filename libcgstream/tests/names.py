"""Names are data: cgroups named with the bytes that break formats, and
the checks of what the cgstream command made of them (run by 50-cli and
55-top, host and VM).

    names.py mkdirs DIR              make the cgroups below DIR; print their names
    names.py json FILE MOUNT DIR     FILE's lines are JSON (a real parser), and each
                                     cgroup below DIR reads back to its name
    names.py text FILE               FILE is printable UTF-8 lines (no control byte)
    names.py table FILE DIR          top -b's tables: a row per cgroup below DIR,
                                     named as the rule says, the columns aligned

The rule (cgstream.h, "names are data") read back, written here again on
purpose, as an oracle: "\\\\" is one backslash, "\\xHH" naming a byte the
rule escapes (a control, DEL, 0x80-0xff) is that byte, anything else is
itself.  Exit 0 when the check holds, 1 (with what failed) otherwise.
"""

import json
import os
import sys
import unicodedata

# Each name breaks something when copied raw: JSON (a quote, a backslash,
# invalid UTF-8), a terminal (ESC, C1's CSI), lines (a tab), systemd's
# own escapes, a 255-byte component.  The kernel refuses a newline in a
# cgroup's name (EINVAL): tried, and said when refused.
NAMES = [b"bad\xff", b"cut\xe2\x82", b'quo"te', b"back\\slash", b"back\\xffslash",
         b"trail\\", b"tab\there", b"esc\x1b[31mred", b"csi\xc2\x9bx", b"del\x7f",
         b"caf\xc3\xa9", b"\xe6\xbc\xa2\xe5\xad\x97", b"system-systemd\\x2dfsck.slice",
         b"new\nline", b"x" * 255]


def unescape(text: str) -> bytes:
    data, out, i = text.encode(), bytearray(), 0
    while i < len(data):
        hexpair = data[i + 2:i + 4]
        if data[i:i + 2] == b"\\\\":
            out += b"\\"
            i += 2
        elif data[i:i + 2] in (b"\\x", b"\\X") and len(hexpair) == 2 and all(
                c in b"0123456789abcdefABCDEF" for c in hexpair) and (
                int(hexpair, 16) < 0x20 or int(hexpair, 16) >= 0x7f):
            out.append(int(hexpair, 16))
            i += 4
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def mkdirs(parent: str) -> None:
    made = []
    for name in NAMES:
        try:
            os.mkdir(os.path.join(os.fsencode(parent), name))
            made.append(name)
        except FileExistsError:
            made.append(name)
        except OSError as e:
            print(f"note: mkdir {name!r}: {e.strerror} (the kernel refuses it)")
    print(f"ok: {len(made)} cgroups named to break formats below {parent}")


def ids_below(parent: str) -> dict[int, bytes]:
    """cgroup id (inode) -> name, of the directories below @parent."""
    return {e.inode(): e.name for e in os.scandir(os.fsencode(parent)) if e.is_dir()}


def check_json(path: str, mount: str, parent: str) -> None:
    names = ids_below(parent)
    rel = os.fsencode(parent)[len(os.fsencode(mount.rstrip("/"))):]
    seen = set()
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    for n, line in enumerate(lines[:-1], 1):
        try:
            o = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            fail(f"line {n} is not UTF-8 JSON ({e}): {line[:200]!r}")
        name = names.get(o.get("cgroup_id"))
        if name is None:
            continue
        if unescape(o["cgroup"]) != rel + b"/" + name:
            fail(f"line {n}: {o['cgroup']!r} does not read back to {rel + b'/' + name!r}")
        seen.add(name)
    if lines[-1]:
        fail("the last line has no newline")
    if seen != set(names.values()):
        fail(f"no line of {sorted(set(names.values()) - seen)}")
    print(f"ok: {len(lines) - 1} JSON lines parse; the {len(seen)} cgroups read back to their names")


def check_text(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8: {e}: {data[max(0, e.start - 40):e.end + 40]!r}")
    bad = [c for c in text if c != "\n" and unicodedata.category(c) == "Cc"]
    if bad:
        fail(f"control characters in the output: {sorted(set(bad))!r}")
    print(f"ok: {text.count(chr(10))} lines of printable UTF-8")


def cols(s: str) -> int:
    """Columns on a terminal: wide characters 2, combining marks 0."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def check_table(path: str, parent: str) -> None:
    names = set(ids_below(parent).values())
    check_text(path)
    with open(path, encoding="utf-8") as f:
        tables = [t for t in f.read().split("\n\n") if t.strip()]
    for t in tables:
        lines = t.split("\n")
        head = next(i for i, line in enumerate(lines) if line.startswith("CGROUP"))
        width = lines[head].index(" CPU%")
        rows = [line for line in lines[head + 1:] if line]
        got = set()
        for row in rows:
            # the name column: as wide as the heading's, then the numbers
            name_cols, cut = 0, 0
            while cut < len(row) and name_cols < width:
                name_cols += cols(row[cut])
                cut += 1
            if name_cols != width or not row[cut:].startswith(" "):
                fail(f"a row's name column is not {width} columns: {row!r}")
            got.add(unescape(row[:cut].rstrip(" ")))
        if got != names:
            fail(f"rows {sorted(got)} are not the cgroups {sorted(names)}")
    print(f"ok: {len(tables)} tables: a row per cgroup, named as the rule says, aligned")


def main() -> None:
    cmd, *args = sys.argv[1:]
    {"mkdirs": mkdirs, "json": check_json, "text": check_text, "table": check_table}[cmd](*args)


if __name__ == "__main__":
    main()
