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
import sys
from pathlib import Path
from typing import Optional

import pytest

from pycgstream import _lib
from conftest import CHECKOUT, HEADER, PACKAGE_DIR, run_python


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


def run_copy(tmp_path: Path, code: str, env: dict[str, str],
             libdir: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
    """Run code against a copy of the package outside any checkout
    (installed by make install with LIBDIR=@libdir, when given)."""
    copy = tmp_path / "site"
    shutil.copytree(PACKAGE_DIR / "src" / "pycgstream", copy / "pycgstream",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if libdir is not None:
        (copy / "pycgstream" / "_install.py").write_text(f"LIBDIR = {str(libdir)!r}\n")
    return subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                          env=dict(env, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1"),
                          cwd=tmp_path, timeout=60)


def test_not_installed_and_no_override(tmp_path: Path) -> None:
    # asked in a fresh process: this one may have loaded it already, and
    # dlopen() of a soname finds a loaded library
    probe = run_python("import ctypes, ctypes.util\n"
                       "print(ctypes.util.find_library('cgstream'))\n"
                       "try:\n    ctypes.CDLL('libcgstream.so.1'); print('loads')\n"
                       "except OSError:\n    print('missing')\n", env_without_library())
    if probe.stdout.split() != ["None", "missing"]:
        pytest.skip(f"libcgstream is installed on this system: {probe.stdout.split()}")
    # a copy outside the checkout: nothing came with it
    r = run_copy(tmp_path,
                 "import pycgstream\n"
                 "try:\n"
                 "    pycgstream.get_interval()\n"
                 "except pycgstream.LibraryNotFoundError as e:\n"
                 "    print(e)\n", env_without_library())
    assert r.returncode == 0, r.stderr
    assert "libcgstream (libcgstream.so.1) not found" in r.stdout
    assert "CGSTREAM_LIBRARY=" in r.stdout


def test_the_checkouts_build_comes_first() -> None:
    """From a checkout's src/, the library built beside it (as the in-tree
    cgstream command finds its own), before the loader's search path."""
    build = CHECKOUT / "libcgstream" / "build" / "libcgstream.so.1"
    if not build.exists():
        pytest.skip(f"{build} is not built")
    r = run_python("from pycgstream import _lib; print(_lib._candidates()[0][0]); "
                   "print(_lib.load()._name)", env_without_library())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(build)] * 2


def test_an_installed_copy_finds_its_libdir(tmp_path: Path) -> None:
    """make install records LIBDIR in _install.py: the library installed
    with the package is found without ldconfig or LD_LIBRARY_PATH."""
    build = CHECKOUT / "libcgstream" / "build" / "libcgstream.so.1"
    if not build.exists():
        pytest.skip(f"{build} is not built")
    libdir = tmp_path / "lib"
    libdir.mkdir()
    shutil.copy(build, libdir / "libcgstream.so.1")
    code = ("from pycgstream import _lib; print(_lib._candidates()[0][0]); "
            "print(_lib.load()._name)")
    r = run_copy(tmp_path, code, env_without_library(), libdir)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(libdir / "libcgstream.so.1")] * 2


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


def test_command_without_library_says_so_without_traceback() -> None:
    env = env_without_library()
    env["CGSTREAM_LIBRARY"] = "/nonexistent/libcgstream.so.1"
    r = run_python("import sys; from pycgstream.export import main; "
                   "sys.exit(main(['export', '--listen', '127.0.0.1:0', '/']))", env)
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


# every struct the ctypes layer mirrors, by its C name
MIRRORED = {"cgstream_sample": _lib.SampleStruct, "cgstream_opts": _lib.OptsStruct,
            "cgstream_event": _lib.EventStruct, "cgstream_values": _lib.ValuesStruct,
            "cgstream_record": _lib.RecordStruct, "cgstream_rec": _lib.RecStruct,
            "cgstream_field_info": _lib.FieldInfoStruct, "cgstream_memory": _lib.MemoryStruct,
            "cgstream_io_device": _lib.IoDeviceStruct, "cgstream_io": _lib.IoStruct,
            "cgstream_publication": _lib.PublicationStruct}


def test_struct_layout_matches_the_header(tmp_path: Path) -> None:
    """Every mirrored struct's size and every field's offset, as the C
    compiler lays out the header's."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read the header's layout")
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "cgstream.h"',
             "int main(void)", "{"]
    expected = {}
    for struct, mirror in MIRRORED.items():
        lines.append(f'\tprintf("{struct} %zu\\n", sizeof(struct {struct}));')
        expected[struct] = ctypes.sizeof(mirror)
        for field, *_ in mirror._fields_:
            lines.append(f'\tprintf("{struct}.{field} %zu\\n", '
                         f'offsetof(struct {struct}, {field}));')
            expected[f"{struct}.{field}"] = getattr(mirror, field).offset
    (tmp_path / "layout.c").write_text("\n".join(lines + ["\treturn 0;", "}", ""]))
    subprocess.run([cc, "-I", str(HEADER.parent), "-o", str(tmp_path / "layout"),
                    str(tmp_path / "layout.c")], check=True)
    out = subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True,
                         text=True).stdout
    got = dict(line.split() for line in out.splitlines())
    assert {k: int(v) for k, v in got.items()} == expected
    # the batch decoder reads events, memory and io with struct, in the same layout
    assert _lib.EVENT_LAYOUT.size == expected["cgstream_event"]
    assert _lib.MEMORY_LAYOUT.size == expected["cgstream_memory"]
    assert _lib.IO_LAYOUT.size == expected["cgstream_io"]
    assert _lib.IO_DEVICE_LAYOUT.size == expected["cgstream_io_device"]
