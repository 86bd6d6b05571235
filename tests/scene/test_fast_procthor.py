"""pipeline.scene.procthor.fast_procthor must give ProcTHOR the same values, in the same order, with the same random draws."""

import contextlib
import copy
import json
import random
import warnings
from random import Random
from types import SimpleNamespace

import numpy as np
import pandas as pd
import procthor.databases as databases
import procthor.generation.objects as objects
import procthor.generation.wall_objects as wall_objects
import pytest
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.generation.objects import OrthogonalPolygon, ProceduralRoom
from shapely.geometry import LineString, box

from pipeline.scene.procthor.fast_procthor import installed
from pipeline.scene.procthor.fast_procthor.asset_groups import (STOCK_SET_DIMENSIONS, STOCK_SPAWNABLE_ASSET_GROUP_INFO,
                                                              set_dimensions, spawnable_asset_group_info)
from pipeline.scene.procthor.fast_procthor import rectangles
from pipeline.scene.procthor.fast_procthor.rectangles import (STOCK_JOIN, STOCK_SAMPLE_NEXT_RECTANGLE,
                                                     join_neighboring_rectangles, sample_next_rectangle)
from pipeline.scene.procthor.fast_procthor.rows import KeptRows
from pipeline.scene.procthor.fast_procthor.walls import STOCK_GET_ASSETS_DF, get_assets_df, get_line_string_df_map
from pipeline.scene.procthor.offline_thor import OfflineController


def free_space(seed: int, holes: int) -> OrthogonalPolygon:
    """A room with furniture-like boxes cut out: the shape ProcTHOR merges rectangles over."""
    rng = Random(seed)
    room = box(0, 0, 6, 6)
    for _ in range(holes):
        x, z = round(rng.uniform(0, 5), 2), round(rng.uniform(0, 5), 2)
        room = room.difference(box(x, z, round(x + rng.uniform(0.3, 1.5), 2), round(z + rng.uniform(0.3, 1.5), 2)))
    return OrthogonalPolygon(room)


def merge_rounds(current: set[tuple], join) -> list[list[tuple]]:
    """Every round of get_all_rectangles' loop, as the ordered list its set iterates in."""
    rounds = []
    while True:
        candidates = join(None, current)
        rounds.append(list(candidates))
        merged = current | candidates
        if len(merged) == len(current):
            return rounds
        current = merged


@pytest.mark.parametrize("seed, holes", [(s, 1 + s % 4) for s in range(20)])
def test_same_rectangles_in_the_same_order(seed, holes):
    polygon = free_space(seed, holes)
    rects = polygon.get_neighboring_rectangles()
    assert merge_rounds(rects, join_neighboring_rectangles) == merge_rounds(rects, STOCK_JOIN)


def test_merged_rectangles_named_by_their_rank_past_the_dense_numbering(monkeypatch):
    """Past DENSE_RECTANGLES the merged rectangles are numbered by np.unique before their first visits are found:
    the same rounds."""
    monkeypatch.setattr(rectangles, "DENSE_RECTANGLES", 0)
    polygon = free_space(5, 3)
    rects = polygon.get_neighboring_rectangles()
    assert merge_rounds(rects, join_neighboring_rectangles) == merge_rounds(rects, STOCK_JOIN)


@pytest.mark.parametrize("seed, holes", [(s, 1 + s % 3) for s in range(8)])
def test_all_rectangles_stop_at_the_count_of_the_grid_and_match_stock(seed, holes):
    """The merging ends with every rectangle of whole inside cells: counted from the grid, that count is the
    size of stock's result, so the fast loop skips stock's last round (which adds nothing) and returns the same set."""
    polygon = free_space(seed, holes)
    stock = polygon.get_all_rectangles()
    assert rectangles._grid_rectangles(rectangles._neighboring(polygon)[2]) == len(stock)
    rectangles._all_rectangles.clear()
    with installed():
        fast = polygon.get_all_rectangles()
    assert repr(list(fast)) == repr(list(stock))


def largest_on_the_grid(polygon: OrthogonalPolygon) -> tuple | None:
    return rectangles.UnmadeRectangles(polygon, rectangles._neighboring(polygon)[2]).largest()


def test_the_largest_rectangle_is_the_one_stock_picks():
    """The agent's pose asks for the largest rectangle: stock's pick from the whole set, found on the grid
    when one rectangle alone is largest (most rooms here), with no random draw."""
    found_on_the_grid = 0
    for seed in range(12):
        polygon = free_space(seed, 1 + seed % 3)
        found_on_the_grid += largest_on_the_grid(polygon) is not None
        stock = STOCK_SAMPLE_NEXT_RECTANGLE(SimpleNamespace(open_polygon=polygon), choose_largest_rectangle=True)
        random_state = random.getstate()
        fast = sample_next_rectangle(SimpleNamespace(open_polygon=polygon), choose_largest_rectangle=True)
        assert repr(fast) == repr(stock) and random.getstate() == random_state
    assert found_on_the_grid >= 8


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("read_between", [False, True])
def test_a_room_samples_the_rectangles_stock_samples_and_keeps_the_same_set(read_between):
    """A room's picks as add_floor_objects makes them (one of new rectangles, then cached ones, each after
    removing the last pick), the set kept and the random state: stock's. The largest found on the grid
    (the kept set made when used: at once when read between, else only at the end) and drawn by area
    (stock's own code) both run."""
    paths = []

    def spied(self):
        found = STOCK_LARGEST(self)
        paths.append("grid" if found is not None else "tie")
        return found

    def stock_ran(*args):
        paths.append("stock")
        return STOCK_SAMPLE_NEXT_RECTANGLE(*args)

    def sampled(seed: int) -> list:
        random.seed(seed)
        room = ProceduralRoom(polygon=free_space(seed, 1 + seed % 2).polygon, room_type="Bedroom", room_id=2,
                              split="train", door_polygons=[], controller=OfflineController())
        out = []
        for cached in (False, True, True, True, False, True):
            if cached:
                room.last_rectangles.remove(out[-1][0])
            rect = room.sample_next_rectangle(cache_rectangles=cached)
            out.append((rect, repr(list(room.last_rectangles)) if read_between else None, random.getstate()))
        return out + [repr(list(room.last_rectangles))]

    for seed in range(10):
        stock = sampled(seed)
        with installed(), pytest.MonkeyPatch.context() as patch:
            patch.setattr(rectangles.UnmadeRectangles, "largest", spied)
            patch.setattr(rectangles, "STOCK_SAMPLE_NEXT_RECTANGLE", stock_ran)
            assert sampled(seed) == stock, f"seed {seed}"
    assert paths.count("grid") >= 12 and paths.count("stock") >= 5  # the largest found on the grid, and stock's picks


STOCK_LARGEST = rectangles.UnmadeRectangles.largest


def test_tied_largest_rectangles_are_left_to_stock():
    """Two rectangles of the largest area: stock's pick is the first in its set's order, so stock picks."""
    polygon = OrthogonalPolygon(box(0, 0, 6, 6).difference(box(2.5, 0, 3.5, 6)))
    assert largest_on_the_grid(polygon) is None
    stock_room, room = SimpleNamespace(open_polygon=polygon), SimpleNamespace(open_polygon=polygon)
    stock = STOCK_SAMPLE_NEXT_RECTANGLE(stock_room, choose_largest_rectangle=True)
    assert sample_next_rectangle(room, choose_largest_rectangle=True) == stock
    assert stock in {(0.0, 0.0, 2.5, 6.0), (3.5, 0.0, 6.0, 6.0)}
    assert repr(list(room.last_rectangles)) == repr(list(stock_room.last_rectangles))  # the set kept is stock's


def test_rooms_are_coloured_as_stock_colours_them():
    """No room, no colour (every one-room house); rooms with neighbours are left to stock's solver."""
    import networkx as nx
    from pipeline.scene.procthor.fast_procthor.layers import STOCK_FOUR_COLOR_GRAPH, four_color_graph

    assert four_color_graph(nx.Graph()) == STOCK_FOUR_COLOR_GRAPH(nx.Graph()) == {}
    rooms = nx.cycle_graph([-1, 2, 3, 4, 5])
    assert four_color_graph(rooms) == STOCK_FOUR_COLOR_GRAPH(rooms) and len(four_color_graph(rooms)) == 5


def test_unmade_rectangles_are_removed_as_a_set_removes_them():
    polygon = free_space(2, 2)
    made = polygon.get_all_rectangles()
    unmade = rectangles.UnmadeRectangles(polygon, rectangles._neighboring(polygon)[2])
    first, second = list(made)[:2]
    for rect in (first, second):
        made.remove(rect)
        unmade.remove(rect)
    for absent in (first, (0.0, 0.0, 6.0, 6.0), (0.0, 0.0, 0.5, 0.25)):
        with pytest.raises(KeyError):
            unmade.remove(absent)
    assert not unmade.is_made() and repr(list(unmade)) == repr(list(made)) and len(unmade) == len(made)


def test_points_inside_as_stock_finds_them():
    """Inside, outside, on an edge and at a corner of rooms with holes, and a hair either side of them."""
    stock = OrthogonalPolygon.is_point_inside
    for seed in range(6):
        polygon = free_space(seed, 1 + seed % 3)
        xs, zs = polygon.unique_xs, polygon.unique_zs
        points = [(x + dx, z + dz) for x in xs for z in zs for dx in (-1e-3, 0.0, 1e-3) for dz in (-1e-3, 0.0, 1e-3)]
        answers = [rectangles.is_point_inside(polygon, point) for point in points]
        assert answers == [stock(polygon, point) for point in points]
        assert all(type(answer) is bool for answer in answers) and any(answers) and not all(answers)


def test_annotations_read_once_as_stock_tests_them():
    from procthor.databases import placement_annotations

    from pipeline.scene.procthor.fast_procthor.floor_assets import _can_spawn_standalone, _multiple_per_room

    types = placement_annotations.index.tolist()
    assert len(types) > 50
    assert [_multiple_per_room(t) for t in types] == [
        bool(placement_annotations.loc[t]["multiplePerRoom"]) for t in types]
    assert {_multiple_per_room(t) for t in types} == {True, False}
    for room_type in ("Kitchen", "LivingRoom", "Bedroom", "Bathroom"):
        stock = [bool(placement_annotations[placement_annotations.index == t][f"in{room_type}s"].iloc[0] > 0)
                 for t in types]
        assert [_can_spawn_standalone(room_type, t) for t in types] == stock and len(set(stock)) == 2


def test_means_are_the_statistics_means():
    """Floats of every magnitude and sign, exact zeros, sums that round, tiny and huge values, other counts and
    types: the same numbers, of the same types, as statistics.mean gives."""
    import statistics

    from pipeline.scene.procthor.fast_procthor.floor_assets import mean

    rng = Random(3)
    cases = [[rng.uniform(-10, 10) for _ in range(count)] for count in (1, 2, 4, 8) for _ in range(2000)]
    cases += [[rng.choice([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, 5e-324]) for _ in range(4)] for _ in range(2000)]
    cases += [[-0.0] * 4, [0.0, -0.0, 1.5, -1.5], [1e308, 1e308, -1e308, 1e308], [1e308] * 4, [5e-324] * 4,
              [2.2e-308, 1e-320, 0.0, 0.0], [1.0, 2.0, 3.0], [1, 2, 3, 4], [1, 2.5, 3, 4], [float("nan")] * 4,
              [float("inf"), 1.0, 2.0, 3.0], [np.float64(0.1)] * 4]
    for values in cases:
        expected = statistics.mean(values)
        assert repr(mean(iter(values))) == repr(expected) and type(mean(values)) is type(expected), values


def test_cells_inside_are_found_once_per_polygon_and_again_once_it_changes():
    """An unchanged polygon asked again: the same cells in the same order in a new set, the same area, no new
    GEOS question; a polygon cut since: its own cells, as stock finds them."""
    polygon = free_space(4, 3)
    first, first_area = rectangles.get_neighboring_rectangles(polygon), polygon.area
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rectangles.shapely, "contains_xy", None)  # asking GEOS again would fail
        again = rectangles.get_neighboring_rectangles(polygon)
        assert again is not first and repr(list(again)) == repr(list(first)) and polygon.area == first_area
    with pytest.raises(ValueError):
        rectangles._neighboring(polygon)[2][0, 0] = True  # read only: kept for the next question
    with installed():
        polygon.subtract(box(1, 1, 2.5, 2.5))
        cut, cut_area = list(polygon.get_neighboring_rectangles()), polygon.area
    stock = OrthogonalPolygon(polygon.polygon)
    assert repr(cut) == repr(list(stock.get_neighboring_rectangles())) and cut_area == stock.area != first_area


def test_no_cell_inside_means_no_rectangle():
    assert rectangles._grid_rectangles(np.zeros((0, 0), dtype=bool)) == 0
    assert rectangles._grid_rectangles(np.zeros((3, 2), dtype=bool)) == 0
    assert rectangles._grid_rectangles(np.ones((3, 2), dtype=bool)) == 6 * 3


def test_signed_zeros_are_kept_as_the_stock_merge_keeps_them():
    """0.0 == -0.0, so which one a merged rectangle holds depends on the order of the comparisons."""
    rng = Random(7)
    edges = [0.0, 0.5, 1.25, 2.0, 2.5]
    rects = {
        (rng.choice([0.0, -0.0]) if x0 == 0 else x0, rng.choice([0.0, -0.0]) if z0 == 0 else z0, x1, z1)
        for x0, x1 in zip(edges, edges[1:])
        for z0, z1 in zip(edges, edges[1:])
    }
    assert any(str(rect).count("-0.0") for rect in rects)
    assert repr(merge_rounds(rects, join_neighboring_rectangles)) == repr(merge_rounds(rects, STOCK_JOIN))


def test_installed_only_inside_the_block():
    polygon = free_space(3, 4)
    stock = (databases._get_asset_groups, databases._get_asset_database)
    with installed():
        assert OrthogonalPolygon._join_neighboring_rectangles is join_neighboring_rectangles
        assert AssetGroupGenerator._set_dimensions is set_dimensions
        assert databases._get_asset_groups() is databases._get_asset_groups()  # parsed once
        assert databases._get_asset_database() is databases._get_asset_database()
        assert databases._get_asset_database() == stock[1]()
        fast = polygon.get_all_rectangles()
    assert OrthogonalPolygon._join_neighboring_rectangles is STOCK_JOIN
    assert AssetGroupGenerator._set_dimensions is STOCK_SET_DIMENSIONS
    assert (databases._get_asset_groups, databases._get_asset_database) == stock
    assert not hasattr(ProceduralRoom, "spawnable_assets")
    assert list(fast) == list(polygon.get_all_rectangles())


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_asset_group_dimensions_and_random_draws_match_stock(split):
    """Every asset group: the same dimensions, of the same types, from the same random draws."""
    compared = 0
    for name, data in sorted(databases._get_asset_groups().items()):
        stock, fast = (AssetGroupGenerator(name=name, split=split, data=data, controller=OfflineController())
                       for _ in range(2))
        for seed in range(3):
            results = []
            for generator, set_dims in ((stock, STOCK_SET_DIMENSIONS), (fast, set_dimensions)):
                generator.cache.clear()
                random.seed(seed)
                set_dims(generator)
                dims = generator.cache["dimensions"]
                results.append(([(type(dims[axis]), dims[axis]) for axis in "xyz"], random.getstate()))
            assert results[0] == results[1], f"{name} ({split}, seed {seed})"
            compared += 1
    assert compared >= 3 * 18


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("split", ["train", "val"])
def test_asset_group_table_is_stocks_with_the_same_random_draws(split):
    """The table copied per house: stock's columns, dtypes, values and rows as records, new generators for
    the house's controller, and the same random draws (the table made once is made outside them)."""
    tables = []
    with installed():
        assert databases.get_spawnable_asset_group_info is objects.get_spawnable_asset_group_info
        for house_seed in range(3):
            made = []
            for make in (spawnable_asset_group_info, STOCK_SPAWNABLE_ASSET_GROUP_INFO.__wrapped__):
                controller = OfflineController()
                random.seed(house_seed)
                spawnable_asset_group_info.cache_clear()
                made.append((make(split=split, controller=controller), random.getstate(), controller))
            (fast, fast_state, controller), (stock, stock_state, _) = made
            assert fast_state == stock_state
            generators = fast.pop("assetGroupGenerator").tolist()
            assert [(g.name, g.split, g.controller, g.data, g.cache) for g in generators] == [
                (g.name, g.split, controller, g.data, g.cache) for g in stock.pop("assetGroupGenerator")]
            pd.testing.assert_frame_equal(fast, stock, check_exact=True)
            rows = KeptRows(fast)
            for position in range(len(stock)):
                assert typed(rows.record(position)) == typed(stock.iloc[[position]].to_dict(orient="records")[0])
            tables.append(fast)
    assert not tables[0][["xSize", "zSize"]].equals(tables[1][["xSize", "zSize"]])  # dimensions are drawn per house
    assert databases.get_spawnable_asset_group_info is objects.get_spawnable_asset_group_info is STOCK_SPAWNABLE_ASSET_GROUP_INFO


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("room_type", ["Kitchen", "LivingRoom", "Bedroom", "Bathroom"])
def test_a_room_holds_the_candidates_stock_holds_after_the_same_draws(room_type):
    """A new room: stock's priority types, random states and candidate frames, its asset groups read from the
    house's table made once (every column, every row as to_dict gives it, the generators the house's)."""
    def new_room(seed: int, controller) -> tuple:
        random.seed(seed)
        np.random.seed(seed)
        databases.get_spawnable_asset_group_info.cache_clear()
        room = ProceduralRoom(polygon=box(0, 0, 5, 5), room_type=room_type, room_id=2, split="train",
                              door_polygons=[], controller=controller)
        databases.get_spawnable_asset_group_info.cache_clear()
        return room, random.getstate(), repr(np.random.get_state())

    for seed in range(2):
        controller = OfflineController()
        stock, *stock_states = new_room(seed, controller)
        stock_groups, stock_assets = stock.spawnable_asset_groups, stock.spawnable_assets  # the class swaps them while installed
        with installed():
            fast, *fast_states = new_room(seed, controller)
            groups, assets = fast.spawnable_asset_groups, fast.spawnable_assets
            rows = objects.ProceduralRoom.spawnable_asset_groups.rows(fast)
            for position in range(len(groups)):
                record = rows.record(position)
                assert record.pop("assetGroupGenerator") is groups["assetGroupGenerator"].iloc[position]
                expected = stock_groups.iloc[[position]].to_dict(orient="records")[0]
                del expected["assetGroupGenerator"]
                assert typed(record) == typed(expected)
            for column in stock_groups.columns.drop("assetGroupGenerator"):
                assert rows.column(column).tolist() == stock_groups[column].tolist(), column
            assert [g.controller for g in rows.column("assetGroupGenerator")] == [controller] * len(groups)
        pd.testing.assert_frame_equal(assets, stock_assets, check_exact=True)
        assert fast_states == stock_states and fast.priority_asset_types == stock.priority_asset_types
        assert [(g.name, g.data, g.cache) for g in groups.pop("assetGroupGenerator")] == [
            (g.name, g.data, g.cache) for g in stock_groups.pop("assetGroupGenerator")]
        pd.testing.assert_frame_equal(groups, stock_groups, check_exact=True)
        assert (fast.room_type, fast.room_id, fast.split, fast.assets, fast.last_rectangles) == (
            stock.room_type, stock.room_id, stock.split, stock.assets, stock.last_rectangles)
        assert fast.open_polygon.polygon.equals_exact(stock.open_polygon.polygon, 0)


def typed(record: dict) -> list[tuple]:
    return [(key, type(value), repr(value)) for key, value in record.items()]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ProcTHOR's pandas idioms, as in sampling
@pytest.mark.parametrize("room_type", ["Kitchen", "LivingRoom", "Bedroom", "Bathroom"])
def test_rows_are_read_as_to_dict_reads_them(room_type):
    """Every row of a room's asset and asset-group frames: the same keys, in order, and values of the same types."""
    _, assets = ProceduralRoom.get_floor_assets(room_type=room_type, split="train")
    groups = databases.get_spawnable_asset_group_info(split="train", controller=OfflineController())
    groups = groups[groups[f"in{room_type}s"] > 0]
    for frame, with_index in ((assets, True), (groups, False)):
        rows = KeptRows(frame)
        for position in range(len(frame)):
            row = frame.iloc[[position]]
            expected = (row.reset_index() if with_index else row).to_dict(orient="records")[0]
            assert typed(rows.record(position, with_index=with_index)) == typed(expected)


def test_wall_lines_are_the_records_of_stocks_frames():
    """A room's free wall lines (floats, line strings, wall ids), and a wall with none left: the rows of stock's
    frames as to_dict gives them, in order."""
    walls = {"wall|1|0.00|0.00|5.00|0.00": [LineString([(0, 0), (1.25, 0)]), LineString([(2.5, 0), (5, 0)])],
             "wall|1|5.00|0.00|5.00|5.00": [LineString([(5, 0), (5, 4.75)])],
             "wall|1|0.00|5.00|5.00|5.00": [LineString()]}
    rooms = {1: walls, 2: {"wall|2|0.00|0.00|5.00|0.00": [LineString()]}}
    stock = wall_objects.get_line_string_df_map(room_to_wall_to_string=rooms)
    fast = get_line_string_df_map(room_to_wall_to_string=rooms)
    assert list(fast) == list(stock) == [1]
    assert [typed(row) for row in fast[1]] == [typed(row) for row in stock[1].to_dict(orient="records")]
    assert len(fast[1]) == 3


@pytest.fixture(scope="module")
def houses_before_their_wall_objects() -> list[tuple]:
    """16 houses sampled (fast), each as it is when its wall objects are added: (the arguments, copied, and the
    random states then)."""
    import procthor.generation as generation

    from pipeline.scene.procthor.sampling import ROOM_SPEC_IDS, _generate

    captured = []
    sampled = generation.add_wall_objects

    def spied(**kwargs):
        captured.append((copy.deepcopy(kwargs), random.getstate(), np.random.get_state()))
        return sampled(**kwargs)

    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        patch.setattr(generation, "add_wall_objects", spied)
        for seed in range(16):
            _generate(seed, list(ROOM_SPEC_IDS)[seed % 4], "offline", stock_procthor=False)
    return captured


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_wall_objects_are_stocks_from_the_same_houses_and_draws(houses_before_their_wall_objects):
    """Windows, televisions and paintings placed in sampled houses by stock's functions and by the fast ones,
    from copies of the same house and random states: the same objects and windows, with the same values, and
    the same random states after."""
    televisions = paintings = 0
    for kwargs, random_state, numpy_state in houses_before_their_wall_objects:
        placed = []
        for fast in (False, True):
            house = copy.deepcopy(kwargs)
            random.setstate(random_state)
            np.random.set_state(numpy_state)
            with installed() if fast else contextlib.nullcontext():
                result = wall_objects.add_wall_objects(**house)
            placed.append((exact(house["partial_house"].objects), exact(house["partial_house"].windows), result,
                           random.getstate(), exact(np.random.get_state())))
        assert placed[0] == placed[1]
        televisions += placed[0][0].count("Television_")
        paintings += placed[0][0].count("Painting_")
    assert televisions >= 5 and paintings >= 5 and len(houses_before_their_wall_objects) == 16


def test_floor_objects_are_written_as_stock_writes_them(houses_before_their_wall_objects):
    """Every asset and asset group placed in the sampled houses, as house objects: stock's, kinematic or not."""
    placed = [asset for kwargs, _, _ in houses_before_their_wall_objects for room in kwargs["rooms"].values()
              for asset in room.assets]
    stock = [exact(asset.assets_dict if isinstance(asset, objects.AssetGroup) else asset.asset_dict) for asset in placed]
    with installed():
        fast = [exact(asset.assets_dict if isinstance(asset, objects.AssetGroup) else asset.asset_dict) for asset in placed]
    assert fast == stock
    assert any(isinstance(asset, objects.AssetGroup) for asset in placed) and len(placed) >= 50
    assert {'"kinematic": true', '"kinematic": false'} <= {kind for text in stock for kind in
                                                         ('"kinematic": true', '"kinematic": false') if kind in text}


def test_anchor_locations_are_stocks_with_the_same_draws():
    """Rectangles of rooms with holes (corners inside and outside, edges on the outline or not, middles), each
    anchored by stock and by the fast one from the same random state: the same location and random state after."""
    kinds = set()
    for seed in range(12):
        room = SimpleNamespace(room_polygon=free_space(seed, 1 + seed % 4))
        for rect in sorted(room.room_polygon.get_all_rectangles())[::3]:
            found = []
            for anchor in (ProceduralRoom.sample_anchor_location, rectangles.sample_anchor_location):
                random.seed(seed)
                found.append((repr(anchor(room, rect)), random.getstate()))
            assert found[0] == found[1], (seed, rect)
            kinds.add(found[0][0].split("'")[-2])
    assert kinds == {"inCorner", "onEdge", "inMiddle"}


def exact(value) -> str:
    """Every number exactly (numpy's floats written as the floats they are)."""
    return json.dumps(value, sort_keys=True, default=lambda v: v.tolist() if hasattr(v, "tolist") else repr(v))


@pytest.mark.parametrize("split", ["train", "val"])
def test_wall_asset_frames_are_stocks_made_once_and_copied(split):
    for asset_type in ("Television", "Painting", "Window"):
        fast = get_assets_df(split=split, asset_type=asset_type)
        pd.testing.assert_frame_equal(fast, STOCK_GET_ASSETS_DF(split=split, asset_type=asset_type), check_exact=True)
        fast.loc[fast.index[0], "xSize"] = -1.0  # a caller's change stays in its copy
        assert get_assets_df(split=split, asset_type=asset_type)["xSize"].min() > 0
    with installed():
        assert wall_objects.get_assets_df is get_assets_df
    assert wall_objects.get_assets_df is STOCK_GET_ASSETS_DF


@pytest.mark.parametrize("split", ["train", "val"])
def test_drawn_rows_read_as_the_frames_sample_returns(split):
    """Every row of the wall assets' frames, every column: `row[column].iloc[0]` as the one-row frame gives it."""
    from pipeline.scene.procthor.fast_procthor.walls import _asset_rows, _wall_televisions

    frames = [_asset_rows(split, "Painting"), _asset_rows(split, "Window"), KeptRows(_wall_televisions(split))]
    assert sum(len(rows.frame) for rows in frames) >= 7
    for rows in frames:
        for position in range(len(rows.frame)):
            sampled = rows.frame.iloc[[position]]
            for column in rows.frame.columns:
                value, expected = rows.drawn(position)[column].iloc[0], sampled[column].iloc[0]
                assert (type(value), repr(value)) == (type(expected), repr(expected))


def test_rows_of_a_frame_made_once_share_their_reads_and_keep_their_own_rows():
    from pipeline.scene.procthor.fast_procthor.rows import made_once

    frame = pd.DataFrame({"assetId": ["a", "b", "c"], "xSize": [0.5, 1.0, 2.0]})
    first, second, other = made_once(frame), made_once(frame), made_once(frame.copy())
    assert first.column("xSize") is second.column("xSize") is not other.column("xSize")
    first.keep &= first.column("xSize") > 0.75
    assert first.keep.tolist() == [False, True, True] and second.keep.all()
    record = second.record(1)
    record["xSize"] = -1.0  # a caller's change stays in its dict
    assert first.record(1) == {"assetId": "b", "xSize": 1.0}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_kept_rows_are_the_rows_successive_filters_keep():
    _, assets = ProceduralRoom.get_floor_assets(room_type="Kitchen", split="train")
    rows, filtered = KeptRows(assets), assets
    for asset_type in ["Chair", "Toaster", "Fridge"]:
        rows.keep &= rows.column("assetType") != asset_type
        filtered = filtered[filtered["assetType"] != asset_type]
    assert rows.kept().equals(filtered) and list(rows.kept().index) == list(filtered.index)


def test_thirty_houses_are_byte_identical_to_stock_procthor(stock_houses):
    """Every house has the sha256 of stock's kept in tests/scene/stock_houses.json, and the houses sampled with
    stock ProcTHOR in this run are the fast ones byte for byte: the kept digests are stock's."""
    from stock_houses import STOCK_CHECKED, STOCK_HOUSES, STOCK_SEED, digest, stock_digests

    from pipeline.scene.procthor.sampling import sample_scene
    from pipeline.scene.scene_file import dumps, scene_document

    kept = stock_digests()
    for index in range(STOCK_HOUSES):
        fast = dumps(scene_document(*sample_scene(STOCK_SEED, index)))
        assert digest(fast) == kept[index], f"house {index} differs from stock's digest"
        if index in STOCK_CHECKED:
            assert (stock_houses / f"house-{index}.json").read_text(encoding="utf-8") == fast, f"house {index} differs"
    assert sorted(path.name for path in stock_houses.glob("house-*.json")) == sorted(
        f"house-{index}.json" for index in STOCK_CHECKED)
