"""Fits the balanced sampler's type prior (pipeline.text.balance.TypePrior) and writes it as
pipeline/data/type_prior.json:

    python -m pipeline.text.prior SCENES --seed 1 --rooms 1000

For every setting of the configuration (and rcc8), over every pair a balanced question may ask in
the rooms given (pipeline.text.items `RoomItems.askable`): the share of pairs whose answer holds
each relation, and the same share among pairs whose subject, and whose object, is of each type,
smoothed toward the setting's share by SMOOTHING pairs. The rooms are of a seed no build uses by
default (seed 1), so no benchmark room's answers shape the prior it is sampled with.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8
from pipeline.text.balance import PRIOR_FILE
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, RoomItems

SMOOTHING = 20  # pseudo-pairs at the setting's shares: a type seen a few times says little
LEAST_SHARE = 0.001  # an answer set given by fewer of a setting's pairs is left to UNSEEN
DECIMALS = 5


def fit(scenes: Path, seed: int, rooms: range, config: Config) -> dict:
    pairs: Counter = Counter()  # (setting, role, type) -> pairs seen; role "" for the whole setting
    given: Counter = Counter()  # (setting, role, type, answer set) -> pairs whose answer is that set
    for k in rooms:
        scene = load_scene(scene_path(scenes, seed, k))
        if len(scene.prominent) < config.n:
            continue
        askable, types = RoomItems(scene).askable(config)
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
                             "base": [round(share, DECIMALS) for share in base], **roles}
    return {"fitted_on": {"seed": seed, "rooms": len(rooms), "config": config.name}, "settings": settings}


def dumps(table: dict) -> str:
    """The table as JSON, one line per type: a diff of a refit reads as the types that moved."""
    lines = ['{"fitted_on": ' + json.dumps(table["fitted_on"]) + ', "settings": {']
    settings = list(table["settings"].items())
    for k, (setting, roles) in enumerate(settings):
        lines.append(f' {json.dumps(setting)}: {{"sets": {json.dumps(roles["sets"])},')
        lines.append(f'  "base": {json.dumps(roles["base"])},')
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
