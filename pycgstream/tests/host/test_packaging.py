"""pip builds a pure-Python wheel (no compiler) that carries py.typed and
works from an installed location."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import pycgstream
from conftest import PACKAGE_DIR


def test_wheel_is_pure_typed_and_importable(tmp_path: Path, library: object) -> None:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    # build from a copy: setuptools writes build/ and *.egg-info next to
    # the sources, and the checkout is read-only in the VM
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__"))
    # the build backend comes from PyPI through pip's isolated build
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(tmp_path / "dist"), str(source)],
                           env=dict(env, CC="/bin/false"), capture_output=True, text=True,
                           timeout=600)
    assert build.returncode == 0, build.stderr
    wheels = list((tmp_path / "dist").glob("pycgstream-*.whl"))
    assert len(wheels) == 1
    assert wheels[0].name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "pycgstream/py.typed" in names
    assert not [n for n in names if n.endswith((".so", ".c"))]
    assert not [n for n in names if n.startswith("tests/")]

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                    "--target", str(target), str(wheels[0])], env=env, check=True,
                   timeout=300)
    r = subprocess.run([sys.executable, "-c",
                        "import pycgstream, sys; print(pycgstream.__file__); "
                        "print(pycgstream.parse('usage_usec 7\\n').usage_usec)"],
                       env=dict(env, PYTHONPATH=str(target)), capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(target / "pycgstream" / "__init__.py"), "7"]
    script = target / "bin" / "pycgstream"
    assert script.exists()


SYSTEM_PYTHON = Path("/usr/bin/python3")


def system_python_with_pip() -> None:
    if not SYSTEM_PYTHON.exists():
        pytest.skip(f"no {SYSTEM_PYTHON}")
    if subprocess.run([str(SYSTEM_PYTHON), "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} has no pip (Debian: python3-pip, make deps installs it)")


def make_install(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the install builds from a copy: nothing is written next to the sources
    before = sorted(p.name for p in PACKAGE_DIR.iterdir())
    r = subprocess.run(["make", "-s", "-C", str(PACKAGE_DIR), "install", *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in PACKAGE_DIR.iterdir()) == before
    return r


def system_python(code: str, pythonpath: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The system's python3 in a clean environment (no library override,
    no loader path) with only @pythonpath added."""
    return subprocess.run([*argv] if argv else [str(SYSTEM_PYTHON), "-c", code],
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pythonpath),
                               "PYTHONDONTWRITEBYTECODE": "1"},
                          capture_output=True, text=True, cwd="/", timeout=120)


def test_make_install_destdir_for_the_system_python(tmp_path: Path) -> None:
    """DESTDIR staging, default PREFIX: the package, its .dist-info and the
    command where Debian's python3 looks for /usr/local's packages, no
    --break-system-packages needed, LIBDIR recorded."""
    system_python_with_pip()
    make_install(tmp_path, f"DESTDIR={tmp_path}")
    sitedirs = subprocess.run([str(SYSTEM_PYTHON), "-c",
                               "import site; print('\\n'.join(site.getsitepackages()))"],
                              capture_output=True, text=True, check=True).stdout.split()
    local = [d for d in sitedirs if d.startswith("/usr/local/lib/")]
    if not local:
        pytest.skip(f"{SYSTEM_PYTHON} has no site directory under /usr/local: {sitedirs}")
    staged = tmp_path / local[0].lstrip("/")
    assert (staged / "pycgstream" / "py.typed").exists()
    assert len(list(staged.glob("pycgstream-*.dist-info"))) == 1
    script = tmp_path / "usr/local/bin/pycgstream"
    assert script.read_text().startswith(f"#!{SYSTEM_PYTHON}\n")
    r = system_python("import pycgstream, pycgstream._install as i; "
                      "print(pycgstream.__file__); print(i.LIBDIR); print(pycgstream.__version__)",
                      staged)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(staged / "pycgstream" / "__init__.py"), "/usr/local/lib",
                                pycgstream.__version__]
    # again: replaced, not doubled
    make_install(tmp_path, f"DESTDIR={tmp_path}")
    assert len(list(staged.glob("pycgstream-*.dist-info"))) == 1


def test_make_install_prefix_finds_its_library(tmp_path: Path, library: object) -> None:
    """PREFIX elsewhere, the library put in its LIBDIR as libcgstream's make
    install does: the installed command runs, loading that library without
    ldconfig, LD_LIBRARY_PATH or CGSTREAM_LIBRARY."""
    system_python_with_pip()
    prefix = tmp_path / "prefix"
    (prefix / "lib").mkdir(parents=True)
    build = PACKAGE_DIR.parent / "libcgstream" / "build" / "libcgstream.so.1"
    shutil.copy(build, prefix / "lib" / "libcgstream.so.1")
    r = make_install(tmp_path, f"PREFIX={prefix}")
    site = next(prefix.glob("lib/python3*/site-packages"))
    assert "add it to PYTHONPATH" in r.stdout        # not where python3 looks by itself
    r = system_python("from pycgstream import _lib; print(_lib.load()._name)", site)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(prefix / "lib" / "libcgstream.so.1")]
    if system_python("import prometheus_client", site).returncode != 0:
        pytest.skip("the system's python3 has no prometheus_client for the installed command")
    # the installed command: the exporter, serving until SIGTERM
    p = subprocess.Popen([str(prefix / "bin" / "pycgstream"), "export", "--listen",
                          "127.0.0.1:0", "--mode", "fallback", "--controllers", "cpu", "/"],
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site),
                              "PYTHONDONTWRITEBYTECODE": "1"},
                         stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd="/")
    try:
        assert p.stderr is not None
        lines = []
        for line in p.stderr:
            lines.append(line)
            if "serving http://" in line:
                break
        assert "serving http://" in "".join(lines), "".join(lines)
        p.terminate()
        assert p.wait(60) == 0
    finally:
        p.kill()
        p.wait()


def test_the_venv_has_the_checkouts_package() -> None:
    """make deps installs pycgstream into .venv, editable: its python runs
    `python -m pycgstream` from anywhere, with the checkout's code."""
    venv_python = PACKAGE_DIR.parent / ".venv" / "bin" / "python"
    if Path(sys.prefix) != venv_python.parent.parent:
        pytest.skip("not run by the checkout's .venv")
    r = subprocess.run([str(venv_python), "-I", "-c", "import pycgstream; print(pycgstream.__file__)"],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, f"pycgstream is not installed in .venv: run make deps\n{r.stderr}"
    assert r.stdout.strip() == str(PACKAGE_DIR / "src" / "pycgstream" / "__init__.py")
    r = subprocess.run([str(venv_python), "-I", "-m", "pycgstream", "export", "--help"],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0 and "--stats" in r.stdout, r.stderr
