"""The composition kind scored as Cohn and Blackwell score it: relation names parsed with converse
arguments accepted, the Jaccard index per answer, the guessing baseline, and a loopback model run
through `run-model` and `score` with repeated samples."""

import json
import zlib
from itertools import combinations
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from loopback import SampledChat

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.answers import converses, parse_answer
from pipeline.evaluate.kind_reports import expected_guess
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.score import UNPARSEABLE, ScoreRow, score_item
from pipeline.spatial.calculi import rcc8_composition, rcc8_neighbourhood
from pipeline.spatial.topology import RCC8
from pipeline.text.configs import parse_configs
from pipeline.text.kinds import KINDS

NAMES = dict(zip(RCC8, RCC8))
BASE = parse_configs("n5_m4_d144")
CONFIG = KINDS["composition"].config_name(BASE[0])


def table_row(answer_set, options=RCC8, codes=RCC8, arguments=("x", "z")) -> ScoreRow:
    return ScoreRow("q", "s0-000000", "composition_n5_m4_d144", "rcc8_composition", "top_down", "FR", "",
                    tuple(answer_set), None, tuple(options), 5, 4, 12, 2, len(answer_set), None, None, None, None, None,
                    naming="eponymous", option_codes=tuple(codes), arguments=arguments)


def test_the_papers_half_right_answer_scores_three_quarters():
    """Their repeat 13 of DC o DC: every relation named, two of them as inverses written the other way round."""
    text = ("In this scenario, all possible RCC-8 relations between x and z are possible. Answer: DC(x,z), EC(x,z), "
            "PO(x,z), TPP(x,z), NTPP(x,z), TPPI(z,x), NTPPi(z,x), EQ(x,z)")
    scored = score_item(table_row(RCC8), text)
    assert scored.jaccard[0, 0] == pytest.approx(6 / 8) and not scored.correct[0, 0]


@pytest.mark.parametrize("text, codes", [
    ("### Answer: PO, TPP", ("PO", "TPP")),
    ("Answer: TPPi(z, x)", ("TPP",)),  # the converse, written from z: TPP(x, z)
    ("Answer: DC(z, x), EC(x, z)", ("DC", "EC")),  # symmetric relations either way round
    ("Answer: ntppi(x, z)", ("NTPPi",)),  # three letters or more: any case
    ("Answer: po, DC", ("DC",)),  # a short name only as written
    ("DC is out. Answer: EC", ("EC",)),  # only what follows the last "Answer:"
])
def test_relation_names_and_their_arguments(text, codes):
    assert parse_answer(text, "FR", NAMES, ("x", "z")).relations == codes


@pytest.mark.parametrize("text", ["Answer: EC(x, y)", "Answer: not DC", "Answer: perhaps PO", "Answer: none"])
def test_a_relation_between_other_things_or_a_hedge_does_not_parse(text):
    assert score_item(table_row(("DC",)), text).status[0, 0] == UNPARSEABLE


def test_invented_names_and_grounded_arguments():
    anonymous = dict(zip(["fablon", "narkil", "quonty", "womfer", "zorpin", "lufrex", "dregly", "piflox"], RCC8))
    assert parse_answer("Answer: Fablon, dregly(z, x)", "FR", anonymous, ("x", "z")).relations == ("DC", "TPP")
    assert parse_answer("Answer: DC, EC", "FR", anonymous, ("x", "z")).problem == "names no relation"
    grounded = ("chair 2", "floor")
    assert parse_answer("Answer: NTPPi(the floor, Chair 2)", "FR", NAMES, grounded).relations == ("NTPP",)


def test_the_guessing_baseline_is_the_papers():
    """The expected Jaccard index of a uniformly random non-empty set of the options, against every set counted
    out; over the 7 x 7 composition table it is 0.302 and over the neighbourhoods 0.260 (the paper: about 0.31
    and 0.26)."""
    for options, true in ((8, 1), (8, 5), (9, 3), (8, 8)):
        truth = set(range(true))
        guesses = [set(s) for size in range(1, options + 1) for s in combinations(range(options), size)]
        assert expected_guess(options, true) == pytest.approx(
            sum(len(g & truth) / len(g | truth) for g in guesses) / len(guesses))
    cells = [cell for premises, cell in rcc8_composition().items() if "EQ" not in premises]
    assert sum(expected_guess(8, len(cell)) for cell in cells) / 49 == pytest.approx(0.302, abs=5e-4)
    following = rcc8_neighbourhood().values()
    assert sum(expected_guess(8, len(cell)) for cell in following) / 8 == pytest.approx(0.260, abs=5e-4)


def jaccard(named: set, truth: set) -> float:
    return len(named & truth) / len(named | truth)


class Model:
    """How a loopback model answers each row, by a hash of it and of the sample asked: right, right with
    every relation written as its converse from the other end, one option, or a hedge."""

    @staticmethod
    def way(row: dict, sample: int) -> int:
        return zlib.crc32(f"{row['id']}/{sample}".encode()) % 4

    @classmethod
    def answer(cls, row: dict, sample: int) -> str:
        names = dict(zip(row["option_codes"], row["options"]))
        x, z = row["arguments"]
        way = cls.way(row, sample)
        if way == 0:
            return "Answer: " + row["answer"]
        if way == 1:
            return "Answer: " + ", ".join(f"{names[converses()[code]]}({z}, {x})" for code in row["answer_set"])
        if way == 2:
            return "Answer: " + row["options"][0]
        return "Perhaps " + row["options"][0] + "."

    @classmethod
    def score(cls, row: dict, sample: int) -> float:
        way = cls.way(row, sample)
        return 1.0 if way < 2 else jaccard({row["option_codes"][0]}, set(row["answer_set"])) if way == 2 else 0.0


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("composition") / "roomspace-composition-test"
    build(BuildPlan.asked(out.name, SCENE_SEED, 2, (), {"composition": BASE}), scenes, out, workers=1, progress=False)
    return out


def test_a_loopback_model_through_run_model_and_score(built, tmp_path, capsys):
    rows = list(open_rows(built).rows([CONFIG]))
    by_prompt = {row["prompt"]: row for row in rows}
    model = SampledChat(lambda prompt, sample: Model.answer(by_prompt[prompt], sample))
    try:
        preds = tmp_path / "model.jsonl"
        assert main(["run-model", str(built), "--base-url", model.root, "--model", "stub", "--out", str(preds),
                     "--samples", "2", "--temperature", "0.5", "--concurrency", "1", "--quiet"]) == 0  # samples in order
        assert sum(model.asked.values()) == 2 * len(rows)
        report = tmp_path / "scores.json"
        assert main(["score", str(built), "--predictions", str(preds), "--name", "model", "--baseline", "checker",
                     "--json", str(report),
                     "--quiet"]) == 0
    finally:
        model.close()
    printed = capsys.readouterr().out
    assert "Jaccard index by setting and naming" in printed and "eponymous - anonymous" in printed
    (kind,) = json.loads(report.read_text(encoding="utf-8"))["kinds"]
    cells = {(cell["setting"], cell["naming"]): cell for cell in kind["cells"]}
    assert set(cells) == {(row["setting"], row["naming"]) for row in rows}
    for (setting, naming), cell in cells.items():
        chosen = [row for row in rows if (row["setting"], row["naming"]) == (setting, naming)]
        scores = [Model.score(row, sample) for row in chosen for sample in (0, 1)]
        per_round = [sum(Model.score(row, sample) for row in chosen) / len(chosen) for sample in (0, 1)]
        stub, checker = cell["systems"]["model"], cell["systems"]["checker"]
        assert cell["items"] == len(chosen) and stub["mean"] == pytest.approx(sum(scores) / len(scores), abs=1e-6)
        assert stub["low"] <= stub["mean"] <= stub["high"]
        assert stub["round_sd"] == pytest.approx(abs(per_round[0] - per_round[1]) / 2 ** 0.5, abs=1e-6)
        assert checker["mean"] == checker["low"] == checker["high"] == 1.0
        assert cell["guess"] == pytest.approx(sum(expected_guess(len(row["options"]), len(row["answer_set"]))
                                                  for row in chosen) / len(chosen))
    gaps = {(gap["setting"], gap["system"]): gap["result"] for gap in kind["gaps"]}
    for setting in {row["setting"] for row in rows}:
        checker, stub = gaps[setting, "checker"], gaps[setting, "model"]
        assert checker["difference"] == checker["low"] == checker["high"] == 0
        assert stub["low"] <= stub["difference"] <= stub["high"] and stub["pairs"] == cells[setting, "anonymous"]["items"]
