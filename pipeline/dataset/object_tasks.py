"""The object tasks kind (object_tasks_<base>, `build --object-tasks`): each task asked with its
description and with its picture (docs/semantics.md section 21).

pipeline.text.object_tasks makes the room's tasks and their rows from its small objects (the scene
record's, or placed now: pipeline.scene.small_objects.small_objects_of); this module draws each view's
picture once (pipeline.render.stack) and gives it to the image rows of the view's tasks. An image row
is left out where its picture could not label every thing its plan names (a thing hidden behind
others, or labels that do not fit); its text row stays.
"""

from __future__ import annotations

import dataclasses

from pipeline.render.door import CrowdedPicture
from pipeline.render.png import image_labels
from pipeline.render.stack import stack_png
from pipeline.scene.small_objects import small_objects_of
from pipeline.text.configs import Config
from pipeline.text.kinds import Room
from pipeline.text.object_tasks import ObjectTaskItem, picture_captions, picture_labels, task_items, views

RECORD = ObjectTaskItem


def rows(room: Room, config: Config) -> list[ObjectTaskItem]:
    scene = room.scene
    small = room.shared(("small objects",), lambda: small_objects_of(scene, room.house))
    items = task_items(scene, small, config)
    by_image = {view.image_name: view for view in views(scene, small)}
    out = []
    for item in items:
        if item.modality == "text":
            out.append(item)
            continue
        picture = room.shared(("stack picture", item.image_name), lambda: _picture(room, by_image[item.image_name],
                                                                                     small))
        if picture is None:
            continue
        png, labelled = picture
        view = by_image[item.image_name]
        if all(view.ids[step.object] in labelled for step in item.plan):
            out.append(dataclasses.replace(item, image=png))
    return out


def _picture(room: Room, view, small) -> tuple[bytes, set[str]] | None:
    """A view's PNG and the ids it labels; None where its labels do not fit."""
    held = set(view.ids.values())
    mine = [obj for obj in small if obj.id in held]
    try:
        png = stack_png(room.scene, room.house, view.furniture, mine, picture_labels(view), picture_captions(view),
                        view.image_name)
    except CrowdedPicture:
        return None
    return png, set(image_labels(png) or {})
