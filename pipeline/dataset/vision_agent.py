"""The `vision_agent` kind (vision_agent_<base>): the agent rows with their images.

Each agent row (pipeline.text.agents) goes with the image of its story's frame: the plan, the
door view, or the first-person view from the story's observer (pipeline.render.door.pose_view,
labelled as the base stories name the objects), the last only when it shows every object the row
asks about (pipeline.text.pictured.Picture.shows), in a balanced configuration whatever it shows
(`agent_vision_rows`). Then pair questions on first-person images,
answered by the relation the picture shows (`seen_pair_questions` of pipeline.text.pictured):
on the observer's image and on images from further stances (pipeline.text.pictured.first_person_poses,
tried in their order) until FIRST_PERSON_IMAGES images have questions. A stance whose picture would
carry none, whose labels would not fit at a legible size, or where an object close to the camera fills
much of the picture (pipeline.render.door.View.blocked_by), is not drawn (a balanced configuration's
pair questions are about pictures marked by letters, pipeline.text.pictured.markers; its observer's
picture with the objects named is drawn for its agent rows apart; a hard configuration, docs/semantics.md
section 22, asks its agent rows with their images and no pair question). The image rows are
`AgentImage`; the kind's rows are their questions, each with its image (`AgentVisionQuestion`, the
kind's RECORD, stored as the vision kind's are: pipeline.dataset.vision.stored_rows), in the files
the vision kinds share, where the plan and door PNGs the vision configuration shows too are stored
once (pipeline.dataset.layout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pipeline.dataset.vision import (IMAGE_OF_STORY, IMAGE_OF_VIEW, AgentVisionQuestion, VisionImage, door_sightings,
                                     labelled_images, stored_rows)
from pipeline.errors import RoomspaceError
from pipeline.render.door import CrowdedPicture, View, pose_view
from pipeline.render.png import covered_objects, image_labels
from pipeline.scene.records import Scene
from pipeline.text.agents import AgentItem, Pose, camera_point
from pipeline.text.configs import Config
from pipeline.text.items import init_fields
from pipeline.text.kinds import KINDS, Room, parse
from pipeline.text.prompts import AGENT_VIEW
from pipeline.text.pictured import (MARKED, AgentVisionItem, CameraPose, Picture, clear_pairs, first_person_poses,
                                    markers, seen_pair_questions, story_labels)

KIND = KINDS["vision_agent"]
FIRST_PERSON = IMAGE_OF_STORY[AGENT_VIEW]  # the story observer's image; further stances' are FIRST_PERSON_<k>, k = 2, 3, ...
FIRST_PERSON_IMAGES = 2  # first-person images with questions per room, where STANCES_TRIED stances give them
STANCES_TRIED = 48  # first-person stances measured per room at most (most rooms need 2 or 3)


@dataclass(frozen=True)
class AgentImage(VisionImage):
    """One row of a vision_agent configuration: an image and the agent questions asked with it."""

    items: tuple[AgentVisionItem, ...]


@dataclass(frozen=True)
class FirstPerson:
    """A first-person image: the stance it was taken from, its PNG and what it shows."""

    pose: Pose
    png: bytes
    picture: Picture


RECORD = AgentVisionQuestion


def rows(room: Room, config: Config) -> list[AgentVisionQuestion]:
    """The room's vision_agent rows of one base configuration: its agent rows with the vision kind's
    renders, and first-person renders from the egocentric stories' observer and further stances."""
    agent_rows = room.rows("agent", config)
    if not agent_rows:
        return []
    scene = room.scene
    observer = _story_observer(agent_rows)
    # the objects named as the agent rows' stories name them (a hard configuration's base may ask nothing in a
    # room its agent rows ask in: its labels are the rows' own)
    names = story_labels(scene, agent_rows)
    marks = markers(scene) if config.balanced else None  # what a balanced configuration's pair questions' pictures show
    story_queries = [row.query.pair for row in agent_rows if row.story_view == AGENT_VIEW]
    views: list[FirstPerson] = []
    # a hard configuration asks no pair question about a picture alone (a picture's pair is no question only
    # search answers): no further stance is drawn
    poses = () if config.hard else room.shared(
        ("first-person poses", observer, config.d, config.balanced),
        lambda: first_person_poses(scene, observer, config.d, in_line=config.balanced))
    for pose in poses[:STANCES_TRIED]:
        if len(views) == FIRST_PERSON_IMAGES:
            break
        point = camera_point(scene, pose, config.d)
        view = _measured(room, point, pose.facing)
        if view.blocked_by is not None:  # an object close by fills the picture: not drawn
            continue
        name = FIRST_PERSON if pose == observer else f"{FIRST_PERSON}_{sum(v.pose != observer for v in views) + 2}"
        picture = Picture(name, {i: names[i] for i in view.labelled() if i in names}, view.camera, view.sightings)
        story_shown = pose == observer and any(all(_shows(scene, picture, n) for n in pair) for pair in story_queries)
        asks = bool(clear_pairs(scene, picture, config.d, in_line=config.balanced)) or (marks is None and story_shown)
        if not asks:  # drawn only now: a stance whose picture would carry no question is not drawn ...
            continue
        png = _drawn(room, point, pose.facing, view, names if marks is None else marks)
        if png is None:  # ... nor one whose labels do not fit at a legible size
            continue
        shown = name if marks is None else MARKED + name
        views.append(FirstPerson(pose, png, Picture(shown, image_labels(png) or {}, view.camera, view.sightings,
                                                    covered_objects(png))))
    if not config.balanced:  # the observer's picture, where drawn, goes with the rows whose story is told from there
        story_image = next((view for view in views if view.pose == observer), None)
    elif observer is None:  # a hard configuration with no question told from the observer's stance in the room
        story_image = None
    else:  # a picture of its own, the objects named, drawn for every room whose labels fit it
        point = camera_point(scene, observer, config.d)
        view = _measured(room, point, observer.facing)
        named = None if view.blocked_by is not None else _drawn(room, point, observer.facing, view, names)
        story_image = named and FirstPerson(observer, named, Picture(FIRST_PERSON, image_labels(named) or {},
                                                                     view.camera, view.sightings,
                                                                     covered_objects(named)))
    door = door_sightings(room)
    return stored_rows(agent_vision_rows(scene, agent_rows, labelled_images(room, names), door[0], views,
                                         config.balanced, story_image))


def _measured(room: Room, point: tuple[float, float], facing: str) -> View:
    """The first-person view from `point` facing `facing`, measured once per room (pose_view): its
    camera and sightings are kept for the room's other configurations, its frame only until drawn."""
    made: list[View] = []

    def measure() -> View:
        made.append(pose_view(room.scene, room.house, point, facing))
        return replace(made[0], frame=None)

    kept = room.shared(("first-person view", point, facing), measure)
    return made[0] if made else kept


def _drawn(room: Room, point: tuple[float, float], facing: str, view: View, names: Mapping[str, str]) -> bytes | None:
    """The view's PNG labelled with `names`, None where its labels do not fit (CrowdedPicture): drawn once
    per room and labelling, from the view's frame (measured again where the room's view kept none)."""
    def draw() -> bytes | None:
        drawable = view if view.frame is not None else pose_view(room.scene, room.house, point, facing)
        try:
            return room.renderer.view_png(room.scene, room.house, drawable, names)
        except CrowdedPicture:
            return None

    return room.shared(("first-person image", point, facing, tuple(sorted(names.items()))), draw)


def agent_vision_rows(scene: Scene, rows: Sequence[AgentItem], images: Mapping[str, bytes], door: CameraPose,
                      first_person: Sequence[FirstPerson], balanced: bool = False,
                      story_image: FirstPerson | None = None) -> list[AgentImage]:
    """The vision_agent rows of one room, one per image (`AgentImage`): each agent row with the image
    of its story's frame (the plan, the door view, or the first-person view from the story's
    observer, named FIRST_PERSON), then pair questions on every first-person image, answered by the
    relation the picture shows, numbered on across the images.

    `rows` are the room's agent rows of one configuration (agents.agent_items), `images` the plan
    and door renders by name, labelled with `story_labels`, `door` the south-door camera
    (CameraPose), `first_person` the first-person images the pair questions are about (`rows`), the
    story observer's first where it is drawn, `story_image` the observer's image the agent rows whose
    story is told from there go with (in a balanced configuration, whose pair questions' pictures
    mark objects by letters, another picture from the same stance, the objects named).
    """
    if not rows:
        return []
    missing = [name for name in IMAGE_OF_VIEW.values() if name not in images]
    if missing:
        raise RoomspaceError(f"room {scene.room_id}: no {', '.join(missing)} image for its vision_agent rows")
    observer = _story_observer(rows)
    if any(view.pose == observer for view in first_person[1:]):
        raise RoomspaceError(f"room {scene.room_id}: the story observer's first-person image must come first")
    config = KIND.config_name(parse(rows[0].config)[1])
    pictures = {name: Picture(name, image_labels(images[name]), door if name == "south_door" else None,
                              covered=covered_objects(images[name])) for name in IMAGE_OF_VIEW.values()}
    drawn = [*first_person, *([story_image] if story_image else [])]
    pictures.update({view.picture.name: view.picture for view in drawn})
    pictures.setdefault(FIRST_PERSON, Picture(FIRST_PERSON, {}))  # not drawn: it would have shown no question's objects
    pngs = {**images, **{view.picture.name: view.png for view in drawn}}
    asked: dict[str, list[AgentVisionItem]] = {name: [] for name in pictures}
    for row in rows:
        picture = pictures[IMAGE_OF_STORY[row.story_view]]
        # A balanced configuration asks every row with its image, whether or not the image shows the
        # objects asked about: rows kept for what their picture shows would be chosen by their
        # answers (the first-person ones whose two objects the observer sees were Yes 62% of the time).
        if picture.name not in pngs or (not balanced and picture.labels is not None and not all(
                _shows(scene, picture, name) for name in row.query.pair)):
            continue  # the image hides a queried object: no question about it with this image
        asked[picture.name].append(AgentVisionItem(**{**init_fields(row, AgentItem), "config": config,
                                                      "id": row.id.replace(row.config, config)},
                                                   modality="image+story", pair=None, image_name=picture.name,
                                                   camera=picture.camera))
    first = 0
    for view in first_person:
        pairs = seen_pair_questions(scene, rows[0], config, view.pose, view.picture, first, balanced)
        asked[view.picture.name].extend(pairs)
        first += sum(q.question_type == "YN" for q in pairs)  # one YN row per number, an FR row for most
    return [AgentImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name, pngs[name],
                       tuple(questions))
            for name, questions in asked.items() if questions]


def _story_observer(rows: Sequence[AgentItem]) -> Pose | None:
    """The egocentric stories' observer; None where no row is told from there (a hard configuration's
    framings ask only what search alone answers, and may ask nothing)."""
    return next((row.story_pose for row in rows if row.story_view == AGENT_VIEW), None)


def _shows(scene: Scene, picture: Picture, name: str) -> bool:
    """The picture shows the object its labels name `name` (Picture.shows)."""
    ids = [object_id for object_id, label in picture.labels.items() if label == name]
    return bool(ids) and picture.shows(next(o for o in scene.prominent if o.id == ids[0]))
