"""The composition kind's rows (pipeline/text/composition.py): the tables once, in the first test room;
grounded compositions in every room; every question under both namings; gold from pipeline.spatial.calculi."""

import re
from collections import Counter

import pytest
from conftest import SCENE_SEED

from pipeline.dataset.build import RoomWork
from pipeline.dataset.rows import check_row, records_table
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.calculi import (direction_composition, direction_neighbourhood, rcc8_composition,
                                      rcc8_neighbourhood)
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8, ROOM, rcc8_converse
from pipeline.text.composition import GROUNDED_PER_ROOM, NAMINGS, CompositionItem
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS
from pipeline.text.prompts import row_prompt

CONFIG = Config(5, 4, 12)
NAME = KINDS["composition"].config_name(CONFIG)
PAPER_NAMES = {"DC": "fablon", "EC": "narkil", "PO": "quonty", "NTPPi": "piflox", "TPPi": "dregly", "NTPP": "lufrex",
               "TPP": "zorpin", "EQ": "womfer"}  # Cohn and Blackwell's invented names
ANONYMOUS_DIRECTIONS = ("vorl", "glimber", "tasko", "prendal", "kubit", "moffin", "dresk", "yallop", "semmet")  # ours


def room_rows(scenes, index: int) -> tuple[CompositionItem, ...]:
    path = scene_path(scenes, SCENE_SEED, index)
    return RoomWork(load_scene(path), path).rows("composition", CONFIG)


@pytest.fixture(scope="module")
def first(scenes):
    return room_rows(scenes, 0)


def coded(text: str) -> str:
    """A story or question with every invented name written as its code."""
    for code, name in {**PAPER_NAMES, **dict(zip(DIRECTIONS, ANONYMOUS_DIRECTIONS))}.items():
        text = re.sub(rf"\b{name}\(", f"{code}(", text)
    return text


def table_of(setting: str):
    return {"rcc8_composition": rcc8_composition, "direction_composition": direction_composition,
            "rcc8_neighbourhood": rcc8_neighbourhood, "direction_neighbourhood": direction_neighbourhood}[setting]()


def test_the_first_room_holds_every_table_question_once_in_each_naming(first):
    counts = Counter((row.setting, row.naming) for row in first)
    for naming in NAMINGS:
        assert counts["rcc8_composition", naming] == 49  # 7 x 7: no EQ row or column
        assert counts["direction_composition", naming] == 81
        assert counts["rcc8_neighbourhood", naming] == 8 and counts["direction_neighbourhood", naming] == 9
    assert len({row.id for row in first}) == len(first)
    asked = {row.premises for row in first if row.setting == "rcc8_composition"}
    assert all("EQ" not in premises for premises in asked) and len(asked) == 49


def test_table_answers_are_the_computed_tables_in_both_namings(first):
    for row in first:
        if row.setting == "rcc8_grounded":
            continue
        table = table_of(row.setting)
        assert row.answer_set == table[row.premises if len(row.premises) == 2 else row.premises[0]]
        names = dict(zip(row.option_codes, row.options))
        assert row.answer == ", ".join(names[code] for code in row.answer_set)
        assert row.true_relation == row.answer_set[0] and row.question_type == "FR" and row.candidate is None
        check_row(vars(row))


def test_the_two_namings_differ_in_names_only(first):
    by_question = {}
    for row in first:
        by_question.setdefault(row.id.removesuffix(f"-{row.naming}"), {})[row.naming] = row
    for pair in by_question.values():
        eponymous, anonymous = pair["eponymous"], pair["anonymous"]
        assert eponymous.answer_set == anonymous.answer_set and eponymous.premises == anonymous.premises
        assert (coded(eponymous.story), coded(eponymous.question)) == (coded(anonymous.story), coded(anonymous.question))
        assert eponymous.options != anonymous.options and eponymous.option_codes == anonymous.option_codes
        if eponymous.option_codes == RCC8:
            assert eponymous.options == RCC8
            assert dict(zip(RCC8, anonymous.options)) == PAPER_NAMES
            assert "RCC-8" in eponymous.prompt and "RCC-8" not in anonymous.prompt
        else:
            assert eponymous.option_codes == DIRECTIONS and anonymous.options == ANONYMOUS_DIRECTIONS
        for row in (eponymous, anonymous):  # every option is defined, and the story states the premises by name
            assert all(f"- {name}(x, y): " in row.prompt for name in row.options)
            names = dict(zip(row.option_codes, row.options))
            assert all(f"{names[code]}(" in row.story for code in row.premises)
            assert row.prompt == row_prompt(records_table([row], NAME).to_pylist()[0])


def test_grounded_compositions_are_one_table_cell_witnessed_by_the_room(scenes, first):
    later = room_rows(scenes, 1)
    assert all(row.setting == "rcc8_grounded" for row in later)  # the tables are the first room's only
    rooms = [first, later, room_rows(scenes, 2)]
    for rows in rooms:
        grounded = [row for row in rows if row.setting == "rcc8_grounded"]
        assert 0 < len(grounded) <= 2 * GROUNDED_PER_ROOM and len(grounded) % 2 == 0
        relation = {}
        for fact in grounded[0].topology:
            relation[fact.subject, fact.object] = fact.relation
            relation[fact.object, fact.subject] = rcc8_converse(fact.relation)
        cells = set()
        for row in grounded:
            (told_first, told_second), (x, z) = row.facts, row.query.pair
            assert told_first.object == told_second.subject and (told_first.subject, told_second.object) == (x, z)
            assert (told_first.relation, told_second.relation) == row.premises
            assert relation[told_first.subject, told_first.object] == row.premises[0]
            assert relation[told_second.subject, told_second.object] == row.premises[1]
            assert row.answer_set == rcc8_composition()[row.premises]
            assert row.true_relation == relation[x, z] in row.answer_set  # the room is a witness
            assert row.arguments == tuple("floor" if name == ROOM else name for name in (x, z))
            cells.add(row.premises)
        assert len(cells) == len(grounded) // 2  # each cell asked once, in both namings


def test_rows_are_a_pure_function_of_the_room(scenes, first):
    assert room_rows(scenes, 0) == first
