"""Name-swapped twins: a configuration's items told again in invented words (pipeline/data/twins.json).

Each object type gets an invented word ("chair 2" becomes "dax 2") and each relation code an
invented word said in a fixed form per kind ("zorp of", "in the fep zone"); the story defines,
after its frame, the invented words of all nine directions and of every other relation it states
by the view's familiar words, so the twin stays answerable. The draw is seeded per room and configuration. Everything
else is the original item's: the same facts (renamed), the same template draws (each text is
re-told from the original's seed), the same answer set, candidate and answer, and the options
and FR answers keep the familiar labels so that the scorer reads a twin like its original. A
model's drop from an item to its twin measures its reliance on familiar words.

rcc8 twins rename the objects only: their stories carry no relation words, and the question
spells out the relation it asks about.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from random import Random

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.seeding import derive_seed
from pipeline.spatial.facts import Fact
from pipeline.spatial.reasoning import PathStep
from pipeline.spatial.relations import DIRECTIONS, DISTANCES, REGIONS, VIEWS, WALL_CONTACT, kind, relation_words
from pipeline.spatial.topology import ROOM
from pipeline.text.configs import Config
from pipeline.text.items import CONSISTENCY_FORM, RCC8_SETTING, RELATION_FORM, Item, Query, StoryObject, fr_row
from pipeline.text.kinds import BASE, KINDS, Room, kind_of
from pipeline.text.maps import stories
from pipeline.text.stories import Teller, sentences, text_seed, written_path
from pipeline.text.words import Phrases, Wording, sentence, type_words

KIND = KINDS["twin"]
RECORD = Item
_CODES = DIRECTIONS + REGIONS + WALL_CONTACT + DISTANCES  # the glossary's order
# A room's twins of the FR items whose stories ask for maps (maps.stories), per configuration: those the twin_map
# kind asks of (pipeline.text.twin_maps), made alone when the room has no twin rows, else kept from them.
STORIES = "twin stories"


def rows(room: Room, config: Config) -> tuple[Item, ...]:
    twins = twin_items(room.rows("base", config))
    room.shared((STORIES, config), lambda: stories(twins))  # kept for the room's twin maps
    return twins


@dataclasses.dataclass(frozen=True)
class TwinWords:
    """One room and configuration's invented words."""

    objects: dict[str, str]  # type words ("chair") -> invented word
    relations: dict[str, str]  # relation code -> invented word
    # relation code -> its invented word in its kind's form ("zorp of"): said in every sentence, made once
    phrases: dict[str, str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        forms = data_json("twins.json")["forms"]
        object.__setattr__(self, "phrases", {code: forms[kind(code)].format(word=word)
                                             for code, word in self.relations.items()})

    def rename(self, name: str, object_type: str) -> str:
        """"chair 2" (a Chair) -> "dax 2"."""
        words = type_words(object_type)
        return self.objects[words] + name.removeprefix(words)

    def phrase(self, code: str) -> str:
        return self.phrases[code]

    def words(self, code: str, view: str, field: str) -> str:
        """Invented phrases in stories and questions; familiar labels in options and FR answers."""
        return self.phrase(code) if field == "phrase" else relation_words(code, view, field)

    def glossary(self, codes: set[str], view: str) -> str:
        slots = data_json("templates.json")["glossary"]
        definitions = slots["join"].join(
            slots["definition"].format(invented=self.phrase(code), familiar=relation_words(code, view, "phrase"))
            for code in _CODES if code in codes)
        return sentence(slots["intro"].format(definitions=definitions))


def draw_words(room_id: str, config: str, type_names: Sequence[str]) -> TwinWords:
    vocabulary = data_json("twins.json")
    rng = Random(derive_seed(room_id, KIND.config_name(config), "words"))
    types = list(dict.fromkeys(type_names))
    objects = dict(zip(types, rng.sample(vocabulary["object_words"], len(types))))
    relations = dict(zip(_CODES, rng.sample(vocabulary["relation_words"], len(_CODES))))
    return TwinWords(objects, relations)


def twin_items(items: Sequence[Item]) -> tuple[Item, ...]:
    """The twins of items (of any rooms and configurations), in the same order."""
    groups: dict[tuple[str, str, str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.room_id, item.config, item.setting, item.view), []).append(item)
    for config, item in {item.config: item for item in items}.items():  # each configuration's kind once
        if kind_of(config) is not BASE:
            raise RoomspaceError(f"item {item.id} is not a base item: only those have twins")
    twins = {}
    rooms: dict[tuple[str, str], _Renamed] = {}  # per room and configuration
    for (room_id, config, _, _), group in groups.items():
        if (room_id, config) not in rooms:
            first = group[0]
            rooms[room_id, config] = _Renamed.of(room_id, config, first.objects, first.topology)
        twins.update(zip((i.id for i in group), _twin_group(group, rooms[room_id, config])))
    return tuple(twins[item.id] for item in items)


def twin_stories(settings: Mapping[str, Mapping]) -> tuple[Item, ...]:
    """The twins of the FR questions of a room's stories in a configuration of the paper's family (those
    `twin_items` makes of maps.stories' items: a twin map question's stories), made from what each
    setting's questions share (items.RoomItems.setting_fields) without telling the original stories."""
    room = next(iter(settings.values()))  # the fields every setting's questions have: its room's
    renamed = _Renamed.of(room["room_id"], room["config"], room["objects"], room["topology"])
    out = []
    for setting, fields in settings.items():
        for view in VIEWS:
            told, order, seed = renamed.retold(fields["facts"], fields["story_order"], setting, view)
            teller = renamed.teller_of(told["facts"], view)
            query, path = renamed.query(fields["query"]), renamed.path(fields["path"])
            # the story and question drawn before the YN candidate, which an FR question has none of
            texts = teller.setting(fields["room_type"], fields["room_side"], sentences(told["facts"], order), order,
                                   view, query.pair, fields["answer_set"], seed)
            out.append(fr_row(Item, {**fields, **told, "view": view, "query": query, "path": path, "story": texts.story,
                                     "path_text": written_path(path, query.subject, teller.wording, view) if path else ""},
                              f"{fields['room_id']}-{told['config']}-{setting}-{view}", texts.fr_question))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class _Renamed:
    """What the twins of one room and configuration share: its invented words, its objects renamed, and a
    teller of its stories' sentences in its words (each story's own glossary told by `Teller.glossed`)."""

    room_id: str
    config: Config  # the base configuration its stories were told in
    words: TwinWords
    names: dict[str, str]  # each object's name (and the room's) -> its twin's
    objects: tuple[StoryObject, ...]
    phrases: Phrases
    topology: tuple[Fact, ...]
    teller: Teller
    # the twins of the facts and paths of its items, by the id of the items' tuple: renamed once, though the
    # views of a setting (and the o2 settings' paths) share them
    told: dict[int, tuple] = dataclasses.field(default_factory=dict)

    def facts(self, facts: tuple[Fact, ...]) -> tuple[Fact, ...]:
        if id(facts) not in self.told:
            self.told[id(facts)] = tuple(_renamed(fact, self.names) for fact in facts)
        return self.told[id(facts)]

    def path(self, path: tuple[PathStep, ...]) -> tuple[PathStep, ...]:
        if id(path) not in self.told:
            self.told[id(path)] = tuple(PathStep(_renamed(step.fact, self.names), self.names[step.reached],
                                                 step.composed) for step in path)
        return self.told[id(path)]

    @classmethod
    def of(cls, room_id: str, config: str, objects: tuple[StoryObject, ...], topology: tuple[Fact, ...]) -> _Renamed:
        """Those of a room and base configuration, whose rows have these objects and topology."""
        words = draw_words(room_id, config, [type_words(o.type) for o in objects])
        names = {o.name: words.rename(o.name, o.type) for o in objects} | {ROOM: ROOM}
        renamed = tuple(dataclasses.replace(o, name=names[o.name]) for o in objects)
        phrases = Phrases([o.name for o in renamed], [words.objects[type_words(o.type)] for o in renamed])
        return cls(room_id, Config.parse(config), words, names, renamed, phrases,
                   tuple(_renamed(fact, names) for fact in topology), Teller(Wording(phrases, words.words)))

    def retold(self, facts: tuple[Fact, ...], story_order: Sequence[str], setting: str, view: str
               ) -> tuple[dict, list[str], int]:
        """What the twin of a story (of these facts, its objects introduced in `story_order`) takes for its
        own: its fields (configuration, facts, objects, story order, topology), its order of names and the
        seed of its texts (the original's)."""
        order = [self.names[name] for name in story_order]
        return (dict(config=KIND.config_name(self.config), facts=self.facts(facts), objects=self.objects,
                     story_order=tuple(order), topology=self.topology),
                order, text_seed(self.room_id, self.config.paper.name, setting, view))

    def teller_of(self, facts: tuple[Fact, ...], view: str, claims: Iterable[str] = ()) -> Teller:
        """The teller of a twin story of (renamed) `facts` in `view`: its glossary defines all nine
        directions, whatever the story states (its questions and path use them), and any claim a question makes."""
        return self.teller.glossed(self.words.glossary({f.relation for f in facts} | set(DIRECTIONS) | set(claims),
                                                       view))

    def query(self, query: Query) -> Query:
        return Query(self.names[query.subject], self.names[query.object])


def _renamed(f: Fact, names: Mapping[str, str]) -> Fact:
    return Fact(names[f.subject], f.relation, None if f.object is None else names[f.object])


def _twin_group(group: list[Item], renamed: _Renamed) -> list[Item]:
    """The twins of one room, configuration, setting and view: they share one story. A balanced
    configuration's FR and YN questions may ask different pairs (pipeline.text.balance): each is
    told again from its own pair, as it was told."""
    first, told, objects = group[0], renamed.config, renamed.objects

    def query(item: Item) -> Query:
        return renamed.query(item.query)

    def path(item: Item) -> tuple[PathStep, ...]:
        return renamed.path(item.path)

    renamed_fields, order, seed = renamed.retold(first.facts, first.story_order, first.setting, first.view)
    config, facts = renamed_fields["config"], renamed_fields["facts"]
    questions: dict[str, str] = {}  # per item id
    if first.setting == RCC8_SETTING:
        for item in group:
            story, questions[item.id] = Teller(Wording(renamed.phrases)).rcc8(
                item.room_type, item.room_side, {o.name: o.footprint for o in objects}, order, item.view,
                query(item).pair, item.candidate, seed)
    else:
        # A whole-story question's claim is defined too.
        claims = {item.candidate for item in group if item.form == CONSISTENCY_FORM}
        teller, said = renamed.teller_of(facts, first.view, claims), sentences(facts, order)
        wording = teller.wording
        asked = [item for item in group if item.form == RELATION_FORM]
        yn = next((i for i in asked if i.question_type == "YN"), None)
        if told.balanced:  # both tellings offered the YN candidate alone (an FR question is drawn before it)
            pool = (yn.candidate,) if yn is not None else first.answer_set
            for item in group:
                if item.form != RELATION_FORM:
                    story, questions[item.id] = teller.whole_story(
                        first.room_type, first.room_side, said, order, first.view, query(item).subject,
                        item.candidate if item.form == CONSISTENCY_FORM else None,
                        None if item.query.object == ROOM else query(item).object, seed)
                    continue
                texts = teller.setting(first.room_type, first.room_side, said, order, first.view, query(item).pair,
                                       pool, seed)
                story = texts.story
                questions[item.id] = texts.fr_question if item.question_type == "FR" else texts.yn_question
        else:
            # The YN candidate was drawn from the answer set (a Yes) or its complement (a No); an FR
            # item alone needs none: its story and question are drawn before the candidate.
            pool = first.answer_set
            if yn is not None and yn.candidate not in yn.answer_set:
                pool = tuple(c for c in DIRECTIONS if c not in yn.answer_set)
            texts = teller.setting(first.room_type, first.room_side, said, order, first.view, query(first).pair,
                                   pool, seed)
            if yn is not None and texts.candidate != yn.candidate:
                raise RoomspaceError(f"item {yn.id}: its twin drew candidate {texts.candidate}, not {yn.candidate}; "
                                     "stories.Teller.setting no longer draws as it did for this item")
            story = texts.story
            questions = {item.id: texts.fr_question if item.question_type == "FR" else texts.yn_question
                         for item in group}
    return [dataclasses.replace(
        item, **renamed_fields, query=query(item), path=path(item), story=story, question=questions[item.id],
        path_text=written_path(path(item), query(item).subject, wording, first.view) if item.path else "",
        id=item.id.replace(f"-{first.config}-", f"-{config}-", 1)) for item in group]
