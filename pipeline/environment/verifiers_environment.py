"""RoomSpace as a `verifiers` environment: `load_environment()` gives a single-turn environment whose
rubric is the checker's reward.

    from pipeline.environment.verifiers_environment import load_environment
    env = load_environment(config="n5_m4_d144_balanced", level=2, count=200, seed=0, rooms=100)
    results = env.evaluate_sync(client=AsyncOpenAI(base_url=URL, api_key="-"), model=MODEL, num_examples=20)

Its examples are the environment's items 0 .. count-1 of the rung (pipeline.environment.items), made
when the environment is loaded: `prompt` (the row's chat messages, a vision row's image as a content
part), `answer` (the row's answer) and `info` (the row's id and rung, and the fields the reward reads).
The rubric has one function, `roomspace_reward`: YN right or wrong, FR the Jaccard of the named set, a
map its facts held, a plan its mean F1, 0 for an answer the parser does not read; the same number as
`roomspace score`. Needs verifiers (its classic single-turn environments; `pip install roomspace[train]`).
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.environment.items import Environment, reward_of
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError

try:
    import verifiers as vf
    from datasets import Dataset
except ImportError:
    raise RoomspaceError("the verifiers environment needs verifiers: pip install roomspace[train]") from None


def completion_text(completion) -> str:
    """The model's answer: a completion's last assistant message (or the text of a completion given as text)."""
    if isinstance(completion, str):
        return completion
    said = [message.get("content") for message in completion if message.get("role") == "assistant"]
    return said[-1] if said and isinstance(said[-1], str) else ""


def roomspace_reward(completion, info, **_) -> float:
    """The rubric's function: the checker's reward for the completion (module docstring)."""
    return reward_of(json.loads(info["scoring"]), completion_text(completion))


def load_environment(config: str = "n5_m4_d144_balanced", level: int | None = None, setting: str | None = None,
                     frame_changes: int | None = None, count: int = 100, seed: int = 0, rooms: int = 100,
                     scenes: str | Path | None = None, pictures: bool = False, **kwargs) -> vf.SingleTurnEnv:
    """A single-turn environment of `count` items of the rung (module docstring); `kwargs` go to it."""
    if count < 1:
        raise RoomspaceError(f"an environment needs at least one example (asked: {count})")
    rung = Rung(config, level, setting, frame_changes)
    items = Environment(seed, rooms, scenes, pictures).items(rung, count)
    examples = [{"prompt": record["prompt"], "answer": item.row["answer"],
                 "info": json.dumps({"id": item.row["id"], "rung": item.rung.metadata(),
                                     "scoring": json.dumps(item.scoring())})}
                for item in items for record in (item.record(),)]
    dataset = Dataset.from_list(examples)
    return vf.SingleTurnEnv(dataset=dataset, eval_dataset=dataset,
                            rubric=vf.Rubric(funcs=[roomspace_reward], weights=[1.0]), **kwargs)
