"""Questions about what a picture shows: the questions of the vision kinds (docs/semantics.md section 12).

An image of a room labels every prominent object as the base stories name it (`story_labels`).
A vision row's question is an Item with how it goes with its image (`Pictured`): a base or agent
question asked with the image of its view ("image+story"), or a pair question about two objects
the image shows clearly, made here:

* `pair_questions`: about an image of a view (the plan, the door view), asked three ways:
  "image" (the image and the view's frame sentence, no story), "text" (no image; a story giving
  the centre of every object the image labels, in metres, as the image places them) and
  "image+text" (both). The answer is the relation between the two centres in metres, as the
  single answer (FR), or Yes iff the candidate is that relation (YN).
* `seen_pair_questions`: about the first-person image of an agent story's observer, asked with
  the image alone, in the observer's words and answered as the observer sees the centres.

A pair is clear when both objects are labelled in the image (visible) and, on each axis, their
centres either coincide (as ProcTHOR's aligned groups do) or lie at least VISIBLE_OFFSET apart, so
that no answer hangs on a few centimetres. Up to PAIRS_PER_VIEW pairs per room and image are drawn
(rooms weigh equally), each asked as FR and YN; half of a room's YN questions per image ask the
true relation. The questions of one pair, image and question type share `pair`, so that a model's
scores on the three modalities can be compared item by item.

What an image shows comes in as its labels ({object id: name}, as pipeline.render.png records
them): this module reads no image.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from random import Random

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.records import Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.frames import OBSERVER, seen_facing
from pipeline.spatial.relations import DIRECTIONS, direction_of_points, relation_words
from pipeline.text.agents import AgentItem, Pose, observer_frame
from pipeline.text.items import NO_REASONING, Item, Query, init_fields, question_pair
from pipeline.text.prompts import AGENT_VIEW, CENTRES_SETTING, IMAGE_ONLY_SETTING, PAIR_MODALITIES
from pipeline.text.stories import Teller
from pipeline.text.words import Phrases, Wording, object_labels, sentence, type_words

VISIBLE_OFFSET = 0.2  # m: centres closer than this on an axis (but not equal) make no pair question
SAME_AXIS = 1e-6  # m: relations.direction_of_points counts offsets this small as equal
PAIRS_PER_VIEW = 4  # clear pairs asked per room and image, at most


@dataclass(frozen=True)
class Pictured:
    """What a question of a vision configuration adds to its row: how it goes with its image."""

    # "image+story" (answered from the story), or a pair question asked as "image", "text" (the
    # centres in metres, the image not sent) or "image+text" (module docstring)
    modality: str
    pair: int | None  # a pair question's number in its room and image: its modalities share it
    image_name: str  # "top_down", "south_door" or "first_person"


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


def pair_questions(scene: Scene, item: Item, config: str, view: str, image_name: str,
                   labels: Mapping[str, str]) -> list[VisionItem]:
    """FR and YN questions about up to PAIRS_PER_VIEW clear pairs of the view's image, each asked in
    every modality. `item`: one of the room's items of the base configuration; `config`: the
    vision configuration's name; `labels`: what the image shows, {object id: name}."""
    shown = [o for o in scene.prominent if o.id in labels]
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
    common = dict(init_fields(item), **NO_REASONING, config=config, view=view, image_name=image_name)
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
            asked = dict(pair, setting=setting, story=story[modality], modality=modality)
            out.extend(question_pair(VisionItem, asked, f"{item.room_id}-{config}-{setting}-{view}-{modality}-p{k}",
                                     fr_question, yn_question, candidate))
    return out


def seen_pair_questions(scene: Scene, row: AgentItem, config: str, observer: Pose,
                        labels: Mapping[str, str]) -> list[AgentVisionItem]:
    """FR and YN questions about clear pairs of the first-person image of `observer`, in the
    observer's words. `row`: one of the room's agent rows; `config`: the vision_agent
    configuration's name; `labels`: what the image shows, {object id: name}."""
    shown = [o for o in scene.prominent if o.id in labels]
    rng = Random(derive_seed(scene.room_id, config, "image", "first_person"))
    chosen, yes = _draw_pairs(shown, rng)
    names = [labels[o.id] for o in shown]
    phrases = Phrases(names, [type_words(o.type) for o in shown])
    seen = data_json("agents.json")["seen"]
    common = dict(
        init_fields(row, AgentItem), **NO_REASONING, config=config, setting=IMAGE_ONLY_SETTING,
        story=observer_frame(observer, rng), story_order=tuple(names), kind="agent", story_view=AGENT_VIEW,
        story_pose=observer, question_pose=observer, frame_changes=0, frame_angle=0,
        modality="image", image_name="first_person",
    )
    out = []
    for k, (a, b) in enumerate(chosen):
        truth = seen_facing(direction_of_points((a.x, a.z), (b.x, b.z)), observer.facing)
        subject, obj = phrases.ref(labels[a.id]), phrases.ref(labels[b.id])
        candidate = truth if k in yes else rng.choice([c for c in DIRECTIONS if c != truth])
        fr_question = sentence(rng.choice(seen["FR"]).format(a=subject, b=obj))
        yn_question = sentence(rng.choice(seen["YN"]).format(a=subject, b=obj,
                                                             relation=relation_words(candidate, OBSERVER, "phrase")))
        pair = dict(common, answer_set=(truth,), true_relation=truth, continuous_relation=truth, pair=k,
                    query=Query(labels[a.id], labels[b.id]))
        out.extend(question_pair(AgentVisionItem, pair, f"{scene.room_id}-{config}-{IMAGE_ONLY_SETTING}-first_person-p{k}",
                                 fr_question, yn_question, candidate))
    return out


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
