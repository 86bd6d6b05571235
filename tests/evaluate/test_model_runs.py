"""run-model and score as a researcher runs a real model (issue 33), against a model served on 127.0.0.1
that answers slowly and sometimes loops: a seeded stratified sample, answers kept as they come (a
killed run is scored on what it has, a re-run completes it), a default token cap, the answers'
lengths, systems named by their model, a header saying what made the answers, and a build that no
longer matches its manifest refused.

Slowness is a wait on an event, never a clock: the server holds chosen answers until the test lets
them go, and the test acts when the server says which requests it is holding."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import zlib
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED
from loopback import LoopbackChat, completion

from pipeline import __version__
from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import MANIFEST
from pipeline.evaluate.model_runner import DEFAULT_MAX_TOKENS
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import STRATUM, SAMPLE_COLUMNS, Sample, sample_ids, sample_order
from pipeline.files import file_sha256
from pipeline.text.configs import parse_configs

BASE = "n3_m2_d81"
TWIN = f"twin_{BASE}"
OTHER = "n4_m4_d144"
ROOMS = 3
CONTEXT = 4096  # tokens the served model loops to when no max_tokens is sent: its whole context
WAIT = 60.0  # seconds any wait may take before the test fails (none takes long unless something is broken)
# Seconds run-model may take to exit after SIGINT, its requests hanging: a bound no load reaches (alone it
# exits in 0.1-0.2 s) that still tells the fix apart from waiting for the requests' REQUEST_TIMEOUT.
STOPS = 60.0
REQUEST_TIMEOUT = "3600"
REPO = Path(__file__).resolve().parents[2]


def loops(item_id: str) -> bool:
    """About one prompt in five sends the model into a repetition loop."""
    return zlib.crc32(item_id.encode()) % 5 == 0


class SlowLoopingModel:
    """/v1/chat/completions on 127.0.0.1: the right answer after a line of reasoning, except that a
    looping prompt repeats itself until max_tokens (or CONTEXT without one), with the completion
    tokens counted in `usage`; the prompts in `held` are not answered until `release` is set."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = {row["prompt"]: row for row in rows}
        self.held: set[str] = set()  # ids whose answers wait for `release`
        self.release = threading.Event()
        self.holding = threading.Condition()
        self.waiting: list[str] = []  # ids of the requests being held now
        self.bodies: list[dict] = []
        self.answered: list[str] = []  # ids, in the order their answers were sent
        self.loopback = LoopbackChat(self.respond)
        self.url = self.loopback.root + "/v1"

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        row = self.rows[body["messages"][0]["content"]]
        with self.holding:
            self.bodies.append(body)
            if row["id"] in self.held and not self.release.is_set():
                self.waiting.append(row["id"])
                self.holding.notify_all()
        if row["id"] in self.held:
            self.release.wait(WAIT)
        if loops(row["id"]):
            tokens = body.get("max_tokens", CONTEXT)
            reply = completion(body, "Let me think. " + "The lamp is north of the bed. " * (tokens // 8), "length")
        else:
            text = f"The facts decide it.\nAnswer: {row['answer']}"
            tokens = len(text.split())
            reply = completion(body, text)
        reply["usage"] = {"prompt_tokens": 100, "completion_tokens": tokens, "total_tokens": 100 + tokens}
        with self.holding:
            self.answered.append(row["id"])
        return 200, reply

    def wait_holding(self, count: int, run: subprocess.Popen | None = None) -> None:
        """Until `count` held requests wait (each worker then has written every answer it had before)."""
        with self.holding:
            assert self.holding.wait_for(lambda: len(self.waiting) >= count or (run and run.poll() is not None), WAIT)
        assert run is None or run.poll() is None, run.stderr.read()

    def close(self) -> None:
        self.release.set()
        self.loopback.close()


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "roomspace-runs"
    configs = parse_configs(BASE)
    build(BuildPlan.asked(out.name, SCENE_SEED, ROOMS, configs, {"twin": configs}), scenes, out, workers=1,
          progress=False)
    return out


@pytest.fixture(scope="module")
def rebuilt(scenes, tmp_path_factory) -> Path:
    """The same rooms built again with another configuration beside and a shard per room."""
    out = tmp_path_factory.mktemp("runs") / "roomspace-rebuilt"
    build(BuildPlan.asked(out.name, SCENE_SEED, ROOMS, parse_configs(f"{OTHER},{BASE}"), shard_rooms=1), scenes, out,
          workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rows(built) -> list[dict]:
    source = open_rows(built)
    return list(source.rows(source.configs, ["prompt", "answer", *SAMPLE_COLUMNS]))


@pytest.fixture
def model(rows):
    served = SlowLoopingModel(rows)
    yield served
    served.close()


def answers(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[1:-1]]


def header(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").split("\n")[0])["roomspace_predictions"]


def run_model(built: Path, model: SlowLoopingModel, out: Path, *extra: str) -> list[str]:
    return ["run-model", str(built), "--base-url", model.url, "--model", "smol", "--out", str(out), "--quiet", *extra]


def test_a_sample_is_stratified_seeded_and_the_same_on_any_build_of_the_rooms(built, rebuilt, rows, capsys):
    source = open_rows(built)
    ours = [row for row in rows if row["config"] == BASE]
    for limit in (10, 34, 50):
        assert main(["prompts", str(built), "--config", BASE, "--limit", str(limit), "--seed", "3"]) == 0
        printed = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
        drawn = sample_ids(source, [BASE], Sample(limit, 3))
        assert sorted(printed) == sorted(drawn) and len(drawn) == limit
        # the same ids from a build of the same rooms with another configuration and another shard size
        assert sample_ids(open_rows(rebuilt), [BASE], Sample(limit, 3)) == drawn
        # every stratum its share, to within one question
        sizes = Counter(tuple(row.get(k) for k in STRATUM) for row in ours)
        taken = Counter(tuple(row.get(k) for k in STRATUM) for row in ours if row["id"] in set(drawn))
        assert all(abs(taken[s] - limit * size / len(ours)) < 1 for s, size in sizes.items())
    order = sample_order(ours, 3)
    assert order == sample_order(list(reversed(ours)), 3)  # not the row order
    assert order[:10] == sample_ids(source, [BASE], Sample(10, 3))  # a larger sample keeps a smaller one
    assert order != sample_order(ours, 4)
    # a question and its twin rank alike: a sample of whole levels of both keeps every pair
    both = sample_ids(source, [BASE, TWIN], Sample(2 * 34 * 2, 3))
    questions = Counter(item.replace(TWIN, BASE) for item in both)
    assert set(questions.values()) == {2}


def test_a_killed_run_is_scored_on_what_it_has_and_a_rerun_completes_it(built, model, tmp_path, capsys):
    """The whole path of issue 33 with a subprocess killed (SIGKILL) while two answers are held."""
    limit, seed = 40, 3
    drawn = sample_ids(open_rows(built), [BASE], Sample(limit, seed))
    in_rows = [row["id"] for row in open_rows(built).rows([BASE], ["id"]) if row["id"] in set(drawn)]
    first, later = in_rows[0], in_rows[20]
    model.held = {first, later}
    preds = tmp_path / "smol.jsonl"
    argv = run_model(built, model, preds, "--config", BASE, "--limit", str(limit), "--seed", str(seed),
                     "--concurrency", "2")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    run = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *argv], cwd=REPO, env=env, stderr=subprocess.PIPE,
                           text=True)
    try:
        # One worker waits on the first prompt, the other answers every prompt up to the later held one.
        model.wait_holding(2, run)
        kept = answers(preds)
        assert [p["id"] for p in kept] == model.answered == in_rows[1:20]  # in the order they came
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(WAIT)
        run.stderr.close()
    made = header(preds)
    assert made == {
        "model": "smol", "server": model.url + "/chat/completions", "temperature": 0.0, "max_tokens": DEFAULT_MAX_TOKENS,
        "samples": 1, "style": "self-contained", "templates_sha256": made["templates_sha256"],
        "source": str(built), "split": "test", "configs": [BASE], "manifest_sha256": file_sha256(built / MANIFEST),
        "data_sha256": open_rows(built).data_sha256([BASE]), "sample": {"limit": limit, "seed": seed},
        "roomspace": __version__}
    assert all(body["max_tokens"] == DEFAULT_MAX_TOKENS for body in model.bodies)
    loops_kept = sum(loops(p["id"]) for p in kept)
    assert loops_kept and all(p["truncated"] and p["tokens"] == DEFAULT_MAX_TOKENS for p in kept if loops(p["id"]))

    # Scored on what it has: the sample's answered questions, named by the model, said to be unfinished.
    assert main(["score", str(built), "--predictions", str(preds), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert f"## {BASE} ({len(kept)} items)" in printed.out
    assert f"| smol | {len(kept)} | 0 | 0 | {loops_kept} |" in printed.out
    (warning,) = printed.err.splitlines()
    assert f"answers {len(kept)} of the {limit} questions it asked (an unfinished run" in warning

    # The same command again completes it: only what is missing is asked, and the file ends sorted.
    model.release.set()
    asked_before = len(model.bodies)
    assert main(argv) == 0
    assert f"{limit} prompts (the sample --limit {limit} --seed {seed})" in capsys.readouterr().out
    assert len(model.bodies) - asked_before == limit - len(kept)
    final = answers(preds)
    assert [p["id"] for p in final] == in_rows and header(preds) == made
    loops_all = sum(loops(item) for item in in_rows)
    assert sum(p.get("truncated", False) for p in final) == loops_all

    # Scored as that sample: reference points and baselines on its ids; lengths beside the truncated answers.
    assert main(["score", str(built), "--predictions", str(preds), "--baseline", "majority", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    table = printed.out
    assert f"On the sample --limit {limit} --seed {seed}" in table and f"## {BASE} ({limit} items)" in table
    assert f"| majority | {limit} |" in table
    lengths = next(line for line in table.splitlines() if line.startswith("| smol | ") and line.endswith(
        f"| {DEFAULT_MAX_TOKENS} |"))
    assert f"| {DEFAULT_MAX_TOKENS} | {loops_all} | {DEFAULT_MAX_TOKENS} |" in lengths  # max, truncated, max_tokens
    sampled = evaluate(str(built), BASE, [], ["majority"], seed=seed, sample=Sample(limit, seed))
    recorded = evaluate(str(built), None, [preds], ["majority"], seed=seed)
    assert [group.name for group in recorded.groups] == [BASE]  # the twins were not asked
    assert recorded.groups[0].overall.reference == sampled.groups[0].overall.reference
    assert recorded.groups[0].overall.systems["majority"] == sampled.groups[0].overall.systems["majority"]
    smol = recorded.groups[0].overall.systems["smol"]
    assert smol.tokens.max == DEFAULT_MAX_TOKENS and smol.tokens.answers == limit and smol.truncated == loops_all
    yn = [item for item in in_rows if item.endswith("-YN")]
    assert smol.yn_accuracy.value == sum(not loops(item) for item in yn) / len(yn)  # every answer right but the loops
    assert recorded.runs["smol"].model == "smol" and recorded.sample == Sample(limit, seed)


def test_ctrl_c_stops_a_run_at_once_keeping_what_came(built, model, tmp_path, capsys):
    """Issue 43: SIGINT 20 s into a run against a server that never answered exited 101 s later, at the
    request timeout. Two requests hang (the server holds them); SIGINT must end the process within
    STOPS seconds, with every answer that came kept in whole lines and a re-run asking only the rest."""
    limit, seed = 40, 3
    drawn = sample_ids(open_rows(built), [BASE], Sample(limit, seed))
    in_rows = [row["id"] for row in open_rows(built).rows([BASE], ["id"]) if row["id"] in set(drawn)]
    model.held = {in_rows[0], in_rows[20]}
    preds = tmp_path / "smol.jsonl"
    cache = tmp_path / "smol.jsonl.cache.jsonl"
    argv = run_model(built, model, preds, "--config", BASE, "--limit", str(limit), "--seed", str(seed),
                     "--concurrency", "2", "--timeout", REQUEST_TIMEOUT)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    # SIGINT as a terminal delivers it, to a process whose disposition is the default: an ignored SIGINT is
    # inherited through exec, and a suite started in the background (`make test &` from a script: a shell
    # without job control starts such a command with SIGINT ignored) would hand it to run-model
    inherited = signal.getsignal(signal.SIGINT)
    run = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *argv], cwd=REPO, env=env, stderr=subprocess.PIPE,
                           text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    error = ""
    try:
        model.wait_holding(2, run)  # both workers wait on a request the server never answers
        run.send_signal(signal.SIGINT)
        # communicate, not wait: its stderr is read as it comes, so a full pipe cannot hold the run
        _, error = run.communicate(timeout=STOPS)
    except subprocess.TimeoutExpired:
        run.kill()
        _, error = run.communicate(timeout=WAIT)
        pytest.fail(f"run-model still running {STOPS:g} s after SIGINT (this process's SIGINT handler: {inherited}); "
                    f"its stderr ended: {error[-2000:]}")
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=WAIT)
    assert run.returncode == 130 and "stopped by SIGINT" in error, error
    for written in (preds, cache):  # whole lines only: each parses, the last ends
        text = written.read_text(encoding="utf-8")
        assert text.endswith("\n") and all(json.loads(line) for line in text.splitlines())
    kept = answers(preds)
    assert [p["id"] for p in kept] == model.answered == in_rows[1:20]  # every answer that came, nothing else
    assert f"stopped by SIGINT; {len(kept)} answers of this run are kept in {preds} and {cache}" in error
    assert len(cache.read_text(encoding="utf-8").splitlines()) == len(kept)

    model.release.set()  # the same command again asks only what is missing
    asked_before = len(model.bodies)
    assert main(argv) == 0
    assert f"{len(kept)} answered from {cache}" in capsys.readouterr().out
    assert len(model.bodies) - asked_before == limit - len(kept)
    assert [p["id"] for p in answers(preds)] == in_rows


def test_the_token_cap_is_said_in_help_and_zero_sends_none(built, model, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["run-model", "--help"])
    assert f"(default: {DEFAULT_MAX_TOKENS}," in " ".join(capsys.readouterr().out.split())
    preds = tmp_path / "uncapped.jsonl"
    assert main(run_model(built, model, preds, "--config", BASE, "--limit", "20", "--max-tokens", "0")) == 0
    assert "(no max_tokens sent)" in capsys.readouterr().out
    assert model.bodies and all("max_tokens" not in body for body in model.bodies)
    assert header(preds)["max_tokens"] is None
    looped = [p for p in answers(preds) if loops(p["id"])]
    assert looped and all(p["tokens"] == CONTEXT and p["truncated"] for p in looped)


def test_systems_are_named_by_their_model(built, model, tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        assert main(run_model(built, model, out, "--config", BASE, "--limit", "12")) == 0
    capsys.readouterr()
    assert main(["score", str(built), "--predictions", str(a), "--predictions", str(b), "--quiet"]) == 0
    table = capsys.readouterr().out
    assert "| smol (a) | 12 |" in table and "| smol (b) | 12 |" in table
    assert main(["score", str(built), "--predictions", str(a), "--name", "SmolLM2-135M", "--quiet"]) == 0
    assert "| SmolLM2-135M | 12 |" in capsys.readouterr().out


def test_a_build_trimmed_by_hand_is_refused_as_validate_refuses_it(built, scenes, model, tmp_path, capsys):
    trimmed = tmp_path / "roomspace-trimmed"
    shutil.copytree(built, trimmed)
    shard = trimmed / "data" / BASE / "test-00000.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows - 10), shard)
    assert main(run_model(trimmed, model, tmp_path / "p.jsonl", "--config", BASE)) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{shard}: its sha256 differs from the one {MANIFEST} lists" in error
    assert model.bodies == []  # refused before any request
    assert main(["validate", str(trimmed), "--scenes", str(scenes), "--quiet"]) == 1
    assert f"{shard}: checksum differs from the manifest" in capsys.readouterr().err
    assert main(run_model(trimmed, model, tmp_path / "p.jsonl", "--config", TWIN, "--limit", "4")) == 0  # not read


def test_predictions_that_do_not_fit_the_build_are_warned_about(built, rebuilt, model, tmp_path, capsys):
    preds = tmp_path / "smol.jsonl"
    assert main(run_model(built, model, preds, "--config", BASE, "--limit", "8")) == 0
    capsys.readouterr()
    assert main(["score", str(built), "--predictions", str(preds), "--config", TWIN, "--quiet"]) == 0
    printed = capsys.readouterr()
    assert f"none of the 8 predictions in {preds} is to {TWIN}" in printed.err and printed.err.count("\n") == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["score", str(built), "--predictions", str(empty), "--config", BASE, "--quiet"]) == 0
    printed = capsys.readouterr()
    assert f"{empty} holds no predictions" in printed.err and printed.err.count("\n") == 1
    assert main(["score", str(rebuilt), "--predictions", str(preds), "--config", BASE, "--quiet"]) == 0
    printed = capsys.readouterr()
    assert f"{preds} answers the build whose manifest.json has sha256" in printed.err
    assert f"## {BASE} (8 items)" in printed.out  # the same rooms: the same questions, still scored
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(preds.read_bytes()[:-7])  # killed mid-write
    assert main(["score", str(built), "--predictions", str(cut), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert "its last line was cut short" in printed.err and f"## {BASE} (7 items)" in printed.out
