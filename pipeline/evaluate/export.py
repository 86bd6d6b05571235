"""`roomspace export`: a split's rows as chat JSON lines for trainers, `{"messages": [...]}`.

The user turn is the row's prompt as `roomspace prompts` gives it (the default style, and a vision
row's image as a content part before the text: pipeline.evaluate.prompts); the assistant turn is
the row's reasoning target (pipeline.text.targets), optionally after its cognitive map ("map then
reason"). TRL's SFT trainer and OpenAI-style fine-tuning read the lines as they are.

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
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.seeding import derive_seed
from pipeline.text.targets import cognitive_map, target_text

FORMATS = ("chat",)
STRATUM_COLUMNS = ["id", "setting", "question_type", "answer_set_size", "answer"]


def chat_record(row: Mapping, maps: bool = False) -> dict:
    """One row as a chat: the prompt, then the target (after the cognitive map with `maps`, where the row has one)."""
    answer = target_text(row)
    drawn = cognitive_map(row) if maps else ""
    messages = make_prompt(row).messages
    return {"messages": [*messages, {"role": "assistant", "content": f"{drawn}\n\n{answer}" if drawn else answer}]}


def stratum(row: Mapping) -> tuple[str, str, object]:
    """(setting, question type, answer-set size for FR or the answer for YN): what `balanced_ids` evens out."""
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
                balance: int | None = None) -> Iterator[dict]:
    """Chat records of the chosen configurations of `rows`' split, in row order; with `balance`, the
    seeded balanced draw only."""
    for config in configs:
        kept = None if balance is None else balanced_ids(rows, config, balance)
        for row in rows.rows([config]):
            if kept is None or row["id"] in kept:
                yield chat_record(row, maps)
