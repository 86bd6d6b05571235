"""Stories: a setting's facts, in a wording and a view, told as a story and its questions (templates: data/templates.json).

Every draw comes from one seed in a fixed sequence, whatever the words, so that pipeline.text.twins
can tell the same items again in invented words with the same draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
        self._renderings: dict[tuple, list] = {}  # a sentence's key -> its text in each template

    def _draw(self, rng: Random, key: tuple, render: Callable[[], list]):
        """`rng`'s draw among the renderings of sentence `key`, rendered when first told."""
        renderings = self._renderings.get(key)
        if renderings is None:
            renderings = self._renderings[key] = render()
        return rng.choice(renderings)

    def _ref(self, name: str) -> str:
        return self.wording.phrases.ref(name)

    def opening(self, room_type: str, side: float, rng: Random) -> str:
        def render() -> list[str]:
            room = data_json("vocabulary.json")["room_names"][room_type]
            return [sentence(t.format(room=room, side=f"{side:.1f}")) for t in _templates()["opening"]]

        return self._draw(rng, ("opening", room_type, side), render)

    def objects(self, order: Sequence[str], rng: Random) -> str:
        def render() -> list[str]:
            names = join_words([self.wording.phrases.intro(n) for n in order])
            return [sentence(t.format(objects=names)) for t in _templates()["objects"]]

        return self._draw(rng, ("objects", *order), render)

    def unary(self, facts: tuple[Fact, ...], order: Sequence[str], view: str, rng: Random) -> list[str]:
        """Region (and wall-contact) facts, one sentence for each group of objects that share them."""
        per_object: dict[str, dict[str, str]] = {name: {} for name in order}
        for fact in facts:
            if fact.object is None:
                kind = "wall" if fact.relation in ("TPP", "NTPP") else "region"
                per_object[fact.subject][kind] = fact.relation
        groups: dict[tuple[str, str | None], list[str]] = {}
        for name in order:
            if "region" in per_object[name]:
                groups.setdefault((per_object[name]["region"], per_object[name].get("wall")), []).append(name)
        return [self._placed(tuple(members), region, wall, view, rng) for (region, wall), members in groups.items()]

    def _placed(self, members: tuple[str, ...], region: str, wall: str | None, view: str, rng: Random) -> str:
        def render() -> list[str]:
            words = self.wording.words
            slot = _templates()["region_wall" if wall else "region"]["one" if len(members) == 1 else "many"]
            return [sentence(t.format(subjects=join_words([self._ref(name) for name in members]),
                                      region=words(region, view, "phrase"),
                                      wall=words(wall, view, "phrase") if wall else "")) for t in slot]

        return self._draw(rng, ("placed", view, region, wall, *members), render)

    def binary(self, facts: tuple[Fact, ...], view: str, rng: Random) -> list[str]:
        """Direction and distance facts: one sentence per subject and relation, naming all its objects."""
        per_pair: dict[tuple[str, str], dict[str, str]] = {}
        for fact in facts:
            if fact.object is not None:
                kind = "direction" if fact.relation in DIRECTIONS else "distance"
                per_pair.setdefault((fact.subject, fact.object), {})[kind] = fact.relation
        groups: dict[tuple[str, str, str | None], list[str]] = {}
        for (subject, obj), relations in per_pair.items():
            groups.setdefault((subject, relations["direction"], relations.get("distance")), []).append(obj)
        return [self._related(subject, direction, distance, tuple(objects), view, rng)
                for (subject, direction, distance), objects in groups.items()]

    def _related(self, subject: str, direction: str, distance: str | None, objects: tuple[str, ...], view: str,
                 rng: Random) -> str:
        """Drawn as told: the distance's tail first (when there is a distance), then the sentence."""
        def render() -> list:
            words, templates = self.wording.words, _templates()
            fields = dict(subject=self._ref(subject), direction=words(direction, view, "phrase"),
                          objects=join_words([self._ref(name) for name in objects]))
            if not distance:
                return [sentence(t.format(**fields, distance="")) for t in templates["relation"]]
            tails = [t.format(distance=words(distance, view, "phrase"))
                     for t in templates["distance"]["one" if len(objects) == 1 else "many"]]
            return [[sentence(t.format(**fields, distance=tail)) for t in templates["relation"]] for tail in tails]

        told = self._draw(rng, ("related", view, subject, direction, distance, *objects), render)
        return rng.choice(told) if distance else told

    def story(self, room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], view: str,
              rng: Random) -> str:
        parts = [
            self.opening(room_type, side, rng),
            self._draw(rng, ("frame", view), lambda: [sentence(t) for t in _templates()["frame"][view]]),
            self.wording.glossary,
            self.objects(order, rng),
            *self.unary(facts, order, view, rng),
            *self.binary(facts, view, rng),
        ]
        return " ".join(filter(None, parts))

    def setting(self, room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], view: str,
                query: tuple[str, str], pool: Sequence[str], seed: int) -> SettingTexts:
        """Every draw comes from `seed` in a fixed sequence, whatever the words: a twin redraws the same."""
        rng = Random(seed)
        text = self.story(room_type, side, facts, order, view, rng)
        a, b = query
        fr = self._draw(rng, ("FR", view, a, b), lambda: self._questions("FR", view, query))
        candidate = rng.choice(pool)
        yn = self._draw(rng, ("YN", view, a, b, candidate), lambda: self._questions("YN", view, query, candidate))
        return SettingTexts(text, fr, candidate, yn)

    def _questions(self, question_type: str, view: str, query: tuple[str, str], candidate: str | None = None) -> list[str]:
        a, b = (self._ref(name) for name in query)
        relation = self.wording.words(candidate, view, "phrase") if candidate else ""
        return [sentence(t.format(a=a, b=b, relation=relation)) for t in _templates()["question"][question_type][view]]

    def _footprint(self, name: str, footprint: Sequence[Point], rng: Random) -> str:
        """An axis-aligned rectangle by its spans, any other footprint by its corners."""
        def render() -> list[str]:
            slots = _templates()["rcc8"]
            xs, ys = sorted({x for x, _ in footprint}), sorted({y for _, y in footprint})
            subject = self._ref(name)
            if len(footprint) == 4 and len(xs) == len(ys) == 2:
                return [sentence(t.format(subject=subject, x0=f"{xs[0]:g}", x1=f"{xs[1]:g}", y0=f"{ys[0]:g}",
                                          y1=f"{ys[1]:g}")) for t in slots["box"]]
            corners = join_words([f"({x:g}, {y:g})" for x, y in footprint])
            return [sentence(t.format(subject=subject, corners=corners)) for t in slots["polygon"]]

        return self._draw(rng, ("footprint", name, tuple(footprint)), render)

    def _rcc8_frame(self, side: float, view: str, rng: Random) -> str:
        return self._draw(rng, ("rcc8 frame", view, side), lambda: [
            sentence(t.format(side=f"{stated_side(side):g}")) for t in _templates()["rcc8"]["frame"][view]])

    def rcc8(self, room_type: str, side: float, footprints: Mapping[str, Sequence[Point]], order: Sequence[str],
             view: str, query: tuple[str, str], candidate: str, seed: int) -> tuple[str, str]:
        """The rcc8 setting's story (every footprint in metres, as snapped) and its YN question."""
        rng = Random(seed)
        slots = _templates()["rcc8"]
        parts = [
            self.opening(room_type, side, rng),
            self._rcc8_frame(side, view, rng),
            self.wording.glossary,
            self.objects(order, rng),
            *(self._footprint(name, footprints[name], rng) for name in order),
        ]

        def region(name: str) -> str:
            return slots["floor"] if name == ROOM else slots["footprint"].format(object=self._ref(name))

        question = rcc8_question(candidate).format(a=region(query[0]), b=region(query[1]))
        return " ".join(filter(None, parts)), sentence(question)

    def centres(self, room_type: str, side: float, centres: Mapping[str, Point], order: Sequence[str], view: str,
                rng: Random) -> str:
        """A story that places objects as an image does: each object's centre in metres, in the rcc8 frame."""
        slots = _templates()
        return " ".join([
            self.opening(room_type, side, rng),
            self._rcc8_frame(side, view, rng),
            self.objects(order, rng),
            *(sentence(rng.choice(slots["centre"]).format(subject=self._ref(name), x=f"{centres[name][0]:g}",
                                                          y=f"{centres[name][1]:g}")) for name in order),
        ])


def text_seed(room_id: str, config: str, setting: str, view: str) -> int:
    """The seed of one setting and view's texts: the same for an item and its twin."""
    return derive_seed(room_id, config, setting, view)


def written_path(path: Sequence[PathStep], start: str, wording: Wording, view: str) -> str:
    return sentence(path_text(path, start, wording.phrases.ref, lambda code: wording.words(code, view, "phrase")))
