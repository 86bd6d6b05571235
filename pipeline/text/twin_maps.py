"""Twin map questions: the map questions of the name-swapped twins' stories (pipeline.text.maps,
pipeline.text.twins). Kind `twin_map`, made for a base configuration that has both maps and twins:
the same maps asked of the stories told in invented words, their objects named and numbered as the
twin story names them; `score` pairs each with its original map question."""

from __future__ import annotations

from pipeline.text.configs import Config
from pipeline.text.items import Item, shared_items
from pipeline.text.kinds import KINDS, Room
from pipeline.text.maps import map_items
from pipeline.text.twins import STORIES, twin_stories

KIND = KINDS["twin_map"]
RECORD = Item


def rows(room: Room, config: Config) -> tuple[Item, ...]:
    """The map questions of the room's twin stories: those its twin rows hold if made, else the twins of its
    map stories made from what their questions share, no story told in familiar words (twins.twin_stories)."""
    told = room.shared((STORIES, config), lambda: _twin_stories(room, config))
    return map_items(told, KIND.config_name(config))


def _twin_stories(room: Room, config: Config) -> tuple[Item, ...]:
    settings = shared_items(room).setting_fields(config)
    return () if settings is None else twin_stories({setting: fields for setting, (fields, _) in settings.items()})
