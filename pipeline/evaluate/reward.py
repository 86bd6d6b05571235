"""The checker as a verifiable reward: TRL's GRPO trainer takes `roomspace_reward` as a reward function.

    from trl import GRPOConfig, GRPOTrainer
    from datasets import load_dataset
    from pipeline.evaluate.reward import roomspace_reward

    dataset = load_dataset("json", data_files="train-prompts.jsonl", split="train")  # `roomspace export --format prompt`
    trainer = GRPOTrainer(model=MODEL, reward_funcs=roomspace_reward, args=GRPOConfig(...), train_dataset=dataset)

The trainer calls a reward function with keyword arguments: `prompts`, `completions` (strings, or for
a conversational dataset such as the export's, each completion a list of messages), `completion_ids`,
`trainer_state` and every column of the dataset but `prompt`; it wants one float per completion. The
columns the reward reads are those `roomspace export --format prompt` writes beside the prompt
(REWARD_COLUMNS). Each completion is scored as `roomspace score` scores an answer
(pipeline.evaluate.score.score_item):

* YN: 1 for the right answer, else 0;
* FR: the Jaccard of the named relations and the exact answer set, so 1 for exactly the answer set;
* MAP: the share of the story's facts that hold on the drawn map, so 1 for a map consistent with the
  story (any such map: the story fixes no single map);
* PLAN (pipeline.text.object_tasks): the mean of its step content F1 and precondition F1
  (pipeline.evaluate.plans), so 1 for the gold plan's steps ordered alike;

and 0 for an answer the parser does not read. `roomspace_exact_reward` gives 1 for a right answer
(a YN answer, exactly the answer set, a consistent map, an exact plan) and 0 for anything else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from pipeline.errors import RoomspaceError
from pipeline.evaluate.score import SCORED, ScoreRow, score_item
from pipeline.text.prompts import PLAN_QUESTION

# The dataset columns the reward reads, one value per completion: a row's scoring fields, which the
# export writes beside the prompt (a column the dataset lacks is None, as for `score`); it needs NEEDED.
REWARD_COLUMNS = tuple(field.name for field in dataclasses.fields(ScoreRow))
NEEDED = ("question_type", "answer", "answer_set", "candidate", "options", "d", "facts")


def completion_text(completion: str | Sequence[Mapping]) -> str:
    """A completion's text: a string as it is, a conversational completion's messages' contents joined."""
    if isinstance(completion, str):
        return completion
    return "\n".join(message["content"] for message in completion if isinstance(message.get("content"), str))


def rewards(completions: Sequence, columns: Mapping[str, Sequence], partial: bool) -> list[float]:
    missing = [name for name in NEEDED if name not in columns]
    if missing:
        raise RoomspaceError(f"the reward needs the dataset columns {', '.join(missing)}: train on the rows "
                             "`roomspace export --format prompt` writes")
    out = []
    for k, completion in enumerate(completions):
        row = ScoreRow.of({name: columns[name][k] for name in REWARD_COLUMNS if name in columns})
        outcome = score_item(row, completion_text(completion))
        if outcome.status[0, 0] != SCORED:
            out.append(0.0)
        elif partial and row.question_type == PLAN_QUESTION:  # both the steps and their order
            out.append(float(outcome.jaccard[0, 0] + outcome.f1[0, 0]) / 2)
        elif partial and row.question_type != "YN":
            out.append(float(outcome.jaccard[0, 0]))
        else:
            out.append(float(outcome.correct[0, 0]))
    return out


def roomspace_reward(prompts: Sequence | None = None, completions: Sequence = (), **columns) -> list[float]:
    """One reward per completion, partial credit for FR answers and maps (module docstring)."""
    return rewards(completions, columns, partial=True)


def roomspace_exact_reward(prompts: Sequence | None = None, completions: Sequence = (), **columns) -> list[float]:
    """One reward per completion: 1 for a right answer or a consistent map, else 0 (module docstring)."""
    return rewards(completions, columns, partial=False)
