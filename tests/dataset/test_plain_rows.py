"""plain_row: a row record as a build's file reads it back, made without Arrow, equal to Arrow's conversion
value for value and type for type (an int where Arrow gives a float would be the same number, not the same row)."""

import dataclasses
import json

import pytest
from conftest import EVERY_KIND_ROOMS, SCENE_SEED, kind_configs

from pipeline.dataset.build import RoomWork
from pipeline.dataset.rows import items_table, kind_record, plain_row, records_table
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.text.items import Item
from pipeline.text.kinds import KINDS

ROOM = EVERY_KIND_ROOMS - 1  # room 4 of the shared houses: eight prominent objects, so its hard configurations have rows


@pytest.fixture(scope="module")
def room(scenes) -> RoomWork:
    path = scene_path(scenes, SCENE_SEED, ROOM)
    return RoomWork(load_scene(path), path)


@pytest.mark.parametrize("kind", [kind for kind in KINDS.values() if not kind.images], ids=lambda kind: kind.name)
def test_plain_rows_are_arrows_rows_of_every_text_kind_and_family(room, kind):
    for config in kind_configs(kind):
        records = list(room.rows(kind.name, config))
        assert records, f"{kind.config_name(config)}: no rows in room {ROOM}"
        name = kind.config_name(config)
        table = items_table(records) if kind_record(kind) is Item else records_table(records, name)
        theirs, ours = table.to_pylist(), [plain_row(record) for record in records]
        assert ours == theirs, name
        assert json.dumps(ours) == json.dumps(theirs), name  # the same types too: 1.0 is not 1


def test_an_int_in_a_float_field_reads_back_as_arrow_stores_it(room):
    """Arrow casts what a record not checked column by column (an agent row) holds in a float field."""
    config = kind_configs(KINDS["agent"])[0]
    record = dataclasses.replace(room.rows("agent", config)[0], room_side=5)
    (theirs,) = records_table([record], KINDS["agent"].config_name(config)).to_pylist()
    assert json.dumps(plain_row(record)) == json.dumps(theirs)
    assert theirs["room_side"] == 5.0 and type(theirs["room_side"]) is float
