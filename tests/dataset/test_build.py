"""The main job end to end on real sampled scenes: bytes, resumption, loading with `datasets`."""

import dataclasses
import json
import re
from pathlib import Path

import datasets
import jsonschema
import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED as SEED

from pipeline.dataset.build import BuildPlan, SpilledRoom, build, room_job
from pipeline.dataset.hub import push, upload_plan
from pipeline.dataset.manifest import MANIFEST, read_manifest, write_manifest
from pipeline.dataset.rows import FEATURES, ROW_SCHEMA, check_row, read_rows, to_row
from pipeline.dataset.validate import validate
from pipeline.errors import RoomspaceError
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.text.configs import DEFAULT_CONFIGS, Config, parse_configs
from pipeline.text.items import ROWS_PER_ROOM, room_items
from pipeline.typed_json import to_json

ROOMS = 6


def plan(rooms: int = ROOMS, shard_rooms: int = 100) -> BuildPlan:
    return BuildPlan.asked("roomspace-test", SEED, rooms, DEFAULT_CONFIGS, shard_rooms=shard_rooms)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one") / "roomspace-test"
    build(plan(), scenes, out, workers=1, progress=False)
    return out


def test_a_spilled_room_is_read_once_and_holds_no_file_open(scenes, tmp_path):
    """A shard reads its rooms' spilled rows for every configuration: a file left open per room would
    stop a build of large shards (--shard-rooms) at the system's limit of open files."""
    outputs = plan().outputs
    result = room_job(SEED, 0, scenes, outputs)
    expected = {output.name: result.table(output.name) for output in outputs}
    path = tmp_path / "room.tmp"
    opened = len(list(Path("/proc/self/fd").iterdir()))
    rooms = [SpilledRoom.of(room_job(SEED, 0, scenes, outputs).packed(path if k else None), path) for k in range(2)]
    read = [{name: room.table(name) for name in expected} for room in rooms]
    path.unlink()  # as a written shard's rooms are: what was read stays readable
    assert len(list(Path("/proc/self/fd").iterdir())) == opened
    assert all(tables[name].equals(expected[name]) for tables in read for name in expected)


def test_same_bytes_with_two_workers_and_again(built, scenes, tmp_path):
    twin = tmp_path / "roomspace-test"
    report = build(plan(), scenes, twin, workers=2, progress=False)
    assert report.rooms_built == ROOMS
    assert files(twin) == files(built)
    again = build(plan(), scenes, twin, workers=2, progress=False)
    assert again.rooms_built == 0 and files(twin) == files(built)


def test_every_configuration_loads_with_the_declared_features(built):
    for config in DEFAULT_CONFIGS:
        ds = datasets.load_dataset(str(built), config.name, split="test")
        assert ds.features == FEATURES
        assert len(ds) == ROOMS * ROWS_PER_ROOM
        assert set(ds["config"]) == {config.name}


def test_every_row_is_valid_and_keeps_the_witness(built):
    rows = read_rows(sorted(built.glob("data/*/*.parquet")))
    assert len(rows) == 2 * ROOMS * ROWS_PER_ROOM
    for row in rows:
        check_row(row)
        assert row["true_relation"] in row["answer_set"]


def test_parquet_schema_is_the_features_schema(built):
    for path in built.glob("data/*/*.parquet"):
        assert pq.read_schema(path).remove_metadata() == FEATURES.arrow_schema.remove_metadata()


def test_card_declares_each_configuration_and_its_statistics(built):
    card = (built / "README.md").read_text()
    header = card.split("---")[1]
    for config in DEFAULT_CONFIGS:
        assert f"config_name: {config.name}" in header
        assert f"path: data/{config.name}/*.parquet" in header
        assert f"### {config.name}" in card
    assert f"num_examples: {ROOMS * ROWS_PER_ROOM}" in header
    assert "IJCAI-24" in card and "Answer: **" in card
    manifest = json.loads((built / MANIFEST).read_text())
    assert manifest["complete"] is True


def test_smaller_build_is_a_prefix_of_a_larger_one(built, scenes, tmp_path):
    small = tmp_path / "roomspace-test"
    build(plan(rooms=4), scenes, small, workers=1, progress=False)
    for config in DEFAULT_CONFIGS:
        large = read_rows(sorted(built.glob(f"data/{config.name}/*.parquet")))
        prefix = read_rows(sorted(small.glob(f"data/{config.name}/*.parquet")))
        assert prefix == [row for row in large if row["room_index"] < 4]


def test_the_manifest_is_written_as_its_json_laid_out_whole(built, tmp_path):
    """write_manifest lays out each shard's entry once and reuses it while the manifest holds the same
    record: its text is still the whole manifest's indented JSON, with a new entry, a replaced one and none."""
    manifest = read_manifest(built)
    entry = next(iter(manifest["shards"].values()))

    def laid_out_whole() -> str:
        return json.dumps({**manifest, "shards": {key: to_json(e) for key, e in manifest["shards"].items()}},
                          indent=2, sort_keys=True) + "\n"

    for change in ({"10": entry}, {"2": dataclasses.replace(entry, rooms=(2, 3))}, None):
        manifest["shards"] = {} if change is None else {**manifest["shards"], **change}
        write_manifest(tmp_path, manifest)
        assert (tmp_path / MANIFEST).read_text(encoding="utf-8") == laid_out_whole()
    assert (built / MANIFEST).read_text(encoding="utf-8") == json.dumps(
        json.loads((built / MANIFEST).read_text(encoding="utf-8")), indent=2, sort_keys=True) + "\n"


def test_shards_are_resumed_and_a_damaged_shard_redone(scenes, tmp_path, monkeypatch):
    """The card of a resumed build reads the sizes of the files written before (those of the shards
    written now were taken as they were written: pipeline.dataset.build.write_shard), and declares
    what the first run did."""
    import pipeline.dataset.card
    out = tmp_path / "roomspace-test"
    build(plan(shard_rooms=4), scenes, out, workers=1, progress=False)
    reference = files(out)
    assert len(list(out.glob("data/n5_m4_d144/*.parquet"))) == 2
    damaged = out / "data/n5_m4_d144/test-00001.parquet"
    damaged.write_bytes(damaged.read_bytes()[:100])
    read, file_size = [], pipeline.dataset.card.file_size
    monkeypatch.setattr(pipeline.dataset.card, "file_size",
                        lambda path, config: read.append(path.relative_to(out).as_posix()) or file_size(path, config))
    report = build(plan(shard_rooms=4), scenes, out, workers=1, progress=False)
    assert report.rooms_built == 2
    assert files(out) == reference
    assert read == [f"data/{config.name}/test-00000.parquet" for config in DEFAULT_CONFIGS]


def test_a_different_build_or_foreign_folder_is_refused(built, scenes, tmp_path):
    before = files(built)
    with pytest.raises(RoomspaceError, match="different build"):
        build(plan(rooms=5), scenes, built, workers=1, progress=False)
    assert files(built) == before
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(RoomspaceError, match="not empty"):
        build(plan(), scenes, foreign, workers=1, progress=False)


def test_a_corrupt_scene_is_named_and_nothing_is_written(scenes, tmp_path):
    broken = tmp_path / "scenes"
    broken.mkdir()
    for k in range(2):
        (broken / scene_path(scenes, SEED, k).name).write_bytes(scene_path(scenes, SEED, k).read_bytes())
    scene_path(broken, SEED, 1).write_text('{"record": {')
    out = tmp_path / "roomspace-test"
    with pytest.raises(RoomspaceError, match=scene_path(broken, SEED, 1).name):
        build(plan(rooms=2), broken, out, workers=1, progress=False)
    assert not list(out.glob("data/*/*.parquet"))


def copied_scenes(scenes: Path, into: Path, rooms: int, change=lambda document: document) -> Path:
    """Scenes 0..rooms-1 copied into `into`, each document passed through `change` and written back as JSON."""
    into.mkdir()
    for k in range(rooms):
        document = change(json.loads(scene_path(scenes, SEED, k).read_text(encoding="utf-8")))
        (into / scene_path(scenes, SEED, k).name).write_text(json.dumps(document), encoding="utf-8")
    return into


def test_a_scene_edited_by_hand_is_refused_by_build_and_validate(scenes, tmp_path):
    """Issue 43: a hand-edited scene file that is still valid JSON (and a valid scene) built with no warning."""
    edited = copied_scenes(scenes, tmp_path / "edited", 2)
    document = json.loads(scene_path(edited, SEED, 1).read_text(encoding="utf-8"))
    document["record"]["objects"][0]["x"] += 0.25  # a sofa moved by hand
    scene_path(edited, SEED, 1).write_text(json.dumps(document), encoding="utf-8")
    expected = (f"{scene_path(edited, SEED, 1)}: edited since it was sampled (its content does not match the sha256 "
                f"it was written with); resample it with `roomspace scenes --count 2 --seed {SEED} --out {edited} "
                "--force`")
    with pytest.raises(RoomspaceError, match=re.escape(expected)):
        build(plan(rooms=2), edited, tmp_path / "roomspace-test", workers=1, progress=False)
    assert not list((tmp_path / "roomspace-test").glob("data/*/*.parquet"))
    out = tmp_path / "clean" / "roomspace-test"
    build(plan(rooms=2), copied_scenes(scenes, tmp_path / "clean-scenes", 2), out, workers=1, progress=False)
    with pytest.raises(RoomspaceError, match=re.escape(expected)):
        validate(out, scenes=edited)


def test_scene_files_without_a_checksum_are_read_and_build_the_same_bytes(scenes, tmp_path):
    """Scene files sampled before they carried their sha256 stay readable, unchecked, and build the same rows."""
    def without_checksum(document):
        assert "sha256" in document  # sampled now: every new file carries one
        return {key: value for key, value in document.items() if key != "sha256"}

    old = copied_scenes(scenes, tmp_path / "old", 2, without_checksum)
    new = copied_scenes(scenes, tmp_path / "new", 2)
    for folder in (old, new):
        build(plan(rooms=2), folder, tmp_path / folder.name / "roomspace-test", workers=1, progress=False)
    built = [files(tmp_path / name / "roomspace-test") for name in ("old", "new")]
    assert built[0] == built[1] and any(name.endswith(".parquet") for name in built[0])


def test_unknown_configuration_is_refused_before_building():
    with pytest.raises(RoomspaceError, match="n5_m9_d144|m"):
        parse_configs("n5_m4_d144,n5_m10_d144")


def test_rows_of_the_wrong_type_are_refused_and_real_rows_fit_the_exported_schema(built, scenes):
    item = room_items(load_scene(scene_path(scenes, SEED, 0)), Config(5, 4, 12))[0]
    for row in [to_row(item), *read_rows(sorted(built.glob("data/n5_m4_d81/*.parquet")))[:50]]:
        jsonschema.validate(row, ROW_SCHEMA)
    with pytest.raises(RoomspaceError, match="hops: expected int"):
        to_row(dataclasses.replace(item, hops="4"))
    wrong_cell = dataclasses.replace(item.objects[0], i=1.5)
    with pytest.raises(RoomspaceError, match="objects/0/i: expected int"):
        to_row(dataclasses.replace(item, objects=(wrong_cell, *item.objects[1:])))
    with pytest.raises(RoomspaceError, match="hops: expected int, got bool"):
        to_row(dataclasses.replace(item, hops=True))
    with pytest.raises(RoomspaceError, match="answer_set/1: expected str, got int"):
        to_row(dataclasses.replace(item, answer_set=(item.answer_set[0], 7)))
    corner = item.objects[1].footprint[1]  # tuples of numbers in a record in a tuple: Arrow converts them whole
    bent = dataclasses.replace(item.objects[1], footprint=(item.objects[1].footprint[0], (corner[0], "x")))
    with pytest.raises(RoomspaceError, match="objects/1/footprint/1/1: expected float, got str 'x'"):
        to_row(dataclasses.replace(item, objects=(item.objects[0], bent, *item.objects[2:])))
    with pytest.raises(RoomspaceError, match="candidate: expected str, got int"):
        to_row(dataclasses.replace(item, candidate=3))
    assert to_row(dataclasses.replace(item, candidate=None))["candidate"] is None
    assert to_row(dataclasses.replace(item, room_side=5))["room_side"] == 5  # an int is a float value


def test_push_sends_the_card_and_the_listed_shards_only(built, tmp_path, monkeypatch):
    manifest = json.loads((built / MANIFEST).read_text())
    listed = sorted(path for entry in manifest["shards"].values() for path in entry["files"])
    assert upload_plan(built) == sorted(["README.md", *listed])
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / MANIFEST).write_text(json.dumps({**manifest, "complete": False}))
    with pytest.raises(RoomspaceError, match="unfinished build"):
        upload_plan(unfinished)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RoomspaceError, match="nothing was sent"):
        push(built, "someone/roomspace-test", private=True)
