"""Finding and binding libcgstream: the override, the not-found error, the
signature table against the header, the struct layouts against the C
compiler's idea of them."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pycgstream import _lib
from conftest import HEADER, run_python


def env_without_library() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CGSTREAM_LIBRARY", None)
    env.pop("LD_LIBRARY_PATH", None)
    return env


def test_override_pointing_nowhere_raises_importerror_saying_how_to_fix() -> None:
    env = env_without_library()
    env["CGSTREAM_LIBRARY"] = "/nonexistent/libcgstream.so.1"
    r = run_python(
        "import pycgstream\n"               # importing never needs the library
        "try:\n"
        "    pycgstream.Stream('/')\n"
        "except pycgstream.LibraryNotFoundError as e:\n"
        "    assert isinstance(e, ImportError)\n"
        "    print(e)\n", env)
    assert r.returncode == 0, r.stderr
    assert "CGSTREAM_LIBRARY=/nonexistent/libcgstream.so.1" in r.stdout
    assert "make -C libcgstream" in r.stdout


def test_override_is_not_second_guessed() -> None:
    """An explicit CGSTREAM_LIBRARY that fails must not silently load
    another copy from the search path."""
    env = env_without_library()
    env["CGSTREAM_LIBRARY"] = "/nonexistent/x.so"
    r = run_python("from pycgstream import _lib; print(_lib._candidates())", env)
    assert r.stdout.strip() == "(['/nonexistent/x.so'], True)"


def test_not_installed_and_no_override() -> None:
    # asked in a fresh process: this one may have loaded it already, and
    # dlopen() of a soname finds a loaded library
    probe = run_python("import ctypes, ctypes.util\n"
                       "print(ctypes.util.find_library('cgstream'))\n"
                       "try:\n    ctypes.CDLL('libcgstream.so.1'); print('loads')\n"
                       "except OSError:\n    print('missing')\n", env_without_library())
    if probe.stdout.split() != ["None", "missing"]:
        pytest.skip(f"libcgstream is installed on this system: {probe.stdout.split()}")
    r = run_python(
        "import pycgstream\n"
        "try:\n"
        "    pycgstream.get_interval()\n"
        "except pycgstream.LibraryNotFoundError as e:\n"
        "    print(e)\n", env_without_library())
    assert r.returncode == 0, r.stderr
    assert "libcgstream (libcgstream.so.1) not found" in r.stdout
    assert "CGSTREAM_LIBRARY=" in r.stdout


def test_a_library_that_is_not_libcgstream() -> None:
    libc = ctypes.util.find_library("c")
    assert libc
    env = env_without_library()
    env["CGSTREAM_LIBRARY"] = libc
    r = run_python(
        "import pycgstream\n"
        "try:\n"
        "    pycgstream.load_library()\n"
        "except pycgstream.LibraryNotFoundError as e:\n"
        "    print(e)\n", env)
    assert r.returncode == 0, r.stderr
    assert "has no function cgstream_" in r.stdout


def test_cli_without_library_says_so_without_traceback() -> None:
    env = env_without_library()
    env["CGSTREAM_LIBRARY"] = "/nonexistent/libcgstream.so.1"
    r = run_python("import sys; from pycgstream.cli import main; sys.exit(main(['interval']))", env)
    assert r.returncode == 1
    assert r.stderr.startswith("pycgstream: cannot load libcgstream")
    assert "Traceback" not in r.stderr


def header_functions() -> set[str]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    return set(re.findall(r"\b(cgstream_\w+)\s*\(", text))


def test_signature_table_covers_the_header() -> None:
    assert header_functions() == set(_lib.SIGNATURES)


def test_every_function_is_bound(library: ctypes.CDLL) -> None:
    for name, (restype, argtypes, _) in _lib.SIGNATURES.items():
        func = getattr(library, name)
        assert func.argtypes == argtypes, name
        assert func.restype == restype, name


def test_errcheck_maps_errno_to_oserror_subclasses() -> None:
    check = _lib._errno_check(0)
    with pytest.raises(FileNotFoundError) as e:
        check(-2, None, (b"/sys/fs/cgroup/x",))
    assert e.value.filename == "/sys/fs/cgroup/x"
    with pytest.raises(PermissionError):
        check(-13, None, (b"x",))
    with pytest.raises(BlockingIOError):
        _lib._errno_check(None)(-11, None, ())
    assert check(3, None, (b"x",)) == 3


LAYOUT_PROGRAM = r"""
#include <stdio.h>
#include <stddef.h>
#include "cgstream.h"
#define O(t, f) printf(#t "." #f " %zu\n", offsetof(struct t, f))
int main(void)
{
	printf("cgstream_sample %zu\n", sizeof(struct cgstream_sample));
	printf("cgstream_opts %zu\n", sizeof(struct cgstream_opts));
	printf("cgstream_event %zu\n", sizeof(struct cgstream_event));
	O(cgstream_sample, present); O(cgstream_sample, flush_missed);
	O(cgstream_opts, mode); O(cgstream_opts, fallback_interval_ms);
	O(cgstream_opts, cgroup_root);
	O(cgstream_event, error); O(cgstream_event, path);
	O(cgstream_event, userdata); O(cgstream_event, sample);
	return 0;
}
"""


def test_struct_layout_matches_the_header(tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read the header's layout")
    (tmp_path / "layout.c").write_text(LAYOUT_PROGRAM)
    subprocess.run([cc, "-I", str(HEADER.parent), "-o", str(tmp_path / "layout"),
                    str(tmp_path / "layout.c")], check=True)
    out = subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True,
                         text=True).stdout
    expected = {}
    for struct, name in (("cgstream_sample", _lib.SampleStruct),
                         ("cgstream_opts", _lib.OptsStruct),
                         ("cgstream_event", _lib.EventStruct)):
        expected[struct] = ctypes.sizeof(name)
        for field, *_ in name._fields_:
            expected[f"{struct}.{field}"] = getattr(name, field).offset
    for line in out.splitlines():
        key, value = line.split()
        assert expected[key] == int(value), key
