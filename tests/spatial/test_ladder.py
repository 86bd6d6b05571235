"""The bounded reasoners: each sound (its set holds the exact one), each within the one below, and
each deciding where its reasoning suffices and not where it does not."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import random_facts, rasters
from test_checker import checks, story

from pipeline.errors import RoomspaceError
from pipeline.spatial.checker import (answer_set, holding, propagated_answer, propagated_holding, refutation_effort,
                                      settled_claims, settled_pairs, split_refutes)
from pipeline.spatial.facts import HARD_SETTINGS, SETTINGS, Fact, described_pairs, hard_story_facts, raster_facts
from pipeline.spatial.grid import GRID_SIZES
from pipeline.spatial.ladder import chain_answer, claim_rung, rung, stated_answer, story_variables
from pipeline.spatial.relations import DIRECTIONS, DISTANCES, REGIONS, WALL_CONTACT, converse
from pipeline.testing.oracle import oracle_answer_set


def hard_story(data, names, d, setting):
    """A hard setting's facts of a random room of these objects, m drawn."""
    n = len(names)
    pairs = described_pairs(n, data.draw(st.integers(n - 1, n * (n - 1) // 2 - 1), label="m"))
    return hard_story_facts(raster_facts(data.draw(rasters(n, d)), names), pairs, n)[setting]


def assert_nested(facts, names, query, d):
    exact = answer_set(facts, names, query, d)
    stated, chain = stated_answer(facts, query, d), chain_answer(facts, query, d)
    local = propagated_answer(facts, names, query, d)
    assert exact <= local <= chain <= stated, (facts, query)
    found = rung(facts, query, exact, d)
    sets = (*map(frozenset, (found.bounded.stated, found.bounded.chain, found.bounded.local)), exact)
    assert sets == (stated, chain, local, exact)
    assert found.level == next(k for k, held in enumerate(sets) if held == exact)
    assert (found.effort > 0) == (found.level == 3)
    return found


@pytest.mark.parametrize("setting", SETTINGS + HARD_SETTINGS)
@checks(150)
@given(data=st.data())
def test_every_reasoner_holds_the_exact_answer_and_the_next_ones_on_stories(setting, data):
    d = data.draw(st.sampled_from(GRID_SIZES))
    # the paper's settings up to n = 6: at n = 7 some o2_d2 stories take the checker (the reference) half a minute
    n = data.draw(st.integers(3, 8 if setting in HARD_SETTINGS else 6), label="n")
    if setting in HARD_SETTINGS:
        names = [f"o{k + 1}" for k in range(n)]
        facts = hard_story(data, names, d, setting)
    else:
        facts, names, _ = story(data, n, d, setting)
    query = tuple(data.draw(st.permutations(names))[:2])
    assert_nested(facts, names, query, d)


@checks(300)
@given(data=st.data())
def test_every_reasoner_holds_the_exact_answer_on_arbitrary_facts(data):
    # Arbitrary codes: often contradictory (every set empty) or unsatisfiable only through a third object.
    d = data.draw(st.sampled_from(GRID_SIZES))
    n = data.draw(st.integers(2, 5), label="n")
    names = [f"v{k}" for k in range(n)]
    facts = data.draw(random_facts(names, max_facts=2 * n + 2))
    assert_nested(facts, names, (names[0], names[-1]), d)


@checks(40)
@given(data=st.data())
def test_a_claim_holds_with_a_story_exactly_when_the_oracle_finds_a_layout_for_both(data):
    d = data.draw(st.sampled_from(GRID_SIZES))
    n = data.draw(st.integers(3, 4), label="n")
    names = [f"o{k + 1}" for k in range(n)]
    if data.draw(st.booleans(), label="hard story"):
        facts = hard_story(data, names, d, HARD_SETTINGS[0])
    else:
        facts = data.draw(random_facts(names, max_facts=2 * n))
    every = [Fact(a, code, None) for a in names for code in REGIONS + WALL_CONTACT]
    every += [Fact(a, code, b) for a in names for b in names if a != b for code in DISTANCES]
    claims = data.draw(st.lists(st.sampled_from(every), min_size=1, max_size=4, unique=True), label="claims")
    exact, local = holding(facts, names, claims, d), propagated_holding(facts, names, claims, d)
    for claim, held, kept in zip(claims, exact, local):
        assert held == bool(oracle_answer_set([*facts, claim], names, (names[0], names[1]), d)), claim
        assert kept or not held, claim  # R2 never rules out a claim that holds
        if kept and not held:  # only search refutes it: the search that does raises were there a layout
            refutation_effort(facts, names, (claim.subject, claim.object), {claim.relation}, d)


@checks(20)
@given(data=st.data())
def test_a_story_settled_together_gives_each_pair_and_claim_what_each_reasoner_gives_alone(data):
    # settled_pairs and settled_claims share one network, its closure and every solution found among all
    # the questions of a story: each answer must still be the one its own function finds alone
    d = data.draw(st.sampled_from(GRID_SIZES))
    if data.draw(st.integers(0, 3), label="hard story") > 0:  # where pairs only search answers are found
        names = [f"o{k + 1}" for k in range(data.draw(st.integers(6, 8), label="n"))]
        facts = hard_story(data, names, d, data.draw(st.sampled_from(HARD_SETTINGS)))
    else:
        names = [f"o{k + 1}" for k in range(data.draw(st.integers(2, 5), label="n"))]
        facts = data.draw(random_facts(names, max_facts=2 * len(names)))
    pairs = [(a, b) for a in names for b in names if a < b]
    for (a, b), settled in zip(pairs, settled_pairs(facts, names, pairs, d)):
        exact, local = answer_set(facts, names, (a, b), d), propagated_answer(facts, names, (a, b), d)
        assert (settled.exact, settled.local) == (exact, local), (facts, a, b)
        assert settled.effort == refutation_effort(facts, names, (a, b), local - exact, d)
        if settled.effort:  # the pair the other way round: the converse directions, refuted by the same search
            other_way = dataclasses.replace(settled, exact=converse_set(exact), local=converse_set(local))
            assert rung(facts, (b, a), other_way.exact, d, settled=other_way) == rung(facts, (b, a), other_way.exact, d)
    claims = [Fact(a, code, None) for a in names for code in REGIONS + WALL_CONTACT]
    claims += [Fact(a, code, b) for a, b in pairs for code in DISTANCES]
    local = propagated_holding(facts, names, claims, d)
    kept = [claim for claim, held in zip(claims, local) if held]  # searching the others can take minutes
    exact = dict(zip(kept, holding(facts, names, kept, d)))
    assert [(held.holds, held.local) for held in settled_claims(facts, names, claims, d)] == [
        (exact.get(claim, False), held) for claim, held in zip(claims, local)]


def converse_set(codes):
    return frozenset(map(converse, codes))


def test_claim_rung_grades_a_regions_question_by_the_least_reasoner_that_gives_it():
    # b is far from a on a 9 x 9 grid, a in the centre: b cannot be in the centre, which R0 (no fact of b
    # alone) cannot see, and arc consistency over cells can
    facts = [Fact("a", "CR", None), Fact("b", "D2F", "a")]
    exact = [code for code, held in zip(REGIONS, holding(facts, ["a", "b"], [Fact("b", r, None) for r in REGIONS], 9))
             if held]
    found = claim_rung(facts, "b", None, REGIONS, exact, 9)
    assert "CR" not in exact and found.bounded.stated == REGIONS and found.level == 2
    assert found.bounded.local == tuple(exact) and found.effort == 0


def test_the_asked_objects_own_facts_decide_at_level_0():
    facts = [Fact("a", "NWR", None), Fact("b", "SER", None), Fact("a", "N", "c"), Fact("c", "NW", "b")]
    found = rung(facts, ("a", "b"), answer_set(facts, ["a", "b", "c"], ("a", "b"), 9), 9)
    assert found.level == 0 and found.bounded.stated == ("NW",)


def test_a_chain_decides_what_the_asked_objects_facts_do_not():
    facts = [Fact("a", "N", "c"), Fact("c", "NE", "b")]
    assert stated_answer(facts, ("a", "b"), 9) == frozenset(DIRECTIONS)
    found = rung(facts, ("a", "b"), answer_set(facts, ["a", "b", "c"], ("a", "b"), 9), 9)
    assert found.level == 1 and found.bounded.chain == ("NE",)


def test_the_grid_edges_decide_what_no_chain_does():
    # Two objects west of a and of b push both to the last column of the west band (i = 2 when d = 9):
    # a and b share a column. No chain links a to b; their regions leave SE, S, SW.
    facts = [Fact("a", "SWR", None), Fact("b", "NWR", None), Fact("c", "W", "a"), Fact("e", "W", "c"),
             Fact("f", "W", "b"), Fact("g", "W", "f")]
    query = ("a", "b")
    assert chain_answer(facts, query, 9) == {"SE", "S", "SW"}
    found = rung(facts, query, answer_set(facts, story_variables(facts, query), query, 9), 9)
    assert found.level == 2 and found.bounded.local == ("S",)


def test_a_far_fact_pushes_objects_to_the_edges_without_search():
    # d = 9: c and b in the centre band (cells 3-5 both ways), b straight north of c, so c's row is 3 or 4.
    # a far from c (more than 4.5 cells) in c's column would need row 8 or below 0: a cannot be south of
    # b (nor share its cell). Nothing relates a to b but through c, and no chain composes a distance.
    facts = [Fact("c", "CR", None), Fact("a", "D2F", "c"), Fact("b", "N", "c"), Fact("b", "CR", None)]
    query, names = ("a", "b"), ["a", "b", "c"]
    exact = answer_set(facts, names, query, 9)
    assert exact == frozenset(DIRECTIONS) - {"S", "O"}
    assert chain_answer(facts, query, 9) == frozenset(DIRECTIONS)
    assert propagated_answer([f for f in facts if f.relation != "D2F"], names, query, 9) == frozenset(DIRECTIONS)
    assert rung(facts, query, exact, 9).level == 2


def test_path_consistency_over_distances_decides_what_arc_consistency_does_not():
    # a is close to b and c is far from b: a and c cannot share a cell. Arc consistency keeps a cell of c
    # for every cell of a one at a time; the triple's closure rules O out.
    facts = [Fact("a", "SW", "b"), Fact("a", "D2C", "b"), Fact("b", "NE", "c"), Fact("b", "D2F", "c")]
    query = ("c", "a")
    exact = answer_set(facts, ["a", "b", "c"], query, 9)
    assert "O" not in exact
    assert "O" not in propagated_answer(facts, ["a", "b", "c"], query, 9)
    assert rung(facts, query, exact, 9).level == 2


def test_only_search_decides_a_level_3_question():
    # Found among random stories of d = 12 (o2_d3 facts, five objects): R2 leaves SW open, which only
    # search refutes.
    facts = [Fact("o1", "W", "o2"), Fact("o1", "D3C", "o2"), Fact("o2", "E", "o3"), Fact("o2", "D3M", "o3"),
             Fact("o3", "SW", "o4"), Fact("o3", "D3C", "o4"), Fact("o4", "NW", "o5"), Fact("o4", "D3C", "o5"),
             Fact("o1", "E", "o3"), Fact("o1", "D3M", "o3"), Fact("o2", "SE", "o4"), Fact("o2", "D3M", "o4"),
             Fact("o3", "SW", "o5"), Fact("o3", "D3M", "o5")]
    names, query = [f"o{k}" for k in range(1, 6)], ("o2", "o5")
    exact = answer_set(facts, names, query, 12)
    assert exact == {"S", "SE"}
    found = rung(facts, query, exact, 12)
    assert found.level == 3 and found.bounded.local == ("SE", "S", "SW")
    # The count of a search in its fixed order (smallest domain first, least value first): the Python
    # loops gave 36 too, before they were compiled (pipeline.spatial.propagation).
    assert found.effort == refutation_effort(facts, names, query, {"SW"}, 12) == 36
    # One case split settles it: with o2 SW of o5, every cell of some object leaves a wipe-out.
    assert split_refutes(facts, names, query, "SW", 12)


def test_one_case_split_does_not_settle_what_needs_two():
    # Found among random stories of d = 9 (D2 distances, a direction): o1 cannot be S of o3, which R2 keeps,
    # and no single object's cells, each tried alone with arc consistency, refute.
    facts = [Fact("o1", "D2F", "o4"), Fact("o1", "D2C", "o5"), Fact("o1", "D2F", "o6"), Fact("o2", "D2C", "o3"),
             Fact("o2", "N", "o4"), Fact("o2", "D2C", "o5"), Fact("o2", "D2C", "o6"), Fact("o3", "D2C", "o5"),
             Fact("o3", "D2C", "o6"), Fact("o4", "D2F", "o5"), Fact("o4", "D2C", "o6")]
    names, query = [f"o{k}" for k in range(1, 7)], ("o1", "o3")
    exact = answer_set(facts, names, query, 9)
    assert "S" not in exact and "S" in propagated_answer(facts, names, query, 9)
    assert oracle_answer_set(facts, names, query, 9) == exact
    assert not split_refutes(facts, names, query, "S", 9)


@checks(40)
@given(data=st.data())
def test_one_case_split_never_refutes_a_relation_that_can_hold(data):
    d = data.draw(st.sampled_from(GRID_SIZES))
    names = [f"o{k + 1}" for k in range(data.draw(st.integers(3, 8), label="n"))]
    facts = hard_story(data, names, d, data.draw(st.sampled_from(HARD_SETTINGS)))
    query = tuple(data.draw(st.permutations(names))[:2])
    exact = answer_set(facts, names, query, d)
    assert not split_refutes(facts, names, query, data.draw(st.sampled_from(sorted(exact))), d)


def test_refuting_a_possible_direction_is_an_error():
    facts = [Fact("a", "N", "b")]
    with pytest.raises(RoomspaceError, match="not refuted"):
        refutation_effort(facts, ["a", "b"], ("a", "b"), {"N"}, 9)
