"""Multimodal rows: the `vision_<base>` configurations (e.g. vision_n5_m4_d144) for VLM evaluation,
and `vision_agent_<base>`, the agent rows with their images (`agent_vision_rows`, at the end).

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

`vision_rows(scene, items, images)` is a pure function giving a row per image (`VisionImage`, its
questions `VisionItem`s in `items`, stored once per image; the records and their Hugging Face
features, the image as `datasets.Image()` with its PNG bytes embedded, are in
pipeline.dataset.rows); `vision_questions` reads them back a question per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from random import Random

from pipeline.data import data_json
from pipeline.dataset.layout import IMAGE, IMAGELESS, QUESTIONS
from pipeline.dataset.rows import (VISION_AGENT_PREFIX, VISION_PREFIX, AgentImage, AgentVisionItem, VisionImage, VisionItem,
                                   to_vision_row)
from pipeline.errors import RoomspaceError
from pipeline.render.png import IMAGES, image_labels
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.frames import OBSERVER, seen_facing
from pipeline.spatial.relations import DIRECTIONS, direction_of_points, relation_words
from pipeline.spatial.topology import ROOM
from pipeline.text.agents import AGENT_PREFIX, AgentItem, Pose, observer_frame
from pipeline.text.items import Item, Query, init_fields
from pipeline.text.prompts import AGENT_VIEW, CENTRES_SETTING, IMAGE_ONLY_SETTING, PAIR_MODALITIES
from pipeline.text.stories import Teller
from pipeline.text.words import Phrases, Wording, object_labels, sentence, type_words

IMAGE_OF_VIEW = {"top_down": "top_down", "north_facing": "south_door"}
IMAGE_OF_STORY = {**IMAGE_OF_VIEW, AGENT_VIEW: "first_person"}  # an agent row's story frame: its image
VISIBLE_OFFSET = 0.2  # m: centres closer than this on an axis (but not equal) make no image question
SAME_AXIS = 1e-6  # m: relations.direction_of_points counts offsets this small as equal
PAIRS_PER_VIEW = 4  # clear pairs asked per room and view, at most


def vision_config_name(base: str) -> str:
    return f"{VISION_PREFIX}{base}"


def story_labels(scene: Scene, items: Sequence[Item]) -> dict[str, str]:
    """{object id: name} of every prominent object: the base stories' names for theirs (`items`: one
    room and configuration), pipeline.text.words.object_labels for the others."""
    named = {_scene_object(scene, o).id: o.name for o in items[0].objects} if items else {}
    return object_labels(scene.prominent, named)


def vision_rows(scene: Scene, items: Sequence[Item], images: Mapping[str, bytes]) -> list[dict]:
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
    config = vision_config_name(items[0].config)
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
    return [to_vision_row(VisionImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name,
                                      images[name], tuple(questions)))
            for name, questions in asked.items() if questions]


def vision_questions(rows: Sequence[dict]) -> list[dict]:
    """The questions of vision rows, a dict each, with the image sent with it (None for a "text" one):
    what pipeline.dataset.layout reads from the files."""
    return [{**question, IMAGE: None if question["modality"] == IMAGELESS else row[IMAGE]}
            for row in rows for question in row[QUESTIONS]]


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


def vision_agent_config_name(base: str) -> str:
    return f"{VISION_AGENT_PREFIX}{base}"


def agent_vision_rows(scene: Scene, rows: Sequence[AgentItem], images: Mapping[str, bytes]) -> list[dict]:
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
    config = vision_agent_config_name(rows[0].config.removeprefix(AGENT_PREFIX))
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
    return [to_vision_row(AgentImage(f"{scene.room_id}-{config}-{name}", scene.room_id, scene.index, config, name,
                                     images[name], tuple(questions)))
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
