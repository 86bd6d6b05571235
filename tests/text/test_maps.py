"""Map questions (pipeline.text.maps): one per story, answered by the rasterised scene's map, which
the map parser reads back and on which every stated fact holds; twin maps in the twins' names;
egocentric maps (pipeline.text.agent_maps) drawn as the story's observer sees the room."""

import dataclasses

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline.dataset.build import RoomWork
from pipeline.dataset.rows import records_table
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_map
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.facts import SETTINGS, facts_held
from pipeline.spatial.frames import quarters, seen_facing, turn_cell
from pipeline.spatial.relations import DIRECTIONS, VIEWS
from pipeline.text.agent_maps import agent_map_item
from pipeline.text.agents import AGENT
from pipeline.text.configs import Config
from pipeline.text.items import RoomItems
from pipeline.text.maps import map_item, map_items
from pipeline.text.prompts import AGENT_VIEW, MAP_QUESTION, row_prompt
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


@pytest.fixture(scope="module")
def egocentric(scenes, rooms) -> list[tuple]:
    """Per room of CONFIGS[0] with items, its agent rows and its egocentric map questions, made as a build
    makes them: from the room's egocentric stories alone (agent_maps.rows), not from its agent rows."""
    out = []
    for index, room in enumerate(rooms):
        if room[CONFIGS[0]]:
            path = scene_path(scenes, SCENE_SEED, index)
            work = RoomWork(load_scene(path), path)
            out.append((work.rows("agent", CONFIGS[0]), work.rows("agent_map", CONFIGS[0])))
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


def test_a_rooms_twin_maps_are_the_same_made_alone_or_after_its_twin_rows(scenes):
    """A room asked only for twin maps twins its map stories alone; one with twin rows maps theirs."""
    for index in range(3):
        path = scene_path(scenes, SCENE_SEED, index)
        alone, after = RoomWork(load_scene(path), path), RoomWork(load_scene(path), path)
        twins = after.rows("twin", CONFIGS[0])
        assert alone.rows("twin_map", CONFIGS[0]) == after.rows("twin_map", CONFIGS[0]) == \
            map_items(twins, "twin_map_n5_m4_d144")


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


# --- egocentric maps ------------------------------------------------------------------------------


def test_an_egocentric_story_asks_one_map_per_setting_with_the_observer_drawn_last(egocentric):
    for agents, maps in egocentric:
        stories = {r.setting: r for r in agents if r.kind == "agent" and r.question_type == "FR"}
        assert [m.setting for m in maps] == list(SETTINGS)
        for row in maps:
            told = stories[row.setting]
            assert row.id == f"{row.room_id}-agent_map_n5_m4_d144-{row.setting}-{AGENT_VIEW}-MAP"
            assert (row.question_type, row.view, row.candidate) == (MAP_QUESTION, AGENT_VIEW, None)
            assert (row.story, row.objects, row.story_pose) == (told.story, told.objects, told.story_pose)
            assert row.options == (*(obj.name for obj in row.objects), AGENT)
            assert (row.answer_set, row.true_relation) == (told.answer_set, told.true_relation)  # already seen facing


def test_an_egocentric_map_made_from_the_story_alone_is_its_egocentric_rows_map(egocentric):
    """A build makes the egocentric maps without the agent rows, whose question texts draw on every framing's
    answers in the room: each is the map question of its setting's egocentric FR row all the same."""
    for agents, maps in egocentric:
        asked = [row for row in agents if row.kind == "agent" and row.question_type == "FR"]
        assert maps == tuple(agent_map_item(row, "agent_map_n5_m4_d144") for row in asked)


def test_an_egocentric_map_is_the_plan_turned_so_the_faced_wall_is_at_the_top(egocentric):
    """The witness is the plan's cells and the observer's turned by the facing, the facts the plan's codes
    as the observer says them; every fact holds on the witness, and on the plan's own cells only as the
    plan states it. A map drawn north-up, not as the observer sees it, breaks facts whenever they face
    another wall."""
    facings = set()
    for agents, maps in egocentric:
        stories = {r.setting: r for r in agents if r.kind == "agent" and r.question_type == "FR"}
        for row in maps:
            told, pose = stories[row.setting], row.story_pose
            facings.add(pose.facing)
            plan = [*((obj.i, obj.j) for obj in row.objects), (pose.i, pose.j)]
            turned = tuple(turn_cell(cell, -quarters(pose.facing), row.d) for cell in plan)
            assert parse_map(row.answer, len(row.options), row.d).cells == turned
            assert [(f.subject, seen_facing(f.relation, pose.facing), f.object) for f in told.facts] == \
                   [(f.subject, f.relation, f.object) for f in row.facts]
            assert all(facts_held(row.facts, dict(zip(row.options, turned)), row.d))
            assert all(facts_held(told.facts, dict(zip(row.options, plan)), row.d))
            north_up = facts_held(row.facts, dict(zip(row.options, plan)), row.d)
            if pose.facing != "N" and any(f.relation in DIRECTIONS[:8] for f in row.facts):
                assert not all(north_up), row.id
    assert len(facings) >= 2  # the rooms' observers face several walls


def test_the_egocentric_prompt_draws_in_the_observers_words(egocentric):
    _, maps = egocentric[0]
    for row in maps:
        you = len(row.options)
        assert f"Options: {', '.join(f'{k} = {name}' for k, name in enumerate(row.options, 1))}." in row.prompt
        assert f"{you} = you." in row.prompt and f"and yourself as number {you}" in row.prompt
        assert ("The first line is the row of cells along the wall you face, the last line the row along the wall "
                "behind you; each line runs from the wall on your left to the wall on your right") in row.prompt
        assert "rows running from behind you to ahead of you" in row.prompt  # the story's own definitions
        assert row_prompt(dataclasses.asdict(row)) == row.prompt
    assert records_table(maps, "agent_map_n5_m4_d144").num_rows == len(maps)  # they fit the declared schema


def test_an_egocentric_map_holds_at_most_eight_objects_and_the_observer(egocentric):
    agents, _ = egocentric[0]
    row = next(r for r in agents if r.kind == "agent" and r.question_type == "FR")
    assert agent_map_item(dataclasses.replace(row, n=8), "agent_map_n8_m7_d144").options[-1] == AGENT
    with pytest.raises(RoomspaceError, match="n is at most 8, not 9"):
        agent_map_item(dataclasses.replace(row, n=9), "agent_map_n9_m8_d144")
