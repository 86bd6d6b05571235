"""Multimodal rows: the `vision` kind (vision_<base>, e.g. vision_n5_m4_d144) for VLM evaluation.

A room's vision rows are made from its items of a base configuration and its two renders
(pipeline.render), drawn with every prominent object labelled as the base stories name it
(`story_labels`): the top-down image goes with the top-down view, the south-door image with the
north-facing view. Rows are told apart by `modality`:

* "image+story": every base item whose query objects the view's image shows, unchanged, with that
  image added. The answer is still the consistency checker's answer set for the story: the image
  shows where things are, the question asks what the story allows.
* The same question three ways, about pairs of prominent objects that the view's image shows
  clearly: "image" (the image and the view's frame sentence, no story), "text" (no image; a story
  giving the centre of every object the image labels, in metres, as the image places them) and
  "image+text" (both). The answer is the relation between the two centres in metres, as the
  single answer (FR), or Yes iff the candidate is that relation (YN). A pair is clear when both
  objects are labelled in the image (visible) and, on each axis, their centres either coincide (as
  ProcTHOR's aligned groups do) or lie at least VISIBLE_OFFSET apart, so that no answer hangs on a
  few centimetres. Up to PAIRS_PER_VIEW pairs per room and view are drawn (rooms weigh equally),
  each asked as FR and YN; half of a room's YN questions per view ask the true relation. The rows
  of one pair, view and question type share `pair`, so a model's scores on the three can be
  compared item by item.

`vision_rows(scene, items, images)` is a pure function giving a row per image (`VisionImage`, the
kind's RECORD, its questions `VisionItem`s in `items`, stored once per image; its Hugging Face
features, the image as `datasets.Image()` with its PNG bytes embedded, are derived in
pipeline.dataset.rows); `vision_questions` reads them a question per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from random import Random

from pipeline.data import data_json
from pipeline.dataset.layout import IMAGE, IMAGELESS, QUESTIONS
from pipeline.dataset.rows import row_json
from pipeline.errors import RoomspaceError
from pipeline.render.job import offline_images
from pipeline.render.png import IMAGES, image_labels
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.relations import DIRECTIONS, direction_of_points, relation_words
from pipeline.spatial.topology import ROOM
from pipeline.text.configs import Config
from pipeline.text.items import Item, Query, init_fields
from pipeline.text.kinds import KINDS, Room
from pipeline.text.prompts import AGENT_VIEW, CENTRES_SETTING, IMAGE_ONLY_SETTING, PAIR_MODALITIES
from pipeline.text.stories import Teller
from pipeline.text.words import Phrases, Wording, object_labels, sentence, type_words

IMAGE_OF_VIEW = {"top_down": "top_down", "north_facing": "south_door"}
IMAGE_OF_STORY = {**IMAGE_OF_VIEW, AGENT_VIEW: "first_person"}  # an agent row's story frame: its image
VISIBLE_OFFSET = 0.2  # m: centres closer than this on an axis (but not equal) make no image question
SAME_AXIS = 1e-6  # m: relations.direction_of_points counts offsets this small as equal
PAIRS_PER_VIEW = 4  # clear pairs asked per room and view, at most
KIND = KINDS["vision"]


@dataclass(frozen=True)
class Pictured:
    """What a question of a vision configuration adds to its row: how it goes with its image."""

    # "image+story" (answered from the story), or a pair question asked as "image", "text" (the
    # centres in metres, the image not sent) or "image+text" (pipeline.dataset.vision)
    modality: str
    pair: int | None  # a pair question's number in its room and view: its modalities share it
    image_name: str  # "top_down", "south_door" or "first_person"


@dataclass(frozen=True)
class VisionItem(Pictured, Item):  # Pictured first: its fields come after the Item's
    """A question of a vision configuration: an Item asked with its image, or about it without it."""


@dataclass(frozen=True)
class VisionImage:
    """One row of a vision configuration: an image and every question asked with it or about it.

    The image is stored once however many questions use it, so that a loaded vision configuration
    grows with its images, not its questions; pipeline.dataset.layout reads it a question per row.
    """

    id: str  # <room_id>-<config>-<image_name>
    room_id: str
    room_index: int
    config: str
    image_name: str
    image: bytes  # the PNG
    items: tuple[VisionItem, ...]


RECORD = VisionImage


def rows(room: Room, config: Config) -> list[VisionImage]:
    """The room's vision rows of one base configuration: its base items with the room's renders."""
    items = room.rows("base", config)
    return vision_rows(room.scene, items, room_images(room, config)) if items else []


def room_images(room: Room, config: Config) -> dict[str, bytes]:
    """The room's renders with every prominent object labelled as the configuration's stories name it
    (made once per room and configuration: the vision_agent kind shows them too)."""
    return room.shared(("images", config), lambda: offline_images(room.scene, room.house,
                                                                  names=room_labels(room, config)))


def room_labels(room: Room, config: Config) -> dict[str, str]:
    return room.shared(("labels", config), lambda: story_labels(room.scene, room.rows("base", config)))


def story_labels(scene: Scene, items: Sequence[Item]) -> dict[str, str]:
    """{object id: name} of every prominent object: the base stories' names for theirs (`items`: one
    room and configuration), pipeline.text.words.object_labels for the others."""
    named = {_scene_object(scene, o).id: o.name for o in items[0].objects} if items else {}
    return object_labels(scene.prominent, named)


def vision_rows(scene: Scene, items: Sequence[Item], images: Mapping[str, bytes]) -> list[VisionImage]:
    """The vision rows of one room, one per image (`VisionImage`), each with its questions:
    image+story questions, then the view's pair questions three ways.

    `items` are the room's items of one base configuration (items.room_items), `images` its
    renders by name ("top_down", "south_door": PNG bytes, labelled with `story_labels`). No
    items, no rows. An image that records no labels (AI2-THOR) gets image+story questions only.
    """
    if not items:
        return []
    missing = [name for name in IMAGES if name not in images]
    if missing:
        raise RoomspaceError(f"room {scene.room_id}: no {', '.join(missing)} image for its vision rows")
    if {(i.room_id, i.config) for i in items} != {(scene.room_id, items[0].config)}:
        raise RoomspaceError(f"vision rows need the items of room {scene.room_id} and one configuration")
    config = KIND.config_name(items[0].config)
    labels = {name: image_labels(images[name]) for name in IMAGES}
    asked: dict[str, list[VisionItem]] = {name: [] for name in IMAGES}
    for item in items:
        name = IMAGE_OF_VIEW[item.view]
        if labels[name] is not None and not set(item.query.pair) - {ROOM} <= set(labels[name].values()):
            continue  # the view hides a queried object: no image+story question about it in this view
        renamed = {"config": config, "id": f"{item.room_id}-{config}-{item.setting}-{item.view}-{item.question_type}"}
        asked[name].append(VisionItem(**{**init_fields(item), **renamed}, modality="image+story", pair=None,
                                      image_name=name))
    for view, name in IMAGE_OF_VIEW.items():
        if labels[name] is not None:
            shown = [o for o in scene.prominent if o.id in labels[name]]
            asked[name].extend(_pair_questions(scene, items[0], config, view, name, shown, labels[name]))
    return [VisionImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name, images[name],
                        tuple(questions))
            for name, questions in asked.items() if questions]


def vision_questions(rows: Sequence[VisionImage]) -> list[dict]:
    """The questions of image rows, a dict each, with the image sent with it (None for a "text" one):
    what pipeline.dataset.layout reads from the files."""
    return [{**question, IMAGE: None if question["modality"] == IMAGELESS else row[IMAGE]}
            for row in map(row_json, rows) for question in row[QUESTIONS]]


def _scene_object(scene: Scene, story_object) -> SceneObject:
    for obj in scene.prominent:
        if (obj.type, obj.x, obj.z) == (story_object.type, story_object.x, story_object.z):
            return obj
    raise RoomspaceError(f"room {scene.room_id}: its items name a {story_object.type} that is not in the scene")


def _clear(a: SceneObject, b: SceneObject) -> bool:
    """On each axis the centres coincide or lie VISIBLE_OFFSET apart, and they differ on one axis."""
    offsets = (abs(a.x - b.x), abs(a.z - b.z))
    return all(d <= SAME_AXIS or d >= VISIBLE_OFFSET for d in offsets) and max(offsets) >= VISIBLE_OFFSET


def _draw_pairs(shown: Sequence[SceneObject], rng: Random) -> tuple[list[tuple[SceneObject, SceneObject]], set[int]]:
    """Up to PAIRS_PER_VIEW clear pairs, each in a drawn order, and which of them a YN question asks
    truly: half, an odd count's extra by lot."""
    pairs = [pair for pair in combinations(shown, 2) if _clear(*pair)]
    chosen = [pair if rng.random() < 0.5 else pair[::-1] for pair in rng.sample(pairs, min(PAIRS_PER_VIEW, len(pairs)))]
    yes = set(rng.sample(range(len(chosen)), (len(chosen) + rng.randrange(2)) // 2)) if chosen else set()
    return chosen, yes


def _pair_questions(scene: Scene, item: Item, config: str, view: str, image_name: str,
                    shown: Sequence[SceneObject], labels: Mapping[str, str]) -> list[VisionItem]:
    """FR and YN questions about up to PAIRS_PER_VIEW clear pairs, each asked in every modality."""
    rng = Random(derive_seed(scene.room_id, config, "image", view))
    chosen, yes = _draw_pairs(shown, rng)
    if not chosen:
        return []
    names = [labels[o.id] for o in shown]
    phrases = Phrases(names, [type_words(o.type) for o in shown])
    centres = {labels[o.id]: (round(o.x, 2), round(o.z, 2)) for o in shown}
    texts = data_json("templates.json")
    story = {
        "image": sentence(rng.choice(texts["frame"][view])),
        "text": Teller(Wording(phrases)).centres(scene.room_type, scene.side, centres, names, view, rng),
    }
    story["image+text"] = story["text"]
    yes_word, no_word = texts["yes_no"]
    common = dict(
        init_fields(item), config=config, view=view, facts=(), answer_set_size=1, hops=0, objects=(), topology=(),
        path=(), path_text="", path_decides=False, tightness=0.0, layout_decides=False, image_name=image_name,
    )
    out = []
    for k, (a, b) in enumerate(chosen):
        truth = direction_of_points((a.x, a.z), (b.x, b.z))
        if direction_of_points(centres[labels[a.id]], centres[labels[b.id]]) != truth:
            raise RoomspaceError(f"room {scene.room_id}: stated centres of {labels[a.id]} and {labels[b.id]} "
                                 f"do not keep their relation {truth}")
        subject, obj = phrases.ref(labels[a.id]), phrases.ref(labels[b.id])
        fr_question = sentence(rng.choice(texts["question"]["FR"][view]).format(a=subject, b=obj))
        candidate = truth if k in yes else rng.choice([c for c in DIRECTIONS if c != truth])
        yn_question = sentence(rng.choice(texts["pair_yes_no"][view]).format(
            a=subject, b=obj, relation=relation_words(candidate, view, "phrase")))
        pair = dict(common, answer_set=(truth,), true_relation=truth, continuous_relation=truth, pair=k,
                    query=Query(labels[a.id], labels[b.id]), story_order=tuple(names))
        for modality in PAIR_MODALITIES:
            setting = IMAGE_ONLY_SETTING if modality == "image" else CENTRES_SETTING
            prefix = f"{item.room_id}-{config}-{setting}-{view}-{modality}-p{k}"
            asked = dict(pair, setting=setting, story=story[modality], modality=modality)
            out.append(VisionItem(**{
                **asked, "id": f"{prefix}-FR", "question_type": "FR", "question": fr_question, "candidate": None,
                "options": tuple(relation_words(c, view, "label") for c in DIRECTIONS),
                "answer": relation_words(truth, view, "label")}))
            out.append(VisionItem(**{
                **asked, "id": f"{prefix}-YN", "question_type": "YN", "question": yn_question, "candidate": candidate,
                "options": (yes_word, no_word), "answer": yes_word if candidate == truth else no_word}))
    return out
