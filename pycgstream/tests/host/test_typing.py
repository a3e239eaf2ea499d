"""The package is typed (py.typed): mypy --strict passes on it, and on code
that uses it the way the README shows, with the types a user expects (a
``with``/``async with`` target is the object itself, not Any)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import PACKAGE_DIR

api = pytest.importorskip("mypy.api", reason="mypy is not installed (make deps installs it)")

USE = '''
import asyncio
from typing import Optional, assert_type

import pycgstream
from pycgstream import Added, Event, Failed, Removed, Sample


def sync() -> None:
    with pycgstream.Stream("a") as stream:
        assert_type(stream, pycgstream.Stream)
        for sample in stream:
            assert_type(sample, Sample)
            assert_type(sample.cgroup_id, Optional[int])
        assert_type(stream.read(), Optional[Sample])
    with pycgstream.Group(["a"]) as group:
        assert_type(group, pycgstream.Group)
        for batch in group:
            assert_type(batch, list[Event])
    with pycgstream.Tree("a", mode="subtree") as tree:
        assert_type(tree, pycgstream.Tree)
        for batch in tree:
            for event in batch:
                if isinstance(event, Added):
                    assert_type(event.parent_id, int)
                elif isinstance(event, (Removed, Failed)):
                    assert_type(event.cgroup, str)
        assert_type(tree.fileno(), int)
        assert_type(tree.mode, str)


async def not_sync() -> None:
    async with pycgstream.Tree("a") as tree:
        assert_type(tree, pycgstream.Tree)
        async for batch in tree:
            assert_type(batch, list[Event])
    async with pycgstream.Stream("a") as stream:
        assert_type(stream, pycgstream.Stream)
        async for sample in stream:
            assert_type(sample, Sample)
'''


def test_mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.version_info < (3, 11):
        pytest.skip("typing.assert_type is 3.11")
    use = tmp_path / "use.py"
    use.write_text(USE)
    monkeypatch.setenv("MYPYPATH", str(PACKAGE_DIR / "src"))
    out, err, status = api.run(["--strict", "--no-incremental", "--cache-dir", os.devnull,
                                "--config-file", os.devnull,
                                str(PACKAGE_DIR / "src" / "pycgstream"), str(use)])
    assert status == 0, out + err
