"""Plans read and scored without a judge (pipeline.evaluate.plans, docs/semantics.md section 21): steps
read to (action, object, source) with the view's names, F_c, F_p and exact plans on hand-made
answers, the baselines, and a loopback model through run-model and score on a small build."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from loopback import LoopbackChat, completion

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.plans import ReadStep, baseline_plan, plan_answer, read_plan, score_plan
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.score import ScoreRow
from pipeline.spatial.plans import OPEN, PICK_UP, REMOVE
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

NAMES = ("desk", "drawer", "laptop", "book 1", "book 2", "pen", "pencil", "cell phone")
# Take the laptop: the pen and the pencil are on book 2, book 2 on the laptop, the cell phone on the laptop.
GOLD = ((REMOVE, "pen", "book 2", ()), (REMOVE, "pencil", "book 2", ()), (REMOVE, "book 2", "laptop", (0, 1)),
        (REMOVE, "cell phone", "laptop", ()), (PICK_UP, "laptop", "desk", (2, 3)))


def answer(*steps: tuple[str, list]) -> str:
    body = {f"step{k}": {"content": text, "precondition": needs} for k, (text, needs) in enumerate(steps, 1)}
    return f"Thinking...\n<ans>{json.dumps(body)}</ans>"


RIGHT = answer(("Remove the pen from book 2", []), ("Remove the pencil from book 2", []),
               ("Remove book 2 from the laptop", ["step1", "step2"]), ("Remove the cell phone from the laptop", []),
               ("Pick up the laptop", ["step3", "step4"]))


@pytest.mark.parametrize("content, read", [
    ("Remove the pen from book 2", (REMOVE, "pen", "book 2")),
    ("Take book 2 off the laptop", (REMOVE, "book 2", "laptop")),
    ("Pick up the pencil", (PICK_UP, "pencil", None)),
    ("Take the pencil out of the drawer", (PICK_UP, "pencil", "drawer")),
    ("Open the drawer of the desk", (OPEN, "drawer", "desk")),
    ("Lift the cell phone off book 1", (REMOVE, "cell phone", "book 1")),
    ("Remove the book", (REMOVE, None, None)),  # "book" names nothing: there are book 1 and book 2
    ("Carefully handle the pen", (None, "pen", None)),
])
def test_steps_are_read_with_the_views_names(content, read):
    (step,) = read_plan(answer((content, [])), NAMES).steps
    assert (step.action, step.object, step.source) == read


@pytest.mark.parametrize("text", [
    "<ans>```json\n" + json.dumps({"step1": {"content": "Pick up the laptop", "precondition": []}}) + "\n```</ans>",
    "<ANS>" + json.dumps({"answer": {"step1": {"content": "Pick up the laptop", "precondition": []}}}),
    "<ans>Here: " + json.dumps([{"content": "Pick up the laptop", "precondition": []}]) + " done</ans>",
])
def test_lenient_about_the_wrapping(text):
    assert read_plan(text, NAMES).steps == (ReadStep(PICK_UP, "laptop", None, ()),)


@pytest.mark.parametrize("text, problem", [
    ("Pick up the laptop.", "no <ans></ans>"),
    ("<ans>pick up the laptop</ans>", "no JSON object"),
    ('<ans>{"step1": {"precondition": []}}</ans>', "no 'content'"),
])
def test_unparseable_answers(text, problem):
    assert problem in read_plan(text, NAMES).problem


def scored(text: str):
    return score_plan(read_plan(text, NAMES), GOLD)


def test_the_gold_plan_and_independent_orders_are_exact():
    assert scored(RIGHT) == (1.0, 1.0, True)
    swapped = answer(("Remove the cell phone from the laptop", []), ("Remove the pencil from book 2", []),
                     ("Remove the pen from book 2", []), ("Remove book 2 from the laptop", ["step2", "step3"]),
                     ("Pick up the laptop", ["step1", "step4", "step3"]))  # a redundant need: the same order
    assert scored(swapped) == (1.0, 1.0, True)
    moved = RIGHT.replace("Remove the pen from book 2", "Pick up the pen")  # remove and pick up both move it
    assert scored(moved).exact


def test_missing_steps_and_links_cost_f_c_and_f_p():
    at_once = score_plan(read_plan(answer(("Pick up the laptop", [])), NAMES), GOLD)
    assert at_once.content == pytest.approx(2 / 6) and at_once.preconditions == 0.0 and not at_once.exact
    chained = answer(("Remove the pen from book 2", []), ("Remove the pencil from book 2", ["step1"]),
                     ("Remove book 2 from the laptop", ["step2"]), ("Remove the cell phone from the laptop", ["step3"]),
                     ("Pick up the laptop", ["step4"]))
    # 4 links, 2 of them orders the gold plan has (not pen before pencil, nor book 2 before the cell phone)
    result = scored(chained)
    precision, recall = 2 / 4, 4 / 4  # every gold link is implied by the chain
    assert result.content == 1.0 and not result.exact
    assert result.preconditions == pytest.approx(2 * precision * recall / (precision + recall))
    extra = RIGHT[:-len("}</ans>")] + ', "step6": {"content": "Open the drawer", "precondition": []}}</ans>'
    assert scored(extra).content == pytest.approx(10 / 11) and not scored(extra).exact
    wrong_source = RIGHT.replace("Remove the pen from book 2", "Remove the pen from book 1")
    assert scored(wrong_source).content == pytest.approx(8 / 10)


def row_of(plan, answer_text: str) -> ScoreRow:
    contents = tuple(f"step {k}" for k in range(len(plan)))
    return ScoreRow("r", "room", "object_tasks_n5_m4_d144", "pick_up", "front", "PLAN", answer_text, contents, None,
                    NAMES, 5, 4, 12, 3, len(plan), "text", None, None, None, None, plan=plan)


def test_baselines():
    row = row_of(GOLD, RIGHT)
    assert baseline_plan("checker", row) == RIGHT
    direct = json.loads(baseline_plan("direct", row)[5:-6])
    assert direct == {"step1": {"content": "step 4", "precondition": []}}
    drawn = json.loads(baseline_plan("random", row, seed=3)[5:-6])
    assert sorted(step["content"] for step in drawn.values()) == sorted(row.answer_set)
    assert [step["precondition"] for step in drawn.values()] == [[], ["step1"], ["step2"], ["step3"], ["step4"]]
    assert baseline_plan("random", row, seed=3) == baseline_plan("random", row, seed=3)
    assert baseline_plan("majority", row) is None
    assert plan_answer(["Pick up the laptop"], [()]) == \
        '<ans>{"step1": {"content": "Pick up the laptop", "precondition": []}}</ans>'


CONFIG = KINDS["object_tasks"].config_name(Config(5, 4, 12))


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tasks") / "roomspace-tasks-test"
    build(BuildPlan.asked(out.name, SCENE_SEED, 3, (), {"object_tasks": [Config(5, 4, 12)]}), scenes, out,
          workers=1, progress=False)
    return out


def way(row: dict) -> int:
    return zlib.crc32(row["id"].encode()) % 3


def model_answer(row: dict) -> str:
    """Right, the object taken at once, or not a plan, by a hash of the row's id."""
    return (row["answer"], baseline_plan("direct", ScoreRow.of(row)), "I would lift things off first.")[way(row)]


def test_a_loopback_model_through_run_model_and_score(built, tmp_path, capsys):
    rows = [row for table in open_rows(built).batches(CONFIG) for row in table.to_pylist()]
    assert {row["modality"] for row in rows} == {"text", "image"}

    def key(content) -> str:
        return json.dumps(content, sort_keys=True)

    asked = {}
    for row in rows:
        image = row["image"]
        text = row["prompt"]
        content = text if image is None else [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + __import__("base64").b64encode(
                image["bytes"]).decode("ascii")}}, {"type": "text", "text": text}]
        asked[key(content)] = row
    model = LoopbackChat(lambda path, body: (200, completion(body, model_answer(asked[key(body["messages"][0]["content"])]))))
    preds = tmp_path / "preds.jsonl"
    report = tmp_path / "scores.json"
    try:
        assert main(["run-model", str(built), "--config", CONFIG, "--base-url", model.root, "--model", "stub",
                     "--out", str(preds), "--quiet"]) == 0
        assert main(["score", str(built), "--config", CONFIG, "--predictions", str(preds), "--baseline", "checker",
                     "--baseline", "direct", "--baseline", "random", "--json", str(report), "--quiet"]) == 0
    finally:
        model.close()
    printed = capsys.readouterr().out
    assert "### Plans" in printed and "plans by number of steps and modality" in printed
    scores = json.loads(report.read_text(encoding="utf-8"))
    overall = {name: m for name, m in scores["groups"][0]["overall"]["systems"].items()}
    assert overall["checker"]["plan_exact"]["value"] == 1.0 and overall["checker"]["plan_content"] == 1.0
    direct = [score_plan(read_plan(baseline_plan("direct", ScoreRow.of(row)), row["options"]),
                         ScoreRow.of(row).plan) for row in rows]
    assert overall["direct"]["plan_content"] == pytest.approx(sum(s.content for s in direct) / len(rows))
    assert overall["direct"]["plan_exact"]["value"] == pytest.approx(
        sum(row["answer_set_size"] == 1 for row in rows) / len(rows))
    assert overall["random"]["plan_content"] == pytest.approx(1.0)
    stub = overall["stub"]
    expected = [(1.0, 1.0, True) if way(row) == 0 else tuple(direct[k]) if way(row) == 1 else None
                for k, row in enumerate(rows)]
    assert stub["plan_unparseable"] == sum(e is None for e in expected)
    assert stub["plan_content"] == pytest.approx(sum(e[0] for e in expected if e) / len(rows))
    assert stub["plan_preconditions"] == pytest.approx(sum(e[1] for e in expected if e) / len(rows))
    assert stub["plan_exact"]["value"] == pytest.approx(sum(e[2] for e in expected if e) / len(rows))
