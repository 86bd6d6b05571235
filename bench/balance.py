"""The balanced family's answer distributions beside the paper's (issue 26's table).

    python bench/balance.py out/roomspace-1k [--split test]

Per configuration of the balanced family, every setting and view (and image questions' modality):
the YN Yes share (target 45-55%) and, for every candidate relation with 30 or more questions, its
Yes share (35-65%); the FR share of the most common answer set (at most 20%) and of "all nine" (at
most 10%); for image pair questions, the share of the most common relation per view (at most 20%).
Then the hop and answer-set-size histograms of each balanced configuration beside its paper
counterpart, and the share of FR questions one stated fact answers (a hop of 1). Prints a line per
target, MET or NOT MET.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

from pipeline.evaluate.rows import open_rows
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.kinds import parse

COLUMNS = ("config", "setting", "view", "question_type", "answer", "answer_set", "candidate", "hops", "modality", "pair")
IMAGE_SETTINGS = ("none", "centres")  # pair questions: the image alone, or the centres in metres


def shares(counter: Counter) -> str:
    total = sum(counter.values())
    return ", ".join(f"{key}: {count} ({100 * count / total:.1f}%)" for key, count in sorted(counter.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    rows = open_rows(args.source, args.split)
    failures = []
    histograms = {}
    for config in rows.configs:
        cells = defaultdict(list)
        hops, sizes = Counter(), Counter()
        for row in rows.rows([config], COLUMNS):
            key = (row["setting"], row["view"], row.get("modality") or "-")
            cells[key].append(row)
            if row["question_type"] == "FR" and row["setting"] not in IMAGE_SETTINGS:
                hops[row["hops"]] += 1
                sizes[len(row["answer_set"])] += 1
        histograms[config] = hops, sizes
        if not parse(config)[1].balanced:
            continue
        print(f"\n## {config}\n")
        print("| setting | view | modality | YN | Yes share | worst candidate (Yes share, questions) | FR | top answer set "
              "share | all nine share |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (setting, view, modality), found in cells.items():
            yn = [r for r in found if r["question_type"] == "YN"]
            fr = [r for r in found if r["question_type"] == "FR"]
            yes = sum(r["answer"] == "Yes" for r in yn) / len(yn) if yn else None
            per = defaultdict(list)
            for r in yn:
                per[r["candidate"]].append(r["answer"] == "Yes")
            worst = max(((abs(sum(v) / len(v) - 0.5), c, sum(v) / len(v), len(v)) for c, v in per.items() if len(v) >= 30),
                        default=None)
            answers = Counter(tuple(r["answer_set"]) for r in fr)
            top = answers.most_common(1)[0][1] / len(fr) if fr else None
            nine = sum(len(s) == len(DIRECTIONS) for s in (r["answer_set"] for r in fr)) / len(fr) if fr else None
            where = f"{config} {setting} {view} {modality}"
            if yes is not None and not 0.45 <= yes <= 0.55:
                failures.append(f"{where}: YN Yes share {100 * yes:.1f}%")
            if worst and not 0.35 <= worst[2] <= 0.65:
                failures.append(f"{where}: candidate {worst[1]} Yes share {100 * worst[2]:.1f}% of {worst[3]}")
            if setting in IMAGE_SETTINGS:
                if top is not None and top > 0.20:
                    failures.append(f"{where}: one relation answers {100 * top:.1f}% of the pair questions")
            elif top is not None and (top > 0.20 or nine > 0.10):
                failures.append(f"{where}: top answer set {100 * top:.1f}%, all nine {100 * nine:.1f}%")
            print(f"| {setting} | {view} | {modality} | {len(yn)} | {'-' if yes is None else f'{100 * yes:.1f}'} | "
                  f"{'-' if not worst else f'{worst[1]} {100 * worst[2]:.1f} ({worst[3]})'} | {len(fr)} | "
                  f"{'-' if top is None else f'{100 * top:.1f}'} | {'-' if nine is None else f'{100 * nine:.1f}'} |")
    print("\n## FR hops and answer-set sizes, the paper's configurations beside their balanced counterparts\n")
    for config in histograms:
        kind, base = parse(config)
        paper = kind.config_name(base.paper)
        if base.balanced and paper in histograms:
            for name in (paper, config):
                h, s = histograms[name]
                one = h[1] / sum(h.values()) if h else 0.0
                print(f"- {name}: hops {shares(h)}; one stated fact answers {100 * one:.1f}%; sizes {shares(s)}")
            if histograms[config][0][1] / max(sum(histograms[config][0].values()), 1) > \
                    histograms[paper][0][1] / max(sum(histograms[paper][0].values()), 1):
                failures.append(f"{config}: more FR questions answered by one stated fact than {paper}")
    print()
    for failure in failures:
        print(f"NOT MET: {failure}")
    print("all targets MET" if not failures else f"{len(failures)} targets NOT MET")


if __name__ == "__main__":
    main()
