"""Fixtures shared by the host and the VM tests: the library, the cgroup2
mount, scratch cgroups, and processes that burn CPU inside them."""

from __future__ import annotations

import errno
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import pytest

import pycgstream

PACKAGE_DIR = Path(__file__).resolve().parents[1]          # pycgstream/
CHECKOUT = PACKAGE_DIR.parent
HEADER = CHECKOUT / "libcgstream" / "include" / "cgstream.h"


def cgroup2_mount() -> Optional[Path]:
    """The first cgroup2 mount of this mount namespace, or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return Path(fields[4])
    return None


def kernel_has_stream(mount: Optional[Path]) -> bool:
    return mount is not None and (mount / "cpu.stat.stream").exists()


@pytest.fixture(scope="session")
def library() -> object:
    """The loaded libcgstream; a failure when $CGSTREAM_LIBRARY names one
    that does not load, a skip when nothing says where it is."""
    try:
        return pycgstream.load_library()
    except pycgstream.LibraryNotFoundError as e:
        if os.environ.get("CGSTREAM_LIBRARY"):
            pytest.fail(str(e))
        pytest.skip(f"libcgstream not available: {e}")


@pytest.fixture(scope="session")
def mount() -> Path:
    m = cgroup2_mount()
    if m is None:
        pytest.skip("no cgroup2 mount")
    return m


def python_env(env: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The environment for a fresh interpreter importing pycgstream from src/."""
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = str(PACKAGE_DIR / "src")
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    return full_env


def run_python(code: str, env: Optional[dict[str, str]] = None, timeout: float = 60,
               prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter (behind the command @prefix)."""
    return subprocess.run([*prefix, sys.executable, "-c", code], env=python_env(env),
                          text=True, capture_output=True, timeout=timeout)


NOBODY = 65534


def as_nobody(func: Callable[[], int]) -> int:
    """The exit status of func() run as uid and gid 65534 (no groups) in a
    forked child of this interpreter.  Not in a new interpreter: that would
    be loaded from the checkout (the .venv's python, pycgstream from src/,
    libcgstream from the build), which that user may not reach (a checkout
    in root's mode-0700 home); the child has them all loaded already, the
    library included (loaded here first).  It is quicker too: a new
    interpreter takes minutes to start in a TCG guest on a busy host.
    Tests that use it are marked other_user (tests/host/60-private-checkout
    runs them from such a checkout)."""
    pycgstream.load_library()
    # the exporter's client library lives in the same unreachable venv,
    # and the codec its address parsing loads lazily may be looked up there
    for mod in ("encodings.idna", "prometheus_client", "prometheus_client.core",
                "prometheus_client.exposition", "prometheus_client.openmetrics.exposition"):
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            status = func()
        except BaseException as e:
            print(f"as_nobody: {e!r}", file=sys.stderr, flush=True)
            status = 99
        os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


class Cgroups:
    """Scratch cgroups under the cgroup2 mount, removed at teardown along
    with every process started in them."""

    def __init__(self, mount: Path, tag: str) -> None:
        self.mount = mount
        self.prefix = f"pycgstream-{tag}-{os.getpid()}"
        self.made: list[Path] = []
        self.procs: list[subprocess.Popen[bytes]] = []

    def make(self, name: str = "", parent: Optional[Path] = None) -> Path:
        base = parent if parent is not None else self.mount
        path = base / f"{self.prefix}-{len(self.made)}{'-' + name if name else ''}"
        try:
            path.mkdir()
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                pytest.skip(f"cannot create cgroups under {base}: {e.strerror}")
            raise
        self.made.append(path)
        return path

    def burn(self, cgroup: Path) -> subprocess.Popen[bytes]:
        """A process that moves itself into @cgroup and spins (a shell, not
        Python: a new interpreter starts slowly in a TCG guest)."""
        p = subprocess.Popen(["sh", "-c", 'echo $$ > "$1" && echo in && while :; do :; done',
                              "burn", str(cgroup / "cgroup.procs")], stdout=subprocess.PIPE)
        self.procs.append(p)
        assert p.stdout is not None
        if p.stdout.readline() != b"in\n":
            pytest.fail(f"could not move a process into {cgroup}")
        return p

    def stop(self, p: subprocess.Popen[bytes]) -> None:
        p.kill()
        p.wait()

    def remove(self, cgroup: Path) -> None:
        for p in self.procs:
            if p.poll() is None and str(p.pid) in (cgroup / "cgroup.procs").read_text().split():
                self.stop(p)
        # a killed task leaves the cgroup shortly after it is reaped
        for _ in range(100):
            try:
                cgroup.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                time.sleep(0.02)
        cgroup.rmdir()

    def cleanup(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                self.stop(p)
            if p.stdout:
                p.stdout.close()
        for path in reversed(self.made):
            if path.exists():
                self.remove(path)


@pytest.fixture(params=["io_uring", "plain"])
def io(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways libcgstream reads cpu.stat in fallback mode: io_uring, and
    plain syscalls ($CGSTREAM_NO_IO_URING, as where io_uring is refused)."""
    if request.param == "plain":
        monkeypatch.setenv("CGSTREAM_NO_IO_URING", "1")
    else:
        monkeypatch.delenv("CGSTREAM_NO_IO_URING", raising=False)
    return str(request.param)


@pytest.fixture
def cgroups(mount: Path, request: pytest.FixtureRequest) -> Iterator[Cgroups]:
    c = Cgroups(mount, request.node.name[:24].replace("[", "-").replace("]", ""))
    yield c
    c.cleanup()


@pytest.fixture
def cgroup(cgroups: Cgroups) -> Path:
    return cgroups.make()


