"""Stream and Group in fallback mode (timer + cpu.stat) on any cgroup2
mount: samples, iteration, removal, asyncio and its cancellation."""

from __future__ import annotations

import asyncio
import errno
import itertools
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pycgstream
from pycgstream import CgroupRemovedError, Removed, Sample
from conftest import Cgroups, python_env

pytestmark = pytest.mark.usefixtures("library")

PERIOD_MS = 50


def fallback_stream(cgroup: Path | str, **kw: object) -> pycgstream.Stream:
    return pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=PERIOD_MS, **kw)  # type: ignore[arg-type]


def remove_soon(cgroups: Cgroups, cgroup: Path, delay: float = 0.3) -> threading.Timer:
    t = threading.Timer(delay, cgroups.remove, (cgroup,))
    t.start()
    return t


def test_stream_basics(cgroup: Path, mount: Path) -> None:
    with fallback_stream(cgroup) as s:
        assert s.mode == "fallback"
        assert s.path == str(cgroup)
        assert isinstance(s.fileno(), int) and s.fileno() >= 0
        assert repr(s) == f"<pycgstream.Stream {str(cgroup)!r} fallback>"
        assert not s.removed
    assert s.closed
    assert repr(s) == f"<pycgstream.Stream {str(cgroup)!r} closed>"


def test_relative_paths_and_cgroup_root(cgroup: Path, mount: Path) -> None:
    with fallback_stream(cgroup.name) as s:
        assert s.path == str(cgroup)
    with fallback_stream(cgroup.name, cgroup_root=mount) as s:
        assert s.path == str(cgroup)
    with fallback_stream("/") as s:
        assert s.path == str(mount)


def test_one_sample_per_cycle_and_none_when_not_ready(cgroup: Path) -> None:
    period = 200      # long enough that a loaded host does not race the checks
    with pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=period) as s:
        samples = []
        while len(samples) < 5:
            # every wake-up brings exactly one new sample: no busy wake-ups,
            # no cycle handed out twice
            assert s.wait(5), "no sample within 5 s"
            sample = s.read()
            assert isinstance(sample, Sample)
            samples.append(sample)
            assert s.read() is None
            assert s.wait(0) is False
        seqs = [x.seq for x in samples]
        assert all(b > a for a, b in zip(seqs, seqs[1:])), seqs
        # one timer period per sample at least, on average (a late read
        # may sit closer to the next one)
        elapsed_ms = (samples[-1].flush_time_usec - samples[0].flush_time_usec) / 1000  # type: ignore[operator]
        assert elapsed_ms / (len(samples) - 1) >= 0.8 * period, elapsed_ms


def test_fallback_sample_fields(cgroup: Path) -> None:
    with fallback_stream(cgroup) as s:
        sample = next(s)
    assert sample.cgroup == str(cgroup)
    for name in ("seq", "flush_time_usec", "usage_usec", "user_usec",
                 "system_usec", "nice_usec"):
        assert isinstance(getattr(sample, name), int), name
    # fallback mode counts the timer periods the library skipped
    assert isinstance(sample.flush_missed, int)
    # no cpu controller on the cgroup: the bandwidth fields are absent
    if "cpu" not in (cgroup / "cgroup.controllers").read_text().split():
        for name in ("nr_periods", "nr_throttled", "throttled_usec",
                     "nr_bursts", "burst_usec"):
            assert getattr(sample, name) is None, name


def test_usage_follows_a_busy_process(cgroups: Cgroups, cgroup: Path) -> None:
    with fallback_stream(cgroup) as s:
        first = next(s)
        cgroups.burn(cgroup)
        last = next(itertools.islice(s, 10, None))
    percent = pycgstream.cpu_percent(first, last)
    # how much depends on the machine's load; some it must be
    assert percent is not None and percent > 0, percent
    assert last.usage_usec > first.usage_usec  # type: ignore[operator]


def test_iteration_ends_on_removal(cgroups: Cgroups, cgroup: Path) -> None:
    with fallback_stream(cgroup) as s:
        remove_soon(cgroups, cgroup)
        n = 0
        for n, _ in enumerate(s, 1):
            assert n < 200, "iteration did not end after the cgroup was removed"
        assert n >= 1
        assert s.removed
        with pytest.raises(CgroupRemovedError) as e:
            s.read()
        assert isinstance(e.value, OSError)
        assert e.value.errno == errno.ENODEV
        assert e.value.filename == str(cgroup)


def test_group_batches(cgroups: Cgroups) -> None:
    members = [cgroups.make() for _ in range(5)]
    with pycgstream.Group(members, mode="fallback", fallback_interval_ms=PERIOD_MS) as g:
        assert len(g) == 5
        assert g.mode == "fallback"
        assert repr(g) == "<pycgstream.Group 5 cgroups fallback>"
        batches = list(itertools.islice(g, 3))
        for batch in batches:
            assert all(isinstance(ev, Sample) for ev in batch), batch
            paths = [ev.cgroup for ev in batch]
            assert len(paths) == len(set(paths)), "a cgroup twice in one cycle"
        seen = {ev.cgroup for batch in batches for ev in batch}
        assert seen == {str(m) for m in members}
        g.remove(members[0])
        assert len(g) == 4
        for batch in itertools.islice(g, 2):
            assert str(members[0]) not in {ev.cgroup for ev in batch}
        assert g.read() == []


def test_group_removal_and_end_of_iteration(cgroups: Cgroups) -> None:
    a, b = cgroups.make(), cgroups.make()
    with pycgstream.Group([a, b], mode="fallback", fallback_interval_ms=PERIOD_MS) as g:
        remove_soon(cgroups, a, 0.2)
        remove_soon(cgroups, b, 0.5)
        removed = []
        for n, batch in enumerate(g):
            assert n < 200, "group iteration did not end"
            removed += [ev.cgroup for ev in batch if isinstance(ev, Removed)]
        assert removed == [str(a), str(b)]
        assert len(g) == 0


def test_async_two_streams_at_once(cgroups: Cgroups) -> None:
    a, b = cgroups.make(), cgroups.make()

    async def take(stream: pycgstream.Stream, n: int) -> list[Sample]:
        return [s async for s in _limit(stream, n)]

    async def main() -> tuple[list[Sample], list[Sample]]:
        with fallback_stream(a) as sa, fallback_stream(b) as sb:
            return await asyncio.gather(take(sa, 4), take(sb, 4))

    got_a, got_b = asyncio.run(main())
    assert [s.cgroup for s in got_a] == [str(a)] * 4
    assert [s.cgroup for s in got_b] == [str(b)] * 4
    for got in (got_a, got_b):
        seqs = [s.seq for s in got]
        assert all(y > x for x, y in zip(seqs, seqs[1:])), seqs


async def _limit(stream: pycgstream.Stream, n: int):  # type: ignore[no-untyped-def]
    async for sample in stream:
        yield sample
        n -= 1
        if n == 0:
            return


def test_async_iteration_ends_on_removal(cgroups: Cgroups, cgroup: Path) -> None:
    async def main() -> int:
        n = 0
        with fallback_stream(cgroup) as s:
            remove_soon(cgroups, cgroup)
            async for _ in s:
                n += 1
                assert n < 200
            assert s.removed
        return n

    assert asyncio.run(main()) >= 1


def test_async_group(cgroups: Cgroups) -> None:
    members = [cgroups.make() for _ in range(3)]

    async def main() -> list[list[pycgstream.Event]]:
        with pycgstream.Group(members, mode="fallback", fallback_interval_ms=PERIOD_MS) as g:
            batches = []
            async for batch in g:
                batches.append(batch)
                if len(batches) == 3:
                    break
            return batches

    batches = asyncio.run(main())
    assert {ev.cgroup for batch in batches for ev in batch} == {str(m) for m in members}


def registered(loop: asyncio.AbstractEventLoop, fd: int) -> bool:
    """Is fd in the loop's selector?  (A selector-based loop: the default
    on Linux.)"""
    selector = loop._selector  # type: ignore[attr-defined]
    return fd in selector.get_map()


def test_cancelled_async_iteration_leaves_no_reader(cgroup: Path) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        # a long period: the consumer is surely parked in the reader
        with pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=60_000) as s:
            fd = s.fileno()
            s.read()

            async def consume() -> None:
                async for _ in s:
                    pass

            task = asyncio.create_task(consume())
            for _ in range(100):
                await asyncio.sleep(0.01)
                if registered(loop, fd):
                    break
            assert registered(loop, fd), "the consumer never waited on the fd"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert not registered(loop, fd)
            # the public way to ask: nothing to remove
            assert loop.remove_reader(fd) is False
            # and the stream is usable again from another task
            task = asyncio.create_task(consume())
            await asyncio.sleep(0.05)
            assert registered(loop, fd)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert not registered(loop, fd)

    asyncio.run(main())


def test_wait_for_timeout_leaves_no_reader(cgroup: Path) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pycgstream.Group([cgroup], mode="fallback", fallback_interval_ms=60_000) as g:
            next(g)         # the first tick's batch: then nothing for a minute
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(g.__anext__(), 0.1)
            assert loop.remove_reader(g.fileno()) is False

    asyncio.run(main())


def test_two_tasks_on_one_stream_is_an_error(cgroup: Path) -> None:
    async def main() -> None:
        with pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=60_000) as s:
            s.read()
            first = asyncio.create_task(s.__anext__())
            await asyncio.sleep(0.05)
            with pytest.raises(RuntimeError, match="already iterating"):
                await s.__anext__()
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first

    asyncio.run(main())


def test_close_ends_a_waiting_async_iteration(cgroup: Path) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        s = pycgstream.Stream(cgroup, mode="fallback", fallback_interval_ms=60_000)
        fd = s.fileno()
        s.read()

        async def consume() -> int:
            return len([x async for x in s])

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        s.close()
        assert await asyncio.wait_for(task, 5) == 0
        assert loop.remove_reader(fd) is False

    asyncio.run(main())


def test_sync_wait_is_interruptible(cgroup: Path) -> None:
    """Ctrl-C during a blocking iteration raises KeyboardInterrupt at once,
    not after the next cycle."""
    code = ("import pycgstream, sys\n"
            f"s = pycgstream.Stream({str(cgroup)!r}, mode='fallback', fallback_interval_ms=60000)\n"
            "s.read(); print('ready', flush=True)\n"
            "try:\n"
            "    next(s)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], env=python_env(), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == "ready\n"
        time.sleep(0.2)
        start = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
        assert time.monotonic() - start < 5
        assert out == "interrupted\n", err
    finally:
        p.kill()
        p.wait()
