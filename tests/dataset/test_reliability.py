"""Interrupted, damaged and distributed builds end with the same bytes as a plain one."""

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCENE_SEED as SEED

from pipeline.dataset.build import BuildPlan, build, check_folder
from pipeline.dataset.manifest import MANIFEST
from pipeline.dataset.validate import validate
from pipeline.errors import RoomspaceError
from pipeline.files import folder_lock
from pipeline.text.configs import DEFAULT_CONFIGS
from pipeline.text.items import ROWS_PER_ROOM

ROOMS = 9
NAME = "roomspace-test"


def plan(rooms: int = ROOMS) -> BuildPlan:
    return BuildPlan.asked(NAME, SEED, rooms, DEFAULT_CONFIGS, shard_rooms=3)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / NAME
    build(plan(), scenes, out, workers=1, progress=False)
    return out


def cli_build(scenes: Path, out: Path, workers: int = 2, asked: tuple[str, ...] = ()) -> list[str]:
    """The CLI build of `plan()` or, `asked` (EVERY_KIND), of those options."""
    sized = asked or ("--rooms", str(ROOMS), "--shard-rooms", "3")
    return [sys.executable, "-m", "pipeline.cli", "build", *sized, "--seed", str(SEED), "--scenes", str(scenes),
            "--out", str(out), "--workers", str(workers), "--quiet"]


def rerun(scenes: Path, out: Path, asked: tuple[str, ...] = ()) -> None:
    """The CLI build of cli_build run again after a kill, in this process (the command's own entry point,
    without a fresh interpreter's start-up); the SIGTERM test reruns in a fresh process."""
    from pipeline.cli import main

    assert main(cli_build(scenes, out, asked=asked)[3:]) == 0


# Every kind of configuration, balanced too, in 3 shards of 2 rooms: their card has the vision kinds'
# pair-question lines and the agent kinds' framing tables, which a resumed build must write as a clean one does.
EVERY_BASE = "n5_m4_d144"
EVERY_KIND = ("--rooms", "6", "--shard-rooms", "2", "--configs", EVERY_BASE, "--balanced",
              *(option for kind in ("vision", "twins", "agents", "maps", "compositions", "shapes")
                for option in (f"--{kind}", EVERY_BASE)))


@pytest.fixture(scope="module")
def every_kind_reference(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("every-kind") / NAME
    clean = subprocess.run(cli_build(scenes, out, workers=1, asked=EVERY_KIND), capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    return out


# Runs the CLI build with a signal injected at one moment: when the `nth` file whose name ends with
# `suffix` is about to be renamed into place ("before", its temporary file written) or just was ("after").
INJECTED = """
import os, signal, sys
from pipeline import cli
suffix, nth, when, signame = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
real_replace, seen = os.replace, []

def replace(source, target):
    hit = str(target).endswith(suffix) and len(seen) + 1 == nth
    if str(target).endswith(suffix):
        seen.append(target)
    if hit and when == "before":
        os.kill(os.getpid(), getattr(signal, signame))
    real_replace(source, target)
    if hit and when == "after":
        children = open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()
        open(os.environ["CHILDREN_FILE"], "w").write(" ".join(children))
        os.kill(os.getpid(), getattr(signal, signame))

os.replace = replace
sys.exit(cli.main(sys.argv[5:]))
"""


def injected(scenes: Path, out: Path, suffix: str, nth: int, when: str, signame: str, children: Path,
             workers: int = 1, asked: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", INJECTED, suffix, str(nth), when, signame,
               *cli_build(scenes, out, workers, asked)[3:]]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CHILDREN_FILE": str(children)})


@pytest.mark.slow
@pytest.mark.parametrize("suffix, nth, when", [
    (MANIFEST, 1, "before"),  # the identity's temporary file: nothing else written yet
    (".parquet", 1, "before"),  # the first shard's temporary file
    (".parquet", 1, "after"),  # the first shard renamed, not yet in the manifest
    (MANIFEST, 2, "before"),  # the first shard's manifest entry being written
    (".parquet", 5, "after"),  # a later shard
    ("README.md", 1, "before"),  # finishing: the card
    (MANIFEST, 5, "before"),  # finishing: the manifest marked complete
], ids=["identity-temp", "shard-temp", "shard-rename", "manifest-temp", "later-shard", "card", "complete"])
def test_sigkill_at_any_moment_then_rerun_gives_the_same_bytes(scenes, reference, tmp_path, suffix, nth, when):
    out = tmp_path / NAME
    killed = injected(scenes, out, suffix, nth, when, "SIGKILL", tmp_path / "children")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    rerun(scenes, out)
    assert files(out) == files(reference)


@pytest.mark.slow
@pytest.mark.parametrize("suffix, shard, when", [
    (".parquet", 2, "after"),  # shards 0 and 1 in the manifest, read back by the rerun; shard 2 made by it
    ("README.md", 1, "before"),  # finishing: every shard read back by the rerun
    (MANIFEST, 5, "before"),  # the card written, the manifest not yet marked complete: the rerun writes the card again
], ids=["later-shard", "card", "complete"])
def test_a_resumed_build_of_every_kind_writes_the_same_bytes_card_included(scenes, every_kind_reference, tmp_path,
                                                                          suffix, shard, when):
    configs = len(json.loads((every_kind_reference / MANIFEST).read_text())["identity"]["configs"])
    nth = shard * configs + 1 if suffix == ".parquet" else shard  # the shard's first file
    out = tmp_path / NAME
    killed = injected(scenes, out, suffix, nth, when, "SIGKILL", tmp_path / "children", asked=EVERY_KIND)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    rerun(scenes, out, asked=EVERY_KIND)
    resumed, clean = files(out), files(every_kind_reference)
    assert resumed["README.md"].decode() == clean["README.md"].decode()
    assert resumed == clean


@pytest.mark.slow
def test_sigterm_stops_the_workers_says_what_was_kept_and_the_rerun_finishes(scenes, reference, tmp_path):
    out = tmp_path / NAME
    children = tmp_path / "children"
    stopped = injected(scenes, out, ".parquet", 3, "after", "SIGTERM", children, workers=2)  # shard 1's first file
    assert stopped.returncode == 143
    assert stopped.stderr.strip().splitlines() == [
        f"roomspace build: stopped by SIGTERM; 1 of 3 shards are kept in {out}; re-run the same command to resume"]
    workers = [int(pid) for pid in children.read_text().split()]
    assert len(workers) == 2  # the pool's processes, alive when the signal came
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # every one of them is gone
    rerun = subprocess.run(cli_build(scenes, out), capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert files(out) == files(reference)


def test_a_second_build_into_a_held_folder_is_refused_at_once(scenes, tmp_path):
    out = tmp_path / NAME
    out.mkdir()
    with folder_lock(out):
        with pytest.raises(RoomspaceError, match=f"being written by process {os.getpid()}"):
            build(plan(), scenes, out, workers=1, progress=False)
    assert not list(out.iterdir())  # the refused build wrote nothing


def test_a_complete_build_is_rerun_without_writing(reference):
    before = {path: path.stat().st_mtime_ns for path in reference.rglob("*")}
    report = build(plan(), reference.parent / "no-such-scenes", reference, workers=1, progress=False)
    assert report.rooms_built == 0 and sum(report.rows.values()) == 2 * ROOMS * ROWS_PER_ROOM
    assert {path: path.stat().st_mtime_ns for path in reference.rglob("*")} == before


def test_a_folder_of_temporary_files_only_is_a_fresh_start(scenes, reference, tmp_path):
    out = tmp_path / NAME
    out.mkdir()
    (out / f".{MANIFEST}.4242.tmp").write_text('{"ident')
    build(plan(), scenes, out, workers=1, progress=False)
    assert files(out) == files(reference)


def test_bad_paths_and_sizes_are_one_line_errors_and_leave_nothing(scenes, tmp_path, capsys):
    from pipeline.cli import main

    a_file = tmp_path / "a-file"
    a_file.write_text("")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for scenes_path in (a_file, loop):
        out = tmp_path / f"out-{scenes_path.name}"
        assert main(cli_build(scenes_path, out)[3:]) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"scene folder {scenes_path} is not a folder" in err
        assert not out.exists()
    assert main(["build", "--rooms", str(10 ** 12), "--out", str(tmp_path / "huge"), "--quiet"]) == 1
    assert "more than 100000000 rooms" in capsys.readouterr().err
    assert not (tmp_path / "huge").exists()
    assert main(["scenes", "--count", str(10 ** 12), "--out", str(tmp_path / "many"), "--quiet"]) == 1
    assert "more than 100000000 houses" in capsys.readouterr().err


def test_a_failed_build_leaves_no_folder_it_created(tmp_path):
    broken = tmp_path / "scenes"
    broken.mkdir()
    (broken / f"s{SEED}-000000.json").write_text("{")
    out = tmp_path / NAME
    with pytest.raises(RoomspaceError, match="corrupt scene file"):
        build(plan(rooms=1), broken, out, workers=1, progress=False)
    assert not out.exists()


def test_dask_cluster_writes_the_same_bytes(scenes, reference, tmp_path):
    from distributed import LocalCluster

    out = tmp_path / NAME
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        build(plan(), scenes, out, progress=False, scheduler=cluster.scheduler_address)
    assert files(out) == files(reference)


def test_unreachable_scheduler_is_a_clear_error(scenes, tmp_path, monkeypatch):
    import pipeline.parallel

    monkeypatch.setattr(pipeline.parallel, "DASK_CONNECT_SECONDS", 2)  # nothing listens there: no need to wait long
    with pytest.raises(RoomspaceError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        build(plan(), scenes, tmp_path / NAME, progress=False, scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / NAME).exists()


def test_a_malformed_scheduler_address_is_one_line(scenes, tmp_path, capsys):
    from pipeline.cli import main

    assert main([*cli_build(scenes, tmp_path / NAME)[3:], "--executor", "dask", "--scheduler", "garbage://x"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot reach the Dask scheduler at garbage://x" in err


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
    with pytest.raises(RoomspaceError, match=r"cannot write .*test-00001.parquet: No space left"):
        build(plan(), scenes, out, workers=1, progress=False)
    assert not list(out.rglob("*.tmp"))
    manifest = json.loads((out / MANIFEST).read_text())
    assert list(manifest["shards"]) == ["0"] and not manifest["complete"]
    monkeypatch.setattr(pipeline.dataset.rows.pq, "write_table", real_write)
    build(plan(), scenes, out, workers=1, progress=False)
    assert files(out) == files(reference)


def interrupted(scenes: Path, out: Path, monkeypatch, plan: BuildPlan) -> None:
    """`plan` built into `out` until its second shard's first file meets a full disk: shard 0 is kept."""
    import pipeline.dataset.rows

    real_write, calls = pipeline.dataset.rows.pq.write_table, []

    def full_after_two(table, target, **kwargs):
        calls.append(target)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real_write(table, target, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(pipeline.dataset.rows.pq, "write_table", full_after_two)
        with pytest.raises(RoomspaceError, match="No space left"):
            build(plan, scenes, out, workers=1, progress=False)


def test_a_renamed_or_copied_build_folder_is_resumed(scenes, reference, tmp_path, monkeypatch):
    first = tmp_path / "first-name"
    interrupted(scenes, first, monkeypatch, BuildPlan.asked(first.name, SEED, ROOMS, DEFAULT_CONFIGS, shard_rooms=3))
    copied = tmp_path / "copy" / NAME
    shutil.copytree(first, copied)
    renamed = first.rename(tmp_path / NAME)
    for out in (renamed, copied):
        report = build(plan(), scenes, out, workers=1, progress=False)
        assert report.rooms_built == ROOMS - 3  # shard 0 kept
        assert files(out) == files(reference)  # the card names the folder it finished in


def test_another_build_in_the_folder_is_refused_naming_the_field_that_differs(tmp_path):
    out = tmp_path / NAME
    out.mkdir()
    check_folder(out, plan())  # writes the identity, as a build does before its first shard
    others = [
        (BuildPlan.asked(NAME, SEED + 1, ROOMS, DEFAULT_CONFIGS, shard_rooms=3), f"its --seed is {SEED}, this command's {SEED + 1}"),
        (plan(rooms=ROOMS + 1), f"its --rooms is {ROOMS}, this command's {ROOMS + 1}"),
        (BuildPlan.asked(NAME, SEED, ROOMS, DEFAULT_CONFIGS, shard_rooms=4), "its --shard-rooms is 3, this command's 4"),
        (BuildPlan.asked(NAME, SEED, ROOMS, DEFAULT_CONFIGS, shard_rooms=3, train_rooms=2), "its --train-rooms is 0, this command's 2"),
        (BuildPlan.asked(NAME, SEED, ROOMS, DEFAULT_CONFIGS[1:], {"twin": DEFAULT_CONFIGS[1:]}, shard_rooms=3),
         f"its configurations lack twin_{DEFAULT_CONFIGS[1].name}, which this command asks for and have "
         f"{DEFAULT_CONFIGS[0].name}, which this command does not ask for"),
    ]
    for other, differs in others:
        with pytest.raises(RoomspaceError) as refused:
            check_folder(out, other)
        assert str(refused.value) == f"{out} holds a different build: {differs}; choose another --out or remove it"
    manifest = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({**manifest, "identity": {**manifest["identity"], "name": "old"}}))
    assert check_folder(out, plan())["identity"] == plan().identity()  # an older build's folder name is passed over


def test_validate_finds_damage_and_checks_nesting(scenes, reference, tmp_path):
    folder = tmp_path / "builds"
    large, small = folder / NAME, folder / "roomspace-small"
    shutil.copytree(reference, large)  # the build of plan(), named as it was built: damaged below
    build(BuildPlan.asked("roomspace-small", SEED, 5, DEFAULT_CONFIGS, shard_rooms=3),
          scenes, small, workers=1, progress=False)
    report = validate(large, scenes=scenes)
    assert report.rows == 2 * ROOMS * ROWS_PER_ROOM and report.nested == ["roomspace-small"]
    shard = next(large.glob("data/n5_m4_d81/*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(RoomspaceError, match="checksum"):
        validate(large, scenes=scenes)
    with pytest.raises(RoomspaceError, match="not a roomspace build"):
        validate(tmp_path)


def test_a_cluster_without_workers_is_an_error_not_a_hang(scenes, tmp_path, monkeypatch):
    from distributed import LocalCluster

    import pipeline.parallel

    monkeypatch.setattr(pipeline.parallel, "DASK_WORKERS_SECONDS", 1)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        with pytest.raises(RoomspaceError, match="no Dask worker joined the scheduler"):
            build(plan(), scenes, tmp_path / NAME, progress=False, scheduler=cluster.scheduler_address)
