"""The `vision_agent` kind (vision_agent_<base>): the agent rows with their images.

Each agent row (pipeline.text.agents) goes with the image of its story's frame: the plan, the
door view, or the first-person view from the story's observer (pipeline.render.door.pose_png,
labelled as the base stories name the objects); then pair questions on the first-person image,
answered by the relation of the centres as the observer sees it. The image rows are `AgentImage`,
the kind's RECORD, read a question per row like the vision kind's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random

from pipeline.data import data_json
from pipeline.dataset.vision import IMAGE_OF_STORY, Pictured, VisionImage, _draw_pairs, room_images, room_labels
from pipeline.errors import RoomspaceError
from pipeline.render.door import pose_png
from pipeline.render.png import image_labels
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.frames import OBSERVER, seen_facing
from pipeline.spatial.relations import DIRECTIONS, direction_of_points, relation_words
from pipeline.text.agents import AgentItem, Pose, observer_frame
from pipeline.text.configs import Config
from pipeline.text.items import Query, init_fields
from pipeline.text.kinds import KINDS, Room, parse
from pipeline.text.prompts import AGENT_VIEW, IMAGE_ONLY_SETTING
from pipeline.text.words import Phrases, sentence, type_words

KIND = KINDS["vision_agent"]


@dataclass(frozen=True)
class AgentVisionItem(Pictured, AgentItem):
    """A question of a vision_agent configuration: an agent row asked with the image of its story's frame."""


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
        shown = [o for o in scene.prominent if o.id in shown_labels]
        asked["first_person"].extend(_seen_pair_questions(scene, rows[0], config, observer, shown, shown_labels))
    return [AgentImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name, images[name],
                       tuple(questions))
            for name, questions in asked.items() if questions]


def _seen_pair_questions(scene: Scene, row: AgentItem, config: str, observer: Pose, shown: Sequence[SceneObject],
                         labels: Mapping[str, str]) -> list[AgentVisionItem]:
    """FR and YN questions about clear pairs of the first-person image, in the observer's words."""
    rng = Random(derive_seed(scene.room_id, config, "image", "first_person"))
    chosen, yes = _draw_pairs(shown, rng)
    names = [labels[o.id] for o in shown]
    phrases = Phrases(names, [type_words(o.type) for o in shown])
    seen = data_json("agents.json")["seen"]
    yes_word, no_word = data_json("templates.json")["yes_no"]
    common = dict(
        init_fields(row, AgentItem), config=config, setting=IMAGE_ONLY_SETTING, story=observer_frame(observer, rng), facts=(),
        answer_set_size=1, hops=0, objects=(), topology=(), path=(), path_text="", path_decides=False,
        tightness=0.0, layout_decides=False, story_order=tuple(names), kind="agent", story_view=AGENT_VIEW,
        story_pose=observer, question_pose=observer, frame_changes=0, frame_angle=0,
        modality="image", image_name="first_person",
    )
    labels_seen = tuple(relation_words(c, OBSERVER, "label") for c in DIRECTIONS)
    out = []
    for k, (a, b) in enumerate(chosen):
        truth = seen_facing(direction_of_points((a.x, a.z), (b.x, b.z)), observer.facing)
        subject, obj = phrases.ref(labels[a.id]), phrases.ref(labels[b.id])
        candidate = truth if k in yes else rng.choice([c for c in DIRECTIONS if c != truth])
        pair = dict(common, answer_set=(truth,), true_relation=truth, continuous_relation=truth, pair=k,
                    query=Query(labels[a.id], labels[b.id]))
        prefix = f"{scene.room_id}-{config}-{IMAGE_ONLY_SETTING}-first_person-p{k}"
        out.append(AgentVisionItem(**{
            **pair, "id": f"{prefix}-FR", "question_type": "FR", "candidate": None, "options": labels_seen,
            "question": sentence(rng.choice(seen["FR"]).format(a=subject, b=obj)),
            "answer": relation_words(truth, OBSERVER, "label")}))
        out.append(AgentVisionItem(**{
            **pair, "id": f"{prefix}-YN", "question_type": "YN", "candidate": candidate, "options": (yes_word, no_word),
            "question": sentence(rng.choice(seen["YN"]).format(a=subject, b=obj,
                                                               relation=relation_words(candidate, OBSERVER, "phrase"))),
            "answer": yes_word if candidate == truth else no_word}))
    return out
