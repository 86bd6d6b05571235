"""The balanced sampler: which pair a question of a balanced configuration asks, and which relation
its YN question offers (docs/semantics.md, balanced configurations).

The paper asks one pair per room (o_1, o_n) and draws a YN candidate from the answer set or its
complement, so a question's candidate and setting predict its answer without the story. Here the
target is drawn first and a question of the room that has it is found after:

* FR: an answer set among those the room's pairs give, by its weight, then a pair that gives it;
  the weights are fitted with the type prior (pipeline.text.prior) so that over rooms every answer
  set a quarter or more of them give is asked as often as another (all nine at ALL_NINE_SHARE),
  and a rarer one wherever it can be;
* FR about a picture (pipeline.text.pictured, one relation per pair): its straight pairs first (one
  axis level: north, east, ...), then two diagonal pairs per straight one, each drawn as a relation
  first among those of its kind the picture has, then a pair with it (`relation_questions`): a
  picture without a straight pair asks no FR question, so no diagonal answers more than a sixth of
  a view's questions where the diagonals are alike;
* YN: a candidate among the relations that both answers allow in this room (some pair's answer
  holds it, another's does not), then Yes or No by a fair coin, then a pair with that answer. So
  within every room the candidate says nothing of the answer. Where no relation allows both (every
  pair's answer set is all nine), the fallback is a candidate and a pair drawn at random, and
  `Drawn.fallback` says so (pipeline.text.items then asks no YN question). rcc8 asks only where
  two pairs of the same two object types differ (`group_of`): what two types are says too much of
  how their footprints meet.

The pairs offered are those whose answer no single stated fact gives (pipeline.text.items), and
every draw comes from the `rng` handed in, so a room's questions stay a pure function of its seed.

Rooms are not oriented at random (ProcTHOR puts beds, toilets and counters far from the door more
often than not), so an object's type tells something of where it stands. Balancing within a room
does not undo that across rooms; so among the pairs that fit a drawn target, a pair is chosen with
probability inversely proportional to how likely its types make that target (for FR, to that
likelihood to the power FR_SHARPNESS: `TypePrior`, fitted on rooms no build uses by
python -m pipeline.text.prior). A type that usually stands north is then asked about as often where
it does not as where it does. Measured by `roomspace audit` (docs/semantics.md section 17).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from random import Random

from pipeline.data import data_json
from pipeline.spatial.frames import FACINGS, seen_facing
from pipeline.spatial.relations import converse, direction_signs

ALL_NINE_SHARE = 0.03  # of a setting's FR draws: rooms whose pairs are all so are a tenth of some settings
FR_SHARPNESS = 2.5  # a pair's weight is 1 / (how likely its types make its answer) ** this (module docstring)
YN_CLAMP = (0.03, 0.97)  # no type makes a YN answer certain: weights stay within 1/0.03
STRAIGHT_PER_PICTURE = 2  # a picture's FR questions about straight pairs, at most (relation_questions)
DIAGONALS_PER_STRAIGHT = 2  # and about diagonal pairs, at most this many per straight one
UNSEEN = 0.001  # the prior share of an answer set the fitting rooms never gave, for a pair's types
FR_FLOOR = 0.02  # shares below count as this in FR weights: a rare answer set is favoured, not forced

Pair = tuple[str, str]
AnswerSet = frozenset[str]
PRIOR_FILE = "type_prior.json"


class Likely:
    """How likely a pair's object types make its answer, by pipeline.text.prior's table: a pair's
    answer set, and whether its answer holds a relation; and each answer set's FR weight."""

    def __init__(self, sets: Sequence[AnswerSet], weights: Sequence[float],
                 posterior: Callable[[Pair], Sequence[float]]) -> None:
        self.sets = {answer: k for k, answer in enumerate(sets)}
        self.weights = weights  # of each of `sets` in an FR draw (`fr_question`)
        self.posterior = posterior  # a pair -> the share of each of `sets`

    def weight(self, answer: AnswerSet) -> float:
        """A set the fitting rooms never gave is as rare as the rarest: weighed as the heaviest."""
        k = self.sets.get(answer)
        return max(self.weights) if k is None else self.weights[k]

    def fr_weight(self, pair: Pair, answer: AnswerSet) -> float:
        """A pair's weight in an FR draw, before it is shared with the room's other pairs giving its
        set: its set's weight, divided by how likely its types make the set (to the power FR_SHARPNESS)."""
        return self.weight(answer) / max(self.answer(pair, answer), FR_FLOOR) ** FR_SHARPNESS

    def answer(self, pair: Pair, answer: AnswerSet) -> float:
        k = self.sets.get(answer)
        return UNSEEN if k is None else self.posterior(pair)[k]

    def holds(self, pair: Pair, code: str) -> float:
        low, high = YN_CLAMP
        return min(max(sum(share for answer, share in zip(self.sets, self.posterior(pair)) if code in answer), low), high)


class TypePrior:
    """Per setting, the answer sets its askable pairs give and their shares: over all pairs, and per
    object type as the pair's subject and as its object (smoothed toward the whole). A pair's share
    of each set combines its two types as independent evidence (naive Bayes)."""

    def __init__(self, table: Mapping) -> None:
        self.settings = table["settings"]

    def likely(self, setting: str, type_of: Callable[[Hashable], str]) -> Likely:
        """The setting's prior, a pair's ends read as object types by `type_of`."""
        table = self.settings[setting]
        base, subject, obj = table["base"], table["subject"], table["object"]
        seen: dict[tuple[str, str], tuple[float, ...]] = {}

        def posterior(pair: Pair) -> tuple[float, ...]:
            types = (type_of(pair[0]), type_of(pair[1]))
            if types not in seen:
                joint = [s * o / b for s, o, b in zip(subject.get(types[0], base), obj.get(types[1], base), base)]
                total = sum(joint)
                seen[types] = tuple(share / total for share in joint)
            return seen[types]
        return Likely([frozenset(answer.split(",")) for answer in table["sets"]], table["weights"], posterior)


@cache
def type_prior() -> TypePrior:
    return TypePrior(data_json(PRIOR_FILE))


def seen_likely(likely: Likely, facing_of: Callable[[Hashable], str]) -> Likely:
    """`likely` for questions asked facing a wall (agent rows, pipeline.text.agents): a question is
    a (subject, object, ...) key whose answer is its pair's plan answer set as seen facing
    `facing_of(key)`. Its posterior is its pair's turned with it; a seen set's FR weight is the mean
    of its four turnings' plan weights (facings taken as equally likely)."""
    turned = {facing: [frozenset(seen_facing(code, facing) for code in answer) for answer in likely.sets]
              for facing in FACINGS}
    sets = list(dict.fromkeys(answer for facing in FACINGS for answer in turned[facing]))
    index = {answer: k for k, answer in enumerate(sets)}
    weights = [0.0] * len(sets)
    for facing in FACINGS:
        for answer, weight in zip(turned[facing], likely.weights):
            weights[index[answer]] += weight / len(FACINGS)
    seen: dict[tuple[Pair, str], list[float]] = {}

    def posterior(key: Hashable) -> list[float]:
        pair, facing = (key[0], key[1]), facing_of(key)
        if (pair, facing) not in seen:
            turned_shares = [0.0] * len(sets)
            for answer, share in zip(turned[facing], likely.posterior(pair)):
                turned_shares[index[answer]] += share
            seen[pair, facing] = turned_shares
        return seen[pair, facing]
    return Likely(sets, weights, posterior)


@dataclass(frozen=True)
class Drawn:
    pair: Pair
    candidate: str | None  # a YN question's offered relation
    fallback: bool  # the room had no question with the target drawn


def fr_question(answers: Mapping[Pair, AnswerSet], rng: Random, likely: Likely) -> Drawn:
    """The pair an FR question asks: an answer set the room gives, by its fitted weight, and a pair
    that gives it, the less its types make it likely the likelier (`Likely.fr_weight`). A set's
    weight is shared among the room's pairs that give it, so how many do says nothing of its draw."""
    return Drawn(rng.choices(list(answers), weights=fr_weights(answers, likely))[0], None, fallback=False)


def fr_weights(answers: Mapping[Pair, AnswerSet], likely: Likely) -> list[float]:
    """Each pair's weight in `fr_question`'s draw, in `answers`' order: its `Likely.fr_weight`,
    shared among the pairs giving its set (pipeline.text.prior fits the sets' weights with it)."""
    pairs_of = Counter(answers.values())
    return [likely.fr_weight(pair, answer) / pairs_of[answer] for pair, answer in answers.items()]


def relation_questions(relations: Mapping[Pair, str], count: int, rng: Random) -> list[Pair]:
    """The pairs a picture's FR questions ask, at most `count` (`relations`: each ordered pair's one
    relation, both orders of a pair given, pipeline.text.pictured). Up to STRAIGHT_PER_PICTURE
    straight pairs (level on one axis: N, E, S, W), then up to DIAGONALS_PER_STRAIGHT diagonal pairs
    for each straight one asked; each drawn as its relation first, uniformly among the relations of
    its kind the pairs not yet asked have (those of an axis, N-S, E-W, NE-SW or NW-SE, not yet asked
    in the picture where there are any), then a pair with it. So at most two thirds of a view's FR
    questions are diagonal, wherever pictures show level pairs less often than diagonal ones (a
    perspective picture shows a pair level on an axis only with a margin on the other: section 12),
    and a picture without a straight pair asks no FR question."""
    left = dict(relations)
    asked: list[Pair] = []
    axes: set[frozenset[str]] = set()

    def draw(straight: bool) -> bool:
        present = sorted({code for code in left.values() if _level_axes(code) == int(straight)})
        if not present:
            return False
        fresh = [code for code in present if frozenset({code, converse(code)}) not in axes]
        code = rng.choice(fresh or present)
        pair = rng.choice([p for p, c in left.items() if c == code])
        asked.append(pair)
        axes.add(frozenset({code, converse(code)}))
        del left[pair]
        left.pop(pair[::-1], None)
        return True

    straight = 0
    while straight < min(STRAIGHT_PER_PICTURE, count) and draw(straight=True):
        straight += 1
    diagonal = 0
    while diagonal < min(DIAGONALS_PER_STRAIGHT * straight, count - straight) and draw(straight=False):
        diagonal += 1
    return asked


def _level_axes(code: str) -> int:
    """How many axes a direction is level on: 0 for a diagonal, 1 for a straight one, 2 for the same place."""
    return list(direction_signs(code)).count(0)


def yn_question(answers: Mapping[Pair, AnswerSet], codes: Sequence[str], rng: Random,
                likely: Likely | None = None, group_of: Callable[[Pair], Hashable] | None = None) -> Drawn:
    """The pair a YN question asks and the relation it offers: a relation both answers allow, then
    Yes or No by a fair coin, then a pair with that answer, the less its types make that answer
    likely the likelier (module docstring; without `likely`, where a question does not tell what its
    objects are, every such pair alike). With `group_of`, both answers must be had among the
    pairs of one group, and the pair asked is of that group: where what a group shares (its
    objects' types) all but decides the answer, only a group that holds both answers can ask
    without telling it."""
    groups: dict[Hashable, list[Pair]] = {}
    for pair in answers:
        groups.setdefault(group_of(pair) if group_of else None, []).append(pair)
    both = [(code, group) for code in codes for group in groups.values()
            if any(code in answers[p] for p in group) and any(code not in answers[p] for p in group)]
    if not both:
        return Drawn(rng.choice(list(answers)), rng.choice(list(codes)), fallback=True)
    candidate = rng.choice(list(dict.fromkeys(code for code, _ in both)))
    group = rng.choice([group for code, group in both if code == candidate])
    yes = rng.random() < 0.5
    fitting = [p for p in group if (candidate in answers[p]) == yes]
    weights = likely and [1 / (likely.holds(p, candidate) if yes else 1 - likely.holds(p, candidate)) for p in fitting]
    return Drawn(rng.choices(fitting, weights=weights)[0], candidate, fallback=False)
