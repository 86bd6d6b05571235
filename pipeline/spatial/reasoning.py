"""Reasoning paths: the shortest chain of described pairs from o_1 to o_n, composed step by step.

Only the story's direction facts are links, usable in either orientation (via the converse).
Composition of the nine directions is the product of the per-axis point-algebra compositions
(docs/semantics.md section 13): on one axis, < then < gives <, < then = gives <, < then > gives any of the
three; a set composes element-wise and the results unite. The path is a proof sketch, not the
checker: other facts (shortcuts, regions, distances, the grid's size) can narrow the answer
further, which is what `decides` records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from pipeline.data import data_json
from pipeline.spatial.facts import Fact
from pipeline.spatial.relations import DIRECTIONS, converse, direction_signs, in_canonical_order

_DIRECTION_OF_SIGNS = {direction_signs(code): code for code in DIRECTIONS}


@dataclass(frozen=True)
class PathStep:
    fact: Fact  # the described pair used, as the story states it
    reached: str  # the object this step reaches
    composed: tuple[str, ...]  # o_1 relative to `reached`: every direction the path so far allows


def _axis(first: int, second: int) -> tuple[int, ...]:
    """sign(a - c) given sign(a - b) and sign(b - c)."""
    if first == 0 or first == second:
        return (second,)
    if second == 0:
        return (first,)
    return (-1, 0, 1)


@cache
def compose_one(first: str, second: str) -> frozenset[str]:
    """A relative to C given A <first> of B and B <second> of C."""
    (fi, fj), (si, sj) = direction_signs(first), direction_signs(second)
    return frozenset(_DIRECTION_OF_SIGNS[(i, j)] for i in _axis(fi, si) for j in _axis(fj, sj))


def compose(first: Iterable[str], second: Iterable[str]) -> frozenset[str]:
    """Element-wise composition of two sets of directions, united."""
    second = tuple(second)
    return frozenset(code for f in first for s in second for code in compose_one(f, s))


def shortest_chain(facts: Sequence[Fact], start: str, goal: str) -> tuple[Fact, ...]:
    """The direction facts of a shortest chain from start to goal; () when none links them.

    Breadth first, neighbours in story order, so ties go to the pair stated first.
    """
    links: dict[str, list[tuple[str, Fact]]] = {}
    for fact in facts:
        if fact.object is not None and fact.relation in DIRECTIONS:
            links.setdefault(fact.subject, []).append((fact.object, fact))
            links.setdefault(fact.object, []).append((fact.subject, fact))
    came_by: dict[str, tuple[str, Fact] | None] = {start: None}
    frontier = [start]
    while frontier and goal not in came_by:
        following = []
        for name in frontier:
            for other, fact in links.get(name, ()):
                if other not in came_by:
                    came_by[other] = (name, fact)
                    following.append(other)
        frontier = following
    if goal not in came_by or start == goal:
        return ()
    chain = []
    name = goal
    while (step := came_by[name]) is not None:
        chain.append(step[1])
        name = step[0]
    return tuple(reversed(chain))


def oriented_relation(fact: Fact, source: str) -> str:
    """The relation of `source` to the fact's other object: the fact's own, or its converse."""
    return fact.relation if fact.subject == source else converse(fact.relation)


def reasoning_path(facts: Sequence[Fact], start: str, goal: str) -> tuple[PathStep, ...]:
    steps = []
    here, composed = start, None
    for fact in shortest_chain(facts, start, goal):
        relation = oriented_relation(fact, here)
        there = fact.object if fact.subject == here else fact.subject
        composed = frozenset((relation,)) if composed is None else compose(composed, (relation,))
        steps.append(PathStep(fact, there, in_canonical_order(composed)))
        here = there
    return tuple(steps)


def path_text(steps: Sequence[PathStep], start: str, ref: Callable[[str], str],
              words: Callable[[str], str]) -> str:
    """The path in words, uncapitalised: each link oriented along the path, then what follows for o_1 after each hop.

    `ref` says an object ("the bed", "chair 1"), `words` a direction ("north-west of").
    """
    if not steps:
        return ""
    slots = data_json("templates.json")["path"]
    parts, here = [], start
    for k, step in enumerate(steps):
        parts.append(slots["link"].format(subject=ref(here), relation=words(oriented_relation(step.fact, here)),
                                          object=ref(step.reached)))
        if k:
            conclusion = slots["any"] if len(step.composed) == len(DIRECTIONS) else slots["so"]
            parts.append(conclusion.format(subject=ref(start), object=ref(step.reached),
                                           relations=_either([words(c) for c in step.composed], slots)))
        here = step.reached
    return slots["join"].join(parts) + "."


def _either(options: list[str], slots: dict) -> str:
    """"north of", "north of or west of", "north of, west of or in the same place as"."""
    return options[0] if len(options) == 1 else slots["comma"].join(options[:-1]) + slots["or"] + options[-1]
