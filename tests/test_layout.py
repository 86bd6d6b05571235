"""The package's shape: imports point down the stages, evaluation stays light, schemas are fresh, the wheel works."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.text.kinds import KINDS

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True)


def test_imports_point_down_the_stages():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_wrong_way_import_breaks_the_check(tmp_path):
    shutil.copytree(REPO / "pipeline", tmp_path / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    records = tmp_path / "pipeline" / "scene" / "records.py"
    records.write_text(records.read_text() + "\nimport pipeline.dataset.build  # noqa: E402\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "pipeline.scene.records -> pipeline.dataset.build" in result.stdout


def test_evaluation_imports_without_procthor_shapely_datasets_or_the_renderer():
    modules = ["answers", "baselines", "model_runner", "plots", "prompts", "rows", "score"]
    code = (f"import sys\nfor m in {modules}: __import__('pipeline.evaluate.' + m)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('procthor', 'ai2thor', 'shapely')"
            " or m in ('datasets', 'PIL', 'matplotlib')"
            " or m.startswith(('pipeline.render', 'pipeline.scene.procthor', 'pipeline.dataset.build'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def schema_folder(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()}


def test_schema_files_are_the_ones_roomspace_schemas_writes_now(tmp_path, capsys):
    """Every file of schemas/ as `roomspace schemas` writes it from the records, none stale or missing:
    the scene file's and a row's of every configuration kind. A kind no longer declared loses its file."""
    stale = tmp_path / "rows" / "gone.schema.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    assert f"removed {stale}" in capsys.readouterr().out
    written = schema_folder(tmp_path)
    assert set(written) == {"scene.schema.json", *(f"rows/{kind}.schema.json" for kind in KINDS)}
    assert schema_folder(REPO / "schemas") == written, "schemas/ is stale: run `roomspace schemas`"


@pytest.mark.slow
def test_the_light_install_evaluates_without_the_generator(wheel_envs, scenes, tmp_path):
    """`pip install roomspace` without extras: read a build, make prompts, score; no ProcTHOR, Shapely or Dask."""
    from conftest import SCENE_SEED

    from pipeline.dataset.build import BuildPlan, build
    from pipeline.text.configs import parse_configs

    out = tmp_path / "light-build"
    build(BuildPlan.asked(out.name, SCENE_SEED, 2, parse_configs("n3_m2_d81")), scenes, out, workers=1, progress=False)
    env_dir = wheel_envs / "light"  # the wheel without extras, at the pinned versions
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    absent = ("procthor", "ai2thor", "moviepy", "shapely", "dask", "datasets", "jsonschema", "pandas")
    check = f"import importlib.util; print([m for m in {absent!r} if importlib.util.find_spec(m)])"
    found = subprocess.run([str(env_dir / "bin" / "python"), "-c", check], env=env, cwd=tmp_path, check=True,
                           capture_output=True, text=True)
    assert found.stdout.strip() == "[]"
    roomspace = str(env_dir / "bin" / "roomspace")
    scored = subprocess.run([roomspace, "score", str(out), "--baseline", "checker", "--quiet"], env=env, cwd=tmp_path,
                            check=True, capture_output=True, text=True)
    assert "| checker | 68 | 0 | 0 | 0 | 100.0 [" in scored.stdout
    prompts = subprocess.run([roomspace, "prompts", str(out)], env=env, cwd=tmp_path, check=True, capture_output=True,
                             text=True)
    assert len(prompts.stdout.splitlines()) == 68


@pytest.mark.slow
def test_the_wheel_installs_and_builds_in_a_fresh_environment(wheel_envs, tmp_path):
    """As a new user (or a Dask worker) would: the wheel alone, the pinned dependencies, no checkout."""
    env_dir = wheel_envs / "whole"
    work = tmp_path / "elsewhere"  # not the checkout: nothing may be read from beside the package
    work.mkdir()
    roomspace = str(env_dir / "bin" / "roomspace")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([roomspace, "scenes", "--count", "2", "--out", "scenes", "--quiet", "--workers", "1"],
                   cwd=work, env=env, check=True)
    built = subprocess.run([roomspace, "build", "--rooms", "2", "--scenes", "scenes", "--out", "out/two",
                            "--quiet", "--workers", "1"], cwd=work, env=env, check=True, capture_output=True, text=True)
    assert "out/two: " in built.stdout and " rows (" in built.stdout
    assert subprocess.run([roomspace, "validate", "out/two"], cwd=work, env=env, check=True).returncode == 0
    # inspect finds the task by the name the README gives, through the installed entry point
    asked = subprocess.run([str(env_dir / "bin" / "python"), "-c", INSPECT_BY_NAME], cwd=work, env=env, check=True,
                           capture_output=True, text=True)
    assert asked.stdout.split() == ["success", "roomspace/roomspace", "1"]


INSPECT_BY_NAME = """
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
answer = ModelOutput.from_content("mockllm/model", "Answer: Yes")
answer.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (no network)
(log,) = eval("roomspace/roomspace", task_args={"source": "out/two"}, limit=1, display="none", log_dir="logs",
              model=get_model("mockllm/model", custom_outputs=[answer]))
print(log.status, log.eval.task, len(log.samples))
"""
