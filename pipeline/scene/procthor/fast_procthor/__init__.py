"""Exactly equivalent, faster replacements for ProcTHOR's slow spots, installed at run time.

`installed()` swaps these in for the duration of a block, and nothing installed is edited.
Each one gives ProcTHOR the same values, in the same order, and makes the same random draws, so
houses stay byte-identical (tests/scene/test_fast_procthor.py compares whole houses with stock
ones). Each item names the module of this package that holds it.

1. `OrthogonalPolygon._join_neighboring_rectangles` (`rectangles`), where stock sampling spends
   most of its time (every pair of rectangles compared with Python set intersections, again in
   each round of `get_all_rectangles`). Its result is a `set` whose iteration order later feeds
   `random.choices`, so the replacement must insert the same rectangles in the same sequence.
   The stock loops walk `rects.copy()` and, for each rect1, `rects - {rect1}`; for 8 or more
   rectangles CPython computes that difference as a copy of `rects` with rect1 removed, so both
   loops visit rectangles in the order of `rects.copy()` (below 8 the stock method runs: it is
   cheap there, and its inner order differs). Two axis-aligned rectangles share exactly two
   corners when they have the same x-interval and one z-value in common, or the same z-interval
   and one x-value in common: one edge key in common. Sorting the 4n edge keys finds all the
   pairs at once, and the pairs in (rect1, rect2) order are exactly the stock visiting order.
   Inserting only each merged rectangle's first occurrence leaves a set as inserting them all
   does (adding a present element changes nothing); each merged rectangle's first visit is the
   least visit of its pairs (`np.minimum.at` over the rectangles its codes can name, a coordinate's
   code its rank among its axis's values, looked up in the first round's values in the later rounds
   of `get_all_rectangles`), and a sort of those first visits gives the order of insertion.
2. `AssetGroupGenerator._set_dimensions` (`asset_groups`), which builds one pandas DataFrame per
   asset of a group to find its widest and deepest assets and its height, then samples two
   placements of the group for their bounds, for every group of every house: the same choices
   from plain lists (first maximum, as `idxmax` picks), and the placements' walk, boxes and
   metadata read once per group (`GroupDimensions`), so that sampling them is the same random
   draws and float64 operations on numbers alone.
3. `procthor.databases._get_asset_groups` and `_get_asset_database` (`asset_groups`), which parse
   the asset-group files and the 1.5 MB asset database again for every house: parsed once per
   process. Only `get_spawnable_asset_group_info` calls them; it reads the database's keys only,
   and the `AssetGroupGenerator` it builds deep-copies its group's data before changing anything.
4. `OrthogonalPolygon.get_neighboring_rectangles` (one `shapely.contains_xy` for all cells, asked
   once per polygon) and
   `get_all_rectangles` (rounds of joins remembered per polygon, and none after the set holds
   every rectangle of whole inside cells, counted from the grid: stock's last round, which adds
   nothing), run on every change of a room's open polygon, and `ProceduralRoom.sample_next_rectangle`,
   whose pick is the largest rectangle four times in five and for the agent's pose: found on the
   grid when one alone is largest, also among the rectangles kept after removals, the set of them
   (`last_rectangles`) made only if used, and `OrthogonalPolygon.is_point_inside` by
   `shapely.contains_xy` (`rectangles`); `AssetGroupGenerator.__attrs_post_init__` (a group's copied,
   flattened data made once and unpickled after; `asset_groups`). Each says why it is exact.
5. `ProceduralRoom.sample_asset` (`floor_assets`, `rows`), which filters the room's asset and
   asset-group frames several times per object (each filter a `take` over every column) and
   draws with `DataFrame.sample()`: the same filters on numpy columns, row positions in place of
   frames, and `.sample()`'s own `np.random.choice` call. The room's `spawnable_assets` and
   `spawnable_asset_groups` are held as `KeptRows`, the first frame and a mask of the rows stock
   would still hold, so choosing an asset narrows a mask where stock filters a frame; a new room
   (`ProceduralRoom.__init__`) holds frames made once, their columns and rows read once per
   process. Whether a type may stand more than once in a room is read from the placement
   annotations once per type.
6. `wall_objects.add_windows`, `add_televisions` and `add_paintings` (`walls`), which filter, drop
   from and append to a room's frame of free wall lines, and filter and drop from the frame of
   windows, televisions or paintings, for every one placed: lists of the lines' records (from
   `get_line_string_df_map`, which keeps the records stock makes its frames of), and the assets
   as rows of a frame made once, drawn from as in 5; `subtract_wall_assets`, which takes each
   asset's polygon from a room's walls one `difference` at a time: all of them at once; and
   `wall_objects.get_assets_df`, a frame of the asset database's televisions, paintings or
   windows built for every house, made once per split and type and copied.
7. `get_spawnable_asset_group_info` (`asset_groups`; both its names are swapped), which builds the
   table of asset groups, a DataFrame of a dozen columns and one per asset type, from a list of
   dicts for every house: stock's table made once per split, and the four columns that change
   from house to house (new generators and their sampled dimensions) beside it
   (`HouseAssetGroups`), the dimensions sampled as stock samples them and the generators made
   when first used; a room reads its rows of both (`GroupRows`).
8. `ProceduralRoom.sample_anchor_location` (`rectangles`), which asks GEOS about sixteen points and
   four line strings made one by one for every object placed: the same predicates asked at once.
9. `Asset.asset_dict` and `AssetGroup.assets_dict` (`floor_assets`), which look an object's type up
   in the placement annotations (a pandas row) for every object written to the house: read once
   per type; and `statistics.mean` of a placed object's corners (exact sums of fractions) as
   `math.fsum` gives the same number (`floor_assets.mean`, which says when).
10. `layer.four_color_graph` (`layers`), which asks a new SAT solver to colour the graph of
   neighbouring rooms for every house: a graph of no rooms, every one-room house's, is coloured
   by nothing without it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

import procthor.databases as databases
import procthor.generation.layer as layer
import procthor.generation.objects as objects
import procthor.generation.wall_objects as wall_objects
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.generation.objects import Asset, AssetGroup, OrthogonalPolygon, ProceduralRoom

from pipeline.scene.procthor.fast_procthor.asset_groups import (asset_group_post_init, read_once, set_dimensions,
                                                              spawnable_asset_group_info)
from pipeline.scene.procthor.fast_procthor.floor_assets import (SPAWNABLE_ASSET_GROUPS, SPAWNABLE_ASSETS, asset_dict,
                                                                assets_dict, mean, procedural_room_init, sample_asset)
from pipeline.scene.procthor.fast_procthor.layers import four_color_graph
from pipeline.scene.procthor.fast_procthor.rectangles import (get_all_rectangles, get_neighboring_rectangles,
                                                     is_point_inside, join_neighboring_rectangles,
                                                     sample_anchor_location, sample_next_rectangle)
from pipeline.scene.procthor.fast_procthor.walls import (add_paintings, add_televisions, add_windows, get_assets_df,
                                                         get_line_string_df_map, subtract_wall_assets)
from pipeline.scene.procthor.patching import patched


@contextmanager
def installed() -> Iterator[None]:
    """The fast equivalents in place of the stock ones, restored on exit."""
    read_asset_groups, read_asset_database = databases._get_asset_groups, databases._get_asset_database
    swaps = [
        (OrthogonalPolygon, "_join_neighboring_rectangles", join_neighboring_rectangles),
        (AssetGroupGenerator, "_set_dimensions", set_dimensions),
        (databases, "_get_asset_groups", lambda: read_once(read_asset_groups)),
        (databases, "_get_asset_database", lambda: read_once(read_asset_database)),
        (OrthogonalPolygon, "get_neighboring_rectangles", get_neighboring_rectangles),
        (OrthogonalPolygon, "get_all_rectangles", get_all_rectangles),
        (AssetGroupGenerator, "__attrs_post_init__", asset_group_post_init),
        (ProceduralRoom, "spawnable_assets", SPAWNABLE_ASSETS),
        (ProceduralRoom, "spawnable_asset_groups", SPAWNABLE_ASSET_GROUPS),
        (ProceduralRoom, "sample_asset", sample_asset),
        (ProceduralRoom, "__init__", procedural_room_init),
        (wall_objects, "add_windows", add_windows),
        (wall_objects, "add_paintings", add_paintings),
        (wall_objects, "add_televisions", add_televisions),
        (wall_objects, "get_line_string_df_map", get_line_string_df_map),
        (wall_objects, "subtract_wall_assets", subtract_wall_assets),
        (databases, "get_spawnable_asset_group_info", spawnable_asset_group_info),
        (objects, "get_spawnable_asset_group_info", spawnable_asset_group_info),
        (ProceduralRoom, "sample_next_rectangle", sample_next_rectangle),
        (wall_objects, "get_assets_df", get_assets_df),
        (OrthogonalPolygon, "is_point_inside", is_point_inside),
        (ProceduralRoom, "sample_anchor_location", sample_anchor_location),
        (Asset, "asset_dict", property(asset_dict)),
        (AssetGroup, "assets_dict", property(assets_dict)),
        (objects, "mean", mean),
        (layer, "four_color_graph", four_color_graph),
    ]
    with contextlib.ExitStack() as stack:
        for owner, name, value in swaps:
            stack.enter_context(patched(owner, name, value))
        yield
