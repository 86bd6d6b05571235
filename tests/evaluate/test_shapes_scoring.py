"""The shapes kind scored as SRT4LLM reports it: a loopback model answers every row under each prompt
strategy (`run-model --style simple|guiding|example`, two samples each), and `score` gives accuracy by
relation category and shape kind per strategy, with the SD over rounds."""

import json
import statistics
import zlib
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from loopback import SampledChat

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS
from pipeline.text.prompts import row_prompt

STRATEGIES = ("simple", "guiding", "example")
BASE = Config(5, 4, 12)
CONFIG = KINDS["shapes"].config_name(BASE)


def way(row: dict, style: str, sample: int) -> int:
    """How the loopback model answers a row under a strategy: right (0), another option (1) or a hedge (2)."""
    return zlib.crc32(f"{row['id']}/{style}/{sample}".encode()) % 3


def answer(row: dict, style: str, sample: int) -> str:
    chosen = way(row, style, sample)
    if chosen == 0:
        return "Reading the coordinates.\nAnswer: " + row["answer"]
    if chosen == 1:
        return "Answer: " + next(option for option in row["options"] if option != row["answer"])
    return "Perhaps " + row["answer"] + "."


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("shapes") / "roomspace-shapes-test"
    build(BuildPlan.asked(out.name, SCENE_SEED, 4, (), {"shapes": [BASE]}), scenes, out, workers=1, progress=False)
    return out


def test_each_strategy_through_run_model_and_score(built, tmp_path, capsys):
    rows = [row for table in open_rows(built).batches(CONFIG) for row in table.to_pylist()]
    asked = {row_prompt(row, style): (row, style) for row in rows for style in STRATEGIES}
    model = SampledChat(lambda prompt, sample: answer(*asked[prompt], sample))
    files = []
    try:
        for style in STRATEGIES:
            preds = tmp_path / f"{style}.jsonl"
            assert main(["run-model", str(built), "--base-url", model.root, "--model", "stub", "--out",
                         str(preds), "--style", style, "--samples", "2", "--temperature", "0.5", "--concurrency", "1",
                         "--quiet"]) == 0  # one at a time: the samples reach the model in order
            files += ["--predictions", str(preds), "--name", style]
        report = tmp_path / "scores.json"
        assert main(["score", str(built), *files, "--baseline", "checker", "--json", str(report), "--quiet"]) == 0
    finally:
        model.close()
    assert sum(model.asked.values()) == 2 * len(STRATEGIES) * len(rows)
    printed = capsys.readouterr().out
    assert "accuracy by relation category and shape kind" in printed
    (kind,) = json.loads(report.read_text(encoding="utf-8"))["kinds"]
    cells = {(cell["category"], cell["shape_kind"]): cell for cell in kind["cells"]}
    for (category, shape_kind), cell in cells.items():
        chosen = [row for row in rows if row["setting"] == category and shape_kind in ("all", row["shape_kind"])]
        assert cell["items"] == len(chosen) > 0
        assert cell["systems"]["checker"]["value"] == 1.0
        for style in STRATEGIES:
            rounds = [sum(way(row, style, sample) == 0 for row in chosen) / len(chosen) for sample in (0, 1)]
            accuracy = cell["systems"][style]
            assert accuracy["value"] == pytest.approx(sum(rounds) / 2)
            assert accuracy["round_sd"] == pytest.approx(statistics.stdev(rounds))
        answers = [row["answer"] for row in chosen]
        assert cell["majority"] == pytest.approx(max(map(answers.count, answers)) / len(answers))
    assert {shape for _, shape in cells} >= {"rectangle", "polygon", "all"}
