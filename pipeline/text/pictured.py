"""Questions about what a picture shows: the questions of the vision kinds (docs/semantics.md section 12).

An image of a room labels every prominent object as the base stories name it (`story_labels`).
A vision row's question is an Item with how it goes with its image (`Pictured`): a base or agent
question asked with the image of its view ("image+story"), or a pair question about two objects
the image shows clearly, made here:

* `pair_questions`: about an image of a view (the plan, the door view), asked three ways:
  "image" (the image and the view's frame sentence, no story), "text" (no image; a story giving
  the centre of every object the image labels, in metres, as the image places them) and
  "image+text" (both). The answer is the relation the picture shows, as the single answer (FR),
  or Yes iff the candidate is that relation (YN).
* `seen_pair_questions`: about a first-person image (the story observer's, or another stance's:
  `first_person_poses`), asked with the image alone, in the observer's words.

A pair is clear when the picture shows both objects (`Picture.shows`: labelled and, in a
perspective picture, in view and not mostly hidden) and shows their relation with a margin a reader
can see, the grid and the centres in metres agreeing (`pictured_relation`): no answer contradicts
the picture or hangs on a few centimetres or degrees. Up to PAIRS_PER_VIEW questions per room and
image (rooms weigh equally), each asked as FR and YN; the paper's configurations draw pairs and ask
half of a room's YN questions per image truly, balanced ones draw the answer first (`_asked`).
A balanced configuration asks them about a picture whose objects are marked by letters in a
seeded order (`markers`; its name is MARKED + the view's image), its centres story naming them so
too: a question naming "the chair" and "the dining table" tells much of how they stand (chairs
stand level about a table, paintings hang behind what stands on the floor), "C" and "F" nothing.
The questions of one number, image and question type share `pair`, so that a model's scores on
the three modalities can be compared item by item.

What an image shows comes in as a `Picture`: its labels ({object id: name}, as pipeline.render.png
records them) and, for a perspective image, its camera and what the renderer measured of each
object (`Sighting`, pipeline.render.door.sightings): this module reads no image.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from random import Random

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.frames import OBSERVER, seen_facing
from pipeline.spatial.grid import Cell, rasterise
from pipeline.spatial.relations import DIRECTIONS, converse, direction, direction_of_points, direction_of_signs, relation_words
from pipeline.text.agents import AHEAD, NEAR_AHEAD, AgentItem, Pose, half_view, observer_frame, stances
from pipeline.text.balance import relation_questions, yn_question
from pipeline.text.items import NO_REASONING, Item, Query, fr_row, init_fields, yn_row
from pipeline.text.prompts import (AGENT_VIEW, BEARING_MARGIN, CENTRES_SETTING, IMAGE_ONLY_SETTING, IN_LINE, MARKED,
                                   PAIR_MODALITIES)
from pipeline.text.stories import Teller
from pipeline.text.words import Phrases, Wording, object_labels, sentence, type_words

SAME_AXIS = 1e-6  # m: relations.direction_of_points counts offsets this small as equal
MIN_SHARE = 0.3  # a perspective picture shows an object when this share of its pixels is not hidden
PAIRS_PER_VIEW = 4  # clear pairs asked per room and image, at most


@dataclass(frozen=True)
class CameraPose:
    """Where a perspective picture was taken from (pipeline.render.door's camera), in metres."""

    x: float  # east of the west wall
    y: float  # above the floor
    z: float  # north of the south wall
    facing: str  # N, E, S or W: the wall looked at; left in the picture is the camera's left
    pitch: float  # degrees below the horizon
    fov: float  # horizontal field of view, degrees


@dataclass(frozen=True)
class Sighting:
    """What a perspective picture shows of an object (pipeline.render.door measures it)."""

    bearing: float  # degrees right of the picture's middle column, where the object's centre projects
    ahead: float  # m: its centre's distance ahead of the camera, along the wall faced
    in_view: bool  # its centre projects inside the picture, in front of the camera
    share: float  # of its pixels drawn alone, the share not hidden by nearer surfaces (the z-buffer's)
    pixels: int  # its pixels in the picture


@dataclass(frozen=True)
class Picture:
    """An image as its questions need it: its name, its labels ({object id: name}, as the PNG records
    them), for a perspective image its camera and each prominent object's sighting, and the objects
    another label covers in part (never asked about)."""

    name: str
    labels: Mapping[str, str]
    camera: CameraPose | None = None  # None: the plan
    sightings: Mapping[str, Sighting] | None = None
    covered: frozenset[str] = frozenset()  # labelled objects another object's label partly covers (png.covered_objects)

    def shows(self, obj: SceneObject) -> bool:
        """Labelled, no other label over it, and in a perspective picture its centre in view with
        MIN_SHARE of it seen."""
        if obj.id not in self.labels or obj.id in self.covered:
            return False
        seen = self.sightings[obj.id] if self.sightings is not None else None
        return seen is None or (seen.in_view and seen.share >= MIN_SHARE)


@dataclass(frozen=True)
class Pictured:
    """What a question of a vision configuration adds to its row: how it goes with its image."""

    # "image+story" (answered from the story), or a pair question asked as "image", "text" (the
    # centres in metres, the image not sent) or "image+text" (module docstring)
    modality: str
    pair: int | None  # a pair question's number in its room: its modalities share it
    image_name: str  # "top_down", "south_door", "first_person" (the story's observer) or "first_person_<k>"
    camera: CameraPose | None  # where a perspective image was taken from; None for the plan


@dataclass(frozen=True)
class VisionItem(Pictured, Item):  # Pictured first: its fields come after the Item's
    """A question of a vision configuration: an Item asked with its image, or about it without it."""


@dataclass(frozen=True)
class AgentVisionItem(Pictured, AgentItem):
    """A question of a vision_agent configuration: an agent row asked with the image of its story's frame."""


def story_labels(scene: Scene, items: Sequence[Item]) -> dict[str, str]:
    """{object id: name} of every prominent object: the base stories' names for theirs (`items`: one
    room and configuration), pipeline.text.words.object_labels for the others."""
    named = {_scene_object(scene, o).id: o.name for o in items[0].objects} if items else {}
    return object_labels(scene.prominent, named)


def pair_questions(scene: Scene, item: Item, config: str, view: str, picture: Picture,
                   balanced: bool = False) -> list[VisionItem]:
    """FR and YN questions about up to PAIRS_PER_VIEW clear pairs of the view's image, each asked in
    every modality. `item`: one of the room's items of the base configuration; `config`: the
    vision configuration's name; `picture`: what the image shows; `balanced`: draw as a balanced
    configuration does (`_asked`)."""
    labels = picture.labels
    rng = Random(derive_seed(scene.room_id, config, "image", view))
    asked = _asked(scene, picture, item.d, balanced, rng)
    if not asked:
        return []
    shown = [o for o in scene.prominent if o.id in labels]
    names = [labels[o.id] for o in shown]
    phrases = Phrases(names, [type_words(o.type) for o in shown])
    centres = {labels[o.id]: (round(o.x, 2), round(o.z, 2)) for o in shown}
    texts = data_json("templates.json")
    story = {
        "image": " ".join([sentence(rng.choice(texts["frame"][view])), *_marker_note(picture)]),
        "text": Teller(Wording(phrases)).centres(scene.room_type, scene.side, centres, names, view, rng),
    }
    story["image+text"] = story["text"]
    common = dict(init_fields(item), **NO_REASONING, config=config, view=view, image_name=picture.name,
                  camera=picture.camera, story_order=tuple(names))
    out = []
    for k, question in enumerate(asked):
        for a, b in {question.fr, question.yn} - {None}:
            if direction_of_points(centres[labels[a.id]], centres[labels[b.id]]) != question.relation(a, b):
                raise RoomspaceError(f"room {scene.room_id}: stated centres of {labels[a.id]} and {labels[b.id]} "
                                     f"do not keep their relation {question.relation(a, b)}")
        fr_question = question.fr and sentence(rng.choice(texts["question"]["FR"][view]).format(
            **_refs(phrases, labels, question.fr)))
        yn_question = sentence(rng.choice(texts["pair_yes_no"][view]).format(
            **_refs(phrases, labels, question.yn), relation=relation_words(question.candidate, view, "phrase")))
        for modality in PAIR_MODALITIES:
            setting = IMAGE_ONLY_SETTING if modality == "image" else CENTRES_SETTING
            fields = dict(common, setting=setting, story=story[modality], modality=modality, pair=k)
            prefix = f"{item.room_id}-{config}-{setting}-{view}-{modality}-p{k}"
            if question.fr:
                out.append(fr_row(VisionItem, question.fields(fields, labels, "fr"), prefix, fr_question))
            out.append(yn_row(VisionItem, question.fields(fields, labels, "yn"), prefix, yn_question, question.candidate))
    return out


def seen_pair_questions(scene: Scene, row: AgentItem, config: str, observer: Pose, picture: Picture,
                        first: int = 0, balanced: bool = False) -> list[AgentVisionItem]:
    """FR and YN questions about clear pairs of the first-person image `picture`, taken by `observer`,
    in the observer's words, numbered from `first`. `row`: one of the room's agent rows; `config`:
    the vision_agent configuration's name."""
    labels = picture.labels
    rng = Random(derive_seed(scene.room_id, config, "image", picture.name))
    asked = _asked(scene, picture, row.d, balanced, rng)
    shown = [o for o in scene.prominent if o.id in labels]
    phrases = Phrases([labels[o.id] for o in shown], [type_words(o.type) for o in shown])
    seen = data_json("agents.json")["seen"]
    common = dict(
        init_fields(row, AgentItem), **NO_REASONING, config=config, setting=IMAGE_ONLY_SETTING,
        story=" ".join([observer_frame(observer, rng), *_marker_note(picture)]),
        story_order=tuple(labels[o.id] for o in shown), kind="agent",
        story_view=AGENT_VIEW, story_pose=observer, question_pose=observer, frame_changes=0, frame_angle=0,
        modality="image", image_name=picture.name, camera=picture.camera,
    )
    out = []
    for k, question in enumerate(asked, start=first):
        fr_question = question.fr and sentence(rng.choice(seen["FR"]).format(**_refs(phrases, labels, question.fr)))
        yn_question = sentence(rng.choice(seen["YN"]).format(
            **_refs(phrases, labels, question.yn), relation=relation_words(question.candidate, OBSERVER, "phrase")))
        fields = dict(common, pair=k)
        prefix = f"{scene.room_id}-{config}-{IMAGE_ONLY_SETTING}-{picture.name}-p{k}"
        if question.fr:
            out.append(fr_row(AgentVisionItem, question.fields(fields, labels, "fr"), prefix, fr_question))
        out.append(yn_row(AgentVisionItem, question.fields(fields, labels, "yn"), prefix, yn_question,
                          question.candidate))
    return out


def pictured_relation(a: SceneObject, b: SceneObject, picture: Picture, cells: Mapping[str, Cell],
                      side: float, d: int, in_line: bool = False) -> str | None:
    """The relation of a to b that `picture` shows, in its view's codes (the plan's for the plan, the
    camera's words' for a perspective picture), or None where the picture does not show it with a
    margin or the grid's relation (`cells`) or the centres' in metres says otherwise.

    The plan shows east-west and north-south offsets of the centres: each is read as equal (within
    SAME_AXIS) or as at least a cell's side (side / d). A perspective picture shows left and right
    by the bearings of the centres (BEARING_MARGIN apart or more) and front and behind by their
    distances ahead (equal, or a cell apart). An alignment across the picture is not seen, with
    `in_line` (the balanced configurations) but for one object straight behind the other: bearings
    less than IN_LINE apart, one column of the picture, and distances ahead a cell apart or more.
    """
    facing = picture.camera.facing if picture.camera is not None else "N"
    grid = seen_facing(direction(cells[a.id], cells[b.id]), facing)
    centres = seen_facing(direction_of_points((a.x, a.z), (b.x, b.z)), facing)
    cell = side / d
    if picture.sightings is None:
        signs = (_axis(a.x - b.x, cell), _axis(a.z - b.z, cell))
    else:
        seen_a, seen_b = picture.sightings[a.id], picture.sightings[b.id]
        turn = seen_a.bearing - seen_b.bearing
        across = ((1 if turn > 0 else -1) if abs(turn) >= BEARING_MARGIN
                  else 0 if in_line and abs(turn) < IN_LINE else None)
        signs = (across, _axis(seen_a.ahead - seen_b.ahead, cell))
        if signs == (0, 0):  # one column and one distance ahead: not told apart
            return None
    if None in signs:
        return None
    shown = direction_of_signs(signs)
    return shown if shown == grid == centres else None


def first_person_poses(scene: Scene, observer: Pose, d: int, in_line: bool = False) -> list[Pose]:
    """The stances a room's first-person pictures are taken from, in the order to try them: the
    story's observer, then the stances (pipeline.text.agents.stances) of other cells, in a seeded
    order, those whose plan promises more clear pairs first (up to PAIRS_PER_VIEW), then those facing
    another wall than the observer (the plan's promise:
    bearings and distances ahead read off the plan as `pictured_relation` reads the picture's,
    objects in the field of view and NEAR_AHEAD or more ahead taken as seen whole). With `in_line`
    (a balanced configuration's reading), those promising one object straight in front of another
    come before all: few pictures show that, and without them a first-person picture's straight
    questions would be left and right only (docs/semantics.md section 17)."""
    others = [c for c in stances(scene, d) if (c.pose.i, c.pose.j) != (observer.i, observer.j)]
    Random(derive_seed(scene.room_id, d, "stances")).shuffle(others)
    promises = [clear_pairs(scene, _plan_picture(scene, c.point, c.pose.facing), d, in_line) for c in others]
    promised = [min(PAIRS_PER_VIEW, len(pairs) // 2) for pairs in promises]
    behind = [in_line and any(code in ("N", "S") for code in pairs.values()) for pairs in promises]
    order = sorted(range(len(others)),
                   key=lambda k: (not behind[k], -promised[k], others[k].pose.facing == observer.facing))
    return [observer, *(others[k].pose for k in order)]


def _plan_picture(scene: Scene, point: tuple[float, float], facing: str) -> Picture:
    """What a camera at `point` facing `facing` would show, read off the plan (`first_person_poses`):
    every object NEAR_AHEAD or more ahead and inside the camera's field of view, whole."""
    (ax, az), x, z = AHEAD[facing], *point
    half = half_view(scene.side, point, facing)
    seen = {}
    for obj in scene.prominent:
        ahead, across = (obj.x - x) * ax + (obj.z - z) * az, (obj.x - x) * az - (obj.z - z) * ax
        bearing = math.atan2(across, ahead)
        seen[obj.id] = Sighting(math.degrees(bearing), ahead, ahead >= NEAR_AHEAD and abs(bearing) < half, 1.0, 1)
    return Picture("plan", {i: i for i in seen}, CameraPose(x, 0.0, z, facing, 0.0, 0.0), seen)


def _axis(offset: float, margin: float) -> int | None:
    """An offset's sign as a picture shows it: 0 within SAME_AXIS, +-1 from `margin` on, else None."""
    if abs(offset) <= SAME_AXIS:
        return 0
    return (1 if offset > 0 else -1) if abs(offset) >= margin else None


@lru_cache(maxsize=8)
def prominent_cells(scene: Scene, d: int) -> dict[str, Cell]:
    """{object id: snapped cell} of every prominent object, as a story would place it."""
    shown = scene.prominent
    raster = rasterise([(o.x, o.z) for o in shown], [o.footprint for o in shown], scene.side, d)
    return {o.id: cell for o, cell in zip(shown, raster.cells)}


def clear_pairs(scene: Scene, picture: Picture, d: int,
                in_line: bool = False) -> dict[tuple[SceneObject, SceneObject], str]:
    """{(a, b): relation} of every ordered pair of objects the picture shows whose relation it shows
    (`pictured_relation`, `in_line` passed on), in scene order."""
    cells = prominent_cells(scene, d)
    shown = [o for o in scene.prominent if picture.shows(o)]
    out = {}
    for a, b in combinations(shown, 2):
        relation = pictured_relation(a, b, picture, cells, scene.side, d, in_line)
        if relation is not None:
            out[a, b], out[b, a] = relation, converse(relation)
    return out


@dataclass(frozen=True)
class _Asked:
    """One numbered pair question: the ordered pairs its FR and YN questions ask, and the YN candidate."""

    fr: tuple[SceneObject, SceneObject] | None  # None: a number with a YN question only (balanced, `_asked`)
    yn: tuple[SceneObject, SceneObject]
    candidate: str
    relations: Mapping[tuple[SceneObject, SceneObject], str]

    def relation(self, a: SceneObject, b: SceneObject) -> str:
        return self.relations[a, b]

    def fields(self, common: Mapping, labels: Mapping[str, str], which: str) -> dict:
        a, b = self.fr if which == "fr" else self.yn
        truth = self.relations[a, b]
        return dict(common, answer_set=(truth,), true_relation=truth, continuous_relation=truth,
                    query=Query(labels[a.id], labels[b.id]))


def _marker_note(picture: Picture) -> list[str]:
    """What a picture marked by letters (`markers`) says of its marks, for its story: nothing for another."""
    return [sentence(data_json("templates.json")["markers"])] if picture.name.startswith(MARKED) else []


def _refs(phrases: Phrases, labels: Mapping[str, str], pair: tuple[SceneObject, SceneObject]) -> dict[str, str]:
    return {"a": phrases.ref(labels[pair[0].id]), "b": phrases.ref(labels[pair[1].id])}


def _asked(scene: Scene, picture: Picture, d: int, balanced: bool, rng: Random) -> list[_Asked]:
    """Up to PAIRS_PER_VIEW questions about the picture's clear pairs, no pair asked twice by one
    question type. The paper's configurations draw pairs, each in a drawn order, and ask half of
    the YN questions truly (the odd one by lot). A balanced one also reads pairs in line
    (`pictured_relation`), asks FR questions about its straight pairs and two diagonal pairs per
    straight one (`relation_questions`: fewer FR questions than numbers where the picture has few
    straight pairs, none where it has none; `_Asked.fr` None), and draws each YN question's
    candidate among the relations both answers allow, a fair coin, then a pair (pipeline.text.balance).
    Its pictures mark objects by letters (`markers`), so no pair is likelier than another for what
    its objects are."""
    relations = clear_pairs(scene, picture, d, in_line=balanced)
    unordered = [pair for pair in relations if scene.prominent.index(pair[0]) < scene.prominent.index(pair[1])]
    count = min(PAIRS_PER_VIEW, len(unordered))
    if not balanced:
        chosen = [pair if rng.random() < 0.5 else pair[::-1] for pair in rng.sample(unordered, count)]
        yes = set(rng.sample(range(count), (count + rng.randrange(2)) // 2)) if chosen else set()
        return [_Asked(pair, pair, relations[pair] if k in yes else rng.choice(
            [c for c in DIRECTIONS if c != relations[pair]]), relations) for k, pair in enumerate(chosen)]
    out = []
    fr = relation_questions(relations, count, rng)
    left = dict(relations)
    for k in range(count):
        yn = yn_question({pair: frozenset({code}) for pair, code in left.items()}, DIRECTIONS, rng)
        out.append(_Asked(fr[k] if k < len(fr) else None, yn.pair, yn.candidate, relations))
        del left[yn.pair], left[yn.pair[::-1]]
    return out


def picture_kind(image_name: str) -> str:
    """What kind of picture an image is: top_down, south_door or first_person (first_person_2 and
    marked_top_down too)."""
    return re.sub(r"_\d+$", "", image_name.removeprefix(MARKED))


def markers(scene: Scene) -> dict[str, str]:
    """{object id: letter} of every prominent object, the letters (`MARKER_LETTERS`) in a seeded order: what a balanced
    configuration's pair questions call objects and its pictures for them show (module docstring)."""
    shown = list(scene.prominent)
    Random(derive_seed(scene.room_id, "markers")).shuffle(shown)
    return {obj.id: _letters(k) for k, obj in enumerate(shown)}


MARKER_LETTERS = "ABCDEFGHIJKLMOPQRSTUVWXYZ"  # no N: the plan's compass says N beside the labels


def _letters(k: int) -> str:
    """A, B, ..., Z (N left out), then AA, AB, ...: the k-th marker."""
    base = len(MARKER_LETTERS)
    return _letters(k // base - 1) + MARKER_LETTERS[k % base] if k >= base else MARKER_LETTERS[k]


def _scene_object(scene: Scene, story_object) -> SceneObject:
    for obj in scene.prominent:
        if (obj.type, obj.x, obj.z) == (story_object.type, story_object.x, story_object.z):
            return obj
    raise RoomspaceError(f"room {scene.room_id}: its items name a {story_object.type} that is not in the scene")
