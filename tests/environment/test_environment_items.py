"""Items on demand are the build's rows: the same ids, prompts, answers, answer sets and levels, byte for byte."""

import gc
import shutil
from random import Random

import pytest
from conftest import EVERY_KIND_ROOMS as ROOMS
from conftest import SCENE_SEED

from pipeline.dataset.manifest import MANIFEST
from pipeline.dataset.rows import plain_row
from pipeline.environment import items
from pipeline.environment.items import Environment
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import open_rows
from pipeline.render.job import Renderer
from pipeline.text.kinds import parse

SAMPLED = 1000


@pytest.mark.slow  # about 40 s on 2 cores: a build of every kind (object tasks 2 s a room), and its rooms again
def test_items_on_demand_equal_the_builds_rows_for_1000_ids_of_every_kind(every_kind, tmp_path):
    built, scenes = every_kind
    snapshot = tmp_path / "snapshot"  # the Hub's layout: the build without its manifest
    shutil.copytree(built, snapshot, ignore=shutil.ignore_patterns(MANIFEST))
    source = open_rows(built)
    kinds = {parse(config)[0].name for config in source.configs}
    assert kinds == {"base", "vision", "twin", "agent", "vision_agent", "map", "twin_map", "agent_map",
                     "composition", "shapes", "object_tasks"}
    assert any(config.endswith("_hard") for config in source.configs)
    ids = sorted((config, row_id) for config in source.configs for row_id in source.ids([config]))
    draw = Random(0)
    # every configuration in the sample: a row of each, then the rest drawn among all (a hard configuration of a
    # few rows may be missed by a draw among thousands)
    chosen = sorted({(config, draw.choice([row_id for c, row_id in ids if c == config])) for config in source.configs}
                    | set(draw.sample(ids, SAMPLED)))
    environment = Environment(seed=SCENE_SEED, rooms=ROOMS, scenes=scenes, pictures=True)
    for place in (built, snapshot):
        rows = open_rows(place)
        for config in rows.configs:
            asked = {row_id for c, row_id in chosen if c == config}
            ours = {row["id"]: row for index in range(ROOMS) for row in environment.room_rows(index, config)}
            for theirs in rows.rows([config], keep=asked):
                assert ours[theirs["id"]] == theirs, theirs["id"]
            assert asked <= set(ours)


def test_item_i_is_a_pure_function_of_seed_pool_rung_and_i(scenes):
    rung = Rung("n3_m2_d81_balanced", level=1)
    first = [item.row for item in Environment(SCENE_SEED, ROOMS, scenes).items(rung, 20)]
    again = Environment(SCENE_SEED, ROOMS, scenes)
    assert [again.item(k, rung).row for k in reversed(range(20))] == first[::-1]
    assert all(row["level"] == 1 for row in first)
    assert len({row["id"] for row in first}) > 5
    other = [item.row for item in Environment(SCENE_SEED, ROOMS - 1, scenes).items(rung, 20)]
    assert other != first  # the pool is part of what an item is drawn from


def test_a_rooms_rows_of_a_rung_are_its_configurations_rows_the_rung_admits(scenes):
    environment, rung = Environment(SCENE_SEED, ROOMS, scenes), Rung("n3_m2_d81_balanced", level=1)
    every = [row for index in range(ROOMS) for row in environment.room_rows(index, rung.config)]
    admitted = [row for index in range(ROOMS) for row in environment.room_rows(index, rung)]
    assert admitted == [row for row in every if row["level"] == 1]
    assert 0 < len(admitted) < len(every)


def test_the_collector_is_paused_only_while_rows_are_made(scenes, monkeypatch):
    seen = []
    monkeypatch.setattr(items, "plain_row", lambda record: seen.append(gc.isenabled()) or plain_row(record))
    environment = Environment(SCENE_SEED, ROOMS, scenes)
    assert gc.isenabled()
    environment.item(0, "n3_m2_d81")
    environment.room_rows(1, "n3_m2_d81")
    with pytest.raises(RoomspaceError):
        environment.item(0, Rung("n3_m2_d81", setting="nowhere"))
    assert seen and not any(seen) and gc.isenabled()
    gc.disable()
    try:
        environment.room_rows(2, "n3_m2_d81")
        assert not gc.isenabled()  # a host that paused it keeps it paused
    finally:
        gc.enable()


@pytest.mark.slow  # about 10 s: ProcTHOR's first house in this process loads its databases
def test_scenes_sampled_on_demand_give_the_same_items(scenes):
    from_folder = Environment(SCENE_SEED, 2, scenes)
    from_nothing = Environment(SCENE_SEED, 2)  # houses sampled as first needed into a folder of its own
    rung = Rung("agent_n3_m2_d81", frame_changes=2)
    items = [from_nothing.item(k, rung) for k in range(6)]
    assert [item.row for item in items] == [from_folder.item(k, rung).row for k in range(6)]
    assert {item.row["frame_changes"] for item in items} == {2}
    assert items[0].metadata["rung"] == {"config": "agent_n3_m2_d81", "kind": "agent", "n": 3, "m": 2, "d": 9,
                                         "level": None, "setting": None, "frame_changes": 2}
    assert len(list(from_nothing.scenes.iterdir())) == 2  # the pool is bounded: houses 0 and 1


@pytest.mark.parametrize("make, message", [
    (lambda: Rung("n3_m2_d10"), "is no configuration"),
    (lambda: Rung("spatial_n3_m2_d81"), "is no configuration"),
    (lambda: Rung("map_n3_m2_d81_balanced"), "the map kind has no balanced configurations"),
    (lambda: Rung("map_n8_m20_d81_hard"), "the map kind has no hard configurations"),
    (lambda: Rung("n3_m2_d81", level=4), "no ladder level 4; the levels are 0, 1, 2, 3"),
    (lambda: Rung("twin_n3_m2_d81", frame_changes=1), "tells no story from a frame"),
    (lambda: Environment(SCENE_SEED, 2).item(0, "vision_n3_m2_d81"), "pictures=True"),
    (lambda: Environment(SCENE_SEED, 0), "at least one room"),
])
def test_bad_input_is_one_line_naming_what_is_valid(make, message):
    with pytest.raises(RoomspaceError, match=message) as raised:
        make()
    assert "\n" not in str(raised.value)


def test_a_rung_no_room_of_the_pool_has_is_an_error_once_the_pool_is_spent(scenes):
    with pytest.raises(RoomspaceError, match="no question of n3_m2_d81 \\(setting nowhere\\) in 2 rooms"):
        Environment(SCENE_SEED, 2, scenes).item(0, Rung("n3_m2_d81", setting="nowhere"))


def test_pictures_without_their_renderer_say_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("ROOMSPACE_BLENDER_PYTHON", str(tmp_path / "no-python"))
    with pytest.raises(RoomspaceError, match="needs Blender's Python module bpy") as raised:
        Environment(SCENE_SEED, 1, pictures=True, renderer=Renderer.asked("blender"))
    assert "\n" not in str(raised.value)
