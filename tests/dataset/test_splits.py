"""Train and validation splits: other houses than the test rooms, every configuration kind, the test
split unchanged; the chat export of each kind."""

import json
from collections import Counter
from pathlib import Path

import datasets
import pytest
from conftest import SCENE_SEED, linked_scenes
from huggingface_hub import DatasetCard

from pipeline.cli import main
from pipeline.dataset import build as build_module
from pipeline.dataset.build import SPLIT_FIRST_ROOM, BuildPlan, build, check_houses
from pipeline.dataset.hub import upload_plan
from pipeline.dataset.manifest import data_folder, read_manifest
from pipeline.dataset.validate import validate
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer
from pipeline.evaluate.export import balanced_ids, chat_record, export_chat, stratum
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.scene.scene_file import house_sha256, scene_path
from pipeline.text.configs import parse_configs

BASE = "n3_m2_d81"
KINDS = (BASE, f"vision_{BASE}", f"twin_{BASE}", f"agent_{BASE}", f"vision_agent_{BASE}")
SPLIT_ROOMS = {"train": 2, "validation": 1, "test": 2}


def plan(name: str, training: bool) -> BuildPlan:
    configs = parse_configs(BASE)
    return BuildPlan.asked(name, SCENE_SEED, SPLIT_ROOMS["test"], configs,
                           {"vision": configs, "twin": configs, "agent": configs},
                           train_rooms=SPLIT_ROOMS["train"] if training else 0,
                           validation_rooms=SPLIT_ROOMS["validation"] if training else 0)


@pytest.fixture(scope="module")
def own_scenes(scenes, tmp_path_factory) -> Path:
    """The shared test houses (linked, never written) and room for the training houses sampled here."""
    return linked_scenes(scenes, tmp_path_factory.mktemp("split-scenes"))


@pytest.fixture(scope="module")
def built(own_scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("splits") / "roomspace-splits"
    build(plan(out.name, training=True), own_scenes, out, workers=1, progress=False)
    return out


def test_training_rooms_are_other_houses_checked_by_their_hash(built, own_scenes):
    houses = read_manifest(built)["houses"]
    assert houses == {"houses": SPLIT_ROOMS, "distinct": sum(SPLIT_ROOMS.values())}
    for split, count in SPLIT_ROOMS.items():
        rows = open_rows(built, split)
        indices = {i for table in rows.batches(BASE, ["room_index"]) for i in table.column("room_index").to_pylist()}
        assert indices == set(range(SPLIT_FIRST_ROOM[split], SPLIT_FIRST_ROOM[split] + count))
    hashes = [house_sha256(scene_path(own_scenes, SCENE_SEED, SPLIT_FIRST_ROOM[s] + k))
              for s, count in SPLIT_ROOMS.items() for k in range(count)]
    assert len(set(hashes)) == len(hashes)


def test_a_shared_house_stops_the_build(monkeypatch, own_scenes):
    monkeypatch.setattr(build_module, "house_sha256", lambda path: "same house")
    with pytest.raises(RoomspaceError, match="equals a house of the test split"):
        check_houses(own_scenes, plan("any", training=True))


def test_the_test_split_is_the_test_only_builds(built, own_scenes, tmp_path):
    alone = tmp_path / "roomspace-splits"
    build(plan(alone.name, training=False), own_scenes, alone, workers=1, progress=False)
    for folder in {data_folder(config) for config in KINDS}:
        for path in sorted((alone / folder).iterdir()):
            assert path.read_bytes() == (built / folder / path.name).read_bytes()
    assert "train_rooms" not in read_manifest(alone)["identity"]
    assert "## Training splits" not in (alone / "README.md").read_text()


def test_the_card_declares_every_split_of_every_configuration(built, tmp_path):
    card = DatasetCard.load(built / "README.md")
    assert [c["config_name"] for c in card.data.configs] == list(KINDS)
    for entry in card.data.configs:
        assert [f["split"] for f in entry["data_files"]] == ["train", "validation", "test"]
    for config in KINDS:
        for split in SPLIT_ROOMS:
            loaded = datasets.load_dataset(str(built), config, split=split, cache_dir=str(tmp_path))
            assert loaded.num_rows == open_rows(built, split).count([config]) > 0
    text = (built / "README.md").read_text()
    assert "## Training splits" in text and "all nine relations" in text
    assert f"| {BASE} | o2 |" in text


def test_validate_checks_every_split(built, own_scenes):
    report = validate(built, scenes=own_scenes)
    assert report.rooms == report.rederived == sum(SPLIT_ROOMS.values())
    assert report.shards == len(SPLIT_ROOMS)


def test_push_sends_every_split(built):
    files = [path.relative_to(built).as_posix() for path in sorted((built / "data").rglob("*.parquet"))]
    assert upload_plan(built) == sorted(["README.md", *files])
    assert {name.split("/")[-1].split("-")[0] for name in files} == set(SPLIT_ROOMS)


def test_readers_pick_a_split_and_name_a_missing_one(built, own_scenes, tmp_path):
    ids = {split: open_rows(built, split).ids([BASE]) for split in SPLIT_ROOMS}
    assert all(ids.values()) and not (ids["train"] & ids["test"]) and not (ids["validation"] & ids["test"])
    scored = evaluate(str(built), BASE, [], ["checker"], split="train")
    assert scored.location.endswith("train split") and scored.groups[0].items == len(ids["train"])
    # the harness tasks read a split too: inspect's `-T split=`, lm-eval's metadata roomspace_split
    from pipeline.evaluate.harness.inspect_tasks import roomspace
    from pipeline.evaluate.harness.lm_eval_tasks.utils import load_rows

    assert {sample.id for sample in roomspace(source=str(built), config=BASE, split="validation").dataset} == \
        ids["validation"]
    loaded = load_rows(str(built), BASE, roomspace_split="train")["test"]
    assert set(loaded["id"]) == ids["train"]
    alone = tmp_path / "alone"
    build(plan(alone.name, training=False), own_scenes, alone, workers=1, progress=False)
    with pytest.raises(RoomspaceError, match="has no train split; it has test"):
        open_rows(alone, "train")


@pytest.mark.parametrize("config", KINDS)
def test_the_chat_export_of_each_kind_ends_in_a_parsable_target(built, config):
    rows = open_rows(built, "train")
    records = list(export_chat(rows, [config], maps=True))
    questions = list(rows.rows([config]))
    assert len(records) == len(questions)
    for record, row in zip(records, questions):
        user, assistant = record["messages"]
        assert list(record) == ["messages"] and (user["role"], assistant["role"]) == ("user", "assistant")
        parsed = parse_answer(assistant["content"], row["question_type"])
        assert parsed.relations == tuple(row["answer_set"]) if row["question_type"] == "FR" else parsed.yes == (
            row["answer"] == "Yes")
        if row.get("image") is not None:
            assert [part["type"] for part in user["content"]] == ["image_url", "text"]
            assert user["content"][1]["text"] == row["prompt"]
        else:
            assert user["content"] == row["prompt"]
        assert assistant["content"].startswith("Map of the room") == bool(row["objects"])
    assert chat_record(questions[0])["messages"][1]["content"].startswith("Map") is False


@pytest.mark.parametrize("config", KINDS)
def test_the_balanced_draw_caps_each_stratum_at_the_median_and_spares_the_test_split(built, config):
    rows = open_rows(built, "train")
    kept = balanced_ids(rows, config, seed=3)
    assert kept == balanced_ids(rows, config, seed=3)
    every = Counter(stratum(row) for row in rows.rows([config]))
    counts = Counter(stratum(row) for row in rows.rows([config]) if row["id"] in kept)
    assert set(counts) == set(every)  # no answer-set size or answer is dropped
    for key, count in every.items():
        same = sorted(c for other, c in every.items() if other[:2] == key[:2])
        assert counts[key] == min(count, same[(len(same) - 1) // 2])
        if key[1] == "YN":
            assert len({counts[other] for other in every if other[:2] == key[:2]}) == 1
    with pytest.raises(RoomspaceError, match="training rows only"):
        balanced_ids(open_rows(built), config, seed=3)


def test_export_command_writes_json_lines(built, capsys):
    assert main(["export", str(built), "--format", "chat", "--config", BASE, "--split", "validation"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(open_rows(built, "validation").ids([BASE]))
    assert json.loads(lines[0])["messages"][1]["content"].split("\n")[-1].startswith("Answer: ")


@pytest.mark.parametrize("config", KINDS)
def test_prompts_and_score_read_the_split_they_are_given(built, config, tmp_path, capsys):
    ids = open_rows(built, "train").ids([config])
    assert ids and not ids & open_rows(built, "test").ids([config])
    assert main(["prompts", str(built), "--config", config, "--split", "train"]) == 0
    assert sorted(json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()) == sorted(ids)
    scores = tmp_path / "scores.json"  # validation: one room, where test has two (item counts differ)
    assert main(["score", str(built), "--baseline", "checker", "--config", config, "--split", "validation",
                 "--json", str(scores), "--quiet"]) == 0
    (group,) = json.loads(scores.read_text())["groups"]
    assert group["items"] == len(open_rows(built, "validation").ids([config])) != len(open_rows(built).ids([config]))
