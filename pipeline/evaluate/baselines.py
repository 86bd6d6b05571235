"""Baseline answers, written as text in the row's own words so that they pass through the same
parser and scorer as a model's.

- random: YN a fair coin, FR one of the nine options; seeded per item, so independent of order.
- always-yes: YN Yes; FR every option (Yes to every relation).
- majority: YN the more frequent answer, FR the relation most often consistent, both counted
  over the rows of the configuration being scored.
- checker: the rows' own answers (the answer set); scores 100% by construction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random

from pipeline.errors import RoomspaceError
from pipeline.seeding import derive_seed
from pipeline.spatial.relations import DIRECTIONS, relation_words

BASELINES = ("random", "always-yes", "majority", "checker")


def baseline_predictions(name: str, rows: Sequence, seed: int = 0) -> dict[str, str]:
    """id -> answer text for every row (rows with id, question_type, view, options, answer, answer_set)."""
    if name == "random":
        return {r.id: Random(derive_seed(seed, "baseline", r.id)).choice(r.options) for r in rows}
    if name == "always-yes":
        return {r.id: "Yes" if r.question_type == "YN" else ", ".join(r.options) for r in rows}
    if name == "majority":
        yes_no = Counter(r.answer for r in rows if r.question_type == "YN")
        consistent = Counter(code for r in rows if r.question_type == "FR" for code in r.answer_set)
        answer = max(("Yes", "No"), key=lambda word: yes_no[word])  # a tie goes to Yes
        relation = max(DIRECTIONS, key=lambda code: consistent[code])  # a tie goes to the first code
        return {r.id: answer if r.question_type == "YN" else relation_words(relation, r.view, "label") for r in rows}
    if name == "checker":
        return {r.id: r.answer for r in rows}
    raise RoomspaceError(f"unknown baseline {name!r}; expected one of {', '.join(BASELINES)}")
