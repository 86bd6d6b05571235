"""The shortcut audit of a build, a Hub snapshot or OWNER/NAME: the prior-only baselines of
pipeline.dataset.audit fitted on its train split (or each half of its rooms) and scored on its rows,
the blind map on its map questions; `blind_correct` is `score`'s blind prior (YN and FR)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pipeline.dataset.audit import (AUDIT_COLUMNS, MAP_AUDIT_COLUMNS, Cell, MapCell, MapQuestion, Question, audit_cells,
                                    blind_answers, map_audit_cells, map_question_of, question_of)
from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.evaluate.rows import BenchmarkRows, open_rows
from pipeline.text.kinds import kind_of
from pipeline.text.prompts import MAP_QUESTION, PLAN_QUESTION


def read_questions(rows: BenchmarkRows, configs: Sequence[str]) -> dict[str, list[Question]]:
    """Per configuration, its questions as the audit reads them (no story, no image)."""
    found: dict[str, list[Question]] = {}
    for config in configs:
        # YN and FR questions: a map (pipeline.text.maps) has no answer to guess but a map to draw
        # (`read_map_questions`)
        found[config] = [question_of(row) for row in rows.rows([config], AUDIT_COLUMNS)
                         if row["question_type"] not in (MAP_QUESTION, PLAN_QUESTION)]  # plans: `score --baseline direct`
    return found


def read_map_questions(rows: BenchmarkRows, config: str) -> list[MapQuestion]:
    """A configuration's map questions as the audit reads them (none for a configuration without maps)."""
    return [map_question_of(row) for row in rows.rows([config], MAP_AUDIT_COLUMNS)
            if row["question_type"] == MAP_QUESTION] if MAP_QUESTION in kind_of(config).questions else []


def map_audit(rows: BenchmarkRows, configs: Sequence[str], fitting: BenchmarkRows | None = None,
              seed: int = 0) -> list[MapCell]:
    """The blind map's cells for the map configurations among `configs` (fitted as `audit` fits)."""
    cells = []
    for config in configs:
        questions = read_map_questions(rows, config)
        if questions:
            fitted = read_map_questions(fitting, config) if fitting is not None else None
            cells.extend(map_audit_cells(questions, fitted, seed))
    return cells


def audit(rows: BenchmarkRows, configs: Sequence[str], fitting: BenchmarkRows | None = None,
          seed: int = 0) -> list[Cell]:
    """The audit's cells for `configs` of `rows` (fitted on `fitting`'s rows, else on halves of these)."""
    cells = []
    for config in configs:
        questions = read_questions(rows, [config])[config]
        fitted = read_questions(fitting, [config])[config] if fitting is not None else None
        cells.extend(audit_cells(questions, blind_answers(questions, fitted, seed)))
    return cells


def fitting_rows(rows: BenchmarkRows) -> tuple[BenchmarkRows | None, str]:
    """The rows the blind baselines of `rows` are fitted on, and what they are called."""
    if rows.split != "train" and "train" in rows.splits:
        return open_rows(rows.location, "train"), "the train split"
    return None, "each half of the rooms, scored on the other half"


def audit_source(source: str, configs: str | None, split: str = DATASET_SPLIT,
                 seed: int = 0) -> tuple[list[Cell], list[MapCell], str, list[str]]:
    """The audit of `split` of a build, a Hub snapshot or OWNER/NAME: its YN and FR cells, its map
    cells, what they were fitted on, and a line for each chosen configuration no blind baseline answers."""
    rows = open_rows(source, split)
    fitting, fitted_on = fitting_rows(rows)
    chosen = rows.choose(configs)
    return audit(rows, chosen, fitting, seed), map_audit(rows, chosen, fitting, seed), fitted_on, unaudited(chosen)


def unaudited(configs: Sequence[str]) -> list[str]:
    """Why a configuration has no line in the audit's tables: its questions are plans, which have no blind
    baseline (`score --baseline direct` is theirs)."""
    said = []
    for config in configs:
        asked = set(kind_of(config).questions)
        if asked & {"YN", "FR"}:
            continue
        if PLAN_QUESTION in asked:
            said.append(f"{config} asks plans, which have no blind baseline (no answer to guess from the question "
                        "alone): `roomspace score --baseline direct` (the object taken at once) is theirs")
    return said  # a map configuration's blind map has its own table


def blind_correct(rows: BenchmarkRows, configs: Sequence[str], seed: int = 0,
                  keep: Collection[str] | None = None) -> dict[str, tuple[bool, bool]]:
    """id -> whether the (majority, learned) blind baseline answers it right: `score`'s blind prior; with `keep`,
    for those ids only (the baselines fitted as without it)."""
    fitting, _ = fitting_rows(rows)
    out = {}
    for config in configs:
        questions = read_questions(rows, [config])[config]
        fitted = read_questions(fitting, [config])[config] if fitting is not None else None
        answers = blind_answers(questions, fitted, seed, keep)
        out.update({q.id: (answers[q.id][0] == q.answer, answers[q.id][1] == q.answer) for q in questions
                    if q.id in answers})
    return out
