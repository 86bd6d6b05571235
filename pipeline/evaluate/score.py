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
and the best constant answer set (the single constant answer best for that group, in hindsight; not
the `majority` baseline, which names the one relation most often consistent).

Rows that name their options' codes (the composition and shapes kinds', `option_codes`) are parsed
by those names (pipeline.evaluate.answers.parse_named), so an FR answer may be a set of RCC-8
relations or a distance class as well as of directions; macro F1 is taken over the labels of the
calculi a group's answers draw from.

A predictions file may hold several answers per item (`"sample": k`, from `run-model --samples`):
rates are then means over rounds with their standard deviation, and the majority vote over the
rounds (self-consistency) is scored too. Where the endpoint counted each answer's completion tokens
(`"tokens"`), their distribution is reported beside the truncated answers.

A predictions file's header (pipeline.evaluate.predictions) names its system by the model that
answered and says which sample it asked: when every predictions file records a sample (`run-model
--limit`), the items scored are those they hold answers for, so chance, best constant, the baselines and
every interval are over the sample; `--limit N --seed S` scores that sample whatever the files
say. A file without a header (an inspect export, a hand-made file) names no questions: without
`--limit` it is scored on the items it answers, never on every item with the rest as no answer,
and a warning says what it covers. What does not match the build (another build's manifest,
another split, an empty file, answers only to configurations not being scored, an unfinished run)
is a one-line warning, never a silent 0 %.

A map (question type MAP, pipeline.text.maps) is scored by the checker rather than against one
true map: it is consistent when every fact its story states holds on its cells
(pipeline.spatial.facts.facts_held); its partial credit is the share of facts that hold (kept where
an FR answer keeps its Jaccard). Maps consistent, facts held and maps not parsed are reported per
system; the baselines `random` (every object in a random cell), `regions` (every object in a random
cell of its stated region, against a wall where the story says so: the facts about single objects
alone) and `checker` (the rasterised scene, the story's own witness: 100 %) draw maps too.

A plan (question type PLAN, pipeline.text.object_tasks) is read and scored without a judge
(pipeline.evaluate.plans): its steps are read to (action, object, source) with the view's names and
matched with the gold steps; its step content F1 (F_c, kept where an FR answer keeps its Jaccard),
precondition F1 (F_p, where it keeps its F1) and exact plan (the same DAG up to the order of
independent steps) are reported per system, with the plans not read; the baselines `direct` (the
object taken at once), `random` (the gold steps in a random order, a chain) and `checker` (the gold
plan: 100 %) answer plans.

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

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_answer, parse_map
from pipeline.evaluate.baselines import BASELINES, baseline_predictions
from pipeline.evaluate.plans import GoldStep, read_plan, score_plan
from pipeline.evaluate.predictions import RunHeader, first_model, header_of, read_header
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.evaluate.sample import Sample, sample_ids
from pipeline.evaluate.stats import Rate, rate
from pipeline.spatial.facts import Fact, facts_held
from pipeline.spatial.ladder import BOUNDED, Bounded
from pipeline.spatial.relations import DIRECTIONS, REGIONS
from pipeline.text.prompts import MAP_QUESTION, PLAN_QUESTION

SCORE_COLUMNS = ("id", "room_id", "config", "setting", "view", "question_type", "answer", "answer_set", "candidate",
                 "options", "n", "m", "d", "hops", "answer_set_size", "modality", "pair", "story_view", "frame_changes",
                 "frame_angle", "naming", "option_codes", "arguments", "shape_kind", "level", "bounded", "room_type",
                 "tightness", "path_decides", "layout_decides", "form")
BREAKDOWNS = ("setting", "view", "modality", "story_view", "frame_changes", "frame_angle", "naming", "shape_kind",
              "form", "level", "n", "m", "d", "hops", "answer_set_size", "room_type", "tightness", "path_decides",
              "layout_decides")
TIGHTNESS_BIN = 0.1  # tightness (the mean share of its domain a story's facts exclude) is broken down in bins this wide
MAP_COLUMNS = ("facts",)  # read besides SCORE_COLUMNS for a configuration of map questions
PLAN_COLUMNS = ("plan",)  # ... and for one of plan questions (pipeline.text.object_tasks): the gold steps
SCORED, UNPARSEABLE, NO_ANSWER, TRUNCATED = range(4)
EXAMPLES = 5  # unparseable answers quoted per system in the JSON report
# The calculi an FR answer set draws from, each its own labels: the nine directions, the nine regions (a hard
# story's regions form), the eight RCC-8 relations, the shapes kind's distance classes.
CALCULI = (DIRECTIONS, REGIONS, tuple(entry["code"] for entry in data_json("rcc8.json")["codes"]),
           tuple(entry["code"] for entry in data_json("coordinates.json")["distances"]))
BIT = {code: 1 << k for k, code in enumerate(code for codes in CALCULI for code in codes)}


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
    facts: tuple[Fact, ...] | None = None  # map rows: the story's facts, which a map must keep
    naming: str | None = None  # composition rows: eponymous or anonymous relation names
    option_codes: tuple[str, ...] | None = None  # composition rows: the code each option names (lists in metadata)
    arguments: tuple[str, ...] | None = None  # composition rows: the asked pair as the question writes it
    shape_kind: str | None = None  # shapes rows: circle, rectangle or polygon
    plan: tuple[GoldStep, ...] | None = None  # plan rows: the gold steps (action, object, source, needs)
    level: int | None = None  # the difficulty ladder's (pipeline.spatial.ladder); None: off it, or an older build
    bounded: tuple[tuple[str, ...], ...] | None = None  # what R0, R1 and R2 leave open (the r0-r2 baselines)
    room_type: str | None = None  # the fields every row carries (pipeline.text.items.Item), broken down by
    tightness: float | None = None  # pipeline.spatial.difficulty.tightness; 0 where the story states no facts
    path_decides: bool | None = None  # the reasoning path's last composed set is the answer set
    layout_decides: bool | None = None  # the asked objects' region facts alone give the answer set
    form: str | None = None  # what a question asks (pipeline.text.items.FORMS); None: an older build

    @property
    def names(self) -> dict[str, str] | None:
        """option -> code, for a row whose options name codes of their own; None: the directions' words."""
        return dict(zip(self.options, self.option_codes)) if self.option_codes else None

    @classmethod
    def of(cls, values: Mapping) -> ScoreRow:
        """The scoring fields of a row dict or a harness sample's metadata (lists as tuples); a field
        it lacks (`modality` and `pair` outside vision configurations, the frames outside agent ones) is None."""
        fields = {f.name: values.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**{**fields, "answer_set": tuple(fields["answer_set"]), "options": tuple(fields["options"]),
                      "facts": None if fields["facts"] is None else _facts(fields["facts"]),
                      "plan": None if fields["plan"] is None else _plan(fields["plan"]),
                      "bounded": _bounded(fields["bounded"], fields["level"])})


def _bounded(bounded: Mapping | Bounded | None, level: int | None) -> tuple[tuple[str, ...], ...] | None:
    """A row's bounded answers (a dict as read, or a Bounded) as R0's, R1's and R2's sets; None off the ladder."""
    if bounded is None or level is None:
        return None
    return tuple(tuple(map(sys.intern, bounded[name] if isinstance(bounded, Mapping) else getattr(bounded, name)))
                 for name in BOUNDED)


def _facts(facts: Sequence) -> tuple[Fact, ...]:
    """A row's facts (dicts as read, or Facts) as Facts."""
    return tuple(fact if isinstance(fact, Fact) else Fact(fact["subject"], fact["relation"], fact["object"])
                 for fact in facts)


def _plan(steps: Sequence) -> tuple[GoldStep, ...]:
    """A row's gold plan (dicts as read, or PlanSteps) as (action, object, source, needs) tuples."""
    return tuple((s["action"], s["object"], s["source"], tuple(s["needs"])) if isinstance(s, Mapping)
                 else (s.action, s.object, s.source, tuple(s.needs)) for s in steps)


def asks_plans(rows: BenchmarkRows, config: str) -> bool:
    """Whether a configuration's questions are plans (its first shard's question types say it)."""
    first = next(rows.batches(config, ["question_type"]), None)
    return first is not None and PLAN_QUESTION in first.column("question_type").to_pylist()


def judged_columns(rows: BenchmarkRows, config: str) -> tuple[str, ...]:
    """What judging a configuration's answers reads besides SCORE_COLUMNS: a map's facts, a plan's gold steps."""
    return (MAP_COLUMNS if asks_maps(rows, config) else ()) + (PLAN_COLUMNS if asks_plans(rows, config) else ())


def asks_maps(rows: BenchmarkRows, config: str) -> bool:
    """Whether a configuration's questions are maps (its first shard's question types say it)."""
    first = next(rows.batches(config, ["question_type"]), None)
    return first is not None and MAP_QUESTION in first.column("question_type").to_pylist()


def read_score_rows(rows: BenchmarkRows, configs: Sequence[str], progress: bool = False) -> list[ScoreRow]:
    from tqdm import tqdm

    shards = sum(len(rows.files[config]) for config in configs)
    out: list[ScoreRow] = []
    with tqdm(total=shards, unit="shard", desc="reading rows", disable=not progress, file=sys.stderr) as bar:
        for config in configs:
            read = SCORE_COLUMNS + judged_columns(rows, config)
            for table in rows.batches(config, read):
                columns = {name: table.column(name).to_pylist() for name in table.column_names}
                absent = [None] * table.num_rows
                modality, pair = columns.get("modality", absent), columns.get("pair", absent)
                story_view = columns.get("story_view", absent)
                changes, angle = columns.get("frame_changes", absent), columns.get("frame_angle", absent)
                naming, codes = columns.get("naming", absent), columns.get("option_codes", absent)
                arguments, shape_kind = columns.get("arguments", absent), columns.get("shape_kind", absent)
                facts = [_facts(told) for told in columns["facts"]] if "facts" in columns else absent
                plans = [_plan(steps) for steps in columns["plan"]] if "plan" in columns else absent
                level = columns.get("level", absent)
                room_type, tightness = columns.get("room_type", absent), columns.get("tightness", absent)
                path_decides, layout_decides = columns.get("path_decides", absent), columns.get("layout_decides", absent)
                form = columns.get("form", absent)
                bounded = ([_bounded(*held) for held in zip(columns["bounded"], level)] if "bounded" in columns
                           else absent)
                for k in range(table.num_rows):
                    out.append(ScoreRow(
                        columns["id"][k], sys.intern(columns["room_id"][k]), sys.intern(columns["config"][k]),
                        sys.intern(columns["setting"][k]), sys.intern(columns["view"][k]),
                        sys.intern(columns["question_type"][k]), sys.intern(columns["answer"][k]),
                        tuple(map(sys.intern, columns["answer_set"][k])), columns["candidate"][k],
                        tuple(map(sys.intern, columns["options"][k])), columns["n"][k], columns["m"][k],
                        columns["d"][k], columns["hops"][k], columns["answer_set_size"][k],
                        modality[k] and sys.intern(modality[k]), pair[k], story_view[k] and sys.intern(story_view[k]),
                        changes[k], angle[k], facts[k], naming=naming[k] and sys.intern(naming[k]),
                        option_codes=codes[k] and tuple(map(sys.intern, codes[k])),
                        arguments=arguments[k] and tuple(arguments[k]), shape_kind=shape_kind[k], plan=plans[k],
                        level=level[k], bounded=bounded[k], room_type=room_type[k] and sys.intern(room_type[k]),
                        tightness=tightness[k], path_decides=path_decides[k], layout_decides=layout_decides[k],
                        form=form[k] and sys.intern(form[k])))
                bar.update()
    return out


@dataclass
class Outcomes:
    """One system's outcome per item (rows) and round (columns)."""

    status: np.ndarray  # int8: SCORED, UNPARSEABLE, NO_ANSWER, TRUNCATED
    correct: np.ndarray  # bool
    jaccard: np.ndarray  # float32, FR; MAP: the share of the story's facts that hold on the map; PLAN: step F1
    f1: np.ndarray  # float32, FR, per item; PLAN: precondition F1
    named: np.ndarray  # int32: bits of the FR relations named (BIT), 0 unless scored
    yes: np.ndarray  # int8: YN answer 1 / 0, -1 unless scored
    tokens: np.ndarray  # int32: the answer's completion tokens, -1 where not counted
    examples: list[dict] = field(default_factory=list)  # the first unparseable answers
    text: np.ndarray | None = None  # object: each answer's text (None: no answer), kept only when asked (score --json)

    ROUNDED = ("status", "correct", "jaccard", "f1", "named", "yes", "tokens")  # the arrays, items x rounds

    @classmethod
    def empty(cls, items: int, rounds: int = 1, texts: bool = False) -> Outcomes:
        shape = (items, rounds)
        return cls(np.full(shape, NO_ANSWER, np.int8), np.zeros(shape, bool), np.zeros(shape, np.float32),
                   np.zeros(shape, np.float32), np.zeros(shape, np.int32), np.full(shape, -1, np.int8),
                   np.full(shape, -1, np.int32), text=np.full(shape, None, object) if texts else None)

    @property
    def rounds(self) -> int:
        return self.status.shape[1]

    def grow(self, rounds: int) -> None:
        """Room for more rounds; items have no answer there until one is recorded."""
        extra = Outcomes.empty(self.status.shape[0], rounds - self.rounds, self.text is not None)
        for name in self.ROUNDED + (("text",) if self.text is not None else ()):
            setattr(self, name, np.concatenate([getattr(self, name), getattr(extra, name)], axis=1))

    def subset(self, items: np.ndarray, ids: set[str]) -> Outcomes:
        """The outcomes of the items at positions `items` (whose ids are `ids`), in that order."""
        return Outcomes(*(getattr(self, name)[items] for name in self.ROUNDED),
                        [example for example in self.examples if example["id"] in ids],
                        None if self.text is None else self.text[items])

    def record(self, k: int, round_: int, row: ScoreRow, text: str | None, truncated: bool = False,
               tokens: int | None = None) -> None:
        if text is None:
            return
        if self.text is not None:
            self.text[k, round_] = text
        if tokens is not None:
            self.tokens[k, round_] = tokens
        if truncated:
            self.status[k, round_] = TRUNCATED
            return
        if row.question_type == PLAN_QUESTION:
            self._record_plan(k, round_, row, text)
            return
        parsed = parse_map(text, len(row.options), row.d) if row.question_type == MAP_QUESTION else \
            parse_answer(text, row.question_type, row.names, row.arguments)
        if not parsed.parsed:
            self._unparseable(k, round_, row, text, parsed.problem)
            return
        self.status[k, round_] = SCORED
        if row.question_type == MAP_QUESTION:
            held = facts_held(row.facts, dict(zip(row.options, parsed.cells)), row.d)
            self.correct[k, round_] = all(held)
            self.jaccard[k, round_] = sum(held) / len(held) if held else 1.0
            return
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

    def _unparseable(self, k: int, round_: int, row: ScoreRow, text: str, problem: str) -> None:
        """An answer that does not parse: counted, and kept as an example while there are few."""
        self.status[k, round_] = UNPARSEABLE
        if len(self.examples) < EXAMPLES:
            self.examples.append({"id": row.id, "prediction": text, "problem": problem})

    def _record_plan(self, k: int, round_: int, row: ScoreRow, text: str) -> None:
        """A plan read against the row's names and scored against its gold steps (pipeline.evaluate.plans):
        correct is the exact plan, jaccard the step content F1, f1 the precondition F1."""
        read = read_plan(text, row.options)
        if not read.parsed:
            self._unparseable(k, round_, row, text, read.problem)
            return
        self.status[k, round_] = SCORED
        scored = score_plan(read, row.plan)
        self.correct[k, round_] = scored.exact
        self.jaccard[k, round_] = scored.content
        self.f1[k, round_] = scored.preconditions


STATUSES = ("scored", "unparseable", "no answer", "truncated")  # by status code (SCORED, ...)
CODES = {bit: code for code, bit in BIT.items()}


def question_results(rows: Sequence[ScoreRow], systems: Mapping[str, Outcomes]) -> list[dict]:
    """A record per question, system and round, to join with anything: the question (id, configuration,
    room, question type, setting, view), the answer's text (None: no answer; kept where `texts` was asked),
    the parsed answer (YN "Yes" or "No", FR the codes named; None for maps and plans and where it did not
    parse), its status, whether it is right, its Jaccard (a map's facts held, a plan's F_c) and F1 (a plan's F_p)."""
    records = []
    for k, row in enumerate(rows):
        for name, outcomes in systems.items():
            for round_ in range(outcomes.rounds):
                status = int(outcomes.status[k, round_])
                parsed = None
                if status == SCORED and row.question_type == "YN":
                    parsed = "Yes" if outcomes.yes[k, round_] == 1 else "No"
                elif status == SCORED and row.question_type not in (MAP_QUESTION, PLAN_QUESTION):
                    parsed = [CODES[bit] for bit in CODES if int(outcomes.named[k, round_]) & bit]
                graded = status == SCORED and row.question_type != "YN"
                records.append({
                    "id": row.id, "config": row.config, "room_id": row.room_id, "question_type": row.question_type,
                    "setting": row.setting, "view": row.view, "system": name, "sample": round_,
                    "answer": None if outcomes.text is None else outcomes.text[k, round_], "parsed": parsed,
                    "status": STATUSES[status], "correct": bool(outcomes.correct[k, round_]),
                    "jaccard": float(outcomes.jaccard[k, round_]) if graded else None,
                    "f1": float(outcomes.f1[k, round_]) if graded and row.question_type != MAP_QUESTION else None})
    return records


def score_item(row: ScoreRow, text: str | None, truncated: bool = False) -> Outcomes:
    """One item's outcome, for tests and examples."""
    outcome = Outcomes.empty(1)
    outcome.record(0, 0, row, text, truncated)
    return outcome


@dataclass
class PredictionsRead:
    """What a predictions file gave, beside its outcomes: enough to say when it does not fit the build."""

    path: Path
    header: RunHeader | None
    outcomes: Outcomes
    listed: np.ndarray  # bool per item: the file has a line for it
    lines: int = 0  # answer lines
    elsewhere: int = 0  # answer lines to configurations not being scored
    ids: int = 0  # questions answered at least once (null answers too: a line each)
    cut: bool = False  # its last line was cut short (a run killed mid-write) and skipped


def read_predictions(path: Path, index: dict[str, int], rows: list[ScoreRow], known: set[str]) -> Outcomes:
    """A predictions file scored against `rows` (index: id -> position); see `read_predictions_file`."""
    return read_predictions_file(path, index, rows, known).outcomes


def read_predictions_file(path: Path, index: dict[str, int], rows: list[ScoreRow], known: set[str],
                          split: str | None = None, texts: bool = False) -> PredictionsRead:
    """A predictions file scored against `rows` (index: id -> position). Lines are JSON objects
    {"id", "prediction"[, "sample", "truncated", "tokens"]}, "\\n"-separated, after an optional header
    line (pipeline.evaluate.predictions); a null prediction is a failed request (no answer). Ids of
    other configurations of the benchmark (`known`) are skipped; an id it does not have, a repeated
    (id, sample) or a malformed line is an error naming the line, but for a last line cut short; an
    id it does not have names `split` (the split scored) and --split, with the header's split where it differs."""
    try:
        return _read_predictions(path, index, rows, known, split, texts)
    except FileNotFoundError:
        raise RoomspaceError(f"predictions file {path} does not exist") from None
    except UnicodeDecodeError:
        raise RoomspaceError(f"predictions file {path} is not UTF-8 text") from None


def _read_predictions(path: Path, index: dict[str, int], rows: list[ScoreRow], known: set[str],
                      split: str | None = None, texts: bool = False) -> PredictionsRead:
    read = PredictionsRead(path, read_header(path), Outcomes.empty(len(rows), texts=texts), np.zeros(len(rows), bool))
    seen: set[tuple[str, int]] = set()
    # Read line by line (a file of long answers need not fit in memory twice); newline="\n" splits on
    # "\n" alone, where str.splitlines would also split inside an answer holding U+2028.
    # utf-8-sig: a byte order mark, as Windows tools write one, is not part of the first line.
    with open(path, encoding="utf-8-sig", newline="\n") as lines:
        for number, line in enumerate(lines, 1):
            if number == 1 and read.header is not None:
                continue
            if not line.endswith("\n") and not _whole(line):
                read.cut = True  # the last line of an interrupted run, cut mid-write
                break
            _record_line(read, seen, f"{path}:{number}", line, index, rows, known, split)
    read.ids = len({item for item, _ in seen})
    return read


def _whole(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _other_split(header: RunHeader | None, split: str | None) -> str:
    """What to add to "not an item of this benchmark" where the file may answer another split (--split)."""
    if split is None:
        return ""
    if header is not None and header.split != split:
        return (f"'s {split} split: the file's header says it answers the {header.split} split; "
                f"score it with --split {header.split}")
    return f"'s {split} split (if the file answers another split, name it with --split)"


def _record_line(read: PredictionsRead, seen: set, where: str, line: str, index: dict[str, int],
                 rows: list[ScoreRow], known: set[str], split: str | None = None) -> None:
    """One predictions line into `read`; `seen` holds the (id, sample) pairs read so far."""
    if not line.strip():
        return
    try:
        record = json.loads(line)
    except ValueError:
        raise RoomspaceError(f"{where}: not a JSON object") from None
    if header_of(record) is not None:
        raise RoomspaceError(f"{where}: a predictions header after the first line (two files joined?); "
                             "score each file on its own (--predictions once each)")
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or "prediction" not in record:
        raise RoomspaceError(f'{where}: expected {{"id": "...", "prediction": "..."}}')
    item_id, answer, sample = record["id"], record["prediction"], record.get("sample", 0)
    tokens = record.get("tokens")
    if answer is not None and not isinstance(answer, str):
        raise RoomspaceError(f"{where}: prediction for {item_id} is not text")
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise RoomspaceError(f"{where}: sample must be a whole number >= 0, got {sample!r}")
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        raise RoomspaceError(f"{where}: tokens must be a whole number >= 0, got {tokens!r}")
    if item_id not in known:
        raise RoomspaceError(f"{where}: id {item_id} is not an item of this benchmark{_other_split(read.header, split)}")
    if (item_id, sample) in seen:
        raise RoomspaceError(f"{where}: a second prediction for {item_id}" + (f", sample {sample}" if sample else ""))
    seen.add((item_id, sample))
    read.lines += 1
    k = index.get(item_id)
    if k is None:
        read.elsewhere += 1
        return  # an item of a configuration not being scored
    outcomes = read.outcomes
    if sample >= outcomes.rounds:
        outcomes.grow(sample + 1)
    read.listed[k] = True
    outcomes.record(k, sample, rows[k], answer, bool(record.get("truncated", False)), tokens)


def baseline_outcomes(name: str, rows: list[ScoreRow], seed: int, texts: bool = False) -> Outcomes:
    """A baseline's answers, made per configuration (majority counts its own configuration's rows)."""
    outcomes = Outcomes.empty(len(rows), texts=texts)
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
    map_items: int = 0  # map questions (pipeline.text.maps)
    map_consistent: Rate | None = None  # maps on which every stated fact holds
    map_facts: float | None = None  # the mean share of stated facts that hold on a map (partial credit)
    plan_items: int = 0  # plan questions (pipeline.text.object_tasks)
    plan_exact: Rate | None = None  # plans with the gold plan's steps, ordered alike
    plan_content: float | None = None  # mean step content F1 (F_c)
    plan_preconditions: float | None = None  # mean precondition F1 (F_p)
    plan_unparseable: float = 0.0  # plans not read (per round)
    tokens: Lengths | None = None  # the answers' completion tokens, where the endpoint counted them


@dataclass(frozen=True)
class Lengths:
    """How long the answers were: completion tokens per answer (a reasoning model's thinking included)."""

    answers: int  # answers with a count (every round's)
    mean: float
    median: float
    p90: float
    p99: float
    max: int

    @classmethod
    def of(cls, tokens: np.ndarray) -> Lengths | None:
        counted = tokens[tokens >= 0]
        if not counted.size:
            return None
        p50, p90, p99 = np.percentile(counted, [50, 90, 99])
        return cls(int(counted.size), float(counted.mean()), float(p50), float(p90), float(p99), int(counted.max()))


@dataclass(frozen=True)
class Reference:
    """What no reading of the story is needed for, on the same items."""

    yn_chance: float | None  # a fair coin
    yn_best_constant: float | None  # the more frequent answer of these items
    fr_chance: float | None  # one of the nine options at random
    fr_best_constant: float | None  # the best constant answer: the answer set most often the whole answer here
    yn_blind: float | None = None  # the better of the audit's blind baselines (pipeline.evaluate.audit)
    fr_blind: float | None = None


class Scorer:
    """The items being scored and the arrays every group's metrics are computed from."""

    def __init__(self, rows: list[ScoreRow], blind: Mapping[str, tuple[bool, bool]] | None = None) -> None:
        """`blind`: id -> whether the audit's (majority, learned) blind baselines answer the row right."""
        self.rows = rows
        # the blind prior answers YN and FR questions (the audit's blind map is its own table): a map counts as wrong
        self.blind = None if blind is None else \
            np.array([blind.get(row.id, (False, False)) for row in rows], bool).reshape(-1, 2)
        self.yn = np.array([row.question_type == "YN" for row in rows], bool)
        self.map = np.array([row.question_type == MAP_QUESTION for row in rows], bool)
        self.plan = np.array([row.question_type == PLAN_QUESTION for row in rows], bool)
        self.truth = np.array([sum(BIT.get(code, 0) for code in row.answer_set) for row in rows], np.int32)
        self.yes_right = np.array([row.candidate in row.answer_set for row in rows], bool)

    def metrics(self, outcomes: Outcomes, items: np.ndarray) -> Metrics:
        yn, fr = items[self.yn[items]], items[~self.yn[items] & ~self.map[items] & ~self.plan[items]]
        maps, plans = items[self.map[items]], items[self.plan[items]]
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
            map_items=int(maps.size), map_consistent=_rate(outcomes.correct[maps]),
            map_facts=float(outcomes.jaccard[maps].mean()) if maps.size else None,
            plan_items=int(plans.size), plan_exact=_rate(outcomes.correct[plans]),
            plan_content=float(outcomes.jaccard[plans].mean()) if plans.size else None,
            plan_preconditions=float(outcomes.f1[plans].mean()) if plans.size else None,
            plan_unparseable=float((outcomes.status[plans] == UNPARSEABLE).sum()) / rounds,
            yn_vote=vote_yn, fr_vote=vote_fr, tokens=Lengths.of(outcomes.tokens[items]),
        )

    @staticmethod
    def _macro_f1(named: np.ndarray, truth: np.ndarray) -> float:
        """Mean over rounds of the macro F1 over the labels of the calculi the answer sets draw from (the
        nine directions for the paper's rows; a label never named nor true scores 0)."""
        drawn = int(np.bitwise_or.reduce(truth))
        labels = [BIT[code] for codes in CALCULI if any(drawn & BIT[code] for code in codes) for code in codes]
        scores = []
        for round_ in range(named.shape[1]):
            per_label = []
            for bit in labels:
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
        yn, fr = items[self.yn[items]], items[~self.yn[items] & ~self.map[items] & ~self.plan[items]]
        yes_share = float(self.yes_right[yn].mean()) if yn.size else None
        one = fr[_bit_count(self.truth[fr]) == 1]  # only a one-relation answer set can be hit by one guess

        def blind(items: np.ndarray) -> float | None:
            return float(self.blind[items].mean(axis=0).max()) if self.blind is not None and items.size else None

        return Reference(
            yn_chance=0.5 if yn.size else None,
            yn_best_constant=max(yes_share, 1 - yes_share) if yn.size else None,
            fr_chance=sum(1 / len(self.rows[k].options) for k in one) / fr.size if fr.size else None,
            # every constant answer counts, "all nine" too: a constant is right where it is the whole answer set
            fr_best_constant=max(Counter(self.truth[fr].tolist()).values(), default=0) / fr.size if fr.size else None,
            yn_blind=blind(yn), fr_blind=blind(fr),
        )


def _rate(correct: np.ndarray) -> Rate | None:
    """correct: items x rounds."""
    return rate(correct.mean(axis=1), correct.mean(axis=0)) if correct.size else None


def _bit_count(masks: np.ndarray) -> np.ndarray:
    return np.bitwise_count(masks)


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


def tightness_bin(tightness: float | None) -> str | None:
    """A tightness's bin, "0.7-0.8" (TIGHTNESS_BIN wide); "0 (no facts)" for a story without facts."""
    if tightness is None:
        return None
    if tightness == 0:
        return "0 (no facts)"
    low = min(int(tightness / TIGHTNESS_BIN), round(1 / TIGHTNESS_BIN) - 1) * TIGHTNESS_BIN
    return f"{low:.1f}-{low + TIGHTNESS_BIN:.1f}"


def breakdown_value(row: ScoreRow, key: str):
    """A row's value of a breakdown: its field, tightness in bins."""
    return tightness_bin(row.tightness) if key == "tightness" else getattr(row, key)


def breakdown(rows: list[ScoreRow], items: np.ndarray, key: str) -> dict:
    """value -> positions, values in their natural order (settings and views as the dataset lists them,
    numbers and tightness bins ascending)."""
    found: dict = {}
    for k in items:
        found.setdefault(breakdown_value(rows[k], key), []).append(k)
    ordered = sorted(found, key=lambda v: (0, v, "") if isinstance(v, int) else
                     (1, 0, v) if key == "tightness" and v is not None else (2, list(found).index(v), ""))
    return {value: np.array(found[value], int) for value in ordered}


def name_systems(paths: Sequence[Path], names: Sequence[str] = ()) -> dict[str, Path]:
    """Each predictions file under its system's name: `names` (score's --name) in the files' order, else
    the model each file records (its header's, or its answers' "model"), else the file's stem; files
    recording the same model are told apart by their stems, "MODEL (stem)"."""
    if names and len(names) != len(paths):
        raise RoomspaceError(f"{len(names)} --name for {len(paths)} --predictions files: give one --name per "
                             "--predictions, in the same order")
    if not names:
        models = [first_model(path) or path.stem for path in paths]
        names = [f"{model} ({path.stem})" if models.count(model) > 1 and model != path.stem else model
                 for model, path in zip(models, paths)]
    named: dict[str, Path] = {}
    for path, name in zip(paths, names):
        if name in named:
            how = "give each its own --name" if names else "name their systems with --name NAME, once per --predictions"
            raise RoomspaceError(f"two predictions files are named {name} ({named[name]} and {path}); {how}")
        named[name] = path
    return named


@dataclass
class Loaded:
    """The systems scored, on the items scored (the sample's, where there is one), and what did not fit."""

    rows: list[ScoreRow]
    systems: dict[str, Outcomes]
    runs: dict[str, RunHeader | None]  # predictions system -> what produced it (its header)
    sample: Sample | None  # the sample scored, when one was asked for or recorded
    warnings: list[str]
    answered_only: bool = False  # scored on the items files without a header answer (none names a sample)


def load_systems(rows: BenchmarkRows, score_rows: list[ScoreRow], prediction_files: Iterable[Path] | Mapping[str, Path],
                 baselines: Iterable[str], seed: int, sample: Sample | None = None, texts: bool = False) -> Loaded:
    """Each predictions file and baseline, scored item by item, on the items of `sample` where one is
    given, else on those the files answer where each of them records a sample (module docstring). A
    file's system is named by its key where `prediction_files` maps names to files (see name_systems).
    `texts`: keep each answer's text (Outcomes.text), for the per-question results."""
    baselines = list(baselines)
    if not isinstance(prediction_files, Mapping):
        prediction_files = name_systems(list(prediction_files))
    if not prediction_files and not baselines:
        raise RoomspaceError("nothing to score: give --predictions FILE or --baseline NAME")
    for name in baselines:
        if name not in BASELINES:
            raise RoomspaceError(f"unknown baseline {name!r}; expected one of {', '.join(BASELINES)}")
        if name in prediction_files:
            raise RoomspaceError(f"{name} is both a predictions file and a baseline; name the file's system "
                                 "with --name")
    index = {row.id: k for k, row in enumerate(score_rows)}
    # Every id of the benchmark: those being scored are in hand, only the other configurations' are read.
    configs = tuple(dict.fromkeys(row.config for row in score_rows))
    known = set(index) | rows.ids([c for c in rows.configs if c not in configs]) if prediction_files else set()
    read = {name: read_predictions_file(path, index, score_rows, known, rows.split, texts)
            for name, path in prediction_files.items()}
    warnings = [warning for file in read.values() for warning in _mismatches(rows, configs, file)]
    headed = {name: file for name, file in read.items() if file.header is not None}
    kept, sample, said = _scored_items(rows, configs, score_rows, headed, sample)
    warnings += said
    kept, answered_only, said = _answered_items(score_rows, [file for file in read.values() if file.header is None],
                                                kept, sample)
    warnings += said
    ids = {score_rows[k].id for k in kept}
    chosen = [score_rows[k] for k in kept]
    systems = {name: file.outcomes.subset(kept, ids) for name, file in read.items()}
    for name in baselines:
        systems[name] = baseline_outcomes(name, chosen, seed, texts)
    return Loaded(chosen, systems, {name: file.header for name, file in read.items()}, sample, warnings, answered_only)


def _answered_items(score_rows: list[ScoreRow], bare: Sequence[PredictionsRead], kept: np.ndarray,
                    sample: Sample | None) -> tuple[np.ndarray, bool, list]:
    """(positions to score, whether they are only those answered, warnings) for the files without a
    header (inspect exports, hand-made files), which name no questions: where no sample is named
    (--limit, a header's), only the items each of them answers are scored, never every item with the
    rest as no answer; where one is, its items they leave out count as no answer, said on stderr."""
    answering = [file for file in bare if file.listed.any()]  # an empty file, or one of others: _mismatches says it
    if sample is not None:
        wanted = kept.size
        return kept, False, [f"{file.path} answers {int(file.listed[kept].sum())} of the {wanted} questions of the "
                             f"sample {sample.describe()} (it has no header): the other "
                             f"{wanted - int(file.listed[kept].sum())} count as no answer"
                             for file in bare if file.lines > file.elsewhere and file.listed[kept].sum() < wanted]
    scored = np.zeros(len(score_rows), bool)
    scored[kept] = True
    answered = np.logical_and.reduce([scored, *(file.listed for file in answering)])
    if answered.sum() == kept.size:
        return kept, False, []
    if not answered.any():
        raise RoomspaceError(f"{' and '.join(str(file.path) for file in answering)} answer no question in common "
                             "with the other predictions files: score them one at a time")
    said = [_coverage(score_rows, file, kept, int(answered.sum()), len(answering)) for file in answering
            if file.listed[kept].sum() < kept.size]
    return np.flatnonzero(answered), True, said


def _coverage(score_rows: list[ScoreRow], file: PredictionsRead, kept: np.ndarray, scored: int, files: int) -> str:
    """One line: a file without a header, what it answers of each configuration, what it is scored on."""
    asked = Counter(score_rows[k].config for k in kept)
    answered = Counter(score_rows[k].config for k in kept if file.listed[k])
    parts = [f"{config} {answered[config]} of {total}" for config, total in asked.items() if answered[config]]
    untouched = sum(not answered[config] for config in asked)
    if untouched:
        parts.append(f"none of {untouched} other configuration{'s' if untouched > 1 else ''}")
    which = "it answers" if files == 1 else "every file without a header answers"
    return (f"{file.path} has no header naming the questions it was asked (run-model writes one) and answers "
            f"{sum(answered.values())} of the {kept.size} questions scored ({', '.join(parts)}): scored on the "
            f"{scored} questions {which}, the others left out, not counted as no answer; to score a sample and count "
            "its questions left unanswered as wrong, name it with --limit N --seed S (and --config)")


def _scored_items(rows: BenchmarkRows, configs: tuple[str, ...], score_rows: list[ScoreRow],
                  read: Mapping[str, PredictionsRead], sample: Sample | None) -> tuple[np.ndarray, Sample | None, list]:
    """(positions of the items to score, the sample they are, warnings) as the files with a header
    (`read`) name them: `sample`'s items where one is asked for; where every one of them records a
    sample, the items they answer; else every item."""
    everything = np.arange(len(score_rows))
    recorded = {name: file.header.sample for name, file in read.items()
                if file.header is not None and file.header.sample is not None}
    if sample is not None:
        wanted = set(sample_ids(rows, configs, sample))
        said = [f"{read[name].path} records the sample {other.describe()}, not the {sample.describe()} scored here"
                for name, other in recorded.items() if other != sample]
        return np.array([k for k, row in enumerate(score_rows) if row.id in wanted], int), sample, said
    if not recorded:
        return everything, None, []
    if len(recorded) < len(read):
        whole = ", ".join(str(file.path) for name, file in read.items() if name not in recorded)
        said = [f"{read[name].path} holds only the sample {drawn.describe()}, and {whole} more: its other items are "
                f"scored as no answer; score it on its own, or all of them with --limit {drawn.limit} --seed "
                f"{drawn.seed}" for name, drawn in recorded.items()]
        return everything, None, said
    drawn = set(recorded.values())
    if len(drawn) > 1:
        said = [f"the predictions files record different samples ({', '.join(sorted(d.describe() for d in drawn))}): "
                "scored on every item any of them answers, the others' as no answer"]
    else:
        said = []
    listed = np.logical_or.reduce([file.listed for file in read.values()])
    if not listed.any():  # nothing answered yet: the sample's items, every one without an answer
        (file, *_) = read.values()
        header = file.header
        if len(drawn) == 1 and set(header.configs) <= set(rows.configs):
            wanted = set(sample_ids(rows, header.configs, header.sample))
            listed = np.array([row.id in wanted for row in score_rows], bool)
    return everything[listed], drawn.pop() if len(drawn) == 1 else None, said


def _mismatches(rows: BenchmarkRows, configs: tuple[str, ...], file: PredictionsRead) -> list[str]:
    """One-line warnings where a predictions file and the build it is scored on do not fit."""
    said, header, path = [], file.header, file.path
    if file.cut:
        said.append(f"{path}: its last line was cut short (a run stopped mid-write) and is skipped")
    if file.lines == 0:
        said.append(f"{path} holds no predictions (an empty file, or a run that had answered nothing yet): "
                    "every item counts as no answer")
    elif file.lines == file.elsewhere:
        said.append(f"none of the {file.lines} predictions in {path} is to {', '.join(configs)}: every item counts "
                    "as no answer; choose the configurations it answers with --config")
    if header is None:
        return said
    if header.manifest_sha256 != rows.manifest_sha256 and None not in (header.manifest_sha256, rows.manifest_sha256):
        said.append(f"{path} answers the build whose manifest.json has sha256 {header.manifest_sha256[:12]}…, "
                    f"not {rows.location} ({rows.manifest_sha256[:12]}…): the same ids may be other questions")
    if header.split != rows.split:
        said.append(f"{path} answers the {header.split} split, not the {rows.split} split scored here (--split)")
    if not set(header.configs) <= set(rows.configs):
        return said  # asked of configurations this build lacks: its ids are refused, or are of others
    asked = (len(sample_ids(rows, header.configs, header.sample)) if header.sample is not None
             else rows.count(header.configs))
    if 0 < file.ids < asked:
        rest = "scored on those" if header.sample is not None else "the rest count as no answer"
        said.append(f"{path} answers {file.ids} of the {asked} questions it asked (an unfinished run: re-run the "
                    f"same run-model command to complete it); {rest}")
    return said
