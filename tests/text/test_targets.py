"""Training targets and cognitive maps: a copied target scores 100%, a map gives back the scene's relation."""

import pytest
from handmade import handmade_scene

from pipeline.dataset.rows import items_table, records_table
from pipeline.evaluate.answers import parse_answer
from pipeline.spatial.relations import DIRECTIONS, direction
from pipeline.text.agents import agent_items
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, RoomItems
from pipeline.text.targets import cognitive_map, target_text
from pipeline.text.twins import twin_items

CONFIGS = (Config(3, 2, 9), Config(5, 4, 12), Config(5, 7, 12), Config(6, 8, 9))


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    """Rows of several rooms and configurations, their twins and agent rows too, as read from Parquet."""
    items, agents = [], []
    for index in range(6):
        scene = handmade_scene(index)
        room = RoomItems(scene)
        for config in CONFIGS:
            made = room(config)
            items.extend(made + twin_items(made))
            if made:
                agents.extend(records_table(agent_items(scene, room.told(config)), f"agent_{config.name}").to_pylist())
    return items_table(items).to_pylist() + agents


def test_every_target_parses_back_to_its_rows_answer(rows):
    for row in rows:
        parsed = parse_answer(target_text(row), row["question_type"])
        if row["question_type"] == "FR":
            assert parsed.relations == tuple(row["answer_set"]), row["id"]
        else:
            assert parsed.yes == (row["answer"] == "Yes"), row["id"]


def test_a_target_is_the_path_where_it_decides_and_names_the_other_facts_where_not(rows):
    for row in rows:
        reasoning, answer_line = target_text(row).split("\n")
        assert answer_line == f"Answer: {row['answer']}"
        if row["path_decides"]:
            assert reasoning.startswith(row["path_text"])
            assert "grid" not in reasoning.removeprefix(row["path_text"])
        elif row["setting"] != RCC8_SETTING:
            assert f"inside the {row['d']} x {row['d']} grid" in reasoning, row["id"]
    decided = [row for row in rows if row["path_decides"]]
    assert decided and len(decided) < len(rows)


def map_cells(text: str, d: int) -> dict[int, tuple[int, int]]:
    """Object number -> (i, j), read back from a map: the first line is the caption, the last the legend."""
    lines = text.split("\n")
    assert len(lines) == d + 2
    cells = {}
    for top, line in enumerate(lines[1:-1]):
        tokens = line.split()
        assert len(tokens) == d
        for i, token in enumerate(tokens):
            for number in token.strip("."):
                cells[int(number)] = (i, d - 1 - top)
    return cells


def test_the_map_gives_back_every_objects_cell_and_the_true_relation(rows):
    for row in rows:
        cells = map_cells(cognitive_map(row), row["d"])
        if "question_pose" not in row:  # an agent row's map is turned to its observer
            assert cells == {k: (o["i"], o["j"]) for k, o in enumerate(row["objects"], 1)}
        if row["setting"] != RCC8_SETTING:
            number = {o["name"]: k for k, o in enumerate(row["objects"], 1)}  # the query is o_1, o_n but in agent rows
            asked = cells[number[row["query"]["subject"]]], cells[number[row["query"]["object"]]]
            assert direction(*asked) == row["true_relation"], row["id"]
            assert row["true_relation"] in DIRECTIONS


def test_the_map_names_its_view_and_its_objects(rows):
    for row in rows:
        text = cognitive_map(row)
        assert ("north at the top" in text) == (row["view"] == "top_down")
        assert ("as seen facing the" in text) == ("question_pose" in row)
        assert text.split("\n")[-1] == ", ".join(f"{k} = {o['name']}" for k, o in enumerate(row["objects"], 1))
