"""The lm-evaluation-harness tasks (pipeline/evaluate/harness/lm_eval_tasks) score as `roomspace score` does.

No network and no weights: a loopback OpenAI-compatible server stands in for the model and answers
each prompt right, wrong or unparseably (chosen by a hash of the prompt). lm-eval runs the tasks
against it with its `local-chat-completions` model; the answers the server gave are written as a
predictions file and scored by the project's own report, and the two must agree.
"""

import json
import threading
import zlib
from pathlib import Path

import pytest
from conftest import SCENE_SEED
from loopback import LoopbackChat, completion

from pipeline.dataset.build import BuildPlan, build
from pipeline.errors import RoomspaceError
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import parse_configs

lm_eval = pytest.importorskip("lm_eval")  # the `harness` extra
from lm_eval.tasks import TaskManager  # noqa: E402

from pipeline.evaluate.harness.lm_eval_tasks import TASKS_DIR  # noqa: E402

CONFIGS = ("n5_m4_d81", "n5_m4_d144")  # the configurations the task YAMLs name
TASKS = {config: {"YN": f"roomspace_{config}_yn", "FR": f"roomspace_{config}_fr"} for config in CONFIGS}
METRIC = {"YN": "yn_accuracy", "FR": "fr_exact"}
SYSTEM = "stub"  # the predictions file's stem: the system's name in the project's report


def right_wrong_or_unparseable(row: dict) -> str:
    """The stub model's answer, by a hash of the prompt: right, wrong or unparseable, about a third each."""
    kind = zlib.crc32(row["prompt"].encode("utf-8")) % 3
    if row["question_type"] == "YN":
        possible = row["candidate"] in row["answer_set"]
        if kind == 2:
            return "Perhaps; the story is unclear on this."  # a hedge: does not parse
        said = possible if kind == 0 else not possible
        return "The facts decide it.\nAnswer: " + ("Yes" if said else "No")
    if kind == 2:
        return "Maybe " + row["options"][0] + "."  # a hedge: does not parse
    if kind == 0:
        return "Working through the facts.\nAnswer: " + row["answer"]
    wrong = ", ".join(row["options"]) if len(row["answer_set"]) < len(row["options"]) else row["options"][0]
    return "Answer: " + wrong


class StubChatServer:
    """/v1/chat/completions on 127.0.0.1 answering the benchmark's prompts; records what it said to each."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = {row["prompt"]: row for row in rows}
        self.answers: dict[str, str] = {}  # prompt -> the answer given
        self.unknown: list[str] = []  # prompts that are no row's
        self.lock = threading.Lock()
        self.loopback = LoopbackChat(self.respond)
        self.url = f"{self.loopback.root}/v1/chat/completions"

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        (message,) = body["messages"]
        prompt = message["content"]
        row = self.rows.get(prompt)
        with self.lock:
            if row is None:
                self.unknown.append(prompt)
                return 400, {"error": {"message": "not a prompt of this benchmark"}}
            answer = self.answers.setdefault(prompt, right_wrong_or_unparseable(row))
        return 200, completion(body, answer)

    def close(self) -> None:
        self.loopback.close()


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lm-eval") / "roomspace-lmeval"
    build(BuildPlan.asked("roomspace-lmeval", SCENE_SEED, 2, parse_configs(",".join(CONFIGS))), scenes, out,
          workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rows(built) -> list[dict]:
    source = open_rows(built)
    return list(source.rows(CONFIGS, ["id", "config", "question_type", "prompt", "answer", "answer_set",
                                      "candidate", "options"]))


@pytest.fixture(scope="module")
def run(built, rows, tmp_path_factory):
    """lm-eval's whole `roomspace` group against the stub, and the predictions file of what the stub said."""
    server = StubChatServer(rows)
    try:
        results = lm_eval.simple_evaluate(
            model="local-chat-completions",
            model_args={"model": SYSTEM, "base_url": server.url, "tokenizer_backend": None, "max_retries": 1},
            tasks=["roomspace"],
            task_manager=TaskManager(include_path=str(TASKS_DIR), include_defaults=False,
                                     metadata={"roomspace_source": str(built)}),
            apply_chat_template=True,
            bootstrap_iters=0,
        )
    finally:
        server.close()
    assert server.unknown == []
    predictions = tmp_path_factory.mktemp("predictions") / f"{SYSTEM}.jsonl"
    with predictions.open("w", encoding="utf-8") as file:
        for row in rows:  # every row was asked: its prompt maps it to the answer the server gave
            file.write(json.dumps({"id": row["id"], "prediction": server.answers[row["prompt"]]}) + "\n")
    return results, server.answers, predictions


def test_lm_eval_asks_every_row_its_own_prompt_once(run, rows):
    results, answers, _ = run
    assert set(answers) == {row["prompt"] for row in rows}
    for config in CONFIGS:
        for question_type, task in TASKS[config].items():
            expected = {row["id"] for row in rows if row["config"] == config and row["question_type"] == question_type}
            samples = results["samples"][task]
            assert sorted(sample["doc"]["id"] for sample in samples) == sorted(expected)
            for sample in samples:  # lm-eval scored exactly what the server said
                assert sample["filtered_resps"] == [answers[sample["doc"]["prompt"]]]


def test_lm_eval_scores_equal_the_projects_scorer(run, built):
    results, _, predictions = run
    for config in CONFIGS:
        (group,) = evaluate(str(built), config, [predictions], []).groups
        project = group.overall.systems[SYSTEM]
        assert 0 < project.unparseable and project.no_answer == project.truncated == 0
        for question_type, task in TASKS[config].items():
            metric = METRIC[question_type]
            ours = getattr(project, metric).value
            harness = results["results"][task][f"{metric},none"]
            print(f"{task}: lm-eval {metric} = {harness!r}, roomspace score {metric} = {ours!r}")
            assert 0 < ours < 1  # right, wrong and unparseable answers all counted
            assert harness == ours  # both the mean of 0/1 outcomes over the same items
            assert results["n-samples"][task]["effective"] == getattr(project, f"{question_type.lower()}_items")


def test_the_groups_pool_both_configurations_as_score_pool_does(run, built):
    results, _, predictions = run
    (pooled,) = evaluate(str(built), ",".join(CONFIGS), [predictions], [], pool=True).groups
    project = pooled.overall.systems[SYSTEM]
    for group, metric in (("roomspace_yn", "yn_accuracy"), ("roomspace_fr", "fr_exact")):
        harness = results["results"][group][f"{metric},none"]
        print(f"{group}: lm-eval {metric} = {harness!r}, roomspace score --pool {metric} = "
              f"{getattr(project, metric).value!r}")
        assert harness == pytest.approx(getattr(project, metric).value, abs=1e-12)
    assert set(results["group_subtasks"]["roomspace"]) == {"roomspace_yn", "roomspace_fr"}


def test_the_tasks_refuse_to_guess_where_the_rows_are():
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    assert {task for tasks in TASKS.values() for task in tasks.values()} <= set(manager.all_subtasks)
    with pytest.raises(RoomspaceError, match="roomspace_source"):
        manager.load(["roomspace_n5_m4_d144_yn"])  # the YAML's placeholder OWNER/NAME: never fetched
