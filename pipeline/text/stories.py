"""Stories: a setting's facts, in a wording and a view, told as a story and its questions (templates: data/templates.json).

Every draw comes from one seed in a fixed sequence, whatever the words, so that pipeline.text.twins
can tell the same items again in invented words with the same draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random

from pipeline.data import data_json
from pipeline.scene.records import Point
from pipeline.seeding import derive_seed
from pipeline.spatial.facts import Fact
from pipeline.spatial.reasoning import PathStep, path_text
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import ROOM, rcc8_question, stated_side
from pipeline.text.words import Phrases, Wording, join_words, sentence


def unary_sentences(facts: tuple[Fact, ...], order: Sequence[str], wording: Wording, view: str,
                    rng: Random) -> list[str]:
    """Region (and wall-contact) facts, one sentence for each group of objects that share them."""
    templates = data_json("templates.json")
    per_object: dict[str, dict[str, str]] = {name: {} for name in order}
    for fact in facts:
        if fact.object is None:
            kind = "wall" if fact.relation in ("TPP", "NTPP") else "region"
            per_object[fact.subject][kind] = fact.relation
    groups: dict[tuple[str, str | None], list[str]] = {}
    for name in order:
        if "region" in per_object[name]:
            groups.setdefault((per_object[name]["region"], per_object[name].get("wall")), []).append(name)
    out = []
    for (region, wall), members in groups.items():
        slot = templates["region_wall" if wall else "region"]["one" if len(members) == 1 else "many"]
        text = rng.choice(slot).format(
            subjects=join_words([wording.phrases.ref(name) for name in members]),
            region=wording.words(region, view, "phrase"),
            wall=wording.words(wall, view, "phrase") if wall else "",
        )
        out.append(sentence(text))
    return out


def binary_sentences(facts: tuple[Fact, ...], wording: Wording, view: str, rng: Random) -> list[str]:
    """Direction and distance facts: one sentence per subject and relation, naming all its objects."""
    templates = data_json("templates.json")
    per_pair: dict[tuple[str, str], dict[str, str]] = {}
    for fact in facts:
        if fact.object is not None:
            kind = "direction" if fact.relation in DIRECTIONS else "distance"
            per_pair.setdefault((fact.subject, fact.object), {})[kind] = fact.relation
    groups: dict[tuple[str, str, str | None], list[str]] = {}
    for (subject, obj), relations in per_pair.items():
        groups.setdefault((subject, relations["direction"], relations.get("distance")), []).append(obj)
    out = []
    for (subject, direction_code, distance_code), objects in groups.items():
        tail = ""
        if distance_code:
            slot = templates["distance"]["one" if len(objects) == 1 else "many"]
            tail = rng.choice(slot).format(distance=wording.words(distance_code, view, "phrase"))
        text = rng.choice(templates["relation"]).format(
            subject=wording.phrases.ref(subject),
            direction=wording.words(direction_code, view, "phrase"),
            objects=join_words([wording.phrases.ref(name) for name in objects]),
            distance=tail,
        )
        out.append(sentence(text))
    return out


def opening(room_type: str, side: float, rng: Random) -> str:
    room = data_json("vocabulary.json")["room_names"][room_type]
    return sentence(rng.choice(data_json("templates.json")["opening"]).format(room=room, side=f"{side:.1f}"))


def objects_sentence(order: Sequence[str], wording: Wording, rng: Random) -> str:
    names = join_words([wording.phrases.intro(n) for n in order])
    return sentence(rng.choice(data_json("templates.json")["objects"]).format(objects=names))


def story(room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], wording: Wording, view: str,
          rng: Random) -> str:
    parts = [
        opening(room_type, side, rng),
        sentence(rng.choice(data_json("templates.json")["frame"][view])),
        wording.glossary,
        objects_sentence(order, wording, rng),
        *unary_sentences(facts, order, wording, view, rng),
        *binary_sentences(facts, wording, view, rng),
    ]
    return " ".join(filter(None, parts))


@dataclass(frozen=True)
class SettingTexts:
    """The texts of one setting and view: the story, its two questions and the YN candidate."""

    story: str
    fr_question: str
    candidate: str
    yn_question: str


def tell_setting(room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], wording: Wording, view: str,
         query: tuple[str, str], pool: Sequence[str], seed: int) -> SettingTexts:
    """Every draw comes from `seed` in a fixed sequence, whatever the words: a twin redraws the same."""
    rng = Random(seed)
    text = story(room_type, side, facts, order, wording, view, rng)
    questions = data_json("templates.json")["question"]
    a, b = (wording.phrases.ref(name) for name in query)
    fr = sentence(rng.choice(questions["FR"][view]).format(a=a, b=b))
    candidate = rng.choice(pool)
    relation = wording.words(candidate, view, "phrase")
    return SettingTexts(text, fr, candidate, sentence(rng.choice(questions["YN"][view]).format(a=a, b=b, relation=relation)))


def footprint_sentence(name: str, footprint: Sequence[Point], wording: Wording, rng: Random) -> str:
    """An axis-aligned rectangle by its spans, any other footprint by its corners."""
    slots = data_json("templates.json")["rcc8"]
    xs, ys = sorted({x for x, _ in footprint}), sorted({y for _, y in footprint})
    subject = wording.phrases.ref(name)
    if len(footprint) == 4 and len(xs) == len(ys) == 2:
        return sentence(rng.choice(slots["box"]).format(subject=subject, x0=f"{xs[0]:g}", x1=f"{xs[1]:g}",
                                                        y0=f"{ys[0]:g}", y1=f"{ys[1]:g}"))
    corners = join_words([f"({x:g}, {y:g})" for x, y in footprint])
    return sentence(rng.choice(slots["polygon"]).format(subject=subject, corners=corners))


def tell_rcc8(room_type: str, side: float, footprints: Mapping[str, Sequence[Point]], order: Sequence[str],
              wording: Wording, view: str, query: tuple[str, str], candidate: str, seed: int) -> tuple[str, str]:
    """The rcc8 setting's story (every footprint in metres, as snapped) and its YN question."""
    rng = Random(seed)
    slots = data_json("templates.json")["rcc8"]
    parts = [
        opening(room_type, side, rng),
        sentence(rng.choice(slots["frame"][view]).format(side=f"{stated_side(side):g}")),
        wording.glossary,
        objects_sentence(order, wording, rng),
        *(footprint_sentence(name, footprints[name], wording, rng) for name in order),
    ]

    def region(name: str) -> str:
        return slots["floor"] if name == ROOM else slots["footprint"].format(object=wording.phrases.ref(name))

    question = rcc8_question(candidate).format(a=region(query[0]), b=region(query[1]))
    return " ".join(filter(None, parts)), sentence(question)


def tell_centres(room_type: str, side: float, centres: Mapping[str, Point], order: Sequence[str], phrases: Phrases,
                 view: str, rng: Random) -> str:
    """A story that places objects as an image does: each object's centre in metres, in the rcc8 frame."""
    slots = data_json("templates.json")
    return " ".join([
        opening(room_type, side, rng),
        sentence(rng.choice(slots["rcc8"]["frame"][view]).format(side=f"{stated_side(side):g}")),
        objects_sentence(order, Wording(phrases), rng),
        *(sentence(rng.choice(slots["centre"]).format(subject=phrases.ref(name), x=f"{centres[name][0]:g}",
                                                      y=f"{centres[name][1]:g}")) for name in order),
    ])


def text_seed(room_id: str, config: str, setting: str, view: str) -> int:
    """The seed of one setting and view's texts: the same for an item and its twin."""
    return derive_seed(room_id, config, setting, view)


def written_path(path: Sequence[PathStep], start: str, wording: Wording, view: str) -> str:
    return sentence(path_text(path, start, wording.phrases.ref, lambda code: wording.words(code, view, "phrase")))
