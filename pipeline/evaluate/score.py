"""Scoring answers by consistency with the story, configuration by configuration.

An FR answer is the set of relations the model names; it is compared with the row's answer set
(every relation consistent with the story; for an image-only row, the one relation the image
shows). A YN answer is right when it says Yes exactly when the candidate is in that set. Items
with no answer, an unparseable one or one cut short (`"truncated": true`, the endpoint's
finish_reason "length") stay in every denominator and are counted in their own columns, so a
score is never computed over a quietly smaller set.

Metrics, named as the peers define them: YN accuracy; FR exact match (the answer set exactly,
SpaRP's `exact_match`); FR F1 (items), the mean per-item F1 (scikit-learn's "samples" average);
FR F1 (macro), the F1 of each of the nine relation labels over the FR items, averaged (SpaRP's
published F1); FR Jaccard. Every rate carries a 95 % interval (pipeline.evaluate.stats), and every
group its own reference points: chance (the expected score of a uniform guess among the options)
and majority (the best single constant answer for that group, in hindsight).

A predictions file may hold several answers per item (`"sample": k`, from `run-model --samples`):
rates are then means over rounds with their standard deviation, and the majority vote over the
rounds (self-consistency) is scored too.

Only the columns scoring needs are read, one shard at a time, and per-item outcomes are kept in
numpy arrays: memory grows with the number of items, not with the rows' stories or images.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer
from pipeline.evaluate.baselines import BASELINES, baseline_predictions
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.evaluate.stats import Rate, rate
from pipeline.spatial.relations import DIRECTIONS

SCORE_COLUMNS = ("id", "room_id", "config", "setting", "view", "question_type", "answer", "answer_set", "candidate",
                 "options", "n", "m", "d", "hops", "answer_set_size", "modality", "pair", "story_view", "frame_changes",
                 "frame_angle")
BREAKDOWNS = ("setting", "view", "modality", "story_view", "frame_changes", "frame_angle", "n", "m", "d", "hops",
              "answer_set_size")
SCORED, UNPARSEABLE, NO_ANSWER, TRUNCATED = range(4)
EXAMPLES = 5  # unparseable answers quoted per system in the JSON report
BIT = {code: 1 << k for k, code in enumerate(DIRECTIONS)}


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """What scoring needs of a dataset row (its story, prompt and image are never read)."""

    id: str
    room_id: str
    config: str
    setting: str
    view: str
    question_type: str
    answer: str
    answer_set: tuple[str, ...]
    candidate: str | None
    options: tuple[str, ...]
    n: int
    m: int
    d: int
    hops: int
    answer_set_size: int
    modality: str | None
    pair: int | None  # vision pair questions: the three modalities of one question share it
    story_view: str | None  # agent rows: the frame the story is told in
    frame_changes: int | None  # agent rows: 0, 1 or 2 changes of frame from the story to the question
    frame_angle: int | None  # agent rows: degrees between the story's facing and the question's

    @classmethod
    def of(cls, values: Mapping) -> ScoreRow:
        """The scoring fields of a row dict or a harness sample's metadata (lists as tuples); a field
        it lacks (`modality` and `pair` outside vision configurations, the frames outside agent ones) is None."""
        fields = {f.name: values.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**{**fields, "answer_set": tuple(fields["answer_set"]), "options": tuple(fields["options"])})


def read_score_rows(rows: BenchmarkRows, configs: Sequence[str], progress: bool = False) -> list[ScoreRow]:
    from tqdm import tqdm

    shards = sum(len(rows.files[config]) for config in configs)
    out: list[ScoreRow] = []
    with tqdm(total=shards, unit="shard", desc="reading rows", disable=not progress, file=sys.stderr) as bar:
        for config in configs:
            for table in rows.batches(config, SCORE_COLUMNS):
                columns = {name: table.column(name).to_pylist() for name in table.column_names}
                absent = [None] * table.num_rows
                modality, pair = columns.get("modality", absent), columns.get("pair", absent)
                story_view = columns.get("story_view", absent)
                changes, angle = columns.get("frame_changes", absent), columns.get("frame_angle", absent)
                for k in range(table.num_rows):
                    out.append(ScoreRow(
                        columns["id"][k], sys.intern(columns["room_id"][k]), sys.intern(columns["config"][k]),
                        sys.intern(columns["setting"][k]), sys.intern(columns["view"][k]),
                        sys.intern(columns["question_type"][k]), sys.intern(columns["answer"][k]),
                        tuple(map(sys.intern, columns["answer_set"][k])), columns["candidate"][k],
                        tuple(map(sys.intern, columns["options"][k])), columns["n"][k], columns["m"][k],
                        columns["d"][k], columns["hops"][k], columns["answer_set_size"][k],
                        modality[k] and sys.intern(modality[k]), pair[k], story_view[k] and sys.intern(story_view[k]),
                        changes[k], angle[k]))
                bar.update()
    return out


@dataclass
class Outcomes:
    """One system's outcome per item (rows) and round (columns)."""

    status: np.ndarray  # int8: SCORED, UNPARSEABLE, NO_ANSWER, TRUNCATED
    correct: np.ndarray  # bool
    jaccard: np.ndarray  # float32, FR
    f1: np.ndarray  # float32, FR, per item
    named: np.ndarray  # int16: bits of the FR relations named (BIT), 0 unless scored
    yes: np.ndarray  # int8: YN answer 1 / 0, -1 unless scored
    examples: list[dict] = field(default_factory=list)  # the first unparseable answers

    @classmethod
    def empty(cls, items: int, rounds: int = 1) -> Outcomes:
        shape = (items, rounds)
        return cls(np.full(shape, NO_ANSWER, np.int8), np.zeros(shape, bool), np.zeros(shape, np.float32),
                   np.zeros(shape, np.float32), np.zeros(shape, np.int16), np.full(shape, -1, np.int8))

    @property
    def rounds(self) -> int:
        return self.status.shape[1]

    def grow(self, rounds: int) -> None:
        """Room for more rounds; items have no answer there until one is recorded."""
        extra = Outcomes.empty(self.status.shape[0], rounds - self.rounds)
        for name in ("status", "correct", "jaccard", "f1", "named", "yes"):
            setattr(self, name, np.concatenate([getattr(self, name), getattr(extra, name)], axis=1))

    def record(self, k: int, round_: int, row: ScoreRow, text: str | None, truncated: bool = False) -> None:
        if text is None:
            return
        if truncated:
            self.status[k, round_] = TRUNCATED
            return
        parsed = parse_answer(text, row.question_type)
        if not parsed.parsed:
            self.status[k, round_] = UNPARSEABLE
            if len(self.examples) < EXAMPLES:
                self.examples.append({"id": row.id, "prediction": text, "problem": parsed.problem})
            return
        self.status[k, round_] = SCORED
        truth = set(row.answer_set)
        if row.question_type == "YN":
            self.yes[k, round_] = int(parsed.yes)
            self.correct[k, round_] = parsed.yes == (row.candidate in truth)
            return
        named = set(parsed.relations)
        common = len(named & truth)
        self.named[k, round_] = sum(BIT[code] for code in named)
        self.correct[k, round_] = named == truth
        self.jaccard[k, round_] = common / len(named | truth)
        self.f1[k, round_] = 2 * common / (len(named) + len(truth))


def score_item(row: ScoreRow, text: str | None, truncated: bool = False) -> Outcomes:
    """One item's outcome, for tests and examples."""
    outcome = Outcomes.empty(1)
    outcome.record(0, 0, row, text, truncated)
    return outcome


def read_predictions(path: Path, index: dict[str, int], rows: list[ScoreRow], known: set[str]) -> Outcomes:
    """A predictions file scored against `rows` (index: id -> position). Lines are JSON objects
    {"id", "prediction"[, "sample", "truncated"]}, "\\n"-separated; a null prediction is a failed
    request (no answer). Ids of other configurations of the benchmark (`known`) are skipped; an id
    it does not have, a repeated (id, sample) or a malformed line is an error naming the line."""
    try:
        outcomes = _read_predictions(path, index, rows, known)
    except FileNotFoundError:
        raise RoomspaceError(f"predictions file {path} does not exist") from None
    except UnicodeDecodeError:
        raise RoomspaceError(f"predictions file {path} is not UTF-8 text") from None
    return outcomes


def _read_predictions(path: Path, index: dict[str, int], rows: list[ScoreRow], known: set[str]) -> Outcomes:
    outcomes = Outcomes.empty(len(rows))
    seen: set[tuple[str, int]] = set()
    # Read line by line (a file of long answers need not fit in memory twice); newline="\n" splits on
    # "\n" alone, where str.splitlines would also split inside an answer holding U+2028.
    # utf-8-sig: a byte order mark, as Windows tools write one, is not part of the first line.
    with open(path, encoding="utf-8-sig", newline="\n") as lines:
        for number, line in enumerate(lines, 1):
            _record_line(outcomes, seen, f"{path}:{number}", line, index, rows, known)
    return outcomes


def _record_line(outcomes: Outcomes, seen: set, where: str, line: str, index: dict[str, int], rows: list[ScoreRow],
                 known: set[str]) -> None:
    """One predictions line into `outcomes`; `seen` holds the (id, sample) pairs read so far."""
    if not line.strip():
        return
    try:
        record = json.loads(line)
    except ValueError:
        raise RoomspaceError(f"{where}: not a JSON object") from None
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or "prediction" not in record:
        raise RoomspaceError(f'{where}: expected {{"id": "...", "prediction": "..."}}')
    item_id, answer, sample = record["id"], record["prediction"], record.get("sample", 0)
    if answer is not None and not isinstance(answer, str):
        raise RoomspaceError(f"{where}: prediction for {item_id} is not text")
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise RoomspaceError(f"{where}: sample must be a whole number >= 0, got {sample!r}")
    if item_id not in known:
        raise RoomspaceError(f"{where}: id {item_id} is not an item of this benchmark")
    if (item_id, sample) in seen:
        raise RoomspaceError(f"{where}: a second prediction for {item_id}" + (f", sample {sample}" if sample else ""))
    seen.add((item_id, sample))
    k = index.get(item_id)
    if k is None:
        return  # an item of a configuration not being scored
    if sample >= outcomes.rounds:
        outcomes.grow(sample + 1)
    outcomes.record(k, sample, rows[k], answer, bool(record.get("truncated", False)))


def baseline_outcomes(name: str, rows: list[ScoreRow], seed: int) -> Outcomes:
    """A baseline's answers, made per configuration (majority counts its own configuration's rows)."""
    outcomes = Outcomes.empty(len(rows))
    by_config: dict[str, list[int]] = {}
    for k, row in enumerate(rows):
        by_config.setdefault(row.config, []).append(k)
    for positions in by_config.values():
        chosen = [rows[k] for k in positions]
        answers = baseline_predictions(name, chosen, seed)
        for k, row in zip(positions, chosen):
            outcomes.record(k, 0, row, answers[row.id])
    return outcomes


@dataclass(frozen=True)
class Metrics:
    items: int
    no_answer: float  # per round (a mean when there are several rounds)
    unparseable: float
    truncated: float
    yn_items: int
    yn_accuracy: Rate | None
    fr_items: int
    fr_exact: Rate | None  # FR items answered with exactly the answer set
    fr_f1_items: float | None  # mean per-item F1 (scikit-learn "samples")
    fr_f1_macro: float | None  # F1 per relation label over the FR items, averaged over the nine (SpaRP's F1)
    fr_jaccard: float | None
    fr_single: float  # FR answers naming one relation
    fr_single_consistent: float | None  # share of those whose relation is consistent with the story
    yn_vote: float | None = None  # self-consistency: the majority answer over rounds, where there are several
    fr_vote: float | None = None


@dataclass(frozen=True)
class Reference:
    """What no reading of the story is needed for, on the same items."""

    yn_chance: float | None  # a fair coin
    yn_majority: float | None  # the more frequent answer of these items
    fr_chance: float | None  # one of the nine options at random
    fr_majority: float | None  # the best constant answer: the answer set most often the whole answer here
    yn_blind: float | None = None  # the better of the audit's blind baselines (pipeline.evaluate.audit)
    fr_blind: float | None = None


class Scorer:
    """The items being scored and the arrays every group's metrics are computed from."""

    def __init__(self, rows: list[ScoreRow], blind: Mapping[str, tuple[bool, bool]] | None = None) -> None:
        """`blind`: id -> whether the audit's (majority, learned) blind baselines answer the row right."""
        self.rows = rows
        self.blind = None if blind is None else np.array([blind[row.id] for row in rows], bool).reshape(-1, 2)
        self.yn = np.array([row.question_type == "YN" for row in rows], bool)
        self.truth = np.array([sum(BIT.get(code, 0) for code in row.answer_set) for row in rows], np.int32)
        self.yes_right = np.array([row.candidate in row.answer_set for row in rows], bool)

    def metrics(self, outcomes: Outcomes, items: np.ndarray) -> Metrics:
        yn, fr = items[self.yn[items]], items[~self.yn[items]]
        status = outcomes.status[items]
        rounds = outcomes.rounds

        def counted(code: int) -> float:
            return float((status == code).sum()) / rounds

        def mean(values: np.ndarray, keep: np.ndarray) -> float | None:
            return float(values[keep].mean()) if keep.size else None

        single = _bit_count(outcomes.named[fr]) == 1
        consistent = single & ((outcomes.named[fr] & self.truth[fr, None]) == outcomes.named[fr])
        vote_yn = vote_fr = None
        if rounds > 1:
            vote_yn = mean(self._vote_yn(outcomes, yn), np.arange(yn.size)) if yn.size else None
            vote_fr = mean(self._vote_fr(outcomes, fr), np.arange(fr.size)) if fr.size else None
        return Metrics(
            items=int(items.size), no_answer=counted(NO_ANSWER), unparseable=counted(UNPARSEABLE),
            truncated=counted(TRUNCATED),
            yn_items=int(yn.size), yn_accuracy=_rate(outcomes.correct[yn]),
            fr_items=int(fr.size), fr_exact=_rate(outcomes.correct[fr]),
            fr_f1_items=float(outcomes.f1[fr].mean()) if fr.size else None,
            fr_f1_macro=self._macro_f1(outcomes.named[fr], self.truth[fr]) if fr.size else None,
            fr_jaccard=float(outcomes.jaccard[fr].mean()) if fr.size else None,
            fr_single=float(single.sum()) / rounds,
            fr_single_consistent=float(consistent.sum() / single.sum()) if single.any() else None,
            yn_vote=vote_yn, fr_vote=vote_fr,
        )

    @staticmethod
    def _macro_f1(named: np.ndarray, truth: np.ndarray) -> float:
        """Mean over rounds of the macro F1 over the nine labels (a label never named nor true scores 0)."""
        scores = []
        for round_ in range(named.shape[1]):
            per_label = []
            for bit in BIT.values():
                said, true = (named[:, round_] & bit) != 0, (truth & bit) != 0
                tp, fp, fn = int((said & true).sum()), int((said & ~true).sum()), int((~said & true).sum())
                per_label.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
            scores.append(sum(per_label) / len(per_label))
        return float(np.mean(scores))

    def _vote_yn(self, outcomes: Outcomes, items: np.ndarray) -> np.ndarray:
        yes = outcomes.yes[items]
        votes_yes, votes_no = (yes == 1).sum(axis=1), (yes == 0).sum(axis=1)
        decided = votes_yes != votes_no  # a tie, or no parsed answer at all, is no answer
        return (decided & ((votes_yes > votes_no) == self.yes_right[items])).astype(float)

    def _vote_fr(self, outcomes: Outcomes, items: np.ndarray) -> np.ndarray:
        out = np.zeros(items.size)
        for position, k in enumerate(items):
            parsed = [int(mask) for mask, status in zip(outcomes.named[k], outcomes.status[k]) if status == SCORED]
            if not parsed:
                continue
            counts = Counter(parsed).most_common()
            if len(counts) == 1 or counts[0][1] > counts[1][1]:  # a tie between sets is no answer
                out[position] = float(counts[0][0] == self.truth[k])
        return out

    def reference(self, items: np.ndarray) -> Reference:
        yn, fr = items[self.yn[items]], items[~self.yn[items]]
        yes_share = float(self.yes_right[yn].mean()) if yn.size else None
        one = fr[_bit_count(self.truth[fr]) == 1]  # only a one-relation answer set can be hit by one guess

        def blind(items: np.ndarray) -> float | None:
            return float(self.blind[items].mean(axis=0).max()) if self.blind is not None and items.size else None

        return Reference(
            yn_chance=0.5 if yn.size else None,
            yn_majority=max(yes_share, 1 - yes_share) if yn.size else None,
            fr_chance=sum(1 / len(self.rows[k].options) for k in one) / fr.size if fr.size else None,
            # every constant answer counts, "all nine" too: a constant is right where it is the whole answer set
            fr_majority=max(Counter(self.truth[fr].tolist()).values(), default=0) / fr.size if fr.size else None,
            yn_blind=blind(yn), fr_blind=blind(fr),
        )


def _rate(correct: np.ndarray) -> Rate | None:
    """correct: items x rounds."""
    return rate(correct.mean(axis=1), correct.mean(axis=0)) if correct.size else None


POPCOUNT = np.array([bin(mask).count("1") for mask in range(1 << len(DIRECTIONS))])


def _bit_count(masks: np.ndarray) -> np.ndarray:
    return POPCOUNT[masks]


@dataclass(frozen=True)
class Group:
    """The items reported together: one configuration, or several pooled with --pool."""

    name: str  # the configuration, or "pooled: K configurations" (short: headings and file names use it)
    items: np.ndarray  # positions in the scorer's rows
    configs: tuple[str, ...]  # the configurations in it (the report and plots list a pool's)


def pooled_name(configs: Sequence[str]) -> str:
    """A pool's name counts its configurations rather than listing them: the sweep pools 70, and a name
    listing them made headings unreadable and plot file names longer than a file system allows."""
    return f"pooled: {len(configs)} configuration{'s' if len(configs) != 1 else ''}"


def groups(rows: list[ScoreRow], configs: Sequence[str], pool: bool) -> list[Group]:
    if pool:
        return [Group(pooled_name(configs), np.arange(len(rows)), tuple(configs))]
    positions: dict[str, list[int]] = {config: [] for config in configs}
    for k, row in enumerate(rows):
        positions[row.config].append(k)
    return [Group(config, np.array(found, int), (config,)) for config, found in positions.items()]


def breakdown(rows: list[ScoreRow], items: np.ndarray, key: str) -> dict:
    """value -> positions, values in their natural order (settings and views as the dataset lists them)."""
    found: dict = {}
    for k in items:
        found.setdefault(getattr(rows[k], key), []).append(k)
    ordered = sorted(found, key=lambda v: (0, v) if isinstance(v, int) else (1, list(found).index(v)))
    return {value: np.array(found[value], int) for value in ordered}


def name_systems(paths: Sequence[Path], names: Sequence[str] = ()) -> dict[str, Path]:
    """Each predictions file under its system's name: `names` (score's --name) in the files' order, else
    each file's stem."""
    if names and len(names) != len(paths):
        raise RoomspaceError(f"{len(names)} --name for {len(paths)} --predictions files: give one --name per "
                             "--predictions, in the same order")
    named: dict[str, Path] = {}
    for path, name in zip(paths, names or [path.stem for path in paths]):
        if name in named:
            how = "give each its own --name" if names else "name their systems with --name NAME, once per --predictions"
            raise RoomspaceError(f"two predictions files are named {name} ({named[name]} and {path}); {how}")
        named[name] = path
    return named


def load_systems(rows: BenchmarkRows, score_rows: list[ScoreRow], prediction_files: Iterable[Path] | Mapping[str, Path],
                 baselines: Iterable[str], seed: int) -> dict[str, Outcomes]:
    """Each predictions file and baseline, scored item by item. A file's system is named by its key
    where `prediction_files` maps names to files (see name_systems), else by its stem."""
    systems: dict[str, Outcomes] = {}
    baselines = list(baselines)
    if not isinstance(prediction_files, Mapping):
        prediction_files = name_systems(list(prediction_files))
    if not prediction_files and not baselines:
        raise RoomspaceError("nothing to score: give --predictions FILE or --baseline NAME")
    index = {row.id: k for k, row in enumerate(score_rows)}
    # Every id of the benchmark: those being scored are in hand, only the other configurations' are read.
    scored = {row.config for row in score_rows}
    known = set(index) | rows.ids([c for c in rows.configs if c not in scored]) if prediction_files else set()
    for name, path in prediction_files.items():
        systems[name] = read_predictions(path, index, score_rows, known)
    for name in baselines:
        if name not in BASELINES:
            raise RoomspaceError(f"unknown baseline {name!r}; expected one of {', '.join(BASELINES)}")
        if name in systems:
            raise RoomspaceError(f"{name} is both a predictions file and a baseline; name the file's system "
                                 "with --name")
        systems[name] = baseline_outcomes(name, score_rows, seed)
    return systems
