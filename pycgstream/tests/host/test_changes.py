"""Changes in fallback mode on the host (the emulation compares values):
a Tree and a Group with ``changes=True`` hand out a Changed (a Sample)
for each cgroup whose values moved, nothing for the others; a removed
cgroup's Removed has its last values; sync and async iteration alike.
The same against the patched kernel's change snapshots, with final
values, is tests/vm/test_tree.py's."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from pathlib import Path

import pytest

import pycgstream
from pycgstream import Added, Changed, Removed, Sample
from conftest import Cgroups

pytestmark = pytest.mark.usefixtures("library")


def subtree(cgroups: Cgroups, n: int) -> tuple[Path, Path, list[Path]]:
    """A top cgroup, a busy child (a process spins in it), @n idle ones."""
    top = cgroups.make("top")
    busy = cgroups.make("busy", top)
    idle = [cgroups.make(f"idle{i}", top) for i in range(n)]
    cgroups.burn(busy)
    return top, busy, idle


def test_tree_changes(cgroups: Cgroups) -> None:
    top, busy, idle = subtree(cgroups, 8)
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=50, changes=True,
                         controllers=("cpu",)) as tree:
        first = next(tree)
        added = [ev for ev in first if isinstance(ev, Added)]
        changed = [ev for ev in first if isinstance(ev, Changed)]
        assert len(added) == len(changed) == 10
        assert all(ev.changed == {"cpu"} and isinstance(ev, Sample) for ev in changed)
        assert all(ev.cpu is not None and ev.cpu["usage_usec"] == ev.usage_usec
                   for ev in changed)
        last = {ev.cgroup: ev for ev in changed}
        for batch in itertools.islice(tree, 4):
            # the busy cgroup and its parent: their usage moved; the idle ones' did not
            assert all(isinstance(ev, Changed) for ev in batch), batch
            got = {ev.cgroup for ev in batch}
            assert str(busy) in got and got <= {str(top), str(busy)}, got
            for ev in batch:
                assert ev.usage_usec != last[ev.cgroup].usage_usec
                last[ev.cgroup] = ev
        cgroups.remove(idle[0])
        for batch in tree:
            gone = [ev for ev in batch if isinstance(ev, Removed)]
            if gone:
                break
        assert [ev.cgroup for ev in gone] == [str(idle[0])]
        # its last values: read before it went, the emulation has no final ones
        assert gone[0].final == frozenset() and gone[0].values is not None
        assert gone[0].values.usage_usec == last[str(idle[0])].usage_usec


def test_group_changes_async(cgroups: Cgroups) -> None:
    top, busy, idle = subtree(cgroups, 3)

    async def main() -> list[list[pycgstream.Event]]:
        got = []
        async with pycgstream.Group([busy, *idle], mode="fallback", fallback_interval_ms=50,
                                    changes=True, controllers=("cpu",)) as group:
            async for batch in group:
                got.append(batch)
                if len(got) == 4:
                    break
        return got

    batches = asyncio.run(main())
    assert {ev.cgroup for ev in batches[0]} == {str(busy), *map(str, idle)}
    for batch in batches[1:]:
        assert [ev.cgroup for ev in batch] == [str(busy)]
        assert isinstance(batch[0], Changed) and batch[0].changed == {"cpu"}


def test_all_by_default(cgroups: Cgroups) -> None:
    """Without changes: a Sample of every cgroup each cycle, as before,
    each saying which controllers' values moved."""
    top, busy, idle = subtree(cgroups, 2)
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=50,
                         controllers=("cpu",)) as tree:
        next(tree)
        batch = next(tree)
        assert len(batch) == 4 and not any(isinstance(ev, Changed) for ev in batch)
        moved = {ev.cgroup: ev.changed for ev in batch}
        assert moved[str(busy)] == {"cpu"} and moved[str(idle[0])] == frozenset()


def test_publications_of_an_idle_tree(cgroups: Cgroups) -> None:
    """Tree.publications(): none before a cycle; then each cycle's (the
    emulation's count and the time its reads began), moving on while no
    cgroup changes and the batches are empty."""
    top = cgroups.make("top")
    cgroups.make("idle", top)
    tree = pycgstream.Tree(top, mode="fallback", fallback_interval_ms=50,
                           controllers=("cpu",), changes=True)
    with tree:
        assert tree.publications() == {}
        assert len(next(tree)) == 4     # Added and Changed of both
        first = tree.publications()["cpu"]
        assert isinstance(first, pycgstream.Publication) and first.seq >= 1
        seqs, empty = [first.seq], 0
        deadline = time.monotonic() + 10
        while len(set(seqs)) < 6 and time.monotonic() < deadline:
            tree.wait(1)
            empty += tree.read() == []
            pub = tree.publications()
            assert set(pub) == {"cpu"}
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            assert first.time_usec <= pub["cpu"].time_usec <= now
            assert pub["cpu"].seq >= seqs[-1]
            seqs.append(pub["cpu"].seq)
        assert len(set(seqs)) >= 6 and empty, seqs
    with pytest.raises(ValueError):
        tree.publications()


def test_sync_of_an_idle_tree_returns_at_once(cgroups: Cgroups) -> None:
    """With changes=True the batch of a cycle in which nothing changed is
    empty: Tree.sync() returns it once that cycle is read (it used to
    wait for a batch with an event, until its timeout), and each sync is
    a cycle of its own (its publication moves on)."""
    top = cgroups.make("top")
    cgroups.make("idle", top)
    for plain in (False, True):
        env = {"CGSTREAM_NO_IO_URING": "1"} if plain else {}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            tree = pycgstream.Tree(top, mode="fallback", fallback_interval_ms=3_600_000,
                                   controllers=("cpu",), changes=True)
        finally:
            for k, v in old.items():
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
        with tree:
            assert len(tree.sync(timeout=10)) == 4     # Added and Changed of both
            seqs = [tree.publications()["cpu"].seq]
            for _ in range(5):
                began = time.monotonic()
                assert tree.sync(timeout=10) == []
                assert time.monotonic() - began < 2, "the timeout, not the cycle, ended it"
                seqs.append(tree.publications()["cpu"].seq)
            assert seqs == sorted(set(seqs)), seqs
