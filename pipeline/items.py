"""Stories and questions: one room and one configuration in, that room's items out (design.md section 4).

For a room and a configuration (n, m, d): n prominent objects in a seeded order o_1 ... o_n, the
m described pairs in bands, the question pair (o_1, o_n); then for each of the 8 settings and
both views, one story with an FR and a YN question. Every choice is drawn from a seed derived
from the room and the configuration, so a room's items never depend on any other room.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from random import Random

from pipeline.assets import data_json
from pipeline.checker import answer_set
from pipeline.errors import RoomspaceError
from pipeline.facts import SETTINGS, Fact, described_pairs, hops, setting_facts
from pipeline.grid import GRID_SIZES, rasterise
from pipeline.records import Scene, SceneObject
from pipeline.relations import DIRECTIONS, converse, direction, direction_of_points, relation_words
from pipeline.seeding import derive_seed

VIEWS = ("top_down", "north_facing")
QUESTION_TYPES = ("FR", "YN")
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


@dataclass(frozen=True)
class Item:
    """One dataset row. pipeline/dataset.py derives the dataset's features from these fields."""

    id: str
    room_id: str
    room_index: int
    seed: int  # the global seed; the room is a pure function of (seed, room_index)
    room_type: str
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
    answer_set: tuple[str, ...]  # codes of every relation consistent with the story, canonical order
    answer_set_size: int
    candidate: str | None  # YN: the relation asked about (a code); FR: None
    true_relation: str  # o_1 relative to o_n in the rasterised scene (a code)
    continuous_relation: str  # o_1 relative to o_n between the objects' centres in metres
    query: Query
    facts: tuple[Fact, ...]  # the story's facts, as stated
    hops: int
    objects: tuple[StoryObject, ...]  # o_1 ... o_n


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


def unary_sentences(facts: tuple[Fact, ...], order: list[str], phrases: Phrases, view: str, rng: Random) -> list[str]:
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
            subjects=join_words([phrases.ref(name) for name in members]),
            region=relation_words(region, view, "phrase"),
            wall=relation_words(wall, view, "phrase") if wall else "",
        )
        out.append(sentence(text))
    return out


def binary_sentences(facts: tuple[Fact, ...], phrases: Phrases, view: str, rng: Random) -> list[str]:
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
            tail = rng.choice(slot).format(distance=relation_words(distance_code, view, "phrase"))
        text = rng.choice(templates["relation"]).format(
            subject=phrases.ref(subject),
            direction=relation_words(direction_code, view, "phrase"),
            objects=join_words([phrases.ref(name) for name in objects]),
            distance=tail,
        )
        out.append(sentence(text))
    return out


def story(scene: Scene, facts: tuple[Fact, ...], order: list[str], phrases: Phrases, view: str, rng: Random) -> str:
    templates = data_json("templates.json")
    room = data_json("vocabulary.json")["room_names"][scene.room_type]
    parts = [
        sentence(rng.choice(templates["opening"]).format(room=room, side=f"{scene.side:.1f}")),
        sentence(rng.choice(templates["frame"][view])),
        sentence(rng.choice(templates["objects"]).format(objects=join_words([phrases.intro(n) for n in order]))),
        *unary_sentences(facts, order, phrases, view, rng),
        *binary_sentences(facts, phrases, view, rng),
    ]
    return " ".join(parts)


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
    phrases = Phrases(names, [type_words(o.type) for o in chosen])
    order = [names[k] for k in intro]

    raster = rasterise([(o.x, o.z) for o in chosen], [o.footprint for o in chosen], scene.side, config.d)
    pairs = described_pairs(n, config.m)
    rng = Random(derive_seed(scene.room_id, config.name))
    flipped = {frozenset((names[a], names[b])) for a, b in pairs if rng.random() < 0.5}
    query = Query(names[0], names[-1])
    objects = tuple(
        StoryObject(name, o.type, o.asset_id, o.x, o.z, cell[0], cell[1], walls)
        for name, o, cell, walls in zip(names, chosen, raster.cells, raster.walls)
    )
    facts = {s: oriented(setting_facts(raster, names, pairs, s), flipped) for s in SETTINGS}
    answers = {s: answer_set(facts[s], names, (query.subject, query.object), config.d) for s in SETTINGS}
    targets = yes_targets(answers, rng)
    shared = dict(
        room_id=scene.room_id, room_index=scene.index, seed=scene.seed, room_type=scene.room_type,
        config=config.name, n=n, m=config.m, d=config.d,
        true_relation=direction(raster.cells[0], raster.cells[-1]),
        continuous_relation=direction_of_points((chosen[0].x, chosen[0].z), (chosen[-1].x, chosen[-1].z)),
        query=query, hops=hops(n, pairs), objects=objects,
    )
    questions = data_json("templates.json")["question"]
    yes, no = data_json("templates.json")["yes_no"]
    a, b = phrases.ref(query.subject), phrases.ref(query.object)
    items = []
    for setting in SETTINGS:
        answer = tuple(code for code in DIRECTIONS if code in answers[setting])
        for view in VIEWS:
            text_rng = Random(derive_seed(scene.room_id, config.name, setting, view))
            text = story(scene, facts[setting], order, phrases, view, text_rng)
            labels = [relation_words(code, view, "label") for code in DIRECTIONS]
            common = dict(shared, setting=setting, view=view, story=text, facts=facts[setting],
                          answer_set=answer, answer_set_size=len(answer))
            items.append(Item(
                id=f"{scene.room_id}-{config.name}-{setting}-{view}-FR", question_type="FR",
                question=sentence(text_rng.choice(questions["FR"][view]).format(a=a, b=b)),
                options=tuple(labels), candidate=None,
                answer=", ".join(relation_words(code, view, "label") for code in answer), **common,
            ))
            pool = answer if targets[setting, view] else tuple(c for c in DIRECTIONS if c not in answer)
            candidate = text_rng.choice(pool)
            relation = relation_words(candidate, view, "phrase")
            items.append(Item(
                id=f"{scene.room_id}-{config.name}-{setting}-{view}-YN", question_type="YN",
                question=sentence(text_rng.choice(questions["YN"][view]).format(a=a, b=b, relation=relation)),
                options=(yes, no), candidate=candidate,
                answer=yes if candidate in answer else no, **common,
            ))
    return tuple(items)
