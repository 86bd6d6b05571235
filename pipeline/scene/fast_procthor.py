"""Exactly equivalent, faster replacements for ProcTHOR's slow spots, installed at run time.

`installed()` swaps these in for the duration of a block, and nothing installed is edited.
Each one gives ProcTHOR the same values, in the same order, and makes the same random draws, so
houses stay byte-identical (tests/test_fast_procthor.py compares whole houses with stock ones).

1. `OrthogonalPolygon._join_neighboring_rectangles`, where stock sampling spends most of its time
   (every pair of rectangles compared with Python set intersections, again in each round of
   `get_all_rectangles`). Its result is a `set` whose iteration order later feeds
   `random.choices`, so the replacement must insert the same rectangles in the same sequence.
   The stock loops walk `rects.copy()` and, for each rect1, `rects - {rect1}`; for 8 or more
   rectangles CPython computes that difference as a copy of `rects` with rect1 removed, so both
   loops visit rectangles in the order of `rects.copy()` (below 8 the stock method runs: it is
   cheap there, and its inner order differs). Two axis-aligned rectangles share exactly two
   corners when they have the same x-interval and one z-value in common, or the same z-interval
   and one x-value in common: one edge key in common. Sorting the 4n edge keys finds all the
   pairs at once, and the pairs in (rect1, rect2) order are exactly the stock visiting order.
   Inserting only each merged rectangle's first occurrence leaves a set as inserting them all
   does (adding a present element changes nothing); the first occurrences are found with one
   sort of one int64 key per merged rectangle (its four codes), which names the same rectangle.
2. `AssetGroupGenerator._set_dimensions`, which builds one pandas DataFrame per asset of a group
   to find its widest and deepest assets and its height: the same choices from plain lists
   (first maximum, as `idxmax` picks), then ProcTHOR's own placement sampling, whose random
   draws are the only ones made.
3. `procthor.databases._get_asset_groups` and `_get_asset_database`, which parse the asset-group
   files and the 1.5 MB asset database again for every house: parsed once per process. Only
   `get_spawnable_asset_group_info` calls them; it reads the database's keys only, and the
   `AssetGroupGenerator` it builds deep-copies its group's data before changing anything.
4. `OrthogonalPolygon.get_neighboring_rectangles` (one `shapely.contains_xy` for all cells) and
   `get_all_rectangles` (rounds of joins remembered per polygon), run on every change of a room's
   open polygon; `AssetGroupGenerator.__attrs_post_init__` (a group's copied, flattened data made
   once and unpickled after). Each says why it is exact.
5. `ProceduralRoom.sample_asset`, which filters the room's asset and asset-group frames several
   times per object (each filter a `take` over every column) and draws with `DataFrame.sample()`:
   the same filters on numpy columns, row positions in place of frames, and `.sample()`'s own
   `np.random.choice` call. The room's `spawnable_assets` and `spawnable_asset_groups` are held as
   `KeptRows`, the first frame and a mask of the rows stock would still hold, so choosing an
   asset narrows a mask where stock filters a frame (`_place_asset`, `_place_asset_group`).
6. `wall_objects.add_paintings` and `add_windows`, which filter, drop from and append to a
   room's frame of free wall lines, and filter and drop from the frame of paintings or windows,
   for every one placed: a list of the lines' records, and the assets as a frame's rows drawn
   from as in 5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

import pickle
import random

import numpy as np
import pandas as pd
import procthor.databases as databases
import procthor.generation.wall_objects as wall_objects
import shapely
from pandas.core.dtypes.cast import maybe_box_native
from procthor.constants import (
    MARGIN,
    MAX_INTERSECTING_OBJECT_RETRIES,
    P_CHOOSE_ASSET_GROUP,
    P_W1_ASSET_SKIPPED,
    PADDING_AGAINST_WALL,
)
from procthor.databases import asset_id_database, placement_annotations
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.generation.objects import ChosenAsset, ChosenAssetGroup, OrthogonalPolygon, ProceduralRoom
from procthor.utils.types import BoundingBox, Object, Vector3, Window
from shapely.geometry import MultiLineString

from pipeline.scene.patching import patched

Rect = tuple[float, float, float, float]  # (x0, z0, x1, z1)
STOCK_JOIN = OrthogonalPolygon._join_neighboring_rectangles
STOCK_SET_DIMENSIONS = AssetGroupGenerator._set_dimensions
STOCK_POST_INIT = AssetGroupGenerator.__attrs_post_init__
ALL_RECTANGLES_KEPT = 64  # polygons whose rectangles are remembered (the last house's, in practice)
ONE_KEY_MAX_CODES = 50_000  # v**4 below 2**63: four codes below v make one int64 key
COPY_ORDER_MIN = 8  # from here on, `rects - {r}` iterates in the order of `rects.copy()`


def _pairs_sharing_an_edge(codes: np.ndarray, v: int) -> tuple[np.ndarray, np.ndarray]:
    """(rect1, rect2) index arrays of the rectangles that share two corners, in stock visiting order.

    `codes` holds each rectangle's (x0, z0, x1, z1) as integer codes below `v`. Edge keys:
    (x-interval, z) for the bottom and top edges, (z-interval, x) offset by v^3 for the sides;
    2 v^3 fits in an int64 for any v below a million (n rectangles have at most 4n codes).
    """
    n = len(codes)
    x0, z0, x1, z1 = codes.T
    keys = np.concatenate([(x0 * v + x1) * v + z0, (x0 * v + x1) * v + z1,
                           ((v + z0) * v + z1) * v + x0, ((v + z0) * v + z1) * v + x1])
    owner = np.tile(np.arange(n), 4)
    by_key = np.argsort(keys, kind="stable")
    keys, owner = keys[by_key], owner[by_key]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    lengths = np.diff(np.r_[starts, len(keys)])
    starts, lengths = starts[lengths > 1], lengths[lengths > 1]
    # every ordered pair of entries within one run of equal keys
    member = np.repeat(starts, lengths) + _offsets(lengths)
    run_length = np.repeat(lengths, lengths)
    rect1 = owner[np.repeat(member, run_length)]
    rect2 = owner[np.repeat(member - _offsets(lengths), run_length) + _offsets(run_length)]
    distinct = rect1 != rect2  # a rectangle's four edge keys differ: only an entry with itself repeats
    rect1, rect2 = rect1[distinct], rect2[distinct]
    visit = np.argsort(rect1 * n + rect2)
    return rect1[visit], rect2[visit]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., L-1 for each L in `lengths`, concatenated."""
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def join_neighboring_rectangles(self: OrthogonalPolygon, rects: set[Rect]) -> set[Rect]:
    if len(rects) < COPY_ORDER_MIN:
        return STOCK_JOIN(self, rects)
    corners = np.array(list(rects.copy()), dtype=float)  # rows (x0, z0, x1, z1) in visiting order
    values, codes = np.unique(corners, return_inverse=True)  # codes keep the order of the values
    v = len(values)
    codes = codes.reshape(corners.shape).astype(np.int64)
    rect1, rect2 = _pairs_sharing_an_edge(codes, v)
    # The stock expression, min(x0_0, x1_0, x1_1, x1_1) etc., under x0 < x1 and z0 < z1 (true of
    # every rectangle here): each side is rect1's unless rect2's is strictly beyond it, and x0_1
    # stays out of the minimum as it does there. Per side: (rect2's column, rect1's, rect2 wins).
    sides = [(2, 0, codes[rect2, 2] < codes[rect1, 0]), (1, 1, codes[rect2, 1] < codes[rect1, 1]),
             (2, 2, codes[rect2, 2] > codes[rect1, 2]), (3, 3, codes[rect2, 3] > codes[rect1, 3])]

    def merged(table: np.ndarray, rows=slice(None)) -> list[np.ndarray]:
        return [np.where(wins[rows], table[rect2[rows], c2], table[rect1[rows], c1]) for c2, c1, wins in sides]

    mx0, mz0, mx1, mz1 = merged(codes)
    if v < ONE_KEY_MAX_CODES:  # one int64 key per merged rectangle, one sort
        _, first = np.unique(((mx0 * v + mz0) * v + mx1) * v + mz1, return_index=True)  # first occurrences
    else:
        _, x_interval = np.unique(mx0 * v + mx1, return_inverse=True)
        _, z_interval = np.unique(mz0 * v + mz1, return_inverse=True)
        _, first = np.unique(x_interval * len(rect1) + z_interval, return_index=True)
    first.sort()
    out: set[Rect] = set()
    out.update(map(tuple, np.column_stack(merged(corners, first)).tolist()))
    return out - rects


def set_dimensions(self: AssetGroupGenerator) -> None:
    """`AssetGroupGenerator._set_dimensions` with lists where it builds DataFrames."""
    asset_group_assets = {
        asset["name"]: set([asset_id for asset_type, asset_id in asset["assetIds"]])
        for asset in self.data["assetMetadata"].values()
    }
    widest, deepest, max_y = {}, {}, -np.inf
    for name, asset_ids in asset_group_assets.items():
        ids = list(asset_ids)
        boxes = [asset_id_database[asset_id]["boundingBox"] for asset_id in ids]
        for chosen, axis in ((widest, "x"), (deepest, "z")):
            asset_id = ids[max(range(len(ids)), key=lambda k: boxes[k][axis])]
            chosen[name] = (asset_id_database[asset_id]["objectType"], asset_id)
        height = np.array([box["y"] for box in boxes]).max()  # the numpy scalar a Series.max() gives
        if height > max_y:
            max_y = height
    x_dim_assets = self.sample_object_placement(chosen_asset_ids=widest)
    z_dim_assets = self.sample_object_placement(chosen_asset_ids=deepest)
    self.cache["dimensions"] = Vector3(
        x=x_dim_assets["bounds"]["x"]["length"], y=max_y, z=z_dim_assets["bounds"]["z"]["length"]
    )


def _neighboring(self: OrthogonalPolygon) -> tuple[set[Rect], tuple[Rect, ...]]:
    """The stock neighbouring-rectangles set and its cells in insertion order; sets `self.area`."""
    xs, zs = self.unique_xs, self.unique_zs
    cells = [(x0, z0, x1, z1) for x0, x1 in zip(xs, xs[1:]) for z0, z1 in zip(zs, zs[1:])]
    out: set[Rect] = set()
    self.area = 0
    if not cells:
        return out, ()
    mids = np.array([((x0 + x1) / 2, (z0 + z1) / 2) for x0, z0, x1, z1 in cells])
    added = tuple(cell for cell, inside in zip(cells, shapely.contains_xy(self.polygon, mids[:, 0], mids[:, 1]).tolist())
                  if inside)
    for x0, z0, x1, z1 in added:
        out.add((x0, z0, x1, z1))
        self.area += (x1 - x0) * (z1 - z0)
    return out, added


def get_neighboring_rectangles(self: OrthogonalPolygon) -> set[Rect]:
    """`OrthogonalPolygon.get_neighboring_rectangles` with one `shapely.contains_xy` over all cell midpoints.

    Stock asks `polygon.contains(Point(mid))` cell by cell (run on every `subtract` too). The same
    GEOS point-in-area predicate on the same float midpoints answers the same; the cells are then
    added, and the area summed, in the stock order.
    """
    return _neighboring(self)[0]


_all_rectangles: dict[str, tuple[set[Rect], set[Rect]] | None] = {}


def get_all_rectangles(self: OrthogonalPolygon) -> set[Rect]:
    """`OrthogonalPolygon.get_all_rectangles`, its rounds of joins remembered by its starting cells.

    Stock recomputes every round when a room's open polygon is asked again unchanged (the agent's
    starting pose asks for the final polygon, usually already asked for). The rounds are a function
    of the sequence of cells added to a fresh set (that sequence fixes the set's table, so its copy
    and every join and union after it). The returned set must be a new one in the same table state,
    as `add_floor_objects` removes rectangles from it: it is rebuilt by the stock's last operation,
    `curr_rects | rect_candidates` on the two remembered sets (neither of which escapes), or is the
    fresh starting copy when no join added anything. The key is the sequence's `repr`, not the
    tuple: 4 == 4.0 and 0.0 == -0.0, but the rectangles carry their coordinates' types into the house.
    """
    neighboring, added = _neighboring(self)
    key = repr(added)
    if key in _all_rectangles:
        last = _all_rectangles[key]
        return neighboring.copy() if last is None else last[0] | last[1]
    curr_rects, last = neighboring.copy(), None
    while True:
        rect_candidates = self._join_neighboring_rectangles(curr_rects)
        rects = curr_rects | rect_candidates
        if len(rects) == len(curr_rects):
            break
        curr_rects, last = rects, (curr_rects, rect_candidates)
    if len(_all_rectangles) >= ALL_RECTANGLES_KEPT:
        _all_rectangles.clear()
    _all_rectangles[key] = last
    return curr_rects


_prepared_groups: dict[tuple[str, str, int], tuple[dict, bytes]] = {}


def asset_group_post_init(self: AssetGroupGenerator) -> None:
    """`AssetGroupGenerator.__attrs_post_init__` done once per group: later ones unpickle its result.

    Stock deep-copies the group's parsed file, then flattens its asset ids by split and flips x, for
    every group of every house. Those steps depend on the group's data and split only (the data is
    never changed: stock copies before changing anything), so the first result is pickled and each
    later generator gets a fresh unpickled copy: the same dicts, lists, tuples, strings and floats
    (pickle keeps floats exact and shared references shared, as `copy.deepcopy` does).
    """
    key = (self.name, self.split, id(self.data))
    found = _prepared_groups.get(key)
    if found is not None and found[0] is self.data:
        self.data = pickle.loads(found[1])
        self.cache = {}
        return
    original = self.data
    STOCK_POST_INIT(self)
    _prepared_groups[key] = (original, pickle.dumps(self.data, protocol=pickle.HIGHEST_PROTOCOL))


class KeptRows:
    """A frame of spawnable rows and which of them stock would still hold.

    After assigning `ProceduralRoom.spawnable_assets` and `spawnable_asset_groups`, stock only
    narrows them (boolean filters, `drop` of a row's label), each time a frame `take` over every
    column. Successive boolean filters keep the rows where all their masks hold, in frame order,
    with their labels; so the room keeps the first frame and one mask, narrowed in place.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.keep = np.ones(len(frame), dtype=bool)
        self._columns: dict[str, np.ndarray] = {}

    def column(self, name: str) -> np.ndarray:
        """All of the frame's column `name` as numpy (a str column as an object array of str)."""
        if name not in self._columns:
            self._columns[name] = self.frame[name].to_numpy()
        return self._columns[name]

    def kept(self) -> pd.DataFrame:
        """The frame stock would hold: the kept rows."""
        return self.frame if self.keep.all() else self.frame[self.keep]

    def record(self, position: int, with_index: bool = False) -> dict:
        """Row `position` as `to_dict(orient="records")` of its one-row frame gives it (after `reset_index()`
        if `with_index`: the index first, under its name).

        `to_dict` yields Python scalars, numpy values boxed by `maybe_box_native`; `iloc[position]`
        gives the row's values, boxed here the same way, in column order.
        """
        out = {self.frame.index.name: self.frame.index[position]} if with_index else {}
        out.update(zip(self.frame.columns.tolist(), map(maybe_box_native, self.frame.iloc[position].tolist())))
        return out


class KeptRowsAttribute:
    """A `ProceduralRoom` attribute held as KeptRows: assigning a frame keeps all of its rows, reading
    gives the kept ones (so stock code reading or assigning it sees what it would without the swap)."""

    def __init__(self, name: str) -> None:
        self.key = f"_kept_{name}"

    def __get__(self, room: ProceduralRoom | None, owner: type | None = None):
        return self if room is None else self.rows(room).kept()

    def __set__(self, room: ProceduralRoom, frame: pd.DataFrame) -> None:
        room.__dict__[self.key] = KeptRows(frame)

    def rows(self, room: ProceduralRoom) -> KeptRows:
        return room.__dict__[self.key]


SPAWNABLE_ASSETS = KeptRowsAttribute("spawnable_assets")
SPAWNABLE_ASSET_GROUPS = KeptRowsAttribute("spawnable_asset_groups")


def _sample(positions: np.ndarray) -> int:
    """The row that `.sample()` of the frame of these rows draws: pandas takes row
    `np.random.choice(len(frame), size=1, replace=False)[0]`, the same call as here."""
    return positions[np.random.choice(len(positions), size=1, replace=False)[0]]


def _not_multiple_per_room(room: ProceduralRoom, asset_type: str) -> None:
    """Stock's filters once an asset of a type allowed once per room is chosen: no standalone asset
    of the type, and no group having it."""
    assets, groups = SPAWNABLE_ASSETS.rows(room), SPAWNABLE_ASSET_GROUPS.rows(room)
    assets.keep &= assets.column("assetType") != asset_type
    groups.keep &= ~groups.column(f"has{asset_type}")


def _place_asset_group(room: ProceduralRoom, position: int, set_rotated, rect_x_length, rect_z_length):
    """`ProceduralRoom._place_asset_group` of the group frame's row `position`, stock line by line but
    for reading that row from KeptRows and narrowing its mask where stock filters frames."""
    groups = SPAWNABLE_ASSET_GROUPS.rows(room)
    asset_group_generator: AssetGroupGenerator = groups.column("assetGroupGenerator")[position]
    for _ in range(MAX_INTERSECTING_OBJECT_RETRIES):
        object_placement = asset_group_generator.sample_object_placement()
        any_collisions, intersecting_objects = asset_group_generator.get_intersecting_objects(
            object_placement=object_placement["objects"]
        )
        if not any_collisions:
            if set_rotated is None:
                set_rotated = ProceduralRoom.sample_rotation(
                    asset=groups.record(position), rect_x_length=rect_x_length, rect_z_length=rect_z_length
                )
            if not groups.column("allowDuplicates")[position]:
                groups.keep &= groups.frame.index != groups.frame.index[position]  # drop(label)
            for obj in object_placement["objects"]:
                if obj["assetType"] in room.priority_asset_types:
                    room.priority_asset_types.remove(obj["assetType"])
                allow_duplicates_of_asset_type = placement_annotations.loc[obj["assetType"]]["multiplePerRoom"]
                if not allow_duplicates_of_asset_type:
                    _not_multiple_per_room(room, obj["assetType"])
            return ChosenAssetGroup(
                assetGroupName=groups.column("assetGroupName")[position],
                xSize=object_placement["bounds"]["x"]["length"],
                ySize=object_placement["bounds"]["y"]["length"],
                zSize=object_placement["bounds"]["z"]["length"],
                rotated=set_rotated,
                objects=object_placement["objects"],
                bounds=object_placement["bounds"],
            )


def _place_asset(room: ProceduralRoom, position: int, set_rotated, rect_x_length, rect_z_length) -> ChosenAsset:
    """`ProceduralRoom._place_asset` of the asset frame's row `position`, stock line by line but for
    reading that row from KeptRows and narrowing masks where stock filters frames."""
    asset = SPAWNABLE_ASSETS.rows(room).record(position, with_index=True)
    if set_rotated is None:
        set_rotated = ProceduralRoom.sample_rotation(
            asset=asset, rect_x_length=rect_x_length, rect_z_length=rect_z_length
        )
    asset["rotated"] = set_rotated
    multiple_of_type_per_room = placement_annotations.loc[asset["assetType"]]["multiplePerRoom"]
    if not multiple_of_type_per_room:
        _not_multiple_per_room(room, asset["assetType"])
    if asset["assetType"] in room.priority_asset_types:
        room.priority_asset_types.remove(asset["assetType"])
    return ChosenAsset(**asset)


def _fits(rows: KeptRows, anchor_type: str, x_margin: float, z_margin: float, rect_x_length: float,
          rect_z_length: float, rotations: str) -> np.ndarray:
    """Stock's `frame[anchor_type] & size_filter(frame)` of the kept rows, as a mask over the whole
    frame: the same float64 sums and comparisons, on the columns' numpy arrays."""
    x, z = rows.column("xSize"), rows.column("zSize")
    upright = (x + x_margin < rect_x_length) & (z + z_margin < rect_z_length)
    turned = (z + z_margin < rect_x_length) & (x + x_margin < rect_z_length)
    fits = {"upright": upright, "turned": turned, "either": upright | turned}[rotations]
    return rows.keep & rows.column(anchor_type) & fits


def sample_asset(self: ProceduralRoom, rectangle, anchor_type, anchor_delta, allow_house_plant_group, allow_tv_group):
    """`ProceduralRoom.sample_asset`, stock line by line but for candidate frames held as row positions.

    Each stock candidate frame is a boolean filter of the room's frame: here it is the array of
    the positions of its rows, in the same order (`flatnonzero` of the combined mask), filtered
    the same ways on the columns' numpy arrays. Only lengths and the rows drawn reach ProcTHOR;
    a draw is `_sample`'s, the same one `.sample()` makes, and the types choice is made from the
    kept types in order of first appearance, as `unique()` lists them.
    """
    set_rotated = None
    x0, z0, x1, z1 = rectangle
    rect_x_length = x1 - x0
    rect_z_length = z1 - z0
    if anchor_type == "onEdge":
        x_margin = 2 * MARGIN["edge"]["sides"]
        z_margin = MARGIN["edge"]["front"] + MARGIN["edge"]["back"] + PADDING_AGAINST_WALL
    elif anchor_type == "inCorner":
        x_margin = 2 * MARGIN["corner"]["sides"] + PADDING_AGAINST_WALL
        z_margin = MARGIN["corner"]["front"] + MARGIN["corner"]["back"] + PADDING_AGAINST_WALL
    elif anchor_type == "inMiddle":
        x_margin = 2 * MARGIN["middle"]
        z_margin = 2 * MARGIN["middle"]
    if anchor_delta in {1, 7}:
        rotations, set_rotated = "upright", False
    elif anchor_delta in {3, 5}:
        rotations, set_rotated = "turned", True
    else:
        rotations = "either"
    sizes = (anchor_type, x_margin, z_margin, rect_x_length, rect_z_length, rotations)
    groups, assets = SPAWNABLE_ASSET_GROUPS.rows(self), SPAWNABLE_ASSETS.rows(self)

    keep = _fits(groups, *sizes)
    names = groups.column("assetGroupName")  # str, or NaN (!= any name, as in stock)
    if not allow_house_plant_group:
        keep &= names != "floor-house-plant"
    if not allow_tv_group:
        keep &= names != "television"
    asset_group_candidates = np.flatnonzero(keep)
    asset_candidates = np.flatnonzero(_fits(assets, *sizes))
    asset_types = assets.column("assetType")

    if self.priority_asset_types:
        in_room = placement_annotations[f"in{self.room_type}s"].to_numpy()
        for asset_type in self.priority_asset_types:
            asset_groups_with_type = asset_group_candidates[groups.column(f"has{asset_type}")[asset_group_candidates]]
            can_spawn_standalone = in_room[placement_annotations.index == asset_type][0] > 0
            assets_with_type = None
            if can_spawn_standalone:
                assets_with_type = asset_candidates[asset_types[asset_candidates] == asset_type]
            if len(asset_groups_with_type) and (assets_with_type is None or random.random() <= P_CHOOSE_ASSET_GROUP):
                chosen_asset_group = _place_asset_group(
                    self, _sample(asset_groups_with_type), set_rotated, rect_x_length, rect_z_length
                )
                if chosen_asset_group is not None:
                    return chosen_asset_group
            if assets_with_type is not None and len(assets_with_type):
                return _place_asset(self, _sample(assets_with_type), set_rotated, rect_x_length, rect_z_length)

    if len(asset_group_candidates) and random.random() <= P_CHOOSE_ASSET_GROUP:
        chosen_asset_group = _place_asset_group(
            self, _sample(asset_group_candidates), set_rotated, rect_x_length, rect_z_length
        )
        if chosen_asset_group is not None:
            return chosen_asset_group
    if random.random() <= P_W1_ASSET_SKIPPED:
        asset_candidates = asset_candidates[assets.column(f"in{self.room_type}s")[asset_candidates] != 1]
    if not len(asset_candidates):
        return None
    asset_type = random.choice(list(dict.fromkeys(asset_types[asset_candidates].tolist())))
    asset = _sample(asset_candidates[asset_types[asset_candidates] == asset_type])
    return _place_asset(self, asset, set_rotated, rect_x_length, rect_z_length)


def add_paintings(partial_house, rooms, split, wall_map, ceiling_height, tvs_per_room, rooms_lines_df_map,
                  wall_object_heights_per_room) -> None:
    """`wall_objects.add_paintings`, stock line by line but for a room's wall lines held as a list of
    rows and the paintings as KeptRows.

    Stock filters, drops and appends rows of a room's wall-lines frame; a list of its records,
    filtered, with the chosen row removed and new rows appended, holds the same rows in the same
    order (`concat(ignore_index=True)` renumbers labels, which serve only as the population of a
    `random.choices` whose draw depends on the weights alone). A painting is drawn by `_sample` and
    read as the one-row frame `.sample()` returns; dropping it narrows the mask.
    """
    paintings = KeptRows(wall_objects.get_assets_df(split=split, asset_type="Painting"))
    sizes = paintings.column("xSize")
    max_paintings_in_rooms = random.choices(k=len(rooms_lines_df_map), **wall_objects.PAINTINGS_PER_ROOM)
    min_painting_size = sizes.min() if len(sizes) else np.nan  # Series.min() of no values is NaN
    for max_paintings_in_room, (room_id, room_lines_df) in zip(max_paintings_in_rooms, rooms_lines_df_map.items()):
        room_lines = room_lines_df.to_dict(orient="records")
        for painting_i in range(max_paintings_in_room):
            room_lines = [line for line in room_lines if line["length"] > min_painting_size]
            if not room_lines or not paintings.keep.any():
                break
            room_line_i = random.choices(
                population=range(len(room_lines)), weights=[line["length"] for line in room_lines], k=1
            )[0]
            room_line = room_lines[room_line_i]
            position = _sample(np.flatnonzero(paintings.keep & (sizes < room_line["length"])))
            painting = paintings.frame.iloc[[position]]
            start_position = random.random() * (room_line["length"] - painting["xSize"].iloc[0])
            wall_poly = wall_map[room_line["wallId"]]["polygon"]
            placement = wall_objects.get_wall_placement_info(
                wall_poly=wall_poly, room_line=room_line, asset=painting, start_position=start_position
            )
            min_y, max_y = wall_objects.sample_asset_y_position(
                asset_height=painting["ySize"].iloc[0],
                wall_object_heights=wall_object_heights_per_room[room_id],
                asset_top_down_poly=placement["poly"],
                ceiling_height=ceiling_height,
            )
            center_y_position = (min_y + max_y) / 2
            partial_house.objects.append(
                Object(
                    id=f"{room_id}|{len(rooms[room_id].assets) + painting_i + tvs_per_room[room_id]}",
                    assetId=painting["assetId"].iloc[0],
                    position=Vector3(x=placement["centerX"], y=center_y_position, z=placement["centerZ"]),
                    rotation=Vector3(x=0, y=placement["rotation"], z=0),
                    kinematic=True,
                )
            )
            del room_lines[room_line_i]
            line_string = room_line["lineString"]
            line_string -= placement["poly"]
            if isinstance(line_string, MultiLineString):
                line_strings_to_add = [ls for ls in line_string.geoms if ls.length > min_painting_size]
            elif line_string.length > min_painting_size:
                line_strings_to_add = [line_string]
            else:
                line_strings_to_add = []
            for line_string in line_strings_to_add:
                start, end = line_string.boundary.geoms
                x1, z1 = start.x, start.y
                x2, z2 = end.x, end.y
                room_lines.append({
                    "length": line_string.length, "x1": min(x1, x2), "x2": max(x1, x2), "z1": min(z1, z2),
                    "z2": max(z1, z2), "lineString": line_string, "wallId": room_line["wallId"],
                })
            if not wall_objects.ALLOW_DUPLICATE_PAINTINGS_IN_HOUSE:
                paintings.keep &= paintings.frame.index != paintings.frame.index[position]  # drop(label)
                kept_sizes = sizes[paintings.keep]
                min_painting_size = kept_sizes.min() if len(kept_sizes) else np.nan


def add_windows(partial_house, rooms, boundary_groups, split, room_type_map, wall_map, ceiling_height) -> None:
    """`wall_objects.add_windows`, stock line by line but for a room's wall lines held as a list of
    records (filtered as stock filters its frame, keeping the order) and windows drawn by `_sample`,
    each read as the one-row frame `.sample()` returns."""
    window_boundary_strings = wall_objects.get_boundary_strings(
        boundary_groups=boundary_groups,
        from_room_types=wall_objects.ROOM_TYPES_WITH_WINDOWS,
        only_connected_to_outside=True,
        room_type_map=room_type_map,
    )
    room_to_wall_to_string = wall_objects.extract_wall_ids(boundary_strings=window_boundary_strings)
    wall_objects.subtract_wall_assets(room_to_wall_to_string=room_to_wall_to_string, rooms=rooms)
    wall_objects.convert_multi_lines_to_single_lines(room_to_wall_to_string=room_to_wall_to_string)
    rooms_lines_df_map = wall_objects.get_line_string_df_map(room_to_wall_to_string=room_to_wall_to_string)
    remove_wall_ids = set()
    for door in partial_house.doors:
        if "exterior" in door["wall0"] is None:
            remove_wall_ids.add(door["wall1"])
        elif "exterior" in door["wall1"]:
            remove_wall_ids.add(door["wall0"])
    windows_df = wall_objects.get_assets_df(split=split, asset_type="Window")
    sizes = windows_df["xSize"].to_numpy()
    min_window_size = windows_df["xSize"].min()
    partial_house.windows = []
    max_windows_in_rooms = random.choices(k=len(rooms_lines_df_map), **wall_objects.WINDOWS_PER_ROOM)
    for max_windows_in_room, (room_id, room_lines_df) in zip(max_windows_in_rooms, rooms_lines_df_map.items()):
        room_lines = [line for line in room_lines_df.to_dict(orient="records")
                      if line["wallId"] not in remove_wall_ids and line["length"] > min_window_size]
        for window_i in range(max_windows_in_room):
            if not room_lines:
                break
            room_line = random.choices(population=room_lines, weights=[line["length"] for line in room_lines], k=1)[0]
            window = windows_df.iloc[[_sample(np.flatnonzero(sizes < room_line["length"]))]]
            start_position = random.random() * (room_line["length"] - window["xSize"].iloc[0])
            wall_poly = wall_map[room_line["wallId"]]["polygon"]
            if abs(wall_poly[0]["x"] - wall_poly[1]["x"]) < 1e-3:
                p1 = wall_poly[0]["z"]
                p2 = wall_poly[1]["z"]
                start_position += room_line["z1"] - min(p1, p2)
            else:
                p1 = wall_poly[0]["x"]
                p2 = wall_poly[1]["x"]
                start_position += room_line["x1"] - min(p1, p2)
            if p1 < p2:
                min_x = start_position
            else:
                min_x = abs(p2 - p1) - start_position - window["xSize"].iloc[0]
            min_y, _ = wall_objects.center_asset_y_position(
                asset_height=window["ySize"].iloc[0], ceiling_height=ceiling_height
            )
            wall_order = room_line["wallId"][room_line["wallId"].find("|", len("wall|")):]
            asset_id = window["assetId"].iloc[0]
            wall_hole = wall_objects.wall_holes[asset_id]
            offset = wall_hole["offset"]
            partial_house.windows.append(
                Window(
                    id=f"window|{room_id}|{window_i}",
                    assetId=window["assetId"].iloc[0],
                    room0=f"room|{room_id}",
                    room1=f"room|{room_id}",
                    wall0=room_line["wallId"],
                    wall1=f"wall|exterior{wall_order}",
                    boundingBox=BoundingBox(
                        min=Vector3(x=min_x - offset["x"], y=min_y, z=0),
                        max=Vector3(
                            x=min_x + wall_hole["max"]["x"] - offset["x"],
                            y=min_y + wall_hole["max"]["y"] - offset["y"],
                            z=0,
                        ),
                    ),
                    assetOffset=wall_hole["offset"],
                )
            )
            room_lines = [line for line in room_lines if line["wallId"] != room_line["wallId"]]


@lru_cache(maxsize=None)
def _read_once(read: Callable[[], dict]) -> dict:
    return read()


@contextmanager
def installed() -> Iterator[None]:
    """The fast equivalents in place of the stock ones, restored on exit."""
    read_asset_groups, read_asset_database = databases._get_asset_groups, databases._get_asset_database
    with patched(OrthogonalPolygon, "_join_neighboring_rectangles", join_neighboring_rectangles), \
            patched(AssetGroupGenerator, "_set_dimensions", set_dimensions), \
            patched(databases, "_get_asset_groups", lambda: _read_once(read_asset_groups)), \
            patched(databases, "_get_asset_database", lambda: _read_once(read_asset_database)), \
            patched(OrthogonalPolygon, "get_neighboring_rectangles", get_neighboring_rectangles), \
            patched(OrthogonalPolygon, "get_all_rectangles", get_all_rectangles), \
            patched(AssetGroupGenerator, "__attrs_post_init__", asset_group_post_init), \
            patched(ProceduralRoom, "spawnable_assets", SPAWNABLE_ASSETS), \
            patched(ProceduralRoom, "spawnable_asset_groups", SPAWNABLE_ASSET_GROUPS), \
            patched(ProceduralRoom, "sample_asset", sample_asset), \
            patched(wall_objects, "add_windows", add_windows), \
            patched(wall_objects, "add_paintings", add_paintings):
        yield
