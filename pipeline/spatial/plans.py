"""Plans that take one object from a furniture piece: what must be moved or opened first (docs/semantics.md section 21).

A view of a piece of furniture is a set of `Thing`s: the furniture, its closed compartments (drawers,
a cabinet, the fridge), and the small objects on and in it, each resting on something (`on`) or
enclosed by a compartment or container (`inside`). A plan is a list of steps, each one action on one
thing, with the steps it needs first (indices into the list: a precondition DAG):

* `remove` W from S: W rests on S; nothing may rest on W, and W must be reachable;
* `open` C: a shut compartment or container; with a lid (a box), nothing may rest on it, and C must
  be reachable;
* `pick up` X from S: the asked object; nothing may rest on it, and it must be reachable.

A thing is reachable when every compartment or container that encloses it is open: the one it is
inside, and those enclosing what it rests on (a fork on a plate in a shut microwave is enclosed by the
microwave). `gold_plan` gives the only minimal plan: every load above X (their own loads first),
every shut enclosure around X (and around what must be moved), and X last; each step needs exactly
the steps that make it possible (direct needs, the transitive reduction). `check_plan` runs a plan
step by step, independently of `gold_plan`: each step is possible once the steps it needs (and
theirs) are done, whatever the order of the others, no step is superfluous, and X is taken last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

REMOVE, OPEN, PICK_UP = "remove", "open", "pick up"
ACTIONS = (REMOVE, OPEN, PICK_UP)


@dataclass(frozen=True)
class Thing:
    """A thing of a view, by the name the task uses (pipeline.text.object_tasks)."""

    name: str
    type: str  # a ProcTHOR objectType, or the kind of a compartment ("Drawer", "Cabinet", "Fridge")
    on: str | None  # what it rests on (the furniture, or a small object); None: inside, or the furniture itself
    relation: str | None  # how it rests there: "on", or "in" an open bowl or pot
    part: str | None  # the furniture's surface it stands on ("top", "seat", "lower middle shelf"), else None
    inside: str | None  # the compartment or container it is in; None when it rests on something
    of: str | None  # a compartment's furniture; None for anything else
    opens: bool  # a compartment or container (it has a door, a drawer front or a lid)
    closed: bool  # shut (only a thing that opens)
    lid: bool  # what rests on it must be taken off before it opens (a box)
    movable: bool  # a small object; the furniture and its compartments stay


Step = tuple[str, str, str | None, tuple[int, ...]]  # (action, object, source or None, needs)


def loads(things: Iterable[Thing]) -> dict[str, list[str]]:
    """What rests directly on each thing (names, in the view's order)."""
    found: dict[str, list[str]] = {}
    for thing in things:
        if thing.on is not None:
            found.setdefault(thing.on, []).append(thing.name)
    return found


def enclosures(name: str, by_name: Mapping[str, Thing]) -> list[str]:
    """The compartments and containers around a thing, innermost first: the one it is inside, and
    those around what it rests on, down to the furniture."""
    found, thing = [], by_name[name]
    while thing is not None:
        if thing.inside is not None:
            found.append(thing.inside)
            thing = by_name[thing.inside]
        elif thing.on is not None:
            thing = by_name[thing.on]
        else:
            thing = None
    return found


def source(thing: Thing) -> str | None:
    """What a thing is taken from: what it rests on, or the compartment it is inside."""
    return thing.on if thing.on is not None else thing.inside


def gold_plan(things: Sequence[Thing], target: str) -> tuple[Step, ...]:
    """The minimal plan that picks up `target` (module docstring): loads first, deepest first, then
    openings, then the target; ties in the view's order."""
    by_name = {thing.name: thing for thing in things}
    on = loads(things)
    steps: list[list] = []
    index: dict[tuple[str, str], int] = {}

    def reach(name: str) -> list[int]:
        """The step opening the innermost shut enclosure of a thing (none if all are open)."""
        for enclosure in enclosures(name, by_name):
            if by_name[enclosure].closed:
                return [open_step(enclosure)]
        return []

    def clear(name: str) -> list[int]:
        return [remove_step(load) for load in on.get(name, ())]

    def remove_step(name: str) -> int:
        if (REMOVE, name) not in index:
            needs = clear(name) + reach(name)
            index[REMOVE, name] = len(steps)
            steps.append([REMOVE, name, source(by_name[name]), needs])
        return index[REMOVE, name]

    def open_step(name: str) -> int:
        if (OPEN, name) not in index:
            needs = (clear(name) if by_name[name].lid else []) + reach(name)
            index[OPEN, name] = len(steps)
            steps.append([OPEN, name, None, needs])
        return index[OPEN, name]

    needs = clear(target) + reach(target)
    steps.append([PICK_UP, target, source(by_name[target]), needs])
    reduced = reduction([tuple(step[3]) for step in steps])
    return tuple((action, name, origin, reduced[k]) for k, (action, name, origin, _) in enumerate(steps))


def closure(needs: Sequence[Sequence[int]]) -> set[tuple[int, int]]:
    """Every pair (a, b) with step a done before step b through the needs (a DAG; a cycle's pairs too)."""
    before: dict[int, set[int]] = {}

    def earlier(b: int, seen: frozenset = frozenset()) -> set[int]:
        if b in before:
            return before[b]
        found: set[int] = set()
        for a in needs[b]:
            if 0 <= a < len(needs) and a not in seen:
                found.add(a)
                found |= earlier(a, seen | {b})
        if not seen:
            before[b] = found
        return found

    return {(a, b) for b in range(len(needs)) for a in earlier(b)}


def reduction(needs: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """Each step's needs without those implied by its other needs (the transitive reduction of a DAG)."""
    after = closure(needs)
    out = []
    for b, direct in enumerate(needs):
        kept = [a for a in dict.fromkeys(direct)
                if not any((a, c) in after for c in direct if c != a)]
        out.append(tuple(sorted(kept)))
    return out


def check_plan(things: Sequence[Thing], target: str, steps: Sequence[Step]) -> str | None:
    """Why `steps` is not a correct minimal plan for `target`, or None when it is.

    Correct: each step is possible in a world where exactly the steps it needs (and theirs) are
    done, and the last step picks up the target; minimal: every step is one that picking up the
    target cannot do without (its removal leaves some step impossible).
    """
    by_name = {thing.name: thing for thing in things}
    if not steps or steps[-1][:2] != (PICK_UP, target):
        return "the last step does not pick up the target"
    needs = [step[3] for step in steps]
    if any(a >= b for b, direct in enumerate(needs) for a in direct):
        return "a step needs a later step"
    before = closure(needs)
    for b, step in enumerate(steps):
        done = [steps[a] for a in range(len(steps)) if (a, b) in before]
        problem = _impossible(step, done, by_name)
        if problem:
            return f"step {b + 1} ({step[0]} {step[1]}): {problem}"
    for k in range(len(steps) - 1):
        rest = [step for j, step in enumerate(steps) if j != k]
        if all(_impossible(step, rest[:j], by_name) is None for j, step in enumerate(rest)):
            return f"step {k + 1} ({steps[k][0]} {steps[k][1]}) is not needed"
    return None


def _impossible(step: Step, done: Sequence[Step], by_name: Mapping[str, Thing]) -> str | None:
    """Why `step` cannot be taken after the steps `done` (in the view's starting state), or None."""
    action, name, origin, _ = step
    if name not in by_name:
        return f"no {name} in the view"
    thing = by_name[name]
    moved = {step_name for kind, step_name, _, _ in done if kind in (REMOVE, PICK_UP)}
    opened = {step_name for kind, step_name, _, _ in done if kind == OPEN}
    if (action, name) in {(kind, step_name) for kind, step_name, _, _ in done}:
        return "done already"
    resting = [other.name for other in by_name.values() if other.on == name and other.name not in moved]
    shut = [enclosure for enclosure in enclosures(name, by_name)
            if by_name[enclosure].closed and enclosure not in opened]
    if action == OPEN:
        if not thing.opens or not thing.closed:
            return "nothing shut to open"
        if thing.lid and resting:
            return f"{resting[0]} rests on its lid"
    elif not thing.movable:
        return "it cannot be moved"
    elif origin != source(thing):
        return f"it is not on or in {origin}"
    elif resting:
        return f"{resting[0]} rests on it"
    if shut:
        return f"the {shut[0]} is shut"
    return None
