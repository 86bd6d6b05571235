"""Scenes: determinism, geometry, the scene files and bad input (docs/semantics.md section 1).

Sampling costs ~2-3 s a room, so a few rooms are sampled once per session (SEED 45, houses
0-3: one of each room type) and shared.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline import cli
from pipeline.errors import RoomspaceError
from pipeline.scene import scene_folder
from pipeline.scene.footprints import walls_touched
from pipeline.scene.procthor import ai2thor, sampling
from pipeline.scene.procthor.offline_thor import OfflineController
from pipeline.scene.procthor.sampling import sample_house, sample_scene
from pipeline.scene.scene_file import (dumps, house_sha256, load_house, load_scene, scene_document, scene_path,
                                      scene_text)
from pipeline.scene.scene_folder import sample_scenes

SEED = SCENE_SEED
COUNT = 4
TOL = 1e-6


@pytest.fixture(scope="session")
def sampled(scenes) -> Path:
    """The shared rooms (conftest.py); the first COUNT are the four room types."""
    return scenes


@pytest.fixture(scope="session")
def records(sampled):
    return [load_scene(scene_path(sampled, SEED, k)) for k in range(COUNT)]


@pytest.fixture(scope="session")
def houses(sampled):
    return [load_house(scene_path(sampled, SEED, k)) for k in range(COUNT)]


def run_cli(args, capsys) -> tuple[int, str]:
    try:
        code = cli.main(["scenes", *args])
    except SystemExit as exit_:  # argparse
        code = exit_.code
    return code, capsys.readouterr().err


def one_line_error(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert lines, "no error message"
    assert "Traceback" not in err
    assert "error" in lines[-1]
    return lines[-1]


# --------------------------------------------------------------------------- determinism


def test_files_are_canonical_and_valid(sampled, records):
    names = sorted(p.name for p in sampled.iterdir())
    assert names == [f"s{SEED}-{k:06d}.json" for k in range(SCENE_COUNT)]  # no temporary files left
    for k, scene in enumerate(records):
        path = scene_path(sampled, SEED, k)
        text = path.read_text()
        assert text == dumps(json.loads(text))
        assert (scene.seed, scene.index, scene.room_id) == (SEED, k, f"s{SEED}-{k:06d}")
        assert scene.source == "procthor-offline"
        assert dict(scene.versions).keys() >= {"procthor", "ai2thor", "roomspace"}
    assert sorted(s.room_type for s in records) == ["Bathroom", "Bedroom", "Kitchen", "LivingRoom"]


# Fresh processes with PYTHONHASHSEED unset and set to 123, two at once: test_determinism.py's
# test_same_bytes_in_any_order_and_in_fresh_processes (one sampling run there serves both checks).


def test_same_bytes_in_another_order_in_process(sampled):
    for k in (3, 1):
        house, scene = sample_scene(SEED, k)
        assert dumps(scene_document(house, scene)).encode() == scene_path(sampled, SEED, k).read_bytes()
        sampled_house = sample_house(SEED, k)
        assert sampled_house.text == dumps(house) and (sampled_house.house, sampled_house.scene) == (house, scene)


def test_a_scene_files_text_is_its_document_dumped(sampled, records, houses):
    """scene_text makes one canonical text and adds the checksum to it: the document's text, as written."""
    for k, (scene, house) in enumerate(zip(records, houses)):
        text = scene_text(house, scene)
        assert text == dumps(scene_document(house, scene)) == scene_path(sampled, SEED, k).read_text()
        assert scene_text(house, scene, dumps(house)) == text


def test_canonical_values_of_every_kind():
    """Plain floats, strings, dicts and lists (a house's) and the numpy scalars, tuples, mappings and subclasses
    that take the general checks: rounded floats with no -0.0, plain ints and bools, str keys; non-finite
    numbers and other objects refused."""
    from collections import OrderedDict

    import numpy as np

    from pipeline.scene.scene_file import canonical

    class Name(str):
        pass

    value = {"a": [0.1234567891, -0.0, -1e-9, 2.5, np.float64(1 / 3), np.float32(0.5), True, np.bool_(False), 3,
                   np.int64(-4), (1.0000004, "x"), None, Name("n")],
             "b": OrderedDict([(7, {"c": -0.00000049})]), "d": {}, "e": []}
    assert canonical(value) == {"a": [0.123457, 0.0, 0.0, 2.5, 0.333333, 0.5, True, False, 3, -4, [1.0, "x"], None, "n"],
                                "b": {"7": {"c": 0.0}}, "d": {}, "e": []}
    assert [type(v) for v in canonical(value)["a"]] == [float] * 6 + [bool, bool, int, int, list, type(None), Name]
    assert str(canonical(-0.0)) == "0.0" and str(canonical(np.float64(-0.0))) == "0.0"
    for bad in (float("nan"), float("inf"), np.float64("-inf"), {"k": [float("nan")]}, {1, 2}, b"x"):
        with pytest.raises(RoomspaceError):
            canonical(bad)


def test_different_seeds_give_different_houses(sampled, records):
    house, scene = sample_scene(SEED + 1, 0)
    assert dumps(scene_document(house, scene)) != scene_path(sampled, SEED, 0).read_text()
    assert sampling.room_seed(SEED, 0) != sampling.room_seed(SEED + 1, 0)
    assert len({sampling.room_seed(SEED, k) for k in range(1000)}) == 1000


def test_sampling_leaves_global_rngs_alone():
    import random

    import numpy as np

    random.seed(7)
    np.random.seed(7)
    expected = (random.random(), np.random.random())
    random.seed(7)
    np.random.seed(7)
    sampling.room_type_for(1, 2)  # cheap; the expensive path is covered by the byte tests
    with sampling._procthor_for_roomspace([], offline=True, stock_procthor=False):
        random.random()
        np.random.random()
    assert (random.random(), np.random.random()) == expected


# --------------------------------------------------------------------------- geometry


def test_room_is_a_square_at_the_origin(records, houses):
    for scene, house in zip(records, houses):
        assert 4.7 <= scene.side <= 6.7
        points = {(p["x"], p["z"]) for p in house["rooms"][0]["floorPolygon"]}
        w = scene.side
        assert points == {(0.0, 0.0), (w, 0.0), (0.0, w), (w, w)}
        assert len(house["rooms"]) == 1 and house["rooms"][0]["roomType"] == scene.room_type


def test_one_door_centred_on_the_south_wall(records, houses):
    for scene, house in zip(records, houses):
        door, *windows = scene.openings
        assert door.kind == "door" and door.wall == "south"
        assert door.start[1] == door.end[1] == 0.0
        assert abs((door.start[0] + door.end[0]) / 2 - scene.side / 2) < 2e-6
        assert 0.5 < door.end[0] - door.start[0] < 2.5
        assert all(w.kind == "window" and w.wall != "south" for w in windows)
        # A house-JSON door entry as ProcTHOR writes outdoor doors, on walls that exist.
        (entry,) = house["doors"]
        wall_ids = {w["id"] for w in house["walls"]}
        assert entry["wall0"] in wall_ids and entry["wall1"] in wall_ids
        assert entry["wall1"].startswith("wall|exterior|") and entry["room0"] == entry["room1"] == "room|2"
        assert set(entry) >= {"id", "assetId", "boundingBox", "assetOffset", "openable", "openness"}
        assert entry["assetId"].startswith("Doorway")


def test_openings_are_where_procthor_keeps_wall_objects_away(records):
    """ProcTHOR hangs paintings and TVs clear of doors and windows: our opening spans must agree."""
    along = {"south": 0, "north": 0, "east": 1, "west": 1}
    checked = 0
    for scene in records:
        for obj in scene.objects:
            if not obj.wall_hung:
                continue
            for opening in scene.openings:
                if opening.wall not in obj.walls:
                    continue
                axis = along[opening.wall]
                lo, hi = opening.start[axis], opening.end[axis]
                coords = [p[axis] for p in obj.footprint]
                overlap = min(hi, max(coords)) - max(lo, min(coords))
                assert overlap < 0.02, (scene.room_id, obj, opening)
                checked += 1
    assert checked > 0


def test_footprints_inside_the_room_and_walls_touched(records):
    for scene in records:
        assert scene.objects
        for obj in scene.objects:
            for x, z in obj.footprint:
                assert -0.01 <= x <= scene.side + 0.01 and -0.01 <= z <= scene.side + 0.01, obj
            assert obj.walls == walls_touched(obj.footprint, scene.side)
            if obj.wall_hung:
                assert obj.walls, obj  # hung on a wall, so touching it


def test_quarter_turned_objects_have_swapped_extents(records):
    seen = 0
    for scene in records:
        for obj in scene.objects:
            xs = [x for x, _ in obj.footprint]
            zs = [z for _, z in obj.footprint]
            if obj.yaw in (90.0, 270.0):
                seen += 1
                assert abs((max(xs) - min(xs)) - obj.size[2]) < 1e-5 and abs((max(zs) - min(zs)) - obj.size[0]) < 1e-5
            elif obj.yaw in (0.0, 180.0):
                assert abs((max(xs) - min(xs)) - obj.size[0]) < 1e-5 and abs((max(zs) - min(zs)) - obj.size[2]) < 1e-5
    assert seen > 0


def test_records_hold_top_level_objects_in_procthor_order(records, houses):
    for scene, house in zip(records, houses):
        assert [o.id for o in scene.objects] == [o["id"] for o in house["objects"]]
        child_ids = {c["id"] for o in house["objects"] for c in o.get("children") or []}
        assert not child_ids & {o.id for o in scene.objects}


def test_prominent_objects_and_resampling(records):
    for scene in records:
        assert 0 <= scene.attempt < sampling.MAX_ATTEMPTS
        assert all(o.prominent == (o in scene.prominent) for o in scene.objects)
    assert sum(len(s.prominent) >= sampling.MIN_PROMINENT for s in records) >= COUNT - 1


def test_resampling_keeps_room_type_and_records_the_best_attempt(monkeypatch):
    monkeypatch.setattr(sampling, "MAX_ATTEMPTS", 2)
    house, scene = sample_scene(SEED, 1, min_prominent=1000)  # never reached: both attempts run
    counts = []
    for attempt in (0, 1):
        data, hung = sampling._generate(sampling.room_seed(SEED, 1, attempt), scene.room_type, "offline", False)
        record = sampling.record(json.loads(dumps(data)), hung, SEED, 1, attempt, "procthor-offline", sampling.versions())
        counts.append(len(record.prominent))
    assert scene.room_type == sampling.room_type_for(SEED, 1)
    assert scene.attempt == counts.index(max(counts))
    assert len(scene.prominent) == max(counts)


# --------------------------------------------------------------------------- re-runs and bad input


def test_rerun_skips_valid_scenes(sampled, monkeypatch):
    before = {p: p.stat().st_mtime_ns for p in sampled.iterdir()}

    def resample(*args, **kwargs):
        raise AssertionError("a valid scene was sampled again")

    monkeypatch.setattr(scene_folder, "sample_house", resample)
    sample_scenes(count=COUNT, seed=SEED, out=sampled, progress=False)
    assert {p: p.stat().st_mtime_ns for p in sampled.iterdir()} == before


def test_a_killed_runs_temporary_scene_file_is_removed(sampled, tmp_path):
    out = tmp_path / "scenes"
    out.mkdir()
    shutil.copy(scene_path(sampled, SEED, 0), out)
    stale, live = out / f".s{SEED}-000001.json.999999999.tmp", out / f".s{SEED}-000002.json.{os.getpid()}.tmp"
    for path in (stale, live):
        path.write_text("{")
        os.utime(path, (0, 0))  # written long ago
    assert sample_scenes(count=1, seed=SEED, out=out, progress=False) == 0  # scene 0 is there: nothing sampled
    assert not stale.exists() and live.exists()  # a live process's temporary file is left alone


def test_ensure_scene_reads_what_is_there(sampled, records, tmp_path):
    assert scene_folder.ensure_scene(sampled, SEED, 2) == records[2]
    out = tmp_path / "fresh"
    scene = scene_folder.ensure_scene(out, SEED, 0)  # sampled and written
    assert scene == records[0]
    assert scene_path(out, SEED, 0).read_bytes() == scene_path(sampled, SEED, 0).read_bytes()
    scene_path(out, SEED, 0).write_text("{")
    with pytest.raises(RoomspaceError, match="--force"):
        scene_folder.ensure_scene(out, SEED, 0)


@pytest.mark.parametrize("count", ["0", "-3", "two"])
def test_bad_count(count, tmp_path, capsys):
    code, err = run_cli(["--count", count, "--out", str(tmp_path / "out")], capsys)
    assert code != 0
    assert "--count" in one_line_error(err)
    assert not (tmp_path / "out").exists()


def test_unwritable_output_folder(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, err = run_cli(["--count", "1", "--out", str(blocker / "scenes")], capsys)
    assert code == 1
    assert "cannot write to output folder" in one_line_error(err)
    with pytest.raises(RoomspaceError, match="not a folder"):
        sample_scenes(count=1, seed=0, out=blocker, progress=False)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(None, id="truncated"),
        pytest.param(b'{"hello": "world"}\n', id="foreign-json"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00", id="binary"),
    ],
)
def test_broken_scene_file_is_named_and_kept(content, sampled, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    target = scene_path(out, SEED, 0)
    good = scene_path(sampled, SEED, 0).read_bytes()
    target.write_bytes(good[: len(good) // 2] if content is None else content)
    broken = target.read_bytes()
    code, err = run_cli(["--count", "2", "--seed", str(SEED), "--out", str(out), "--quiet"], capsys)
    assert code == 1
    line = one_line_error(err)
    assert str(target) in line and "--force" in line
    assert target.read_bytes() == broken  # left alone
    assert sorted(p.name for p in out.iterdir()) == [target.name]  # nothing else sampled or half-written
    with pytest.raises(RoomspaceError, match="--force"):
        load_scene(target)


def test_force_resamples_a_broken_file(sampled, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    target = scene_path(out, SEED, 0)
    target.write_text('{"record": {}, "house": {}}\n')
    code, err = run_cli(["--count", "1", "--seed", str(SEED), "--out", str(out), "--force", "--quiet"], capsys)
    assert code == 0, err
    assert target.read_bytes() == scene_path(sampled, SEED, 0).read_bytes()


def test_a_broken_scene_file_names_the_scenes_command_that_resamples_it(sampled, tmp_path, capsys):
    """build, render and validate read scene files too, and have no --force that resamples them (render's
    redraws images): whoever reads it, the message names `roomspace scenes` with the file's count, seed and
    folder, and that command mends it. JSON's own message, here "Unterminated string starting at", is
    quoted whole, not followed by a second "at"."""
    out = tmp_path / "out"
    out.mkdir()
    target = scene_path(out, SEED, 1)
    target.write_text('{"record": {"room_type": "Kitch')
    command = f"roomspace scenes --count 2 --seed {SEED} --out {shlex.quote(str(out))} --force"

    def check(message: str) -> None:
        assert str(target) in message and f"`{command}`" in message, message
        assert "Unterminated string starting at: line 1" in message and "at at" not in message, message
        assert "re-run" not in message, message

    for read in (load_scene, load_house, house_sha256, lambda path: scene_folder.ensure_scene(out, SEED, 1)):
        with pytest.raises(RoomspaceError) as error:
            read(target)
        check(str(error.value))
    code = cli.main(["render", "--scenes", str(out), "--seed", str(SEED), "--out", str(tmp_path / "renders"), "--quiet"])
    assert code == 1
    check(one_line_error(capsys.readouterr().err))
    code, err = run_cli([*shlex.split(command)[2:], "--quiet"], capsys)
    assert code == 0, err
    assert target.read_bytes() == scene_path(sampled, SEED, 1).read_bytes()


def test_a_scene_of_another_source_names_the_command_for_the_one_wanted(sampled, tmp_path):
    shutil.copy(scene_path(sampled, SEED, 0), tmp_path)
    target = scene_path(tmp_path, SEED, 0)
    with pytest.raises(RoomspaceError, match=re.escape(
            f"was sampled from source 'procthor-offline', not 'procthor-10k'; resample it with "
            f"`roomspace scenes --count 1 --seed {SEED} --out {shlex.quote(str(tmp_path))} --source procthor-10k --force`")):
        load_scene(target, "procthor-10k")
    assert load_scene(target, "procthor-offline") == load_scene(target)


def test_a_canonical_edit_keeping_the_checksum_is_refused(sampled, tmp_path):
    """A file as written is checked on its text (its checksum's own canonical text, not made again); an edit
    written back canonically, the old checksum kept, fails that and then the check on its content."""
    shutil.copy(scene_path(sampled, SEED, 0), tmp_path)
    target = scene_path(tmp_path, SEED, 0)
    assert load_scene(target) == load_scene(scene_path(sampled, SEED, 0))
    document = json.loads(target.read_text(encoding="utf-8"))
    document["record"]["objects"][0]["x"] += 0.25
    target.write_text(dumps(document), encoding="utf-8")
    assert target.read_text(encoding="utf-8").endswith(f',"sha256":"{document["sha256"]}"}}\n')
    with pytest.raises(RoomspaceError, match="edited since it was sampled"):
        load_scene(target)


def test_scene_file_under_another_name_is_foreign(sampled, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(scene_path(sampled, SEED, 1), scene_path(out, SEED, 0))
    with pytest.raises(RoomspaceError, match="not the one its name says"):
        sample_scenes(count=1, seed=SEED, out=out, progress=False)


@pytest.mark.parametrize("option", [["--controller", "unity"], ["--source", "procthor-100k"]])
def test_unknown_controller_or_source_on_the_command_line(option, tmp_path, capsys):
    code, err = run_cli(["--count", "1", "--out", str(tmp_path / "out"), *option], capsys)
    assert code != 0
    assert "invalid choice" in one_line_error(err)
    assert not (tmp_path / "out").exists()


def test_unknown_controller_or_source_in_the_api(tmp_path):
    with pytest.raises(RoomspaceError, match="unknown controller"):
        sample_scenes(count=1, out=tmp_path / "a", controller="unity")
    with pytest.raises(RoomspaceError, match="unknown source"):
        sample_scenes(count=1, out=tmp_path / "b", source="procthor-100k")
    with pytest.raises(RoomspaceError, match="unknown controller"):
        sample_scene(0, 0, controller="unity")
    assert not list(tmp_path.iterdir())


def test_ai2thor_controller_fails_at_once_without_a_build(tmp_path, capsys, monkeypatch):
    import requests

    def offline(*args, **kwargs):
        raise requests.ConnectionError("no network")

    def unity(*args, **kwargs):
        raise AssertionError("the Unity controller was started")

    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no local build there
    monkeypatch.setattr(requests, "head", offline)
    monkeypatch.setattr("ai2thor.controller.Controller.__init__", unity)
    code, err = run_cli(["--count", "2", "--out", str(tmp_path / "out"), "--controller", "ai2thor"], capsys)
    assert code == 1
    line = one_line_error(err)
    assert "Unity build" in line and ai2thor.AI2THOR_COMMIT_ID[:12] in line
    assert not (tmp_path / "out").exists()


def test_ai2thor_controller_fails_at_once_for_real(tmp_path, capsys, monkeypatch):
    """The real check here, where there is no build and no network: bounded probes, one line."""
    import requests

    build = Path.home() / ".ai2thor" / "releases"
    if build.exists() and any(build.iterdir()):
        pytest.skip("an AI2-THOR build is installed here")
    probes = []
    real_head = requests.head

    def head(*args, **kwargs):
        probes.append(kwargs.get("timeout"))
        return real_head(*args, **kwargs)

    monkeypatch.setattr(requests, "head", head)
    try:
        ai2thor.check_ai2thor_build()
    except RoomspaceError as error:
        assert "Unity build" in str(error) and "\n" not in str(error)
    else:
        pytest.skip("the AI2-THOR build server is reachable from here")
    assert probes and all(timeout == ai2thor.AI2THOR_PROBE_TIMEOUT for timeout in probes)


def test_procthor_10k_needs_prior(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "prior", None)  # import prior -> ImportError
    code, err = run_cli(["--count", "1", "--out", str(tmp_path / "out"), "--source", "procthor-10k"], capsys)
    assert code == 1
    assert "prior" in one_line_error(err)
    assert not (tmp_path / "out").exists()


def test_procthor_10k_through_a_stand_in_prior(houses, tmp_path, monkeypatch):
    import types

    two_rooms = {**houses[0], "rooms": houses[0]["rooms"] * 2}
    fake = types.SimpleNamespace(load_dataset=lambda name: {"train": [json.dumps(houses[0]), two_rooms], "val": [houses[1]], "test": []})
    monkeypatch.setitem(sys.modules, "prior", fake)
    assert sample_scenes(count=2, seed=SEED, out=tmp_path, source="procthor-10k", progress=False) == 2
    got = [load_scene(scene_path(tmp_path, SEED, k)) for k in range(2)]
    assert {s.source for s in got} == {"procthor-10k"}
    assert sorted(s.room_type for s in got) == sorted(h["rooms"][0]["roomType"] for h in houses[:2])
    with pytest.raises(RoomspaceError, match="only 2 square single-room houses"):
        sample_scenes(count=3, seed=SEED, out=tmp_path, source="procthor-10k", progress=False)

    def offline(name):
        raise ConnectionError("no network")

    monkeypatch.setitem(sys.modules, "prior", types.SimpleNamespace(load_dataset=offline))
    with pytest.raises(RoomspaceError, match="needs network access"):
        sample_scenes(count=1, seed=SEED, out=tmp_path / "other", source="procthor-10k", progress=False)


def test_offline_controller_refuses_physics():
    controller = OfflineController()
    assert controller.step(action="GetInSceneAssetGeometry", objectId="x").metadata["actionReturn"] == []
    assert controller.step(action="SetRandomSeed", seed=1)
    with pytest.raises(RoomspaceError, match="CreateHouse"):
        controller.step(action="CreateHouse", house={})
    with pytest.raises(RoomspaceError, match="GetReachablePositions"):
        controller.step(dict(action="GetReachablePositions"))
