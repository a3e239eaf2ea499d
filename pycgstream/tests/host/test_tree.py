"""Tree in fallback mode on the host's cgroup2 mount (a timer, cpu.stat
reads, inotify for new cgroups), with io_uring and without: subtrees of
1,000 and 10,000 cgroups checked batch by batch (treecheck.py) while
cgroups are made, removed and made again; 1,000 cycles without growth of
fds or memory; the root's removal; the modes a host kernel lacks."""

from __future__ import annotations

import asyncio
import errno
import itertools
from pathlib import Path
from typing import Iterator

import pytest

import pycgstream
from pycgstream import Added, Sample
from conftest import Cgroups, kernel_has_stream
from treecheck import (TreeModel, check_no_growth, churn, io_uring_fds, model_fixture,
                       populate, raise_fd_limit, read_until_settled, remove_all)

pytestmark = pytest.mark.usefixtures("library")


@pytest.fixture
def model(cgroups: Cgroups) -> Iterator[TreeModel]:
    yield from model_fixture(cgroups.mount / f"{cgroups.prefix}-tree", exact=True)


def io_uring_refused() -> bool:
    """The kernel or a seccomp filter refuses io_uring here: the library
    uses plain syscalls whatever the test asks."""
    try:
        with open("/proc/sys/kernel/io_uring_disabled") as f:
            return f.read().strip() != "0"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("n", [1000, 10000])
def test_tree(model: TreeModel, io: str, n: int) -> None:
    raise_fd_limit(n + 1000)
    populate(model, n)
    period = 50 if n <= 1000 else 300
    with pycgstream.Tree(model.top, mode="fallback", fallback_interval_ms=period) as tree:
        assert (tree.mode, tree.path, len(tree)) == ("fallback", str(model.top), n + 1)
        if io == "plain":
            assert io_uring_fds() == 0
        elif not io_uring_refused():
            assert io_uring_fds() > 0
        first = next(tree)
        model.check(first)
        assert sum(isinstance(ev, Added) for ev in first) == n + 1
        assert sum(isinstance(ev, Sample) for ev in first) == n + 1
        assert model.settled()
        for batch in itertools.islice(tree, 3):
            model.check(batch)
            assert all(isinstance(ev, Sample) for ev in batch)
        for round_ in range(2):
            churn(model, round_)
            read_until_settled(model, tree)
        for batch in itertools.islice(tree, 2):
            model.check(batch)
        made_later = [nd for nd in model.nodes.values() if nd.path.name.startswith(("new", "n"))]
        assert len(made_later) == 40 and all(nd.added == 1 for nd in made_later)
        again = [nodes for nodes in model.by_path.values() if len(nodes) > 1]
        assert len(again) == 10
        for old, new in again:
            assert (old.added, old.removed, new.added, new.removed) == (1, 1, 1, 0)
        assert len(tree) == len(model.known)
        remove_all(model, tree)


@pytest.mark.parametrize("n", [1000])
def test_no_growth_over_1000_cycles(model: TreeModel, io: str, n: int) -> None:
    """1,000 cycles of 10 ms: no growth (treecheck.check_no_growth)."""
    raise_fd_limit(n + 1000)
    populate(model, n)
    with pycgstream.Tree(model.top, mode="fallback", fallback_interval_ms=10) as tree:
        check_no_growth(model, tree)
        assert len(tree) == n + 1
    assert all(len(nodes) <= 11 for nodes in model.by_path.values())


def test_async_tree(model: TreeModel, io: str) -> None:
    populate(model, 100)

    async def main() -> int:
        got = 0
        async with pycgstream.Tree(model.top, mode="fallback", fallback_interval_ms=50) as t:
            async for batch in t:
                model.check(batch)
                got += 1
                if got == 2:
                    churn(model, 0, 8)
                if got > 2 and model.settled():
                    break
                assert got < 50
        return got

    assert asyncio.run(main()) > 2


def test_tree_of_one_cgroup_and_its_removal(cgroups: Cgroups, cgroup: Path) -> None:
    cgroup_id = cgroup.stat().st_ino
    with pycgstream.Tree(cgroup, mode="fallback", fallback_interval_ms=20) as t:
        assert repr(t) == f"<pycgstream.Tree {str(cgroup)!r} 1 cgroups fallback>"
        first = next(t)
        assert first[0] == Added(str(cgroup), cgroup_id, 0)
        assert isinstance(first[1], Sample) and first[1].cgroup_id == cgroup_id
        assert first[1].parent_id == 0
        cgroups.remove(cgroup)
        batches = list(t)
        gone = batches[-1][-1]
        assert isinstance(gone, pycgstream.Removed) and gone.cgroup == str(cgroup)
        assert (gone.cgroup_id, gone.parent_id) == (cgroup_id, 0)
        # its last values, read before it went (the emulation has no final ones)
        assert gone.final == frozenset() and gone.values is not None
        assert gone.values.cgroup_id == cgroup_id and gone.values.usage_usec is not None
        assert t.removed and t.wait(5) is True
        with pytest.raises(pycgstream.CgroupRemovedError) as e:
            t.read()
        assert e.value.errno == errno.ENODEV and e.value.filename == str(cgroup)
    assert repr(t) == f"<pycgstream.Tree {str(cgroup)!r} closed>"


def test_tree_errors(mount: Path, cgroup: Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        pycgstream.Tree(cgroup / "missing", mode="fallback")
    assert e.value.filename == str(cgroup / "missing")
    with pytest.raises(ValueError, match="mode must be one of"):
        pycgstream.Tree(cgroup, mode="fast")
    # subtree is a tree's mode only
    for cls in (pycgstream.Stream, pycgstream.Group):
        with pytest.raises(ValueError, match="mode must be one of"):
            cls(cgroup, mode="subtree")  # type: ignore[arg-type]
    if not (mount / "cpu.stat.stream.subtree").exists():
        with pytest.raises(OSError) as e:
            pycgstream.Tree(cgroup, mode="subtree")
        assert e.value.errno == errno.EOPNOTSUPP
    if not kernel_has_stream(mount):
        with pytest.raises(OSError) as e:
            pycgstream.Tree(cgroup, mode="kernel")
        assert e.value.errno == errno.EOPNOTSUPP
        with pycgstream.Tree(cgroup) as t:
            assert t.mode == "fallback"
    t = pycgstream.Tree(cgroup, mode="fallback")
    t.close()
    for call in (t.read, t.fileno, t.wait, lambda: len(t), lambda: next(t)):
        with pytest.raises(ValueError, match="closed Tree"):
            call()
