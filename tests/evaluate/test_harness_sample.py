"""The harnesses ask the sample `roomspace run-model --limit N --seed S` asks (issue 33). lm-evaluation-harness:
its `--limit K` takes a task's first K rows, which come in the sample order of `roomspace_seed`, and
`roomspace_limit=N` keeps exactly run-model's N (a loopback server stands in for the model). inspect:
`-T limit=N -T seed=S` keeps run-model's N, and its samples come in the sample order."""

from pathlib import Path

import pytest
from conftest import SCENE_SEED
from loopback import LoopbackChat, completion

from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.model_runner import DEFAULT_MAX_TOKENS
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import Sample, ordered_ids, sample_ids
from pipeline.text.configs import parse_configs

lm_eval = pytest.importorskip("lm_eval")  # the `harness` extra
pytest.importorskip("inspect_ai")
from lm_eval.tasks import TaskManager  # noqa: E402

from pipeline.evaluate.harness.inspect_tasks import roomspace  # noqa: E402
from pipeline.evaluate.harness.lm_eval_tasks import TASKS_DIR  # noqa: E402
from pipeline.evaluate.harness.lm_eval_tasks.utils import load_rows, yn_items  # noqa: E402

CONFIG = "n5_m4_d144"  # a configuration the packaged tasks name
TWIN = f"twin_{CONFIG}"
TASK = f"roomspace_{CONFIG}_yn"


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("harness-sample") / "roomspace-harness-sample"
    configs = parse_configs(CONFIG)
    build(BuildPlan.asked(out.name, SCENE_SEED, 2, configs, {"twin": configs}), scenes, out, workers=1,
          progress=False)
    return out


def test_the_rows_come_in_the_sample_order_and_roomspace_limit_keeps_run_models_sample(built):
    source = open_rows(built)
    assert load_rows(str(built), CONFIG, roomspace_limit="20", roomspace_seed="3")["test"]["id"] == \
        sample_ids(source, [CONFIG], Sample(20, 3))
    kind = {row["id"]: row["question_type"] for row in source.rows([CONFIG], ["id", "question_type"])}
    yn = [item for item in ordered_ids(source, [CONFIG], 3) if kind[item] == "YN"]
    assert yn_items(load_rows(str(built), CONFIG, roomspace_seed=3)["test"])["id"] == yn
    assert yn[:5] != [item for item, question_type in kind.items() if question_type == "YN"][:5]  # not the first rows


def test_lm_evals_limit_asks_the_first_of_the_sample_order(built):
    source = open_rows(built)
    prompts = {row["prompt"]: row for row in source.rows([CONFIG], ["id", "prompt", "answer"])}
    asked = []

    def respond(path: str, body: dict) -> tuple[int, dict]:
        row = prompts[body["messages"][0]["content"]]
        asked.append(row["id"])
        return 200, completion(body, f"Answer: {row['answer']}")

    server = LoopbackChat(respond)
    try:
        results = lm_eval.simple_evaluate(
            model="local-chat-completions",
            model_args={"model": "stub", "base_url": f"{server.root}/v1/chat/completions", "tokenizer_backend": None,
                        "max_retries": 1},
            tasks=[TASK], limit=5, bootstrap_iters=0, apply_chat_template=True,
            task_manager=TaskManager(include_path=str(TASKS_DIR), include_defaults=False,
                                     metadata={"roomspace_source": str(built), "roomspace_seed": 3}))
    finally:
        server.close()
    kind = {row["id"]: row["question_type"] for row in source.rows([CONFIG], ["id", "question_type"])}
    first = [item for item in ordered_ids(source, [CONFIG], 3) if kind[item] == "YN"][:5]
    assert sorted(sample["doc"]["id"] for sample in results["samples"][TASK]) == sorted(asked) == sorted(first)
    assert results["results"][TASK]["yn_accuracy,none"] == 1.0


def test_inspects_limit_and_seed_ask_the_sample_run_model_asks(built):
    """-T limit=N -T seed=S: the ids of `roomspace run-model --limit N --seed S` over the same configurations;
    without them every row, in the sample order, so inspect's own --limit K takes a stratified sample."""
    rows = open_rows(built)
    task = roomspace(source=str(built), config=f"{CONFIG},{TWIN}", limit=30, seed=3)
    assert [sample.id for sample in task.dataset] == sample_ids(rows, [CONFIG, TWIN], Sample(30, 3))
    yn = roomspace(source=str(built), config=f"{CONFIG},{TWIN}", limit=30, seed=3, question_type="YN")
    assert [sample.id for sample in yn.dataset] == [s.id for s in task.dataset if s.metadata["question_type"] == "YN"]
    whole = [sample.id for sample in roomspace(source=str(built), config=CONFIG, seed=3).dataset]
    assert whole == ordered_ids(rows, [CONFIG], 3) and whole[:10] == sample_ids(rows, [CONFIG], Sample(10, 3))
    assert whole[:10] != [row["id"] for row in rows.rows([CONFIG], ["id"])][:10]  # not the first rows


def test_run_model_cuts_answers_where_the_lm_eval_tasks_do():
    """run-model's default max_tokens is the tasks' max_gen_toks: both harnesses cut an answer at one length."""
    assert f"max_gen_toks: {DEFAULT_MAX_TOKENS}" in (TASKS_DIR / "_roomspace_common.yaml").read_text(encoding="utf-8")
