"""pycgstream on the patched kernel: kernel mode, one sample per cycle,
many cgroups in a Group, asyncio, removal, cancellation, the CLI."""

from __future__ import annotations

import asyncio
import errno
import itertools
import os
import threading
import time
from pathlib import Path

import pytest

import pycgstream
from pycgstream import CgroupRemovedError, Removed, Sample
from conftest import Cgroups, as_nobody
from vmfixtures import STREAMED, interval, patched_kernel, time_limit  # noqa: F401 (fixtures)

# these tests are about cpu.stat.stream: the library's default set would add
# memory and io where the VM's cgroups have them
CPU = ("cpu",)

BANDWIDTH = ("nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec")


def increasing(seqs: list[int]) -> bool:
    return all(b > a for a, b in zip(seqs, seqs[1:]))


def registered(loop: asyncio.AbstractEventLoop, fd: int) -> bool:
    return fd in loop._selector.get_map()  # type: ignore[attr-defined]


def timed_remove(cgroups: Cgroups, cgroup: Path, delay: float, took: list[float]) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        start = time.monotonic()
        cgroups.remove(cgroup)
        took.append(time.monotonic() - start)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_interval_get_set(patched_kernel: None) -> None:
    old = pycgstream.get_interval()
    try:
        pycgstream.set_interval(250)
        assert pycgstream.get_interval() == 250
        for bad in (5, 9, 3_600_001):
            with pytest.raises(OSError) as e:
                pycgstream.set_interval(bad)
            assert e.value.errno == errno.EINVAL
            assert pycgstream.get_interval() == 250      # the old setting stays
        pycgstream.set_interval(0)
        assert pycgstream.get_interval() == 0
    finally:
        pycgstream.set_interval(old)


@pytest.mark.other_user
def test_set_interval_needs_privilege(interval: int) -> None:
    def unprivileged() -> int:
        try:
            pycgstream.set_interval(500)
        except PermissionError as e:
            return 0 if e.errno in (errno.EPERM, errno.EACCES) else 2
        return 1

    assert as_nobody(unprivileged) == 0
    assert pycgstream.get_interval() == interval


def test_kernel_mode_one_sample_per_cycle(interval: int, cgroup: Path) -> None:
    with pycgstream.Stream(cgroup, mode="kernel", controllers=CPU) as s:
        assert s.mode == "kernel"
        assert s.path == str(cgroup)
        samples = []
        while len(samples) < 10:
            # every wake-up brings one new sample: no busy wake-ups, no
            # cycle handed out twice
            assert s.wait(5), "no flush within 5 s"
            sample = s.read()
            assert isinstance(sample, Sample)
            samples.append(sample)
            # a slow guest may see the next flush already; never this one again
            again = s.read()
            if again is not None:
                assert again.seq > sample.seq  # type: ignore[operator]
                samples.append(again)
    seqs = [x.seq for x in samples]
    assert increasing(seqs), seqs  # type: ignore[arg-type]
    # fixed rate: each cycle, done or skipped as late (flush_missed), is
    # one interval after the previous one
    cycles = (samples[-1].seq - samples[0].seq) + (  # type: ignore[operator]
        samples[-1].flush_missed - samples[0].flush_missed)  # type: ignore[operator]
    elapsed_ms = (samples[-1].flush_time_usec - samples[0].flush_time_usec) / 1000  # type: ignore[operator]
    assert 0.7 * interval <= elapsed_ms / cycles <= 1.5 * interval, (elapsed_ms, cycles, samples)
    for x in samples:
        assert isinstance(x.flush_missed, int)
        assert x.cgroup == str(cgroup)


def test_iteration_and_auto_mode(interval: int, cgroup: Path) -> None:
    with pycgstream.Stream(cgroup, controllers=CPU) as s:
        assert s.mode == "kernel"
        seqs = [x.seq for x in itertools.islice(s, 5)]
    assert increasing(seqs), seqs  # type: ignore[arg-type]


def test_absent_fields_are_none_in_kernel_mode(interval: int, cgroups: Cgroups, mount: Path) -> None:
    (mount / "cgroup.subtree_control").write_text("+cpu")
    parent = cgroups.make("cpu")                 # the cpu controller is on here...
    child = cgroups.make("nocpu", parent=parent)  # ...and not enabled below
    assert "cpu" in (parent / "cgroup.controllers").read_text().split()
    assert "cpu" not in (child / "cgroup.controllers").read_text().split()
    with pycgstream.Stream(parent, mode="kernel", controllers=CPU) as p, \
            pycgstream.Stream(child, mode="kernel", controllers=CPU) as c:
        with_cpu, without = next(p), next(c)
    for name in BANDWIDTH:
        assert isinstance(getattr(with_cpu, name), int), name
        assert getattr(without, name) is None, name
    for x in (with_cpu, without):
        assert None not in (x.seq, x.flush_time_usec, x.usage_usec, x.flush_missed)


def test_usage_follows_a_busy_process(interval: int, cgroups: Cgroups, cgroup: Path) -> None:
    with pycgstream.Stream(cgroup, mode="kernel", controllers=CPU) as s:
        first = next(s)
        cgroups.burn(cgroup)
        last = next(itertools.islice(s, 5, None))
    percent = pycgstream.cpu_percent(first, last)
    # how much depends on how busy the host is; some it must be
    assert percent is not None and percent > 0, percent


def test_group_over_sixty_cgroups(interval: int, cgroups: Cgroups) -> None:
    members = [cgroups.make() for _ in range(60)]
    names = {str(m) for m in members}
    with pycgstream.Group(members, mode="kernel", controllers=CPU) as g:
        assert g.mode == "kernel" and len(g) == 60
        per_seq: dict[int, list[str]] = {}
        for batch in itertools.islice(g, 6):
            paths = [ev.cgroup for ev in batch]
            assert all(isinstance(ev, Sample) for ev in batch), batch
            assert len(paths) == len(set(paths)), "a cgroup twice in one batch"
            for ev in batch:
                per_seq.setdefault(ev.seq, []).append(ev.cgroup)  # type: ignore[union-attr, arg-type]
        for seq, got in per_seq.items():
            assert len(got) == len(set(got)), f"seq {seq} delivered twice"
        # a slow reader may skip cycles and a batch may end before every
        # read of a cycle completed (late ones come in the next batch), but
        # every cgroup keeps coming, each cycle at most once
        per_cgroup: dict[str, list[int]] = {}
        for seq, got in sorted(per_seq.items()):
            for path in got:
                per_cgroup.setdefault(path, []).append(seq)
        assert set(per_cgroup) == names
        assert all(len(seqs) >= 2 and increasing(seqs) for seqs in per_cgroup.values()), per_cgroup

        gone = members[:10]
        for m in gone:
            cgroups.remove(m)
        removed: list[str] = []
        for n, batch in enumerate(g):
            removed += [ev.cgroup for ev in batch if isinstance(ev, Removed)]
            if len(removed) == 10 or n > 50:
                break
        assert sorted(removed) == sorted(str(m) for m in gone)
        assert len(g) == 50


def test_async_two_streams_at_once(interval: int, cgroups: Cgroups) -> None:
    a, b = cgroups.make(), cgroups.make()

    async def take(stream: pycgstream.Stream, n: int) -> list[Sample]:
        got = []
        async for sample in stream:
            got.append(sample)
            if len(got) == n:
                break
        return got

    async def main() -> tuple[list[Sample], list[Sample]]:
        with pycgstream.Stream(a, mode="kernel", controllers=CPU) as sa, pycgstream.Stream(b, mode="kernel", controllers=CPU) as sb:
            return await asyncio.gather(take(sa, 6), take(sb, 6))

    got_a, got_b = asyncio.run(main())
    seqs_a, seqs_b = [x.seq for x in got_a], [x.seq for x in got_b]
    for seqs in (seqs_a, seqs_b):
        assert increasing(seqs), seqs  # type: ignore[arg-type]
    # one loop served both, cycle by cycle: they saw the same flushes
    assert len(set(seqs_a) & set(seqs_b)) >= 2, (seqs_a, seqs_b)


def test_removal_while_iterating(interval: int, cgroups: Cgroups, cgroup: Path) -> None:
    took: list[float] = []
    with pycgstream.Stream(cgroup, mode="kernel", controllers=CPU) as s:
        remover = timed_remove(cgroups, cgroup, 0.5, took)
        n = 0
        for n, _ in enumerate(s, 1):
            assert n < 100, "the iteration did not end after rmdir"
        remover.join()
        assert n >= 1
        assert s.removed
        with pytest.raises(CgroupRemovedError) as e:
            s.read()
        assert e.value.errno == errno.ENODEV
        start = time.monotonic()
        assert s.wait(5) is True            # never blocks on a removed cgroup
        assert time.monotonic() - start < 1
    # rmdir does not wait for stream readers
    assert took and took[0] < 2, took


def test_async_removal_while_iterating(interval: int, cgroups: Cgroups, cgroup: Path) -> None:
    took: list[float] = []

    async def main() -> int:
        n = 0
        with pycgstream.Stream(cgroup, mode="kernel", controllers=CPU) as s:
            remover = timed_remove(cgroups, cgroup, 0.5, took)
            async for _ in s:
                n += 1
                assert n < 100
            await asyncio.get_running_loop().run_in_executor(None, remover.join)
            assert s.removed
            assert asyncio.get_running_loop().remove_reader(s.fileno()) is False
        return n

    assert asyncio.run(main()) >= 1
    assert took and took[0] < 2


def test_async_group_removal(interval: int, cgroups: Cgroups) -> None:
    a, b = cgroups.make(), cgroups.make()

    async def main() -> list[str]:
        removed: list[str] = []
        with pycgstream.Group([a, b], mode="kernel", controllers=CPU) as g:
            threading.Timer(0.3, cgroups.remove, (a,)).start()
            threading.Timer(0.8, cgroups.remove, (b,)).start()
            async for batch in g:         # ends once both are gone
                removed += [ev.cgroup for ev in batch if isinstance(ev, Removed)]
            assert len(g) == 0
        return removed

    assert asyncio.run(main()) == [str(a), str(b)]


def test_cancelled_async_iteration_leaves_no_reader(patched_kernel: None, cgroups: Cgroups) -> None:
    old = pycgstream.get_interval()
    pycgstream.set_interval(3000)     # the consumers are surely parked in the reader
    try:
        stream_cg, group_cg = cgroups.make(), cgroups.make()

        async def main() -> None:
            loop = asyncio.get_running_loop()
            with pycgstream.Stream(stream_cg, mode="kernel", controllers=CPU) as s, \
                    pycgstream.Group([group_cg], mode="kernel", controllers=CPU) as g:
                for obj in (s, g):
                    fd = obj.fileno()

                    async def consume() -> None:
                        async for _ in obj:  # noqa: B023
                            pass

                    task = asyncio.create_task(consume())
                    for _ in range(200):
                        await asyncio.sleep(0.01)
                        if registered(loop, fd):
                            break
                    assert registered(loop, fd)
                    task.cancel()
                    with pytest.raises(asyncio.CancelledError):
                        await task
                    assert not registered(loop, fd)
                    assert loop.remove_reader(fd) is False

        asyncio.run(main())
    finally:
        pycgstream.set_interval(old)


def test_interval_per_controller(patched_kernel: None, mount: Path) -> None:
    """Each controller's own knob: setting memory's leaves cpu's alone."""
    for controller in ("memory", "io"):
        if not (mount / f"{controller}.stat.stream_interval").exists():
            pytest.fail(f"no {controller}.stat.stream_interval on the patched kernel")
    old = {c: pycgstream.get_interval(controller=c) for c in STREAMED}
    try:
        pycgstream.set_interval(300, controller="cpu")
        pycgstream.set_interval(700, controller="memory")
        pycgstream.set_interval(0, controller="io")
        if "pressure" in STREAMED:
            pycgstream.set_interval(250, controller="pressure")
            assert (mount / "pressure.stream_interval").read_text().strip() == "250"
        assert [pycgstream.get_interval(controller=c) for c in ("cpu", "memory", "io")] == [
            300, 700, 0]
        assert (mount / "memory.stat.stream_interval").read_text().strip() == "700"
        with pytest.raises(OSError) as e:
            pycgstream.set_interval(5, controller="memory")
        assert e.value.errno == errno.EINVAL
        assert pycgstream.get_interval(controller="memory") == 700
    finally:
        for c, ms in old.items():
            pycgstream.set_interval(ms, controller=c)


def test_memory_and_io_in_kernel_mode(interval: int, mount: Path, cgroups: Cgroups) -> None:
    """A stream per cgroup of each controller: memory's values with the
    kernel's names (memory.stat's keys in its order, then current and
    events.*), io's devices, each as of its own controller's flush."""
    (mount / "cgroup.subtree_control").write_text("+memory +io")
    cgroup = cgroups.make("memio")
    old = {c: pycgstream.get_interval(controller=c) for c in ("memory", "io")}
    try:
        for c in ("memory", "io"):
            pycgstream.set_interval(interval, controller=c)
        with pycgstream.Stream(cgroup, mode="kernel",
                               controllers=("cpu", "memory", "io")) as stream:
            assert stream.modes == {"cpu": "kernel", "memory": "kernel", "io": "kernel"}
            # a cgroup newer than a controller's publication has none of its
            # values (ENODATA) until the next one
            s = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (s is None or s.memory is None or
                                                   s.io is None):
                assert stream.wait(30)
                s = stream.read() or s
            assert s is not None and s.memory is not None and s.io is not None
            stat = [line.split()[0] for line in (cgroup / "memory.stat").read_text().splitlines()]
            assert list(s.memory)[:len(stat)] == stat
            assert "current" in s.memory and "events.oom_kill" in s.memory
            assert s.memory.seq > 0 and s.io.seq > 0
            assert len(s.io) == 0 or all(":" in d for d in s.io)
    finally:
        for c, ms in old.items():
            pycgstream.set_interval(ms, controller=c)


def test_pressure_in_kernel_mode(interval: int, mount: Path, cgroups: Cgroups) -> None:
    """Where the kernel streams pressure (pressure.stream): a stream of a
    cgroup whose tasks wait for the CPUs (more busy loops than CPUs) reads
    pressure.stream: the values by SPEC.md's SCHEMA names in order, the
    cpu.some total as of the publication (never above the file's now,
    growing), its publication's seq; a cgroup whose cgroup.pressure is 0:
    ENOMEDIUM asked for, none by default."""
    if "pressure" not in STREAMED:
        pytest.skip("this kernel has no pressure.stream")
    busy, off = cgroups.make("busy"), cgroups.make("off")
    (off / "cgroup.pressure").write_text("0")
    for _ in range((os.cpu_count() or 1) + 1):
        cgroups.burn(busy)
    names = [f"{r}.{k}.{v}" for r in ("cpu", "memory", "io") for k in ("some", "full")
             for v in ("avg10", "avg60", "avg300", "total")]
    if (mount / "irq.pressure").exists():
        names += [f"irq.full.{v}" for v in ("avg10", "avg60", "avg300", "total")]
    old = pycgstream.get_interval(controller="pressure")
    try:
        pycgstream.set_interval(interval, controller="pressure")
        with pycgstream.Stream(busy, mode="kernel", controllers=("cpu", "pressure")) as stream:
            assert stream.modes == {"cpu": "kernel", "pressure": "kernel"}
            totals: list[int] = []
            seqs: list[int] = []
            deadline = time.monotonic() + 60
            while len(totals) < 5 and time.monotonic() < deadline:
                assert stream.wait(30)
                s = stream.read()
                if s is None or s.pressure is None:
                    continue    # newer than the publication: none yet
                assert list(s.pressure) == names
                total = s.pressure["cpu.some.total"]
                text = (busy / "cpu.pressure").read_text()
                assert total <= int(text.split("total=")[1].split()[0])
                totals.append(total)
                seqs.append(s.pressure.seq)
            assert len(totals) == 5 and totals == sorted(totals) and totals[-1] > totals[0]
            assert seqs == sorted(seqs) and seqs[0] > 0
        with pytest.raises(OSError) as e:
            pycgstream.Stream(off, mode="kernel", controllers=("cpu", "pressure"))
        assert e.value.errno == errno.ENOMEDIUM
        with pycgstream.Stream(off, mode="kernel") as stream:
            assert "pressure" not in stream.controllers
    finally:
        pycgstream.set_interval(old, controller="pressure")
