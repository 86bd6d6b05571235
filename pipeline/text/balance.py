"""The balanced sampler: which pair a question of a balanced configuration asks, and which relation
its YN question offers (docs/semantics.md, balanced configurations).

The paper asks one pair per room (o_1, o_n) and draws a YN candidate from the answer set or its
complement, so a question's candidate and setting predict its answer without the story. Here the
target is drawn first and a question of the room that has it is found after:

* FR: an answer-set size class (FR_CLASSES, weighted by FR_WEIGHTS over the classes the room's
  pairs have), then a pair whose answer set is of that class;
* FR about a picture (pipeline.text.pictured, one relation per pair): a relation drawn uniformly
  among those the pairs have, then a pair with it (`relation_question`);
* YN: a candidate among the relations that both answers allow in this room (some pair's answer
  holds it, another's does not), then Yes or No by a fair coin, then a pair with that answer. So
  within every room the candidate says nothing of the answer. Where no relation allows both (every
  pair's answer set is all nine), the fallback is a candidate and a pair drawn at random, and
  `Drawn.fallback` says so.

The pairs offered are those whose answer no single stated fact gives (pipeline.text.items), and
every draw comes from the `rng` handed in, so a room's questions stay a pure function of its seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from random import Random

FR_CLASSES = ((1,), (2, 3), (4, 5, 6), (7, 8), (9,))  # answer-set sizes drawn as one class
FR_WEIGHTS = (0.32, 0.27, 0.21, 0.17, 0.03)  # all nine (the last) rarely: rooms whose pairs are all so are a tenth of some settings

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


def relation_question(relations: Mapping[Pair, str], rng: Random) -> Drawn:
    """The pair an FR question about a picture asks: a relation drawn uniformly among those the pairs
    (each with one relation) have, then a pair with it."""
    present = sorted(set(relations.values()))
    relation = rng.choice(present)
    return Drawn(rng.choice([pair for pair, code in relations.items() if code == relation]), None, fallback=False)


def yn_question(answers: Mapping[Pair, frozenset[str]], codes: Sequence[str], rng: Random,
                kind_of: Callable[[Pair], str] | None = None) -> Drawn:
    """The pair a YN question asks and the relation it offers: a relation both answers allow, then
    Yes or No by a fair coin, then a pair with that answer (module docstring). With `kind_of`, both
    answers must be had among pairs of one kind (an object and the room, two objects), and the pair
    is of that kind: otherwise the kind of pair asked would tell the answer (an object is inside the
    room, never apart from it)."""
    groups: dict[str, list[Pair]] = {}
    for pair in answers:
        groups.setdefault(kind_of(pair) if kind_of else "", []).append(pair)
    both = [(code, group) for code in codes for group in groups.values()
            if any(code in answers[p] for p in group) and any(code not in answers[p] for p in group)]
    if not both:
        return Drawn(rng.choice(list(answers)), rng.choice(list(codes)), fallback=True)
    candidate = rng.choice(sorted({code for code, _ in both}, key=list(codes).index))
    group = rng.choice([group for code, group in both if code == candidate])
    yes = rng.random() < 0.5
    fitting = [p for p in group if (candidate in answers[p]) == yes]
    # A pair drawn whatever the answer, then the fitting pair nearest it (itself, or one sharing an end
    # there): so the objects asked about say as little as possible of the answer.
    anchor = rng.choice(group)
    near = [p for p in fitting if p == anchor] or [p for p in fitting if p[0] == anchor[0] or p[1] == anchor[1]] \
        or fitting
    return Drawn(rng.choice(near), candidate, fallback=False)


def paired_candidates(answers: Sequence[frozenset[str] | tuple[str, ...]], codes: Sequence[str],
                      rng: Random) -> list[str]:
    """A YN candidate for each of a room's questions whose answer sets are fixed already (agent rows):
    candidates are handed out in pairs, each to one question whose answer holds it (Yes) and one whose
    answer does not (No), a relation both answers allow drawn each time; so within the room every
    candidate is Yes as often as No. Questions left without a partner get a relation at random."""
    open_slots = list(range(len(answers)))
    rng.shuffle(open_slots)
    chosen: dict[int, str] = {}
    while True:
        both = [code for code in codes if any(code in answers[k] for k in open_slots)
                and any(code not in answers[k] for k in open_slots)]
        if not both:
            break
        code = rng.choice(both)
        yes = next(k for k in open_slots if code in answers[k])
        no = next(k for k in open_slots if code not in answers[k])
        chosen[yes], chosen[no] = code, code
        open_slots = [k for k in open_slots if k not in (yes, no)]
    for k in open_slots:
        chosen[k] = rng.choice(list(codes))
    return [chosen[k] for k in range(len(answers))]
