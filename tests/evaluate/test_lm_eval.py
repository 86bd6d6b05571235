"""The lm-evaluation-harness tasks (pipeline/evaluate/harness/lm_eval_tasks) score as `roomspace score` does.

No network and no weights: a loopback OpenAI-compatible server stands in for the model and answers
each prompt right, wrong or unparseably (chosen by a hash of the prompt). The tasks are generated
(pipeline.evaluate.harness.tasks) for a build of every text kind of the registry, paper and
balanced; lm-eval runs every family group against the server with its `local-chat-completions`
model; the answers the server gave are written as a predictions file and scored by the project's
own report, and the two must agree task by task and group by group.
"""

import json
from pathlib import Path

import pytest
from every_kind import every_kind, read_by
from loopback import BenchmarkChat

from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.tasks import LM_EVAL, PACKAGED_CONFIGS, family, task_name
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.text.kinds import kind_of

lm_eval = pytest.importorskip("lm_eval")  # the `harness` extra
from lm_eval.tasks import TaskManager  # noqa: E402

from pipeline.evaluate.harness.lm_eval_tasks import TASKS_DIR, write_tasks  # noqa: E402
from pipeline.evaluate.harness.lm_eval_tasks.utils import METRICS  # noqa: E402

SYSTEM = "stub"  # the predictions file's stem: the system's name in the project's report
# map_facts is a mean of float32 shares in the report and of Python floats in lm-eval; a rate is off
# by at least 1/items where the two disagree, far above this
TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def built(scenes, request) -> Path:
    return every_kind(scenes, request)


@pytest.fixture(scope="module")
def configs(built) -> list[str]:
    """The build's configurations lm-eval reads: every text kind, paper and balanced."""
    return read_by(built, "lm_eval")


def test_every_configuration_asks_the_question_types_its_kind_declares(rows, configs):
    for config in configs:
        assert question_types(rows, config) == set(kind_of(config).questions), (
            f"{config}: its rows ask {sorted(question_types(rows, config))}; declare them as its kind's "
            "`questions` (pipeline/text/kinds.py): the harness tasks are made per question type")


@pytest.fixture(scope="module")
def rows(built, configs) -> list[dict]:
    return list(open_rows(built).rows(configs, ["id", "config", "question_type", "prompt", "answer", "answer_set",
                                                "candidate", "options"]))


@pytest.fixture(scope="module")
def run(built, configs, rows, tmp_path_factory):
    """lm-eval's family groups of the build's tasks against the stub, and the predictions file of what the stub said."""
    tasks = write_tasks(built, tmp_path_factory.mktemp("tasks"))
    server = BenchmarkChat(rows)  # text rows: no image
    try:
        results = lm_eval.simple_evaluate(
            model="local-chat-completions",
            model_args={"model": SYSTEM, "base_url": server.url, "tokenizer_backend": None, "max_retries": 1},
            tasks=list(dict.fromkeys(family(config) for config in configs)),
            task_manager=TaskManager(include_path=str(tasks), include_defaults=False),  # the source is in the tasks
            apply_chat_template=True,
            bootstrap_iters=0,
        )
    finally:
        server.close()
    assert server.unknown == []
    predictions = tmp_path_factory.mktemp("predictions") / f"{SYSTEM}.jsonl"
    with predictions.open("w", encoding="utf-8") as file:
        for row in rows:  # every row was asked: its prompt maps it to the answer the server gave
            file.write(json.dumps({"id": row["id"], "prediction": server.answers[(row["prompt"], False)]}) + "\n")
    return results, {prompt: answer for (prompt, _), answer in server.answers.items()}, predictions


def reported(system, metric: str) -> float:
    """A metric of the project's report: a rate's value, or map_facts, a mean."""
    value = getattr(system, metric)
    return value if isinstance(value, float) else value.value


def question_types(rows, config) -> set[str]:
    return {row["question_type"] for row in rows if row["config"] == config}


def test_lm_eval_asks_every_row_its_own_prompt_once(run, rows, configs):
    results, answers, _ = run
    assert set(answers) == {row["prompt"] for row in rows}
    for config in configs:
        for question_type in kind_of(config).questions:
            expected = {row["id"] for row in rows if row["config"] == config and row["question_type"] == question_type}
            samples = results["samples"][task_name(config, question_type)]
            assert sorted(sample["doc"]["id"] for sample in samples) == sorted(expected)
            for sample in samples:  # lm-eval scored exactly what the server said
                assert sample["filtered_resps"] == [answers[sample["doc"]["prompt"]]]


def test_lm_eval_scores_equal_the_projects_scorer(run, built, rows, configs):
    results, _, predictions = run
    for config in configs:
        (group,) = evaluate(str(built), config, [predictions], []).groups
        project = group.overall.systems[SYSTEM]
        assert 0 < project.unparseable and project.no_answer == project.truncated == 0
        for question_type in kind_of(config).questions:
            task = task_name(config, question_type)
            for metric in METRICS[question_type]:
                ours, harness = reported(project, metric), results["results"][task][f"{metric},none"]
                print(f"{task}: lm-eval {metric} = {harness!r}, roomspace score {metric} = {ours!r}")
                assert harness == pytest.approx(ours, abs=TOLERANCE)  # both the mean of the same outcomes
            assert results["n-samples"][task]["effective"] == getattr(project, f"{question_type.lower()}_items")


def test_the_family_groups_pool_their_configurations_as_score_pool_does(run, built, rows, configs):
    results, _, predictions = run
    families: dict[str, list[str]] = {}
    for config in configs:
        families.setdefault(family(config), []).append(config)
    for name, members in families.items():
        (pooled,) = evaluate(str(built), ",".join(members), [predictions], [], pool=True).groups
        project = pooled.overall.systems[SYSTEM]
        held = set().union(*(kind_of(config).questions for config in members))
        for question_type in held:
            group = f"{name}_{question_type.lower()}"
            for metric in METRICS[question_type]:
                harness = results["results"][group][f"{metric},none"]
                print(f"{group}: lm-eval {metric} = {harness!r}, roomspace score --pool {metric} = "
                      f"{reported(project, metric)!r}")
                assert harness == pytest.approx(reported(project, metric), abs=TOLERANCE)
        assert set(results["group_subtasks"][name]) == {f"{name}_{q.lower()}" for q in held}
    assert {"roomspace", "roomspace_balanced", "roomspace_twin", "roomspace_agent"} <= set(families)


def test_the_packaged_tasks_load_and_refuse_to_guess_where_the_rows_are():
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    expected = {task_name(config, q) for config in LM_EVAL.names(PACKAGED_CONFIGS) for q in kind_of(config).questions}
    assert expected <= set(manager.all_subtasks)
    assert {"roomspace", "roomspace_yn", "roomspace_fr", "roomspace_balanced"} <= set(manager.all_groups)
    with pytest.raises(RoomspaceError, match="roomspace_source"):
        manager.load(["roomspace_n5_m4_d144_yn"])  # the YAML's placeholder OWNER/NAME: never fetched

