"""Items: one room and one configuration in, that room's rows out (docs/semantics.md section 8).

For a room and a configuration (n, m, d): n prominent objects in a seeded order o_1 ... o_n, the
m described pairs in bands, the question pair (o_1, o_n); then for each of the 8 settings and
both views, one story with an FR and a YN question; then the rcc8 setting, one YN question per
view about the RCC-8 relation of two footprints (or a footprint and the floor) given in metres.
Every choice is drawn from a seed derived from the room and the configuration, so a room's items
never depend on any other room. Each row also carries its reasoning path (pipeline.spatial.reasoning),
footprint topology (pipeline.spatial.topology) and difficulty metadata (pipeline.spatial.difficulty).

`Item` is the dataset row, declared once: pipeline.dataset.rows derives the dataset's features,
Arrow schema and JSON Schema from its fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import chain, combinations
from random import Random
from types import MappingProxyType

from pipeline.data import data_json
from pipeline.scene.records import Point, Scene, SceneObject
from pipeline.seeding import derive_seed
from pipeline.spatial.checker import Answers, Settled, answer_sets_together, settled_claims, settled_pairs
from pipeline.spatial.difficulty import layout_decides, tightness
from pipeline.spatial.facts import (HARD_SETTINGS, SETTINGS, Fact, RasterFacts, described_pairs, hard_story_facts, hops,
                                   raster_facts, story_facts)
from pipeline.spatial.grid import Raster, rasterise
from pipeline.spatial.ladder import Bounded, claim_rung, rung, story_variables
from pipeline.spatial.reasoning import PathStep, reasoning_path
from pipeline.spatial.relations import (DIRECTIONS, DISTANCE_SCALES, DISTANCES, REGIONS, VIEWS, WALL_CONTACT, converse,
                                        direction, direction_of_points, distance, distance_scale, holds, relation_words)
from pipeline.spatial.topology import RCC8, ROOM, neighbours, rcc8_converse, snapped_footprint, topology_facts
from pipeline.text.balance import UNIFORM, fr_question, type_prior, yn_question
from pipeline.text.configs import Config
from pipeline.text.kinds import Room
from pipeline.text.prompts import DEFAULT_STYLE, RCC8_SETTING, prompt_text
from pipeline.text.stories import Sentences, Teller, sentences, text_seed, written_path
from pipeline.text.words import Phrases, Wording, object_names, type_words

QUESTION_TYPES = ("FR", "YN")
# What a question asks: a pair's direction; or, of a hard story (docs/semantics.md section 22), where one
# object could stand (FR over the nine regions), or whether one claim more can hold with every fact (YN).
RELATION_FORM, REGIONS_FORM, CONSISTENCY_FORM = FORMS = ("relation", "regions", "consistency")
Askable = dict[str, dict[tuple[str, str], frozenset[str]]]  # per setting, each pair a question may ask: its answer set
ITEM_SETTINGS = (*SETTINGS, RCC8_SETTING)
ROWS_PER_ROOM = len(SETTINGS) * len(VIEWS) * len(QUESTION_TYPES) + len(VIEWS)  # rcc8 asks YN only: 34
LABELS = {view: tuple(relation_words(code, view, "label") for code in DIRECTIONS) for view in VIEWS}  # FR options
REGION_LABELS = {view: tuple(relation_words(code, view, "label") for code in REGIONS) for view in VIEWS}  # regions form
YES_NO: tuple[str, str] = tuple(data_json("templates.json")["yes_no"])  # YN options, one tuple: converted once


@dataclass(frozen=True)
class Query:
    subject: str  # o_1: "where is the subject relative to the object?"
    object: str  # o_n

    @property
    def pair(self) -> tuple[str, str]:
        return (self.subject, self.object)


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
    """One dataset row. pipeline/dataset/rows.py derives the dataset's features from these fields."""

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
    tightness: float  # mean share of its domain that each fact excludes (pipeline/spatial/difficulty.py)
    layout_decides: bool  # the query objects' region facts alone give the answer set
    # The difficulty ladder (pipeline/spatial/ladder.py): the least k whose bounded reasoner R_k gives the
    # answer set (3: only the checker's search does); None where no story's facts are reasoned from.
    level: int | None
    search_effort: int  # the values the checker's search tries to refute what R2 leaves open (0 below level 3)
    bounded: Bounded  # what R0, R1 and R2 leave open, in the row's frame (all (): no story facts)
    # What the question asks (FORMS): a pair's relation, or a hard story's whole-story forms (section 22).
    form: str = field(default="relation", kw_only=True)
    option_codes: tuple[str, ...] = field(default=(), kw_only=True)  # the code each option names; (): directions
    # The self-contained prompt (pipeline.text.prompts), made from the fields above when first read: a copy
    # with another story (a twin) or another modality (a vision row) gets its own, and a record made only to
    # make another from (a map question's story, a twin's original) makes none.
    prompt: str = field(init=False)

    def __getattr__(self, name: str) -> str:
        """The prompt, made when first read (called only for an attribute not set: any other is an error)."""
        if name != "prompt":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        # the fields only some records have, read where they are set: a getattr of a missing one would
        # come back through this method (an exception a prompt, four times)
        held = vars(self)
        prompt = prompt_text(
            DEFAULT_STYLE, story=self.story, question=self.question, options=self.options,
            question_type=self.question_type, setting=self.setting, view=self.view, d=self.d,
            relations=chain((fact.relation for fact in self.facts), self.asked_codes), modality=held.get("modality"),
            story_view=held.get("story_view"), moved=held.get("frame_changes", 0) > 0,
            image_name=held.get("image_name"))
        object.__setattr__(self, "prompt", prompt)
        return prompt

    @property
    def asked_codes(self) -> tuple[str, ...]:
        """The relations a whole-story question names beyond its story's (its options, or its claim):
        the prompt defines them too."""
        return self.option_codes if self.form == REGIONS_FORM else (self.candidate,) if self.form == CONSISTENCY_FORM else ()


# The reasoning fields of a question with no story facts to reason from (an rcc8 question, whose
# story states footprints, keeps its room's objects and topology; a vision pair question has none):
# one answer, no facts, no path, nothing for the difficulty measures.
NO_REASONING: Mapping[str, object] = MappingProxyType(dict(
    facts=(), answer_set_size=1, hops=0, objects=(), topology=(), path=(), path_text="", path_decides=False,
    tightness=0.0, layout_decides=False, level=None, search_effort=0, bounded=Bounded((), (), ()),
))


def ladder_fields(facts: Sequence[Fact], pair: tuple[str, str], answer: Sequence[str], d: int,
                  path: Sequence[PathStep], seen: Callable[[Sequence[str]], tuple[str, ...]] | None = None,
                  settled: Settled | None = None) -> dict:
    """A question's fields of the difficulty ladder (`ladder.rung`, given what the checker has
    `settled` of the pair, if it has): its level, search effort and bounded answers, these said as
    `seen` says a set of plan codes in the row's frame (if given)."""
    found = rung(facts, pair, answer, d, path, settled)
    held = found.bounded
    return dict(level=found.level, search_effort=found.effort,
                bounded=held if seen is None else Bounded(seen(held.stated), seen(held.chain), seen(held.local)))


def init_fields(item: Item, record: type = Item) -> dict:
    """The fields `record` (Item or a record made from it) is made from: a copy of `item` as another
    record, or with other values, is made from these, and its prompt is made again."""
    return {f.name: getattr(item, f.name) for f in dataclasses.fields(record) if f.init}


def fr_row(record: type[Item], fields: Mapping, id_prefix: str, question: str) -> Item:
    """A question asked as FR: a `record` made from `fields` (with its `view` and `answer_set`), id
    `<id_prefix>-FR`, offering the view's labels and answered with the answer set's."""
    return record(**{**fields, "id": f"{id_prefix}-FR", "question_type": "FR", "question": question,
                     "options": LABELS[fields["view"]], "candidate": None,
                     "answer": fr_answer(fields["answer_set"], fields["view"])})


def yn_row(record: type[Item], fields: Mapping, id_prefix: str, question: str, candidate: str) -> Item:
    """A question asked as YN about `candidate` (a code): Yes iff the answer set holds it; id `<id_prefix>-YN`."""
    return record(**{**fields, "id": f"{id_prefix}-YN", "question_type": "YN", "question": question,
                     "options": YES_NO, "candidate": candidate,
                     "answer": YES_NO[0] if candidate in fields["answer_set"] else YES_NO[1]})


def question_pair(record: type[Item], fields: Mapping, prefix: str, fr_question: str, yn_question: str,
                  candidate: str) -> tuple[Item, Item]:
    """One question asked as FR and as YN (`fr_row`, `yn_row`): two `record`s made from `fields` (the
    rest of their fields; any id, question or answer in it is replaced)."""
    return fr_row(record, fields, prefix, fr_question), yn_row(record, fields, prefix, yn_question, candidate)


def oriented(facts: dict[str, tuple[Fact, ...]], flipped: set[tuple[str, str]]) -> dict[str, tuple[Fact, ...]]:
    """Each setting's facts, a described pair stated from its other end where the room's seed says
    so (the same constraint); a fact the settings share (story_facts) is stated once."""
    stated: dict[int, Fact] = {}  # by the id of the fact as made
    for fact in chain.from_iterable(facts.values()):
        if id(fact) not in stated:
            flip = (fact.subject, fact.object) in flipped
            stated[id(fact)] = Fact(fact.object, converse(fact.relation), fact.subject) if flip else fact
    return {setting: tuple(stated[id(fact)] for fact in setting_facts) for setting, setting_facts in facts.items()}


def asked_no(answer_sets: Sequence[frozenset[str] | tuple[str, ...]], rng: Random) -> set[int]:
    """Which YN questions (by position) ask an inconsistent relation: as many No as Yes where answer
    sets allow (one that is all nine relations can only be Yes)."""
    open_slots = [k for k, answer in enumerate(answer_sets) if len(answer) < len(DIRECTIONS)]
    return set(rng.sample(open_slots, min(len(answer_sets) // 2, len(open_slots))))


def yes_targets(answers: dict[str, frozenset[str]], rng: Random) -> dict[tuple[str, str], bool]:
    """Which YN slots (setting, view) ask a consistent relation (`asked_no`)."""
    slots = [(setting, view) for setting in SETTINGS for view in VIEWS]
    no = asked_no([answers[setting] for setting, _ in slots], rng)
    return {slot: k not in no for k, slot in enumerate(slots)}


def fr_answer(answer: Sequence[str], view: str) -> str:
    """An FR row's answer: its answer set's labels in the view's words."""
    return ", ".join(relation_words(code, view, "label") for code in answer)


def rcc8_query(topology: tuple[Fact, ...], rng: Random) -> tuple[Query, str]:
    """The pair an rcc8 question asks about, and its relation.

    A relation is drawn among those the room's pairs show, then a pair showing it, in either
    orientation: rare relations (PO, EC) are asked as often as the ubiquitous DC and NTPP.
    """
    shown = {f.relation for f in topology}
    relation = rng.choice([code for code in RCC8 if code in shown])
    fact = rng.choice([f for f in topology if f.relation == relation])
    if rng.random() < 0.5:
        return Query(fact.object, fact.subject), rcc8_converse(relation)
    return Query(fact.subject, fact.object), relation


@dataclass(frozen=True)
class Choice:
    """The n objects a room's configurations with this n ask about, and how stories name them."""

    objects: tuple[SceneObject, ...]  # o_1 ... o_n
    names: tuple[str, ...]  # in o order
    order: tuple[str, ...]  # the names in the order stories introduce them
    teller: Teller  # tells stories in these names, keeping their sentences for the room's other configurations


@dataclass(frozen=True)
class Told:
    """A room's stories in one configuration, whether or not it asks a question in them: what a
    kind retelling them starts from (the agent rows of every family, the egocentric maps; a hard
    configuration's agent rows ask their own questions)."""

    facts: Mapping[str, tuple[Fact, ...]]  # per setting, as its stories state them
    shared: Mapping[str, object]  # the fields every row of the room and configuration has
    # (setting, view) -> the story its questions are told after, told when asked: a kind may need few of them
    story: Callable[[str, str], str]


class RoomItems:
    """One room's items for any of its configurations: `RoomItems(scene)(config)`.

    What no configuration changes is computed once per room and kept, however many
    configurations ask (the sweep asks 70): the objects chosen for each n, their names and the
    sentences told of them (`Teller`), each object's snapped footprint, the topology of each
    choice, the raster, story objects and facts of each (n, d), and the checker's answers for each
    choice and grid (`Answers`: a configuration's answer sets are cheaper after one with more
    described pairs).
    """

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self._choices: dict[int, Choice] = {}
        self._footprints: dict[str, tuple[Point, ...]] = {}  # per object id
        self._topology: dict[int, tuple[Fact, ...]] = {}
        self._rasters: dict[tuple[int, int], Raster] = {}
        self._objects: dict[tuple[int, int], tuple[StoryObject, ...]] = {}
        self._facts: dict[tuple[int, int], RasterFacts] = {}
        self._answers: dict[tuple[int, int, tuple[int, int]], Answers] = {}

    def choice(self, n: int) -> Choice:
        if n not in self._choices:
            draw = Random(derive_seed(self.scene.room_id, "objects", n))
            chosen = draw.sample(list(self.scene.prominent), n)
            intro = draw.sample(range(n), n)
            names = object_names(chosen, intro)
            teller = Teller(Wording(Phrases(names, [type_words(o.type) for o in chosen])))
            self._choices[n] = Choice(tuple(chosen), tuple(names), tuple(names[k] for k in intro), teller)
        return self._choices[n]

    def footprint(self, scene_object: SceneObject) -> tuple[Point, ...]:
        """The object's footprint snapped to the topology grid, as rcc8 stories state it."""
        if scene_object.id not in self._footprints:
            self._footprints[scene_object.id] = snapped_footprint(scene_object.footprint)
        return self._footprints[scene_object.id]

    def topology(self, n: int) -> tuple[Fact, ...]:
        if n not in self._topology:
            choice = self.choice(n)
            self._topology[n] = topology_facts(choice.names, [self.footprint(o) for o in choice.objects],
                                               self.scene.side)
        return self._topology[n]

    def raster(self, n: int, d: int) -> Raster:
        if (n, d) not in self._rasters:
            chosen = self.choice(n).objects
            self._rasters[n, d] = rasterise([(o.x, o.z) for o in chosen], [o.footprint for o in chosen],
                                            self.scene.side, d)
        return self._rasters[n, d]

    def story_objects(self, n: int, d: int) -> tuple[StoryObject, ...]:
        """o_1 ... o_n as the rows of every configuration with this n and d carry them (one tuple:
        the rows' columns convert it once)."""
        if (n, d) not in self._objects:
            choice, raster = self.choice(n), self.raster(n, d)
            self._objects[n, d] = tuple(
                StoryObject(name, o.type, o.asset_id, o.x, o.z, cell[0], cell[1], walls, self.footprint(o))
                for name, o, cell, walls in zip(choice.names, choice.objects, raster.cells, raster.walls))
        return self._objects[n, d]

    def facts(self, n: int, d: int) -> RasterFacts:
        if (n, d) not in self._facts:
            self._facts[n, d] = raster_facts(self.raster(n, d), self.choice(n).names)
        return self._facts[n, d]

    def answers(self, n: int, d: int, pair: tuple[int, int] | None = None) -> Answers:
        """The checker's answers about the pair of objects at these positions of the choice ((o_1, o_n) unless given)."""
        pair = pair or (0, n - 1)
        if (n, d, pair) not in self._answers:
            names = self.choice(n).names
            self._answers[n, d, pair] = Answers(names, (names[pair[0]], names[pair[1]]), d)
        return self._answers[n, d, pair]

    def askable(self, config: Config) -> tuple[dict[str, dict[tuple[str, str], frozenset[str]]], dict[str, str]]:
        """What a balanced configuration may ask in this room (`_askable`), and each name's object type."""
        n, choice = config.n, self.choice(config.n)
        facts, _, _ = _told(self.scene, config, choice, self.story_objects(n, config.d), self.facts(n, config.d),
                            self.topology(n))
        return (_askable(config, choice, facts, self.topology(n), lambda pair: self.answers(n, config.d, pair)),
                dict(zip(choice.names, (o.type for o in choice.objects))))

    def __call__(self, config: Config) -> tuple[Item, ...]:
        """All items of the room for one configuration; () when the room has fewer than n prominent objects."""
        scene, n = self.scene, config.n
        if len(scene.prominent) < n:
            return ()
        made = _balanced_items if config.balanced else _items
        return made(scene, config, self.choice(n), self.raster(n, config.d), self.story_objects(n, config.d),
                    self.facts(n, config.d), self.topology(n), lambda pair=None: self.answers(n, config.d, pair))

    def told(self, config: Config) -> Told | None:
        """The room's stories in `config` (`Told`); None when the room has fewer than n prominent objects."""
        scene, n = self.scene, config.n
        if len(scene.prominent) < n:
            return None
        choice = self.choice(n)
        facts, _, shared = _told(scene, config, choice, self.story_objects(n, config.d), self.facts(n, config.d),
                                 self.topology(n))

        def story(setting: str, view: str) -> str:
            # drawn first from its seed, as its questions' tellings draw it (Teller.setting)
            drawn = Random(text_seed(scene.room_id, config.paper.name, setting, view))
            return choice.teller.story(scene.room_type, scene.side, sentences(facts[setting], choice.order),
                                       choice.order, view, drawn)
        return Told(facts, shared, story)

    def setting_fields(self, config: Config) -> dict[str, tuple[dict, dict[str, str]]] | None:
        """Per setting, what the questions of its stories share (`_setting_fields`) in a configuration of the
        paper's family, found without telling a story: what a retelling starts from (the twin map questions,
        pipeline.text.twins.twin_stories); None when the room has fewer than n prominent objects."""
        scene, n, d = self.scene, config.n, config.d
        if len(scene.prominent) < n:
            return None
        choice = self.choice(n)
        facts, _, shared = _told(scene, config, choice, self.story_objects(n, d), self.facts(n, d), self.topology(n))
        return _setting_fields(config, choice, self.raster(n, d), facts, shared, self.answers(n, d).answer_sets(facts))


RECORD = Item  # the base kind's row (pipeline.text.kinds)


def rows(room: Room, config: Config) -> tuple[Item, ...]:
    """The base kind's rows of a room: one RoomItems per room serves every configuration."""
    return shared_items(room)(config)


def shared_items(room: Room) -> RoomItems:
    """The room's RoomItems, made once for every configuration and kind."""
    return room.shared(("items",), lambda: RoomItems(room.scene))


def room_items(scene: Scene, config: Config) -> tuple[Item, ...]:
    """All items of one room for one configuration; () when the room has fewer than n prominent objects."""
    return RoomItems(scene)(config)


def _told(scene: Scene, config: Config, choice: Choice, objects: tuple[StoryObject, ...], room_facts: RasterFacts,
          topology: tuple[Fact, ...]) -> tuple[dict[str, tuple[Fact, ...]], Random, dict]:
    """What every question of a room and configuration shares: each setting's facts as the stories
    state them (a balanced configuration's stories are the paper's; a hard one's, its hard settings'),
    the draw that oriented them (it goes on drawing the paper's YN answers) and the rows' common fields."""
    pairs, names = described_pairs(config.n, config.m), choice.names
    rng = Random(derive_seed(scene.room_id, config.paper.name))
    stated = hard_story_facts(room_facts, pairs, config.n) if config.hard else story_facts(room_facts, pairs)
    flipped = {pair for a, b in pairs if rng.random() < 0.5 for pair in ((names[a], names[b]), (names[b], names[a]))}
    shared = dict(
        room_id=scene.room_id, room_index=scene.index, seed=scene.seed, room_type=scene.room_type,
        room_side=scene.side, config=config.name, n=config.n, m=config.m, d=config.d,
        objects=objects, story_order=choice.order, topology=topology,
    )
    return oriented(stated, flipped), rng, shared


def _items(scene: Scene, config: Config, choice: Choice, raster: Raster, objects: tuple[StoryObject, ...],
           room_facts: RasterFacts, topology: tuple[Fact, ...], known: Callable[[], Answers]) -> tuple[Item, ...]:
    room_id, name = scene.room_id, config.name
    order, teller = choice.order, choice.teller
    facts, rng, shared = _told(scene, config, choice, objects, room_facts, topology)
    answers = known().answer_sets(facts)
    targets = yes_targets(answers, rng)
    yes, no = YES_NO
    items = []
    for setting, (common, path_texts) in _setting_fields(config, choice, raster, facts, shared, answers).items():
        answer, query = common["answer_set"], common["query"]
        said = sentences(facts[setting], order)
        for view in VIEWS:
            pool = answer if targets[setting, view] else tuple(c for c in DIRECTIONS if c not in answer)
            texts = teller.setting(scene.room_type, scene.side, said, order, view, query.pair, pool,
                                   text_seed(room_id, name, setting, view))
            per_view = dict(common, view=view, story=texts.story, path_text=path_texts[view])
            items.extend(question_pair(Item, per_view, f"{room_id}-{name}-{setting}-{view}", texts.fr_question,
                                       texts.yn_question, texts.candidate))

    asked = Random(derive_seed(room_id, name, RCC8_SETTING))
    rcc8_pair, truth = rcc8_query(topology, asked)
    yes_view, near_miss = asked.choice(VIEWS), asked.choice(neighbours(truth))
    stated = {o.name: o.footprint for o in objects}
    for view in VIEWS:
        candidate = truth if view == yes_view else near_miss
        text, question = teller.rcc8(scene.room_type, scene.side, stated, order, view, rcc8_pair.pair, candidate,
                                     text_seed(room_id, name, RCC8_SETTING, view))
        items.append(Item(
            **{**NO_REASONING, **shared}, id=f"{room_id}-{name}-{RCC8_SETTING}-{view}-YN", setting=RCC8_SETTING,
            view=view, question_type="YN", story=text, question=question, options=YES_NO,
            answer=yes if candidate == truth else no, answer_set=(truth,), candidate=candidate,
            true_relation=truth, continuous_relation=truth, query=rcc8_pair,
        ))
    return tuple(items)


def _setting_fields(config: Config, choice: Choice, raster: Raster, facts: Mapping[str, tuple[Fact, ...]],
                    shared: Mapping, answers: Mapping[str, frozenset[str]]) -> dict[str, tuple[dict, dict[str, str]]]:
    """Per setting of the paper's, the fields every question of its stories has (its facts, answer set,
    reasoning path and difficulty; `shared`'s), and the path in each view's words."""
    n, names, chosen = config.n, choice.names, choice.objects
    query = Query(names[0], names[-1])
    stories = dict(
        shared, query=query, hops=hops(n, described_pairs(n, config.m)),
        true_relation=direction(raster.cells[0], raster.cells[-1]),
        continuous_relation=direction_of_points((chosen[0].x, chosen[0].z), (chosen[-1].x, chosen[-1].z)),
    )
    # The o2 settings share their direction facts, hence their reasoning path and its words in each view.
    paths: dict[tuple[Fact, ...], tuple[tuple[PathStep, ...], dict[str, str]]] = {}
    out = {}
    for setting in SETTINGS:
        answer = tuple(code for code in DIRECTIONS if code in answers[setting])
        links = tuple(fact for fact in facts[setting] if fact.relation in DIRECTIONS)
        if links not in paths:
            path = reasoning_path(links, query.subject, query.object)
            paths[links] = path, {view: written_path(path, query.subject, choice.teller.wording, view) if path else ""
                                  for view in VIEWS}
        path, path_texts = paths[links]
        out[setting] = dict(
            stories, setting=setting, facts=facts[setting], answer_set=answer, answer_set_size=len(answer),
            path=path, path_decides=bool(path) and path[-1].composed == answer,
            tightness=round(tightness(facts[setting], config.d), 6),
            layout_decides=layout_decides(facts[setting], query.pair, answer, config.d),
            **ladder_fields(facts[setting], query.pair, answer, config.d, path),
        ), path_texts
    return out


def _askable(config: Config, choice: Choice, facts: Mapping[str, tuple[Fact, ...]], topology: tuple[Fact, ...],
             known: Callable[[tuple[int, int]], Answers]) -> Askable:
    """What a balanced configuration may ask, per setting: every pair no described pair states, both
    ways (from its other end a pair's answer is the converse set), with its answer set; and rcc8's
    pairs of footprints, both ways, with their one relation (each object is inside the room: nothing
    to ask there)."""
    names, described = choice.names, described_pairs(config.n, config.m)
    asked = [pair for pair in combinations(range(config.n), 2) if pair not in described]
    solved = dict(zip(asked, answer_sets_together([known(pair) for pair in asked], facts)))
    askable: dict[str, dict[tuple[str, str], frozenset[str]]] = {
        setting: {pair: held for (a, b), sets in solved.items()
                  for pair, held in (((names[a], names[b]), sets[setting]),
                                     ((names[b], names[a]), frozenset(map(converse, sets[setting]))))}
        for setting in SETTINGS}
    askable[RCC8_SETTING] = {pair: frozenset({relation}) for fact in topology if ROOM not in (fact.subject, fact.object)
                             for pair, relation in (((fact.subject, fact.object), fact.relation),
                                                    ((fact.object, fact.subject), rcc8_converse(fact.relation)))}
    return askable


def _hard_askable(config: Config, choice: Choice, facts: Mapping[str, tuple[Fact, ...]]
                  ) -> dict[str, Mapping[tuple[str, str], Settled]]:
    """What a hard configuration may ask, per hard setting: every pair no described pair states, both
    ways, whose answer set only search gives (level 3: the checker's search branches, trying 2 values
    or more), with what the checker settles of it: its answer set, what R2 leaves open for it (a YN
    question's offers) and the search effort."""
    names, described = choice.names, described_pairs(config.n, config.m)
    asked = [(names[a], names[b]) for a, b in combinations(range(config.n), 2) if (a, b) not in described]
    return {setting: beyond_local(facts[setting], asked, config.d) for setting in HARD_SETTINGS}


def beyond_local(facts: Sequence[Fact], pairs: Sequence[tuple[str, str]], d: int
                 ) -> Mapping[tuple[str, str], Settled]:
    """The `pairs` of one story whose answer set R2 does not give (level 3), each both ways (the
    second the converse), with what the checker settles of it (`checker.settled_pairs`). Kept for the
    room's other kinds: a hard configuration's agent rows ask of its stories again (pipeline.text.agents)."""
    return _beyond_local(tuple(facts), tuple(pairs), d)


@lru_cache(maxsize=64)
def _beyond_local(facts: tuple[Fact, ...], pairs: tuple[tuple[str, str], ...], d: int
                  ) -> Mapping[tuple[str, str], Settled]:
    out = {}
    for pair, held in zip(pairs, settled_pairs(facts, story_variables(facts, pairs[0]), pairs, d)):
        if held.local != held.exact:
            out[pair] = held
            # the other way round: the converse sets, refuted by the same search (the same constraint)
            out[pair[::-1]] = Settled(frozenset(map(converse, held.exact)), frozenset(map(converse, held.local)),
                                      held.effort)
    return MappingProxyType(out)


ClaimKey = tuple[str, str | None, tuple[str, ...]]  # (subject, object or None: in the room, the kind's codes)


@dataclass(frozen=True)
class Claimed:
    """What a whole-story question may ask of one object or pair: its kind's codes that can hold with
    the story (exact), and those R2 leaves open (a superset: where strictly so, only search tells them apart)."""

    exact: frozenset[str]
    local: frozenset[str]


def _whole_story_askable(config: Config, choice: Choice, facts: Mapping[str, tuple[Fact, ...]]
                         ) -> dict[str, dict[ClaimKey, Claimed]]:
    """What a hard configuration's whole-story questions may ask, per hard setting: each object's
    regions and wall relation, and the distance class on the setting's scale of each pair no described
    pair states, with what can hold and what R2 (`propagated_holding`) leaves open."""
    names, described = choice.names, described_pairs(config.n, config.m)
    undescribed = [(names[a], names[b]) for a, b in combinations(range(config.n), 2) if (a, b) not in described]
    askable: dict[str, dict[ClaimKey, Claimed]] = {}
    for setting, scale in zip(HARD_SETTINGS, DISTANCE_SCALES):
        told = facts[setting]
        variables = story_variables(told, undescribed[0])
        keys = [*((name, None, REGIONS) for name in names), *((name, None, WALL_CONTACT) for name in names),
                *((a, b, tuple(c for c in DISTANCES if distance_scale(c) == scale)) for a, b in undescribed)]
        claims = [Fact(subject, code, obj) for subject, obj, codes in keys for code in codes]
        settled = dict(zip(claims, settled_claims(told, variables, claims, config.d)))
        askable[setting] = {}
        for key in keys:
            subject, obj, codes = key
            held = [Fact(subject, code, obj) for code in codes]
            claimed = Claimed(frozenset(c.relation for c in held if settled[c].holds),
                              frozenset(c.relation for c in held if settled[c].local))
            if claimed.exact:
                askable[setting][key] = claimed
    return askable


def _whole_story_items(scene: Scene, config: Config, choice: Choice, raster: Raster, setting: str, view: str,
                       facts: tuple[Fact, ...], said: Sentences, shared: Mapping, claimed: Mapping[ClaimKey, Claimed]
                       ) -> list[Item]:
    """A hard setting's whole-story questions in one view (docs/semantics.md section 22): where an
    object could stand (FR over the nine regions), drawn uniformly among the objects whose regions
    only search gives, and whether one claim more can hold together with the story (YN), drawn as
    balanced YN questions are among the claims R2 leaves open: a No is one only search finds."""
    if not claimed:
        return []  # no claim can hold: a story no layout fits (never made: the room is one)
    room_id, names, d = scene.room_id, choice.names, config.d
    position = {name: k for k, name in enumerate(names)}
    draw = Random(derive_seed(room_id, config.name, setting, view, "whole story"))
    seed = text_seed(room_id, config.paper.name, setting, view)
    prefix = f"{room_id}-{config.name}-{setting}-{view}"
    regions = {key: held.exact for key, held in claimed.items() if key[2] == REGIONS and held.exact != held.local}
    scale_codes = next((key[2] for key in claimed if key[1] is not None), ())
    consistency = yn_question({key: held.exact for key, held in claimed.items()},
                              REGIONS + WALL_CONTACT + scale_codes, draw,
                              offered={key: held.local for key, held in claimed.items()})
    asked = []
    if regions:
        asked.append((fr_question(regions, draw, UNIFORM).pair, None))
    if not consistency.fallback:
        asked.append((consistency.pair, consistency.candidate))

    items = []
    for (subject, obj, codes), candidate in asked:
        a = position[subject]
        if obj is None:
            truth, query, hop = next(c for c in codes if holds(c, d, raster.cells[a])), Query(subject, ROOM), 0
        else:
            b = position[obj]
            truth = distance(raster.cells[a], raster.cells[b], d, distance_scale(codes[0]))
            query, hop = Query(subject, obj), hops(config.n, described_pairs(config.n, config.m), (a, b))
        answer = tuple(code for code in codes if code in claimed[subject, obj, codes].exact)
        found = claim_rung(facts, subject, obj, codes, answer, d, claimed[subject, obj, codes].local)
        story, question = choice.teller.whole_story(scene.room_type, scene.side, said, choice.order, view, subject,
                                                    candidate, obj, seed)
        fields = dict(
            shared, setting=setting, view=view, facts=facts, story=story, query=query, hops=hop,
            true_relation=truth, continuous_relation=truth, answer_set=answer, answer_set_size=len(answer),
            path=(), path_text="", path_decides=False, tightness=round(tightness(facts, d), 6),
            layout_decides=False, level=found.level, search_effort=found.effort, bounded=found.bounded)
        if candidate is None:
            items.append(Item(**fields, id=f"{prefix}-{REGIONS_FORM}-FR", question_type="FR", question=question,
                              options=REGION_LABELS[view], answer=fr_answer(answer, view), candidate=None,
                              form=REGIONS_FORM, option_codes=REGIONS))
        else:
            items.append(yn_row(Item, dict(fields, form=CONSISTENCY_FORM), f"{prefix}-{CONSISTENCY_FORM}", question,
                                candidate))
    return items


def _balanced_items(scene: Scene, config: Config, choice: Choice, raster: Raster, objects: tuple[StoryObject, ...],
                    room_facts: RasterFacts, topology: tuple[Fact, ...],
                    known: Callable[[tuple[int, int]], Answers]) -> tuple[Item, ...]:
    """A balanced configuration's items: the paper's stories, each question's pair and YN candidate
    drawn by pipeline.text.balance among the pairs no described pair states directly. A hard
    configuration's: its hard stories, drawn so among the pairs only search answers (`_hard_askable`),
    a YN question offering only what R2 leaves open, and no rcc8 question."""
    n, room_id, name, told = config.n, scene.room_id, config.name, config.paper.name
    chosen, names, order, teller = choice.objects, choice.names, choice.order, choice.teller
    pairs = described_pairs(n, config.m)
    facts, _, shared = _told(scene, config, choice, objects, room_facts, topology)
    settled: dict[str, Mapping[tuple[str, str], Settled]] = {}
    if config.hard:
        settled, settings = _hard_askable(config, choice, facts), HARD_SETTINGS
        askable, offered = ({setting: {pair: getattr(held, part) for pair, held in by_pair.items()}
                             for setting, by_pair in settled.items()} for part in ("exact", "local"))
        claimed = _whole_story_askable(config, choice, facts)
    else:
        askable, offered, settings = _askable(config, choice, facts, topology, known), None, SETTINGS
    position = {name_: k for k, name_ in enumerate(names)}
    type_of = dict(zip(names, (o.type for o in chosen))).__getitem__
    paths: dict[tuple, tuple[PathStep, ...]] = {}

    @cache
    def about(setting: str, pair: tuple[str, str]) -> dict:
        """The fields a question about `pair` in `setting` has of its own (asked in any view)."""
        a, b = position[pair[0]], position[pair[1]]
        answer = tuple(code for code in DIRECTIONS if code in askable[setting][pair])
        links = tuple(fact for fact in facts[setting] if fact.relation in DIRECTIONS)
        if (links, pair) not in paths:
            paths[links, pair] = reasoning_path(links, *pair)
        path = paths[links, pair]
        return dict(
            shared, setting=setting, facts=facts[setting], query=Query(*pair), hops=hops(n, pairs, (a, b)),
            true_relation=direction(raster.cells[a], raster.cells[b]),
            continuous_relation=direction_of_points((chosen[a].x, chosen[a].z), (chosen[b].x, chosen[b].z)),
            answer_set=answer, answer_set_size=len(answer), path=path,
            path_decides=bool(path) and path[-1].composed == answer,
            tightness=round(tightness(facts[setting], config.d), 6),
            layout_decides=layout_decides(facts[setting], pair, answer, config.d),
            **ladder_fields(facts[setting], pair, answer, config.d, path,
                            settled=settled[setting][pair] if settled else None),
        )

    def asked_pairs(setting: str, view: str, said: Sentences, weights) -> list[Item]:
        """The setting's FR and YN pair questions in one view."""
        answer_sets = askable[setting]
        draw = Random(derive_seed(room_id, name, setting, view))
        fr = fr_question(answer_sets, draw, weights)
        yn = yn_question(answer_sets, DIRECTIONS, draw, weights, offered=offered and offered[setting])
        seed = text_seed(room_id, told, setting, view)
        # The story comes first from its seed: the paper's story, then each question about its own pair.
        texts = teller.setting(scene.room_type, scene.side, said, order, view, fr.pair, (yn.candidate,), seed,
                               yn_query=yn.pair)
        prefix = f"{room_id}-{name}-{setting}-{view}"
        asked = [(fr.pair, lambda fields: fr_row(Item, fields, prefix, texts.fr_question))]
        if not yn.fallback:  # else every askable pair's answer is all nine: any YN question would be Yes
            asked.append((yn.pair, lambda fields: yn_row(Item, fields, prefix, texts.yn_question, yn.candidate)))
        made = []
        for pair, make in asked:
            fields = about(setting, pair)
            path = fields["path"]
            made.append(make(dict(fields, view=view, story=texts.story,
                                  path_text=written_path(path, pair[0], teller.wording, view) if path else "")))
        return made

    items = []
    for setting in settings:
        said = sentences(facts[setting], order)
        weights = UNIFORM if config.hard else type_prior().weights(setting, type_of)
        for view in VIEWS:
            if askable[setting]:  # a hard setting may have no pair that only search answers
                items.extend(asked_pairs(setting, view, said, weights))
            if config.hard:
                items.extend(_whole_story_items(scene, config, choice, raster, setting, view, facts[setting], said,
                                                shared, claimed[setting]))

    stated = {o.name: o.footprint for o in objects}
    for view in VIEWS if not config.hard else ():
        # The two objects' types all but give their footprints' relation (a chair overlaps the table it
        # stands at), so both answers must be had among pairs of the same two types; a room without
        # such pairs asks no rcc8 question (the fallback, the same draw in either view).
        drawn = yn_question(askable[RCC8_SETTING], RCC8, Random(derive_seed(room_id, name, RCC8_SETTING, view)),
                            group_of=lambda pair: tuple(map(type_of, pair)))
        if drawn.fallback:
            break
        (truth,) = askable[RCC8_SETTING][drawn.pair]
        text, question = teller.rcc8(scene.room_type, scene.side, stated, order, view, drawn.pair, drawn.candidate,
                                     text_seed(room_id, told, RCC8_SETTING, view))
        items.append(yn_row(Item, {**NO_REASONING, **shared, "view": view, "setting": RCC8_SETTING, "story": text,
                                   "answer_set": (truth,), "true_relation": truth, "continuous_relation": truth,
                                   "query": Query(*drawn.pair)}, f"{room_id}-{name}-{RCC8_SETTING}-{view}", question,
                           drawn.candidate))
    return tuple(items)
