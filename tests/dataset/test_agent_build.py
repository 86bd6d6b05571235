"""The agent configurations through every command: build, validate, prompts, score, and a Hub-shaped copy;
with vision, the agent rows with their images (vision_agent_<base>)."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from tamper import copy_build, find_row, only, rewrite_rows

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import read_manifest, shard_path
from pipeline.dataset.validate import validate
from pipeline.errors import RoomspaceError
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.render.png import image_labels
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.frames import seen_facing
from pipeline.spatial.relations import direction_of_points
from pipeline.text.configs import parse_configs

BASE = "n4_m3_d81"
AGENTS = f"agent_{BASE}"
VISION_AGENTS = f"vision_agent_{BASE}"


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("agents") / "roomspace-agents"
    configs = parse_configs(BASE)
    build(BuildPlan.asked(out.name, SCENE_SEED, 3, configs, {"vision": configs, "agent": configs}), scenes, out, workers=1,
          progress=False)
    return out


def test_the_build_writes_the_agent_configuration_beside_its_base(built, scenes, tmp_path):
    plain = tmp_path / "roomspace-agents"
    build(BuildPlan.asked(plain.name, SCENE_SEED, 3, parse_configs(BASE)), scenes, plain, workers=1, progress=False)
    identity = read_manifest(built)["identity"]
    assert identity["configs"] == [BASE, f"vision_{BASE}", AGENTS, VISION_AGENTS]
    assert BuildPlan.from_identity(identity).identity() == identity
    assert BuildPlan.from_identity(identity, built.name).name == built.name  # not the last configuration's
    path = shard_path(BASE, 0)
    assert (built / path).read_bytes() == (plain / path).read_bytes()  # the base configuration is untouched
    rows = list(open_rows(built).rows([AGENTS]))
    assert rows and {r["kind"] for r in rows} == {"plan", "door", "agent", "agent_moved"}
    assert "### agent_n4_m3_d81" in (built / "README.md").read_text() and "| agent_moved |" in (built / "README.md").read_text()


def test_validate_rederives_agent_rows_and_names_an_edit(built, scenes, tmp_path):
    report = validate(built, scenes=scenes)
    assert report.rederived == 3
    copy = copy_build(built, tmp_path)
    path = shard_path(AGENTS, 0)
    row = find_row(copy, path, lambda r: r["kind"] == "door" and r["question_type"] == "FR")
    rewrite_rows(copy, path, only(row["id"], frame_angle=(row["frame_angle"] + 90) % 270))
    with pytest.raises(RoomspaceError, match=f"row {row['id']}: frame_angle is"):
        validate(copy, scenes=scenes)


@pytest.mark.parametrize("config", [AGENTS, VISION_AGENTS])
def test_prompts_and_the_checker_score_through_the_commands_and_a_hub_copy(built, config, tmp_path, capsys):
    assert main(["prompts", str(built), "--config", config]) == 0
    prompts = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = {r["id"]: r for r in open_rows(built).rows([config])}
    assert [p["id"] for p in prompts] == list(rows)
    assert all(p["prompt"] == rows[p["id"]]["prompt"] for p in prompts)

    (group,) = evaluate(str(built), config, [], ["checker"]).groups
    assert group.overall.systems["checker"].fr_exact.value == group.overall.systems["checker"].yn_accuracy.value == 1
    assert set(group.by["frame_changes"]) <= {0, 1, 2} and set(group.by["frame_angle"]) <= {0, 90, 180}
    assert set(group.by["story_view"]) == {"top_down", "north_facing", "agent"}

    snapshot = tmp_path / "snapshot"  # what `push` uploads: the card and data/
    shutil.copytree(built / "data", snapshot / "data")
    shutil.copy(built / "README.md", snapshot)
    assert list(open_rows(snapshot).rows([config])) == list(rows.values())


def test_agent_rows_come_with_the_image_of_their_stories_frame(built):
    agent_rows = {r["id"]: r for r in open_rows(built).rows([AGENTS])}
    image = {"top_down": "top_down", "north_facing": "south_door", "agent": "first_person"}
    pictured = list(open_rows(built).rows([VISION_AGENTS]))
    with_story = [r for r in pictured if r["modality"] == "image+story"]
    assert with_story and {r["image_name"] for r in with_story} >= {"top_down", "south_door"}
    for row in with_story:
        original = agent_rows[row["id"].replace(VISION_AGENTS, AGENTS)]
        assert (row["story"], row["answer_set"], row["question"]) == (original["story"], original["answer_set"],
                                                                     original["question"])
        assert row["image_name"] == image[row["story_view"]] and row["image"] is not None
        assert set(row["query"].values()) <= set(image_labels(row["image"]["bytes"]).values())


def test_pair_questions_on_the_first_person_image_are_answered_as_the_observer_sees_them(built, scenes):
    pictured = [r for r in open_rows(built).rows([VISION_AGENTS]) if r["modality"] == "image"]
    assert pictured
    for row in pictured:
        scene = load_scene(scene_path(scenes, SCENE_SEED, row["room_index"]))
        labels = image_labels(row["image"]["bytes"])
        centres = {labels[o.id]: (o.x, o.z) for o in scene.prominent if o.id in labels}
        subject, reference = row["query"]["subject"], row["query"]["object"]
        facing = row["question_pose"]["facing"]
        assert row["image_name"].startswith("first_person") and row["frame_changes"] == 0
        assert row["camera"]["facing"] == facing and row["camera"]["y"] == 1.6
        assert row["answer_set"] == [seen_facing(direction_of_points(centres[subject], centres[reference]), facing)]
    # first-person pictures from two stances or more in every room
    cameras = {}
    for row in open_rows(built).rows([VISION_AGENTS]):
        if not row["image_name"].startswith("first_person"):
            continue
        cameras.setdefault(row["room_index"], {})[row["image_name"]] = (row["camera"]["x"], row["camera"]["z"],
                                                                        row["camera"]["facing"])
    assert all(len(set(images.values())) >= 2 for images in cameras.values())


def test_the_image_with_the_story_is_compared_with_the_story_alone(built):
    """Each kind of agent row is paired with its own pictured copy, not with another kind of the same setting."""
    evaluation = evaluate(str(built), f"{VISION_AGENTS},{AGENTS}", [], ["checker"])
    (gap,) = [g for g in evaluation.gaps if g.kind == "image+story vs story" and g.measure == "FR exact"]
    pictured = [r for r in open_rows(built).rows([VISION_AGENTS]) if r["modality"] == "image+story"]
    assert gap.configs == f"{VISION_AGENTS} / {AGENTS}"
    assert gap.result.pairs == sum(r["question_type"] == "FR" for r in pictured) > 0
