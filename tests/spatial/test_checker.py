import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import random_facts, rasters

from pipeline.errors import RoomspaceError
from pipeline.spatial.checker import Answers, answer_set, answer_sets_together
from pipeline.spatial.facts import SETTINGS, Fact, described_pairs, setting_facts
from pipeline.spatial.grid import GRID_SIZES
from pipeline.spatial.relations import DIRECTIONS, converse, direction
from pipeline.testing.oracle import oracle_answer_set


def checks(examples: int):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def story(data, n: int, d: int, setting: str):
    """A random room's facts for one setting, the object names and the rasterised cells."""
    raster = data.draw(rasters(n, d))
    names = [f"o{k + 1}" for k in range(n)]
    if n >= 3:
        m = data.draw(st.integers(n - 1, n * (n - 1) // 2 - 1))
        pairs = described_pairs(n, m)
    else:
        pairs = ()  # two objects: the only pair is the query, never described
    return setting_facts(raster, names, pairs, setting), names, raster.cells


# --- the layout-only table (region of A by region of B), checked cell by cell --------------------------------------------

DESIGN_TABLE = """
| A \\ B | NW | N | NE | W | C | E | SW | S | SE |
| NW | * | SW,W,NW | SW,W,NW | N,NE,NW | NW | NW | N,NE,NW | NW | NW |
| N | NE,E,SE | * | SW,W,NW | NE | N,NE,NW | NW | NE | N,NE,NW | NW |
| NE | NE,E,SE | NE,E,SE | * | NE | NE | N,NE,NW | NE | NE | N,NE,NW |
| W | SE,S,SW | SW | SW | * | SW,W,NW | SW,W,NW | N,NE,NW | NW | NW |
| C | SE | SE,S,SW | SW | NE,E,SE | * | SW,W,NW | NE | N,NE,NW | NW |
| E | SE | SE | SE,S,SW | NE,E,SE | NE,E,SE | * | NE | NE | N,NE,NW |
| SW | SE,S,SW | SW | SW | SE,S,SW | SW | SW | * | SW,W,NW | SW,W,NW |
| S | SE | SE,S,SW | SW | SE | SE,S,SW | SW | NE,E,SE | * | SW,W,NW |
| SE | SE | SE | SE,S,SW | SE | SE | SE,S,SW | NE,E,SE | NE,E,SE | * |
"""


def design_table() -> list[tuple[str, str, frozenset[str]]]:
    """(region of A, region of B, answer) for all 81 entries, regions as layout codes (NW -> NWR)."""
    header, *rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in DESIGN_TABLE.strip().splitlines()]
    entries = []
    for row in rows:
        for b, cell in zip(header[1:], row[1:]):
            answer = frozenset(DIRECTIONS) if cell == "*" else frozenset(cell.split(","))
            entries.append((row[0] + "R", b + "R", answer))
    return entries


def test_design_table_has_81_entries():
    entries = design_table()
    assert len(entries) == 81
    assert len({(a, b) for a, b, _ in entries}) == 81


@pytest.mark.parametrize("d", GRID_SIZES)
@pytest.mark.parametrize("region_a, region_b, expected", design_table())
def test_layout_only_answers_reproduce_the_design_table(d, region_a, region_b, expected):
    facts = [Fact("A", region_a, None), Fact("B", region_b, None)]
    assert answer_set(facts, ["A", "B"], ("A", "B"), d) == expected


# --- agreement with the python-constraint oracle ---------------------------------------------

# The oracle refutes directions by exhaustive search, which grows fast with n when the facts
# have no regions to shrink the domains: the settings without them are checked at small n.
LARGEST_N = {
    ("o2", 9): 4, ("o2_d2", 9): 4, ("o2_d3", 9): 4,
    ("o2", 12): 3, ("o2_d2", 12): 3, ("o2_d3", 12): 3,
}  # fmt: skip


@pytest.mark.parametrize("d", GRID_SIZES)
@pytest.mark.parametrize("setting", SETTINGS)
@checks(20)
@given(data=st.data())
def test_checker_agrees_with_oracle_on_story_facts(setting, d, data):
    n = data.draw(st.integers(2, LARGEST_N.get((setting, d), 7)), label="n")
    facts, names, _ = story(data, n, d, setting)
    query = (names[0], names[-1])
    assert answer_set(facts, names, query, d) == oracle_answer_set(facts, names, query, d)


@pytest.mark.parametrize("d", GRID_SIZES)
@checks(100)
@given(data=st.data())
def test_checker_agrees_with_oracle_on_arbitrary_facts(d, data):
    n = data.draw(st.integers(2, 4), label="n")
    names = [f"v{k}" for k in range(n)]
    facts = data.draw(random_facts(names, max_facts=2 * n + 2))
    query = (names[0], names[-1])
    assert answer_set(facts, names, query, d) == oracle_answer_set(facts, names, query, d)


@checks(25)
@given(data=st.data())
def test_checker_agrees_with_oracle_when_every_object_is_placed(data):
    # Regions plus wall contact, directions and distances in one set, for larger n: the
    # regions keep the oracle quick, the rest couples the axes.
    d = data.draw(st.sampled_from(GRID_SIZES))
    n = data.draw(st.integers(4, 6))
    tpp, _, _ = story(data, n, d, "tpp")
    names = [f"o{k + 1}" for k in range(n)]
    relations = setting_facts(data.draw(rasters(n, d)), names, described_pairs(n, n - 1), "o2_d3")
    facts = tpp + relations  # two different rooms: often contradictory
    query = (names[0], names[-1])
    assert answer_set(facts, names, query, d) == oracle_answer_set(facts, names, query, d)


# --- the witness invariant ------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
@checks(60)
@given(data=st.data())
def test_the_rasterised_scene_is_always_a_witness(setting, data):
    d = data.draw(st.sampled_from(GRID_SIZES))
    n = data.draw(st.integers(2, 7), label="n")
    facts, names, cells = story(data, n, d, setting)
    answer = answer_set(facts, names, (names[0], names[-1]), d)
    assert direction(cells[0], cells[-1]) in answer
    assert direction(cells[0], cells[-1]) in answer_set(facts, names, (names[0], names[-1]), d)


# --- hand-made cases ------------------------------------------------------------------------


def test_directions_compose_per_axis():
    facts = [Fact("a", "N", "b"), Fact("b", "NE", "c")]
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 12) == {"NE"}
    facts = [Fact("a", "NE", "b"), Fact("c", "NE", "b")]
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 9) == frozenset(DIRECTIONS)
    facts = [Fact("a", "E", "b"), Fact("b", "SE", "c")]
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 9) == {"SE"}


def test_a_cycle_of_directions_is_unsatisfiable():
    facts = [Fact("a", "N", "b"), Fact("b", "N", "c"), Fact("c", "N", "a")]
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 12) == frozenset()
    assert "N" not in answer_set(facts, ["a", "b", "c"], ("a", "c"), 12)


def test_tpp_couples_the_axes():
    # In the middle of the north band, the only wall within reach is the north wall; an
    # NTPP object in the same band is strictly south of it. Reasoning on each axis alone
    # would also allow E, W, O, SE, S, SW.
    facts = [Fact("a", "NR", None), Fact("a", "TPP", None), Fact("b", "NR", None), Fact("b", "NTPP", None)]
    assert answer_set(facts, ["a", "b"], ("a", "b"), 9) == {"N", "NE", "NW"}
    assert answer_set([Fact("a", "CR", None), Fact("a", "TPP", None)], ["a", "b"], ("a", "b"), 12) == frozenset()


def test_distance_limits_directions():
    # d = 9: a in the west middle (j 3..5), b in the south-west (j 0..2), both in columns
    # 0..2. Far on D2 means dist^2 >= 21, which needs a 5-row gap: a is north of b.
    facts = [Fact("a", "WR", None), Fact("b", "SWR", None), Fact("a", "D2F", "b")]
    assert answer_set(facts, ["a", "b"], ("a", "b"), 9) == {"N", "NE", "NW"}
    # Two D3 close hops span at most 2 sqrt(32) = sqrt(128) cells: never D3 far.
    facts = [Fact("a", "D3C", "b"), Fact("b", "D3C", "c"), Fact("a", "SWR", None), Fact("c", "NER", None)]
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 12) == {"SW"}
    facts.append(Fact("a", "D3F", "c"))
    assert answer_set(facts, ["a", "b", "c"], ("a", "c"), 12) == frozenset()


def test_a_fact_on_the_query_pair_is_honoured_and_any_fact_order_gives_one_answer():
    facts = [Fact("a", "N", "b"), Fact("b", "NW", "a"), Fact("c", "W", "a")]
    assert answer_set(facts, ["a", "b", "c"], ("a", "b"), 9) == frozenset()
    facts = [Fact("b", "SW", "a"), Fact("a", "D3C", "b")]
    assert answer_set(facts, ["a", "b"], ("a", "b"), 12) == {"NE"}
    assert answer_set(list(reversed(facts)), ("a", "b"), ("a", "b"), 12) == {"NE"}
    assert answer_set(facts, ["a", "b"], ("b", "a"), 12) == {"SW"}


# --- bad input ------------------------------------------------------------------------------

NAMES = ["a", "b", "c"]


@pytest.mark.parametrize(
    "facts, variables, query, d, culprit",
    [
        ([Fact("a", "NNE", "b")], NAMES, ("a", "c"), 12, "'NNE'"),
        ([Fact("x", "N", "b")], NAMES, ("a", "c"), 12, "'x'"),
        ([Fact("a", "N", "y")], NAMES, ("a", "c"), 12, "'y'"),
        ([Fact("z", "CR", None)], NAMES, ("a", "c"), 12, "'z'"),
        ([Fact("a", "N", "a")], NAMES, ("a", "c"), 12, "'a' to itself"),
        ([Fact("a", "CR", "b")], NAMES, ("a", "c"), 12, "'CR' describes one object"),
        ([Fact("a", "N", None)], NAMES, ("a", "c"), 12, "None"),
        ([], NAMES, ("a", "q"), 12, "'q'"),
        ([], NAMES, ("a", "a"), 12, "'a' to itself"),
        ([], ["a", "b", "a"], ("a", "b"), 12, "twice"),
        ([], NAMES, ("a", "c"), 10, "d=10"),
    ],
)
def test_bad_input_is_rejected_naming_the_culprit(facts, variables, query, d, culprit):
    with pytest.raises(RoomspaceError, match=culprit.replace("(", r"\(")):
        answer_set(facts, variables, query, d)


def test_oracle_rejects_bad_input_too():
    with pytest.raises(RoomspaceError, match="d=10"):
        oracle_answer_set([], NAMES, ("a", "c"), 10)
    with pytest.raises(RoomspaceError, match="'NNE'"):
        oracle_answer_set([Fact("a", "NNE", "b")], NAMES, ("a", "c"), 9)


@pytest.mark.parametrize("d", GRID_SIZES)
@checks(30)
@given(data=st.data())
def test_answers_bounded_by_other_fact_sets_equal_plain_answers(d, data):
    """Answers answers a room's configurations, more described pairs first, each bounded by the
    answers of fact sets that contain it or that it contains; each must still be what the checker
    says without that help, in whichever orientation a pair is stated."""
    n = data.draw(st.integers(3, 6), label="n")
    raster = data.draw(rasters(n, d))
    names = [f"o{k + 1}" for k in range(n)]
    query = (names[0], names[-1])
    known = Answers(names, query, d)
    for m in range(n * (n - 1) // 2 - 1, n - 2, -1):
        settings_facts = {}
        for setting in SETTINGS:
            facts = setting_facts(raster, names, described_pairs(n, m), setting)
            if data.draw(st.booleans(), label="stated the other way"):
                facts = tuple(Fact(f.object, converse(f.relation), f.subject) if f.object else f for f in facts)
            settings_facts[setting] = facts
        answers = known.answer_sets(settings_facts)
        assert answers == {s: answer_set(facts, names, query, d) for s, facts in settings_facts.items()}


@pytest.mark.parametrize("d", GRID_SIZES)
@checks(30)
@given(data=st.data())
def test_pairs_answered_together_equal_each_pair_answered_alone(d, data):
    """answer_sets_together answers several pairs of one room's fact sets at once, each solution found
    for one pair settling the others' directions in it, some pairs already known from fact sets asked
    before (the paper's pair of a balanced configuration); each pair's answers must be what the
    checker says of it alone. Contradictory facts (two rooms' at once) answer nothing for every pair."""
    n = data.draw(st.integers(3, 6), label="n")
    raster = data.draw(rasters(n, d))
    names = [f"o{k + 1}" for k in range(n)]
    m = data.draw(st.integers(n - 1, n * (n - 1) // 2 - 1), label="m")
    settings_facts = {setting: setting_facts(raster, names, described_pairs(n, m), setting) for setting in SETTINGS}
    if data.draw(st.booleans(), label="another room's tpp facts too"):
        other = setting_facts(data.draw(rasters(n, d)), names, described_pairs(n, n - 1), "tpp")
        settings_facts = {setting: facts + other for setting, facts in settings_facts.items()}
    pairs = data.draw(st.lists(st.sampled_from([(a, b) for a in names for b in names if a != b]), min_size=1,
                               max_size=6, unique=True), label="pairs")
    answers = [Answers(names, pair, d) for pair in pairs]
    for known in data.draw(st.lists(st.sampled_from(answers), unique_by=id), label="asked before"):
        known.answer_sets(settings_facts)
    together = answer_sets_together(answers, settings_facts)
    assert together == [{s: answer_set(facts, names, pair, d) for s, facts in settings_facts.items()}
                        for pair in pairs]


@pytest.mark.parametrize("d", GRID_SIZES)
@checks(60)
@given(data=st.data())
def test_pairs_answered_together_on_arbitrary_facts(d, data):
    """As above, on arbitrary facts: objects no fact relates to another (any cell of their domains
    does in a solution), distances and TPP on any pair."""
    n = data.draw(st.integers(2, 5), label="n")
    names = [f"v{k}" for k in range(n)]
    fact_sets = {k: tuple(data.draw(random_facts(names, max_facts=2 * n + 2))) for k in range(2)}
    pairs = [(a, b) for a in names for b in names if a != b]
    together = answer_sets_together([Answers(names, pair, d) for pair in pairs], fact_sets)
    assert together == [{k: answer_set(facts, names, pair, d) for k, facts in fact_sets.items()} for pair in pairs]
