"""Frames: turning relabels relations exactly, and turning a whole room turns every answer set the same way."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import random_facts, rasters
from test_checker import checks, story

from pipeline.errors import RoomspaceError
from pipeline.spatial.checker import answer_set
from pipeline.spatial.facts import SETTINGS, Fact, setting_facts
from pipeline.spatial.frames import (FACINGS, facing_between, on_plan, seen_facing, seen_set, turn, turn_cell)
from pipeline.spatial.grid import GRID_SIZES
from pipeline.spatial.relations import (DIRECTIONS, DISTANCES, REGIONS, WALL_CONTACT, direction, distance,
                                        region, relation_words, wall_contact)


def turned(fact: Fact, turns: int) -> Fact:
    return Fact(fact.subject, turn(fact.relation, turns), fact.object)


def test_facing_east_north_is_on_your_left_and_east_in_front():
    assert relation_words(seen_facing("N", "E"), "north_facing", "label") == "left"
    assert relation_words(seen_facing("E", "E"), "north_facing", "label") == "front"
    assert relation_words(seen_facing("S", "E"), "north_facing", "label") == "right"
    # regions turn too: the far-left corner of a reader facing east is the north-east region
    assert on_plan("NWR", "E") == "NER" and seen_facing("NER", "E") == "NWR"
    assert seen_facing("N", "N") == "N" and seen_facing("NE", "S") == "SW" and seen_facing("NE", "W") == "SE"


@pytest.mark.parametrize("code", DIRECTIONS + REGIONS + WALL_CONTACT + DISTANCES)
def test_four_quarter_turns_are_none_and_seeing_undoes_the_plan(code):
    assert turn(code, 4) == turn(code, 0) == code and turn(turn(code, 1), -1) == code
    for facing in FACINGS:
        assert on_plan(seen_facing(code, facing), facing) == code


@pytest.mark.parametrize("d", GRID_SIZES)
def test_turning_cells_turns_every_relation_read_off_them(d):
    cells = [(i, j) for i in range(d) for j in range(d)]
    for turns in range(4):
        for a in cells[::7]:
            ta = turn_cell(a, turns, d)
            assert region(ta, d) == turn(region(a, d), turns)
            assert wall_contact(ta, d) == wall_contact(a, d)
            for b in cells[::5]:
                tb = turn_cell(b, turns, d)
                assert direction(ta, tb) == turn(direction(a, b), turns)
                assert distance(ta, tb, d, "D3") == distance(a, b, d, "D3")


@pytest.mark.parametrize("d", GRID_SIZES)
@pytest.mark.parametrize("setting", SETTINGS)
@checks(10)
@given(data=st.data())
def test_a_turned_room_has_turned_answer_sets(setting, d, data):
    """Every fact of a story relabelled by a quarter-turn (the room turned): the answer set turns with it."""
    n = data.draw(st.integers(3, 5), label="n")
    facts, names, _ = story(data, n, d, setting)
    turns = data.draw(st.integers(1, 3), label="turns")
    query = (names[0], names[-1])
    plain = answer_set(facts, names, query, d)
    assert answer_set([turned(f, turns) for f in facts], names, query, d) == {turn(c, turns) for c in plain}


@pytest.mark.parametrize("d", GRID_SIZES)
@checks(40)
@given(data=st.data())
def test_a_turned_network_of_arbitrary_facts_has_turned_answer_sets(d, data):
    names = [f"v{k}" for k in range(data.draw(st.integers(2, 4), label="n"))]
    facts = data.draw(random_facts(names, max_facts=2 * len(names) + 2))
    query = (names[0], names[-1])
    plain = answer_set(facts, names, query, d)
    for turns in (1, 2, 3):
        assert answer_set([turned(f, turns) for f in facts], names, query, d) == {turn(c, turns) for c in plain}


@checks(20)
@given(raster=rasters(4, 9), turns=st.integers(0, 3))
def test_a_turned_raster_tells_the_turned_story(raster, turns):
    names = ["a", "b", "c", "d"]
    turned_raster = dataclasses.replace(raster, cells=tuple(turn_cell(c, turns, raster.d) for c in raster.cells))
    pairs = ((0, 1), (1, 2), (2, 3))
    assert setting_facts(turned_raster, names, pairs, "o2_layout") == tuple(
        turned(f, turns) for f in setting_facts(raster, names, pairs, "o2_layout"))


def test_answer_sets_are_said_as_sets_in_the_frame():
    assert seen_set(("N", "NE", "O"), "E") == ("W", "NW", "O")
    assert seen_set(DIRECTIONS, "S") == DIRECTIONS


def test_angles_between_facings():
    assert [facing_between("N", f) for f in FACINGS] == [0, 90, 180, 90]
    assert facing_between("W", "E") == 180 and facing_between("S", "E") == 90
    with pytest.raises(RoomspaceError, match="unknown facing"):
        facing_between("N", "up")
