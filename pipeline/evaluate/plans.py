"""Plans read and scored without a judge (docs/semantics.md section 21): the object tasks' answers.

SpatialQA has GPT-4o match each predicted step with each gold step (same objects, same operation)
and scores the matches. Here a step's sentence is read against a closed vocabulary instead: its
action (the first action word it uses: open; remove, move, lift, take ... off; pick up, take, grab,
get, retrieve) and the view's names it mentions (the row's `options`, longest first, whole words):
the first is the object, a second one the source (what it is removed from or taken out of). A
predicted step matches a gold step when both open, or both move (remove and pick up both move
an object), the same object, and the source agrees where the prediction gives one; each gold step
matches at most one predicted step, the first in the answer's order.

* step content F1 (F_c): 2 x matched / (predicted steps + gold steps), every predicted step counted,
  read or not;
* precondition F1 (F_p): over precondition links "a before b". A predicted link is right when both
  its steps are matched and the gold plan orders their gold steps (directly or through others); a
  gold link (the gold plan's direct needs) is found when the predicted links order its two steps
  (directly or through others). Precision and recall over those; 1 when neither plan has a link
  (a one-step task answered with one step), 0 when only one has;
* exact plan: every gold step matched, no other step, and the two plans order the steps alike
  (their transitive closures are equal): the same DAG up to the order of independent steps.

An answer is unparseable when no JSON object of steps can be read inside its last <ans></ans> (or
after a last <ans> left open), or a step has no "content" text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import NamedTuple

from pipeline.seeding import derive_seed
from pipeline.spatial.plans import OPEN, PICK_UP, REMOVE, closure

ANSWER = re.compile(r"<ans>(.*?)(?:</ans>|$)", re.IGNORECASE | re.DOTALL)
FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
# Action words, each to the action it reads as; the first found in a step decides (a "take" followed by
# "off" or "away" removes).
VERBS = ((re.compile(r"\b(?:open|opens|opening|unlatch|pull open|pull out)\b", re.IGNORECASE), OPEN),
         (re.compile(r"\b(?:remove|removes|removing|move|moves|lift|lifts|clear|set aside|put aside|put down|"
                     r"place|unstack|take\b[^.]*?\b(?:off|away))\b", re.IGNORECASE), REMOVE),
         (re.compile(r"\b(?:pick|picks|picking|take|takes|taking|grab|grabs|get|gets|retrieve|retrieves|collect|"
                     r"fetch|hold)\b", re.IGNORECASE), PICK_UP))
STEP_KEY = re.compile(r"[^a-z0-9]")


@dataclass(frozen=True)
class ReadStep:
    """A predicted step as read: its action and the names it uses (None where none was found)."""

    action: str | None
    object: str | None
    source: str | None
    needs: tuple[int, ...]  # positions of the steps it names as preconditions


@dataclass(frozen=True)
class ReadPlan:
    steps: tuple[ReadStep, ...] = ()
    problem: str | None = None  # why the answer could not be read

    @property
    def parsed(self) -> bool:
        return self.problem is None


GoldStep = tuple[str, str, str | None, tuple[int, ...]]  # (action, object, source, needs), as the row's plan


def read_plan(text: str, names: Sequence[str]) -> ReadPlan:
    """The steps of an answer, read against the view's names (module docstring)."""
    found = ANSWER.findall(text)
    if not found:
        return ReadPlan(problem="no <ans></ans>")
    body = FENCE.sub("", found[-1].strip())
    data = _first_json(body)
    if isinstance(data, Mapping) and set(data) == {"answer"}:
        data = data["answer"]
    if isinstance(data, list):
        data = {f"step{k}": step for k, step in enumerate(data, 1)}
    if not isinstance(data, Mapping) or not data:
        return ReadPlan(problem="no JSON object of steps inside <ans></ans>")
    keys = {STEP_KEY.sub("", str(key).lower()): k for k, key in enumerate(data)}
    steps = []
    for k, step in enumerate(data.values()):
        if not isinstance(step, Mapping) or not isinstance(step.get("content"), str):
            return ReadPlan(problem=f"step {k + 1} has no 'content' text")
        needs = step.get("precondition", step.get("preconditions", []))
        needs = needs if isinstance(needs, list) else [needs]
        positions = []
        for need in needs:
            key = STEP_KEY.sub("", str(need).lower())
            key = f"step{key}" if key.isdigit() else key
            if key in keys and keys[key] != k:
                positions.append(keys[key])
        steps.append(_read_step(step["content"], names, tuple(sorted(set(positions)))))
    return ReadPlan(tuple(steps))


def _first_json(text: str):
    """The JSON value the text is, else the first object or list that decodes in it, else None."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text, start)[0]
            except ValueError:
                continue
    return None


def _read_step(content: str, names: Sequence[str], needs: tuple[int, ...]) -> ReadStep:
    first = [(match.start(), rank, action) for rank, (pattern, action) in enumerate(VERBS)
             for match in [pattern.search(content)] if match]
    action = min(first)[2] if first else None  # the first word; at one place, "take ... off" before "take"
    taken = [False] * len(content)
    mentioned = []
    for name in sorted(names, key=lambda n: (-len(n), n)):
        for match in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", content, re.IGNORECASE):
            if not any(taken[match.start():match.end()]):
                taken[match.start():match.end()] = [True] * (match.end() - match.start())
                mentioned.append((match.start(), name))
    mentioned = [name for _, name in sorted(mentioned)]
    distinct = list(dict.fromkeys(mentioned))
    return ReadStep(action, distinct[0] if distinct else None, distinct[1] if len(distinct) > 1 else None, needs)


def _kind(action: str | None) -> str | None:
    return None if action is None else OPEN if action == OPEN else "move"


def match(steps: Sequence[ReadStep], gold: Sequence[GoldStep]) -> dict[int, int]:
    """{predicted position: gold position} of the matched steps (module docstring)."""
    matched: dict[int, int] = {}
    used: set[int] = set()
    for k, step in enumerate(steps):
        if step.action is None or step.object is None:
            continue
        for g, (action, obj, source, _) in enumerate(gold):
            if g in used or _kind(step.action) != _kind(action) or step.object != obj:
                continue
            if action != OPEN and step.source is not None and step.source != source:
                continue
            matched[k] = g
            used.add(g)
            break
    return matched


class PlanScore(NamedTuple):
    content: float  # F_c
    preconditions: float  # F_p
    exact: bool


def score_plan(read: ReadPlan, gold: Sequence[GoldStep]) -> PlanScore:
    """F_c, F_p and exact plan of a read answer against the gold plan (module docstring)."""
    steps = read.steps
    matched = match(steps, gold)
    content = 2 * len(matched) / (len(steps) + len(gold)) if steps or gold else 1.0
    gold_needs = [step[3] for step in gold]
    gold_order = closure(gold_needs)
    gold_links = {(a, b) for b, needs in enumerate(gold_needs) for a in needs}
    links = [(a, b) for b, step in enumerate(steps) for a in step.needs]
    mapped = [(matched[a], matched[b]) for a, b in links if a in matched and b in matched]
    predicted_needs: list[list[int]] = [[] for _ in gold]
    for a, b in mapped:
        predicted_needs[b].append(a)
    predicted_order = closure(predicted_needs)
    if not links and not gold_links:
        preconditions = 1.0
    elif not links or not gold_links:
        preconditions = 0.0
    else:
        precision = sum(pair in gold_order for pair in mapped) / len(links)
        recall = sum(pair in predicted_order for pair in gold_links) / len(gold_links)
        preconditions = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    exact = len(matched) == len(gold) == len(steps) and predicted_order == gold_order
    return PlanScore(content, preconditions, exact)


def plan_answer(contents: Sequence[str], needs: Sequence[Sequence[int]]) -> str:
    """An answer in the asked format: JSON steps inside <ans></ans>."""
    body = {f"step{k}": {"content": text, "precondition": [f"step{n + 1}" for n in sorted(need)]}
            for k, (text, need) in enumerate(zip(contents, needs), 1)}
    return f"<ans>{json.dumps(body, ensure_ascii=False)}</ans>"


def baseline_plan(name: str, row, seed: int = 0) -> str | None:
    """A baseline's answer to a plan row (rows with id, answer and answer_set, the gold steps' contents):
    checker, the gold plan; direct, the target taken at once; random, the gold steps in a random
    order, each needing the one before it; None for the other baselines."""
    contents = list(row.answer_set)
    if name == "checker":
        return row.answer
    if name == "direct":
        return plan_answer(contents[-1:], [()])
    if name == "random":
        Random(derive_seed(seed, "baseline", name, row.id)).shuffle(contents)
        return plan_answer(contents, [()] + [(k,) for k in range(len(contents) - 1)])
    return None
