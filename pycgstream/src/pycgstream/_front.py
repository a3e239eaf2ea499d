"""What the exporter shares with the C ``cgstream`` command, read through
libcgstream (cgstream.h, "what front ends share"): the exit statuses and
the messages, the shared options' values, the notices at start, distinct
subtrees, the limit of open files and systemd's readiness protocol.
Nothing of it is written again here."""

from __future__ import annotations

import ctypes
import errno
import os
from typing import Optional, Sequence

from . import _lib
from ._stream import StrPath, _make_opts, _MODES

# what failed, for explain(): cgstream_what
WHAT = {"open": _lib.WHAT_OPEN, "get-interval": _lib.WHAT_GET_INTERVAL,
        "set-interval": _lib.WHAT_SET_INTERVAL, "mode": _lib.WHAT_MODE,
        "controllers": _lib.WHAT_CONTROLLERS, "fallback-interval": _lib.WHAT_FALLBACK_INTERVAL,
        "interval": _lib.WHAT_INTERVAL}


def exit_statuses() -> list[tuple[int, str, str]]:
    """The front ends' exit statuses: (status, name, text), in order."""
    lib = _lib.load()
    info = _lib.ExitInfoStruct()
    out: list[tuple[int, str, str]] = []
    while lib.cgstream_exit_status(len(out), ctypes.byref(info), ctypes.sizeof(info)) == 0:
        out.append((int(info.status), info.name.decode(), info.text.decode()))
    return out


def exit_status(name: str) -> int:
    """The exit status named @name ("ok", "failure", "usage", "no-cgroup",
    "permission", "no-kernel")."""
    for status, known, _ in exit_statuses():
        if known == name:
            return status
    raise KeyError(name)


def explain(err: int, what: str, arg: Optional[StrPath] = None,
            opts: Optional[_lib.OptsStruct] = None) -> tuple[int, str]:
    """The exit status and the message for @err (an errno) of @what."""
    buf = ctypes.create_string_buffer(1024)
    raw = os.fsencode(arg) if arg is not None else None
    status = _lib.load().cgstream_explain(-abs(err), WHAT[what], raw,
                                          ctypes.byref(opts) if opts is not None else None,
                                          buf, len(buf))
    return status, buf.value.decode("utf-8", "replace")


def parse_option(what: str, text: str) -> int:
    """A shared option's value; ValueError with the library's message."""
    value = ctypes.c_uint32()
    raw = os.fsencode(text)
    if _lib.load().cgstream_parse_option(WHAT[what], raw, ctypes.byref(value)) < 0:
        raise ValueError(explain(errno.EINVAL, what, text)[1])
    return value.value


def mode_name(number: int) -> str:
    """The name of an enum cgstream_mode number."""
    return next(name for name, n in _MODES.items() if n == number)


def controller_names(mask: int) -> tuple[str, ...]:
    return tuple(name for name, bit in _lib.CONTROLLERS if mask & bit)


def notices(modes: dict[str, str], which: int, mode: str = "auto",
            fallback_interval_ms: int = 0) -> list[str]:
    """The lines the library says once at start of an object that reads
    @modes ({"cpu": "fallback", ...}); none when it cannot tell (no
    cgroup2 mount, no fd left to find it)."""
    arr = (ctypes.c_int * _lib.CTRL_SLOTS)()
    mask = 0
    for i, (name, bit) in enumerate(_lib.CONTROLLERS):
        if name in modes:
            arr[i] = _MODES[modes[name]]
            mask |= bit
    opts = _make_opts(mode, fallback_interval_ms, None, _MODES)
    buf = ctypes.create_string_buffer(4096)
    try:
        _lib.load().cgstream_notices(mask, arr, ctypes.byref(opts), which, buf, len(buf))
    except OSError:
        return []
    return buf.value.decode("utf-8", "replace").splitlines()


def distinct_subtrees(paths: Sequence[str]) -> list[bool]:
    """Which of the canonical @paths are not inside another one's subtree
    (nor the same as an earlier one)."""
    raw = (ctypes.c_char_p * len(paths))(*(os.fsencode(p) for p in paths))
    keep = (ctypes.c_uint8 * len(paths))()
    _lib.load().cgstream_distinct_subtrees(raw, len(paths), keep)
    return [bool(k) for k in keep]


def raise_fd_limit() -> None:
    """The limit of open files raised to the hard one, where it can be."""
    try:
        _lib.load().cgstream_raise_fd_limit(None)
    except OSError:
        pass


def sd_notify(state: str) -> Optional[OSError]:
    """systemd's sd_notify(): None (sent, or not asked for), or the error."""
    try:
        _lib.load().cgstream_sd_notify(state.encode())
    except OSError as e:
        return e
    return None
