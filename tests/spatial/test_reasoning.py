"""Reasoning paths: composition against brute force, and every step of every item's path, symbolic and written."""

import re
from itertools import product

import pytest
from handmade import handmade_scene

from pipeline.spatial.facts import SETTINGS, Fact
from pipeline.spatial.reasoning import compose, compose_one, reasoning_path, shortest_chain
from pipeline.spatial.relations import DIRECTIONS, converse, direction, relation_words
from pipeline.text.configs import Config
from pipeline.text.items import room_items

CONFIGS = (Config(5, 4, 12), Config(6, 5, 9), Config(6, 9, 12), Config(4, 4, 9))


@pytest.fixture(scope="module")
def items():
    return [item for index in range(10) for config in CONFIGS for item in room_items(handmade_scene(index), config)]


def test_composition_is_what_points_on_a_grid_allow():
    cells = list(product(range(4), repeat=2))
    seen: dict[tuple[str, str], set[str]] = {}
    for a, b, c in product(cells, repeat=3):
        seen.setdefault((direction(a, b), direction(b, c)), set()).add(direction(a, c))
    for first, second in product(DIRECTIONS, repeat=2):
        assert compose_one(first, second) == seen[first, second], (first, second)


def test_composition_of_sets_unites_the_elements():
    assert compose_one("N", "N") == {"N"}
    assert compose_one("NW", "N") == {"NW"}
    assert compose_one("N", "S") == {"N", "O", "S"}
    assert compose_one("NE", "SW") == set(DIRECTIONS)
    assert compose({"N", "E"}, {"N"}) == {"N", "NE"}
    assert compose({"O"}, {"W", "SW"}) == {"W", "SW"}


def test_shortest_chain_uses_either_orientation_and_the_first_stated_pair_on_ties():
    facts = (Fact("a", "N", "b"), Fact("c", "E", "b"), Fact("a", "W", "d"), Fact("d", "S", "c"),
             Fact("b", "D2C", "c"), Fact("a", "NWR", None))  # distances and regions are no links
    assert shortest_chain(facts, "a", "c") == (Fact("a", "N", "b"), Fact("c", "E", "b"))
    steps = reasoning_path(facts, "a", "c")
    assert [s.reached for s in steps] == ["b", "c"]
    assert steps[-1].composed == ("NW",)  # a N of b, b W of c (the converse of "c E of b")
    assert shortest_chain(facts, "a", "e") == () and reasoning_path((), "a", "c") == ()


def ref(name: str) -> str:
    return name if re.search(r" \d+$", name) else f"the {name}"


def test_every_step_composes_and_is_written_as_composed(items):
    for item in items:
        if item.setting not in SETTINGS or not item.setting.startswith("o2"):
            assert item.path == () and item.path_text == "" and not item.path_decides
            continue
        here, composed = item.query.subject, None
        words = item.path_text
        for k, step in enumerate(item.path):
            assert here in (step.fact.subject, step.fact.object) and step.fact in item.facts
            relation = step.fact.relation if step.fact.subject == here else converse(step.fact.relation)
            there = step.fact.object if step.fact.subject == here else step.fact.subject
            composed = {relation} if composed is None else compose(composed, {relation})
            assert step.reached == there and set(step.composed) == composed
            assert list(step.composed) == [c for c in DIRECTIONS if c in composed]
            link = f"{ref(here)} is {relation_words(relation, item.view, 'phrase')} {ref(there)}"
            assert link.lower() in words.lower()
            if k:
                phrases = [relation_words(c, item.view, "phrase") for c in step.composed]
                either = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]
                said = (f"could be anywhere relative to {ref(there)}" if len(composed) == len(DIRECTIONS) else
                        f"{either} {ref(there)}")
                assert f"so {ref(item.query.subject)} {'' if 'anywhere' in said else 'is '}{said}" in words
            here = there
        assert here == item.query.object and len(item.path) == item.hops
        assert set(item.answer_set) <= composed  # the chain is sound: the checker only narrows it
        assert item.path_decides == (set(item.answer_set) == composed)


def test_a_bare_chain_is_decided_by_its_path(items):
    chains = [i for i in items if i.m == i.n - 1 and i.setting == "o2"]
    assert chains and all(i.path_decides for i in chains)
    shortcuts = [i for i in items if i.m > i.n - 1 and i.setting.startswith("o2")]
    assert any(not i.path_decides for i in shortcuts)  # a shortcut or a distance can narrow the answer
