"""`validate` re-derives every room's rows from its scene and checks the folder's structure; `push`
refuses a folder that fails the structural checks before it looks for a token. Each tampering case
edits a copy of one small build (helpers in tamper.py) and names what validate must report."""

import re
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from tamper import (add_unlisted_shard, copy_build, damage_shard, edit_card_count, edit_identity_seed,
                    edit_manifest_json, find_row, only, remove_shard_entry, replace_shard, rewrite_rows)

import pipeline.dataset.hub
from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.hub import push
from pipeline.dataset.manifest import read_manifest, shard_path
from pipeline.dataset.validate import SAMPLE_ROOMS, sample_rooms, validate
from pipeline.errors import RoomspaceError
from pipeline.scene.scene_file import scene_path
from pipeline.spatial.relations import DIRECTIONS, relation_words
from pipeline.text.configs import parse_configs

ROOMS = 4
BASE = "n3_m2_d81"
SHARD = shard_path(BASE, 1)  # rooms 2 and 3
VISION_SHARD = shard_path(f"vision_{BASE}", 1)


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    configs = parse_configs(BASE)
    plan = BuildPlan.asked("roomspace-v", SCENE_SEED, ROOMS, configs, {"vision": configs, "twin": configs}, shard_rooms=2)
    out = tmp_path_factory.mktemp("validate") / plan.name
    build(plan, scenes, out, workers=1, progress=False)
    return out


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def some_scenes(scenes: Path, into: Path, rooms: list[int]) -> Path:
    """A scene folder holding only `rooms` of the session's scenes."""
    into.mkdir()
    for k in rooms:
        scene_path(into, SCENE_SEED, k).write_bytes(scene_path(scenes, SCENE_SEED, k).read_bytes())
    return into


def mismatch(row_id: str, field: str, stored, recomputed) -> str:
    return re.escape(f"row {row_id}: {field} is {stored!r}, recomputed {recomputed!r}")


def fr_row(out: Path, wanted=lambda row: True) -> dict:
    return find_row(out, SHARD, lambda r: r["question_type"] == "FR" and r["setting"] != "rcc8" and wanted(r))


# Each case tampers with a copy and returns the pattern validate's error must match.

def changed_fr_answer(out: Path) -> str:
    row = fr_row(out)
    other = next(option for option in row["options"] if option != row["answer"])
    rewrite_rows(out, SHARD, only(row["id"], answer=other))
    return mismatch(row["id"], "answer", other, row["answer"])


def widened_answer_set(out: Path) -> str:
    row = fr_row(out, lambda r: r["answer_set_size"] < len(DIRECTIONS))
    wider = [code for code in DIRECTIONS if code in row["answer_set"] or code == next(
        c for c in DIRECTIONS if c not in row["answer_set"])]
    rewrite_rows(out, SHARD, only(row["id"], answer_set=wider, answer_set_size=len(wider)))
    return mismatch(row["id"], "answer_set", wider, row["answer_set"])


def answer_rewritten_consistently(out: Path) -> str:
    row = fr_row(out)
    code = next(c for c in DIRECTIONS if c != row["true_relation"])
    answer = relation_words(code, row["view"], "label")
    rewrite_rows(out, SHARD, only(row["id"], answer=answer, answer_set=[code], answer_set_size=1, true_relation=code))
    return mismatch(row["id"], "answer", answer, row["answer"])


def edited_story(out: Path) -> str:
    row = fr_row(out)
    rewrite_rows(out, SHARD, only(row["id"], story=row["story"] + " The room is tidy."))
    return re.escape(f"row {row['id']}: story is ") + ".*The room is tidy.*, recomputed "


def swapped_image(out: Path) -> str:
    def stored(index: int):  # a question of that room stored with its top-down image
        return lambda r: r["room_index"] == index and r["image_name"] == "top_down" and r["image"] is not None

    row, other = find_row(out, VISION_SHARD, stored(2)), find_row(out, VISION_SHARD, stored(3))
    rewrite_rows(out, VISION_SHARD, only(row["id"], image=other["image"]))
    return re.escape(f"row {row['id']}: image is {{'bytes': <{len(other['image']['bytes'])} bytes, sha256 ")


def shard_replaced_by_another(out: Path) -> str:
    replace_shard(out, BASE, source=0, target=1)
    return re.escape(f"{out / SHARD}: row id s{SCENE_SEED}-000000-{BASE}-") + ".* appears twice in " + BASE


def shard_entry_removed(out: Path) -> str:
    remove_shard_entry(out, 1)
    return re.escape("manifest.json: shard 1 (rooms 2..3) is not listed")


def identity_seed_edited(out: Path) -> str:
    edit_identity_seed(out, SCENE_SEED + 1)
    return rf"row \S+ has seed {SCENE_SEED}, the identity in manifest.json says {SCENE_SEED + 1}"


def extra_unlisted_shard(out: Path) -> str:
    extra = add_unlisted_shard(out, BASE)
    return re.escape(f"{extra}: not listed in {out / 'manifest.json'}")


def card_count_edited(out: Path) -> str:
    rows = read_manifest(out)["shards"]["0"].files[shard_path(f"twin_{BASE}", 0)].rows * 2
    edited = edit_card_count(out, f"twin_{BASE}", +1)
    return re.escape(f"README.md: twin_{BASE} has num_examples {edited} in its test split in the card, {rows} rows in the manifest")


def checksum_mismatch(out: Path) -> str:
    damage_shard(out, SHARD)
    return re.escape(f"{out / SHARD}: checksum differs from the manifest")


# A damaged manifest: each is one line naming the shard and what is wrong with its entry.

def row_count_as_text(out: Path) -> str:
    edit_manifest_json(out, lambda m: m["shards"]["1"]["files"][SHARD].update(rows="34"))
    return re.escape(f"manifest.json: shard 1's entry is damaged (files/{SHARD}/rows: expected int, got str '34')")


def listing_without_checksum(out: Path) -> str:
    edit_manifest_json(out, lambda m: m["shards"]["1"]["files"][SHARD].pop("sha256"))
    return re.escape(f"manifest.json: shard 1's entry is damaged (files/{SHARD}: Listed's field 'sha256' is missing)")


def statistics_of_another_shape(out: Path) -> str:
    edit_manifest_json(out, lambda m: m["shards"]["0"]["stats"][BASE].update(hops=[3]))
    return re.escape(f"manifest.json: shard 0's entry is damaged (stats/{BASE}/hops: expected an object, got list [3])")


def entry_with_unknown_field(out: Path) -> str:
    edit_manifest_json(out, lambda m: m["shards"]["0"].update(note="copied"))
    return re.escape("manifest.json: shard 0's entry is damaged ((top): ShardEntry has no field 'note')")


def rooms_moved(out: Path) -> str:
    edit_manifest_json(out, lambda m: m["shards"]["1"].update(rooms=[2, 5]))
    return re.escape("manifest.json: shard 1 covers rooms [2, 5], the identity implies [2, 4]")


def shards_not_a_mapping(out: Path) -> str:
    edit_manifest_json(out, lambda m: m.update(shards=[]))
    return re.escape("manifest.json: its shards are not a mapping of shard keys to entries")


CASES = [changed_fr_answer, widened_answer_set, answer_rewritten_consistently, edited_story, swapped_image,
         shard_replaced_by_another, shard_entry_removed, identity_seed_edited, extra_unlisted_shard,
         card_count_edited, checksum_mismatch, row_count_as_text, listing_without_checksum,
         statistics_of_another_shape, entry_with_unknown_field, rooms_moved, shards_not_a_mapping]


def test_the_untouched_build_validates_and_nothing_is_written(built, scenes):
    before, scene_files = files(built), files(scenes)
    report = validate(built, scenes=scenes)
    assert (report.shards, report.files, report.rooms, report.rederived) == (2, 6, ROOMS, ROOMS)
    manifest = read_manifest(built)
    # questions: a file row each, for every configuration (images too: pipeline.dataset.layout)
    assert report.rows == sum(part.rows for entry in manifest["shards"].values() for part in entry.stats.values())
    assert report.rows == sum(f.rows for entry in manifest["shards"].values() for f in entry.files.values())
    assert report.nested == []
    assert files(built) == before and files(scenes) == scene_files


@pytest.mark.parametrize("tamper", CASES, ids=lambda case: case.__name__)
def test_validate_names_each_tampering(built, scenes, tmp_path, tamper):
    out = copy_build(built, tmp_path)
    expected = tamper(out)
    with pytest.raises(RoomspaceError, match=expected) as refused:
        validate(out, scenes=scenes)
    assert "\n" not in str(refused.value)


def test_a_missing_scene_is_sampled_elsewhere_and_a_corrupt_one_named(built, scenes, tmp_path):
    partial = some_scenes(scenes, tmp_path / "partial", [0, 1, 3])
    before = files(partial)
    assert validate(built, scenes=partial).rederived == ROOMS
    assert files(partial) == before
    broken = some_scenes(scenes, tmp_path / "broken", list(range(ROOMS)))
    scene_path(broken, SCENE_SEED, 2).write_text('{"record": {')
    with pytest.raises(RoomspaceError, match=re.escape(str(scene_path(broken, SCENE_SEED, 2)))):
        validate(built, scenes=broken)


def test_the_sample_of_rooms_is_seeded_and_bounded():
    assert sample_rooms(range(ROOMS), None, 0) == list(range(ROOMS))
    drawn = sample_rooms(range(5000), None, 7)
    assert len(drawn) == SAMPLE_ROOMS and drawn == sorted(set(drawn)) and drawn == sample_rooms(range(5000), None, 7)
    assert sample_rooms(range(5000), None, 8) != drawn
    assert len(sample_rooms(range(ROOMS), 2, 1)) == 2 and sample_rooms(range(ROOMS), 9, 1) == list(range(ROOMS))


def test_the_command_prints_one_summary_line_and_a_progress_bar(built, scenes, capsys):
    assert main(["validate", str(built), "--scenes", str(scenes), "--sample", "1", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1
    assert f"{built}: valid: 2 shards (6 files)" in captured.out and "1 of 4 rooms re-derived" in captured.out
    assert "re-deriving rows" in captured.err
    assert main(["validate", str(built), "--scenes", str(scenes), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "4 of 4 rooms re-derived" in captured.out and captured.err == ""


def test_only_smaller_builds_sharing_a_configuration_are_nested(built, scenes, tmp_path, capsys):
    out = copy_build(built, tmp_path)
    for name, config in (("roomspace-small", BASE), ("roomspace-other", "n4_m3_d81")):  # same seed, fewer rooms
        build(BuildPlan.asked(name, SCENE_SEED, 2, parse_configs(config)), scenes, tmp_path / name, workers=1,
              progress=False)
    assert main(["validate", str(out), "--scenes", str(scenes), "--sample", "1", "--quiet"]) == 0
    assert capsys.readouterr().out.strip().endswith("smaller builds nested in it: roomspace-small")


def test_a_smaller_build_beside_it_that_is_not_its_first_rooms_is_reported_not_nested(built, scenes, tmp_path, capsys):
    """Issue 43: `validate out/sc` failed because out/b-dask, built from other scenes, was not its first
    rooms; a neighbour is another dataset, said so, and the build stays valid."""
    out = copy_build(built, tmp_path)
    for name in ("roomspace-small", "roomspace-elsewhere"):
        build(BuildPlan.asked(name, SCENE_SEED, 2, parse_configs(BASE)), scenes, tmp_path / name, workers=1,
              progress=False)
    other = find_row(tmp_path / "roomspace-elsewhere", shard_path(BASE, 0), lambda row: row["room_index"] == 1)
    rewrite_rows(tmp_path / "roomspace-elsewhere", shard_path(BASE, 0), only(other["id"], story=other["story"] + " "))
    report = validate(out, scenes=scenes, sample=1)
    assert report.nested == ["roomspace-small"]
    assert report.not_nested == [f"roomspace-elsewhere ({BASE} from room {other['room_id']})"]
    assert main(["validate", str(out), "--scenes", str(scenes), "--sample", "1", "--quiet"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{out}: valid: ") and "\n" not in line
    assert line.endswith("smaller builds nested in it: roomspace-small; not nested, other datasets beside it "
                         "(smaller builds of its seed whose rows differ from its first rooms; they do not make it "
                         f"invalid): roomspace-elsewhere ({BASE} from room {other['room_id']})")


@pytest.mark.parametrize("tamper", [extra_unlisted_shard, checksum_mismatch], ids=lambda case: case.__name__)
def test_push_refuses_a_tampered_folder_before_looking_for_a_token(built, tmp_path, monkeypatch, tamper):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(pipeline.dataset.hub, "get_token", lambda: None)  # no token, whatever this machine holds
    with pytest.raises(RoomspaceError, match="no Hugging Face token"):
        push(built, "someone/roomspace-v", private=True)  # the untouched folder gets as far as the token
    out = copy_build(built, tmp_path)
    expected = tamper(out)
    with pytest.raises(RoomspaceError, match=expected) as refused:
        push(out, "someone/roomspace-v", private=True)
    assert "token" not in str(refused.value)
