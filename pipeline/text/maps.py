"""Map questions: a story, answered by drawing the room (docs/semantics.md section 18).

Kind `map` (configuration `map_<base>`, `roomspace build --maps`): per room, for each of the eight
settings and both views, the base configuration's story (its FR item's: the same story, facts,
objects and names) asks for the d x d grid with every story object placed in a cell. Many maps fit a
story, so a map is not compared with one true map: it is right when every fact the story states
holds on it (pipeline.spatial.facts.facts_held, the checker's reading of a fact on cells), and its
partial credit is the share of facts that hold. The rows are `Item`s with question type MAP:

* `options` are the story's objects in o order, which the map writes as their numbers 1 ... n;
* `answer` is the checker's own witness, the rasterised scene drawn as a map
  (pipeline.text.targets.map_lines: a line per row of cells from the top of the view's grid, the
  north wall, which is also the far wall of the doorway view, a token per cell from the west);
* `facts`, `objects`, `answer_set` (the relations of o_1 to o_n that a consistent map can show) and
  the rest are the FR item's. rcc8 stories state footprints, not cells: they ask for no map.

Objects are written as single digits, so n is at most 9 (the sweep's n is 3 to 7).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import lru_cache

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.spatial.grid import Cell
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, Item, init_fields
from pipeline.text.kinds import KINDS, Room
from pipeline.text.prompts import MAP_QUESTION
from pipeline.text.targets import map_lines

KIND = KINDS["map"]
RECORD = Item
MOST_OBJECTS = 9  # objects are written as one digit each


def rows(room: Room, config: Config) -> tuple[Item, ...]:
    return map_items(room.rows("base", config), KIND.config_name(config))


def map_items(items: Sequence[Item], config: str) -> tuple[Item, ...]:
    """A map question for each story among `items` (`stories`), as configuration `config`."""
    return tuple(map_item(item, config) for item in stories(items))


def stories(items: Sequence[Item]) -> list[Item]:
    """The items whose stories ask for maps: one per story, its FR item (rcc8 items have no map)."""
    return [item for item in items if item.question_type == "FR" and item.setting != RCC8_SETTING]


def map_item(item: Item, config: str) -> Item:
    """The map question of an FR item's story (module docstring)."""
    return asked_map(Item, init_fields(item), config, item.view, [(obj.name, (obj.i, obj.j)) for obj in item.objects])


def asked_map(record: type[Item], told: Mapping, config: str, view: str, placed: Sequence[tuple[str, Cell]]) -> Item:
    """A `record` asking for a map of `placed` (each a name and its witness cell, in the order the map
    numbers them) in `view`'s words, as configuration `config`, made from the fields of a question of
    its story (`told`: its story, facts and the rest; fields of other records in it are left out, and one
    with a default may be missing)."""
    most = MOST_OBJECTS - (len(placed) - len(told["objects"]))  # an egocentric story's observer is drawn too
    if told["n"] > most:
        raise RoomspaceError(f"{config}: a map writes each object as one digit, so n is at most {most}, "
                             f"not {told['n']}; ask for maps of a configuration with fewer objects")
    question = data_json("prompts.json")["map"]["question"][view].format(d=told["d"], you=len(placed))
    witness = "\n".join(map_lines([cell for _, cell in placed], told["d"]))
    return record(**{name: told[name] for name in _told_fields(record) if name in told},
                   id=f"{told['room_id']}-{config}-{told['setting']}-{view}-{MAP_QUESTION}", config=config, view=view,
                   question_type=MAP_QUESTION, question=question, options=tuple(name for name, _ in placed),
                   answer=witness, candidate=None)


@lru_cache(maxsize=None)
def _told_fields(record: type[Item]) -> tuple[str, ...]:
    """The fields of a map question of `record` that are its story's question's (`asked_map` sets the others)."""
    asked = {"id", "config", "view", "question_type", "question", "options", "answer", "candidate"}
    return tuple(f.name for f in dataclasses.fields(record) if f.init and f.name not in asked)
