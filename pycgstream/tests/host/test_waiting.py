"""Waiting: close() from another thread ends a blocked wait or iteration at
once, and async iteration calls nothing on the event loop that waits (no
*_wait, and read/process only once the loop saw the fd readable)."""

from __future__ import annotations

import asyncio
import logging
import os
import select
import threading
import time
from pathlib import Path
from typing import Any, Callable, Union

import pytest

import pycgstream
from conftest import Cgroups

pytestmark = pytest.mark.usefixtures("library")

Obj = Union[pycgstream.Stream, pycgstream.Group, pycgstream.Tree]
SLOW = 60_000       # a fallback period nothing in a test waits for


def make(kind: str, cgroup: Path, period: int = SLOW) -> Obj:
    if kind == "stream":
        return pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=period)
    if kind == "group":
        return pycgstream.Group([cgroup], mode="fallback", fallback_interval_ms=period)
    return pycgstream.Tree(cgroup, mode="fallback", fallback_interval_ms=period)


def quiet(obj: Obj) -> Obj:
    """Take what the object has at once (the first tick comes at once):
    after this nothing comes for SLOW ms."""
    next(obj)
    assert not obj.wait(0.1)
    return obj


def fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


KINDS = ["stream", "group", "tree"]


def in_thread(func: Callable[[], Any]) -> tuple[threading.Thread, list[object]]:
    """Run func in a thread; the list gets its result or exception."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(func())
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    return t, out


def until_waiting(obj: Obj) -> None:
    """Until a thread is in poll() on the object (or fail)."""
    for _ in range(500):
        if obj._waiters:
            time.sleep(0.05)        # from the count to poll() itself
            return
        time.sleep(0.01)
    pytest.fail("the thread never waited")


@pytest.mark.parametrize("kind", KINDS)
def test_close_from_another_thread_ends_a_blocked_wait(cgroup: Path, kind: str) -> None:
    before = fds()
    obj = quiet(make(kind, cgroup))
    thread, out = in_thread(obj.wait)
    until_waiting(obj)
    start = time.monotonic()
    obj.close()
    closed_in = time.monotonic() - start
    thread.join(5)
    assert not thread.is_alive(), "wait() went on after close()"
    assert closed_in < 0.5, closed_in
    assert len(out) == 1 and isinstance(out[0], ValueError), out
    assert "closed while waiting" in str(out[0])
    # the library's fds and the wake-up eventfd are all gone
    assert fds() == before


@pytest.mark.parametrize("kind", KINDS)
def test_close_from_another_thread_ends_a_blocked_iteration(cgroup: Path, kind: str) -> None:
    obj = quiet(make(kind, cgroup))
    thread, out = in_thread(lambda: list(obj))
    until_waiting(obj)
    start = time.monotonic()
    obj.close()
    assert time.monotonic() - start < 0.5
    thread.join(5)
    assert not thread.is_alive(), "the iteration went on after close()"
    assert out == [[]], out        # ended: nothing, and no exception


def test_two_threads_waiting_both_wake(cgroup: Path) -> None:
    before = fds()
    g = quiet(make("group", cgroup))
    threads = [in_thread(g.wait) for _ in range(2)]
    for _ in range(500):
        if g._waiters == 2:
            break
        time.sleep(0.01)
    assert g._waiters == 2
    time.sleep(0.05)
    g.close()
    for t, out in threads:
        t.join(5)
        assert not t.is_alive() and isinstance(out[0], ValueError), out
    assert fds() == before


def test_wait_times_out_and_reports_readiness(cgroup: Path) -> None:
    with make("stream", cgroup, 100) as s:
        next(s)
        start = time.monotonic()
        assert s.wait(0.02) is False
        assert time.monotonic() - start < 0.5
        assert s.wait(5) is True
        assert s.read() is not None


def test_close_from_another_thread_ends_async_iteration(cgroup: Path) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        tree = quiet(make("tree", cgroup))
        fd = tree.fileno()
        task = asyncio.create_task(consume(tree))
        await asyncio.sleep(0.1)
        assert fd in loop._selector.get_map()  # type: ignore[attr-defined]
        closer = threading.Thread(target=tree.close)
        closer.start()
        assert await asyncio.wait_for(task, 5) == 0
        closer.join()
        assert loop.remove_reader(fd) is False

    asyncio.run(main())


async def consume(obj: Obj) -> int:
    n = 0
    async for _ in obj:
        n += 1
    return n


class Recorder:
    """Stands in for the loaded library on one object: records, for every
    call, its name, whether it ran on the given thread, and whether the
    object's fd polled readable just before."""

    def __init__(self, lib: Any, loop_thread: int) -> None:
        self._lib = lib
        self.loop_thread = loop_thread
        self.fd = -1
        self.calls: list[tuple[str, bool, bool]] = []

    def __getattr__(self, name: str) -> Any:
        func = getattr(self._lib, name)

        def call(*args: Any) -> Any:
            readable = False
            if self.fd >= 0:
                p = select.poll()
                p.register(self.fd, select.POLLIN)
                readable = bool(p.poll(0))
            self.calls.append((name, threading.get_ident() == self.loop_thread, readable))
            return func(*args)

        return call


@pytest.mark.parametrize("kind", KINDS)
def test_async_iteration_calls_only_nonblocking_functions_on_the_loop(
        cgroups: Cgroups, kind: str, io: str, caplog: pytest.LogCaptureFixture) -> None:
    """With a period of 400 ms, a blocking wait anywhere on the loop would
    also show as a slow callback (asyncio debug mode, 200 ms)."""
    parent = cgroups.make()
    for _ in range(3):
        cgroups.make(parent=parent)

    async def main() -> Recorder:
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = 0.2
        obj = make(kind, parent, 400)
        rec = Recorder(obj._lib, threading.get_ident())
        rec.fd = obj.fileno()
        obj._lib = rec
        async with obj:
            got = 0
            async for _ in obj:
                got += 1
                if got == 3:
                    break
        return rec

    caplog.set_level(logging.WARNING, logger="asyncio")
    rec = asyncio.run(main(), debug=True)
    slow = [r.getMessage() for r in caplog.records if "took" in r.getMessage()]
    assert not slow, slow
    on_loop = [(name, readable) for name, here, readable in rec.calls if here]
    assert not [name for name, _ in on_loop if name.endswith("_wait")], on_loop
    data_calls = [(name, readable) for name, readable in on_loop
                  if name in ("cgstream_read", "cgstream_read_event", "cgstream_group_process",
                              "cgstream_tree_process")]
    assert len(data_calls) >= 3, rec.calls
    assert all(readable for _, readable in data_calls), data_calls
    # the library was freed off the loop (it may wait for io_uring reads)
    frees = [here for name, here, _ in rec.calls
             if name in ("cgstream_close", "cgstream_group_free", "cgstream_tree_close")]
    assert frees == [False], rec.calls


def test_buffers_are_kept_from_call_to_call(cgroups: Cgroups) -> None:
    """The event array and a stream's event struct are allocated once (and
    grown when a batch needs more), not per cycle."""
    parent = cgroups.make()
    with pycgstream.Tree(parent, mode="fallback", fallback_interval_ms=20) as t, \
            pycgstream.Stream(parent, mode="fallback", fallback_interval_ms=20) as s:
        next(t)
        events, sample = t._events, s._event
        next(t), next(t), next(s), next(s)
        assert t._events is events and s._event is sample
        more = [cgroups.make(parent=parent) for _ in range(len(events))]
        batch = next(t)
        # as many new cgroups as the array held: it grew, once, and the
        # batch came whole (an Added and a Sample for each)
        assert len(t._events) > len(events)
        grown = t._events
        assert len(batch) == 2 * len(more) + 1, len(batch)
        next(t)
        assert t._events is grown
