from collections import Counter

import pytest
from synthetic import synthetic_scene

from pipeline.checker import answer_set
from pipeline.errors import RoomspaceError
from pipeline.facts import SETTINGS
from pipeline.items import DEFAULT_CONFIGS, QUESTION_TYPES, VIEWS, Config, parse_configs, room_items, sweep
from pipeline.relations import DIRECTIONS, direction, relation_words

CONFIG = Config(5, 4, 12)


@pytest.fixture(scope="module")
def items():
    return room_items(synthetic_scene(3), CONFIG)


def test_one_fr_and_one_yn_per_setting_and_view(items):
    keys = Counter((i.setting, i.view, i.question_type) for i in items)
    assert set(keys) == {(s, v, q) for s in SETTINGS for v in VIEWS for q in QUESTION_TYPES}
    assert set(keys.values()) == {1}
    assert len({i.id for i in items}) == len(items)


def test_items_are_a_pure_function_of_room_and_config(items):
    assert room_items(synthetic_scene(3), CONFIG) == items
    assert room_items(synthetic_scene(4), CONFIG) != items


def test_same_objects_across_grid_sizes_and_m():
    a = room_items(synthetic_scene(5), Config(5, 4, 9))
    b = room_items(synthetic_scene(5), Config(5, 6, 12))
    assert [o.name for o in a[0].objects] == [o.name for o in b[0].objects]


def test_witness_and_answer_set_match_the_checker(items):
    for item in items:
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
            assert relation_words(item.candidate, item.view, "phrase") in item.question


def test_yes_and_no_balanced_within_a_room():
    for index in range(12):
        items = room_items(synthetic_scene(index), CONFIG)
        yn = [i for i in items if i.question_type == "YN"]
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
    scene = synthetic_scene(0, count=7)
    for index in range(30):
        scene = synthetic_scene(index, count=7)
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
    assert room_items(synthetic_scene(1, count=4), CONFIG) == ()


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
