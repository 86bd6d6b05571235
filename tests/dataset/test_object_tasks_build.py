"""The object tasks kind through every command (docs/semantics.md section 21): a small build with a
training split, `validate` deriving each gold plan again and refusing an edited one, `prompts` in
every style, `audit`, `export` with the gold plan as the target and as the reward's columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SCENE_SEED, linked_scenes
from tamper import copy_build, find_row, only, rewrite_rows

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import shard_path
from pipeline.dataset.rows import check_row
from pipeline.errors import RoomspaceError
from pipeline.evaluate.reward import roomspace_reward
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

BASE = Config(5, 4, 12)
CONFIG = KINDS["object_tasks"].config_name(BASE)


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> tuple[Path, Path]:
    folder = linked_scenes(scenes, tmp_path_factory.mktemp("tasks-scenes"))
    out = tmp_path_factory.mktemp("tasks-build") / "roomspace-tasks"
    plan = BuildPlan.asked(out.name, SCENE_SEED, 3, (), {"object_tasks": [BASE]}, train_rooms=2)
    build(plan, folder, out, workers=1, progress=False)
    return out, folder


def test_validate_derives_every_gold_plan_again(built, tmp_path, capsys):
    out, scenes = built
    assert main(["validate", str(out), "--scenes", str(scenes)]) == 0
    assert "re-derived" in capsys.readouterr().out
    path = shard_path(CONFIG, 0)
    row = find_row(out, path, lambda r: len(r["plan"]) > 1)
    shortened = {**row, "plan": row["plan"][1:], "answer_set": row["answer_set"][1:],
                 "answer_set_size": row["answer_set_size"] - 1}
    with pytest.raises(RoomspaceError, match="not the gold plan of its view"):
        check_row(shortened)
    reordered = {**row, "plan": [{**step, "needs": []} for step in row["plan"]]}
    with pytest.raises(RoomspaceError, match="not the gold plan"):
        check_row(reordered)
    copy = copy_build(out, tmp_path)
    rewrite_rows(copy, path, only(row["id"], **{k: shortened[k] for k in ("plan", "answer_set", "answer_set_size")}))
    assert main(["validate", str(copy), "--scenes", str(scenes)]) == 1
    assert "not the gold plan of its view" in capsys.readouterr().err


def test_prompts_in_every_style_and_the_audit(built, capsys):
    out, _ = built
    rows = list(open_rows(out).rows([CONFIG]))
    for style in ("self-contained", "paper"):
        assert main(["prompts", str(out), "--config", CONFIG, "--style", style]) == 0
        printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [p["id"] for p in printed] == [row["id"] for row in rows]
        for prompt, row in zip(printed, rows):
            assert prompt["prompt"] == row["prompt"]  # a plan's prompt is the same in every style
            if row["modality"] == "image":
                image, text = prompt["messages"][0]["content"]
                assert image["type"] == "image_url" and text["text"] == row["prompt"]
    assert main(["audit", str(out), "--config", CONFIG]) == 0
    printed = capsys.readouterr().out
    assert not any(line.startswith(f"| {CONFIG} |") for line in printed.splitlines())  # plans have no blind cells
    assert f"{CONFIG} asks plans, which have no blind baseline" in printed  # and audit says so


def test_export_gives_the_gold_plan_as_target_and_the_rewards_columns(built, capsys):
    out, _ = built
    assert main(["export", str(out), "--format", "chat", "--config", CONFIG]) == 0  # the train split
    chats = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    train = {row["id"]: row for row in open_rows(out, "train").rows([CONFIG])}
    assert chats and len(chats) == len(train)
    for chat, row in zip(chats, train.values()):
        assert chat["messages"][-1] == {"role": "assistant", "content": row["answer"]}
    assert main(["export", str(out), "--format", "prompt", "--config", CONFIG, "--split", "test"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    columns = {name: [record[name] for record in records] for name in records[0] if name != "prompt"}
    gold = [record["answer"] for record in records]
    assert roomspace_reward(completions=gold, **columns) == [1.0] * len(records)
    at_once = ['<ans>{"step1": {"content": "' + record["answer_set"][-1] + '", "precondition": []}}</ans>'
               for record in records]
    # the mean of F_c, 2 / (1 + steps), and F_p, 0 where the gold plan has preconditions
    expected = [1.0 if record["answer_set_size"] == 1 else 1 / (1 + record["answer_set_size"]) for record in records]
    assert roomspace_reward(completions=at_once, **columns) == pytest.approx(expected)
