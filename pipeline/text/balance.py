"""The balanced sampler: which pair a question of a balanced configuration asks, and which relation
its YN question offers (docs/semantics.md, balanced configurations).

The paper asks one pair per room (o_1, o_n) and draws a YN candidate from the answer set or its
complement, so a question's candidate and setting predict its answer without the story. Here the
target is drawn first and a question of the room that has it is found after:

* FR: a pair drawn by its answer set's weight and its types' factor, the set's weight shared
  among the room's pairs that give it; fitted (pipeline.text.prior) so that over rooms every answer
  set a quarter or more of them give is asked as often as another (all nine at ALL_NINE_SHARE),
  and a rarer one wherever it can be;
* FR about a picture (pipeline.text.pictured, one relation per pair): its straight pairs first (one
  axis level: north, east, ...), then two diagonal pairs per straight one, each drawn as a relation
  first among those of its kind the picture has, then a pair with it (`relation_questions`): a
  picture without a straight pair asks no FR question, so no diagonal answers more than a sixth of
  a view's questions where the diagonals are alike;
* YN: a candidate among the relations that both answers allow in this room (some pair's answer
  holds it, another's does not), then a pair by its types' factor for that relation and its
  answer, shared among the pairs of the same answer (so either answer weighs its pairs' mean
  factor: a fair coin where the factors are 1). Where no relation allows both (every pair's answer set
  is all nine), the fallback is a candidate and a pair drawn at random, and `Drawn.fallback` says so
  (pipeline.text.items then asks no YN question). rcc8 asks only where two pairs of the same two
  object types differ (`group_of`), Yes or No by a fair coin: what two types are says too much of
  how their footprints meet.

The pairs offered are those whose answer no single stated fact gives (pipeline.text.items), and
every draw comes from the `rng` handed in, so a room's questions stay a pure function of its seed.

Rooms are not oriented at random (ProcTHOR puts beds, toilets and counters far from the door more
often than not), so an object's type tells something of where it stands, and balancing within a
room does not undo that across rooms. So a pair's weight in either draw has a factor per type key
(`type_keys`: its subject's type, its object's, the two together), fitted on rooms no build uses
(`TypePrior`, python -m pipeline.text.prior) so that over rooms each key is asked with the answer
sets spread as over all keys, and with Yes as often as No for every relation offered. A type that
usually stands north is then asked about as often where it does not as where it does. Measured by
`roomspace audit` (docs/semantics.md section 17).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from math import prod
from random import Random

from pipeline.data import data_json
from pipeline.spatial.frames import FACINGS, on_plan, seen_facing
from pipeline.spatial.relations import DIRECTIONS, converse, direction_signs

ALL_NINE_SHARE = 0.03  # of a setting's FR draws: rooms whose pairs are all so are a tenth of some settings
STRAIGHT_PER_PICTURE = 2  # a picture's FR questions about straight pairs, at most (relation_questions)
DIAGONALS_PER_STRAIGHT = 2  # and about diagonal pairs, at most this many per straight one

Pair = tuple[str, str]
AnswerSet = frozenset[str]
PRIOR_FILE = "type_prior.json"
TYPE_ROLES = ("subject", "object", "pair")  # what `type_keys` gives, in order


def type_keys(subject: str, obj: str) -> tuple[str, str, str]:
    """What a pair's weight in a draw is fitted by, per TYPE_ROLES: its subject's type, its
    object's, and the two together."""
    return subject, obj, f"{subject}|{obj}"


class TypeWeights:
    """How a setting's draws weigh a pair by its objects' types (pipeline.text.prior's table): each
    answer set's FR weight, and a pair's factors on it; a pair's factor in a YN draw offering a
    relation, by its answer."""

    def __init__(self, sets: Sequence[AnswerSet], weights: Sequence[float],
                 fr_factors: Callable[[Pair], Sequence[float]] | None = None,
                 yn_factors: Callable[[Pair, str, bool], float] | None = None) -> None:
        self.sets = {answer: k for k, answer in enumerate(sets)}
        self.weights = weights  # of each of `sets` in an FR draw (`fr_question`)
        self.fr_factors = fr_factors  # a pair -> its factor on each of `sets`; None: all 1
        self.yn_factors = yn_factors  # (pair, relation offered, its answer is Yes) -> its factor; None: 1

    def weight(self, answer: AnswerSet) -> float:
        """A set the fitting rooms (almost) never gave is as rare as the rarest: weighed as the heaviest."""
        k = self.sets.get(answer)
        return max(self.weights) if k is None else self.weights[k]

    def fr_weight(self, pair: Pair, answer: AnswerSet) -> float:
        """A pair's weight in an FR draw, before it is shared with the room's other pairs giving its
        set: its set's weight times its types' factor on that set."""
        k = self.sets.get(answer)
        return self.weight(answer) * (1.0 if k is None or self.fr_factors is None else self.fr_factors(pair)[k])

    def yn_weight(self, pair: Pair, code: str, yes: bool) -> float:
        """A pair's weight in a YN draw offering `code`, before it is shared with the pairs of its answer."""
        return 1.0 if self.yn_factors is None else self.yn_factors(pair, code, yes)


class TypePrior:
    """Per setting, its answer sets, each set's FR weight, and per type key (`type_keys`: a type as
    a pair's subject, as its object, a pair of types) its FR factors (one per set) and YN factors
    (per relation in DIRECTIONS order, Yes then No); a key not in the table weighs 1."""

    def __init__(self, table: Mapping) -> None:
        self.settings = table["settings"]
        # per setting, each pair of types' factors (`weights`), made when first needed, for every room
        self._factors: dict[str, dict[tuple[str, str], tuple[list[float], list[float]]]] = {
            setting: {} for setting in self.settings}

    def weights(self, setting: str, type_of: Callable[[Hashable], str]) -> TypeWeights:
        """The setting's weights, a pair's ends read as object types by `type_of`."""
        table = self.settings[setting]
        fr_tables, yn_tables = ([table[f"{kind}_{role}"] for role in TYPE_ROLES] for kind in ("fr", "yn"))
        ones = {"fr": [1.0] * len(table["sets"]), "yn": [1.0] * 2 * len(DIRECTIONS)}
        seen = self._factors[setting]

        def factors(pair: Pair) -> tuple[list[float], list[float]]:
            """A pair's FR factors and YN factors: its type keys' products."""
            types = (type_of(pair[0]), type_of(pair[1]))
            if types not in seen:
                keys = type_keys(*types)
                seen[types] = tuple(
                    [prod(column) for column in zip(*(by_key.get(key, ones[kind])
                                                      for by_key, key in zip(tables, keys)))]
                    for kind, tables in (("fr", fr_tables), ("yn", yn_tables)))
            return seen[types]

        def yn_factors(pair: Pair, code: str, yes: bool) -> float:
            return factors(pair)[1][2 * DIRECTIONS.index(code) + (not yes)]
        return TypeWeights([frozenset(answer.split(",")) for answer in table["sets"]], table["weights"],
                           lambda pair: factors(pair)[0], yn_factors)


UNIFORM = TypeWeights([], [1.0])  # every answer set and pair alike: the hard configurations' (no prior is fitted)


@cache
def type_prior() -> TypePrior:
    return TypePrior(data_json(PRIOR_FILE))


def seen_weights(weights: TypeWeights, facing_of: Callable[[Hashable], str]) -> TypeWeights:
    """`weights` for questions asked facing a wall (agent rows, pipeline.text.agents): a question is
    a (subject, object, ...) key whose answer is its pair's plan answer set as seen facing
    `facing_of(key)`. A seen set's FR weight is the mean of its four turnings' plan weights (facings
    taken as equally likely); a key's factors are its pair's on the plan set, or the plan relation,
    it turns from."""
    turned = {facing: [frozenset(seen_facing(code, facing) for code in answer) for answer in weights.sets]
              for facing in FACINGS}
    sets = list(dict.fromkeys(answer for facing in FACINGS for answer in turned[facing]))
    index = {answer: k for k, answer in enumerate(sets)}
    set_weights = [0.0] * len(sets)
    for facing in FACINGS:
        for answer, weight in zip(turned[facing], weights.weights):
            set_weights[index[answer]] += weight / len(FACINGS)

    def fr_factors(key: Hashable) -> list[float]:
        turned_factors = [1.0] * len(sets)
        for answer, factor in zip(turned[facing_of(key)], weights.fr_factors((key[0], key[1]))):
            turned_factors[index[answer]] = factor
        return turned_factors

    def yn_factors(key: Hashable, code: str, yes: bool) -> float:
        return weights.yn_weight((key[0], key[1]), on_plan(code, facing_of(key)), yes)
    return TypeWeights(sets, set_weights, fr_factors if weights.fr_factors else None, yn_factors)


@dataclass(frozen=True)
class Drawn:
    pair: Pair
    candidate: str | None  # a YN question's offered relation
    fallback: bool  # the room had no question with the target drawn


def fr_question(answers: Mapping[Pair, AnswerSet], rng: Random, weights: TypeWeights) -> Drawn:
    """The pair an FR question asks: drawn by `fr_weights` (its set's weight times its types'
    factor, shared among the room's pairs giving its set, so how many do says nothing of its draw)."""
    return Drawn(rng.choices(list(answers), weights=fr_weights(answers, weights))[0], None, fallback=False)


def fr_weights(answers: Mapping[Pair, AnswerSet], weights: TypeWeights) -> list[float]:
    """Each pair's weight in `fr_question`'s draw, in `answers`' order: its `TypeWeights.fr_weight`,
    shared among the pairs giving its set."""
    pairs_of = Counter(answers.values())
    return [weights.fr_weight(pair, answer) / pairs_of[answer] for pair, answer in answers.items()]


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


def allowed(codes: Sequence[str], answers: Sequence[AnswerSet]) -> list[str]:
    """The codes, in order, that both answers allow among these answer sets: one holds the code,
    another does not (a YN question's candidates, `yn_question`)."""
    return [code for code in codes if len({code in answer for answer in answers}) == 2]


def yn_question(answers: Mapping[Pair, AnswerSet], codes: Sequence[str], rng: Random,
                weights: TypeWeights | None = None, group_of: Callable[[Pair], Hashable] | None = None,
                offered: Mapping[Pair, AnswerSet] | None = None) -> Drawn:
    """The pair a YN question asks and the relation it offers: a relation both answers allow, then
    a pair by its types' factor (`TypeWeights.yn_weight`) shared among the pairs of its answer, so
    either answer weighs its pairs' mean factor (without `weights`, where a question does not tell
    what its objects are, every factor is 1: Yes or No by a fair coin, then a pair). With
    `group_of`, both answers must be had among the pairs of one group, and the pair asked is of
    that group: where what a group shares (its objects' types) all but decides the answer, only a
    group that holds both answers can ask without telling it. With `offered`, a pair is asked only
    about the relations it offers (a hard configuration's: those R2 leaves open, so that a No is
    one only search finds)."""
    groups: dict[Hashable, list[Pair]] = {}
    for pair in answers:
        groups.setdefault(group_of(pair) if group_of else None, []).append(pair)

    def offering(code: str, group: list[Pair]) -> list[Pair]:
        return group if offered is None else [p for p in group if code in offered[p]]
    both = [(code, group) for code in codes for group in groups.values()
            if allowed((code,), [answers[p] for p in offering(code, group)])]
    if not both:
        return Drawn(rng.choice(list(answers)), rng.choice(list(codes)), fallback=True)
    candidate = rng.choice(list(dict.fromkeys(code for code, _ in both)))
    group = offering(candidate, rng.choice([group for code, group in both if code == candidate]))
    sides = Counter(candidate in answers[p] for p in group)
    chances = [(weights.yn_weight(p, candidate, yes) if weights else 1.0) / sides[yes]
               for p, yes in ((p, candidate in answers[p]) for p in group)]
    return Drawn(rng.choices(group, weights=chances)[0], candidate, fallback=False)
