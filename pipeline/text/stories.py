"""Stories: a setting's facts, in a wording and a view, told as a story and its questions (templates: data/templates.json).

Every draw comes from one seed in a fixed sequence, whatever the words, so that pipeline.text.twins
can tell the same items again in invented words with the same draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from random import Random

from pipeline.data import data_json
from pipeline.scene.records import Point
from pipeline.seeding import derive_seed
from pipeline.spatial.facts import Fact
from pipeline.spatial.reasoning import PathStep, path_text
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import ROOM, rcc8_question, stated_side
from pipeline.text.words import Wording, join_words, sentence


def _templates() -> dict:
    return data_json("templates.json")


@dataclass(frozen=True)
class SettingTexts:
    """The texts of one setting and view: the story, its two questions and the YN candidate."""

    story: str
    fr_question: str
    candidate: str
    yn_question: str


@dataclass(frozen=True)
class Sentences:
    """A story's facts as its sentences, in any view: a sentence per group of objects sharing a
    region (and wall contact), then one per subject, direction and distance naming all its objects."""

    placed: tuple[tuple[tuple[str, ...], str, str | None], ...]  # (members, region, wall or None)
    # (subject, direction, distance, objects): either may be None (a hard story states some pairs' distance alone)
    related: tuple[tuple[str, str | None, str | None, tuple[str, ...]], ...]


def sentences(facts: Sequence[Fact], order: Sequence[str]) -> Sentences:
    """The sentences of a story of these facts about the objects of `order` (the order they are told in)."""
    per_object: dict[str, dict[str, str]] = {name: {} for name in order}
    per_pair: dict[tuple[str, str], dict[str, str]] = {}
    for fact in facts:
        if fact.object is None:
            per_object[fact.subject]["wall" if fact.relation in ("TPP", "NTPP") else "region"] = fact.relation
        else:
            kind = "direction" if fact.relation in DIRECTIONS else "distance"
            per_pair.setdefault((fact.subject, fact.object), {})[kind] = fact.relation
    placed: dict[tuple[str, str | None], list[str]] = {}
    for name in order:
        if "region" in per_object[name]:
            placed.setdefault((per_object[name]["region"], per_object[name].get("wall")), []).append(name)
    related: dict[tuple[str, str, str | None], list[str]] = {}
    for (subject, obj), relations in per_pair.items():
        related.setdefault((subject, relations.get("direction"), relations.get("distance")), []).append(obj)
    return Sentences(tuple((tuple(members), region, wall) for (region, wall), members in placed.items()),
                     tuple((*group, tuple(objects)) for group, objects in related.items()))


class Teller:
    """Tells stories in one wording, keeping every sentence it has rendered.

    A story draws each sentence's template from its seed, and a draw depends only on how many
    templates there are: so a sentence is rendered in all its templates once, the first time it
    is told, and later tellings draw among those renderings. The same draws pick the same texts
    as rendering only the template drawn; and a room's configurations share most sentences (in
    the sweep, nine in ten of those relating objects), so a teller kept per room and set of
    names renders few.
    """

    def __init__(self, wording: Wording) -> None:
        self.wording = wording
        self._texts: dict[tuple, list] = {}  # (render, *its arguments) -> the sentence in each template

    def glossed(self, glossary: str) -> Teller:
        """A teller of the same words telling `glossary` after the frame, keeping its sentences with this
        one's: a glossary is told in no sentence, so a twin's stories share theirs whatever they define."""
        teller = Teller(replace(self.wording, glossary=glossary))
        teller._texts = self._texts
        return teller

    def _draw(self, rng: Random, render: Callable[..., list], *args):
        """`rng`'s draw among the texts `render(wording, *args)`, rendered when first drawn."""
        key = (render, *args)
        texts = self._texts.get(key)
        if texts is None:
            texts = self._texts[key] = render(self.wording, *args)
        return rng.choice(texts)

    def opening(self, room_type: str, side: float, rng: Random) -> str:
        return self._draw(rng, _openings, room_type, side)

    def objects(self, order: Sequence[str], rng: Random) -> str:
        return self._draw(rng, _objects_texts, tuple(order))

    def told(self, said: Sentences, view: str, rng: Random) -> list[str]:
        """The sentences, each drawn as told: a relation's distance tail (when it has a distance) before its sentence."""
        out = [self._draw(rng, _placed_texts, view, *placed) for placed in said.placed]
        for subject, direction, distance, objects in said.related:
            told = self._draw(rng, _related_texts, view, subject, direction, distance, objects)
            out.append(rng.choice(told) if distance and direction else told)
        return out

    def story(self, room_type: str, side: float, said: Sentences, order: Sequence[str], view: str,
              rng: Random) -> str:
        parts = [
            self.opening(room_type, side, rng),
            self._draw(rng, _frames, view),
            self.wording.glossary,
            self.objects(order, rng),
            *self.told(said, view, rng),
        ]
        return " ".join(filter(None, parts))

    def setting(self, room_type: str, side: float, said: Sentences, order: Sequence[str], view: str,
                query: tuple[str, str], pool: Sequence[str], seed: int,
                yn_query: tuple[str, str] | None = None) -> SettingTexts:
        """Every draw comes from `seed` in a fixed sequence, whatever the words: a twin redraws the same.
        The YN question asks `yn_query` where given (a balanced story's two questions may ask two pairs):
        a question's draw depends on its templates alone, so its texts are those of a telling about that pair."""
        rng = Random(seed)
        text = self.story(room_type, side, said, order, view, rng)
        fr = self._draw(rng, _questions, "FR", view, query, None)
        candidate = rng.choice(pool)
        return SettingTexts(text, fr, candidate, self._draw(rng, _questions, "YN", view, yn_query or query, candidate))

    def whole_story(self, room_type: str, side: float, said: Sentences, order: Sequence[str], view: str,
                    subject: str, claim: str | None, obj: str | None, seed: int) -> tuple[str, str]:
        """A whole-story question's story (its setting's, drawn from the same seed) and question: where
        `subject` could stand (`claim` None), or whether "subject is <claim> (obj)" can hold with the story."""
        rng = Random(seed)
        return (self.story(room_type, side, said, order, view, rng),
                self._draw(rng, _whole_story_questions, view, subject, claim, obj))

    def rcc8(self, room_type: str, side: float, footprints: Mapping[str, Sequence[Point]], order: Sequence[str],
             view: str, query: tuple[str, str], candidate: str, seed: int) -> tuple[str, str]:
        """The rcc8 setting's story (every footprint in metres, as snapped) and its YN question."""
        rng = Random(seed)
        slots = _templates()["rcc8"]
        parts = [
            self.opening(room_type, side, rng),
            self._draw(rng, _rcc8_frames, side, view),
            self.wording.glossary,
            self.objects(order, rng),
            *(self._draw(rng, _footprint_texts, name, tuple(footprints[name])) for name in order),
        ]

        def region(name: str) -> str:
            return slots["floor"] if name == ROOM else slots["footprint"].format(object=self.wording.phrases.ref(name))

        question = rcc8_question(candidate).format(a=region(query[0]), b=region(query[1]))
        return " ".join(filter(None, parts)), sentence(question)

    def centres(self, room_type: str, side: float, centres: Mapping[str, Point], order: Sequence[str], view: str,
                rng: Random) -> str:
        """A story that places objects as an image does: each object's centre in metres, in the rcc8 frame."""
        slots = _templates()
        return " ".join([
            self.opening(room_type, side, rng),
            self._draw(rng, _rcc8_frames, side, view),
            self.objects(order, rng),
            *(sentence(rng.choice(slots["centre"]).format(subject=self.wording.phrases.ref(name),
                                                          x=f"{centres[name][0]:g}", y=f"{centres[name][1]:g}"))
              for name in order),
        ])


# Each sentence in every template of its slot, in the slot's order: what a Teller draws among.


def _openings(wording: Wording, room_type: str, side: float) -> list[str]:
    room = data_json("vocabulary.json")["room_names"][room_type]
    return [sentence(t.format(room=room, side=f"{side:.1f}")) for t in _templates()["opening"]]


def _frames(wording: Wording, view: str) -> list[str]:
    return [sentence(t) for t in _templates()["frame"][view]]


def _objects_texts(wording: Wording, order: tuple[str, ...]) -> list[str]:
    names = join_words([wording.phrases.intro(n) for n in order])
    return [sentence(t.format(objects=names)) for t in _templates()["objects"]]


def _placed_texts(wording: Wording, view: str, members: tuple[str, ...], region: str, wall: str | None) -> list[str]:
    slot = _templates()["region_wall" if wall else "region"]["one" if len(members) == 1 else "many"]
    return [sentence(t.format(subjects=join_words([wording.phrases.ref(name) for name in members]),
                              region=wording.words(region, view, "phrase"),
                              wall=wording.words(wall, view, "phrase") if wall else "")) for t in slot]


def _related_texts(wording: Wording, view: str, subject: str, direction: str | None, distance: str | None,
                   objects: tuple[str, ...]) -> list:
    """Without a distance, the sentence in each template; with one, per tail of the distance (drawn first) the
    sentence in each template; with a distance alone, the sentence in each of its own templates."""
    templates = _templates()
    fields = dict(subject=wording.phrases.ref(subject),
                  objects=join_words([wording.phrases.ref(name) for name in objects]))
    if not direction:
        return [sentence(t.format(**fields, distance=wording.words(distance, view, "phrase")))
                for t in templates["distance_alone"]]
    fields["direction"] = wording.words(direction, view, "phrase")
    if not distance:
        return [sentence(t.format(**fields, distance="")) for t in templates["relation"]]
    tails = [t.format(distance=wording.words(distance, view, "phrase"))
             for t in templates["distance"]["one" if len(objects) == 1 else "many"]]
    return [[sentence(t.format(**fields, distance=tail)) for t in templates["relation"]] for tail in tails]


def _questions(wording: Wording, question_type: str, view: str, query: tuple[str, str],
               candidate: str | None) -> list[str]:
    a, b = (wording.phrases.ref(name) for name in query)
    relation = wording.words(candidate, view, "phrase") if candidate else ""
    return [sentence(t.format(a=a, b=b, relation=relation)) for t in _templates()["question"][question_type][view]]


def _whole_story_questions(wording: Wording, view: str, subject: str, claim: str | None,
                           obj: str | None) -> list[str]:
    slots = _templates()["whole_story"]
    a = wording.phrases.ref(subject)
    if claim is None:
        return [sentence(t.format(a=a)) for t in slots["regions"][view]]
    stated = slots["claim"]["one" if obj is None else "two"].format(
        a=a, relation=wording.words(claim, view, "phrase"), b=obj and wording.phrases.ref(obj))
    return [sentence(t.format(claim=stated)) for t in slots["consistency"][view]]


def _rcc8_frames(wording: Wording, side: float, view: str) -> list[str]:
    return [sentence(t.format(side=f"{stated_side(side):g}")) for t in _templates()["rcc8"]["frame"][view]]


def _footprint_texts(wording: Wording, name: str, footprint: tuple[Point, ...]) -> list[str]:
    """An axis-aligned rectangle by its spans, any other footprint by its corners."""
    slots = _templates()["rcc8"]
    xs, ys = sorted({x for x, _ in footprint}), sorted({y for _, y in footprint})
    subject = wording.phrases.ref(name)
    if len(footprint) == 4 and len(xs) == len(ys) == 2:
        return [sentence(t.format(subject=subject, x0=f"{xs[0]:g}", x1=f"{xs[1]:g}", y0=f"{ys[0]:g}",
                                  y1=f"{ys[1]:g}")) for t in slots["box"]]
    corners = join_words([f"({x:g}, {y:g})" for x, y in footprint])
    return [sentence(t.format(subject=subject, corners=corners)) for t in slots["polygon"]]


def text_seed(room_id: str, config: str, setting: str, view: str) -> int:
    """The seed of one setting and view's texts: the same for an item and its twin."""
    return derive_seed(room_id, config, setting, view)


def written_path(path: Sequence[PathStep], start: str, wording: Wording, view: str) -> str:
    return sentence(path_text(path, start, wording.phrases.ref, lambda code: wording.words(code, view, "phrase")))
