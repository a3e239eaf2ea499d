"""pycgstream.Tree on the patched kernel (root, in the VM): subtree mode
(cpu.stat.stream.subtree, one read per flush) and kernel mode (a stream
per cgroup) over 1,000 and 10,000 cgroups, checked batch by batch
(treecheck.py) while cgroups are made, removed and made again; 1,000
cycles without growth of fds or memory; a fallback tree with io_uring
disabled by the kernel; the CLI's --recursive lines against the C
command's."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

import pycgstream
from pycgstream import Added, Sample, cli
from conftest import CHECKOUT, Cgroups
from treecheck import (TreeModel, check_no_growth, churn, fd_count, io_uring_fds,
                       model_fixture, populate, raise_fd_limit, read_until_settled,
                       remove_all)
from vmfixtures import interval, patched_kernel, time_limit  # noqa: F401 (fixtures)

IO_URING_SYSCTL = Path("/proc/sys/kernel/io_uring_disabled")


@pytest.fixture
def subtree_file(mount: Path) -> None:
    if not (mount / "cpu.stat.stream.subtree").exists():
        pytest.skip("no cpu.stat.stream.subtree on this kernel")


def make_model(cgroups: Cgroups, exact: bool) -> Iterator[TreeModel]:
    yield from model_fixture(cgroups.mount / f"{cgroups.prefix}-tree", exact)


@pytest.fixture
def exact_model(cgroups: Cgroups) -> Iterator[TreeModel]:
    yield from make_model(cgroups, exact=True)


@pytest.fixture
def loose_model(cgroups: Cgroups) -> Iterator[TreeModel]:
    """Kernel mode reads each cgroup's stream after the tick: a flush
    landing meanwhile splits a cycle over two batches (treecheck.h says
    the same of the C API)."""
    yield from make_model(cgroups, exact=False)


def check_tree(model: TreeModel, tree: pycgstream.Tree, n: int) -> None:
    """First batch: every cgroup Added and sampled; then steady batches,
    two rounds of churn, and the whole subtree removed."""
    first = next(tree)
    model.check(first)
    if model.exact:
        assert sum(isinstance(ev, Added) for ev in first) == n + 1
        assert sum(isinstance(ev, Sample) for ev in first) == n + 1
    else:
        read_until_settled(model, tree)     # a split first cycle
    for batch in itertools.islice(tree, 3):
        model.check(batch)
    for round_ in range(2):
        churn(model, round_)
        read_until_settled(model, tree)
    for batch in itertools.islice(tree, 2):
        model.check(batch)
    if not model.exact:
        model.check_sampled_mostly()
    again = [nodes for nodes in model.by_path.values() if len(nodes) > 1]
    assert len(again) == 10
    for old, new in again:
        assert (old.added, old.removed, new.added, new.removed) == (1, 1, 1, 0)
    remove_all(model, tree)


@pytest.mark.time_limit(900)
@pytest.mark.parametrize("n", [1000, 10000])
def test_subtree_mode(interval: int, subtree_file: None, exact_model: TreeModel,
                      n: int) -> None:
    populate(exact_model, n)
    fds = fd_count()
    with pycgstream.Tree(exact_model.top, mode="subtree") as tree:
        assert tree.mode == "subtree" and len(tree) == n + 1
        assert fd_count() - fds < 10, "subtree mode holds no fd per cgroup"
        check_tree(exact_model, tree, n)


@pytest.mark.time_limit(900)
def test_auto_mode_is_subtree(interval: int, subtree_file: None, cgroup: Path) -> None:
    with pycgstream.Tree(cgroup) as tree:
        assert tree.mode == "subtree"
        batch = next(tree)
        assert [type(ev) for ev in batch] == [Added, Sample]


@pytest.mark.time_limit(900)
# per-cgroup streams at 10,000 took over ten minutes in libcgstream's own VM
# test under TCG; 3,000 as there (subtree mode is the one at 10,000)
@pytest.mark.parametrize("n", [1000, 3000])
def test_kernel_mode(interval: int, loose_model: TreeModel, n: int) -> None:
    raise_fd_limit(n + 1000)
    populate(loose_model, n)
    with pycgstream.Tree(loose_model.top, mode="kernel") as tree:
        assert tree.mode == "kernel" and len(tree) == n + 1
        check_tree(loose_model, tree, n)


@pytest.mark.time_limit(900)
def test_subtree_no_growth_over_1000_cycles(patched_kernel: None, subtree_file: None,
                                            exact_model: TreeModel) -> None:
    """1,000 flushes 10 ms apart (the kernel's minimum), read as they come
    (a slow guest misses some, never takes one twice): no growth
    (treecheck.check_no_growth)."""
    populate(exact_model, 1000)
    old = pycgstream.get_interval()
    pycgstream.set_interval(10)
    try:
        with pycgstream.Tree(exact_model.top, mode="subtree") as tree:
            check_no_growth(exact_model, tree)
    finally:
        pycgstream.set_interval(old)


@pytest.fixture
def io_uring_disabled() -> Iterator[None]:
    """kernel.io_uring_disabled=2 for the test (io_uring_setup() fails
    with EPERM for everyone), the old value back after."""
    if not IO_URING_SYSCTL.exists():
        pytest.skip(f"no {IO_URING_SYSCTL}")
    old = IO_URING_SYSCTL.read_text()
    IO_URING_SYSCTL.write_text("2")
    try:
        yield
    finally:
        IO_URING_SYSCTL.write_text(old)


@pytest.mark.time_limit(900)
def test_fallback_mode_with_io_uring_disabled(patched_kernel: None, io_uring_disabled: None,
                                              exact_model: TreeModel) -> None:
    n = 1000
    raise_fd_limit(n + 1000)
    populate(exact_model, n)
    with pycgstream.Tree(exact_model.top, mode="fallback", fallback_interval_ms=200) as tree:
        assert io_uring_fds() == 0
        check_tree(exact_model, tree, n)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(args))
    return status, out.getvalue(), err.getvalue()


def test_cli_recursive_in_subtree_mode(interval: int, subtree_file: None,
                                       cgroups: Cgroups) -> None:
    """pycgstream watch --recursive --json in subtree mode: the added
    events, then the samples with cgroup_id and parent_id, key for key
    what the C command prints."""
    top = cgroups.make()
    child = cgroups.make(parent=top)
    cgroups.burn(child)
    status, out, err = run_cli("watch", "--recursive", "--json", "--count", "3", "--mode",
                               "subtree", str(top))
    assert status == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    assert [(x["event"], x["cgroup"]) for x in lines[:2]] == [("added", str(top)),
                                                              ("added", str(child))]
    samples = lines[2:]
    assert len(samples) == 6 and all(x["mode"] == "subtree" for x in samples)
    ids = {str(top): (top.stat().st_ino, 0), str(child): (child.stat().st_ino, top.stat().st_ino)}
    for x in lines:
        assert (x["cgroup_id"], x["parent_id"]) == ids[x["cgroup"]]
    assert samples[-1]["cpu_percent"] is not None
    c_command = CHECKOUT / "libcgstream" / "build" / "cgstream"
    if c_command.exists():
        c = subprocess.run([str(c_command), "watch", "--recursive", "--json", "--count", "2",
                            "--mode", "subtree", str(top)], text=True, capture_output=True,
                           timeout=120)
        assert c.returncode == 0, c.stderr
        c_lines = [json.loads(x) for x in c.stdout.splitlines()]
        assert [list(x) for x in c_lines] == [list(x) for x in lines[:len(c_lines)]]
        assert len(c_lines) == 6
