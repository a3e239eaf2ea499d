"""The checks of a pycgstream.Tree, shared by the host tests (fallback
mode) and the VM tests (subtree and kernel modes), as libcgstream's
treecheck.h does them for the C API: a model of what the test made and
removed under the tree's root, by cgroup id (stat().st_ino), and each
batch checked against it:
 - order: Removed/Failed, then Added, then Sample;
 - Added once per cgroup, a parent before its children, with its path and
   parent's id; for a path made again, not before the old id's Removed;
 - Removed once, only for a cgroup the test removed, and no sample after;
 - every cgroup the tree knows sampled exactly once per batch, all of one
   flush (exact modes: fallback, subtree); at most once (kernel mode,
   where a flush landing while the streams are read splits a cycle).
"""

from __future__ import annotations

import collections
import errno
import os
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import pytest

import pycgstream
from pycgstream import Added, Event, Failed, Removed, Sample

RANK = {Removed: 0, Failed: 0, Added: 1, Sample: 2}


@dataclass
class Node:
    path: Path
    id: int
    parent_id: int
    alive: bool = True
    added: int = 0
    removed: int = 0
    samples: int = 0
    added_at: int = 0       # the batch of its Added


@dataclass
class TreeModel:
    top: Path
    exact: bool = True
    nodes: dict[int, Node] = field(default_factory=dict)
    by_path: dict[Path, list[Node]] = field(default_factory=dict)
    known: set[int] = field(default_factory=set)    # added, not removed
    batches: int = 0
    last_seq: int = 0

    # --- what the test does ---
    def mkdir(self, path: Path) -> Node:
        path.mkdir()
        st = path.stat()
        parent_id = 0 if path == self.top else path.parent.stat().st_ino
        node = Node(path, st.st_ino, parent_id)
        assert node.id not in self.nodes, f"{path}: id {node.id} seen before"
        self.nodes[node.id] = node
        self.by_path.setdefault(path, []).append(node)
        return node

    def rmdir(self, path: Path) -> Node:
        node = self.by_path[path][-1]
        for _ in range(100):
            try:
                path.rmdir()
                break
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                time.sleep(0.02)
        node.alive = False
        return node

    def live(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.alive]

    def leaves(self) -> list[Node]:
        parents = {n.parent_id for n in self.live()}
        return [n for n in self.live() if n.id not in parents and n.path != self.top]

    def cleanup(self) -> None:
        """Remove what is still there, children first."""
        for node in sorted(self.live(), key=lambda n: len(n.path.parts), reverse=True):
            try:
                self.rmdir(node.path)
            except FileNotFoundError:
                node.alive = False

    # --- what the tree says ---
    def check(self, batch: list[Event]) -> None:
        self.batches += 1
        ranks = [RANK[type(ev)] for ev in batch]
        assert ranks == sorted(ranks), f"batch {self.batches} out of order: {ranks}"
        sampled: set[int] = set()
        seqs: set[Optional[int]] = set()
        for ev in batch:
            node = self.nodes.get(ev.cgroup_id or 0)
            assert node is not None, f"batch {self.batches}: a cgroup the test never made: {ev}"
            assert ev.cgroup == str(node.path), ev
            assert ev.parent_id == node.parent_id, (ev, node)
            if isinstance(ev, Failed):
                pytest.fail(f"batch {self.batches}: {ev}")
            elif isinstance(ev, Removed):
                assert node.added == 1 and node.removed == 0, (ev, node)
                assert not node.alive, f"Removed for a cgroup still there: {ev}"
                node.removed += 1
                self.known.discard(node.id)
            elif isinstance(ev, Added):
                assert node.added == 0, f"a second Added: {ev}"
                assert node.parent_id == 0 or node.parent_id in self.known, \
                    f"Added before its parent: {ev}"
                older = [n for n in self.by_path[node.path] if n is not node]
                assert all(n.removed or not n.added for n in older), \
                    f"Added of a path made again before the old one's Removed: {ev}"
                node.added += 1
                node.added_at = self.batches
                self.known.add(node.id)
            else:
                assert node.id in self.known, f"a sample of a cgroup not Added or Removed: {ev}"
                assert node.id not in sampled, f"batch {self.batches}: sampled twice: {ev}"
                assert isinstance(ev.usage_usec, int) and isinstance(ev.seq, int), ev
                sampled.add(node.id)
                seqs.add(ev.seq)
                node.samples += 1
        if not self.exact:
            return
        missing = self.known - sampled
        assert not missing, (f"batch {self.batches}: {len(missing)} known cgroups without "
                             f"a sample, e.g. {self.nodes[next(iter(missing))]}")
        assert len(seqs) <= 1, f"batch {self.batches}: more than one cycle: {seqs}"
        for seq in seqs:
            assert seq is not None and seq > self.last_seq, (seq, self.last_seq)
            self.last_seq = seq

    def check_sampled_mostly(self) -> None:
        """Not exact (kernel mode): every cgroup there still sampled in at
        least half the batches since its Added, whatever the splits."""
        for node in self.nodes.values():
            if node.alive and node.added:
                since = self.batches - node.added_at + 1
                assert node.samples >= since // 2, (node, since)

    def settled(self) -> bool:
        """Every cgroup there is Added, and every one removed is Removed
        (unless it went before it was ever Added: then neither)."""
        return all(n.added == 1 if n.alive else n.removed == n.added
                   for n in self.nodes.values())


def populate(model: TreeModel, n: int) -> None:
    """The root and @n (>= 4) cgroups below it: fans of 100 (d<i> and 99
    children), and in the first a chain of two levels more."""
    rel = [f"d{i // 100}" if i % 100 == 0 else f"d{i // 100}/c{i % 100 - 1}"
           for i in range(n - 2)]
    rel += ["d0/c0/g0", "d0/c0/g0/g1"]
    model.mkdir(model.top)
    for r in sorted(rel, key=lambda r: r.count("/")):
        model.mkdir(model.top / r)


def churn(model: TreeModel, round_: int, size: int = 20) -> None:
    """Made, removed, and removed and made again under the same path."""
    base = model.top / f"new{round_}"
    model.mkdir(base)
    for i in range(size - 1):
        model.mkdir(base / f"n{i}")       # a parent and its children at once
    leaves = [n for n in model.leaves() if not n.path.name.startswith("n")]
    for node in leaves[:size]:
        model.rmdir(node.path)
    for node in leaves[size:size + size // 4]:
        model.rmdir(node.path)
        model.mkdir(node.path)


def read_until_settled(model: TreeModel, tree: pycgstream.Tree, limit: int = 50) -> int:
    for n in range(1, limit + 1):
        model.check(next(tree))
        if model.settled():
            return n
    pytest.fail(f"not every change reported within {limit} batches")


def remove_all(model: TreeModel, tree: pycgstream.Tree, limit: int = 200) -> None:
    """The whole subtree removed, the root last: Removed for every cgroup
    (the root's in the last batch), then the iteration ends."""
    model.cleanup()
    for _ in range(limit):
        try:
            batch = next(tree)
        except StopIteration:
            break
        model.check(batch)
    else:
        pytest.fail(f"the iteration did not end within {limit} batches after the root went")
    assert tree.removed
    assert all(n.removed == 1 for n in model.nodes.values() if n.added), \
        [n for n in model.nodes.values() if n.added and not n.removed][:3]
    root = model.by_path[model.top][-1]
    assert root.removed == 1
    with pytest.raises(pycgstream.CgroupRemovedError):
        tree.read()


def check_no_growth(model: TreeModel, tree: pycgstream.Tree, batches: int = 1000) -> None:
    """@batches batches with 10 cgroups removed and made again every 100:
    the same fds, and memory within 1 MiB, at the end as after the first
    hundred (measured on a host: not a page more)."""
    done = 0
    at: list[tuple[int, int]] = []
    # The object's wake eventfd is made at its first wait and kept until
    # close.  Iteration waits only when a read finds nothing, so on a host
    # slower than the cycles the first hundred batches may all be ready at
    # once and the first wait (one fd more) come later: wait once first.
    tree.wait(0)
    for round_ in range(batches // 100):
        for node in model.leaves()[:10]:
            model.rmdir(node.path)
            model.mkdir(node.path)
        done += read_until_settled(model, tree)
        while done < 100 * (round_ + 1):
            model.check(next(tree))
            done += 1
        if round_ in (0, batches // 100 - 1):
            at.append((open_fds(), rss_kib()))
    (fds0, rss0), (fds1, rss1) = at
    # A leaked fd stays however many batches follow; an fd only in flight
    # (a path being opened) does not: up to 20 more are read before it
    # counts as one.
    for _ in range(20):
        if fds1 == fds0:
            break
        model.check(next(tree))
        fds1 = open_fds()
    assert fds1 == fds0, f"fds after {done} batches: {sum(fds0.values())} -> {sum(fds1.values())}, " \
        f"new {sorted((fds1 - fds0).elements())[:5]}, gone {sorted((fds0 - fds1).elements())[:5]}"
    assert rss1 - rss0 < 1024, f"RSS grew {rss1 - rss0} KiB over {done - 100} batches"


def raise_fd_limit(needed: int) -> None:
    """Kernel and fallback trees read a file per cgroup, and libcgstream
    keeps them open within the limit less a quarter of it (its fd budget;
    beyond it they are opened at each cycle): the soft limit up to what
    keeps @needed open, or to the hard one, or a skip (as root in the VM,
    the hard one too)."""
    needed = needed * 4 // 3 + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard < needed and os.geteuid() == 0:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, needed))
            return
        except (ValueError, OSError):
            pass
    if hard < needed:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {needed}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def open_fds() -> collections.Counter[str]:
    """What this process's fds point at (paths, anon_inode:[...]), with
    how many fds point at each: fd numbers are reused, targets are not."""
    got: collections.Counter[str] = collections.Counter()
    for fd in os.listdir("/proc/self/fd"):
        try:
            got[os.readlink(f"/proc/self/fd/{fd}")] += 1
        except FileNotFoundError:
            pass    # the listing's own fd, closed by now
    return got


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def io_uring_fds() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "io_uring" in os.readlink(f"/proc/self/fd/{fd}"):
                n += 1
        except FileNotFoundError:
            pass
    return n


def model_fixture(top: Path, exact: bool) -> Iterator[TreeModel]:
    model = TreeModel(top, exact)
    try:
        yield model
    finally:
        model.cleanup()
