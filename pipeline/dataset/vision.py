"""Multimodal rows: the `vision` kind (vision_<base>, e.g. vision_n5_m4_d144) for VLM evaluation.

A room's vision rows are made from its items of a base configuration and its two renders
(pipeline.render), drawn with every prominent object labelled as the base stories name it
(pipeline.text.pictured.story_labels): the top-down image goes with the top-down view, the
south-door image with the north-facing view. Rows are told apart by `modality`:

* "image+story": every base item whose query objects the view's image shows, unchanged, with that
  image added. The answer is still the consistency checker's answer set for the story: the image
  shows where things are, the question asks what the story allows.
* "image", "text" and "image+text": the same question three ways about a pair of prominent objects
  that the view's image shows clearly, answered by the relation the picture shows, which the
  grid and the centres in metres agree with (pipeline.text.pictured.pair_questions, given the
  labels the image records and, for the door view, what its camera sees of each object).

`vision_rows(scene, items, images, ...)` is a pure function giving the room's questions by image
(`VisionImage`: an image and its `VisionItem`s); `stored_rows` makes them the configuration's
rows, a question each with its image (`VisionQuestion`, the kind's RECORD; its Hugging Face
features, the image as `datasets.Image()` with its PNG bytes embedded, are derived in
pipeline.dataset.rows), each PNG stored once in the files the vision kinds share
(pipeline.dataset.layout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.dataset.layout import IMAGELESS
from pipeline.dataset.rows import row_json
from pipeline.errors import RoomspaceError
from pipeline.render.door import south_door_sightings
from pipeline.render.png import IMAGES, covered_objects, image_labels
from pipeline.scene.records import Scene
from pipeline.spatial.topology import ROOM
from pipeline.text.configs import Config
from pipeline.text.items import Item, init_fields
from pipeline.text.kinds import KINDS, Room
from pipeline.text.pictured import (MARKED, AgentVisionItem, CameraPose, Picture, Sighting, VisionItem, markers,
                                    pair_questions, story_labels)
from pipeline.text.prompts import AGENT_VIEW

IMAGE_OF_VIEW = {"top_down": "top_down", "north_facing": "south_door"}
IMAGE_OF_STORY = {**IMAGE_OF_VIEW, AGENT_VIEW: "first_person"}  # an agent row's story frame: its image
KIND = KINDS["vision"]


@dataclass(frozen=True)
class VisionImage:
    """An image of a vision configuration and every question asked with it or about it: how a room's
    questions are made, before they are stored a question per row (`stored_rows`)."""

    id: str  # <room_id>-<config>-<image_name>: the image's id
    room_id: str
    room_index: int
    config: str
    image_name: str
    image: bytes  # the PNG
    items: tuple[VisionItem, ...]


@dataclass(frozen=True)
class VisionQuestion(VisionItem):
    """One row of a vision configuration: a question and the image it goes with (pipeline.dataset.layout)."""

    image_id: str  # the image's id (VisionImage.id)
    image: bytes | None  # the PNG; None for a "text" question (asked without it)


@dataclass(frozen=True)
class AgentVisionQuestion(AgentVisionItem):
    """One row of a vision_agent configuration: an agent question and the image it goes with."""

    image_id: str
    image: bytes | None


RECORD = VisionQuestion
STORED = {VisionItem: VisionQuestion, AgentVisionItem: AgentVisionQuestion}  # a question's record -> its row's


def rows(room: Room, config: Config) -> list[VisionQuestion]:
    """The room's vision rows of one base configuration: its questions, each with its image."""
    return stored_rows(image_rows(room, config))


def image_rows(room: Room, config: Config) -> list[VisionImage]:
    """The room's vision questions by image: its base items with the room's renders."""
    def made() -> list[VisionImage]:
        items = room.rows("base", config)
        if not items:
            return []
        marked = labelled_images(room, markers(room.scene)) if config.balanced and not config.hard else None
        return vision_rows(room.scene, items, room_images(room, config), door_sightings(room), marked,
                           pairs=not config.hard)

    return room.shared(("vision images", config), made)


def stored_rows(images: Sequence[VisionImage]) -> list[VisionQuestion]:
    """The file rows of a room's images and their questions: each question with its image's id and
    PNG, the PNG left out of a "text" question (sent without it). The files store each PNG once
    however many rows carry it (pipeline.dataset.layout)."""
    out = []
    for image in images:
        for question in image.items:
            record = STORED[type(question)]
            out.append(record(**init_fields(question, type(question)), image_id=image.id,
                              image=None if question.modality == IMAGELESS else image.image))
    return out


def door_sightings(room: Room) -> tuple[CameraPose, Mapping[str, Sighting]]:
    """The south-door camera and what its picture shows of each object (made once per room)."""
    return room.shared(("door sightings",), lambda: south_door_sightings(room.scene, room.house))


def room_images(room: Room, config: Config) -> dict[str, bytes]:
    """The room's renders with every prominent object labelled as the configuration's stories name it
    (made once per room and labelling: the vision_agent kind shows them too, and a balanced
    configuration, telling the paper's stories, has the paper's)."""
    return labelled_images(room, room_labels(room, config))


def labelled_images(room: Room, names: Mapping[str, str]) -> dict[str, bytes]:
    """The room's renders with its prominent objects labelled by `names` (made once per room and labelling)."""
    return room.shared(("images", tuple(sorted(names.items()))),
                       lambda: room.renderer.images(room.scene, room.house, names=names))


def room_labels(room: Room, config: Config) -> dict[str, str]:
    return room.shared(("labels", config), lambda: story_labels(room.scene, room.rows("base", config)))


def vision_rows(scene: Scene, items: Sequence[Item], images: Mapping[str, bytes],
                door: tuple[CameraPose, Mapping[str, Sighting]],
                marked: Mapping[str, bytes] | None = None, pairs: bool = True) -> list[VisionImage]:
    """The vision questions of one room by image (`VisionImage`, an image and its questions):
    image+story questions, then (with `pairs`) the view's pair questions three ways: a hard
    configuration asks none, a picture's pair being no question only search answers.

    `items` are the room's items of one base configuration (items.room_items), `images` its
    renders by name ("top_down", "south_door": PNG bytes, labelled with `story_labels`), `door`
    the south-door camera and what it shows of each object (`door_sightings`). A balanced
    configuration's pair questions are drawn by target about `marked`: the same renders with the
    objects marked by letters (pipeline.text.pictured.markers), named MARKED + the view's image.
    No items, no rows. An image that records no labels (AI2-THOR) gets image+story questions only.
    """
    if not items:
        return []
    missing = [name for name in IMAGES if name not in images or marked is not None and name not in marked]
    if missing:
        raise RoomspaceError(f"room {scene.room_id}: no {', '.join(missing)} image for its vision rows")
    if {(i.room_id, i.config) for i in items} != {(scene.room_id, items[0].config)}:
        raise RoomspaceError(f"vision rows need the items of room {scene.room_id} and one configuration")
    config = KIND.config_name(items[0].config)
    pngs = {**images, **{MARKED + name: png for name, png in (marked or {}).items()}}
    labels = {name: image_labels(png) for name, png in pngs.items()}
    covered = {name: covered_objects(png) for name, png in pngs.items()}
    asked: dict[str, list[VisionItem]] = {name: [] for name in pngs}
    for item in items:
        name = IMAGE_OF_VIEW[item.view]
        shown = labels[name] and {label for i, label in labels[name].items() if i not in covered[name]}
        if labels[name] is not None and not set(item.query.pair) - {ROOM} <= shown:
            continue  # the view hides a queried object (or a label covers it): no image+story question about it
        renamed = {"config": config, "id": item.id.replace(f"-{item.config}-", f"-{config}-", 1)}
        asked[name].append(VisionItem(**{**init_fields(item), **renamed}, modality="image+story", pair=None,
                                      image_name=name, camera=door[0] if name == "south_door" else None))
    for view, name in IMAGE_OF_VIEW.items() if pairs else ():
        asked_about = name if marked is None else MARKED + name
        if labels[asked_about] is not None:
            camera, seen = door if name == "south_door" else (None, None)
            picture = Picture(asked_about, labels[asked_about], camera, seen, covered[asked_about])
            asked[asked_about].extend(pair_questions(scene, items[0], config, view, picture, marked is not None))
    return [VisionImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name, pngs[name],
                        tuple(questions))
            for name, questions in asked.items() if questions]


def vision_questions(images: Sequence[VisionImage]) -> list[dict]:
    """The questions of a room's images, a dict each, as its files hold them (`stored_rows`), each
    with the image it is sent with ({"bytes", "path"}; None for a "text" one)."""
    return [row_json(row) for row in stored_rows(images)]
