"""Baseline answers, written as text in the row's own words so that they pass through the same
parser and scorer as a model's.

- random: YN a fair coin, FR one of the nine options; seeded per item, so independent of order.
- always-yes: YN Yes; FR every option (Yes to every relation).
- majority: YN the more frequent answer, FR the one relation most often consistent, both counted
  over the rows of the configuration being scored (not `score`'s "best constant" reference, the
  answer set most often the whole answer, chosen in hindsight: it may name several relations) (FR per calculus: rows whose options name codes
  of their own, `option_codes`, answer with the one of their codes most often consistent).
- checker: the rows' own answers (the answer set); scores 100% by construction.
- r0, r1, r2: the difficulty ladder's bounded reasoners (pipeline.spatial.ladder: the asked objects'
  own facts, then a chain of direction facts, then every fact propagated without search): FR the
  directions the reasoner leaves open, YN Yes unless it rules the candidate out. A row off the
  ladder (no story facts: rcc8, image-only, the kinds with questions of their own) has no answer.

A map question (pipeline.text.maps) gets a map: random puts every object in a cell drawn uniformly;
regions puts every object in a cell drawn uniformly among those its stated region (and, where the
story states it, its wall contact) allows, ignoring every fact relating two objects; checker gives
the row's witness map. always-yes and majority have no map (no answer), and regions answers maps only.

A plan question (pipeline.text.object_tasks) gets a plan (pipeline.evaluate.plans.baseline_plan):
direct takes the object at once (one step), random lists the gold steps in a random order, each
needing the one before it, checker gives the gold plan; the others have none, and direct answers
plans only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random

from pipeline.errors import RoomspaceError
from pipeline.evaluate.plans import baseline_plan
from pipeline.seeding import derive_seed
from pipeline.spatial.ladder import BOUNDED
from pipeline.spatial.relations import DIRECTIONS, holds, relation_words
from pipeline.text.prompts import MAP_QUESTION, PLAN_QUESTION
from pipeline.text.targets import map_lines

REASONERS = {f"r{k}": k for k in range(len(BOUNDED))}  # r0, r1, r2: the bounded reasoner R_k
BASELINES = ("random", "always-yes", "majority", "checker", "regions", "direct", *REASONERS)
ONE_TYPE = {"regions": MAP_QUESTION, "direct": PLAN_QUESTION}  # baselines of one question type: no answer to others


def baseline_predictions(name: str, rows: Sequence, seed: int = 0) -> dict[str, str | None]:
    """id -> answer text for every row (rows with id, question_type, view, options, answer, answer_set;
    map rows also d and facts); None where the baseline has no answer."""
    if name not in BASELINES:
        raise RoomspaceError(f"unknown baseline {name!r}; expected one of {', '.join(BASELINES)}")
    maps = [r for r in rows if r.question_type == MAP_QUESTION]
    drawn = {r.id: map_baseline(name, r, seed) for r in maps}
    planned = {r.id: baseline_plan(name, r, seed) for r in rows if r.question_type == PLAN_QUESTION}
    others = [r for r in rows if r.question_type not in (MAP_QUESTION, PLAN_QUESTION)]
    only = name in ONE_TYPE
    return {**drawn, **planned, **({r.id: None for r in others} if only else _answers(name, others, seed))}


def map_baseline(name: str, row, seed: int = 0) -> str | None:
    """A baseline's map for a map row (module docstring), as text the map parser reads."""
    if name == "checker":
        return row.answer
    if name not in ("random", "regions"):
        return None
    rng, d = Random(derive_seed(seed, "baseline", name, row.id)), row.d
    grid = [(i, j) for j in range(d) for i in range(d)]
    unary = {} if name == "random" else {obj: [f.relation for f in row.facts if f.subject == obj and f.object is None]
                                         for obj in row.options}
    cells = [rng.choice([c for c in grid if all(holds(code, d, c) for code in unary.get(obj, ()))])
             for obj in row.options]
    return "Answer:\n" + "\n".join(map_lines(cells, d))


def _answers(name: str, rows: Sequence, seed: int) -> dict[str, str | None]:
    """The baseline's answers to FR and YN rows."""
    if name == "random":
        return {r.id: Random(derive_seed(seed, "baseline", r.id)).choice(r.options) for r in rows}
    if name == "always-yes":
        return {r.id: "Yes" if r.question_type == "YN" else ", ".join(r.options) for r in rows}
    if name == "majority":
        yes_no = Counter(r.answer for r in rows if r.question_type == "YN")
        answer = max(("Yes", "No"), key=lambda word: yes_no[word])  # a tie goes to Yes
        consistent: dict[tuple[str, ...], Counter] = {}  # per calculus: its codes -> how often each is consistent
        for r in rows:
            if r.question_type == "FR":
                consistent.setdefault(_codes(r), Counter()).update(r.answer_set)
        relation = {codes: max(codes, key=lambda code: counts[code])  # a tie goes to the first code
                    for codes, counts in consistent.items()}
        return {r.id: answer if r.question_type == "YN" else _label(r, relation[_codes(r)]) for r in rows}
    if name in REASONERS:
        return {r.id: _bounded_answer(r, r.bounded[REASONERS[name]]) if r.bounded else None for r in rows}
    return {r.id: r.answer for r in rows}  # checker


def _bounded_answer(row, held: Sequence[str]) -> str:
    """A reasoner's answer: FR the directions it leaves open, YN Yes unless it rules the candidate out."""
    if row.question_type == "YN":
        return "Yes" if row.candidate in held else "No"
    return ", ".join(_label(row, code) for code in held)


def _codes(row) -> tuple[str, ...]:
    """The codes an FR row's options name: its own `option_codes`, else the nine directions."""
    return tuple(getattr(row, "option_codes", None) or DIRECTIONS)


def _label(row, code: str) -> str:
    """The option of an FR row that names `code`."""
    codes = getattr(row, "option_codes", None)
    return row.options[list(codes).index(code)] if codes else relation_words(code, row.view, "label")
