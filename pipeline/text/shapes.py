"""The shapes kind: two objects of a room given only by coordinates, after Wu and Guo's SRT4LLM
(docs/semantics.md section 20).

A room's floor-standing prominent objects become figures (pipeline.spatial.figures): a round asset
(a type listed in pipeline/data/coordinates.json, its bounding box square within a tolerance) a
circle, by its centre and radius; an object turned by a multiple of 90 degrees a rectangle, by
the corners of its footprint; any other a polygon, by its footprint's corners. An item gives two
figures of one kind, as the paper does:

* circle: two round assets;
* rectangle: two axis-aligned footprints, or, for the topological category, one and the floor;
* polygon: two footprints stated as corner lists, at least one of them turned off the axes.

and asks one of three categories (the row's `setting`): topological (the eight RCC-8 relations),
directional (eight compass directions between the figures' centres, by 45-degree sectors) or
distance (close, medium or far, by the gap between them and the bounds the prompt states). Per
room, shape kind and category: up to ASKED questions, each about another relation: the relations
are drawn uniformly without replacement among those the room's ordered pairs of that kind show,
then a pair showing each (seeded by room, configuration, kind and category); directional and distance questions skip pairs within a
margin of a sector's edge or a bound. The answer is the one relation the stated coordinates give,
exactly.

The prompt strategies of the paper (simple, guiding, example) are prompt styles of every row of
this kind (pipeline.text.prompts); the row's `prompt` column is the simple one.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from random import Random

from pipeline.data import data_json
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.figures import CIRCLE, POLYGON, RECTANGLE, Figure, direction_of, gap, rcc8_of
from pipeline.spatial.relations import COMPASS, relation_words
from pipeline.spatial.topology import RCC8
from pipeline.text.configs import Config
from pipeline.text.items import NO_REASONING, Item, Query
from pipeline.text.kinds import KINDS, Room
from pipeline.text.prompts import DEFAULT_STYLE, figure_text, prompt_text

KIND = KINDS["shapes"]
SHAPE_KINDS = (CIRCLE, RECTANGLE, POLYGON)
CATEGORIES = ("topological", "directional", "distance")
FLOOR = "floor"
ASKED = 2  # questions per room, shape kind and category, each about another relation, where the room shows two
VIEW = "top_down"  # compass directions


@dataclass(frozen=True)
class ShapeItem(Item):
    """One question about two figures: an FR row with a single answer."""

    shape_kind: str  # circle, rectangle or polygon: the kind of both figures
    figures: tuple[Figure, ...]  # A, then B, as the story states them
    arguments: tuple[str, ...]  # ("A", "B") for a topological question, written R(A, B); () otherwise

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt", prompt_text(
            DEFAULT_STYLE, story=self.story, question=self.question, options=self.options,
            question_type=self.question_type, setting=self.setting, view=self.view, d=self.d, relations=()))


RECORD = ShapeItem


def _words() -> dict:
    return data_json("coordinates.json")


def _point(x: float, y: float) -> tuple[float, float]:
    return round(x, 2) + 0.0, round(y, 2) + 0.0  # + 0.0: no "-0.00" in a story


def _is_round(scene_object: SceneObject) -> bool:
    rule = _words()["round"]
    width, _, depth = scene_object.size
    return scene_object.type in rule["types"] and max(width, depth) <= (1 + rule["squareness"]) * min(width, depth)


def shape_of(scene_object: SceneObject) -> str:
    """The kind of figure an object is drawn as (module docstring)."""
    if _is_round(scene_object):
        return CIRCLE
    return RECTANGLE if abs((scene_object.yaw + 45) % 90 - 45) < 1e-6 else POLYGON


def figure(scene_object: SceneObject | None, name: str, kind: str, side: float) -> Figure:
    """`scene_object` (None: the floor, a square of `side`) as a figure of `kind`."""
    if scene_object is not None and kind == CIRCLE:
        width, _, depth = scene_object.size
        return Figure(name, kind, scene_object.id, _point(scene_object.x, scene_object.z),
                      round((width + depth) / 4, 2), ())
    if scene_object is None:
        corners = tuple(_point(x * side, y * side) for x, y in ((0, 0), (1, 0), (1, 1), (0, 1)))
    else:
        corners = tuple(_point(x, z) for x, z in scene_object.footprint)
        if shape_of(scene_object) == RECTANGLE:  # its box, from the south-west corner, counter-clockwise
            (x0, x1), (y0, y1) = ((min(values), max(values)) for values in zip(*corners))
            corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    centre = tuple(round(sum(values) / len(corners), 4) + 0.0 for values in zip(*corners))
    return Figure(name, kind, FLOOR if scene_object is None else scene_object.id, centre, 0.0, corners)


def relation(category: str, a: Figure, b: Figure) -> str | None:
    """The category's relation of A to B; None where a directional or distance question would sit
    within the margin of a sector's edge or a bound (or the centres coincide)."""
    words = _words()
    if category == "topological":
        return rcc8_of(a, b)
    if category == "directional":
        found = direction_of(a, b)
        return found[0] if found is not None and found[1] >= words["margins"]["degrees"] else None
    distance = gap(a, b)
    for entry in words["distances"]:
        bound = entry["within"]
        if bound is not None and abs(distance - bound) < words["margins"]["metres"]:
            return None
        if bound is None or distance <= bound:
            return entry["code"]
    raise AssertionError("the last distance class has no bound")


def options(category: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the options a question of this category offers, the code each names; () for direction words)."""
    if category == "topological":
        return RCC8, RCC8
    if category == "directional":
        return tuple(relation_words(code, VIEW, "label") for code in COMPASS), ()
    codes = tuple(entry["code"] for entry in _words()["distances"])
    return codes, codes


def codes(category: str) -> tuple[str, ...]:
    """The codes of a category's relations, in the order its options list them."""
    return COMPASS if category == "directional" else options(category)[1]


def rows(room: Room, config: Config) -> tuple[ShapeItem, ...]:
    scene = room.scene
    objects = [o for o in scene.prominent if not o.wall_hung]
    made = []
    for kind in SHAPE_KINDS:
        for category in CATEGORIES:
            pairs = candidate_pairs(objects, kind, floor=category == "topological")
            shown: dict[str, list] = {}
            for first, second in pairs:
                a, b = (figure(o, name, kind, scene.side) for o, name in ((first, "A"), (second, "B")))
                found = relation(category, a, b)
                if found is not None:
                    shown.setdefault(found, []).append((a, b))
            if not shown:
                continue
            draw = Random(derive_seed(scene.room_id, KIND.config_name(config), kind, category))
            relations = draw.sample([code for code in codes(category) if code in shown], min(ASKED, len(shown)))
            for number, answer in enumerate(relations):
                made.append(item(scene, config, kind, category, number, *draw.choice(shown[answer]), answer))
    return tuple(made)


def candidate_pairs(objects: list[SceneObject], kind: str, floor: bool) -> list[tuple]:
    """Ordered pairs of objects (None: the floor) whose figures an item of `kind` may give."""
    drawn = {o.id: shape_of(o) for o in objects}
    if kind == CIRCLE:
        pool = [o for o in objects if drawn[o.id] == CIRCLE]
    else:
        pool = [o for o in objects if drawn[o.id] != CIRCLE]
    pairs = [(a, b) for a, b in permutations(pool, 2)
             if kind == CIRCLE or (kind == RECTANGLE and drawn[a.id] == drawn[b.id] == RECTANGLE)
             or (kind == POLYGON and POLYGON in (drawn[a.id], drawn[b.id]))]
    if floor and kind == RECTANGLE:
        pairs += [pair for o in pool if drawn[o.id] == RECTANGLE for pair in ((o, None), (None, o))]
    return pairs


def item(scene: Scene, config: Config, kind: str, category: str, number: int, a: Figure, b: Figure,
         answer: str) -> ShapeItem:
    words = _words()
    offered, named = options(category)
    label = offered[codes(category).index(answer)]
    return ShapeItem(**{
        **NO_REASONING,
        "id": f"{scene.room_id}-{KIND.config_name(config)}-{category}-{kind}-{number}", "room_id": scene.room_id,
        "room_index": scene.index, "seed": scene.seed, "room_type": scene.room_type, "room_side": scene.side,
        "config": KIND.config_name(config), "n": config.n, "m": config.m, "d": config.d, "setting": category,
        "view": VIEW, "question_type": "FR",
        "story": " ".join(figure_text(f.name, f.kind, f.centre, f.radius, f.corners) for f in (a, b)),
        "question": words["categories"][category]["question"], "options": offered, "answer": label,
        "answer_set": (answer,), "candidate": None, "true_relation": answer, "continuous_relation": answer,
        "query": Query("A", "B"), "story_order": ("A", "B"), "shape_kind": kind, "figures": (a, b),
        "option_codes": named, "arguments": ("A", "B") if category == "topological" else ()})
