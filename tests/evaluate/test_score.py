"""Parsing free-text answers, scoring by consistency, baselines, intervals, gaps, reports and the `score` command."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import SCENE_SEED as SEED
from simulated import simulated_predictions

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import MANIFEST
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer
from pipeline.evaluate.baselines import BASELINES
from pipeline.evaluate.predictions import RunHeader, templates_sha256
from pipeline.evaluate.prompts import make_prompt
from pipeline.evaluate.report import evaluate, markdown
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.score import (BREAKDOWNS, NO_ANSWER, SCORED, TRUNCATED, UNPARSEABLE, ScoreRow, read_predictions,
                                     read_score_rows, score_item)
from pipeline.spatial.relations import DIRECTIONS, VIEWS, relation_words
from pipeline.text.configs import parse_configs
from pipeline.text.prompts import row_prompt

ROOMS = 3
CONFIGS = "n3_m2_d81,n4_m4_d144"  # two values of n, m and d, so breakdowns and plots have several points
KINDS = ("n3_m2_d81", "n4_m4_d144", "vision_n3_m2_d81", "twin_n3_m2_d81")


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


def row(question_type="FR", answer_set=("N", "NE"), candidate=None, **extra) -> ScoreRow:
    fields = dict(id="r1", room_id="s0-000000", config="n5_m4_d144", setting="o2", view="top_down",
                  question_type=question_type, answer="", answer_set=tuple(answer_set), candidate=candidate,
                  options=("Yes", "No") if question_type == "YN" else tuple(relation_words(c, "top_down", "label")
                                                                           for c in DIRECTIONS),
                  n=5, m=4, d=12, hops=4, answer_set_size=len(answer_set), modality=None, pair=None,
                  story_view=None, frame_changes=None, frame_angle=None)
    return ScoreRow(**{**fields, **extra})


def test_item_scores_by_consistency():
    exact = score_item(row(), "north, north-east")
    assert exact.correct[0, 0] and exact.jaccard[0, 0] == 1 and exact.f1[0, 0] == 1
    part = score_item(row(), "north")
    assert not part.correct[0, 0] and part.jaccard[0, 0] == 0.5 and part.f1[0, 0] == pytest.approx(2 / 3)
    assert score_item(row("YN", candidate="NE"), "Yes").correct[0, 0]
    assert not score_item(row("YN", candidate="S"), "Yes").correct[0, 0]
    assert score_item(row(), "maybe north").status[0, 0] == UNPARSEABLE
    assert score_item(row(), "").status[0, 0] == UNPARSEABLE  # an empty answer is an answer that does not parse
    assert score_item(row(), None).status[0, 0] == NO_ANSWER
    cut = score_item(row(), "north, north-east", truncated=True)
    assert cut.status[0, 0] == TRUNCATED and not cut.correct[0, 0]  # cut short: never parsed
    assert exact.status[0, 0] == SCORED


def write_lines(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build") / "roomspace-score-test"
    base = parse_configs(CONFIGS)
    build(BuildPlan.asked("roomspace-score-test", SEED, ROOMS, base, {"vision": base[:1], "twin": base[:1]}), scenes, out,
          workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rows(built) -> list[dict]:
    source = open_rows(built)
    return list(source.rows(source.configs))


def test_every_kind_is_there_and_every_prompt_is_the_rows_own(rows):
    assert {r["config"] for r in rows} == set(KINDS)
    for r in rows:
        prompt = make_prompt(r)
        assert prompt.text == r["prompt"] == row_prompt(r)
        if r["config"].startswith("vision_") and r["modality"] != "text":
            assert prompt.image == r["image"]["bytes"] and prompt.image.startswith(b"\x89PNG")
            assert prompt.messages[0]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
        else:
            assert prompt.image is None


def test_the_checker_scores_100_percent_on_every_configuration_and_shows_no_gap(built, rows):
    evaluation = evaluate(str(built), None, [], ["checker"])
    assert [group.name for group in evaluation.groups] == list(KINDS)
    for group in evaluation.groups:
        metrics = group.overall.systems["checker"]
        assert metrics.unparseable == metrics.no_answer == metrics.truncated == 0
        assert metrics.yn_accuracy.value == metrics.fr_exact.value == 1.0
        assert metrics.fr_f1_items == metrics.fr_jaccard == 1.0
        # scikit-learn's macro average: a label never true and never named scores 0, even for a perfect system
        present = {code for r in rows if r["config"] == group.name and r["question_type"] == "FR"
                   for code in r["answer_set"]}
        assert metrics.fr_f1_macro == pytest.approx(len(present) / len(DIRECTIONS))
        for key in group.by:
            for part in group.by[key].values():
                m = part.systems["checker"]
                assert m.yn_accuracy is None or m.yn_accuracy.value == 1.0
    kinds = {gap.kind for gap in evaluation.gaps if gap.result is not None}
    assert kinds >= {"twin", "view", "image+story vs story", "image vs text", "image+text vs text",
                     "image+text vs image"}
    assert all(gap.result.difference == gap.result.low == gap.result.high == 0 for gap in evaluation.gaps)


def test_baselines_are_deterministic_below_the_checker_and_beside_chance(built):
    first = evaluate(str(built), None, [], list(BASELINES), seed=1)
    assert markdown(first) == markdown(evaluate(str(built), None, [], list(BASELINES), seed=1))
    assert markdown(first) != markdown(evaluate(str(built), None, [], list(BASELINES), seed=2))
    for group in first.groups:
        for name in ("random", "always-yes", "majority"):
            m = group.overall.systems[name]
            assert m.unparseable == 0 and (m.fr_exact is None or m.fr_exact.value < 1.0)
        majority, reference = group.overall.systems["majority"], group.overall.reference
        assert majority.yn_accuracy.value <= reference.yn_best_constant + 1e-9
        assert reference.yn_chance == 0.5 and 0 <= reference.fr_chance <= reference.fr_best_constant


def test_macro_f1_is_the_mean_over_the_nine_labels(built, rows):
    config = "n4_m4_d144"
    chosen = [r for r in rows if r["config"] == config and r["question_type"] == "FR"]
    evaluation = evaluate(str(built), config, [], ["majority"])
    consistent = [code for r in chosen for code in r["answer_set"]]
    relation = max(DIRECTIONS, key=consistent.count)  # what the majority baseline names (a tie: the first code)
    named = {r["id"]: set(parse_answer(relation_words(relation, r["view"], "label"), "FR").relations) for r in chosen}
    assert all(words == {relation} for words in named.values())
    labels = []
    for code in DIRECTIONS:  # independent of the scorer: counts per label, as scikit-learn's macro average
        tp = sum(code in named[r["id"]] and code in r["answer_set"] for r in chosen)
        fp = sum(code in named[r["id"]] and code not in r["answer_set"] for r in chosen)
        fn = sum(code not in named[r["id"]] and code in r["answer_set"] for r in chosen)
        labels.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    majority = evaluation.groups[0].overall.systems["majority"]
    assert majority.fr_f1_macro == pytest.approx(sum(labels) / 9)
    assert 0 <= majority.fr_f1_macro <= majority.fr_f1_items


def test_bad_predictions_files_are_named_errors(built, rows, tmp_path):
    source = open_rows(built)
    score_rows = read_score_rows(source, source.configs)
    index = {r.id: k for k, r in enumerate(score_rows)}
    first = rows[0]["id"]
    cases = {
        "does not exist": tmp_path / "missing.jsonl",
        "not an item of this benchmark": write_lines(tmp_path / "unknown.jsonl", [{"id": "s9-nope", "prediction": "Yes"}]),
        "a second prediction": write_lines(tmp_path / "twice.jsonl", [{"id": first, "prediction": "north"}] * 2),
        "sample 2": write_lines(tmp_path / "twice2.jsonl", [{"id": first, "prediction": "north", "sample": 2}] * 2),
        "not a JSON object": write_lines(tmp_path / "broken.jsonl", ['{"id": ']),
        "expected": write_lines(tmp_path / "fields.jsonl", [{"id": first, "answer": "north"}]),
        "is not text": write_lines(tmp_path / "number.jsonl", [{"id": first, "prediction": 3}]),
        "sample must be": write_lines(tmp_path / "sample.jsonl", [{"id": first, "prediction": "Yes", "sample": -1}]),
    }
    for message, path in cases.items():
        with pytest.raises(RoomspaceError, match=message):
            read_predictions(path, index, score_rows, set(index))
    odd = write_lines(tmp_path / "u2028.jsonl", [{"id": first, "prediction": "north\u2028Answer: north"}])
    assert read_predictions(odd, index, score_rows, set(index)).status[index[first], 0] == SCORED


def test_a_predictions_file_starting_with_a_utf8_bom_is_read(built, rows, tmp_path):
    source = open_rows(built)
    score_rows = read_score_rows(source, source.configs)
    index = {r.id: k for k, r in enumerate(score_rows)}
    first = rows[0]["id"]
    line = json.dumps({"id": first, "prediction": f"Answer: {rows[0]['answer']}"})
    path = tmp_path / "bom.jsonl"  # as Windows editors and PowerShell's Out-File write UTF-8
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    assert read_predictions(path, index, score_rows, set(index)).status[index[first], 0] == SCORED


def test_score_names_systems_by_name_or_else_by_file(built, rows, tmp_path, capsys):
    config = rows[0]["config"]
    answers = [{"id": r["id"], "prediction": "Answer: Yes"} for r in rows if r["config"] == config]
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first, second = (write_lines(tmp_path / folder / "preds.jsonl", answers) for folder in "ab")
    argv = ["score", str(built), "--config", config, "--quiet", "--predictions", str(first),
            "--predictions", str(second)]
    assert main(argv) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "two predictions files are named preds" in error and "--name" in error
    assert main([*argv, "--name", "model-a", "--name", "model-b"]) == 0
    table = capsys.readouterr().out
    assert "| model-a |" in table and "| model-b |" in table and "| preds |" not in table
    assert main([*argv, "--name", "model-a"]) == 1
    assert "1 --name for 2 --predictions files" in capsys.readouterr().err
    assert main([*argv, "--name", "same", "--name", "same"]) == 1
    assert "two predictions files are named same" in capsys.readouterr().err
    assert main([*argv[:-2], "--name", "majority", "--baseline", "majority"]) == 1
    assert "majority is both a predictions file and a baseline" in capsys.readouterr().err


def test_score_command_per_configuration_json_plots_and_repeats(built, rows, tmp_path, capsys):
    fr = next(r for r in rows if r["question_type"] == "FR" and r["config"] == "n3_m2_d81")
    yn = next(r for r in rows if r["question_type"] == "YN" and r["config"] == "n3_m2_d81")
    other = next(r for r in rows if r["config"] == "n4_m4_d144")
    source = open_rows(built)  # a run-model header: the questions asked are every one of n3_m2_d81
    asked = RunHeader("model", "http://127.0.0.1:1/v1/chat/completions", 0.5, None, 3, "self-contained",
                      templates_sha256(), str(built), "test", ("n3_m2_d81",), source.manifest_sha256,
                      source.data_sha256(["n3_m2_d81"]), None)
    predictions = write_lines(tmp_path / "model.jsonl", [
        asked.line(),
        {"id": fr["id"], "prediction": f"Answer: {fr['answer']}", "sample": 0},
        {"id": fr["id"], "prediction": f"Answer: {fr['answer']}", "sample": 1},
        {"id": fr["id"], "prediction": "Answer: nowhere", "sample": 2},
        {"id": yn["id"], "prediction": "yes and no"},
        {"id": yn["id"], "prediction": "Answer: Ye", "sample": 1, "truncated": True},
        {"id": other["id"], "prediction": "Yes"},  # another configuration: ignored with --config n3_m2_d81
    ])
    scores, plots = tmp_path / "scores.json", tmp_path / "plots"
    argv = ["score", str(built), "--predictions", str(predictions), "--baseline", "checker", "--config", "n3_m2_d81",
            "--json", str(scores), "--plots", str(plots), "--pool", "--quiet"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    items = sum(r["config"] == "n3_m2_d81" for r in rows)  # the header names them all: the rest are no answer
    assert "## pooled: 1 configuration (" in table and "Pooled configurations: n3_m2_d81." in table
    assert "### Repeated answers" in table
    # three rounds, 5 answers: the FR item's parse in rounds 0 and 1, not in 2; the YN item's does not
    # parse in round 0 and is cut short in round 1. Counts are per round.
    assert f"| model | {items} | {items - 5 / 3:.1f} | 0.7 | 0.3 |" in table
    assert "| checker | %d | 0 | 0 | 0 | 100.0 [" % items in table
    assert "### pooled: 1 configuration by answer_set_size" in table and "chance (expected)" in table
    report = json.loads(scores.read_text())
    assert report["configs"] == ["n3_m2_d81"] and report["rounds"] == {"model": 3, "checker": 1}
    assert {example["id"] for example in report["unparseable"]["model"]} == {fr["id"], yn["id"]}
    group = report["groups"][0]
    frames = {"modality", "story_view", "frame_changes", "frame_angle", "naming", "shape_kind"}  # other kinds' only
    assert group["overall"]["systems"]["model"]["fr_vote"] > 0 and set(group["by"]) == set(BREAKDOWNS) - frames
    pngs = sorted(p.name for p in plots.glob("*.png"))
    assert "gaps.png" in pngs and any("answer_set_size" in name for name in pngs)
    first = {p.name: p.read_bytes() for p in plots.glob("*.png")}
    assert all(data.startswith(b"\x89PNG") for data in first.values())
    assert main(argv) == 0  # same scores, same bytes
    assert {p.name: p.read_bytes() for p in plots.glob("*.png")} == first


def test_a_simulated_model_shows_its_twin_gap(built, rows, tmp_path):
    predictions = write_lines(tmp_path / "noisy.jsonl", simulated_predictions(rows, {"story": 0.1, "twin": 0.6}))
    evaluation = evaluate(str(built), None, [predictions], [])
    twin = [g for g in evaluation.gaps if g.kind == "twin"]
    assert twin and all(g.result.difference > 0 for g in twin)
    assert all(g.result.low <= g.result.difference + 1e-9 and g.result.difference <= g.result.high + 1e-9 for g in twin)


def test_a_hub_snapshot_scores_like_the_built_folder(built, tmp_path):
    snapshot = tmp_path / "snapshot"
    shutil.copytree(built, snapshot, ignore=shutil.ignore_patterns(MANIFEST))
    assert not (snapshot / MANIFEST).exists()
    ours, theirs = (evaluate(str(place), None, [], ["majority", "random"]) for place in (built, snapshot))
    assert markdown(ours).replace(str(built), "X") == markdown(theirs).replace(str(snapshot), "X")
    assert open_rows(snapshot).default == open_rows(built).default == "n3_m2_d81"


def test_a_hub_snapshot_of_one_configuration_is_read_with_config(built, tmp_path, capsys):
    snapshot = tmp_path / "snapshot"  # downloaded in part: the card and one configuration's files
    shutil.copytree(built / "data" / "n3_m2_d81", snapshot / "data" / "n3_m2_d81")
    shutil.copy(built / "README.md", snapshot)
    ours, theirs = (evaluate(str(place), "n3_m2_d81", [], ["majority"]) for place in (built, snapshot))
    assert markdown(ours).replace(str(built), "X") == markdown(theirs).replace(str(snapshot), "X")
    for chosen, absent in ((None, "n4_m4_d144 and 2 more"), ("n3_m2_d81,vision_n3_m2_d81", "vision_n3_m2_d81")):
        with pytest.raises(RoomspaceError) as refused:
            open_rows(snapshot).choose(chosen)
        assert str(refused.value) == (f"{snapshot}: no Parquet files of configuration {absent} are here; download "
                                      "them, or choose among those it holds with --config: n3_m2_d81")
    assert main(["score", str(snapshot), "--baseline", "majority", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "choose among those it holds with --config: n3_m2_d81" in err


def test_a_hub_id_offline_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert main(["score", "someone/roomspace-100", "--baseline", "checker", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot get the dataset someone/roomspace-100" in err


def test_a_truncated_shard_and_an_unknown_configuration_are_refused(built, tmp_path, capsys):
    damaged = tmp_path / "damaged"
    shutil.copytree(built, damaged)
    shard = next((damaged / "data" / "n4_m4_d144").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-100])
    with pytest.raises(RoomspaceError, match="test-00000.parquet: its sha256 differs from the one manifest.json lists"):
        evaluate(str(damaged), "n4_m4_d144", [], ["checker"])
    (damaged / MANIFEST).unlink()  # a Hub snapshot: no checksums to hold it to, and the file does not read
    with pytest.raises(RoomspaceError, match="not a readable Parquet file"):
        evaluate(str(damaged), "n4_m4_d144", [], ["checker"])
    with pytest.raises(RoomspaceError, match="has no configuration n5_m4_d144"):
        evaluate(str(built), "n5_m4_d144", [], ["checker"])
    with pytest.raises(RoomspaceError, match="nothing to score"):
        evaluate(str(built), None, [], [])
    assert main(["score", str(tmp_path / "nothing"), "--baseline", "checker"]) == 1
    assert "neither a folder nor a Hub dataset id" in capsys.readouterr().err


def test_a_file_without_a_header_is_scored_on_the_questions_it_answers(built, rows, tmp_path, capsys):
    """Issue 43: a file of a few answers and no run-model header (an inspect export, a hand-made file)
    is scored on the questions it answers, and stderr says how many of which configurations; it is
    never averaged over every question of the build. Where --limit names a sample, the sample's
    questions it leaves out still count as no answer (a model that failed to answer is wrong)."""
    from pipeline.evaluate.sample import Sample, sample_ids

    config = "n4_m4_d144"
    ours = [r for r in rows if r["config"] == config]
    answered = ours[:10]
    right = write_lines(tmp_path / "inspect10.jsonl",
                        [{"id": r["id"], "prediction": f"Answer: {r['answer']}"} for r in answered])
    for chosen in ([], ["--config", config], ["--config", f"n3_m2_d81,{config}"]):
        assert main(["score", str(built), "--predictions", str(right), "--baseline", "majority", *chosen,
                     "--quiet"]) == 0
        printed = capsys.readouterr()
        assert f"## {config} (10 items)" in printed.out
        assert [kind for kind in KINDS if f"## {kind} (" in printed.out] == [config]  # nothing it did not answer
        assert "| inspect10 | 10 | 0 | 0 | 0 | 100.0 [" in printed.out and "| majority | 10 |" in printed.out
        (warning,) = printed.err.splitlines()
        assert f"{right} has no header" in warning and f"{config} 10 of {len(ours)}" in warning
        assert "--limit N --seed S" in warning
    # A sample named on the command line: its questions the file leaves out are no answer, and it says so.
    drawn = sample_ids(open_rows(built), [config], Sample(12, 0))
    part = write_lines(tmp_path / "part.jsonl", [{"id": item, "prediction": "Answer: Yes"} for item in drawn[:5]])
    assert main(["score", str(built), "--predictions", str(part), "--config", config, "--limit", "12", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert f"## {config} (12 items)" in printed.out and "| part | 12 | 7 | " in printed.out
    (warning,) = printed.err.splitlines()
    assert f"{part} answers 5 of the 12 questions of the sample --limit 12 --seed 0" in warning
    assert "no answer" in warning
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "without a header" in " ".join(capsys.readouterr().out.split())


def test_each_bounded_reasoner_answers_exactly_the_questions_at_or_below_its_level(built, rows):
    evaluation = evaluate(str(built), None, [], ["r0", "r1", "r2"])
    for group in evaluation.groups:
        chosen = [r for r in rows if r["config"] == group.name]
        on_ladder = [r for r in chosen if r["level"] is not None]
        assert on_ladder and all(r["level"] is None for r in chosen if not r["facts"])
        fr = [r for r in chosen if r["question_type"] == "FR"]
        yn = [r for r in chosen if r["question_type"] == "YN"]
        for k, (name, reasoner) in enumerate(zip(("r0", "r1", "r2"), ("stated", "chain", "local"))):
            m = group.overall.systems[name]
            assert m.no_answer == len(chosen) - len(on_ladder)  # off the ladder (rcc8, image only): no answer
            # FR exact exactly where the row's level is k or less, YN wrong exactly where R_k keeps a No's candidate:
            # counted from the rows, independent of the scorer's reading of the answers
            at_most_k = sum(r["level"] is not None and r["level"] <= k for r in fr)
            assert m.fr_exact.value * len(fr) == pytest.approx(at_most_k)
            assert all((r["level"] <= k) == (r["bounded"][reasoner] == r["answer_set"])
                       for r in fr if r["level"] is not None)
            right = sum(r["level"] is not None and (r["candidate"] in r["bounded"][reasoner]) == (r["answer"] == "Yes")
                        for r in yn)
            assert m.yn_accuracy.value * len(yn) == pytest.approx(right)
        assert set(group.by["level"]) <= {0, 1, 2, 3, None}


def test_predictions_of_another_split_name_split_and_the_headers_split(built, rows, tmp_path):
    source = open_rows(built)
    header = RunHeader("model", "http://127.0.0.1:1/v1/chat/completions", 0.0, None, 1, "self-contained",
                       templates_sha256(), str(built), "validation", ("n3_m2_d81",), source.manifest_sha256,
                       source.data_sha256(["n3_m2_d81"]), None)
    other = write_lines(tmp_path / "validation.jsonl", [header.line(), {"id": "s0-valid-only", "prediction": "Yes"}])
    with pytest.raises(RoomspaceError, match="header says it answers the validation split; score it with --split "
                                             "validation"):
        evaluate(str(built), "n3_m2_d81", [other], [])
    bare = write_lines(tmp_path / "bare.jsonl", [{"id": "s0-valid-only", "prediction": "Yes"}])
    with pytest.raises(RoomspaceError, match=r"test split \(if the file answers another split, name it with --split"):
        evaluate(str(built), "n3_m2_d81", [bare], [])


def test_the_best_constant_row_is_not_named_majority_and_one_type_baselines_leave_yn_fr_tables(built):
    report = markdown(evaluate(str(built), "n3_m2_d81", [], ["majority", "regions", "direct"]))
    assert "| best constant answer set (in hindsight) |" in report and "majority (best constant)" not in report
    assert "YN best constant" in report and "YN majority |" not in report
    assert "| majority |" in report  # the baseline keeps its name: a system, not the reference
    assert "| regions |" not in report and "| direct |" not in report  # no "no answer" column of every question
    assert "regions and direct answer no YN or FR question" in report


def test_audit_says_why_plans_have_no_lines():
    from pipeline.evaluate.audit import unaudited

    (plans,) = unaudited(["n5_m4_d144", "object_tasks_n5_m4_d144", "map_n5_m4_d144"])  # maps: the blind map's table
    assert "object_tasks_n5_m4_d144 asks plans, which have no blind baseline" in plans
    assert "score --baseline direct" in plans


def test_the_readme_promises_each_stratum_its_share_not_each_configuration(built):
    from collections import Counter

    from pipeline.evaluate.sample import STRATUM, Sample, sample_ids

    source = open_rows(built)
    configs = ["n3_m2_d81", "twin_n3_m2_d81"]
    strata = {tuple(r.get(name) for name in STRATUM) for r in source.rows(configs, ["id", *STRATUM])}
    limit = len(strata) // 2 + 1  # fewer questions than strata: which strata get one is seeded
    chosen = set(sample_ids(source, configs, Sample(limit, 0)))
    counts = Counter(r["config"] for r in source.rows(configs, ["id", "config"]) if r["id"] in chosen)
    assert sum(counts.values()) == limit
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert "each stratum (one\n  configuration, setting, view, question type and modality together) within one" in readme
    assert "every configuration,\n  setting, view, question type and modality in proportion (each within one" not in readme


def test_results_break_down_by_the_fields_every_row_carries(built, rows):
    from collections import Counter

    from pipeline.evaluate.score import tightness_bin

    evaluation = evaluate(str(built), "n4_m4_d144", [], ["checker"])
    (group,) = evaluation.groups
    chosen = [r for r in rows if r["config"] == "n4_m4_d144"]
    for key in ("room_type", "path_decides", "layout_decides"):
        assert {value: part.systems["checker"].items for value, part in group.by[key].items()} == \
            Counter(r[key] for r in chosen)
    bins = group.by["tightness"]
    assert {value: part.systems["checker"].items for value, part in bins.items()} == \
        Counter(tightness_bin(r["tightness"]) for r in chosen)
    assert list(bins) == sorted(bins) and all(value == "0 (no facts)" or len(value) == 7 for value in bins)
    assert tightness_bin(0.0) == "0 (no facts)" and tightness_bin(0.75) == "0.7-0.8" and tightness_bin(1.0) == "0.9-1.0"
    report = markdown(evaluation)
    for key in ("room_type", "tightness", "path_decides", "layout_decides"):
        assert f"### n4_m4_d144 by {key}" in report


def test_two_systems_are_compared_paired_per_configuration_and_breakdown(built, rows, tmp_path, capsys):
    from pipeline.evaluate.stats import mcnemar_exact

    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024) and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 5) == mcnemar_exact(5, 3) == pytest.approx(2 * (1 + 8 + 28 + 56) / 256)
    config = "n4_m4_d144"
    evaluation = evaluate(str(built), config, [], ["checker", "always-yes"], seed=3)
    found = {(c.breakdown, c.value, c.measure): c for c in evaluation.comparisons}
    yn = [r for r in rows if r["config"] == config and r["question_type"] == "YN"]
    right = sum(r["answer"] == "Yes" for r in yn)  # always-yes is right where Yes is
    overall = found["overall", "", "YN accuracy"]
    assert (overall.first, overall.second, overall.items) == ("checker", "always-yes", len(yn))
    assert (overall.first_only, overall.second_only) == (len(yn) - right, 0)
    assert overall.p == pytest.approx(mcnemar_exact(len(yn) - right, 0))
    assert overall.difference == pytest.approx(1 - right / len(yn)) and overall.low <= overall.difference <= overall.high
    jaccard = found["overall", "", "FR Jaccard"]
    assert jaccard.test == "paired bootstrap over rooms" and jaccard.rooms == ROOMS and 0 <= jaccard.p <= 1
    assert {("view", "top_down", "FR exact"), ("room_type", next(iter(evaluation.groups[0].by["room_type"])),
                                               "FR F1 (items)")} <= set(found)
    assert evaluation.comparisons == evaluate(str(built), config, [], ["checker", "always-yes"], seed=3).comparisons
    scores = tmp_path / "scores.json"
    assert main(["score", str(built), "--config", config, "--baseline", "checker", "--baseline", "always-yes",
                 "--quiet", "--json", str(scores)]) == 0
    assert f"### {config}: paired comparisons of the systems" in capsys.readouterr().out
    written = json.loads(scores.read_text())["comparisons"]
    assert {"first", "second", "breakdown", "value", "measure", "difference", "low", "high", "p"} <= set(written[0])
    assert evaluate(str(built), config, [], ["checker"]).comparisons == []  # one system: nothing to compare
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "McNemar's exact test for YN accuracy and FR exact" in " ".join(capsys.readouterr().out.split())


def test_score_json_holds_every_answer_per_question_and_system(built, rows, tmp_path):
    config = "n3_m2_d81"
    chosen = [r for r in rows if r["config"] == config]
    fr = next(r for r in chosen if r["question_type"] == "FR")
    yn = next(r for r in chosen if r["question_type"] == "YN")
    predictions = write_lines(tmp_path / "model.jsonl", [
        {"id": fr["id"], "prediction": f"Answer: {fr['answer']}"}, {"id": yn["id"], "prediction": "maybe"}])
    scores = tmp_path / "scores.json"
    assert main(["score", str(built), "--config", config, "--predictions", str(predictions), "--baseline", "checker",
                 "--quiet", "--json", str(scores)]) == 0
    questions = json.loads(scores.read_text())["questions"]
    by = {(q["id"], q["system"]): q for q in questions}
    assert len(questions) == 2 * 2  # a file without a header: scored on the two questions it answers, two systems
    right = by[fr["id"], "model"]
    assert right["answer"] == f"Answer: {fr['answer']}" and right["parsed"] == list(fr["answer_set"])
    assert (right["config"], right["question_type"], right["status"], right["correct"], right["jaccard"]) == \
        (config, "FR", "scored", True, 1.0)
    wrong = by[yn["id"], "model"]
    assert (wrong["answer"], wrong["parsed"], wrong["status"], wrong["correct"]) == ("maybe", None, "unparseable", False)
    assert by[yn["id"], "checker"]["parsed"] == yn["answer"] and by[yn["id"], "checker"]["correct"]
    assert evaluate(str(built), config, [predictions], []).questions == []  # kept only when asked (--json)
