"""The composition kind: compositions and conceptual neighbourhoods of RCC-8 and of the nine point
directions, each asked under two namings (docs/semantics.md section 19).

The questions of Cohn and Blackwell's experiments on RCC-8 ("Can Large Language Models Reason
about the Region Connection Calculus?"), answered by the tables of pipeline.spatial.calculi:

* table items, a fixed set that belongs to no room: they are rows of the build's first test room
  (room index FIRST_ROOM) only, so a build holds them once and no training split holds them.
  - rcc8_composition: for R1(x, y) and R2(y, z), every possible R(x, z); the 7 x 7 cells without EQ
    (composing with EQ changes nothing);
  - direction_composition: the same for the nine point directions, all 9 x 9 cells;
  - rcc8_neighbourhood, direction_neighbourhood: for each relation R(x, y), the relations that can
    follow it directly under continuous change.
* grounded items, in every room with the configuration's n objects: rcc8_grounded, two footprint
  relations R1(x, y) and R2(y, z) of the room's chosen objects and the floor (the base rows'
  `topology`), asked for the possible relations of x and z: the answer is exactly the table's cell
  R1 o R2, and the room's own relation of x and z (`true_relation`) is its witness. A room asks up
  to GROUNDED_PER_ROOM cells its triples show, drawn uniformly, then a triple showing each.

Every question is asked twice, `naming` eponymous (the calculus's own codes) and anonymous (invented
words, the same definitions): the score's gap between them measures reliance on the names. Options
are the names in the calculus's order (`option_codes`), answers the names of the answer set; a
table item has no scene, so its `true_relation` is the first relation of its answer set (each has
a witness configuration in pipeline.spatial.calculi).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from random import Random

from pipeline.data import data_json
from pipeline.scene.records import Scene
from pipeline.seeding import derive_seed
from pipeline.spatial.calculi import (direction_composition, direction_neighbourhood, rcc8_composition,
                                      rcc8_neighbourhood)
from pipeline.spatial.facts import Fact
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8, ROOM, rcc8_converse
from pipeline.text.configs import Config
from pipeline.text.items import NO_REASONING, Item, Query
from pipeline.text.kinds import KINDS, Room
from pipeline.text.prompts import DEFAULT_STYLE, prompt_text

KIND = KINDS["composition"]
NAMINGS = ("eponymous", "anonymous")
CODES = {"rcc8": RCC8, "direction": DIRECTIONS}
FIRST_ROOM = 0  # the room index whose rows hold the table items
GROUNDED_PER_ROOM = 4  # composition cells a room asks about, where its triples show that many
VIEW = "top_down"  # directions are compass directions; RCC-8 has no view


@dataclass(frozen=True)
class CompositionItem(Item):
    """A composition or neighbourhood question: an FR row whose answer set holds a calculus's codes."""

    naming: str  # eponymous (the calculus's codes) or anonymous (invented names), NAMINGS
    premises: tuple[str, ...]  # the stated relations' codes: (R1, R2) of a composition, (R,) of a neighbourhood
    arguments: tuple[str, str]  # the asked pair as the question writes it: (x, z), (x, y), or two outlines

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt", prompt_text(
            DEFAULT_STYLE, story=self.story, question=self.question, options=self.options,
            question_type=self.question_type, setting=self.setting, view=self.view, d=self.d, relations=(),
            naming=self.naming))


RECORD = CompositionItem


def rows(room: Room, config: Config) -> tuple[CompositionItem, ...]:
    """The table items in the first test room, then the room's grounded items (none where the room
    has fewer than n prominent objects)."""
    scene = room.scene
    made = list(table_items(scene, config)) if scene.index == FIRST_ROOM else []
    base = room.rows("base", config)
    if base:
        made.extend(grounded_items(scene, config, base[0]))
    return tuple(made)


def _words() -> dict:
    return data_json("composition.json")


def names(calculus: str, naming: str) -> dict[str, str]:
    """code -> its name in this naming."""
    return _words()["calculi"][calculus]["names"][naming]


def written(name: str, first: str, second: str) -> str:
    """A relation with its arguments, as stories and answers write it: R(x, y)."""
    return f"{name}({first}, {second})"


def _question(scene: Scene, config: Config, setting: str, key: str, naming: str, premises: tuple[str, ...],
              arguments: tuple[str, str], answer: Sequence[str], truth: str, fields: dict) -> CompositionItem:
    """One question in one naming: `fields` holds its story, question, query, facts and reasoning fields."""
    calculus = _words()["settings"][setting]["calculus"]
    named = names(calculus, naming)
    codes = CODES[calculus]
    return CompositionItem(**{
        **NO_REASONING, **fields,
        "id": f"{scene.room_id}-{KIND.config_name(config)}-{setting}-{key}-{naming}", "room_id": scene.room_id,
        "room_index": scene.index, "seed": scene.seed, "room_type": scene.room_type, "room_side": scene.side,
        "config": KIND.config_name(config), "n": config.n, "m": config.m, "d": config.d, "setting": setting,
        "view": VIEW, "question_type": "FR", "options": tuple(named[code] for code in codes),
        "answer": ", ".join(named[code] for code in answer), "answer_set": tuple(answer),
        "answer_set_size": len(answer), "candidate": None, "true_relation": truth, "continuous_relation": truth,
        "naming": naming, "premises": premises, "option_codes": codes, "arguments": arguments})


def _composed(text: dict, calculus: str, naming: str, first: str, second: str, triple: Sequence[str],
              shown: Sequence[str], **slots: str) -> dict:
    """The story and question of R1(x, y), R2(y, z) with x, y, z named `shown` (a story's words)."""
    named = names(calculus, naming)
    things = _words()["calculi"][calculus]["things"]
    x, y, z = shown
    premises = {"r1": written(named[first], x, y), "r2": written(named[second], y, z)}
    return dict(story=text["story"].format(x=x, y=y, z=z, things=things, **premises, **slots),
                question=text["question"].format(x=x, z=z),
                facts=(Fact(triple[0], first, triple[1]), Fact(triple[1], second, triple[2])),
                query=Query(triple[0], triple[2]), hops=2)


def table_items(scene: Scene, config: Config) -> list[CompositionItem]:
    """Every composition and neighbourhood question of both calculi, in both namings."""
    words = _words()
    made = []
    for setting, spec in words["settings"].items():
        if spec["grounded"]:
            continue
        calculus, task = spec["calculus"], spec["task"]
        codes = CODES[calculus]
        text = {"story": words["stories"][task], "question": words["questions"][task]}
        if task == "composition":
            table = rcc8_composition() if calculus == "rcc8" else direction_composition()
            asked = [(first, second) for first in codes for second in codes
                     if calculus != "rcc8" or "EQ" not in (first, second)]
            for first, second in asked:
                answer = table[first, second]
                for naming in NAMINGS:
                    fields = _composed(text, calculus, naming, first, second, "xyz", "xyz")
                    made.append(_question(scene, config, setting, f"{first}-{second}", naming, (first, second),
                                          ("x", "z"), answer, answer[0], dict(fields, story_order=("x", "y", "z"))))
        else:
            following = rcc8_neighbourhood() if calculus == "rcc8" else direction_neighbourhood()
            change = words["calculi"][calculus]["change"]
            things = words["calculi"][calculus]["things"]
            for code in codes:
                answer = following[code]
                for naming in NAMINGS:
                    now = written(names(calculus, naming)[code], "x", "y")
                    fields = dict(story=text["story"].format(x="x", y="y", things=things, relation=now),
                                  question=text["question"].format(x="x", y="y", things=things, change=change,
                                                                   relation=now),
                                  facts=(Fact("x", code, "y"),), query=Query("x", "y"), story_order=("x", "y"))
                    made.append(_question(scene, config, setting, code, naming, (code,), ("x", "y"), answer,
                                          answer[0], fields))
    return made


def grounded_items(scene: Scene, config: Config, base: Item) -> list[CompositionItem]:
    """Up to GROUNDED_PER_ROOM compositions of the room's footprint relations (module docstring), each
    in both namings; `base` is one of the room's base rows (its objects and topology)."""
    setting = next(name for name, spec in _words()["settings"].items() if spec["grounded"])
    relation = {}
    for fact in base.topology:
        relation[fact.subject, fact.object] = fact.relation
        relation[fact.object, fact.subject] = rcc8_converse(fact.relation)
    regions = [o.name for o in base.objects] + [ROOM]
    cells: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for x, y, z in permutations(regions, 3):
        cell = relation[x, y], relation[y, z]
        if "EQ" not in cell:
            cells.setdefault(cell, []).append((x, y, z))
    draw = Random(derive_seed(scene.room_id, KIND.config_name(config), "grounded"))
    shown = sorted(cells, key=lambda cell: (RCC8.index(cell[0]), RCC8.index(cell[1])))
    words = _words()
    text = {"story": words["stories"]["grounded"], "question": words["questions"]["grounded"]}
    room = data_json("vocabulary.json")["room_names"][scene.room_type]
    table = rcc8_composition()
    made = []
    for number, cell in enumerate(draw.sample(shown, min(GROUNDED_PER_ROOM, len(shown)))):
        triple = draw.choice(cells[cell])
        said = tuple(words["floor"] if region == ROOM else region for region in triple)
        answer = table[cell]
        for naming in NAMINGS:
            fields = _composed(text, "rcc8", naming, *cell, triple, said, room=room, floor=words["floor"])
            made.append(_question(scene, config, setting, str(number), naming, cell, (said[0], said[2]), answer,
                                  relation[triple[0], triple[2]],
                                  dict(fields, objects=base.objects, topology=base.topology,
                                       story_order=tuple(dict.fromkeys(said)))))
    return made
