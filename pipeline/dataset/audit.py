"""The shortcut audit's baselines: how much of a benchmark a model answers without its story or image.

Two prior-only baselines are fitted per configuration and question type on what a question shows
without its story or image (`blind_features`: setting, view, kind of agent row, frames,
modality, the YN candidate, the asked objects' types, the options and the question's words):

* majority: the most frequent answer of the question's key (setting, view, question type, kind,
  frames, modality, candidate and the asked types), falling back to coarser keys;
* learned: a logistic regression (scikit-learn) on those features, one-hot, the words as a bag.

They are fitted on the train split where the build has one and scored on the split audited;
without one, the split's rooms are cut in two halves by a seeded hash of the room id, each half
scored by the baselines fitted on the other. An FR answer counts when it is exactly the answer
set (as `score` counts it), a YN answer when it is the row's. Chance is a fair coin for YN, one of
the nine options at random for FR. A benchmark whose blind accuracy is far above chance can be
passed without reading: docs/semantics.md (the audit) says which configurations to compare models on.

A map question (question type MAP, pipeline.text.maps) shows without its story only its view and its
objects (the legend: their types, and `you` where an egocentric story's observer is drawn too), so
its blind answer is a prior map (`PriorMap`): each object in the cell where objects of its type
stand most often on the witness maps of the same view among the questions fitted on (the view's
most frequent cell for a type not seen). It is judged as `score` judges a map, by the story's facts:
the share of maps consistent (every fact holds) and the mean share of facts that hold, beside chance,
a map of uniformly drawn cells (seeded per question). No limit applies to maps.
"""

from __future__ import annotations

import gc
import multiprocessing
import re
import warnings
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from random import Random

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset.layout import questions
from pipeline.errors import RoomspaceError
from pipeline.parallel import usable_cores, worker_setup
from pipeline.seeding import derive_seed
from pipeline.spatial.facts import Fact, facts_held
from pipeline.spatial.grid import Cell as GridCell
from pipeline.text.prompts import MAP_QUESTION
from pipeline.text.targets import read_map

AUDIT_COLUMNS = ("id", "room_id", "config", "setting", "view", "question_type", "answer", "answer_set", "candidate",
                 "options", "question", "query", "modality", "kind", "story_view", "frame_changes", "frame_angle")
MAP_AUDIT_COLUMNS = ("id", "room_id", "config", "setting", "view", "question_type", "answer", "options", "facts", "d")
# Coarser and coarser keys of the majority baseline: a key seen in fitting gives its most frequent answer.
KEYS = (("setting", "view", "question_type", "kind", "frames", "modality", "candidate", "types"),
        ("setting", "view", "question_type", "kind", "frames", "modality", "candidate"),
        ("setting", "question_type", "candidate"), ("setting", "question_type"), ("question_type",))
AUDITED = ("YN", "FR")  # the question types the blind baselines answer
ALL_SETTINGS = "all"  # the setting of a cell over every setting of its configuration
FIT_ROOMS = 1000  # rooms the baselines are fitted on at most (per half)
MIN_QUESTIONS = 100  # a (configuration, setting) cell with fewer questions is reported, not held to the limits
WORD = re.compile(r"[a-z]+")
NUMBERED = re.compile(r"\s+\d+$")


class BlindUnavailable(RoomspaceError):
    """The blind baselines cannot be had here: no scikit-learn, or no questions to fit them on."""


@dataclass(frozen=True)
class Question:
    """What the audit reads of a row: its answer, its room, and what it shows without story or image."""

    id: str
    room_id: str
    config: str
    setting: str
    question_type: str
    answer: str
    one_relation: bool  # its answer set is one relation: one of nine random options can hit it
    options: int
    key: dict[str, str]  # the majority baseline's key fields
    words: tuple[str, ...]  # the question's words


def object_type(name: str) -> str:
    """"chair 2" -> "chair": what a story's name says of the object without the story."""
    return NUMBERED.sub("", name)


def question_of(row: dict) -> Question:
    query = row.get("query") or {}
    types = "|".join(object_type(query.get(end) or "") for end in ("subject", "object"))
    frames = f"{row.get('story_view')}:{row.get('frame_changes')}:{row.get('frame_angle')}"
    key = {"setting": row["setting"], "view": row["view"], "question_type": row["question_type"],
           "kind": str(row.get("kind")), "frames": frames, "modality": str(row.get("modality")),
           "candidate": str(row["candidate"]), "types": types, "options": "|".join(row["options"])}
    return Question(row["id"], row["room_id"], row["config"], row["setting"], row["question_type"], row["answer"],
                    len(row["answer_set"]) == 1, len(row["options"]), key,
                    tuple(WORD.findall(row["question"].lower())))


def blind_features(question: Question) -> dict[str, float]:
    """One-hot fields, their pairs with the candidate, and the question's words as a bag."""
    key = question.key
    features = {f"{name}={value}": 1.0 for name, value in key.items()}
    for name in ("setting", "view", "types", "kind", "frames", "modality"):
        features[f"candidate|{name}={key['candidate']}|{key[name]}"] = 1.0
    for word in question.words:
        features[f"w={word}"] = 1.0
    return features


class Majority:
    """The most frequent answer of each key, at every coarseness of KEYS."""

    def __init__(self, questions: Iterable[Question]) -> None:
        self.counts: list[dict[tuple, Counter]] = [defaultdict(Counter) for _ in KEYS]
        for question in questions:
            for level, names in enumerate(KEYS):
                self.counts[level][tuple(question.key[n] for n in names)][question.answer] += 1

    def predict(self, question: Question) -> str | None:
        for level, names in enumerate(KEYS):
            counts = self.counts[level].get(tuple(question.key[n] for n in names))
            if counts:
                return min(counts.items(), key=lambda item: (-item[1], item[0]))[0]  # ties: the first in order
        return None


class Learned:
    """A logistic regression on `blind_features`; None where it cannot be fitted (one answer only)."""

    def __init__(self, questions: Sequence[Question]) -> None:
        try:
            from sklearn.exceptions import ConvergenceWarning
            from sklearn.feature_extraction import DictVectorizer
            from sklearn.linear_model import LogisticRegression
            from threadpoolctl import threadpool_limits
        except ImportError:
            raise BlindUnavailable("the audit's learned baseline needs scikit-learn, in the build extra: "
                                   "pip install 'roomspace[build]'") from None

        self.one_thread = lambda: threadpool_limits(1)  # the same sums in the same order: the same fit every run
        answers = [q.answer for q in questions]
        self.constant = answers[0] if len(set(answers)) == 1 else None
        if self.constant is None:
            self.vectorizer = DictVectorizer()
            features = self.vectorizer.fit_transform([blind_features(q) for q in questions])
            # 300 iterations bound the audit's time; a fit stopped there is still the same every run,
            # and its accuracy is what the audit reports, so scikit-learn's warning would only be noise
            # (as is its warning that a small build's FR answers are nearly as many as its questions)
            with self.one_thread(), warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.filterwarnings("ignore", "The number of unique classes", UserWarning)
                self.model = LogisticRegression(max_iter=300, C=1.0).fit(features, answers)

    def predict(self, questions: Sequence[Question]) -> list[str]:
        if self.constant is not None:
            return [self.constant] * len(questions)
        with self.one_thread():
            return list(self.model.predict(self.vectorizer.transform([blind_features(q) for q in questions])))


@dataclass(frozen=True)
class Cell:
    """Blind accuracies of one configuration, setting and question type."""

    config: str
    setting: str
    question_type: str
    questions: int
    chance: float
    majority: float
    learned: float

    @property
    def blind(self) -> float:
        return max(self.majority, self.learned)

    def describe(self) -> str:
        return (f"{self.config} {self.setting} {self.question_type}: {100 * self.blind:.1f}% blind "
                f"({self.questions} questions, chance {100 * self.chance:.1f}%)")


def _half(room_id: str, seed: int) -> int:
    return derive_seed(seed, "audit half", room_id) % 2


def _fitted_rooms(questions: list[Question]) -> list[Question]:
    """The questions of at most FIT_ROOMS rooms (the first by id): a prior is learnt from that many as
    well as from more, and a 10K build's audit stays seconds."""
    kept = set(sorted({q.room_id for q in questions})[:FIT_ROOMS])
    return [q for q in questions if q.room_id in kept]


def _folds(questions: list[Question], fitting: list[Question] | None, seed: int) -> list[tuple[list, list]]:
    """(fitted on, scored) pairs: the train split's questions and these, or the two halves of these rooms."""
    if fitting is not None:
        return [(_fitted_rooms(fitting), questions)]
    halves = [[q for q in questions if _half(q.room_id, seed) == k] for k in (0, 1)]
    return [(_fitted_rooms(halves[1]), halves[0]), (_fitted_rooms(halves[0]), halves[1])]


def blind_answers(questions: list[Question], fitting: list[Question] | None, seed: int = 0,
                  keep: Collection[str] | None = None) -> dict[str, tuple]:
    """id -> (majority answer, learned answer) of every question, per question type, each by
    baselines that never saw its room (`_folds`); with `keep`, of those ids only (every question still
    fits the baselines, so a kept question's answers are the same: `score` on a sample of RoomSpace-10K
    predicts its few questions, not 340,000)."""
    out: dict[str, tuple] = {}
    for question_type in AUDITED:
        scored_all = [q for q in questions if q.question_type == question_type]
        fitted_all = None if fitting is None else [q for q in fitting if q.question_type == question_type]
        for fitted, scored in _folds(scored_all, fitted_all, seed):
            if keep is not None:
                scored = [q for q in scored if q.id in keep]
            if not scored:
                continue
            if not fitted:
                raise BlindUnavailable(f"no {question_type} questions to fit the audit's baselines on; "
                                       "give a build with more rooms or a train split")
            majority, learned = Majority(fitted), Learned(fitted)
            for q, guess in zip(scored, learned.predict(scored)):
                out[q.id] = (majority.predict(q), guess)
    return out


def audit_cells(questions: list[Question], answers: dict[str, tuple]) -> list[Cell]:
    """Per configuration, setting and question type (in the order first met), the blind accuracies;
    question types the baselines do not answer (a plan, a map: judged otherwise) are left out."""
    questions = [q for q in questions if q.question_type in AUDITED]
    groups: dict[tuple, list[Question]] = {}
    for q in questions:
        groups.setdefault((q.config, q.setting, q.question_type), []).append(q)
    for q in questions:  # and each configuration's questions of a type over every setting
        groups.setdefault((q.config, ALL_SETTINGS, q.question_type), []).append(q)
    cells = []
    for (config, setting, question_type), group in groups.items():
        count = len(group)
        chance = 0.5 if question_type == "YN" else sum(q.one_relation / q.options for q in group) / count
        majority = sum(answers[q.id][0] == q.answer for q in group) / count
        learned = sum(answers[q.id][1] == q.answer for q in group) / count
        cells.append(Cell(config, setting, question_type, count, chance, majority, learned))
    return cells


def over_limits(cells: Sequence[Cell], max_yn: float | None, max_fr: float | None,
                least: int = MIN_QUESTIONS) -> list[Cell]:
    """The cells of `least` questions or more whose blind accuracy passes its limit."""
    limits = {"YN": max_yn, "FR": max_fr}
    return [c for c in cells if c.questions >= least and limits[c.question_type] is not None
            and c.blind > limits[c.question_type]]


def audit_table(cells: Sequence[Cell]) -> str:
    """The audit as a Markdown table: a line per configuration and setting, YN and FR side by side."""
    by_setting: dict[tuple[str, str], dict[str, Cell]] = {}
    for cell in cells:
        by_setting.setdefault((cell.config, cell.setting), {})[cell.question_type] = cell
    lines = ["| configuration | setting | YN questions | YN chance | YN blind majority | YN blind learned "
             "| FR questions | FR chance | FR blind majority | FR blind learned |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (config, setting), pair in by_setting.items():
        parts = []
        for question_type in ("YN", "FR"):
            c = pair.get(question_type)
            parts.append(" | ".join([str(c.questions), *(f"{100 * v:.1f}" for v in (c.chance, c.majority, c.learned))])
                         if c else "0 | - | - | -")
        lines.append(f"| {config} | {setting} | {' | '.join(parts)} |")
    return "\n".join(lines)


def file_questions(paths: Iterable[Path], rooms: range | None = None, config: str | None = None) -> list[Question]:
    """The questions of a configuration's Parquet files (of `rooms` only, if given), as the audit reads them;
    `config` names it where its files hold other configurations' rows too (pipeline.dataset.layout).
    A file whose rows all lie outside `rooms` is not read (`_rooms_rows`)."""
    found = []
    for path in paths:
        shard = pq.ParquetFile(path)
        if rooms is not None and not _rooms_rows(shard, rooms):
            continue
        for table in questions(shard, AUDIT_COLUMNS + ("room_index",), config=config, where=str(path)):
            found.extend(question_of(row) for row in table.to_pylist()
                         if (rooms is None or row["room_index"] in rooms) and row["question_type"] != MAP_QUESTION)
    return found


def _rooms_rows(shard: pq.ParquetFile, rooms: range | None) -> int:
    """How many rows of a file may be of `rooms` (all of them if None), by its row groups' statistics of
    `room_index` (a row group without them may hold any): the card audits a build's first rooms, whose
    rows lie in its first shards, and a 10K build's other files took it about 12 s to read."""
    metadata = shard.metadata
    leaves = [k for k in range(metadata.num_columns) if metadata.schema.column(k).path == "room_index"]
    rows = 0
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(leaves[0]).statistics if leaves and rooms is not None else None
        if stats is None or not stats.has_min_max or rooms.step != 1 or \
                range(max(stats.min, rooms.start), min(stats.max + 1, rooms.stop)):
            rows += metadata.row_group(group).num_rows
    return rows


def files_audit(files: Mapping[str, Sequence[Path]], fitting: Mapping[str, Sequence[Path]] | None,
                rooms: range | None = None, seed: int = 0, workers: int = 1) -> list[Cell]:
    """The audit of each configuration's files (`fitting`: the train split's, else halves of these rooms).

    With `workers` 2 or more (and two cores), some of the configurations are audited in a forked
    process while this one audits the others, the rows each reads as even as may be (`_halves`): the
    same cells, in the same order, on two cores. One process more, not a pool of two: each forked
    process holds a copy of this one's pages.
    """
    tasks = [(config, paths, fitting[config] if fitting else None, rooms, seed) for config, paths in files.items()]
    if workers < 2 or len(tasks) < 2 or usable_cores() < 2:
        return [cell for cells in _configs_audit(tasks) for cell in cells]
    here, there = _halves(tasks)
    # What this process holds but no longer uses goes back first: the forked one's resident pages
    # count it again (a build's main process: 423 MiB before, 311 MiB after, at its card's audit).
    gc.collect()
    pa.default_memory_pool().release_unused()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=worker_setup) as pool:
        later = pool.submit(_configs_audit, [tasks[k] for k in there])
        cells = dict(zip(here, _configs_audit([tasks[k] for k in here]))) | dict(zip(there, later.result()))
    return [cell for k in range(len(tasks)) for cell in cells[k]]


def _halves(tasks: Sequence[tuple]) -> tuple[list[int], list[int]]:
    """The tasks' indices in two groups reading about as many rows each, the largest placed first, each
    where fewer are yet: the audit's time goes with its rows (the paper's configurations of a default
    build have about eight times the rows of its hard ones)."""
    def rows(task: tuple) -> int:
        _, paths, fitting, rooms, _ = task
        return sum(_rooms_rows(pq.ParquetFile(path), rooms) for path in paths) + \
            sum(_rooms_rows(pq.ParquetFile(path), None) for path in fitting or ())

    groups: tuple[list[int], list[int]] = ([], [])
    loads = [0, 0]
    for k, size in sorted(enumerate(map(rows, tasks)), key=lambda item: -item[1]):
        lighter = loads.index(min(loads))
        groups[lighter].append(k)
        loads[lighter] += size
    return sorted(groups[0]), sorted(groups[1])


def _configs_audit(tasks: Sequence[tuple]) -> list[list[Cell]]:
    """The cells of each of these configurations (`files_audit`), in turn."""
    cells = []
    for config, paths, fitting, rooms, seed in tasks:
        found = file_questions(paths, rooms, config)
        fitted = None if fitting is None else file_questions(fitting, config=config)
        cells.append(audit_cells(found, blind_answers(found, fitted, seed)))
    return cells



# --- maps ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapQuestion:
    """What the audit reads of a map question: its room, what it shows without its story (its view and
    its objects' types), and what judges a map (its facts; its witness, from which priors are fitted)."""

    id: str
    room_id: str
    config: str
    setting: str
    view: str
    names: tuple[str, ...]  # the legend's objects, in map order: the blind map sees their types only
    facts: tuple[Fact, ...]
    d: int
    witness: tuple[GridCell, ...]  # the cells of the row's answer, the witness map


def map_question_of(row: dict) -> MapQuestion:
    witness, problem = read_map(row["answer"].splitlines(), len(row["options"]), row["d"])
    if witness is None:
        raise RoomspaceError(f"row {row['id']}: its answer is no map ({problem}); run `roomspace validate` on the build")
    return MapQuestion(row["id"], row["room_id"], row["config"], row["setting"], row["view"],
                       tuple(row["options"]), tuple(Fact(**f) for f in row["facts"]), row["d"], witness)


class PriorMap:
    """The blind map (module docstring): per view, the most frequent witness cell of each type."""

    def __init__(self, questions: Iterable[MapQuestion]) -> None:
        self.cells: dict[tuple[str, str | None], Counter] = defaultdict(Counter)
        for question in questions:
            for name, cell in zip(question.names, question.witness):
                type_ = object_type(name)
                self.cells[question.view, type_][cell] += 1
                self.cells[question.view, None][cell] += 1

    def draw(self, question: MapQuestion) -> tuple[GridCell, ...]:
        drawn = []
        for name in question.names:
            counts = self.cells.get((question.view, object_type(name))) or self.cells.get((question.view, None))
            if not counts:
                raise BlindUnavailable(f"no {question.view} map questions to fit the blind map on; "
                                       "give a build with more rooms or a train split")
            drawn.append(min(counts.items(), key=lambda item: (-item[1], item[0]))[0])  # ties: the first cell
        return tuple(drawn)


def chance_map(question: MapQuestion, seed: int) -> tuple[GridCell, ...]:
    """A map of uniformly drawn cells, seeded per question (as `score --baseline random` draws its maps)."""
    rng = Random(derive_seed(seed, "audit chance map", question.id))
    return tuple((rng.randrange(question.d), rng.randrange(question.d)) for _ in question.names)


@dataclass(frozen=True)
class MapCell:
    """The blind map's and chance's maps of one configuration and setting, judged by the stories' facts."""

    config: str
    setting: str
    questions: int
    chance_consistent: float
    chance_facts: float  # the mean share of the stated facts that hold
    blind_consistent: float
    blind_facts: float


def _judged(question: MapQuestion, cells: Sequence[GridCell]) -> tuple[bool, float]:
    """Whether every fact holds on the map, and the share that holds."""
    held = facts_held(question.facts, dict(zip(question.names, cells)), question.d)
    return all(held), sum(held) / len(held) if held else 1.0


def map_audit_cells(questions: list[MapQuestion], fitting: list[MapQuestion] | None, seed: int = 0) -> list[MapCell]:
    """Per configuration and setting (in the order first met) and over every setting, the blind map's
    and chance's maps judged, each question's blind map fitted on rooms other than its own (`_folds`)."""
    judged: dict[str, tuple] = {}
    for fitted, scored in _folds(questions, fitting, seed):
        if not scored:
            continue
        prior = PriorMap(fitted)
        for q in scored:
            judged[q.id] = (*_judged(q, chance_map(q, seed)), *_judged(q, prior.draw(q)))
    groups: dict[tuple[str, str], list[MapQuestion]] = {}
    for q in questions:
        groups.setdefault((q.config, q.setting), []).append(q)
    for q in questions:
        groups.setdefault((q.config, ALL_SETTINGS), []).append(q)
    cells = []
    for (config, setting), group in groups.items():
        sums = [sum(judged[q.id][k] for q in group) / len(group) for k in range(4)]
        cells.append(MapCell(config, setting, len(group), *sums))
    return cells


def map_audit_table(cells: Sequence[MapCell]) -> str:
    """The maps' audit as a Markdown table: a line per configuration and setting."""
    lines = ["| configuration | setting | maps | chance consistent | chance facts held | blind consistent "
             "| blind facts held |", "|---|---|---|---|---|---|---|"]
    for c in cells:
        shares = " | ".join(f"{100 * v:.1f}" for v in (c.chance_consistent, c.chance_facts, c.blind_consistent,
                                                        c.blind_facts))
        lines.append(f"| {c.config} | {c.setting} | {c.questions} | {shares} |")
    return "\n".join(lines)
