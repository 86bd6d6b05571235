"""Name-swapped twins: the same items in invented words, answers unchanged by construction."""

import re

import pytest
from handmade import handmade_scene

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.spatial.checker import answer_set
from pipeline.spatial.facts import SETTINGS
from pipeline.spatial.relations import relation_words
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, RoomItems, room_items
from pipeline.text.kinds import KINDS
from pipeline.text.maps import stories
from pipeline.text.twins import draw_words, twin_items, twin_stories
from pipeline.text.words import type_words

CONFIGS = (Config(5, 4, 12), Config(6, 8, 9))


@pytest.fixture(scope="module")
def pairs():
    """(item, twin) for several rooms and configurations."""
    out = []
    for index in range(6):
        for config in CONFIGS:
            items = room_items(handmade_scene(index), config)
            out.extend(zip(items, twin_items(items)))
    return out


def test_twins_keep_every_answer_and_the_checker_agrees(pairs):
    for item, twin in pairs:
        assert twin.config == KINDS["twin"].config_name(item.config) == f"twin_{item.config}"
        assert twin.id == item.id.replace(f"-{item.config}-", f"-{twin.config}-")
        for field in ("answer_set", "answer", "candidate", "options", "true_relation", "setting", "view", "hops",
                      "question_type", "path_decides", "tightness", "layout_decides"):
            assert getattr(twin, field) == getattr(item, field), field
        names = [o.name for o in twin.objects]
        assert not set(names) & {o.name for o in item.objects}
        if item.setting in SETTINGS:
            query = (twin.query.subject, twin.query.object)
            assert answer_set(twin.facts, names, query, twin.d) == set(item.answer_set)
            assert [f.relation for f in twin.facts] == [f.relation for f in item.facts]


GLOSSARY = r"In this story the relations have invented names: ([^.]*)\. "


def glossary_of(story: str) -> dict[str, str]:
    found = re.search(GLOSSARY, story)
    return dict(re.findall(r'"([^"]+)" means ([^;]+)', found.group(1))) if found else {}


def familiar(text: str, twin, item) -> str:
    """A twin's text with its invented words put back, articles levelled ("a dax", "an armchair")."""
    glossary = glossary_of(twin.story)
    text = re.sub(GLOSSARY, "", text)
    swaps = {**glossary, **{t.name: o.name for t, o in zip(twin.objects, item.objects)}}
    for invented in sorted(swaps, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(invented)}\b", swaps[invented], text, flags=re.IGNORECASE)
    return level(text)


def level(text: str) -> str:
    return re.sub(r"\ban?\b", "a", text.lower())


def test_a_twin_is_its_original_with_the_words_swapped_and_defined(pairs):
    for item, twin in pairs:
        assert familiar(twin.story, twin, item) == level(item.story)
        assert familiar(twin.question, twin, item) == level(item.question)
        if item.setting == RCC8_SETTING:
            assert not glossary_of(twin.story)
            continue
        glossary = glossary_of(twin.story)
        for fact in twin.facts:
            assert any(relation_words(fact.relation, twin.view, "phrase") == meaning for meaning in glossary.values())
        if twin.path_text:
            assert familiar(twin.path_text, twin, item) == level(item.path_text)


def test_no_familiar_object_or_relation_word_is_left_outside_the_glossary(pairs):
    for item, twin in pairs:
        body = re.sub(GLOSSARY, "", twin.story)
        text = f"{body} {twin.question} {twin.path_text}"
        for obj in item.objects:
            assert not re.search(rf"\b{re.escape(type_words(obj.type))}\b", text, re.IGNORECASE), obj.type
        if item.setting != RCC8_SETTING:
            for fact in item.facts:
                assert f" {relation_words(fact.relation, item.view, 'phrase')} the" not in text


def test_the_draw_is_seeded_distinct_and_from_the_vocabulary():
    vocabulary = data_json("twins.json")
    words = draw_words("s7-000001", "n5_m4_d144", ["bed", "chair", "sofa"])
    assert words == draw_words("s7-000001", "n5_m4_d144", ["bed", "chair", "sofa"])
    assert set(words.objects.values()) <= set(vocabulary["object_words"]) and len(set(words.objects.values())) == 3
    assert set(words.relations.values()) <= set(vocabulary["relation_words"])
    assert len(set(words.relations.values())) == len(words.relations) == 25
    draws = {tuple(draw_words(f"s7-{k:06d}", "n5_m4_d144", ["bed"]).relations.values()) for k in range(5)}
    assert len(draws) > 1


def test_twins_are_pure_and_refuse_to_twin_twice(pairs):
    items = room_items(handmade_scene(1), CONFIGS[0])
    twins = twin_items(items)
    assert twin_items(items) == twins
    assert twin_items(items[:1]) == twins[:1]  # an FR item alone gets the same twin
    with pytest.raises(RoomspaceError, match="is not a base item"):
        twin_items(twins)


def test_twin_stories_made_from_what_questions_share_are_the_twins_of_the_fr_items():
    """A twin map's stories (twin_stories: no story told in familiar words) are the twins twin_items makes of
    the same FR items (maps.stories: rcc8 asks for no map), field for field, prompts included."""
    for index in range(4):
        for config in CONFIGS:
            rooms = RoomItems(handmade_scene(index))
            fields = {setting: common for setting, (common, _) in rooms.setting_fields(config).items()}
            made = twin_stories(fields)
            assert made == twin_items(stories(room_items(handmade_scene(index), config)))
            assert [twin.prompt for twin in made] == [twin.prompt for twin in twin_items(stories(rooms(config)))]
            assert len(made) == len(SETTINGS) * 2 and {twin.question_type for twin in made} == {"FR"}
