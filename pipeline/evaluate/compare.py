"""Paired comparisons of two systems on the same questions, with 95 % intervals and p-values.

`score` with two or more systems (predictions files or baselines) compares each pair of them, in the
order given, on the items of every report group and of every breakdown value (the same slices as the
tables). Both answered the same items, so the comparison is paired:

* YN accuracy and FR exact (right or wrong per item): McNemar's exact test, the two-sided binomial
  test of the discordant items (the first right and the second wrong, and the reverse) at 1/2
  (pipeline.evaluate.stats.mcnemar_exact); an item's outcome is its first round's.
* FR Jaccard and FR F1 (items) (a score per item): a paired bootstrap over rooms, its p the
  two-sided share of resampled differences on the far side of 0.

Every difference (first - second, the mean over rounds) carries the 95 % paired bootstrap interval
over rooms of pipeline.evaluate.stats.paired_gap, as the gaps between conditions do
(pipeline.evaluate.gaps), seeded from --seed and what is compared. Items without an answer stay in
(they are wrong); a system with no answer to any item of a slice's question type (the regions and
direct baselines on YN and FR questions) is not compared there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from pipeline.evaluate.score import NO_ANSWER, Outcomes, ScoreRow
from pipeline.evaluate.stats import mcnemar_exact, paired_gap
from pipeline.seeding import derive_seed

MCNEMAR, BOOTSTRAP = "McNemar exact", "paired bootstrap over rooms"
# (measure, question type, the Outcomes array scored, the test of its p)
MEASURES = (("YN accuracy", "YN", "correct", MCNEMAR), ("FR exact", "FR", "correct", MCNEMAR),
            ("FR Jaccard", "FR", "jaccard", BOOTSTRAP), ("FR F1 (items)", "FR", "f1", BOOTSTRAP))
OVERALL = "overall"


@dataclass(frozen=True)
class Comparison:
    group: str  # the configuration (or pool)
    breakdown: str  # "overall", or the breakdown (setting, view, room_type, ...)
    value: str  # the breakdown's value ("" overall)
    first: str  # the systems; difference = first - second
    second: str
    measure: str  # YN accuracy, FR exact, FR Jaccard or FR F1 (items)
    test: str  # what p comes from: McNemar exact, or the paired bootstrap over rooms
    items: int
    rooms: int
    first_score: float
    second_score: float
    difference: float
    low: float  # 95 % paired bootstrap interval over rooms of the difference
    high: float
    p: float  # two-sided
    first_only: int | None = None  # McNemar: items the first got right and the second wrong
    second_only: int | None = None  # ... and the reverse


def compare_slice(rows: Sequence[ScoreRow], items: np.ndarray, systems: Mapping[str, Outcomes], seed: int,
                  group: str, breakdown: str = OVERALL, value: object = "") -> list[Comparison]:
    """Every pair of `systems` on the items at positions `items`, measure by measure (module docstring)."""
    if len(systems) < 2:
        return []
    types = np.array([rows[k].question_type for k in items])
    rooms_of = np.array([rows[k].room_id for k in items])
    found = []
    for measure, question_type, array, test in MEASURES:
        chosen = items[types == question_type]
        if not chosen.size:
            continue
        rooms = rooms_of[types == question_type]
        answered = {name: not (o.status[chosen] == NO_ANSWER).all() for name, o in systems.items()}
        for first, second in combinations(systems, 2):
            if not (answered[first] and answered[second]):
                continue
            a, b = getattr(systems[first], array)[chosen], getattr(systems[second], array)[chosen]
            gap = paired_gap(a.mean(axis=1).astype(float), b.mean(axis=1).astype(float), rooms,
                             derive_seed(seed, "compare", group, breakdown, str(value), first, second, measure))
            first_only = second_only = None
            p = gap.p
            if test == MCNEMAR:
                first_only, second_only = int((a[:, 0] & ~b[:, 0]).sum()), int((~a[:, 0] & b[:, 0]).sum())
                p = mcnemar_exact(first_only, second_only)
            found.append(Comparison(group, breakdown, str(value), first, second, measure, test, gap.pairs, gap.rooms,
                                    gap.first, gap.second, gap.difference, gap.low, gap.high, p, first_only,
                                    second_only))
    return found
