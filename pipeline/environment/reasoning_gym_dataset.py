"""RoomSpace as a reasoning-gym dataset: `reasoning_gym.create_dataset("roomspace", ...)`, with its curriculum.

    import reasoning_gym
    import pipeline.environment.reasoning_gym_dataset  # registers "roomspace"
    data = reasoning_gym.create_dataset("roomspace", config="n5_m4_d144_balanced", level=2, size=100, seed=0)
    entry = data[0]  # {"question": the row's prompt, "answer": its answer, "metadata": {...}}
    data.score_answer("Answer: north-west", entry)  # the checker's reward (pipeline.evaluate.reward)

Entry i is the environment's item i of the rung (pipeline.environment.items): a room of houses
0 .. rooms-1 of `seed`, from `scenes` or sampled as needed. `score_answer` is `roomspace score`'s
reading of the same answer: YN right (1) or wrong (0), FR the Jaccard of the named relations and the
answer set, a map the share of the story's facts it keeps, a plan its mean step and precondition
F1, and 0 for an answer the parser does not read. The curriculum (`create_curriculum("roomspace")`)
has one attribute, `rung`, whose levels are the default curriculum's rungs
(pipeline/data/curriculum.json), easiest first; a dataset given `config` asks that rung instead. Its
questions are text: a kind with pictures is refused.
Needs reasoning-gym (`pip install roomspace[train]`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pipeline.environment.curriculum import default_rungs
from pipeline.environment.items import Environment, EnvironmentItem, reward_of
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError

try:
    import reasoning_gym
    from reasoning_gym.coaching import BaseCurriculum, ScalarAttributeDefinition
    from reasoning_gym.dataset import ProceduralDataset
except ImportError:
    raise RoomspaceError("the reasoning-gym dataset needs reasoning-gym: pip install roomspace[train]") from None

DATASET_NAME = "roomspace"


@dataclass
class RoomSpaceConfig:
    seed: int = 0  # the rooms' seed (houses of `seed`) and the items' draws
    size: int = 500
    rooms: int = 100  # the pool: houses 0 .. rooms-1
    scenes: str | None = None  # a scene folder; None: sampled as needed into a folder of the environment's
    rung: int = 0  # the default curriculum's rung, when `config` is None
    config: str | None = None  # or this rung: a configuration, with a level, setting and frame changes
    level: int | None = None
    setting: str | None = None
    frame_changes: int | None = None

    def asked(self) -> Rung:
        if self.config is not None:
            return Rung(self.config, self.level, self.setting, self.frame_changes)
        rungs = default_rungs()
        if not 0 <= self.rung < len(rungs):
            raise RoomspaceError(f"no rung {self.rung}: the default curriculum has rungs 0 .. {len(rungs) - 1}")
        return rungs[self.rung]

    def validate(self) -> None:
        if self.size < 1:
            raise RoomspaceError(f"a dataset's size is at least 1 (given {self.size})")
        rung = self.asked()
        if rung.kind.images:
            raise RoomspaceError(f"{rung.config} asks questions about pictures and a reasoning-gym question is text: "
                                 "choose a text kind, or serve pictures through verifiers, TRL or veRL "
                                 "(pipeline.environment, pictures=True)")


@lru_cache(maxsize=4)  # a curriculum makes a dataset per move: the rooms already made stay made
def _environment(seed: int, rooms: int, scenes: str | None) -> Environment:
    return Environment(seed, rooms, scenes)


class RoomSpaceDataset(ProceduralDataset):
    def __init__(self, config: RoomSpaceConfig) -> None:
        super().__init__(config=config, seed=config.seed, size=config.size)
        self.rung = config.asked()
        self.environment = _environment(config.seed, config.rooms, config.scenes)

    def __getitem__(self, idx: int) -> dict:
        item: EnvironmentItem = self.environment.item(idx, self.rung)
        return {"question": item.row["prompt"], "answer": item.row["answer"],
                "metadata": {**item.metadata, "scoring": item.scoring()}}

    def score_answer(self, answer: str | None, entry: dict) -> float:
        return reward_of(entry["metadata"]["scoring"], answer) if answer else 0.0


class RoomSpaceCurriculum(BaseCurriculum):
    def __init__(self) -> None:
        super().__init__(RoomSpaceCurriculum.__name__, RoomSpaceConfig)
        rungs = default_rungs()
        self._define_attributes(ScalarAttributeDefinition(
            name="rung", field_name="rung", levels=list(range(len(rungs))),
            description="the default curriculum's rungs, easiest first: " + "; ".join(r.describe() for r in rungs)))


if DATASET_NAME not in reasoning_gym.factory.DATASETS:
    reasoning_gym.register_dataset(DATASET_NAME, RoomSpaceDataset, RoomSpaceConfig, RoomSpaceCurriculum)
