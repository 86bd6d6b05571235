from collections import Counter

import pytest
from handmade import handmade_scene

from pipeline.errors import RoomspaceError
from pipeline.spatial.checker import answer_set
from pipeline.spatial.difficulty import layout_decides, tightness
from pipeline.spatial.facts import SETTINGS, Fact
from pipeline.spatial.relations import DIRECTIONS, REGIONS, VIEWS, direction, relation_words
from pipeline.text.configs import DEFAULT_CONFIGS, Config, parse_configs, sweep
from pipeline.text.items import QUESTION_TYPES, RCC8_SETTING, ROWS_PER_ROOM, RoomItems, room_items

CONFIG = Config(5, 4, 12)


@pytest.fixture(scope="module")
def items():
    return room_items(handmade_scene(3), CONFIG)


def test_one_fr_and_one_yn_per_setting_and_view(items):
    keys = Counter((i.setting, i.view, i.question_type) for i in items)
    story_keys = {(s, v, q) for s in SETTINGS for v in VIEWS for q in QUESTION_TYPES}
    assert set(keys) == story_keys | {(RCC8_SETTING, v, "YN") for v in VIEWS}
    assert set(keys.values()) == {1} and len(items) == ROWS_PER_ROOM
    assert len({i.id for i in items}) == len(items)


def test_items_are_a_pure_function_of_room_and_config(items):
    assert room_items(handmade_scene(3), CONFIG) == items
    assert room_items(handmade_scene(4), CONFIG) != items


def test_a_room_asked_for_many_configurations_gives_each_its_own_items():
    """RoomItems keeps a room's shared work and the checker's answers across configurations; the
    items must not depend on which configurations were asked before, or in what order."""
    configs = [c for c in sweep() if c.n <= 5]
    room = RoomItems(handmade_scene(6))
    asked = {config: room(config) for config in [*configs[::-1], *configs[::2]]}
    assert all(asked[config] == room_items(handmade_scene(6), config) for config in configs)


def test_same_objects_across_grid_sizes_and_m():
    a = room_items(handmade_scene(5), Config(5, 4, 9))
    b = room_items(handmade_scene(5), Config(5, 6, 12))
    assert [o.name for o in a[0].objects] == [o.name for o in b[0].objects]


def test_witness_and_answer_set_match_the_checker(items):
    for item in (i for i in items if i.setting in SETTINGS):  # rcc8: tests/test_topology.py
        assert item.answer_set and item.true_relation in item.answer_set
        assert item.answer_set_size == len(item.answer_set)
        names = [o.name for o in item.objects]
        expected = answer_set(item.facts, names, (item.query.subject, item.query.object), item.d)
        assert set(item.answer_set) == expected
        assert list(item.answer_set) == [c for c in DIRECTIONS if c in expected]


def test_stated_facts_hold_in_the_rasterised_scene(items):
    for item in items:
        cells = {o.name: (o.i, o.j) for o in item.objects}
        for fact in item.facts:
            if fact.relation in DIRECTIONS:
                assert direction(cells[fact.subject], cells[fact.object]) == fact.relation, fact


def test_answers_are_in_the_views_words(items):
    for item in items:
        if item.question_type == "FR":
            assert item.options == tuple(relation_words(c, item.view, "label") for c in DIRECTIONS)
            assert item.answer == ", ".join(relation_words(c, item.view, "label") for c in item.answer_set)
            assert item.candidate is None
        else:
            assert item.options == ("Yes", "No")
            assert item.answer == ("Yes" if item.candidate in item.answer_set else "No")
            if item.setting in SETTINGS:
                assert relation_words(item.candidate, item.view, "phrase") in item.question


def test_yes_and_no_balanced_within_a_room():
    for index in range(12):
        items = room_items(handmade_scene(index), CONFIG)
        assert sorted(i.answer for i in items if i.setting == RCC8_SETTING) == ["No", "Yes"]
        yn = [i for i in items if i.question_type == "YN" and i.setting in SETTINGS]
        forced = {i.setting for i in yn if i.answer_set_size == len(DIRECTIONS)}
        open_slots = sum(1 for i in yn if i.setting not in forced)
        no = sum(1 for i in yn if i.answer == "No")
        assert no == min(len(yn) // 2, open_slots)


def test_views_change_words_not_answers(items):
    by_key = {(i.setting, i.question_type, i.view): i for i in items}
    for setting in SETTINGS:
        top, north = by_key[setting, "FR", "top_down"], by_key[setting, "FR", "north_facing"]
        assert top.answer_set == north.answer_set and top.facts == north.facts
        assert "in front of" in north.story and "north" in top.story


def test_duplicate_types_are_numbered_in_story_order():
    scene = handmade_scene(0, count=7)
    for index in range(30):
        scene = handmade_scene(index, count=7)
        item = room_items(scene, Config(7, 6, 12))[0]
        chairs = [o.name for o in item.objects if o.type == "Chair"]
        if len(chairs) == 2:
            break
    assert sorted(chairs) == ["chair 1", "chair 2"]
    assert item.story.index("chair 1") < item.story.index("chair 2")
    assert "the chair 1" not in item.story


def test_layout_and_wall_contact_are_told(items):
    by_key = {(i.setting, i.view, i.question_type): i for i in items}
    tpp = by_key["tpp", "top_down", "FR"]
    assert {f.relation for f in tpp.facts if f.object is None} & {"TPP", "NTPP"}
    wall_words = {relation_words(c, "top_down", "phrase") for c in ("TPP", "NTPP")}
    assert any(w in tpp.story for w in wall_words)
    o2 = by_key["o2", "top_down", "FR"]
    assert all(f.object is not None for f in o2.facts) and len(o2.facts) == CONFIG.m


def test_rooms_with_too_few_objects_yield_nothing():
    assert room_items(handmade_scene(1, count=4), CONFIG) == ()


@pytest.mark.parametrize("text, message", [
    ("n5_m4_d100", "d100"), ("n5_m10_d144", "m"), ("five", "n5_m4_d144"), ("n5_m3_d81", "m"),
])
def test_bad_configurations_are_named(text, message):
    with pytest.raises(RoomspaceError, match=message):
        parse_configs(text)


def test_config_lists_and_sweep():
    assert parse_configs("default") == DEFAULT_CONFIGS
    assert parse_configs("n5_m4_d144, n3_m2_d81") == (Config(5, 4, 12), Config(3, 2, 9))
    configs = sweep()
    assert len(configs) == 2 * sum(n * (n - 1) // 2 - (n - 1) for n in range(3, 8))
    assert Config(7, 20, 12) in configs and Config(3, 2, 9) in configs


def test_tightness_is_the_mean_excluded_share_of_each_facts_domain():
    # d = 9: "N" holds for 9 * 36 of the 81 * 81 cell pairs (same column, a higher row);
    # the region "NWR" for 3 * 3 of the 81 cells.
    facts = (Fact("a", "N", "b"), Fact("a", "NWR", None))
    expected = ((1 - 9 * 36 / 81**2) + (1 - 9 / 81)) / 2
    assert tightness(facts, 9) == pytest.approx(expected)
    assert tightness((), 9) == 0.0


def test_layout_decides_exactly_when_the_query_regions_give_the_answer(items):
    for item in (i for i in items if i.setting in SETTINGS):
        query = (item.query.subject, item.query.object)
        regions = [f for f in item.facts if f.object is None and f.relation in REGIONS and f.subject in query]
        alone = answer_set(regions, query, query, item.d) if len(regions) == 2 else None
        assert item.layout_decides == (alone == set(item.answer_set))
    by_key = {(i.setting, i.view, i.question_type): i for i in items}
    assert by_key["layout", "top_down", "FR"].layout_decides  # the other objects cannot matter
    assert not by_key["o2", "top_down", "FR"].layout_decides  # no regions told


def test_difficulty_metadata_differs_where_the_facts_do():
    layout, tpp = Fact("a", "NWR", None), Fact("a", "TPP", None)
    story = (Fact("a", "SWR", None), Fact("b", "NER", None), tpp)
    assert layout_decides(story, ("a", "b"), ("SW",), 9)
    assert not layout_decides(story, ("a", "b"), ("SW", "W"), 9)
    assert not layout_decides((layout, Fact("a", "N", "b")), ("a", "b"), ("N",), 9)  # b has no region
    assert tightness((tpp,), 12) > tightness((Fact("a", "NTPP", None),), 12)
