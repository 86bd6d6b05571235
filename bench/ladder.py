"""The difficulty ladder per configuration (issue 42's table), and what the hard family costs.

    python bench/ladder.py --rooms 1000 --scenes scenes/ [--seed 0] [--configs balanced,hard]

Makes the rooms' rows of each configuration in this process (the scenes read from the folder, those
missing sampled into it first, untimed), timing each configuration's CPU per room beside the balanced
family's, measured in the same run. Then per configuration: questions by level; per level, the share
each of R0, R1, R2, the blind baselines (`roomspace audit`'s majority and learned ones, fitted on the
other half of the rooms) and the checker answer right, for YN accuracy and FR exact; and the checker's
search effort (values tried to refute what R2 leaves open) per level: median, 90th percentile, max;
and how many of its level-3 questions R2 with one case split settles (`checker.split_refutes`: every
relation R2 keeps but the answer excludes refuted by trying each cell of one object in turn).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections import defaultdict
from pathlib import Path

from pipeline.dataset.audit import blind_answers, question_of
from pipeline.scene.scene_folder import ensure_scene
from pipeline.spatial.checker import split_refutes
from pipeline.spatial.ladder import BOUNDED, REASONERS
from pipeline.spatial.topology import ROOM
from pipeline.text.configs import parse_configs
from pipeline.text.items import RoomItems
from pipeline.typed_json import to_json

FAMILIES = ("paper", "balanced", "hard")


def family(config) -> str:
    return "hard" if config.hard else "balanced" if config.balanced else "paper"


def right(row, held) -> bool:
    """A reasoner's answer (FR its set, YN Yes unless it rules the candidate out) is the row's."""
    if row.question_type == "FR":
        return tuple(held) == row.answer_set
    return (row.candidate in held) == (row.answer == "Yes")


def one_split(row) -> bool:
    """R2 with one case split refutes every relation R2 keeps for the row's question but the answer excludes."""
    variables = tuple(dict.fromkeys(name for fact in row.facts for name in (fact.subject, fact.object) if name))
    query = (row.query.subject, None if row.query.object == ROOM else row.query.object)
    return all(split_refutes(row.facts, variables, query, code, row.d)
               for code in set(row.bounded.local) - set(row.answer_set))


def percent(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f}" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    parser.add_argument("--configs", default="balanced,hard")
    args = parser.parse_args()
    configs = parse_configs(args.configs)
    scenes = [ensure_scene(args.scenes, args.seed, index) for index in range(args.rooms)]
    RoomItems(scenes[0])(configs[-1])  # the grid's tables, made once per process, are not a configuration's cost
    rows, cpu = defaultdict(list), defaultdict(float)
    for scene in scenes:
        made = RoomItems(scene)
        for config in configs:
            start = time.process_time()
            rows[config.name].extend(made(config))
            cpu[config.name] += time.process_time() - start
    by_family = defaultdict(float)
    for config in configs:
        by_family[family(config)] += cpu[config.name]
    print(f"# The difficulty ladder on {args.rooms} rooms of seed {args.seed}\n")
    print("| family | configurations | CPU ms per room | against balanced |\n|---|---|---|---|")
    for name in FAMILIES:
        if name in by_family:
            ratio = f"{by_family[name] / by_family['balanced']:.2f}x" if by_family.get("balanced") else "-"
            chosen = ", ".join(c.name for c in configs if family(c) == name)
            print(f"| {name} | {chosen} | {1000 * by_family[name] / args.rooms:.1f} | {ratio} |")
    for config in configs:
        laddered = [row for row in rows[config.name] if row.level is not None]
        if not laddered:
            continue
        questions = [question_of(to_json(row)) for row in rows[config.name]]
        blind = blind_answers(questions, None, args.seed) if len({q.room_id for q in questions}) > 1 else {}
        print(f"\n## {config.name}: {len(laddered)} questions on the ladder\n")
        print("| level | questions | share | " + " | ".join(f"R{k} YN / FR" for k in range(len(BOUNDED)))
              + " | blind majority YN / FR | blind learned YN / FR | checker YN / FR | effort median / p90 / max"
              + " | one case split settles |")
        print("|---|---|---|" + "---|" * (len(BOUNDED) + 5))
        for level in range(len(REASONERS)):
            at = [row for row in laddered if row.level == level]
            if not at:
                continue
            yn = [row for row in at if row.question_type == "YN"]
            fr = [row for row in at if row.question_type == "FR"]

            def shares(correct) -> str:
                return f"{percent(sum(map(correct, yn)), len(yn))} / {percent(sum(map(correct, fr)), len(fr))}"
            cells = [shares(lambda row, k=k: right(row, dataclasses.astuple(row.bounded)[k]))
                     for k in range(len(BOUNDED))]
            cells += [shares(lambda row, b=b: row.id in blind and blind[row.id][b] == row.answer) for b in (0, 1)]
            cells.append(shares(lambda row: right(row, row.answer_set)))
            efforts = sorted(row.search_effort for row in at)
            searched = level == len(BOUNDED)
            effort = (f"{statistics.median(efforts):g} / {efforts[int(0.9 * (len(efforts) - 1))]} / {efforts[-1]}"
                      if searched else "-")
            split = f"{percent(sum(map(one_split, at)), len(at))}%" if searched else "-"
            print(f"| {level} | {len(at)} | {percent(len(at), len(laddered))}% | " + " | ".join(cells)
                  + f" | {effort} | {split} |")


if __name__ == "__main__":
    main()
