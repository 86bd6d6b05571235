"""The `vision_agent` kind (vision_agent_<base>): the agent rows with their images.

Each agent row (pipeline.text.agents) goes with the image of its story's frame: the plan, the
door view, or the first-person view from the story's observer (pipeline.render.door.pose_png,
labelled as the base stories name the objects); then pair questions on the first-person image,
answered by the relation of the centres as the observer sees it (`seen_pair_questions` of
pipeline.text.pictured, given the labels the image records). The image rows are `AgentImage`,
the kind's RECORD, read a question per row like the vision kind's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.dataset.vision import IMAGE_OF_STORY, VisionImage, room_images, room_labels
from pipeline.errors import RoomspaceError
from pipeline.render.door import pose_png
from pipeline.render.png import image_labels
from pipeline.scene.records import Scene
from pipeline.text.agents import AgentItem
from pipeline.text.configs import Config
from pipeline.text.items import init_fields
from pipeline.text.kinds import KINDS, Room, parse
from pipeline.text.pictured import AgentVisionItem, seen_pair_questions

KIND = KINDS["vision_agent"]


@dataclass(frozen=True)
class AgentImage(VisionImage):
    """One row of a vision_agent configuration: an image and the agent questions asked with it."""

    items: tuple[AgentVisionItem, ...]


RECORD = AgentImage


def rows(room: Room, config: Config) -> list[AgentImage]:
    """The room's vision_agent rows of one base configuration: its agent rows with the vision kind's
    renders and a first-person render from the egocentric stories' observer."""
    agent_rows = room.rows("agent", config)
    if not agent_rows:
        return []
    scene = room.scene
    observer = next(row.story_pose for row in agent_rows if row.kind == "agent")
    first_person = pose_png(scene, room.house, observer.point(scene.side, config.d), observer.facing,
                            room_labels(room, config))
    return agent_vision_rows(scene, agent_rows, {**room_images(room, config), "first_person": first_person})


def agent_vision_rows(scene: Scene, rows: Sequence[AgentItem], images: Mapping[str, bytes]) -> list[AgentImage]:
    """The vision_agent rows of one room, one per image (`AgentImage`): each agent row with the image
    of its story's frame (the plan, the door view, or the first-person view from the story's
    observer), then pair questions on the first-person image, answered by the relation of the
    centres as the observer sees it.

    `rows` are the room's agent rows of one configuration (agents.agent_items), `images` its
    renders by name, labelled with `story_labels` ("first_person" from the observer's `Pose.point`).
    """
    if not rows:
        return []
    missing = [name for name in IMAGE_OF_STORY.values() if name not in images]
    if missing:
        raise RoomspaceError(f"room {scene.room_id}: no {', '.join(missing)} image for its vision_agent rows")
    config = KIND.config_name(parse(rows[0].config)[1])
    labels = {name: image_labels(images[name]) for name in IMAGE_OF_STORY.values()}
    asked: dict[str, list[AgentVisionItem]] = {name: [] for name in IMAGE_OF_STORY.values()}
    for row in rows:
        name = IMAGE_OF_STORY[row.story_view]
        if labels[name] is not None and not set(row.query.pair) <= set(labels[name].values()):
            continue  # the image hides a queried object: no question about it with this image
        asked[name].append(AgentVisionItem(**{**init_fields(row, AgentItem), "config": config,
                                              "id": row.id.replace(row.config, config)},
                                           modality="image+story", pair=None, image_name=name))
    observer = next(row.story_pose for row in rows if row.kind == "agent")
    shown_labels = labels["first_person"]
    if shown_labels is not None:
        asked["first_person"].extend(seen_pair_questions(scene, rows[0], config, observer, shown_labels))
    return [AgentImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name, images[name],
                       tuple(questions))
            for name, questions in asked.items() if questions]
