"""RoomSpace for TRL's GRPOTrainer: items made as the trainer asks for them, not read from a file.

    from trl import GRPOConfig, GRPOTrainer
    from pipeline.environment.items import Environment
    from pipeline.environment.trl_dataset import environment_dataset
    from pipeline.evaluate.reward import roomspace_reward

    dataset = environment_dataset(Environment(seed=0, rooms=100), "n5_m4_d144_balanced")
    trainer = GRPOTrainer(model=MODEL, reward_funcs=roomspace_reward, train_dataset=dataset,
                          args=GRPOConfig(..., max_steps=1000))  # a stream: the steps bound it

`environment_dataset` is a stream (datasets' IterableDataset) of the environment's items 0, 1, ... of
a rung, each made when the trainer reaches it: its chat messages (`prompt`) and the scoring columns
`roomspace_reward` reads (`roomspace export --format prompt`'s record). `curriculum_dataset` follows a
curriculum instead: each example is the curriculum's next item, and `curriculum_reward` is
`roomspace_reward` recording every reward of the current rung on the curriculum, so the schedule
moves as the policy learns.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.environment.curriculum import Curriculum
from pipeline.environment.items import Environment
from pipeline.environment.rungs import Rung
from pipeline.evaluate.reward import roomspace_reward

try:
    from datasets import IterableDataset
except ImportError:
    raise RoomspaceError("the TRL dataset needs datasets: pip install roomspace[train]") from None


def environment_dataset(environment: Environment, rung: Rung | str, size: int | None = None) -> IterableDataset:
    """Items 0 .. size-1 of a rung (without end if None), each made when the trainer reaches it (module docstring)."""
    rung = environment.rung(rung)

    def records():
        for item in environment.items(rung, size):
            yield item.record()

    return IterableDataset.from_generator(records)


def curriculum_dataset(curriculum: Curriculum) -> IterableDataset:
    """The curriculum's next item at each request, without end (module docstring)."""

    def records():
        while True:
            item = curriculum.next_item()
            yield {**item.record(), "rung_index": curriculum.metadata(item)["rung_index"]}

    return IterableDataset.from_generator(records)


def curriculum_reward(curriculum: Curriculum):
    """`roomspace_reward`, each reward of the curriculum's current rung also recorded on it."""

    def reward(prompts: Sequence | None = None, completions: Sequence = (), rung_index: Sequence = (),
               **columns) -> list[float]:
        rewards = roomspace_reward(prompts, completions, **columns)
        for value, asked in zip(rewards, rung_index):
            if asked == curriculum.position:  # a completion of a rung left since it was asked is not counted
                curriculum.record(value)
        return rewards

    reward.__name__ = "roomspace_curriculum_reward"
    return reward
