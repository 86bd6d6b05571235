import json
import math
from importlib.resources import files

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import RoomspaceError
from pipeline.spatial.relations import (BINARY_CODES, DIRECTIONS, DISTANCES, REGIONS, UNARY_CODES, VIEWS, WALL_CONTACT,
                                        band, converse, direction, direction_of_points, distance, holds,
                                        in_canonical_order, region, relation_words, wall_contact)

FAST = settings(deadline=None, derandomize=True, database=None)
cells12 = st.tuples(st.integers(0, 11), st.integers(0, 11))


def test_codes_and_canonical_order():
    assert DIRECTIONS == ("N", "NE", "E", "SE", "S", "SW", "W", "NW", "O")
    assert REGIONS == ("NWR", "NR", "NER", "WR", "CR", "ER", "SWR", "SR", "SER")
    assert WALL_CONTACT == ("TPP", "NTPP")
    assert DISTANCES == ("D2C", "D2F", "D3C", "D3M", "D3F")
    assert VIEWS == ("top_down", "north_facing")


def test_every_code_comes_from_the_one_data_table():
    table = json.loads(files("pipeline").joinpath("data/relations.json").read_text())
    assert [e["code"] for e in table["codes"]] == list(DIRECTIONS + REGIONS + WALL_CONTACT + DISTANCES)
    assert set(BINARY_CODES) | set(UNARY_CODES) == {e["code"] for e in table["codes"]}


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((3, 3), (1, 1), "NE"),  # further east and further north
        ((1, 5), (1, 2), "N"),
        ((4, 2), (1, 2), "E"),
        ((4, 0), (1, 2), "SE"),
        ((1, 0), (1, 2), "S"),
        ((0, 0), (1, 2), "SW"),
        ((0, 2), (1, 2), "W"),
        ((0, 7), (1, 2), "NW"),
        ((5, 5), (5, 5), "O"),
    ],
)
def test_direction_of_a_relative_to_b(a, b, expected):
    assert direction(a, b) == expected


@FAST
@given(cells12, cells12)
def test_direction_converse_swaps_the_pair(a, b):
    assert direction(b, a) == converse(direction(a, b))
    assert converse(converse(direction(a, b))) == direction(a, b)


def test_converse_of_distances_is_itself_and_unary_codes_have_none():
    assert [converse(c) for c in DISTANCES] == list(DISTANCES)
    with pytest.raises(RoomspaceError, match="'NWR' is not a direction"):
        converse("NWR")


@pytest.mark.parametrize("d, thirds", [(9, [0] * 3 + [1] * 3 + [2] * 3), (12, [0] * 4 + [1] * 4 + [2] * 4)])
def test_bands_are_thirds_of_the_axis(d, thirds):
    assert [band(k, d) for k in range(d)] == thirds


def test_regions():
    assert region((0, 11), 12) == "NWR"
    assert region((4, 8), 12) == "NR"  # i in the middle band, j in the north band
    assert region((11, 11), 12) == "NER"
    assert region((4, 4), 9) == "CR"
    assert region((8, 3), 9) == "ER"
    assert region((3, 0), 9) == "SR"
    assert region((2, 2), 9) == "SWR"
    assert region((9, 0), 12) == "SER"


def test_wall_contact_is_the_border():
    assert wall_contact((0, 5), 12) == "TPP"
    assert wall_contact((5, 11), 12) == "TPP"
    assert wall_contact((1, 10), 12) == "NTPP"
    assert wall_contact((8, 4), 9) == "TPP"


@pytest.mark.parametrize(
    "d, offset, d2, d3",
    [
        (12, (6, 0), "D2C", "D3M"),  # dist 6 = d/2: close, inclusive
        (12, (6, 1), "D2F", "D3M"),
        (12, (4, 4), "D2C", "D3C"),  # dist^2 32 = (sqrt(2) d/3)^2: close, inclusive
        (12, (5, 3), "D2C", "D3M"),
        (12, (8, 8), "D2F", "D3M"),  # dist^2 128 = (2 sqrt(2) d/3)^2: medium, inclusive
        (12, (11, 6), "D2F", "D3F"),
        (9, (4, 2), "D2C", "D3M"),  # 20 <= 20.25
        (9, (3, 4), "D2F", "D3M"),
        (9, (3, 3), "D2C", "D3C"),  # 18 = 2 * 81 / 9
        (9, (6, 6), "D2F", "D3M"),  # 72 = 8 * 81 / 9
        (9, (7, 5), "D2F", "D3F"),
        (9, (0, 0), "D2C", "D3C"),
    ],
)
def test_distance_thresholds_are_exact_and_inclusive(d, offset, d2, d3):
    a, b = (0, 0), offset
    assert distance(a, b, d, "D2") == d2
    assert distance(b, a, d, "D3") == d3


@FAST
@given(cells12, cells12, st.sampled_from([9, 12]))
def test_distance_agrees_with_euclid_away_from_thresholds(a, b, d):
    dist = math.dist(a, b)
    limits = {"D2": [(d / 2, "D2C")], "D3": [(math.sqrt(2) * d / 3, "D3C"), (2 * math.sqrt(2) * d / 3, "D3M")]}
    for scale, bands in limits.items():
        if any(abs(dist - limit) < 1e-9 for limit, _ in bands):
            continue
        expected = next((code for limit, code in bands if dist <= limit), scale + "F")
        assert distance(a, b, d, scale) == expected


def test_unknown_distance_scale_is_rejected():
    with pytest.raises(RoomspaceError, match="'D4'"):
        distance((0, 0), (1, 1), 12, "D4")


def test_holds_is_each_kind_of_fact():
    assert holds("NE", 12, (3, 3), (1, 1)) and not holds("N", 12, (3, 3), (1, 1))
    assert holds("D2C", 12, (0, 0), (6, 0)) and holds("D3M", 12, (0, 0), (6, 0))
    assert holds("NWR", 12, (0, 11)) and holds("TPP", 12, (0, 11)) and holds("NTPP", 9, (1, 7))
    with pytest.raises(RoomspaceError, match="'XX'"):
        holds("XX", 12, (0, 0))


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((1.0, 1.0), (0.5, 0.5), "NE"),
        ((1.0, 1.0 + 5e-7), (0.5, 1.0), "E"),  # within eps on z counts as the same
        ((2.0, 0.0), (2.0, 3.0), "S"),
        ((0.3, 0.3), (0.3 + 1e-7, 0.3 - 1e-7), "O"),
        ((0.0, 2.0), (1.0, 1.0), "NW"),
    ],
)
def test_direction_of_points_in_metres(a, b, expected):
    assert direction_of_points(a, b) == expected


def test_direction_of_points_eps_is_configurable():
    assert direction_of_points((1.0, 1.0), (0.99, 0.0), eps=0.05) == "N"


@pytest.mark.parametrize("view", VIEWS)
def test_every_code_has_a_phrase_and_a_label_in_every_view(view):
    for code in BINARY_CODES + UNARY_CODES:
        assert relation_words(code, view, "phrase")
        assert relation_words(code, view, "label")
    labels = [relation_words(c, view, "label") for c in DIRECTIONS]
    assert len(set(labels)) == len(labels)  # answer options must be told apart


def test_region_places_in_both_views():
    for code in REGIONS:
        assert relation_words(code, "top_down", "place").startswith("the ")
        assert relation_words(code, "north_facing", "place").startswith("the ")


def test_words_of_the_two_views():
    assert relation_words("NW", "top_down", "phrase") == "north-west of"
    assert relation_words("NW", "north_facing", "phrase") == "in front of and to the left of"
    assert relation_words("NW", "north_facing", "label") == "front-left"
    assert relation_words("N", "north_facing", "phrase") == "in front of"
    assert relation_words("S", "north_facing", "phrase") == "behind"
    assert relation_words("E", "north_facing", "phrase") == "to the right of"
    assert relation_words("W", "north_facing", "phrase") == "to the left of"
    assert relation_words("O", "top_down", "phrase") == "in the same place as"
    assert relation_words("O", "north_facing", "label") == "same place"
    assert relation_words("NWR", "top_down", "place") == "the north-west corner"
    assert relation_words("NWR", "north_facing", "place") == "the far-left corner"
    assert relation_words("SER", "north_facing", "place") == "the near-right corner"
    assert relation_words("CR", "top_down", "place") == "the centre"
    assert relation_words("TPP", "top_down", "phrase") == "against a wall"
    assert relation_words("NTPP", "north_facing", "phrase") == "away from the walls"
    assert relation_words("D3M", "top_down", "phrase") == "at a medium distance from"
    assert relation_words("D2F", "north_facing", "phrase") == "far from"
    assert relation_words("D3C", "top_down", "phrase") == "close to"


def test_bad_words_lookups_name_the_culprit():
    with pytest.raises(RoomspaceError, match="'ZZ'"):
        relation_words("ZZ", "top_down", "phrase")
    with pytest.raises(RoomspaceError, match="'side_view'"):
        relation_words("N", "side_view", "phrase")
    with pytest.raises(RoomspaceError, match="'place'"):
        relation_words("N", "top_down", "place")


def test_answer_sets_are_listed_in_canonical_order():
    assert in_canonical_order({"O", "SW", "N", "E"}) == ("N", "E", "SW", "O")
    assert in_canonical_order(frozenset()) == ()
    with pytest.raises(RoomspaceError, match="NWR"):
        in_canonical_order({"N", "NWR"})
