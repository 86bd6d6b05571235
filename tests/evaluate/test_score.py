"""Parsing free-text answers, scoring by consistency, baselines, reports and the `score` command."""

import json
from pathlib import Path

import pytest
from conftest import SCENE_SEED as SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer
from pipeline.evaluate.baselines import BASELINES, baseline_predictions
from pipeline.evaluate.rows import load_rows
from pipeline.evaluate.score import BREAKDOWNS, evaluate, read_predictions, score, score_item
from pipeline.spatial.relations import DIRECTIONS, VIEWS, relation_words
from pipeline.text.configs import parse_configs

ROOMS = 3
CONFIGS = "n3_m2_d81,n4_m4_d144"  # two values of n, m and d, so breakdowns and plots have several points


@pytest.mark.parametrize("text, codes", [
    ("The chair is to the north-west.", ("NW",)),
    ("front-left", ("NW",)),
    ("NW, W", ("W", "NW")),
    ("It is behind and to the left of the sofa", ("SW",)),
    ("It is in front of and to the right of the bed.", ("NE",)),
    ("north west", ("NW",)),
    ("Northeast", ("NE",)),
    ("back left", ("SW",)),
    ("to the left", ("W",)),
    ("The lamp is in the same place as the desk.", ("O",)),
    ("N, W", ("N", "W")),
    ("**Answer:** north, north-east, east", ("N", "NE", "E")),
    ("Chair 1 is north of the bed, so the plant is north too.\nAnswer: south-east, south", ("SE", "S")),
    ("right, back-right, back", ("E", "SE", "S")),
])
def test_relations_are_read_as_models_write_them(text, codes):
    parsed = parse_answer(text, "FR")
    assert parsed.parsed and parsed.relations == codes


@pytest.mark.parametrize("text, yes", [
    ("Yes, it could.", True), ("No.", False), ("Answer: NO", False), ("No, it can't be.", False),
    ("It is possible: the story allows it. Answer: Yes", True),
    ("Since the bed is north of the chair... no, wait, let me check again. Answer: Yes", True),
])
def test_yes_no_is_read_as_models_write_it(text, yes):
    parsed = parse_answer(text, "YN")
    assert parsed.parsed and parsed.yes is yes


@pytest.mark.parametrize("text, question_type", [
    ("north or maybe south-west?", "YN"),  # a relation where Yes/No was asked, and a hedge
    ("yes and no", "YN"),
    ("Yes, but no.", "YN"),
    ("I can't tell.", "YN"),
    ("Probably yes.", "YN"),
    ("I think the chair is near the sofa.", "FR"),  # names no relation
    ("", "FR"),
    ("It is not north.", "FR"),  # a negation: "north" is not the answer
    ("It can't be west.", "FR"),
    ("maybe north-east", "FR"),
    ("north and west", "FR"),  # one diagonal, or two relations?
    ("left and in front", "FR"),
])
def test_ambiguous_answers_do_not_parse(text, question_type):
    parsed = parse_answer(text, question_type)
    assert not parsed.parsed and parsed.problem


def test_every_label_and_phrase_of_the_table_reads_back_as_its_code():
    for code in DIRECTIONS:
        for view in VIEWS:
            for field in ("label", "phrase"):
                words = relation_words(code, view, field)
                assert parse_answer(f"It is {words} the sofa.", "FR").relations == (code,), words


def row(question_type="FR", answer_set=("N", "NE"), candidate=None, **extra):
    return {"id": extra.pop("id", "r1"), "question_type": question_type, "answer_set": list(answer_set),
            "candidate": candidate, "setting": "o2", "view": "top_down", "n": 5, "m": 4, "d": 12, "hops": 4, **extra}


def test_item_scores_by_consistency():
    exact, _ = score_item(row(), "north, north-east")
    assert exact.correct and exact.jaccard == 1 and exact.f1 == 1
    part, _ = score_item(row(), "north")
    assert not part.correct and part.jaccard == 0.5 and part.f1 == pytest.approx(2 / 3)
    assert part.single and part.consistent
    wrong, _ = score_item(row(), "south")
    assert wrong.single and not wrong.consistent and wrong.jaccard == 0
    yes, _ = score_item(row("YN", candidate="NE"), "Yes")
    no, _ = score_item(row("YN", candidate="S"), "Yes")
    assert yes.correct and not no.correct
    unparsed, problem = score_item(row(), "maybe north")
    assert unparsed.status == "unparseable" and problem and not unparsed.correct
    missing, _ = score_item(row(), None)
    assert missing.status == "no answer"


def test_unparseable_and_missing_answers_stay_in_the_denominators():
    rows = [row(id="a"), row(id="b"), row("YN", candidate="N", id="c"), row("YN", candidate="S", id="d")]
    report = score("model", rows, {"a": "north, north-east", "b": "perhaps north", "c": "Yes"})
    overall = report.overall
    assert (overall.items, overall.unparseable, overall.no_answer) == (4, 1, 1)
    assert overall.fr_exact == 0.5 and overall.yn_accuracy == 0.5
    assert report.unparseable[0]["id"] == "b"


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build") / "roomspace-score-test"
    build(BuildPlan("roomspace-score-test", SEED, ROOMS, parse_configs(CONFIGS)), scenes, out, workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rows(built) -> list[dict]:
    return load_rows(built)


def test_the_checker_baseline_scores_100_percent(rows):
    report = score("checker", rows, baseline_predictions("checker", rows))
    overall = report.overall
    assert overall.unparseable == overall.no_answer == 0
    assert overall.yn_accuracy == overall.fr_exact == overall.fr_jaccard == overall.fr_f1 == 1.0
    assert overall.fr_single_consistent == 1.0
    for key in BREAKDOWNS:
        assert all(m.yn_accuracy == 1.0 and m.fr_exact in (1.0, None) for m in report.by[key].values())


def test_baselines_are_deterministic_and_below_the_checker(rows):
    for name in BASELINES:
        assert baseline_predictions(name, rows) == baseline_predictions(name, list(reversed(rows)))
    assert baseline_predictions("random", rows, seed=1) != baseline_predictions("random", rows, seed=2)
    for name in ("random", "always-yes", "majority"):
        overall = score(name, rows, baseline_predictions(name, rows)).overall
        assert overall.unparseable == 0 and overall.fr_exact < 1.0 and overall.yn_accuracy < 1.0


def test_always_yes_is_exact_only_where_every_relation_is_possible(rows):
    report = score("always-yes", rows, baseline_predictions("always-yes", rows))
    fr = [r for r in rows if r["question_type"] == "FR"]
    assert report.overall.fr_exact == sum(len(r["answer_set"]) == 9 for r in fr) / len(fr)


def write_lines(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_bad_predictions_files_are_named_errors(built, rows, tmp_path):
    ids = {r["id"] for r in rows}
    first = rows[0]["id"]
    cases = {
        "does not exist": tmp_path / "missing.jsonl",
        "not an item of this build": write_lines(tmp_path / "unknown.jsonl", [{"id": "s9-nope", "prediction": "Yes"}]),
        "a second prediction": write_lines(tmp_path / "twice.jsonl", [{"id": first, "prediction": "north"}] * 2),
        "not a JSON object": write_lines(tmp_path / "broken.jsonl", ['{"id": ']),
        "expected": write_lines(tmp_path / "fields.jsonl", [{"id": first, "answer": "north"}]),
        "is not text": write_lines(tmp_path / "number.jsonl", [{"id": first, "prediction": 3}]),
    }
    for message, path in cases.items():
        with pytest.raises(RoomspaceError, match=message):
            read_predictions(path, ids)


def test_score_command_table_json_and_plots(built, rows, tmp_path, capsys):
    fr = next(r for r in rows if r["question_type"] == "FR" and r["config"] == "n3_m2_d81")
    yn = next(r for r in rows if r["question_type"] == "YN" and r["config"] == "n3_m2_d81")
    other = next(r for r in rows if r["config"] == "n4_m4_d144")
    predictions = write_lines(tmp_path / "model.jsonl", [
        {"id": fr["id"], "prediction": f"Answer: {fr['answer']}"}, {"id": yn["id"], "prediction": "yes and no"},
        {"id": other["id"], "prediction": "Yes"},  # another configuration: ignored with --config n3_m2_d81
    ])
    scores, plots = tmp_path / "scores.json", tmp_path / "plots"
    argv = ["score", str(built), "--predictions", str(predictions), "--baseline", "checker", "--config", "n3_m2_d81",
            "--json", str(scores), "--plots", str(plots)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    items = sum(r["config"] == "n3_m2_d81" for r in rows)
    assert f"| model | {items} | {items - 2} | 1 |" in table
    assert f"| checker | {items} | 0 | 0 | 100.0 | 100.0 |" in table
    assert "## By hops" in table
    report = json.loads(scores.read_text())
    assert report["configs"] == ["n3_m2_d81"]
    assert report["systems"]["model"]["unparseable_examples"][0]["id"] == yn["id"]
    assert set(report["systems"]["checker"]["by"]) == set(BREAKDOWNS)
    pngs = sorted(p.name for p in plots.glob("*.png"))
    assert pngs == ["checker-accuracy-vs-m.png", "checker-accuracy-vs-n.png",
                    "model-accuracy-vs-m.png", "model-accuracy-vs-n.png"]
    first = {p.name: p.read_bytes() for p in plots.glob("*.png")}
    assert all(data.startswith(b"\x89PNG") for data in first.values())
    assert main(argv) == 0  # same scores, same bytes
    assert {p.name: p.read_bytes() for p in plots.glob("*.png")} == first


def test_plots_have_one_point_per_value_of_n(rows):
    report = score("checker", rows, baseline_predictions("checker", rows))
    assert list(report.by["n"]) == [3, 4]
    assert all(list(points) == [3, 4] for points in report.by_setting["n"].values())


def test_score_refuses_a_missing_build_and_an_unknown_configuration(built, tmp_path, capsys):
    assert main(["score", str(tmp_path / "nothing"), "--baseline", "checker"]) == 1
    assert "not a roomspace build" in capsys.readouterr().err
    with pytest.raises(RoomspaceError, match="has no configuration n5_m4_d144"):
        evaluate(built, "n5_m4_d144", [], ["checker"])
    with pytest.raises(RoomspaceError, match="nothing to score"):
        evaluate(built, None, [], [])
