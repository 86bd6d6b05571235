"""Stories and questions: one room and one configuration in, that room's items out (design.md section 4).

For a room and a configuration (n, m, d): n prominent objects in a seeded order o_1 ... o_n, the
m described pairs in bands, the question pair (o_1, o_n); then for each of the 8 settings and
both views, one story with an FR and a YN question; then the rcc8 setting, one YN question per
view about the RCC-8 relation of two footprints (or a footprint and the floor) given in metres.
Every choice is drawn from a seed derived from the room and the configuration, so a room's items
never depend on any other room. Each row also carries its reasoning path (pipeline/paths.py),
footprint topology (pipeline/topology.py) and difficulty metadata (pipeline/difficulty.py).

Texts are made by `told` and `rcc8_told` from the facts, a `Telling` (the words) and a seed, so
that pipeline/twins.py can tell the same items again in invented words with the same draws.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from random import Random

from pipeline.assets import data_json
from pipeline.checker import answer_set
from pipeline.difficulty import layout_decides, tightness
from pipeline.errors import RoomspaceError
from pipeline.facts import SETTINGS, Fact, described_pairs, hops, setting_facts
from pipeline.grid import GRID_SIZES, rasterise
from pipeline.paths import PathStep, path_text, reasoning_path
from pipeline.records import Point, Scene, SceneObject
from pipeline.relations import DIRECTIONS, converse, direction, direction_of_points, relation_words
from pipeline.seeding import derive_seed
from pipeline.topology import RCC8, ROOM, neighbours, snapped_footprint, stated_side, topology_facts
from pipeline.topology import converse as rcc8_converse
from pipeline.topology import question as rcc8_question

VIEWS = ("top_down", "north_facing")
QUESTION_TYPES = ("FR", "YN")
RCC8_SETTING = "rcc8"  # footprints in metres, YN questions about RCC-8 relations: an addition to RoomSpace
ITEM_SETTINGS = (*SETTINGS, RCC8_SETTING)
ROWS_PER_ROOM = len(SETTINGS) * len(VIEWS) * len(QUESTION_TYPES) + len(VIEWS)  # rcc8 asks YN only: 34
SWEEP_N = range(3, 8)  # the paper's sweep: n from 3 to 7, every valid m, d in 9 and 12


@dataclass(frozen=True)
class Config:
    n: int
    m: int
    d: int

    def __post_init__(self) -> None:
        if self.d not in GRID_SIZES:
            raise RoomspaceError(f"grid side d={self.d} (domain {self.d * self.d}) is not one of {GRID_SIZES}")
        described_pairs(self.n, self.m)  # raises when m is out of range for n

    @property
    def name(self) -> str:
        return f"n{self.n}_m{self.m}_d{self.d * self.d}"

    @classmethod
    def parse(cls, text: str) -> Config:
        match = re.fullmatch(r"n(\d+)_m(\d+)_d(\d+)", text.strip())
        if not match:
            raise RoomspaceError(f"configuration {text!r} is not of the form n5_m4_d144")
        n, m, domain = map(int, match.groups())
        sides = {d * d: d for d in GRID_SIZES}
        if domain not in sides:
            raise RoomspaceError(f"configuration {text!r}: domain d{domain} is not one of "
                                 + ", ".join(f"d{size}" for size in sides))
        return cls(n, m, sides[domain])


DEFAULT_CONFIGS = (Config(5, 4, 9), Config(5, 4, 12))


def sweep() -> tuple[Config, ...]:
    return tuple(Config(n, m, d) for n in SWEEP_N for m in range(n - 1, n * (n - 1) // 2) for d in GRID_SIZES)


def parse_configs(text: str) -> tuple[Config, ...]:
    """A comma-separated list of configuration names, or "sweep", or "default"."""
    named = {"default": DEFAULT_CONFIGS, "sweep": sweep()}
    configs: list[Config] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        configs.extend(named[part] if part in named else (Config.parse(part),))
    if not configs:
        raise RoomspaceError("no configuration given")
    return tuple(dict.fromkeys(configs))


@dataclass(frozen=True)
class Query:
    subject: str  # o_1: "where is the subject relative to the object?"
    object: str  # o_n


@dataclass(frozen=True)
class StoryObject:
    name: str
    type: str
    asset_id: str
    x: float  # centre in metres: the continuous scene
    z: float
    i: int  # snapped cell: the rasterised scene
    j: int
    walls: tuple[str, ...]
    footprint: tuple[Point, ...]  # corners in metres on the topology grid (1 mm), as rcc8 stories state them


@dataclass(frozen=True)
class Item:
    """One dataset row. pipeline/dataset.py derives the dataset's features from these fields."""

    id: str
    room_id: str
    room_index: int
    seed: int  # the global seed; the room is a pure function of (seed, room_index)
    room_type: str
    room_side: float  # w, metres
    config: str
    n: int
    m: int
    d: int
    setting: str
    view: str
    question_type: str
    story: str
    question: str
    options: tuple[str, ...]
    answer: str  # YN: "Yes" or "No"; FR: the consistent relations in the view's words, comma-separated
    answer_set: tuple[str, ...]  # codes of every relation consistent with the story, canonical order; rcc8: the one
    answer_set_size: int
    candidate: str | None  # YN: the relation asked about (a code); FR: None
    true_relation: str  # o_1 relative to o_n in the rasterised scene (a code); rcc8: the asked pair's RCC-8 relation
    continuous_relation: str  # o_1 relative to o_n between the objects' centres in metres; rcc8: as true_relation
    query: Query  # (o_1, o_n); rcc8: the asked pair, the object possibly "room" (the floor)
    facts: tuple[Fact, ...]  # the story's facts, as stated; rcc8: () (its story states footprints)
    hops: int  # rcc8: 0
    objects: tuple[StoryObject, ...]  # o_1 ... o_n
    story_order: tuple[str, ...]  # the objects' names in the order the story introduces them
    topology: tuple[Fact, ...]  # RCC-8 of every pair of objects (o order), then of each object and "room"
    path: tuple[PathStep, ...]  # the shortest chain of described direction facts from o_1 to o_n, composed
    path_text: str  # the path in the view's words; "" when the story has no direction facts
    path_decides: bool  # the path's last composed set is the answer set; False when there is no path
    tightness: float  # mean share of its domain that each fact excludes (pipeline/difficulty.py)
    layout_decides: bool  # the query objects' region facts alone give the answer set


def type_words(object_type: str) -> str:
    names = data_json("vocabulary.json")["object_names"]
    return names.get(object_type) or re.sub(r"(?<=[a-z])(?=[A-Z])", " ", object_type).lower()


def object_names(chosen: list[SceneObject], intro: list[int]) -> list[str]:
    """Names in o order: a type met once is named by its words, repeated types are numbered in story order."""
    words = [type_words(o.type) for o in chosen]
    counts = {w: words.count(w) for w in words}
    names = list(words)
    seen: dict[str, int] = {}
    for k in intro:
        if counts[words[k]] > 1:
            seen[words[k]] = seen.get(words[k], 0) + 1
            names[k] = f"{words[k]} {seen[words[k]]}"
    return names


class Phrases:
    """How the story refers to each named object: "the bed" and "a bed", or "chair 1" for both."""

    def __init__(self, names: list[str], words: list[str]) -> None:
        self.numbered = {name for name, word in zip(names, words) if name != word}

    def ref(self, name: str) -> str:
        return name if name in self.numbered else f"the {name}"

    def intro(self, name: str) -> str:
        if name in self.numbered:
            return name
        return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def join_words(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sentence(text: str) -> str:
    return text[0].upper() + text[1:]


Words = Callable[[str, str, str], str]  # (code, view, field) -> words, as relations.relation_words


@dataclass(frozen=True)
class Telling:
    """The words a story is told in: how it refers to objects, and the words of each relation code."""

    phrases: Phrases
    words: Words = relation_words
    glossary: str = ""  # told after the frame: a twin's definitions of its invented words


def unary_sentences(facts: tuple[Fact, ...], order: Sequence[str], telling: Telling, view: str,
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
            subjects=join_words([telling.phrases.ref(name) for name in members]),
            region=telling.words(region, view, "phrase"),
            wall=telling.words(wall, view, "phrase") if wall else "",
        )
        out.append(sentence(text))
    return out


def binary_sentences(facts: tuple[Fact, ...], telling: Telling, view: str, rng: Random) -> list[str]:
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
            tail = rng.choice(slot).format(distance=telling.words(distance_code, view, "phrase"))
        text = rng.choice(templates["relation"]).format(
            subject=telling.phrases.ref(subject),
            direction=telling.words(direction_code, view, "phrase"),
            objects=join_words([telling.phrases.ref(name) for name in objects]),
            distance=tail,
        )
        out.append(sentence(text))
    return out


def opening(room_type: str, side: float, rng: Random) -> str:
    room = data_json("vocabulary.json")["room_names"][room_type]
    return sentence(rng.choice(data_json("templates.json")["opening"]).format(room=room, side=f"{side:.1f}"))


def objects_sentence(order: Sequence[str], telling: Telling, rng: Random) -> str:
    names = join_words([telling.phrases.intro(n) for n in order])
    return sentence(rng.choice(data_json("templates.json")["objects"]).format(objects=names))


def story(room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], telling: Telling, view: str,
          rng: Random) -> str:
    parts = [
        opening(room_type, side, rng),
        sentence(rng.choice(data_json("templates.json")["frame"][view])),
        telling.glossary,
        objects_sentence(order, telling, rng),
        *unary_sentences(facts, order, telling, view, rng),
        *binary_sentences(facts, telling, view, rng),
    ]
    return " ".join(filter(None, parts))


@dataclass(frozen=True)
class Told:
    """The texts of one setting and view: the story, its two questions and the YN candidate."""

    story: str
    fr_question: str
    candidate: str
    yn_question: str


def told(room_type: str, side: float, facts: tuple[Fact, ...], order: Sequence[str], telling: Telling, view: str,
         query: Query, pool: Sequence[str], seed: int) -> Told:
    """Every draw comes from `seed` in a fixed sequence, whatever the words: a twin redraws the same."""
    rng = Random(seed)
    text = story(room_type, side, facts, order, telling, view, rng)
    questions = data_json("templates.json")["question"]
    a, b = telling.phrases.ref(query.subject), telling.phrases.ref(query.object)
    fr = sentence(rng.choice(questions["FR"][view]).format(a=a, b=b))
    candidate = rng.choice(pool)
    relation = telling.words(candidate, view, "phrase")
    return Told(text, fr, candidate, sentence(rng.choice(questions["YN"][view]).format(a=a, b=b, relation=relation)))


def footprint_sentence(name: str, footprint: Sequence[Point], telling: Telling, rng: Random) -> str:
    """An axis-aligned rectangle by its spans, any other footprint by its corners."""
    slots = data_json("templates.json")["rcc8"]
    xs, ys = sorted({x for x, _ in footprint}), sorted({y for _, y in footprint})
    subject = telling.phrases.ref(name)
    if len(footprint) == 4 and len(xs) == len(ys) == 2:
        return sentence(rng.choice(slots["box"]).format(subject=subject, x0=f"{xs[0]:g}", x1=f"{xs[1]:g}",
                                                        y0=f"{ys[0]:g}", y1=f"{ys[1]:g}"))
    corners = join_words([f"({x:g}, {y:g})" for x, y in footprint])
    return sentence(rng.choice(slots["polygon"]).format(subject=subject, corners=corners))


def rcc8_told(room_type: str, side: float, objects: Sequence[StoryObject], order: Sequence[str], telling: Telling,
              view: str, query: Query, candidate: str, seed: int) -> tuple[str, str]:
    """The rcc8 setting's story (every footprint in metres, as snapped) and its YN question."""
    rng = Random(seed)
    slots = data_json("templates.json")["rcc8"]
    footprints = {o.name: o.footprint for o in objects}
    parts = [
        opening(room_type, side, rng),
        sentence(rng.choice(slots["frame"][view]).format(side=f"{stated_side(side):g}")),
        telling.glossary,
        objects_sentence(order, telling, rng),
        *(footprint_sentence(name, footprints[name], telling, rng) for name in order),
    ]

    def region(name: str) -> str:
        return slots["floor"] if name == ROOM else slots["footprint"].format(object=telling.phrases.ref(name))

    question = rcc8_question(candidate).format(a=region(query.subject), b=region(query.object))
    return " ".join(filter(None, parts)), sentence(question)


def oriented(facts: tuple[Fact, ...], flipped: set[frozenset[str]]) -> tuple[Fact, ...]:
    """State a described pair from its other end where the room's seed says so: the same constraint."""
    out = []
    for fact in facts:
        if fact.object is not None and frozenset((fact.subject, fact.object)) in flipped:
            relation = converse(fact.relation) if fact.relation in DIRECTIONS else fact.relation
            fact = Fact(fact.object, relation, fact.subject)
        out.append(fact)
    return tuple(out)


def yes_targets(answers: dict[str, frozenset[str]], rng: Random) -> dict[tuple[str, str], bool]:
    """Which YN slots (setting, view) ask a consistent relation: as many No as Yes where answer sets allow."""
    slots = [(setting, view) for setting in SETTINGS for view in VIEWS]
    open_slots = [slot for slot in slots if len(answers[slot[0]]) < len(DIRECTIONS)]
    no = set(rng.sample(open_slots, min(len(slots) // 2, len(open_slots))))
    return {slot: slot not in no for slot in slots}


def text_seed(room_id: str, config: str, setting: str, view: str) -> int:
    """The seed of one setting and view's texts: the same for an item and its twin."""
    return derive_seed(room_id, config, setting, view)


def written_path(path: Sequence[PathStep], start: str, telling: Telling, view: str) -> str:
    return sentence(path_text(path, start, telling.phrases.ref, lambda code: telling.words(code, view, "phrase")))


def rcc8_query(topology: tuple[Fact, ...], rng: Random) -> tuple[Query, str]:
    """The pair an rcc8 question asks about, and its relation.

    A relation is drawn among those the room's pairs show, then a pair showing it, in either
    orientation: rare relations (PO, EC) are asked as often as the ubiquitous DC and NTPP.
    """
    relation = rng.choice([code for code in RCC8 if any(f.relation == code for f in topology)])
    fact = rng.choice([f for f in topology if f.relation == relation])
    if rng.random() < 0.5:
        return Query(fact.object, fact.subject), rcc8_converse(relation)
    return Query(fact.subject, fact.object), relation


def room_items(scene: Scene, config: Config) -> tuple[Item, ...]:
    """All items of one room for one configuration; () when the room has fewer than n prominent objects."""
    prominent = list(scene.prominent)
    n = config.n
    if len(prominent) < n:
        return ()
    choice = Random(derive_seed(scene.room_id, "objects", n))
    chosen = choice.sample(prominent, n)
    intro = choice.sample(range(n), n)
    names = object_names(chosen, intro)
    telling = Telling(Phrases(names, [type_words(o.type) for o in chosen]))
    order = [names[k] for k in intro]

    raster = rasterise([(o.x, o.z) for o in chosen], [o.footprint for o in chosen], scene.side, config.d)
    pairs = described_pairs(n, config.m)
    rng = Random(derive_seed(scene.room_id, config.name))
    flipped = {frozenset((names[a], names[b])) for a, b in pairs if rng.random() < 0.5}
    query = Query(names[0], names[-1])
    objects = tuple(
        StoryObject(name, o.type, o.asset_id, o.x, o.z, cell[0], cell[1], walls, snapped_footprint(o.footprint))
        for name, o, cell, walls in zip(names, chosen, raster.cells, raster.walls)
    )
    facts = {s: oriented(setting_facts(raster, names, pairs, s), flipped) for s in SETTINGS}
    answers = {s: answer_set(facts[s], names, (query.subject, query.object), config.d) for s in SETTINGS}
    targets = yes_targets(answers, rng)
    topology = topology_facts(names, [o.footprint for o in chosen], scene.side)
    shared = dict(
        room_id=scene.room_id, room_index=scene.index, seed=scene.seed, room_type=scene.room_type,
        room_side=scene.side, config=config.name, n=n, m=config.m, d=config.d,
        objects=objects, story_order=tuple(order), topology=topology,
    )
    yes, no = data_json("templates.json")["yes_no"]
    items = []
    for setting in SETTINGS:
        answer = tuple(code for code in DIRECTIONS if code in answers[setting])
        path = reasoning_path(facts[setting], query.subject, query.object)
        common = dict(
            shared, setting=setting, facts=facts[setting], answer_set=answer, answer_set_size=len(answer),
            true_relation=direction(raster.cells[0], raster.cells[-1]),
            continuous_relation=direction_of_points((chosen[0].x, chosen[0].z), (chosen[-1].x, chosen[-1].z)),
            query=query, hops=hops(n, pairs), path=path, path_decides=bool(path) and path[-1].composed == answer,
            tightness=round(tightness(facts[setting], config.d), 6),
            layout_decides=layout_decides(facts[setting], (query.subject, query.object), answer, config.d),
        )
        for view in VIEWS:
            pool = answer if targets[setting, view] else tuple(c for c in DIRECTIONS if c not in answer)
            texts = told(scene.room_type, scene.side, facts[setting], order, telling, view, query, pool,
                         text_seed(scene.room_id, config.name, setting, view))
            labels = [relation_words(code, view, "label") for code in DIRECTIONS]
            per_view = dict(common, view=view, story=texts.story,
                            path_text=written_path(path, query.subject, telling, view) if path else "")
            items.append(Item(
                id=f"{scene.room_id}-{config.name}-{setting}-{view}-FR", question_type="FR",
                question=texts.fr_question, options=tuple(labels), candidate=None,
                answer=", ".join(relation_words(code, view, "label") for code in answer), **per_view,
            ))
            items.append(Item(
                id=f"{scene.room_id}-{config.name}-{setting}-{view}-YN", question_type="YN",
                question=texts.yn_question, options=(yes, no), candidate=texts.candidate,
                answer=yes if texts.candidate in answer else no, **per_view,
            ))

    asked = Random(derive_seed(scene.room_id, config.name, RCC8_SETTING))
    rcc8_pair, truth = rcc8_query(topology, asked)
    yes_view, near_miss = asked.choice(VIEWS), asked.choice(neighbours(truth))
    for view in VIEWS:
        candidate = truth if view == yes_view else near_miss
        text, question = rcc8_told(scene.room_type, scene.side, objects, order, telling, view, rcc8_pair, candidate,
                                   text_seed(scene.room_id, config.name, RCC8_SETTING, view))
        items.append(Item(
            **shared, id=f"{scene.room_id}-{config.name}-{RCC8_SETTING}-{view}-YN", setting=RCC8_SETTING, view=view,
            question_type="YN", story=text, question=question, options=(yes, no),
            answer=yes if candidate == truth else no, answer_set=(truth,), answer_set_size=1, candidate=candidate,
            true_relation=truth, continuous_relation=truth, query=rcc8_pair, facts=(), hops=0,
            path=(), path_text="", path_decides=False, tightness=0.0, layout_decides=False,
        ))
    return tuple(items)
