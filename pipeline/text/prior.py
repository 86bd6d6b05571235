"""Fits the balanced sampler's type weights (pipeline.text.balance.TypePrior) and writes them as
pipeline/data/type_prior.json:

    python -m pipeline.text.prior SCENES --seed 1 --rooms 16000

Over every pair a balanced question may ask in the rooms given (pipeline.text.items
`RoomItems.askable`), per setting of the configuration, each room drawn as a build draws
(pipeline.text.balance `fr_question`, `yn_question`) and every draw's chance summed over the rooms:

* FR: each answer set's weight, and per set a factor for each object type as a pair's subject,
  as its object, and each pair of types (`fr_draw_weights`), such that every set a quarter or more
  of the rooms give is asked as often as another (all nine at ALL_NINE_SHARE), and the sets asked
  about a type, or a pair of types, are spread as the sets asked about all;
* YN: per relation offered and answer, a factor for each type as subject, as object and each pair
  of types (`yn_draw_weights`), such that every type and pair of types is asked with either answer
  as often as with the other.

Each is the fixed point of factor <- factor x wanted / drawn, taken in half steps (iterative
proportional fitting). A type key seen in fewer than COMMON_TYPE (a pair of types: COMMON_PAIR)
pairs with a set, or a relation, is not fitted there: a factor fitted on a few rooms would move a
build by their chance, not by what the types tell. Such an FR set weighs as the key's heaviest (it
is asked where it can be), such a YN factor is 1. The rooms are of a seed no build uses by default
(seed 1), so no benchmark room's answers shape the weights it is sampled with; the more of them, the
less a fitted factor holds of their chance (16,000 rooms: about 2 minutes to read and 5 to fit on
one core).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.facts import SETTINGS
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.balance import ALL_NINE_SHARE, PRIOR_FILE, TYPE_ROLES, allowed, type_keys
from pipeline.text.configs import Config
from pipeline.text.items import RoomItems

LEAST_SHARE = 0.001  # an answer set fewer of a setting's pairs give is left out: weighed as the heaviest
WEIGHT_DIGITS = 4  # significant digits of a weight
WEIGHT_RANGE = 1000.0  # a factor stays within 1 / this and this
COMMON = 0.25  # a set fewer of the fitting rooms give weighs as the heaviest: it is asked where it can be
COMMON_TYPE = 30  # pairs of a type (as subject or object) with a set, or a relation, fewer: not fitted
COMMON_PAIR = 100  # and of a pair of types
ROUNDS = 300  # of the fixed-point iteration

Room = tuple[dict, dict]  # RoomItems.askable: setting -> pair -> answer set, and name -> type


def fit(scenes: Path, seed: int, rooms: range, config: Config, progress: Callable[[str], None] = print) -> dict:
    rooms_seen = [RoomItems(scene).askable(config) for scene in (load_scene(scene_path(scenes, seed, k)) for k in rooms)
                  if len(scene.prominent) >= config.n]
    progress(f"read {len(rooms_seen)} rooms")
    return {"fitted_on": {"seed": seed, "rooms": len(rooms), "config": config.name},
            "settings": fitted(rooms_seen, progress)}


def fitted(rooms: list[Room], progress: Callable[[str], None] = print) -> dict:
    """Per setting the rooms ask, its table of `TypePrior` fitted on them."""
    settings = {}
    for setting in (s for s in SETTINGS if any(askable.get(s) for askable, _ in rooms)):
        given = Counter(answer for askable, _ in rooms for answer in askable.get(setting, {}).values())
        total = sum(given.values())
        sets = sorted((answer for answer, count in given.items() if count >= LEAST_SHARE * total),
                      key=lambda answer: (len(answer), sorted(map(DIRECTIONS.index, answer))))
        weights, fr_factors = fr_draw_weights(setting, sets, rooms)
        yn_factors = yn_draw_weights(setting, rooms)
        settings[setting] = {"sets": [",".join(sorted(answer, key=DIRECTIONS.index)) for answer in sets],
                             "weights": digits(weights),
                             **{f"fr_{role}": {key: digits(f) for key, f in fr_factors[role].items()}
                                for role in TYPE_ROLES},
                             **{f"yn_{role}": {key: digits(f.ravel()) for key, f in yn_factors[role].items()}
                                for role in TYPE_ROLES}}
        progress(f"fitted {setting}")
    return settings


class _Pairs:
    """The type keys (TYPE_ROLES) of every pair a setting's draws weigh, as indices into each role's
    sorted keys, and which keys are seen often enough to fit."""

    def __init__(self, keys: dict[str, list[str]]) -> None:
        self.names = {role: sorted(set(values)) for role, values in keys.items()}
        self.index = {role: np.searchsorted(self.names[role], values) for role, values in keys.items()}

    def fitted(self, role: str, counts: np.ndarray) -> np.ndarray:
        return counts >= (COMMON_PAIR if role == "pair" else COMMON_TYPE)

    def factors(self, role: str, factors: np.ndarray, fitted: np.ndarray) -> dict[str, np.ndarray]:
        """The factors of each type key fitted somewhere (the others weigh 1 in a build)."""
        return {key: factors[..., k] for k, key in enumerate(self.names[role]) if fitted[..., k].any()}


def fr_draw_weights(setting: str, sets: list[frozenset[str]], rooms: list[Room]) -> tuple[np.ndarray, dict]:
    """A setting's FR weight per answer set (the heaviest 1) and, per TYPE_ROLES, each type key's
    factor per set: under them, a room drawing a pair with chance its set's weight x its keys'
    factors, shared among the room's pairs giving its set (`fr_question`), every set COMMON of the
    rooms give is asked alike (all nine at ALL_NINE_SHARE; a rarer one weighs as the heaviest, so it
    is asked where it can be), and each key is asked with the sets spread as over all (a set the key
    seldom gives weighs as its heaviest)."""
    index = {answer: k for k, answer in enumerate(sets)}
    unseen = len(sets)  # a set left out: weighs as the heaviest, its factors 1
    room, kind, share, keys = [], [], [], {role: [] for role in TYPE_ROLES}
    for r, (askable, types) in enumerate(rooms):
        answers = askable.get(setting, {})
        pairs_of = Counter(answers.values())
        for pair, answer in answers.items():
            room.append(r)
            kind.append(index.get(answer, unseen))
            share.append(1 / pairs_of[answer])
            for role, key in zip(TYPE_ROLES, type_keys(types[pair[0]], types[pair[1]])):
                keys[role].append(key)
    room, kind, share, pairs = np.array(room), np.array(kind), np.array(share), _Pairs(keys)
    target = np.array([ALL_NINE_SHARE if answer == frozenset(DIRECTIONS) else 1.0 for answer in sets])
    target[target == 1.0] = (1 - target[target < 1].sum()) / (target == 1.0).sum()
    rooms_giving = np.bincount(kind[np.unique(room * (unseen + 1) + kind, return_index=True)[1]], minlength=unseen + 1)
    common = rooms_giving[:unseen] >= COMMON * len(rooms)
    weights = np.ones(unseen + 1)
    factors, fitted, counts = {}, {}, {}
    for role in TYPE_ROLES:
        counts[role] = np.zeros((unseen + 1, len(pairs.names[role])))
        np.add.at(counts[role], (kind, pairs.index[role]), 1)
        counts[role][unseen] = 0
        factors[role], fitted[role] = np.ones_like(counts[role]), pairs.fitted(role, counts[role])
    for _ in range(ROUNDS):
        weights[:unseen][~common] = weights[:unseen][common].max()
        weights[unseen] = weights[:unseen].max()
        taken = weights[kind] * share * np.prod([factors[role][kind, pairs.index[role]] for role in TYPE_ROLES], axis=0)
        chance = taken / np.bincount(room, taken)[room]
        drawn = np.bincount(kind, chance, minlength=unseen + 1)
        wanted = target[common] / target[common].sum() * drawn[:unseen][common].sum()
        weights[:unseen][common] *= np.sqrt(wanted / drawn[:unseen][common])
        spread = drawn.copy()  # the sets' shares once fitted: what each key is asked with
        spread[:unseen][common] = wanted
        spread /= spread.sum()
        for role in TYPE_ROLES:
            about = np.zeros_like(factors[role])
            np.add.at(about, (kind, pairs.index[role]), chance)
            wanted_about = about.sum(axis=0, keepdims=True) * spread[:, None]
            moved = np.where(fitted[role], factors[role] * np.sqrt(wanted_about / np.maximum(about, 1e-12)), 1.0)
            # a set's scale is its weight's: the keys' factors on it keep a geometric mean of 1 over its pairs
            scale = np.exp(np.where(fitted[role], np.log(moved) * counts[role], 0).sum(axis=1)
                           / np.maximum(np.where(fitted[role], counts[role], 0).sum(axis=1), 1))
            weights *= scale
            moved /= scale[:, None]
            # a set a key seldom gives weighs as the key's heaviest: it is asked where it can be
            heaviest = np.where(fitted[role].any(axis=0), np.where(fitted[role], moved, 0).max(axis=0), 1.0)
            factors[role] = np.clip(np.where(fitted[role], moved, heaviest), 1 / WEIGHT_RANGE, WEIGHT_RANGE)
        weights /= weights.max()
        np.maximum(weights, WEIGHT_RANGE ** -2, out=weights)  # all nine can need less than a factor's range
    weights[:unseen][~common] = weights[:unseen][common].max()
    return weights[:unseen], {role: pairs.factors(role, factors[role][:unseen], fitted[role][:unseen])
                              for role in TYPE_ROLES}


def yn_draw_weights(setting: str, rooms: list[Room]) -> dict:
    """Per TYPE_ROLES, each type key's YN factors, an array (relation in DIRECTIONS order, Yes then
    No): under them, a room drawing a relation both answers allow, then a pair with chance its
    keys' factors for that relation and its answer, shared among the pairs of the same answer
    (`yn_question`), asks every key with either answer as often as with the other."""
    group, chance0, share, code, no, keys = [], [], [], [], [], {role: [] for role in TYPE_ROLES}
    draws = 0  # (room, relation) draws so far
    for askable, types in rooms:
        answers = askable.get(setting, {})
        both = allowed(DIRECTIONS, list(answers.values()))
        for c in both:
            sides = Counter(c in answer for answer in answers.values())
            for pair, answer in answers.items():
                group.append(draws)
                chance0.append(1 / len(both))
                share.append(1 / sides[c in answer])
                code.append(DIRECTIONS.index(c))
                no.append(int(c not in answer))
                for role, key in zip(TYPE_ROLES, type_keys(types[pair[0]], types[pair[1]])):
                    keys[role].append(key)
            draws += 1
    group, chance0, share, code, no, pairs = (*map(np.array, (group, chance0, share, code, no)), _Pairs(keys))
    factors, fitted = {}, {}
    for role in TYPE_ROLES:
        counts = np.zeros((len(DIRECTIONS), 2, len(pairs.names[role])))
        np.add.at(counts, (code, no, pairs.index[role]), 1)
        seen = counts.sum(axis=1, keepdims=True).repeat(2, axis=1)  # a key's count with a relation, either answer
        factors[role], fitted[role] = np.ones_like(counts), pairs.fitted(role, seen)
    for _ in range(ROUNDS):
        taken = share * np.prod([factors[role][code, no, pairs.index[role]] for role in TYPE_ROLES], axis=0)
        chance = chance0 * taken / np.bincount(group, taken)[group]
        for role in TYPE_ROLES:
            about = np.zeros_like(factors[role])
            np.add.at(about, (code, no, pairs.index[role]), chance)
            wanted = about.mean(axis=1, keepdims=True)  # as often with either answer
            moved = np.where(fitted[role], factors[role] * np.sqrt(wanted / np.maximum(about, 1e-12)), 1.0)
            # a relation's scale says nothing (a draw offers one relation): its factors keep a geometric mean of 1
            scale = np.exp(np.where(fitted[role], np.log(moved), 0).sum(axis=(1, 2), keepdims=True)
                           / np.maximum(fitted[role].sum(axis=(1, 2), keepdims=True), 1))
            factors[role] = np.clip(np.where(fitted[role], moved / scale, 1.0), 1 / WEIGHT_RANGE, WEIGHT_RANGE)
    return {role: pairs.factors(role, factors[role], fitted[role]) for role in TYPE_ROLES}


def digits(weights: np.ndarray) -> list[float]:
    return [float(f"{w:.{WEIGHT_DIGITS}g}") for w in weights]


def dumps(table: dict) -> str:
    """The table as JSON, one line per type key: a diff of a refit reads as the types that moved."""
    lines = ['{"fitted_on": ' + json.dumps(table["fitted_on"]) + ', "settings": {']
    settings = list(table["settings"].items())
    for k, (setting, entry) in enumerate(settings):
        fields = list(entry.items())
        lines.append(f" {json.dumps(setting)}: {{")
        for f, (name, value) in enumerate(fields):
            end = "," if f < len(fields) - 1 else ""
            if isinstance(value, dict):
                lines.append(f"  {json.dumps(name)}: {{")
                lines.append(",\n".join(f"   {json.dumps(key)}: {json.dumps(factors)}"
                                        for key, factors in value.items()))
                lines.append("  }" + end)
            else:
                lines.append(f"  {json.dumps(name)}: {json.dumps(value)}{end}")
        lines.append(" }" + ("," if k < len(settings) - 1 else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", type=Path, help="a folder of scene files (roomspace scenes --out)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rooms", type=int, default=16000)
    parser.add_argument("--config", default="n5_m4_d144")
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "data" / PRIOR_FILE)
    args = parser.parse_args()
    table = fit(args.scenes, args.seed, range(args.rooms), Config.parse(args.config))
    args.out.write_text(dumps(table), encoding="utf-8")
    print(f"wrote {args.out}: {len(table['settings'])} settings")


if __name__ == "__main__":
    main()
