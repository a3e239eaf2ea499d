"""Fixtures of the VM tests (patched kernel, root), imported by each test
module (a second conftest.py would shadow tests/conftest.py): the
kernel's interval for a test, and a time limit per test."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Iterator

import pytest

import pycgstream
from conftest import cgroup2_mount, kernel_has_stream

INTERVAL_MS = 100


def streamed_controllers() -> tuple[str, ...]:
    """The controllers this kernel streams: cpu, memory and io (the
    series' first patches) and pressure where it has pressure.stream (its
    own patches; on a kernel with PSI, without them, pressure is emulated)."""
    mount = cgroup2_mount()
    return tuple(c for c in pycgstream.CONTROLLERS
                 if c != "pressure" or (mount is not None and (mount / "pressure.stream").exists()))


STREAMED = streamed_controllers()
TEST_TIME_LIMIT = 150       # seconds; @pytest.mark.time_limit(N) for more


class TimeLimitExceeded(Exception):
    pass


@pytest.fixture(autouse=True)
def time_limit(request: pytest.FixtureRequest) -> Iterator[None]:
    """A hung test fails (with its traceback) instead of eating the whole
    VM run: SIGALRM interrupts a wait too (poll() in Python, PEP 475)."""
    marker = request.node.get_closest_marker("time_limit")
    limit = int(marker.args[0]) if marker else TEST_TIME_LIMIT

    def expire(signum: int, frame: object) -> None:
        raise TimeLimitExceeded(f"over {limit} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def patched_kernel(mount: Path, library: object) -> None:
    if not kernel_has_stream(mount):
        pytest.skip("no cpu.stat.stream: not the patched kernel")
    if os.geteuid() != 0:
        pytest.skip("needs root")


@pytest.fixture
def interval(patched_kernel: None) -> Iterator[int]:
    """The kernel streaming at INTERVAL_MS for the test; the old setting
    back afterwards."""
    old = pycgstream.get_interval()
    pycgstream.set_interval(INTERVAL_MS)
    yield INTERVAL_MS
    pycgstream.set_interval(old)


@pytest.fixture
def all_streaming(interval: int) -> Iterator[int]:
    """Every controller streaming at INTERVAL_MS (cpu's from the interval
    fixture; pressure's where the kernel streams it); the others' settings
    back afterwards."""
    old = {c: pycgstream.get_interval(controller=c) for c in STREAMED if c != "cpu"}
    for c in old:
        pycgstream.set_interval(interval, controller=c)
    yield interval
    for c, ms in old.items():
        pycgstream.set_interval(ms, controller=c)
