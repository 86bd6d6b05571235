"""Interrupted, damaged and distributed builds end with the same bytes as a plain one."""

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SCENE_SEED as SEED

from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import MANIFEST
from pipeline.dataset.validate import validate
from pipeline.errors import RoomspaceError
from pipeline.text.configs import DEFAULT_CONFIGS
from pipeline.text.items import ROWS_PER_ROOM

ROOMS = 9
NAME = "roomspace-test"


def plan(rooms: int = ROOMS) -> BuildPlan:
    return BuildPlan(name=NAME, seed=SEED, rooms=rooms, configs=DEFAULT_CONFIGS, shard_rooms=3)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / NAME
    build(plan(), scenes, out, workers=1, progress=False)
    return out


def cli_build(scenes: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", "build", "--rooms", str(ROOMS), "--seed", str(SEED),
            "--shard-rooms", "3", "--scenes", str(scenes), "--out", str(out), "--workers", "2", "--quiet"]


@pytest.mark.slow
def test_sigkill_part_way_then_rerun_gives_the_same_output(reference, tmp_path):
    scenes = tmp_path / "scenes"  # sampled by the killed build itself
    out = tmp_path / NAME
    process = subprocess.Popen(cli_build(scenes, out), start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        manifest = out / MANIFEST
        if manifest.exists() and json.loads(manifest.read_text())["shards"]:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the build ended before it could be interrupted"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    interrupted = json.loads((out / MANIFEST).read_text())
    assert not interrupted["complete"] and 0 < len(interrupted["shards"]) < 3

    rerun = subprocess.run(cli_build(scenes, out), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert files(out) == files(reference)
    assert validate(out).rows == 2 * ROOMS * ROWS_PER_ROOM


def test_dask_cluster_writes_the_same_bytes(scenes, reference, tmp_path):
    from distributed import LocalCluster

    out = tmp_path / NAME
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        build(plan(), scenes, out, progress=False, scheduler=cluster.scheduler_address)
    assert files(out) == files(reference)


def test_unreachable_scheduler_is_a_clear_error(scenes, tmp_path):
    with pytest.raises(RoomspaceError, match="Dask scheduler"):
        build(plan(), scenes, tmp_path / NAME, progress=False, scheduler="tcp://127.0.0.1:9")


def test_full_disk_leaves_no_shard_and_the_rerun_finishes(scenes, reference, tmp_path, monkeypatch):
    import pipeline.dataset.rows

    calls = []

    def full_after_two(table, target, **kwargs):
        calls.append(target)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real_write(table, target, **kwargs)

    real_write = pipeline.dataset.rows.pq.write_table
    monkeypatch.setattr(pipeline.dataset.rows.pq, "write_table", full_after_two)
    out = tmp_path / NAME
    with pytest.raises(OSError, match="No space left"):
        build(plan(), scenes, out, workers=1, progress=False)
    assert not list(out.rglob("*.tmp"))
    manifest = json.loads((out / MANIFEST).read_text())
    assert list(manifest["shards"]) == ["0"] and not manifest["complete"]
    monkeypatch.setattr(pipeline.dataset.rows.pq, "write_table", real_write)
    build(plan(), scenes, out, workers=1, progress=False)
    assert files(out) == files(reference)


def test_validate_finds_damage_and_checks_nesting(scenes, reference, tmp_path):
    folder = tmp_path / "builds"
    large, small = folder / NAME, folder / "roomspace-small"
    build(plan(), scenes, large, workers=1, progress=False)
    build(BuildPlan(name="roomspace-small", seed=SEED, rooms=5, configs=DEFAULT_CONFIGS, shard_rooms=3),
          scenes, small, workers=1, progress=False)
    report = validate(large)
    assert report.rows == 2 * ROOMS * ROWS_PER_ROOM and report.nested == ["roomspace-small"]
    shard = next(large.glob("data/n5_m4_d81/*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(RoomspaceError, match="checksum"):
        validate(large)
    with pytest.raises(RoomspaceError, match="not a roomspace build"):
        validate(tmp_path)
