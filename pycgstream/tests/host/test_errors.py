"""OS errors come out as the matching OSError subclass with the errno; bad
arguments as ValueError/TypeError before they reach C."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

import pycgstream
from conftest import Cgroups, as_nobody, kernel_has_stream, run_python

pytestmark = pytest.mark.usefixtures("library")


def test_missing_cgroup_absolute(mount: Path) -> None:
    missing = mount / "pycgstream-no-such-cgroup"
    with pytest.raises(FileNotFoundError) as e:
        pycgstream.Stream(missing, mode="fallback")
    assert e.value.errno == errno.ENOENT
    assert e.value.filename == str(missing)


def test_missing_cgroup_relative(mount: Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        pycgstream.Stream("pycgstream-no-such-cgroup/below")
    assert e.value.filename == "pycgstream-no-such-cgroup/below"


def test_kernel_mode_without_the_feature(mount: Path) -> None:
    if kernel_has_stream(mount):
        pytest.skip("this kernel has cpu.stat.stream")
    with pytest.raises(OSError) as e:
        pycgstream.Stream("/", mode="kernel")
    assert e.value.errno == errno.EOPNOTSUPP
    with pytest.raises(OSError) as e:
        pycgstream.Group(["/"], mode="kernel")
    assert e.value.errno == errno.EOPNOTSUPP


def test_interval_without_the_feature(mount: Path) -> None:
    if kernel_has_stream(mount):
        pytest.skip("this kernel has cpu.stat.stream")
    for call in (pycgstream.get_interval, lambda: pycgstream.set_interval(100)):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EOPNOTSUPP


@pytest.mark.parametrize("value, exc", [(-1, ValueError), (2**32, ValueError),
                                        (1.5, TypeError), ("100", TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_bad_interval_values_never_reach_c(value: object, exc: type) -> None:
    with pytest.raises(exc):
        pycgstream.set_interval(value)  # type: ignore[arg-type]


def test_bad_options(cgroup: Path) -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        pycgstream.Stream(cgroup, mode="fast")
    with pytest.raises(ValueError):
        pycgstream.Stream(cgroup, fallback_interval_ms=-5)
    with pytest.raises(TypeError):
        pycgstream.Group([cgroup], fallback_interval_ms="5")  # type: ignore[arg-type]


def test_group_add_remove_errors(cgroup: Path) -> None:
    with pycgstream.Group(mode="fallback") as g:
        g.add(cgroup)
        with pytest.raises(FileExistsError):
            g.add(cgroup)
        with pytest.raises(FileNotFoundError) as e:
            g.add(cgroup / "missing")
        assert e.value.filename == str(cgroup / "missing")
        assert len(g) == 1
        g.remove(cgroup)
        assert len(g) == 0
        with pytest.raises(FileNotFoundError):
            g.remove(cgroup)


def test_group_constructor_failure_frees_the_group(cgroup: Path) -> None:
    with pytest.raises(FileNotFoundError):
        pycgstream.Group([cgroup, cgroup / "missing"], mode="fallback")


def test_closed_objects(cgroup: Path) -> None:
    s = pycgstream.Stream(cgroup, mode="fallback")
    s.close()
    s.close()
    assert s.closed
    for call in (s.read, s.fileno, s.wait, lambda: next(s), lambda: s.__enter__()):
        with pytest.raises(ValueError, match="closed Stream"):
            call()
    g = pycgstream.Group([cgroup], mode="fallback")
    g.close()
    for call in (g.read, g.fileno, lambda: len(g), lambda: g.add(cgroup)):
        with pytest.raises(ValueError, match="closed Group"):
            call()


def test_unclosed_stream_warns(cgroup: Path) -> None:
    r = run_python(
        "import gc, warnings, pycgstream\n"
        "warnings.simplefilter('error', ResourceWarning)\n"
        f"s = pycgstream.Stream({str(cgroup)!r}, mode='fallback')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    del s; gc.collect()\n"
        "print([str(x.message) for x in w])\n")
    assert r.returncode == 0, r.stderr
    assert "unclosed <pycgstream.Stream" in r.stdout


@pytest.mark.other_user
def test_permission_denied(cgroups: Cgroups) -> None:
    """EACCES comes out as PermissionError, naming the cgroup: uid 65534 on
    a cgroup below a mode-000 directory."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run as another user")
    parent = cgroups.make("private")
    child = cgroups.make("child", parent=parent)

    def unprivileged() -> int:
        try:
            pycgstream.Stream(str(child), mode="fallback")
        except PermissionError as e:
            if e.errno == errno.EACCES and e.filename == str(child):
                return 0
            print(f"PermissionError {errno.errorcode[e.errno]} {e.filename}", file=sys.stderr, flush=True)
            return 2
        return 1

    parent.chmod(0)
    try:
        status = as_nobody(unprivileged)
    finally:
        parent.chmod(0o755)
    assert status == 0, "1: no error, 2: another error (see stderr)"


def test_resolve_path(mount: Path) -> None:
    assert pycgstream.resolve_path("a/b") == str(mount / "a" / "b")
    assert pycgstream.resolve_path("/") == str(mount)
    assert pycgstream.resolve_path(mount / "x") == str(mount / "x")
    assert pycgstream.resolve_path("x", cgroup_root=mount) == str(mount / "x")
    with pytest.raises(OSError) as e:
        pycgstream.resolve_path("a/../../etc")
    assert e.value.errno == errno.EINVAL
