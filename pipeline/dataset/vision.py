"""Multimodal rows: the `vision_<base>` configurations (e.g. vision_n5_m4_d144) for VLM evaluation.

A room's vision rows are made from its items of a base configuration and its two renders
(pipeline.render): the top-down image goes with the top-down view, the south-door image with the
north-facing view. Two kinds of row, told apart by `modality`:

* "image+story": every base item, unchanged, with the image of its view added. The answer is
  still the consistency checker's answer set for the story: the image shows where things are,
  the question asks what the story allows.
* "image": no story (only the view's frame sentence, which says what the direction words mean),
  a question about the base query pair (o_1, o_n), answered by what the image shows: the
  relation between the two objects' centres in metres, `continuous_relation`, as the single
  answer (FR) or Yes iff the candidate is that relation (YN). Made for a view only when the
  question can be read off its image: both objects are labelled in it (visible), each is the
  only prominent object of its type (the image labels type words, unnumbered), and on each axis
  their centres either coincide (as ProcTHOR's aligned groups do) or lie at least
  VISIBLE_OFFSET apart, so that no answer hangs on a few centimetres.

`vision_rows(scene, items, images)` is a pure function; the rows' record, `VisionItem`, and its
Hugging Face features (the image as `datasets.Image()`, PNG bytes embedded in Parquet) are in
pipeline.dataset.rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from random import Random

from pipeline.data import data_json
from pipeline.dataset.rows import VISION_PREFIX, VisionItem, to_vision_row
from pipeline.errors import RoomspaceError
from pipeline.render.png import IMAGES, image_labels
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.relations import DIRECTIONS, relation_words
from pipeline.text.items import Item, StoryObject
from pipeline.text.prompts import IMAGE_ONLY_SETTING
from pipeline.text.words import sentence, type_words

IMAGE_OF_VIEW = {"top_down": "top_down", "north_facing": "south_door"}
VISIBLE_OFFSET = 0.2  # m: centres closer than this on an axis (but not equal) make no image-only question
SAME_AXIS = 1e-6  # m: relations.direction_of_points counts offsets this small as equal


def vision_config_name(base: str) -> str:
    return f"{VISION_PREFIX}{base}"


def vision_rows(scene: Scene, items: Sequence[Item], images: Mapping[str, bytes]) -> list[dict]:
    """The vision rows of one room: image+story rows for every item, then the image-only rows.

    `items` are the room's items of one base configuration (items.room_items), `images` its
    renders by name ("top_down", "south_door": PNG bytes). No items, no rows.
    """
    missing = [name for name in IMAGES if name not in images]
    if missing:
        raise RoomspaceError(f"room {scene.room_id}: no {', '.join(missing)} image for its vision rows")
    if not items:
        return []
    if {(i.room_id, i.config) for i in items} != {(scene.room_id, items[0].config)}:
        raise RoomspaceError(f"vision rows need the items of room {scene.room_id} and one configuration")
    config = vision_config_name(items[0].config)
    rows = []
    for item in items:
        name = IMAGE_OF_VIEW[item.view]
        renamed = {"config": config, "id": f"{item.room_id}-{config}-{item.setting}-{item.view}-{item.question_type}"}
        rows.append(to_vision_row(VisionItem(
            **{**_fields(item), **renamed}, modality="image+story", image_name=name, image=images[name],
        )))
    for view, name in IMAGE_OF_VIEW.items():
        labels = image_labels(images[name])
        base = [i for i in items if i.view == view]
        if labels is not None and base and _readable(scene, base[0], labels):
            rows.extend(to_vision_row(row) for row in _image_only(base[0], config, view, name, images[name]))
    return rows


def _fields(item: Item) -> dict:
    """The fields an Item is made from (its prompt is made from them again)."""
    return {f.name: getattr(item, f.name) for f in dataclasses.fields(Item) if f.init}


def _scene_object(scene: Scene, story_object: StoryObject) -> SceneObject:
    for obj in scene.prominent:
        if (obj.type, obj.x, obj.z) == (story_object.type, story_object.x, story_object.z):
            return obj
    raise RoomspaceError(f"room {scene.room_id}: its items name a {story_object.type} that is not in the scene")


def _readable(scene: Scene, item: Item, labels: Mapping[str, str]) -> bool:
    """Whether the query of `item` can be answered from an image with these labels (module docstring)."""
    a, b = _scene_object(scene, item.objects[0]), _scene_object(scene, item.objects[-1])
    words = [type_words(o.type) for o in scene.prominent]
    unique = words.count(type_words(a.type)) == 1 and words.count(type_words(b.type)) == 1
    clear = all(abs(d) <= SAME_AXIS or abs(d) >= VISIBLE_OFFSET for d in (a.x - b.x, a.z - b.z))
    return unique and clear and a.id in labels and b.id in labels


def _image_only(item: Item, config: str, view: str, image_name: str, png: bytes) -> list[VisionItem]:
    """The FR and YN questions of the query pair, answered by the relation the image shows."""
    templates = data_json("templates.json")
    rng = Random(derive_seed(item.room_id, config, "image", view))
    truth = item.continuous_relation
    a, b = f"the {item.query.subject}", f"the {item.query.object}"
    frame = sentence(rng.choice(templates["frame"][view]))
    common = dict(
        _fields(item), config=config, setting=IMAGE_ONLY_SETTING, view=view, story=frame, facts=(),
        answer_set=(truth,), answer_set_size=1, hops=0, modality="image", image_name=image_name, image=png,
    )
    prefix = f"{item.room_id}-{config}-{IMAGE_ONLY_SETTING}-{view}"
    fr = VisionItem(**{
        **common, "id": f"{prefix}-FR", "question_type": "FR", "candidate": None,
        "question": sentence(rng.choice(templates["question"]["FR"][view]).format(a=a, b=b)),
        "options": tuple(relation_words(code, view, "label") for code in DIRECTIONS),
        "answer": relation_words(truth, view, "label"),
    })
    yes, no = templates["yes_no"]
    candidate = truth if rng.random() < 0.5 else rng.choice([c for c in DIRECTIONS if c != truth])
    yn = VisionItem(**{
        **common, "id": f"{prefix}-YN", "question_type": "YN", "candidate": candidate,
        "question": sentence(rng.choice(templates["question"]["YN"][view]).format(
            a=a, b=b, relation=relation_words(candidate, view, "phrase"))),
        "options": (yes, no), "answer": yes if candidate == truth else no,
    })
    return [fr, yn]
