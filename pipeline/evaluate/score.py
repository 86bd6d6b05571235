"""Scoring answers by consistency with the story, with breakdowns by setting, view, n, m, d and hops.

An FR answer is the set of relations the model names; it is compared with the row's answer set
(every relation consistent with the story). A YN answer is right when it says Yes exactly when
the candidate is in that set. Items with no answer or an unparseable one stay in every
denominator and are counted in their own columns, so a score is never computed over a quietly
smaller set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer
from pipeline.evaluate.baselines import baseline_predictions
from pipeline.evaluate.rows import all_ids, chosen_configs, load_rows
from pipeline.files import write_json
from pipeline.spatial.facts import SETTINGS
from pipeline.spatial.relations import VIEWS

BREAKDOWNS = ("setting", "view", "n", "m", "d", "hops")
PLOTTED = ("n", "m")  # also broken down per setting, for the plots
EXAMPLES = 5  # unparseable answers quoted per system in the JSON report
ORDER = {"setting": SETTINGS, "view": VIEWS}


@dataclass(frozen=True)
class ItemScore:
    question_type: str
    status: str  # "scored", "unparseable" or "no answer"
    correct: bool = False  # YN: the right Yes/No; FR: exactly the answer set
    jaccard: float = 0.0  # FR
    f1: float = 0.0  # FR
    single: bool = False  # FR: the answer names exactly one relation
    consistent: bool = False  # FR: ... and it is in the answer set


def score_item(row: dict, prediction: str | None) -> tuple[ItemScore, str | None]:
    """The item's score, and the parser's problem when the answer did not parse."""
    if prediction is None:
        return ItemScore(row["question_type"], "no answer"), None
    parsed = parse_answer(prediction, row["question_type"])
    if not parsed.parsed:
        return ItemScore(row["question_type"], "unparseable"), parsed.problem
    truth = set(row["answer_set"])
    if row["question_type"] == "YN":
        return ItemScore("YN", "scored", correct=parsed.yes == (row["candidate"] in truth)), None
    named = set(parsed.relations)
    common = len(named & truth)
    single = len(named) == 1
    return ItemScore("FR", "scored", correct=named == truth, jaccard=common / len(named | truth),
                     f1=2 * common / (len(named) + len(truth)), single=single, consistent=single and named <= truth), None


def _share(part: float, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class Metrics:
    items: int
    no_answer: int
    unparseable: int
    yn_items: int
    yn_accuracy: float | None
    fr_items: int
    fr_exact: float | None  # share of FR items answered with exactly the answer set
    fr_jaccard: float | None  # mean over FR items (0 for no answer or an unparseable one)
    fr_f1: float | None
    fr_single: int  # FR answers naming one relation
    fr_single_consistent: float | None  # share of those whose relation is consistent with the story

    @classmethod
    def of(cls, scores: list[ItemScore]) -> Metrics:
        yn = [s for s in scores if s.question_type == "YN"]
        fr = [s for s in scores if s.question_type == "FR"]
        single = [s for s in fr if s.single]
        return cls(
            items=len(scores),
            no_answer=sum(s.status == "no answer" for s in scores),
            unparseable=sum(s.status == "unparseable" for s in scores),
            yn_items=len(yn), yn_accuracy=_share(sum(s.correct for s in yn), len(yn)),
            fr_items=len(fr), fr_exact=_share(sum(s.correct for s in fr), len(fr)),
            fr_jaccard=_share(sum(s.jaccard for s in fr), len(fr)), fr_f1=_share(sum(s.f1 for s in fr), len(fr)),
            fr_single=len(single), fr_single_consistent=_share(sum(s.consistent for s in single), len(single)),
        )


@dataclass(frozen=True)
class Report:
    system: str
    overall: Metrics
    by: dict[str, dict[str | int, Metrics]]  # breakdown -> value -> metrics, values in their natural order
    by_setting: dict[str, dict[str, dict[int, Metrics]]]  # n or m -> setting -> value -> metrics
    unparseable: tuple[dict, ...]  # the first few: id, prediction, problem

    def to_json(self) -> dict:
        return {"overall": asdict(self.overall),
                "by": {key: _json(groups) for key, groups in self.by.items()},
                "by_setting_and": {key: {setting: _json(groups) for setting, groups in per.items()}
                                   for key, per in self.by_setting.items()},
                "unparseable_examples": list(self.unparseable)}


def _json(groups: dict) -> dict:
    return {str(value): asdict(metrics) for value, metrics in groups.items()}


def _ordered(key: str, values: Iterable) -> list:
    known = ORDER.get(key)
    return sorted(set(values), key=(lambda v: (known.index(v) if v in known else len(known), v)) if known else None)


def score(system: str, rows: list[dict], predictions: dict[str, str | None]) -> Report:
    """Scores of one system's predictions (id -> text, None for a failed request) on the rows."""
    scores, examples = [], []
    for row in rows:
        text = predictions.get(row["id"])
        item, problem = score_item(row, text)
        scores.append(item)
        if problem and len(examples) < EXAMPLES:
            examples.append({"id": row["id"], "prediction": text, "problem": problem})
    by = {key: _grouped(key, scores, rows) for key in BREAKDOWNS}
    by_setting = {}
    for key in PLOTTED:
        by_setting[key] = {}
        for setting in _ordered("setting", (row["setting"] for row in rows)):
            kept = [(s, row) for s, row in zip(scores, rows) if row["setting"] == setting]
            by_setting[key][setting] = _grouped(key, [s for s, _ in kept], [row for _, row in kept])
    return Report(system, Metrics.of(scores), by, by_setting, tuple(examples))


def _grouped(key: str, scores: list[ItemScore], rows: list[dict]) -> dict:
    groups: dict = {value: [] for value in _ordered(key, (row[key] for row in rows))}
    for item, row in zip(scores, rows):
        groups[row[key]].append(item)
    return {value: Metrics.of(items) for value, items in groups.items()}


def read_predictions(path: Path, build_ids: set[str]) -> dict[str, str | None]:
    """id -> prediction from JSON lines {"id", "prediction"}; null is a failed request (counted, not
    scored). Unknown or repeated ids and malformed lines are errors naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RoomspaceError(f"predictions file {path} does not exist") from None
    except UnicodeDecodeError:
        raise RoomspaceError(f"predictions file {path} is not UTF-8 text") from None
    predictions: dict[str, str | None] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except ValueError:
            raise RoomspaceError(f"{where}: not a JSON object") from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str) or "prediction" not in record:
            raise RoomspaceError(f'{where}: expected {{"id": "...", "prediction": "..."}}')
        item_id, text = record["id"], record["prediction"]
        if text is not None and not isinstance(text, str):
            raise RoomspaceError(f"{where}: prediction for {item_id} is not text")
        if item_id not in build_ids:
            raise RoomspaceError(f"{where}: id {item_id} is not an item of this build")
        if item_id in predictions:
            raise RoomspaceError(f"{where}: a second prediction for {item_id}")
        predictions[item_id] = text
    return predictions


COLUMNS = (("items", "items"), ("no answer", "no_answer"), ("unparseable", "unparseable"),
           ("YN acc", "yn_accuracy"), ("FR exact", "fr_exact"), ("FR Jaccard", "fr_jaccard"), ("FR F1", "fr_f1"),
           ("FR single", "fr_single"), ("single consistent", "fr_single_consistent"))


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if isinstance(value, float) else str(value)


def _table(first: list[str], rows: list[tuple[list[str], Metrics]]) -> str:
    header = first + [title for title, _ in COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for labels, metrics in rows:
        lines.append("| " + " | ".join(labels + [_cell(getattr(metrics, field)) for _, field in COLUMNS]) + " |")
    return "\n".join(lines)


def markdown(reports: list[Report]) -> str:
    """The summary (one row per system), then one table per breakdown; rates in percent."""
    parts = ["## Overall (rates in %)", _table(["system"], [([r.system], r.overall) for r in reports])]
    for key in BREAKDOWNS:
        parts.append(f"## By {key}")
        parts.append(_table(["system", key], [([r.system, str(value)], m) for r in reports for value, m in r.by[key].items()]))
    return "\n\n".join(parts) + "\n"


def evaluate(out: Path, configs: str | None, prediction_files: list[Path], baselines: list[str],
             seed: int = 0) -> list[Report]:
    """Reports for each predictions file (named by its stem) and each baseline, on the chosen
    configurations of a finished build; predictions for the build's other configurations are ignored."""
    rows = load_rows(out, configs)
    systems: dict[str, dict[str, str | None]] = {}
    build_ids = all_ids(out) if prediction_files else set()
    for path in prediction_files:
        if path.stem in systems:
            raise RoomspaceError(f"two predictions files are named {path.stem}; rename one")
        systems[path.stem] = read_predictions(path, build_ids)
    for name in baselines:
        if name in systems:
            raise RoomspaceError(f"{name} is both a predictions file and a baseline; rename the file")
        systems[name] = baseline_predictions(name, rows, seed)
    if not systems:
        raise RoomspaceError("nothing to score: give --predictions FILE or --baseline NAME")
    return [score(name, rows, predictions) for name, predictions in systems.items()]


def write_report(path: Path, out: Path, configs: str | None, reports: list[Report]) -> None:
    write_json(path, {"build": str(out), "configs": list(chosen_configs(out, configs)),
                      "systems": {r.system: r.to_json() for r in reports}})
