"""pip builds a pure-Python wheel (no compiler) that carries py.typed and
works from an installed location."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path


from conftest import PACKAGE_DIR


def test_wheel_is_pure_typed_and_importable(tmp_path: Path, library: object) -> None:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    # build from a copy: setuptools writes build/ and *.egg-info next to
    # the sources, and the checkout is read-only in the VM
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__"))
    # the build backend comes from PyPI through pip's isolated build
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(tmp_path / "dist"), str(source)],
                           env=dict(env, CC="/bin/false"), capture_output=True, text=True,
                           timeout=600)
    assert build.returncode == 0, build.stderr
    wheels = list((tmp_path / "dist").glob("pycgstream-*.whl"))
    assert len(wheels) == 1
    assert wheels[0].name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "pycgstream/py.typed" in names
    assert not [n for n in names if n.endswith((".so", ".c"))]
    assert not [n for n in names if n.startswith("tests/")]

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                    "--target", str(target), str(wheels[0])], env=env, check=True,
                   timeout=300)
    r = subprocess.run([sys.executable, "-c",
                        "import pycgstream, sys; print(pycgstream.__file__); "
                        "print(pycgstream.parse('usage_usec 7\\n').usage_usec)"],
                       env=dict(env, PYTHONPATH=str(target)), capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(target / "pycgstream" / "__init__.py"), "7"]
    script = target / "bin" / "pycgstream"
    assert script.exists()
