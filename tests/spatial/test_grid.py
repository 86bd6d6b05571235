import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import rasters

from pipeline.errors import RoomspaceError
from pipeline.spatial.grid import GRID_SIZES, Raster, is_border, rasterise

FAST = settings(deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])


def box(x: float, z: float, half: float = 0.2):
    return [(x - half, z - half), (x + half, z - half), (x + half, z + half), (x - half, z + half)]


def test_grid_sizes_are_9_and_12():
    assert GRID_SIZES == (9, 12)


@pytest.mark.parametrize("d", GRID_SIZES)
def test_cell_is_floor_of_coordinate_over_cell_size(d):
    side = 6.0
    s = side / d
    # Centres well inside, away from walls, so no snapping applies.
    points = [(1.5 * s, 2.5 * s), (3.2 * s, 1.1 * s), (d / 2 * s + 0.01, (d - 2.5) * s)]
    raster = rasterise(points, [box(x, z, 0.1) for x, z in points], side, d)
    assert raster.cells == tuple((math.floor(x / s), math.floor(z / s)) for x, z in points)
    assert raster.walls == ((), (), ())
    assert raster.tpp == (False, False, False)


def test_the_far_walls_map_to_the_last_cell_before_snapping():
    # A centre exactly on the north-east corner falls in cell (d-1, d-1) by the min(d-1, .) rule;
    # its footprint touches both walls, so snapping keeps it there.
    raster = rasterise([(6.0, 6.0)], [box(5.9, 5.9)], 6.0, 12)
    assert raster.cells == ((11, 11),)
    assert raster.walls == (("east", "north"),)


def test_tpp_object_moves_to_the_border_of_each_wall_it_touches():
    side, d = 6.0, 12
    centres = [(3.0, 0.3), (5.7, 3.0), (0.3, 5.7), (3.0, 5.95)]
    footprints = [box(3.0, 0.3, 0.25), box(5.7, 3.0, 0.25), box(0.3, 5.7, 0.25), box(3.0, 5.8, 0.15)]
    raster = rasterise(centres, footprints, side, d)
    assert raster.walls == (("south",), ("east",), ("north", "west"), ("north",))
    assert raster.cells == ((6, 0), (11, 6), (0, 11), (6, 11))
    assert raster.tpp == (True, True, True, True)


def test_ntpp_object_on_the_border_moves_one_cell_inward():
    side, d = 6.0, 12  # cells of 0.5 m; an object centred 0.3 m from a wall but 0.15 m clear of it
    centres = [(0.3, 3.0), (3.0, 5.7), (5.7, 0.3)]
    raster = rasterise(centres, [box(x, z, 0.14) for x, z in centres], side, d)
    assert raster.walls == ((), (), ())
    assert raster.cells == ((1, 6), (6, 10), (10, 1))


def test_object_spanning_the_room_keeps_the_border_nearer_its_centre():
    side, d = 5.0, 9
    span = [(0.05, 1.0), (4.95, 1.0), (4.95, 1.5), (0.05, 1.5)]
    raster = rasterise([(2.0, 1.25)], [span], side, d)
    assert raster.walls == (("east", "west"),)
    assert raster.cells == ((0, 2),)


@FAST
@given(st.integers(1, 7).flatmap(lambda n: rasters(n)))
def test_snapped_cells_satisfy_tpp_iff_border(raster: Raster):
    d = raster.d
    for (i, j), walls in zip(raster.cells, raster.walls):
        assert is_border((i, j), d) == bool(walls)
        # Each wall touched pins its coordinate to that border (either one when both opposite).
        assert i in _pinned(walls, "west", "east", i, d)
        assert j in _pinned(walls, "south", "north", j, d)


def _pinned(walls, low_wall, high_wall, value, d):
    allowed = {low_wall: {0}, high_wall: {d - 1}}
    touched = [allowed[w] for w in (low_wall, high_wall) if w in walls]
    return set.union(*touched) if touched else set(range(d))


def test_grid_size_other_than_9_or_12_is_rejected():
    with pytest.raises(RoomspaceError, match="d=10"):
        rasterise([(1.0, 1.0)], [box(1.0, 1.0)], 5.0, 10)


@pytest.mark.parametrize("centre", [(-0.01, 2.0), (2.0, 5.2), (5.000001, 5.0)])
def test_centre_outside_the_room_is_rejected_naming_object_and_coordinates(centre):
    inside = (2.0, 2.0)
    with pytest.raises(RoomspaceError, match=rf"object 1: centre \({centre[0]}, {centre[1]}\)"):
        rasterise([inside, centre], [box(*inside), box(*inside)], 5.0, 9)


def test_centre_on_a_wall_within_float_noise_is_accepted():
    raster = rasterise([(-1e-12, 5.0 + 1e-12)], [box(0.1, 4.9)], 5.0, 9)
    assert raster.cells == ((0, 8),)


def test_mismatched_inputs_are_rejected():
    with pytest.raises(RoomspaceError, match="2 centres but 1 footprints"):
        rasterise([(1.0, 1.0), (2.0, 2.0)], [box(1.0, 1.0)], 5.0, 9)
    with pytest.raises(RoomspaceError, match="object 0: a footprint"):
        rasterise([(1.0, 1.0)], [[(1.0, 1.0)]], 5.0, 9)
    with pytest.raises(RoomspaceError, match="side"):
        rasterise([(1.0, 1.0)], [box(1.0, 1.0)], 0.0, 9)
