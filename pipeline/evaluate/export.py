"""`roomspace export`: a split's rows as JSON lines for trainers, in one of two formats.

* `chat`, `{"messages": [...]}` for supervised fine-tuning: the user turn is the row's prompt as
  `roomspace prompts` gives it (the default style, and a vision row's image as a content part before
  the text: pipeline.evaluate.prompts); the assistant turn is the row's reasoning target
  (pipeline.text.targets), optionally after its cognitive map ("map then reason"; a map question's
  target is its map already). TRL's SFT trainer and OpenAI-style fine-tuning read the lines as they are.
* `prompt`, `{"prompt": [...], <the row's scoring fields>}` for reinforcement learning: the prompt
  alone, as TRL's GRPO trainer takes a conversational prompt-only dataset, beside the columns
  pipeline.evaluate.reward.roomspace_reward reads (REWARD_COLUMNS), which the trainer hands it with
  each completion.

`balanced_ids` draws, with a seed, the rows of a training split to keep so that per configuration
and setting no FR answer-set size and neither YN answer dominates: each stratum (a setting's FR
questions of one answer-set size, or its YN questions of one answer) keeps at most as many rows as
the median stratum of that setting and question type (the lower median), the smaller strata
whole. Yes and No (two strata) come out exactly even; FR sizes as even as the rare sizes allow
without cutting the common ones down to them (an o2_d3_layout size can have 2 rows in 2000).
The test split is never drawn from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from random import Random

from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.errors import RoomspaceError
from pipeline.evaluate.prompts import make_prompt
from pipeline.evaluate.reward import REWARD_COLUMNS
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.seeding import derive_seed
from pipeline.text.prompts import MAP_QUESTION, PLAN_QUESTION
from pipeline.text.targets import cognitive_map, target_text

FORMATS = ("chat", "prompt")
STRATUM_COLUMNS = ["id", "setting", "question_type", "answer_set_size", "answer"]


def chat_record(row: Mapping, maps: bool = False) -> dict:
    """One row as a chat: the prompt, then the target (after the cognitive map with `maps`, where the row has one)."""
    answer = target_text(row)
    drawn = cognitive_map(row) if maps and row["question_type"] != MAP_QUESTION else ""
    messages = make_prompt(row).messages
    return {"messages": [*messages, {"role": "assistant", "content": f"{drawn}\n\n{answer}" if drawn else answer}]}


def prompt_record(row: Mapping) -> dict:
    """One row as a prompt-only record for GRPO: its prompt messages and its scoring fields (module docstring)."""
    return {"prompt": make_prompt(row).messages, **{name: row.get(name) for name in REWARD_COLUMNS}}


def stratum(row: Mapping) -> tuple[str, str, object]:
    """(setting, question type, answer-set size for FR or the answer for YN): what `balanced_ids` evens out."""
    if row["question_type"] == MAP_QUESTION:
        return (row["setting"], row["question_type"], None)  # a map's story allows many: nothing to even out
    if row["question_type"] == PLAN_QUESTION:
        return (row["setting"], row["question_type"], row["answer_set_size"])  # a plan: its number of steps
    return (row["setting"], row["question_type"],
            row["answer_set_size"] if row["question_type"] == "FR" else row["answer"])


def balanced_ids(rows: BenchmarkRows, config: str, seed: int) -> set[str]:
    """The ids of one configuration's rows kept by the seeded balanced draw (module docstring)."""
    if rows.split == DATASET_SPLIT:
        raise RoomspaceError("--balance draws training rows only; give --split train or --split validation")
    strata: dict[tuple, list[str]] = {}
    for table in rows.batches(config, STRATUM_COLUMNS):
        for row in table.to_pylist():
            strata.setdefault(stratum(row), []).append(row["id"])
    kept: set[str] = set()
    for key in sorted(strata, key=str):
        counts = sorted(len(ids) for other, ids in strata.items() if other[:2] == key[:2])
        cap = counts[(len(counts) - 1) // 2]
        kept.update(Random(derive_seed(seed, "balance", config, *map(str, key))).sample(strata[key],
                                                                                      min(cap, len(strata[key]))))
    return kept


def export_chat(rows: BenchmarkRows, configs: Sequence[str], maps: bool = False,
                balance: int | None = None, form: str = FORMATS[0]) -> Iterator[dict]:
    """Records of the chosen configurations of `rows`' split in `form` (chat or prompt), in row order;
    with `balance`, the seeded balanced draw only."""
    if form not in FORMATS:
        raise RoomspaceError(f"unknown export format {form!r}; expected one of {', '.join(FORMATS)}")
    for config in configs:
        kept = None if balance is None else balanced_ids(rows, config, balance)
        for row in rows.rows([config]):
            if kept is None or row["id"] in kept:
                yield chat_record(row, maps) if form == "chat" else prompt_record(row)
