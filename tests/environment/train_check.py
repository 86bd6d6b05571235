"""The environment inside the trainers' own libraries, installed from PyPI (`make test-train`, .venv-train:
reasoning-gym, verifiers, TRL and veRL, pinned in requirements-train.lock). Not a test_*.py: `make test`'s
environment has none of them; `make test-train` runs this file with `-m train`."""

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest
from conftest import EVERY_KIND_ROOMS, SCENE_SEED

from pipeline.cli import main as roomspace
from pipeline.environment.curriculum import Curriculum, Schedule, default_rungs
from pipeline.environment.items import Environment
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluate"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from loopback import LoopbackChat, asked, completion, right_wrong_or_unparseable  # noqa: E402

pytestmark = pytest.mark.train
# The text kinds (a question and its story, no picture), one configuration of each family they have
TEXT_CONFIGS = ("n3_m2_d81", "n3_m2_d81_balanced", "n8_m20_d81_hard", "twin_n3_m2_d81", "agent_n3_m2_d81_balanced",
                "map_n3_m2_d81", "agent_map_n3_m2_d81", "composition_n3_m2_d81", "shapes_n3_m2_d81")
ITEMS = 40  # per configuration


def scored_by_roomspace(build: Path, config: str, answers: dict[str, str], tmp_path: Path) -> dict[str, float]:
    """`roomspace score`'s own reading of each answer: YN right (1) or wrong (0), FR and maps their Jaccard."""
    predictions, report = tmp_path / f"{config}.jsonl", tmp_path / f"{config}.json"
    predictions.write_text("".join(json.dumps({"id": i, "prediction": a}) + "\n" for i, a in answers.items()))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert roomspace(["score", str(build), "--config", config, "--predictions", str(predictions),
                          "--json", str(report)]) == 0
    records = json.loads(report.read_text())["questions"]
    return {r["id"]: float((r["correct"] if r["question_type"] == "YN" else r["jaccard"]) or 0) for r in records}


def test_reasoning_gym_scores_as_roomspace_score_does(every_kind, tmp_path):
    import reasoning_gym

    import pipeline.environment.reasoning_gym_dataset  # noqa: F401: registers "roomspace"

    build, scenes = every_kind
    for config in TEXT_CONFIGS:
        data = reasoning_gym.create_dataset("roomspace", config=config, size=ITEMS, seed=SCENE_SEED,
                                            rooms=EVERY_KIND_ROOMS, scenes=str(scenes))
        answers, theirs = {}, {}
        for index, entry in enumerate(data):
            row = data.environment.item(index, data.rung).row
            assert entry["question"] == row["prompt"] and entry["answer"] == row["answer"]
            assert entry["metadata"]["id"] == row["id"] and entry["metadata"]["rung"]["config"] == config
            answers[row["id"]] = answer = right_wrong_or_unparseable(row)
            theirs[row["id"]] = data.score_answer(answer, entry)
        ours = scored_by_roomspace(build, config, answers, tmp_path)
        assert ours == theirs, config
        assert {0.0, 1.0} <= set(ours.values()), config  # right and wrong (or unread) answers both came
    right = data[0]
    assert data.score_answer(right["answer"], right) == 1.0 and data.score_answer(None, right) == 0.0


def test_reasoning_gym_curriculum_moves_along_the_default_rungs(every_kind):
    import reasoning_gym
    from reasoning_gym.factory import create_curriculum

    import pipeline.environment.reasoning_gym_dataset  # noqa: F401

    _, scenes = every_kind
    curriculum = create_curriculum("roomspace")
    defaults = {"seed": SCENE_SEED, "rooms": EVERY_KIND_ROOMS, "scenes": str(scenes), "size": 3}
    assert curriculum.generate_configuration(defaults).rung == 0
    assert curriculum.increment_attr_level("rung")
    config = curriculum.generate_configuration(defaults)
    data = reasoning_gym.create_dataset("roomspace", **vars(config))
    assert [entry["metadata"]["rung"] for entry in data] == [default_rungs()[1].metadata()] * 3
    with pytest.raises(RoomspaceError, match="no rung 99"):
        reasoning_gym.create_dataset("roomspace", rung=99)
    with pytest.raises(RoomspaceError, match="a reasoning-gym question is text"):
        reasoning_gym.create_dataset("roomspace", config="vision_n3_m2_d81")


def test_verifiers_environment_rewards_a_loopback_models_answers_with_the_checker(every_kind):
    from openai import AsyncOpenAI
    from verifiers.clients import OpenAIChatCompletionsClient

    from pipeline.environment.verifiers_environment import load_environment

    _, scenes = every_kind
    count = 12
    environment = Environment(SCENE_SEED, EVERY_KIND_ROOMS, scenes)
    items = list(environment.items(Rung("n3_m2_d81_balanced"), count))
    by_prompt = {item.row["prompt"]: item for item in items}
    answered = []

    def respond(path, body):
        text, _ = asked(body)
        answer = right_wrong_or_unparseable(by_prompt[text].row)
        answered.append((by_prompt[text], answer))
        return 200, completion(body, answer)

    server = LoopbackChat(respond)
    try:
        env = load_environment(config="n3_m2_d81_balanced", count=count, seed=SCENE_SEED, rooms=EVERY_KIND_ROOMS,
                               scenes=scenes)
        client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.root + "/v1", api_key="loopback"))
        results = env.evaluate_sync(client=client,
                                    model="loopback", num_examples=count, rollouts_per_example=1)
    finally:
        server.close()
    rewards = [output["reward"] for output in results["outputs"]]
    assert len(rewards) == len(answered) == count
    assert sorted(rewards) == sorted(item.reward(answer) for item, answer in answered)
    assert {0.0, 1.0} <= set(rewards)


def test_trl_grpo_trains_one_step_on_items_made_on_the_fly(every_kind, tmp_path):
    from grpo_reward import tiny_policy
    from trl import GRPOConfig, GRPOTrainer

    from pipeline.environment.trl_dataset import curriculum_dataset, curriculum_reward, environment_dataset
    from pipeline.evaluate.reward import roomspace_reward

    _, scenes = every_kind
    environment = Environment(SCENE_SEED, EVERY_KIND_ROOMS, scenes)
    dataset = environment_dataset(environment, "n3_m2_d81")
    model, tokenizer = tiny_policy([item.row["prompt"] for item in environment.items("n3_m2_d81", 6)])
    config = GRPOConfig(output_dir=str(tmp_path / "trainer"), per_device_train_batch_size=3, num_generations=3,
                        max_completion_length=8, max_steps=1, learning_rate=1e-4, logging_steps=1, report_to=[],
                        save_strategy="no", use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0,
                        remove_unused_columns=False)
    trainer = GRPOTrainer(model=model, reward_funcs=roomspace_reward, args=config, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    logged = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    # a real step: the tiny random policy sampled, the reward scored it (random tokens earn 0: no gradient)
    assert trainer.state.global_step == 1 and "rewards/roomspace_reward/mean" in logged and "loss" in logged
    assert next(iter(dataset)) == environment.item(0, "n3_m2_d81").record()

    curriculum = Curriculum(environment, [Rung("n3_m2_d81", level=0), Rung("n3_m2_d81", level=1)],
                            Schedule(window=3, up=0.5, down=0.0))
    trainer = GRPOTrainer(model=model, reward_funcs=curriculum_reward(curriculum), args=config,
                          train_dataset=curriculum_dataset(curriculum), processing_class=tokenizer)
    trainer.train()
    assert sum(curriculum.served) >= 1 and len(curriculum.rewards) >= 1  # the rewards reached the schedule


def test_verl_loads_the_parquet_and_the_reward_function_with_its_own_loaders(every_kind, tmp_path):
    import pyarrow.parquet as pq
    from grpo_reward import tiny_policy
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.utils.dataset.rl_dataset import RLHFDataset

    import pipeline.environment.verl_data as verl_data

    _, scenes = every_kind
    environment = Environment(SCENE_SEED, EVERY_KIND_ROOMS, scenes, pictures=True)
    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": verl_data.__file__,
                                                                       "name": "compute_score"}}})
    compute_score = get_custom_reward_fn(config)
    for rung, count in (("n3_m2_d81_balanced", 12), ("vision_n3_m2_d81", 6), ("map_n3_m2_d81", 6)):
        path = verl_data.write_parquet(environment, rung, count, tmp_path / f"{rung}.parquet")
        items = list(environment.items(rung, count))
        if environment.rung(rung).kind.images:  # veRL reads images with a vision model's processor: none here
            records = pq.read_table(path).to_pylist()
            pictured = [item.row["image"] is not None for item in items]
            assert any(pictured)
            assert [r["images"][0]["bytes"] if r["images"] else None for r in records] == [
                item.row["image"]["bytes"] if item.row["image"] else None for item in items]
            assert [r["prompt"][0]["content"].startswith("<image>") for r in records] == pictured
        else:
            _, tokenizer = tiny_policy([item.row["prompt"] for item in items])
            records = RLHFDataset([str(path)], tokenizer, OmegaConf.create(
                {"cache_dir": str(tmp_path / "cache"), "filter_overlong_prompts": False,
                 "max_prompt_length": 100000}))
        assert len(records) == count
        for k, item in enumerate(items):
            record = records[k]
            assert record["extra_info"]["id"] == item.row["id"] and record["data_source"] == f"roomspace/{rung}"
            answer = right_wrong_or_unparseable(item.row)
            assert compute_score(data_source=record["data_source"], solution_str=answer,
                                 ground_truth=record["reward_model"]["ground_truth"],
                                 extra_info=record["extra_info"]) == item.reward(answer)
    with pytest.raises(RoomspaceError, match="scores RoomSpace records"):
        compute_score(data_source="openai/gsm8k", solution_str="4", ground_truth="4", extra_info={})
