"""The package's wheel and two fresh environments holding it, for tests/test_layout.py's install tests:
a background job (tests/background.py; installing the lock writes 1.6 GB, a minute and a half here).

    python tests/wheel_envs.py FOLDER

FOLDER/wheels holds the wheel, built from a copy of the sources in FOLDER/source: setuptools writes build/
beside the sources it builds, and a build/lib left there goes into later wheels (a module since deleted
included), so the checkout's build/ must be neither made nor touched; FOLDER/light holds the wheel without
extras at the lock's versions, FOLDER/whole the wheel and the whole lock.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build_folder(root: Path) -> dict[str, int] | None:
    """Every file under root/build with its modification time; None without the folder."""
    folder = root / "build"
    if not folder.exists():
        return None
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*")}


def pip_install(env_dir: Path, *args: str) -> None:
    # By this interpreter's pip, the same version as a fresh environment's own (both come with Python), with
    # --python: the environment is made without pip, whose own install was 3.5 s of CPU each.
    # Byte-compiled here, in the background, though it is a third of pip's CPU time (1.6 GB of the lock's
    # packages): with --no-compile, the tests' commands compiled the modules they import as they ran.
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install", "--quiet",
                    "--disable-pip-version-check", *args], check=True)


def main(folder: Path) -> int | str:
    source, wheels = folder / "source", folder / "wheels"
    before = build_folder(REPO)
    for package in ("pipeline", "roomspace"):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(wheels), str(source)], check=True,
                   stdout=subprocess.DEVNULL)
    if build_folder(source) is None:
        return "setuptools built the wheel elsewhere than in the copy of the sources"
    if build_folder(REPO) != before:
        return "building the wheel wrote build/ in the checkout"
    (wheel,) = wheels.glob("roomspace-*.whl")
    lock = str(REPO / "requirements.lock")
    for name, requirements in (("light", ["-c", lock]), ("whole", ["-r", lock])):
        venv.create(folder / name)
        pip_install(folder / name, str(wheel), *requirements)
    # numba compiles the checker's kernels on first import and caches them in the installed package: here,
    # in the background, for the environment whose test builds (the light one's commands solve nothing)
    subprocess.run([str(folder / "whole" / "bin" / "python"), "-c", "import pipeline.spatial.propagation"],
                   cwd=folder, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
