import pytest

from pipeline.errors import RoomspaceError
from pipeline.spatial.facts import SETTINGS, Fact, described_pairs, hops, setting_facts
from pipeline.spatial.grid import Raster

# Four objects on a 12 x 12 grid: o1 in the north-west corner against the west wall, o2 in the
# centre, o3 south-east of it, o4 against the north wall.
RASTER = Raster(d=12, side=6.0, cells=((0, 10), (5, 5), (9, 2), (5, 11)), walls=(("west",), (), (), ("north",)))
NAMES = ["bed", "rug", "desk", "sofa"]


def test_settings():
    assert SETTINGS == ("layout", "tpp", "o2", "o2_d2", "o2_d3", "o2_layout", "o2_d2_layout", "o2_d3_layout")


def test_described_pairs_come_in_bands():
    assert described_pairs(5, 4) == ((0, 1), (1, 2), (2, 3), (3, 4))
    assert described_pairs(5, 7) == ((0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 3), (2, 4))
    assert described_pairs(4, 5) == ((0, 1), (1, 2), (2, 3), (0, 2), (1, 3))
    assert described_pairs(3, 2) == ((0, 1), (1, 2))


@pytest.mark.parametrize("n", range(3, 9))
def test_the_query_pair_is_never_described(n):
    largest = n * (n - 1) // 2 - 1
    pairs = described_pairs(n, largest)
    assert len(set(pairs)) == largest
    assert (0, n - 1) not in pairs
    assert all(a < b for a, b in pairs)


@pytest.mark.parametrize("n, m", [(5, 3), (5, 10), (4, 6), (2, 1), (2, 0), (3, 3), (1, 0)])
def test_described_pairs_out_of_range_are_rejected(n, m):
    with pytest.raises(RoomspaceError, match=rf"n={n}, m={m}"):
        described_pairs(n, m)


def test_hops_shrink_as_shortcuts_are_added():
    assert hops(5, described_pairs(5, 4)) == 4
    assert hops(5, described_pairs(5, 5)) == 3  # (0, 2) skips one hop
    assert hops(5, described_pairs(5, 6)) == 3
    assert hops(5, described_pairs(5, 7)) == 2  # (0, 2) and (2, 4): both of the second band
    assert hops(5, described_pairs(5, 9)) == 2
    assert hops(7, described_pairs(7, 6)) == 6
    assert hops(7, described_pairs(7, 20)) == 2


def test_hops_need_a_path():
    with pytest.raises(RoomspaceError, match="do not connect"):
        hops(4, [(0, 1), (2, 3)])


def test_layout_and_tpp_facts():
    assert setting_facts(RASTER, NAMES, [(0, 1)], "layout") == (
        Fact("bed", "NWR", None),
        Fact("rug", "CR", None),
        Fact("desk", "SER", None),
        Fact("sofa", "NR", None),
    )
    assert setting_facts(RASTER, NAMES, [(0, 1)], "tpp") == (
        Fact("bed", "NWR", None),
        Fact("bed", "TPP", None),
        Fact("rug", "CR", None),
        Fact("rug", "NTPP", None),
        Fact("desk", "SER", None),
        Fact("desk", "NTPP", None),
        Fact("sofa", "NR", None),
        Fact("sofa", "TPP", None),
    )


def test_direction_and_distance_facts_per_pair():
    pairs = described_pairs(4, 3)
    assert setting_facts(RASTER, NAMES, pairs, "o2") == (
        Fact("bed", "NW", "rug"),
        Fact("rug", "NW", "desk"),
        Fact("desk", "SE", "sofa"),
    )
    # bed-rug: offset (5, 5), dist^2 50: far on D2 (> 36), medium on D3 (32 < 50 <= 128)
    # rug-desk: (4, 3), 25: close on both; desk-sofa: (4, 9), 97: far on D2, medium on D3
    assert setting_facts(RASTER, NAMES, pairs, "o2_d2") == (
        Fact("bed", "NW", "rug"),
        Fact("bed", "D2F", "rug"),
        Fact("rug", "NW", "desk"),
        Fact("rug", "D2C", "desk"),
        Fact("desk", "SE", "sofa"),
        Fact("desk", "D2F", "sofa"),
    )
    d3 = setting_facts(RASTER, NAMES, pairs, "o2_d3")
    assert [f.relation for f in d3] == ["NW", "D3M", "NW", "D3C", "SE", "D3M"]


@pytest.mark.parametrize("setting", ["o2_layout", "o2_d2_layout", "o2_d3_layout"])
def test_layout_variants_add_every_region(setting):
    pairs = described_pairs(4, 3)
    facts = setting_facts(RASTER, NAMES, pairs, setting)
    without = setting_facts(RASTER, NAMES, pairs, setting.removesuffix("_layout"))
    layout = setting_facts(RASTER, NAMES, pairs, "layout")
    assert set(facts) == set(without) | set(layout)
    assert len(facts) == len(without) + len(layout)


def test_unknown_setting_and_mismatched_names_are_rejected():
    with pytest.raises(RoomspaceError, match="'o3'"):
        setting_facts(RASTER, NAMES, [(0, 1)], "o3")
    with pytest.raises(RoomspaceError, match="3 names for 4 objects"):
        setting_facts(RASTER, NAMES[:3], [(0, 1)], "o2")
    with pytest.raises(RoomspaceError, match=r"\(0, 4\)"):
        setting_facts(RASTER, NAMES, [(0, 4)], "o2")


# --- a map against its facts: facts_held ------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import random_facts, rasters  # noqa: E402

from pipeline.spatial.checker import answer_set  # noqa: E402
from pipeline.spatial.facts import facts_held  # noqa: E402
from pipeline.spatial.grid import GRID_SIZES  # noqa: E402
from pipeline.spatial.relations import direction  # noqa: E402


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_fact_holds_on_the_raster_it_was_read_from(setting):
    facts = setting_facts(RASTER, NAMES, described_pairs(4, 4), setting)
    assert facts and all(facts_held(facts, dict(zip(NAMES, RASTER.cells)), RASTER.d))


def test_a_moved_object_breaks_exactly_the_facts_about_it():
    facts = setting_facts(RASTER, NAMES, described_pairs(4, 3), "o2_d3_layout")
    cells = dict(zip(NAMES, RASTER.cells)) | {"desk": (0, 0)}  # from the south-east to the south-west corner
    broken = {fact for fact, ok in zip(facts, facts_held(facts, cells, RASTER.d)) if not ok}
    assert broken == {Fact("desk", "SER", None), Fact("rug", "NW", "desk"), Fact("rug", "D3C", "desk"),
                      Fact("desk", "SE", "sofa"), Fact("desk", "D3M", "sofa")}
    assert len(facts) == 10


def test_a_cell_off_the_grid_or_an_object_without_one_is_refused():
    facts = [Fact("bed", "NWR", None), Fact("rug", "N", "bed")]
    with pytest.raises(RoomspaceError, match=r"bed is in cell \(12, 0\), off the 12 x 12 grid"):
        facts_held(facts, {"bed": (12, 0), "rug": (0, 0)}, 12)
    with pytest.raises(RoomspaceError, match="names rug, which has no cell"):
        facts_held(facts, {"bed": (0, 11)}, 12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_map_keeping_every_fact_shows_a_relation_the_checker_allows(data):
    """facts_held reads a fact as the checker does: for the facts a drawn map keeps (of random, often
    contradictory ones), the checker's answer set holds the map's relation of the query pair."""
    d = data.draw(st.sampled_from(GRID_SIZES), label="d")
    n = data.draw(st.integers(2, 4), label="n")
    names = [f"v{k}" for k in range(n)]
    cells = dict(zip(names, data.draw(rasters(n, d)).cells))
    facts = data.draw(random_facts(names, max_facts=2 * n + 2))
    kept = [fact for fact, ok in zip(facts, facts_held(facts, cells, d)) if ok]
    assert direction(cells[names[0]], cells[names[-1]]) in answer_set(kept, names, (names[0], names[-1]), d)
