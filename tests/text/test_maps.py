"""Map questions (pipeline.text.maps): one per story, answered by the rasterised scene's map, which
the map parser reads back and on which every stated fact holds; twin maps in the twins' names."""

import dataclasses

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_map
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.facts import SETTINGS, facts_held
from pipeline.spatial.relations import VIEWS
from pipeline.text.configs import Config
from pipeline.text.items import RoomItems
from pipeline.text.maps import map_item, map_items
from pipeline.text.prompts import MAP_QUESTION, row_prompt
from pipeline.text.twins import twin_items

CONFIGS = (Config(5, 4, 12), Config(3, 2, 9), Config(5, 7, 9))


@pytest.fixture(scope="module")
def rooms(scenes) -> list[dict]:
    """Each room's base items per configuration (rooms with too few objects have none)."""
    out = []
    for index in range(SCENE_COUNT):
        made = RoomItems(load_scene(scene_path(scenes, SCENE_SEED, index)))
        out.append({config: made(config) for config in CONFIGS})
    return out


def test_a_room_asks_one_map_per_story(rooms):
    for config in CONFIGS:
        items = rooms[0][config]
        maps = map_items(items, f"map_{config.name}")
        stories = {(i.setting, i.view): i for i in items if i.question_type == "FR"}
        assert [(m.setting, m.view) for m in maps] == [(s, v) for s in SETTINGS for v in VIEWS]
        for row in maps:
            told = stories[row.setting, row.view]
            assert row.id == f"{row.room_id}-map_{config.name}-{row.setting}-{row.view}-MAP"
            assert (row.question_type, row.candidate, row.config) == (MAP_QUESTION, None, f"map_{config.name}")
            assert (row.story, row.facts, row.objects, row.answer_set) == (told.story, told.facts, told.objects,
                                                                         told.answer_set)
            assert row.options == tuple(obj.name for obj in row.objects)


def test_the_answer_is_the_witness_map_and_keeps_every_fact(rooms):
    checked = 0
    for room in rooms:
        for config, items in room.items():
            for row in map_items(items, f"map_{config.name}"):
                parsed = parse_map(row.answer, row.n, row.d)
                assert parsed.cells == tuple((obj.i, obj.j) for obj in row.objects), row.id
                assert all(facts_held(row.facts, dict(zip(row.options, parsed.cells)), row.d))
                lines = row.answer.splitlines()
                assert len(lines) == row.d and all(len(line.split()) == row.d for line in lines)
                checked += 1
    assert checked >= 16 * len(CONFIGS) * 5  # most of the rooms hold five objects


def test_twin_maps_use_the_twins_names_and_the_same_cells(rooms):
    items = rooms[1][CONFIGS[0]]
    originals = map_items(items, "map_n5_m4_d144")
    twins = map_items(twin_items(items), "twin_map_n5_m4_d144")
    assert len(twins) == len(originals) == 16
    for twin, original in zip(twins, originals):
        assert twin.id == original.id.replace("-map_", "-twin_map_")
        assert twin.options != original.options and twin.answer == original.answer
        assert twin.story != original.story and all(name in twin.story for name in twin.options)
        parsed = parse_map(twin.answer, twin.n, twin.d)
        assert all(facts_held(twin.facts, dict(zip(twin.options, parsed.cells)), twin.d))


def test_the_prompt_says_how_to_write_the_map_in_the_views_words(rooms):
    maps = {(m.setting, m.view): m for m in map_items(rooms[0][CONFIGS[0]], "map_n5_m4_d144")}
    for (setting, view), row in maps.items():
        legend = ", ".join(f"{k} = {name}" for k, name in enumerate(row.options, 1))
        assert f"Options: {legend}." in row.prompt
        assert "Finish with a line \"Answer:\" followed by the 12 lines of the map" in row.prompt
        top = "the north wall" if view == "top_down" else "the far wall"
        assert f"The first line is the row of cells along {top}" in row.prompt
        assert ("Each side of the room is cut into three equal bands" in row.prompt) == ("layout" in setting or
                                                                                          setting == "tpp")
        assert row.prompt.index("Story: ") < row.prompt.index("Question: Draw a map of the room")
        # the prompt is a pure function of the row's fields, as harnesses rebuild it
        assert row_prompt(dataclasses.asdict(row)) == row.prompt
    assert row_prompt(dataclasses.asdict(maps["o2", "top_down"]), "paper").startswith(maps["o2", "top_down"].story)


def test_a_story_of_more_than_nine_objects_asks_for_no_map(rooms):
    item = next(i for i in rooms[0][CONFIGS[0]] if i.question_type == "FR")
    with pytest.raises(RoomspaceError, match="n is at most 9, not 10"):
        map_item(dataclasses.replace(item, n=10), "map_n10_m9_d144")
