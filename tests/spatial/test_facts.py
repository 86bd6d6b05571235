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
