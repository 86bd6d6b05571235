"""Reports a configuration kind has beyond every kind's tables, as the studies it comes from report them.

* composition (docs/semantics.md section 19), as Cohn and Blackwell score their RCC-8 experiments:
  per setting and naming, each system's mean Jaccard index of predicted and true relation sets
  over every answer, with the 95 % interval of that mean (mean +- 1.96 sd / sqrt(answers), their
  measure; answers to one item over repeated rounds are counted as separate answers, as they count
  them) and the standard deviation over rounds; beside it the guessing baseline, the expected
  Jaccard index of a uniformly random non-empty set of the options (0.30 on the RCC-8 table without
  EQ, 0.26 on its neighbourhoods, computed exactly per item). Then the paired gap eponymous -
  anonymous per setting, each question against itself under invented names, with a 95 % paired
  bootstrap interval over questions (table items: a question is its own cluster) or over rooms
  (grounded items).

* shapes (docs/semantics.md section 20), as Wu and Guo report SRT4LLM: accuracy (FR exact: the one
  relation named) per relation category and shape kind, and per category over every kind, each
  system's with its 95 % interval and, over repeated rounds (`--samples K`), the standard deviation
  of the per-round accuracies; beside it chance (one option at random) and majority (the best single
  answer in that cell). The paper's prompt strategies are prompt styles: run a model once per
  `--style simple|guiding|example` and score the files together (`--name` each), and the systems
  are the strategies.

* object tasks (docs/semantics.md section 21), as SpatialQA reports its planning: per number of
  steps (1 to 5, 6 or more) and modality (the description or the picture), each system's step
  content F1 (F_c) and precondition F1 (F_p), its exact plans with their 95 % interval, and the share
  of its answers not read.

An answer that does not parse, or none at all, scores 0 here as everywhere. `kind_reports` makes
the reports of the groups `score` reports; each group of one kind that has a report gets it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from pipeline.data import data_json
from pipeline.evaluate.score import UNPARSEABLE, Group, Outcomes, ScoreRow
from pipeline.evaluate.stats import Z95, PairedGap, Rate, paired_gap, rate
from pipeline.seeding import derive_seed
from pipeline.text.kinds import kind_of

NAMINGS = ("eponymous", "anonymous")


@dataclass(frozen=True)
class MeanScore:
    mean: float
    low: float  # the 95 % interval of the mean over every answer
    high: float
    round_sd: float | None  # the standard deviation of the per-round means, where there are several rounds


@dataclass(frozen=True)
class JaccardCell:
    setting: str
    naming: str
    items: int
    guess: float  # the expected Jaccard index of a uniformly random non-empty set of the options
    systems: dict[str, MeanScore]


@dataclass(frozen=True)
class NamingGap:
    setting: str
    system: str
    result: PairedGap  # eponymous - anonymous mean Jaccard index; its `rooms` count the clusters resampled


@dataclass(frozen=True)
class CompositionReport:
    kind: str
    group: str
    cells: list[JaccardCell]
    gaps: list[NamingGap]


def mean_score(scores: np.ndarray) -> MeanScore:
    """scores: items x rounds, each in [0, 1]."""
    answers = scores.size
    mean = float(scores.mean())
    half = Z95 * float(scores.std(ddof=1)) / math.sqrt(answers) if answers > 1 else 0.0
    sd = float(np.std(scores.mean(axis=0), ddof=1)) if scores.shape[1] > 1 else None
    return MeanScore(mean, max(0.0, mean - half), min(1.0, mean + half), sd)


@cache
def expected_guess(options: int, true: int) -> float:
    """The mean Jaccard index with a true set of `true` of `options` relations of a guess drawn
    uniformly among the non-empty subsets of the options."""
    total = 0.0
    for size in range(1, options + 1):
        for hits in range(max(0, size - (options - true)), min(size, true) + 1):
            total += math.comb(true, hits) * math.comb(options - true, size - hits) * hits / (true + size - hits)
    return total / (2 ** options - 1)


def _settings() -> dict:
    return data_json("composition.json")["settings"]


def composition_report(group: Group, rows: Sequence[ScoreRow], systems: Mapping[str, Outcomes],
                       seed: int) -> CompositionReport:
    items = group.items
    cells, gaps = [], []
    for setting, spec in _settings().items():
        named = {naming: np.array([k for k in items if rows[k].setting == setting and rows[k].naming == naming], int)
                 for naming in NAMINGS}
        for naming, chosen in named.items():
            if chosen.size:
                guess = float(np.mean([expected_guess(len(rows[k].options), len(rows[k].answer_set))
                                       for k in chosen]))
                cells.append(JaccardCell(setting, naming, int(chosen.size), guess,
                                         {name: mean_score(o.jaccard[chosen]) for name, o in systems.items()}))
        question = {naming: {rows[k].id.removesuffix(f"-{naming}"): k for k in chosen}
                    for naming, chosen in named.items()}
        epon = question["eponymous"]
        pairs = [(epon[key], k) for key, k in question["anonymous"].items() if key in epon]
        if not pairs:
            continue
        first, second = (np.array(side, int) for side in zip(*pairs))
        clusters = np.array([rows[k].room_id if spec["grounded"] else rows[k].id for k in first])
        for name, outcomes in systems.items():
            score = outcomes.jaccard.mean(axis=1)
            result = paired_gap(score[first], score[second], clusters,
                                derive_seed(seed, "naming gap", group.name, setting, name))
            gaps.append(NamingGap(setting, name, result))
    return CompositionReport("composition", group.name, cells, gaps)


@dataclass(frozen=True)
class AccuracyCell:
    category: str
    shape_kind: str  # circle, rectangle, polygon, or "all" (every kind of the category)
    items: int
    chance: float  # one option at random
    majority: float  # the best single answer for these items
    systems: dict[str, Rate]  # accuracy, with the SD over rounds where there are several


@dataclass(frozen=True)
class ShapesReport:
    kind: str
    group: str
    cells: list[AccuracyCell]


def _shapes_cell(category: str, shape_kind: str, chosen: np.ndarray, rows: Sequence[ScoreRow],
                 systems: Mapping[str, Outcomes]) -> AccuracyCell:
    answers = [rows[k].answer_set for k in chosen]
    majority = max(answers.count(answer) for answer in answers) / len(answers)
    chance = float(np.mean([1 / len(rows[k].options) for k in chosen]))
    return AccuracyCell(category, shape_kind, int(chosen.size), chance, majority,
                        {name: rate(o.correct[chosen].mean(axis=1), o.correct[chosen].mean(axis=0))
                         for name, o in systems.items()})


def shapes_report(group: Group, rows: Sequence[ScoreRow], systems: Mapping[str, Outcomes], seed: int) -> ShapesReport:
    cells = []
    for category in data_json("coordinates.json")["categories"]:
        asked = [k for k in group.items if rows[k].setting == category]
        for shape_kind in ("circle", "rectangle", "polygon"):
            chosen = np.array([k for k in asked if rows[k].shape_kind == shape_kind], int)
            if chosen.size:
                cells.append(_shapes_cell(category, shape_kind, chosen, rows, systems))
        if asked:
            cells.append(_shapes_cell(category, "all", np.array(asked, int), rows, systems))
    return ShapesReport("shapes", group.name, cells)


@dataclass(frozen=True)
class PlanCell:
    steps: str  # "1" ... "5", "6+", or "all"
    modality: str  # text, image, or "all"
    items: int
    content: dict[str, float]  # system -> mean step content F1 (F_c)
    preconditions: dict[str, float]  # system -> mean precondition F1 (F_p)
    exact: dict[str, Rate]  # system -> exact plans
    unparseable: dict[str, float]  # system -> share of answers not read


@dataclass(frozen=True)
class PlansReport:
    kind: str
    group: str
    cells: list[PlanCell]


PLAN_BUCKETS = 6  # plans of 6 steps or more are reported together, as the tasks are drawn


def plans_report(group: Group, rows: Sequence[ScoreRow], systems: Mapping[str, Outcomes], seed: int) -> PlansReport:
    def steps(k: int) -> str:
        size = rows[k].answer_set_size
        return str(size) if size < PLAN_BUCKETS else f"{PLAN_BUCKETS}+"

    keys = [*(str(b) for b in range(1, PLAN_BUCKETS)), f"{PLAN_BUCKETS}+", "all"]
    cells = []
    for key in keys:
        for modality in ("text", "image", "all"):
            chosen = np.array([k for k in group.items if key in ("all", steps(k))
                               and modality in ("all", rows[k].modality)], int)
            if not chosen.size:
                continue
            cells.append(PlanCell(key, modality, int(chosen.size),
                                  {name: float(o.jaccard[chosen].mean()) for name, o in systems.items()},
                                  {name: float(o.f1[chosen].mean()) for name, o in systems.items()},
                                  {name: rate(o.correct[chosen].mean(axis=1), o.correct[chosen].mean(axis=0))
                                   for name, o in systems.items()},
                                  {name: float((o.status[chosen] == UNPARSEABLE).mean()) for name, o in systems.items()}))
    return PlansReport("object_tasks", group.name, cells)


REPORTS = {"composition": composition_report, "shapes": shapes_report, "object_tasks": plans_report}


def kind_reports(groups: Sequence[Group], rows: Sequence[ScoreRow], systems: Mapping[str, Outcomes],
                 seed: int) -> list:
    """The kind reports of the groups whose configurations are all of one kind that has one."""
    made = []
    for group in groups:
        kinds = {kind_of(config).name for config in group.configs}
        if len(kinds) == 1 and kinds <= set(REPORTS):
            made.append(REPORTS[kinds.pop()](group, rows, systems, seed))
    return made


def _score(value: MeanScore) -> str:
    sd = f" ± {value.round_sd:.3f} sd" if value.round_sd is not None else ""
    return f"{value.mean:.3f} [{value.low:.3f}, {value.high:.3f}]{sd}"


def _table(header: list[str], lines: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(line) + " |" for line in lines])


def composition_markdown(report: CompositionReport) -> list[str]:
    systems = list(report.cells[0].systems) if report.cells else []
    lines = [[cell.setting, cell.naming, str(cell.items), f"{cell.guess:.3f}", *(_score(cell.systems[name])
                                                                                 for name in systems)]
             for cell in report.cells]
    parts = [f"### {report.group}: Jaccard index by setting and naming (mean over answers [95% interval], "
             "as Cohn and Blackwell score it; guess: a uniformly random non-empty set of the options)",
             _table(["setting", "naming", "items", "guess (expected)", *systems], lines)]
    gaps = [[gap.setting, gap.system, str(gap.result.pairs), str(gap.result.rooms), f"{gap.result.first:.3f}",
             f"{gap.result.second:.3f}",
             f"{gap.result.difference:+.3f} [{gap.result.low:+.3f}, {gap.result.high:+.3f}]"]
            for gap in report.gaps if gap.result is not None]
    if gaps:
        parts += [f"### {report.group}: eponymous - anonymous (mean Jaccard index; 95% paired bootstrap over "
                  "questions, over rooms for grounded questions)",
                  _table(["setting", "system", "pairs", "clusters", "eponymous", "anonymous", "difference [95% CI]"],
                         gaps)]
    return parts


def _accuracy(value: Rate) -> str:
    sd = f" ± {100 * value.round_sd:.1f}" if value.round_sd is not None else ""
    return f"{100 * value.value:.1f} [{100 * value.low:.1f}, {100 * value.high:.1f}]{sd}"


def shapes_markdown(report: ShapesReport) -> list[str]:
    systems = list(report.cells[0].systems) if report.cells else []
    lines = [[cell.category, cell.shape_kind, str(cell.items), f"{100 * cell.chance:.1f}", f"{100 * cell.majority:.1f}",
              *(_accuracy(cell.systems[name]) for name in systems)] for cell in report.cells]
    return [f"### {report.group}: accuracy by relation category and shape kind (%, [95% interval], ± SD over "
            "rounds; as SRT4LLM reports it, a system per prompt strategy)",
            _table(["category", "shape kind", "items", "chance", "majority", *systems], lines)]


def plans_markdown(report: PlansReport) -> list[str]:
    systems = list(report.cells[0].content) if report.cells else []
    lines = [[cell.steps, cell.modality, str(cell.items),
              *(f"{100 * cell.content[name]:.1f} / {100 * cell.preconditions[name]:.1f} / "
                f"{_accuracy(cell.exact[name])} / {100 * cell.unparseable[name]:.1f}" for name in systems)]
             for cell in report.cells]
    return [f"### {report.group}: plans by number of steps and modality (per system: step F1 F_c / precondition "
            "F1 F_p / exact plan [95% interval] / unparseable, all in %; docs/semantics.md section 21)",
            _table(["steps", "modality", "plans", *systems], lines)]


MARKDOWN = {"composition": composition_markdown, "shapes": shapes_markdown, "object_tasks": plans_markdown}


def kind_markdown(report) -> list[str]:
    """A kind report's Markdown sections."""
    return MARKDOWN[report.kind](report)
