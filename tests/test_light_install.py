"""`pip install .` without extras: a command that needs an extra says in one line which one, never a traceback.

Each command runs in a subprocess whose Python cannot import the build extra's modules (nor find their
distributions' metadata): a sitecustomize on PYTHONPATH, so that the helper processes it starts cannot either.
"""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pipeline.cli import EXTRAS, extra_of

ROOT = Path(__file__).resolve().parents[1]
BUILD_EXTRA = ["procthor", "ai2thor", "moviepy", "networkx", "pandas", "shapely", "jsonschema", "datasets",
               "dask", "distributed", "sklearn"]

SITECUSTOMIZE = '''
import importlib.abc, importlib.metadata, os, sys

BLOCKED = set(os.environ["ROOMSPACE_TEST_UNIMPORTABLE"].split(","))


class Unimportable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        if context.name in BLOCKED:
            raise importlib.metadata.PackageNotFoundError(context.name)
        return iter(())


sys.meta_path.insert(0, Unimportable())
'''


def run_light(argv: list[str], cwd: Path, shim: Path, blocked: list[str] = BUILD_EXTRA) -> subprocess.CompletedProcess:
    """`roomspace ARGV` in a Python that cannot import `blocked` (shim: a folder to write sitecustomize.py into)."""
    (shim / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)]),
           "ROOMSPACE_TEST_UNIMPORTABLE": ",".join(blocked)}
    return subprocess.run([sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())", *argv],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [
    ["build", "--rooms", "2", "--out", "out/tiny", "--scenes", "scenes", "--quiet", "--workers", "1"],
    ["validate", "out/tiny", "--scenes", "scenes", "--quiet"],
    ["schemas", "--out", "schemas"],
    ["render", "--scenes", "scenes", "--rooms", "1", "--quiet"],
    ["scenes", "--count", "1", "--out", "scenes", "--quiet", "--workers", "1"],
    ["audit", "out/tiny"],
], ids=lambda argv: argv[0])
def test_a_command_of_the_light_install_names_the_extra_it_needs(argv, tmp_path, built_tiny):
    shim = tmp_path / "shim"
    shim.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tiny").symlink_to(built_tiny)
    done = run_light(argv, tmp_path, shim)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"roomspace {argv[0]}: error: ") and "pip install 'roomspace[build]'" in lines[0], lines


@pytest.fixture(scope="module")
def built_tiny(scenes, tmp_path_factory) -> Path:
    """A two-room build, for the commands that read one (validate, audit)."""
    from conftest import SCENE_SEED
    from pipeline.dataset.build import BuildPlan, build
    from pipeline.text.configs import parse_configs

    out = tmp_path_factory.mktemp("light") / "tiny"
    plan = BuildPlan.asked(out.name, SCENE_SEED, 2, parse_configs("n5_m4_d144"), {})
    build(plan, scenes_dir=scenes, out=out, workers=1, progress=False)
    return out


def test_the_command_line_knows_every_distribution_of_every_extra():
    """EXTRAS, which turns a missing module into the extra to install, lists pyproject's extras as they are."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for extra, distributions in EXTRAS.items():
        assert set(distributions) == {re.match(r"[A-Za-z0-9_.-]+", r).group().lower() for r in extras[extra]}, extra
    assert extra_of("datasets") == extra_of("distributed") == extra_of("sklearn") == "build"
    assert extra_of("inspect_ai") == "harness" and extra_of("numpy") is None
