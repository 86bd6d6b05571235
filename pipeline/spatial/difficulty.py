"""Difficulty metadata of an item beyond hops and answer-set size.

- tightness: the mean, over the story's facts, of the share of the fact's domain its relation
  excludes on the d x d grid -- of the d^4 ordered cell pairs for a direction or distance fact,
  of the d^2 cells for a region or wall fact. A story of near-exact facts ("O", a region) is
  tight; one of loose facts ("NTPP", "far") is not. 0.0 for a story without facts.
- layout_decides: the region facts of the two query objects alone give the story's answer set
  (by the checker), so the question needs none of the story's other facts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

from pipeline.spatial.checker import pair_answer
from pipeline.spatial.facts import Fact
from pipeline.spatial.relations import DISTANCE_SCALES, REGIONS, UNARY_CODES, direction, distance, holds


@cache
def _held_share(d: int) -> dict[str, float]:
    """Per code, the share of its domain (cell pairs or cells) where it holds."""
    cells = [(i, j) for i in range(d) for j in range(d)]
    pairs: Counter[str] = Counter()
    for a in cells:
        for b in cells:
            pairs[direction(a, b)] += 1
            pairs.update(distance(a, b, d, scale) for scale in DISTANCE_SCALES)
    share = {code: count / len(cells) ** 2 for code, count in pairs.items()}
    share.update({code: sum(holds(code, d, c) for c in cells) / len(cells) for code in UNARY_CODES})
    return share


def tightness(facts: Sequence[Fact], d: int) -> float:
    if not facts:
        return 0.0
    share = _held_share(d)
    return sum(1.0 - share[fact.relation] for fact in facts) / len(facts)


def layout_decides(facts: Sequence[Fact], query: tuple[str, str], answer: Sequence[str], d: int) -> bool:
    layout = [f for f in facts if f.object is None and f.relation in REGIONS and f.subject in query]
    if {f.subject for f in layout} != set(query):
        return False  # the story places at least one of them in no region
    return pair_answer(layout, query, d) == frozenset(answer)
