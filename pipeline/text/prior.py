"""Fits the balanced sampler's type prior (pipeline.text.balance.TypePrior) and writes it as
pipeline/data/type_prior.json:

    python -m pipeline.text.prior SCENES --seed 1 --rooms 1000

For every setting of the configuration (and rcc8), over every pair a balanced question may ask in
the rooms given (pipeline.text.items `RoomItems.askable`): the share of pairs whose answer holds
each relation, and the same share among pairs whose subject, and whose object, is of each type,
smoothed toward the setting's share by SMOOTHING pairs. The rooms are of a seed no build uses by
default (seed 1), so no benchmark room's answers shape the prior it is sampled with.

With it, each answer set's FR weight (`fr_question`): the weights under which, drawn in these rooms
as a build draws, every answer set of a setting is asked as often as another (all nine at
ALL_NINE_SHARE), as far as the rooms give it (`set_weights`).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8
from pipeline.text.balance import ALL_NINE_SHARE, PRIOR_FILE, TypePrior, fr_weights
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, RoomItems

SMOOTHING = 20  # pseudo-pairs at the setting's shares: a type seen a few times says little
LEAST_SHARE = 0.001  # an answer set given by fewer of a setting's pairs is left to UNSEEN
DECIMALS = 5
WEIGHT_DIGITS = 4  # significant digits of a set's FR weight
WEIGHT_RANGE = 1000.0  # the lightest set weighs this much less than the heaviest, at most
COMMON = 0.25  # a set fewer of the fitting rooms give weighs as the heaviest: it is asked where it can be
ROUNDS = 300  # of `choice_weights` fixed-point iteration


def fit(scenes: Path, seed: int, rooms: range, config: Config) -> dict:
    pairs: Counter = Counter()  # (setting, role, type) -> pairs seen; role "" for the whole setting
    given: Counter = Counter()  # (setting, role, type, answer set) -> pairs whose answer is that set
    rooms_seen = []  # every room's askable pairs and their types
    for k in rooms:
        scene = load_scene(scene_path(scenes, seed, k))
        if len(scene.prominent) < config.n:
            continue
        askable, types = RoomItems(scene).askable(config)
        rooms_seen.append((askable, types))
        for setting, answers in askable.items():
            for pair, answer in answers.items():
                for role, type_ in (("", ""), ("subject", types[pair[0]]), ("object", types[pair[1]])):
                    pairs[setting, role, type_] += 1
                    given[setting, role, type_, answer] += 1
    settings = {}
    for setting in dict.fromkeys(s for s, _, _ in pairs):
        codes = RCC8 if setting == RCC8_SETTING else DIRECTIONS
        total = pairs[setting, "", ""]
        sets = sorted((answer for (s, role, _, answer), count in given.items()
                       if s == setting and not role and count >= LEAST_SHARE * total),
                      key=lambda answer: (len(answer), [codes.index(code) for code in sorted(answer, key=codes.index)]))
        base = [given[setting, "", "", answer] / total for answer in sets]
        roles = defaultdict(dict)
        for (s, role, type_), seen in sorted(pairs.items()):
            if s == setting and role:
                roles[role][type_] = [round((given[s, role, type_, answer] + SMOOTHING * share) / (seen + SMOOTHING),
                                            DECIMALS) for answer, share in zip(sets, base)]
        settings[setting] = {"sets": [",".join(sorted(answer, key=codes.index)) for answer in sets],
                             "base": [round(share, DECIMALS) for share in base], "weights": [1.0] * len(sets), **roles}
    prior = TypePrior({"settings": settings})
    for setting, table in settings.items():
        if setting != RCC8_SETTING:  # asked by YN only
            table["weights"] = [float(f"{w:.{WEIGHT_DIGITS}g}") for w in set_weights(setting, table, prior, rooms_seen)]
    return {"fitted_on": {"seed": seed, "rooms": len(rooms), "config": config.name}, "settings": settings}


def set_weights(setting: str, table: dict, prior: TypePrior, rooms: list) -> np.ndarray:
    """A setting's FR weight per answer set (`choice_weights`): each room offers each set it gives
    the sum of its pairs' `fr_weights` (every set's weight 1), as `fr_question` draws; the target is
    every set alike, all nine at ALL_NINE_SHARE."""
    sets = [frozenset(answer.split(",")) for answer in table["sets"]]
    index = {answer: k for k, answer in enumerate(sets)}
    offers = []
    for askable, types in rooms:
        answers = askable.get(setting, {})
        offer = np.zeros(len(sets))
        for answer, weight in zip(answers.values(), fr_weights(answers, prior.likely(setting, types.__getitem__))):
            if answer in index:
                offer[index[answer]] += weight
        if offer.any():
            offers.append(offer)
    target = np.array([ALL_NINE_SHARE if answer == frozenset(DIRECTIONS) else 1.0 for answer in sets])
    target[target == 1.0] = (1 - target[target < 1].sum()) / (target == 1.0).sum()
    return choice_weights(np.array(offers), target)


def choice_weights(offers: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Weights w (the heaviest 1) under which, a room r drawing set k with probability
    w_k offers[r, k] / sum_j w_j offers[r, j], the sets' mean probabilities over the rooms are
    `target`: the fixed point of w <- w x target / drawn (a choice model's maximum-likelihood fit),
    taken in half steps. A set fewer than COMMON of the rooms give is not fitted (such sets mostly
    cannot reach their target): it weighs as the heaviest, so it is asked where it can be, and the
    others share what it leaves. A set some rooms give alone may stay above its target: no weight
    goes below 1 / WEIGHT_RANGE."""
    common = (offers > 0).mean(axis=0) >= COMMON
    weights = np.ones(offers.shape[1])
    for _ in range(ROUNDS):
        weights[~common] = weights[common].max()
        taken = offers * weights
        drawn = (taken / taken.sum(axis=1, keepdims=True)).mean(axis=0)
        wanted = target[common] / target[common].sum() * drawn[common].sum()
        weights[common] *= np.sqrt(wanted / drawn[common])
        weights /= weights.max()
        np.maximum(weights, 1 / WEIGHT_RANGE, out=weights)
    return weights


def dumps(table: dict) -> str:
    """The table as JSON, one line per type: a diff of a refit reads as the types that moved."""
    lines = ['{"fitted_on": ' + json.dumps(table["fitted_on"]) + ', "settings": {']
    settings = list(table["settings"].items())
    for k, (setting, roles) in enumerate(settings):
        lines.append(f' {json.dumps(setting)}: {{"sets": {json.dumps(roles["sets"])},')
        lines.append(f'  "base": {json.dumps(roles["base"])},')
        lines.append(f'  "weights": {json.dumps(roles["weights"])},')
        for r, role in enumerate(("subject", "object")):
            lines.append(f'  {json.dumps(role)}: {{')
            lines.append(",\n".join(f'   {json.dumps(type_)}: {json.dumps(shares)}' for type_, shares in roles[role].items()))
            lines.append("  }" + ("," if r == 0 else ""))
        lines.append(" }" + ("," if k < len(settings) - 1 else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", type=Path, help="a folder of scene files (roomspace scenes --out)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--config", default="n5_m4_d144")
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "data" / PRIOR_FILE)
    args = parser.parse_args()
    table = fit(args.scenes, args.seed, range(args.rooms), Config.parse(args.config))
    args.out.write_text(dumps(table), encoding="utf-8")
    print(f"wrote {args.out}: {len(table['settings'])} settings")


if __name__ == "__main__":
    main()
