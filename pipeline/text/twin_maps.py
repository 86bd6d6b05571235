"""Twin map questions: the map questions of the name-swapped twins' stories (pipeline.text.maps,
pipeline.text.twins). Kind `twin_map`, made for a base configuration that has both maps and twins:
the same maps asked of the stories told in invented words, their objects named and numbered as the
twin story names them; `score` pairs each with its original map question."""

from __future__ import annotations

from pipeline.text.configs import Config
from pipeline.text.items import Item
from pipeline.text.kinds import KINDS, Room
from pipeline.text.maps import map_items, stories
from pipeline.text.twins import STORIES, twin_items

KIND = KINDS["twin_map"]
RECORD = Item


def rows(room: Room, config: Config) -> tuple[Item, ...]:
    """The map questions of the room's twin stories: the twins of its map stories alone (an FR item's twin
    is the same without its YN item), or those its twin rows hold if made."""
    told = room.shared((STORIES, config), lambda: twin_items(stories(room.rows("base", config))))
    return map_items(told, KIND.config_name(config))
