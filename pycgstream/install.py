"""Install pycgstream for the Python running this script (pycgstream's
``make install`` runs it with the system's python3).

Debian 12's python3 is "externally managed" (PEP 668): a plain ``pip
install`` refuses, and ``--break-system-packages`` is not the way.  pip's
``--prefix`` on Debian adds another ``/local`` (its posix_local scheme), so
neither is used: pip builds and installs the package into a staging
directory (``--target``, no network, no build isolation: Debian's
python3-pip, -setuptools and -wheel do it), and this script moves the
package, its .dist-info and the ``pycgstream`` script to where python3
looks for $PREFIX's packages (/usr/local/lib/python3.X/dist-packages for
/usr/local), under $DESTDIR.  The package records LIBDIR (_install.py),
where libcgstream's ``make install`` puts libcgstream.so.1, so it finds
the library without ldconfig or LD_LIBRARY_PATH.

``--uninstall`` removes what an install put there: the package (with any
``__pycache__`` Python wrote in it since), every ``pycgstream-*.dist-info``
and the ``pycgstream`` command; the directories they were in stay (they
are Python's and the system's).

usage: python3 install.py [--uninstall] --prefix P --libdir L --bindir B [--destdir D]
"""

from __future__ import annotations

import argparse
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def site_dir(prefix: str) -> tuple[str, bool]:
    """Where this Python looks for packages installed under @prefix, and
    whether it looks there at all (else: the prefix scheme's directory,
    which then needs PYTHONPATH)."""
    prefix = os.path.normpath(prefix)
    for entry in site.getsitepackages():
        if entry.startswith(prefix + "/lib/"):
            return entry, True
    scheme = sysconfig.get_paths("posix_prefix", vars={"base": prefix, "platbase": prefix})
    return scheme["purelib"], False


def staged(libdir: str, stage: Path) -> Path:
    """pip's install of a copy of the package (with _install.py) into
    stage/site."""
    source = stage / "source"
    shutil.copytree(HERE, source, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__", "install.py", "Makefile"))
    (source / "src" / "pycgstream" / "_install.py").write_text(
        '"""Written by make install: where libcgstream.so.1 was installed."""\n\n'
        f"LIBDIR = {libdir!r}\n")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
               PIP_NO_INPUT="1")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
           "--no-build-isolation", "--no-compile", "--target", str(stage / "site"), str(source)]
    if subprocess.run(cmd, env=env).returncode != 0:
        sys.exit(f"install.py: {' '.join(cmd)} failed (Debian: apt-get install python3-pip)")
    return stage / "site"


def fix_record(dist_info: Path, sitedir: str, bindir: str) -> None:
    """The RECORD names the script where it is now, and drops
    direct_url.json (it would name the staging directory)."""
    (dist_info / "direct_url.json").unlink(missing_ok=True)
    script = os.path.relpath(os.path.join(bindir, "pycgstream"), sitedir)
    lines = []
    for line in (dist_info / "RECORD").read_text().splitlines():
        path, _, rest = line.partition(",")
        if path.endswith("direct_url.json"):
            continue
        if Path(path).parts[-2:] == ("bin", "pycgstream"):    # pip: "../../bin/..."
            line = f"{script},{rest}"
        lines.append(line)
    (dist_info / "RECORD").write_text("\n".join(lines) + "\n")


def uninstall(dest: Path, bindir: Path) -> None:
    """Remove the package, its .dist-info and the command from @dest and
    @bindir (as install put them, under DESTDIR)."""
    gone = []
    if (dest / "pycgstream").is_dir():
        shutil.rmtree(dest / "pycgstream")
        gone.append(str(dest / "pycgstream"))
    for info in dest.glob("pycgstream-*.dist-info"):
        shutil.rmtree(info)
        gone.append(str(info))
    if (bindir / "pycgstream").exists():
        (bindir / "pycgstream").unlink()
        gone.append(str(bindir / "pycgstream"))
    print("pycgstream uninstalled: " + (", ".join(gone) if gone else "it was not installed"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--uninstall", action="store_true")
    p.add_argument("--prefix", required=True)
    p.add_argument("--libdir", required=True)
    p.add_argument("--bindir", required=True)
    p.add_argument("--destdir", default="")
    args = p.parse_args()
    sitedir, on_path = site_dir(args.prefix)
    dest = Path(args.destdir + sitedir)
    bindir = Path(args.destdir + args.bindir)
    if args.uninstall:
        uninstall(dest, bindir)
        return
    with tempfile.TemporaryDirectory(prefix="pycgstream-install.") as tmp:
        built = staged(args.libdir, Path(tmp))
        dist_infos = list(built.glob("pycgstream-*.dist-info"))
        if len(dist_infos) != 1 or not (built / "bin" / "pycgstream").exists():
            sys.exit(f"install.py: unexpected pip output in {built}: {os.listdir(built)}")
        fix_record(dist_infos[0], sitedir, args.bindir)
        dest.mkdir(parents=True, exist_ok=True)
        bindir.mkdir(parents=True, exist_ok=True)
        # an earlier install (of another version: another .dist-info) goes
        shutil.rmtree(dest / "pycgstream", ignore_errors=True)
        for old in dest.glob("pycgstream-*.dist-info"):
            shutil.rmtree(old)
        shutil.copytree(built / "pycgstream", dest / "pycgstream")
        shutil.copytree(dist_infos[0], dest / dist_infos[0].name)
        shutil.copy(built / "bin" / "pycgstream", bindir / "pycgstream")
        (bindir / "pycgstream").chmod(0o755)
    print(f"pycgstream installed in {sitedir} for {sys.executable}")
    if not on_path:
        print(f"note: {sys.executable} does not look in {sitedir}: add it to PYTHONPATH")


if __name__ == "__main__":
    main()
