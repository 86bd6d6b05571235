"""The balanced sampler: which pair a question of a balanced configuration asks, and which relation
its YN question offers (docs/semantics.md, balanced configurations).

The paper asks one pair per room (o_1, o_n) and draws a YN candidate from the answer set or its
complement, so a question's candidate and setting predict its answer without the story. Here the
target is drawn first and a question of the room that has it is found after:

* FR: an answer-set size class (FR_CLASSES, weighted by FR_WEIGHTS over the classes the room's
  pairs have), then a pair whose answer set is of that class;
* YN: a candidate among the relations that both answers allow in this room (some pair's answer
  holds it, another's does not), then Yes or No by a fair coin, then a pair with that answer. So
  within every room the candidate says nothing of the answer. Where no relation allows both (every
  pair's answer set is all nine), the fallback is a candidate and a pair drawn at random, and
  `Drawn.fallback` says so.

The pairs offered are those whose answer no single stated fact gives (pipeline.text.items), and
every draw comes from the `rng` handed in, so a room's questions stay a pure function of its seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random

FR_CLASSES = ((1,), (2, 3), (4, 5, 6), (7, 8), (9,))  # answer-set sizes drawn as one class
FR_WEIGHTS = (0.3, 0.25, 0.2, 0.17, 0.08)  # all nine (the last) under a tenth: rooms lacking a class give its weight to the others

Pair = tuple[str, str]


@dataclass(frozen=True)
class Drawn:
    pair: Pair
    candidate: str | None  # a YN question's offered relation
    fallback: bool  # the room had no question with the target drawn


def fr_question(answers: Mapping[Pair, frozenset[str]], rng: Random) -> Drawn:
    """The pair an FR question asks: its answer set's size class drawn first."""
    pairs = list(answers)
    by_class = [[p for p in pairs if len(answers[p]) in sizes] for sizes in FR_CLASSES]
    present = [k for k, members in enumerate(by_class) if members]
    chosen = rng.choices(present, weights=[FR_WEIGHTS[k] for k in present])[0]
    return Drawn(rng.choice(by_class[chosen]), None, fallback=False)


def yn_question(answers: Mapping[Pair, frozenset[str]], codes: Sequence[str], rng: Random) -> Drawn:
    """The pair a YN question asks and the relation it offers: a relation both answers allow, then
    Yes or No by a fair coin, then a pair with that answer (module docstring)."""
    pairs = list(answers)
    both = [code for code in codes if any(code in answers[p] for p in pairs) and any(code not in answers[p] for p in pairs)]
    if not both:
        return Drawn(rng.choice(pairs), rng.choice(list(codes)), fallback=True)
    candidate = rng.choice(both)
    yes = rng.random() < 0.5
    return Drawn(rng.choice([p for p in pairs if (candidate in answers[p]) == yes]), candidate, fallback=False)
