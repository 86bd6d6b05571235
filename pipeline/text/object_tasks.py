"""Multi-step object tasks: what must be moved or opened before an object can be taken (docs/semantics.md section 21).

After SpatialQA (its supplement: the task format and prompt rules). A room's small objects
(pipeline.scene.small_objects) lie on and in its furniture; each piece of furniture that holds some
is a *view*: the furniture, its compartments (always closed) and its small objects, each named as a
task names it (type words, numbered where a type repeats in the view, in the order they were
placed). A task asks for one small object of a view: "Pick up the laptop." or, for an object inside
a compartment or container, "Take the apple out of the fridge."; its answer is the gold plan of
pipeline.spatial.plans (every load above the object, their own loads first; every closed enclosure
around it and around what must be moved, a box's lid cleared first; the object last), as JSON steps
with their preconditions. Every other object of the view is a distractor: it needs no step.

Per room, candidate tasks are every small object of every view, grouped by their number of steps
(1 to 5, and 6 or more); a seeded draw asks at most one per group, a group with the chance
object_tasks.json's `asked` gives it (set so that the groups come out about even over a build). Each
task is asked twice, a row each: `text`, with a description of what rests on what; `image`, with a
close labelled picture of the furniture drawn by pipeline.render.stack (pipeline.dataset.object_tasks
adds it, and leaves the image row out where the picture does not show every object of the plan).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from random import Random

from pipeline.data import data_json
from pipeline.scene.records import Scene, SceneObject, SmallObject
from pipeline.scene.small_objects import rules
from pipeline.seeding import derive_seed
from pipeline.spatial.plans import OPEN, PICK_UP, REMOVE, Thing, gold_plan
from pipeline.text.configs import Config
from pipeline.text.items import NO_REASONING, Item, Query
from pipeline.text.kinds import KINDS
from pipeline.text.prompts import PLAN_QUESTION
from pipeline.text.words import sentence, type_words

KIND = KINDS["object_tasks"]
MODALITIES = ("text", "image")  # a task with its description, and with its picture (the image's row)
VIEW = "front"  # the picture looks at the furniture's front
PICK_UP_SETTING, TAKE_OUT_SETTING = "pick_up", "take_out"


@cache
def words() -> dict:
    return data_json("object_tasks.json")


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan, as the gold answer writes it."""

    action: str  # remove, open or pick up
    object: str  # the thing acted on, by its name
    source: str | None  # what it is removed from or taken out of, or stands on; None for open
    needs: tuple[int, ...]  # the steps it needs first: 0-based positions in the plan
    content: str  # the step as a sentence ("Remove the pen from book 2")


@dataclass(frozen=True)
class ObjectTaskItem(Item):
    """One task asked one way: a PLAN row (question type PLAN_QUESTION).

    The Item fields hold: `story` the description ("" for the image row); `question` the task;
    `options` every name of the view (what a step may name); `answer` the gold plan as the answer
    JSON inside <ans></ans>; `answer_set` the gold steps' contents in plan order (`answer_set_size`
    their number); `true_relation` and `continuous_relation` the last step's; `query` (target,
    furniture); `hops` the plan's depth (the longest chain of preconditions, in steps).
    """

    target: str  # the object asked for
    furniture: str  # the furniture of the view
    plan: tuple[PlanStep, ...]  # the gold plan, in order (each step after the steps it needs)
    things: tuple[Thing, ...]  # the view: what rests on what, what is closed
    distractors: tuple[str, ...]  # the view's small objects that need no step
    modality: str  # "text" (the description) or "image" (the picture, with no description)
    pair: int | None  # None: the image kinds' pair questions only
    image_name: str  # "stack_<k>": the picture of the room's k-th top-level object
    image_id: str  # <room_id>-<config>-<image_name>
    image: bytes | None  # the PNG for the image row; None for the text row (pipeline.dataset.layout)
    # its prompt is Item's, made from these fields (pipeline.text.prompts.plan_prompt: question type PLAN)


RECORD = ObjectTaskItem


@dataclass(frozen=True)
class View:
    """A piece of furniture and what is on and in it, named."""

    index: int  # its position among the scene's objects
    furniture: SceneObject
    things: tuple[Thing, ...]  # the furniture, its compartments, its small objects (in placing order)
    ids: Mapping[str, str]  # name -> what a picture labels: a small object's id, "<furniture id>/<compartment>"

    @property
    def name(self) -> str:
        return self.things[0].name

    @property
    def image_name(self) -> str:
        return f"stack_{self.index}"


def refer(name: str, numbered: bool) -> str:
    """How a description and a plan refer to a thing: "book 2" as it is, else "the laptop"."""
    return name if numbered else f"the {name}"


def compartment_id(furniture: SceneObject, compartment: str) -> str:
    return f"{furniture.id}/{compartment}"


def views(scene: Scene, small: Sequence[SmallObject]) -> list[View]:
    """Every piece of furniture holding small objects, as a view (module docstring)."""
    spec = rules()
    by_id = {o.id: o for o in small}
    base: dict[str, str] = {}  # small object id -> the furniture it stands on or in, however high
    for obj in small:  # a support is placed before what it supports
        base[obj.id] = base.get(obj.support, obj.support) if obj.support in by_id else obj.support
    out = []
    for index, furniture in enumerate(scene.objects):
        mine = [o for o in small if base[o.id] == furniture.id]
        if not mine:
            continue
        furniture_name = type_words(furniture.type)
        compartments = [c["name"] for c in spec["receptacles"][furniture.type].get("compartments", ())]
        kinds = [type_words(o.type) for o in mine]
        names = {}
        seen: dict[str, int] = {}
        for obj, kind in zip(mine, kinds):
            if kinds.count(kind) > 1:
                seen[kind] = seen.get(kind, 0) + 1
                names[obj.id] = f"{kind} {seen[kind]}"
            else:
                names[obj.id] = kind
        things = [Thing(furniture_name, furniture.type, None, None, None, None, None,
                        opens=furniture_name in compartments, closed=furniture_name in compartments, lid=False,
                        movable=False)]
        ids = {furniture_name: furniture.id}
        for compartment in compartments:
            if compartment != furniture_name:
                things.append(Thing(compartment, words()["compartment_type"], None, None, None, None, furniture_name,
                                    opens=True, closed=True, lid=False, movable=False))
                ids[compartment] = compartment_id(furniture, compartment)
        for obj in mine:
            on_furniture = obj.support == furniture.id
            support = furniture_name if on_furniture else names[obj.support]
            container = spec["containers"].get(obj.type)
            relation = None
            if not obj.inside:
                relation = "on" if on_furniture else spec["carriers"][by_id[obj.support].type]["relation"]
            inside = (obj.part if obj.part != furniture_name else furniture_name) if obj.inside and on_furniture \
                else support if obj.inside else None
            things.append(Thing(names[obj.id], obj.type, None if obj.inside else support, relation,
                                obj.part if on_furniture and not obj.inside else None, inside, None,
                                opens=container is not None, closed=bool(obj.closed),
                                lid=bool(container and container["lid"]), movable=True))
            ids[names[obj.id]] = obj.id
        out.append(View(index, furniture, tuple(things), ids))
    return out


def _numbered(view: View) -> set[str]:
    """The names written without an article: those numbered within the view."""
    return {thing.name for thing in view.things if thing.movable and thing.name != type_words(thing.type)}


def description(view: View) -> str:
    """What rests on what in a view, and what is closed (object_tasks.json's description)."""
    text, numbered = words()["description"], _numbered(view)
    furniture = view.name
    by_name = {thing.name: thing for thing in view.things}

    def ref(name: str) -> str:
        return refer(name, name in numbered)

    said = [text["opening"].format(a_furniture=f"{'an' if furniture[0] in 'aeiou' else 'a'} {furniture}")]

    def tell(thing: Thing) -> None:
        if thing.on == furniture:
            said.append(text["on_furniture"].format(x=ref(thing.name), part=thing.part, furniture=furniture))
        elif thing.on is not None:
            said.append(text["on" if thing.relation == "on" else "in_carrier"].format(x=ref(thing.name),
                                                                                       y=ref(thing.on)))
        elif thing.inside == furniture:
            said.append(text["in_itself"].format(x=ref(thing.name), furniture=furniture))
        elif by_name[thing.inside].of is not None:
            said.append(text["in_compartment"].format(x=ref(thing.name), y=thing.inside, furniture=furniture))
        else:
            said.append(text["in_container"].format(x=ref(thing.name), y=ref(thing.inside)))
        if thing.opens:
            said.append(text["closed" if thing.closed else "open"].format(y=ref(thing.name)))
        for other in view.things:  # what is inside it, then what rests on it
            if other.inside == thing.name and other.on is None:
                tell(other)
        for other in view.things:
            if other.on == thing.name:
                tell(other)

    for thing in view.things:
        if thing.on == furniture:
            tell(thing)
    for thing in view.things:
        if thing.opens and not thing.movable:
            said.append(text["furniture_closed"].format(furniture=furniture) if thing.name == furniture
                        else text["compartment_closed"].format(y=thing.name, furniture=furniture))
            for other in view.things:
                if other.inside == thing.name:
                    tell(other)
    return " ".join(sentence(part) for part in said)


def plan_of(view: View, target: str) -> tuple[PlanStep, ...]:
    """The gold plan of a task, its steps written out (pipeline.spatial.plans.gold_plan)."""
    steps, numbered = words()["steps"], _numbered(view)
    by_name = {thing.name: thing for thing in view.things}

    def ref(name: str) -> str:
        return refer(name, name in numbered)

    out = []
    for action, name, origin, needs in gold_plan(view.things, target):
        if action == REMOVE:
            content = steps[REMOVE].format(x=ref(name), y=ref(origin))
        elif action == OPEN:
            content = steps[OPEN].format(x=ref(name))
        elif by_name[name].inside is not None:
            content = steps["take out"].format(x=ref(name), y=ref(origin))
        else:
            content = steps[PICK_UP].format(x=ref(name))
        out.append(PlanStep(action, name, origin, needs, sentence(content)))
    return tuple(out)


def depth(plan: Sequence[PlanStep]) -> int:
    """The longest chain of preconditions in a plan, in steps (1 for a plan of one step)."""
    longest: list[int] = []
    for step in plan:
        longest.append(1 + max((longest[k] for k in step.needs), default=0))
    return max(longest)


def answer_text(plan: Sequence[PlanStep]) -> str:
    """The gold answer as the prompt asks for it: JSON steps inside <ans></ans>."""
    body = {f"step{k}": {"content": step.content, "precondition": [f"step{n + 1}" for n in step.needs]}
            for k, step in enumerate(plan, 1)}
    return f"<ans>{json.dumps(body, ensure_ascii=False)}</ans>"


def bucket(steps: int) -> int:
    return min(steps, words()["buckets"])


def chosen_tasks(room_id: str, room_views: Sequence[View]) -> list[tuple[View, str, tuple[PlanStep, ...]]]:
    """The room's tasks: at most one per bucket of plan length, each asked with its bucket's chance
    (module docstring); in bucket order."""
    found: dict[int, list] = {}
    for view in room_views:
        for thing in view.things:
            if thing.movable:
                plan = plan_of(view, thing.name)
                found.setdefault(bucket(len(plan)), []).append((view, thing.name, plan))
    draw = Random(derive_seed(room_id, words()["seed_text"]))
    asked = []
    for size in range(1, words()["buckets"] + 1):
        keep = draw.random() < words()["asked"][str(size)]
        if keep and found.get(size):
            asked.append(draw.choice(found[size]))
    return asked


def task_items(scene: Scene, small: Sequence[SmallObject], config: Config) -> list[ObjectTaskItem]:
    """The room's task rows of one base configuration, text then image for each task; image rows
    carry no PNG yet (pipeline.dataset.object_tasks draws it)."""
    name = KIND.config_name(config)
    question_words = words()["question"]
    out = []
    for number, (view, target, plan) in enumerate(chosen_tasks(scene.room_id, views(scene, small))):
        numbered = _numbered(view)
        by_name = {thing.name: thing for thing in view.things}
        goal = by_name[target]
        if goal.inside is not None:
            setting = TAKE_OUT_SETTING
            question = question_words[setting].format(x=refer(target, target in numbered),
                                                      y=refer(goal.inside, goal.inside in numbered))
        else:
            setting = PICK_UP_SETTING
            question = question_words[setting].format(x=refer(target, target in numbered))
        needed = {step.object for step in plan}
        common = dict(
            NO_REASONING, room_id=scene.room_id, room_index=scene.index, seed=scene.seed, room_type=scene.room_type,
            room_side=scene.side, config=name, n=config.n, m=config.m, d=config.d, setting=setting, view=VIEW,
            question_type=PLAN_QUESTION, question=sentence(question), options=tuple(t.name for t in view.things),
            answer=answer_text(plan), answer_set=tuple(step.content for step in plan), answer_set_size=len(plan),
            candidate=None, true_relation=plan[-1].content, continuous_relation=plan[-1].content,
            query=Query(target, view.name), hops=depth(plan), story_order=tuple(t.name for t in view.things),
            target=target, furniture=view.name, plan=plan, things=view.things,
            distractors=tuple(t.name for t in view.things if t.movable and t.name not in needed), pair=None,
            image_name=view.image_name, image_id=f"{scene.room_id}-{name}-{view.image_name}", image=None)
        for modality in MODALITIES:
            out.append(ObjectTaskItem(**common, id=f"{scene.room_id}-{name}-{number}-{modality}", modality=modality,
                                      story=description(view) if modality == "text" else ""))
    return out


def picture_captions(view: View) -> dict[str, str]:
    """{id: caption} of the insets a view's picture may draw, one per closed thing that holds
    something: "inside the top left drawer" (pipeline.render.stack; a compartment by
    "<furniture id>/<name>", the fridge's too)."""
    caption, numbered = words()["picture"]["inside"], _numbered(view)
    held = {thing.inside for thing in view.things if thing.inside is not None}
    return {(view.ids[thing.name] if thing.movable else compartment_id(view.furniture, thing.name)):
            caption.format(x=refer(thing.name, thing.name in numbered))
            for thing in view.things if thing.opens and thing.closed and thing.name in held}


def picture_labels(view: View) -> dict[str, str]:
    """{id: label} of what a view's picture labels: every thing by its name, a thing that opens with
    whether it is closed ("top left drawer (closed)")."""
    picture = words()["picture"]
    return {view.ids[thing.name]: picture["closed" if thing.closed else "open"].format(name=thing.name)
            if thing.opens else thing.name for thing in view.things}
