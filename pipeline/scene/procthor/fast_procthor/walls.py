"""Windows, televisions and paintings with a room's free wall lines as lists of records (item 6 of the
package docstring)."""

from __future__ import annotations

import random
from collections import defaultdict
from functools import lru_cache

import numpy as np
import pandas as pd
import procthor.generation.wall_objects as wall_objects
import shapely
from procthor.databases import asset_id_database
from procthor.generation.objects import AssetGroup
from procthor.utils.types import BoundingBox, Object, Vector3, Window
from shapely.geometry import MultiLineString, Polygon

from pipeline.scene.procthor.fast_procthor.rows import DrawnRow, KeptRows, made_once, sample_position

STOCK_GET_ASSETS_DF = wall_objects.get_assets_df


@lru_cache(maxsize=None)
def _assets_frame(split: str, asset_type: str) -> pd.DataFrame:
    return STOCK_GET_ASSETS_DF(split=split, asset_type=asset_type)


def get_assets_df(split: str, asset_type: str) -> pd.DataFrame:
    """`wall_objects.get_assets_df`, made once per split and type and copied for every call: it reads
    only ProcTHOR's asset database, loaded once at import and never changed."""
    return _assets_frame(split, asset_type).copy()


def _asset_rows(split: str, asset_type: str) -> KeptRows:
    """The frame `get_assets_df` gives, as KeptRows of the one made once: the functions here only read it,
    so its columns and rows are read once per process."""
    return made_once(_assets_frame(split, asset_type))


@lru_cache(maxsize=None)
def _wall_televisions(split: str) -> pd.DataFrame:
    """Stock's frame of the televisions that hang on walls (`isin(VALID_WALL_TELEVISIONS)`), made once."""
    televisions = _assets_frame(split, "Television")
    return televisions[televisions["assetId"].isin(wall_objects.VALID_WALL_TELEVISIONS)]


def subtract_wall_assets(room_to_wall_to_string: dict, rooms: dict, min_height: float | None = None) -> dict:
    """`wall_objects.subtract_wall_assets`, stock line by line but for an asset's padded polygon taken from all
    of its room's walls by one `shapely.difference`: GEOS's difference of each wall, in the walls'
    order, as stock's `wall -= polygon` asks it wall by wall."""
    wall_object_heights_per_room = dict()
    for room_id in room_to_wall_to_string.keys():
        wall_object_heights_per_room[room_id] = []
        for asset in rooms[room_id].assets:
            if asset.anchor_type == "inMiddle":
                continue
            if min_height is not None:
                asset_max_y = (
                    max(asset_id_database[obj["assetId"]]["boundingBox"]["y"] / 2 + obj["position"]["y"]
                        for obj in asset.objects)
                    if isinstance(asset, AssetGroup)
                    else asset_id_database[asset.asset_id]["boundingBox"]["y"] / 2 + asset.position["y"]
                )
                if asset_max_y < min_height:
                    x_bounds = sorted([asset.top_down_poly[0][0], asset.top_down_poly[2][0]])
                    z_bounds = sorted([asset.top_down_poly[0][1], asset.top_down_poly[2][1]])
                    x_bounds[0] -= wall_objects.POLYGON_PADDING
                    z_bounds[0] -= wall_objects.POLYGON_PADDING
                    x_bounds[1] += wall_objects.POLYGON_PADDING
                    z_bounds[1] += wall_objects.POLYGON_PADDING
                    poly = Polygon([(x_bounds[0], z_bounds[0]), (x_bounds[1], z_bounds[0]),
                                    (x_bounds[1], z_bounds[1]), (x_bounds[0], z_bounds[1])])
                    wall_object_heights_per_room[room_id].append({"poly": poly, "height": asset_max_y})
                    continue
            padded_asset_poly = Polygon(wall_objects.add_padding_to_poly(poly=asset.top_down_poly_with_margin))
            walls = room_to_wall_to_string[room_id]
            walls.update(zip(list(walls), shapely.difference(list(walls.values()), padded_asset_poly).tolist()))
    return wall_object_heights_per_room


def get_line_string_df_map(room_to_wall_to_string: dict) -> dict[int, list[dict]]:
    """`wall_objects.get_line_string_df_map` as lists of the rows of its frames, for the functions here only.

    Stock makes a frame per room of one dict per free stretch of wall (its length and ends as Python
    floats, its line string and wall id); those dicts are the records the frame gives back
    (`records`), in order, so the lists of them are kept instead.
    """
    rooms_lines = {}
    for room_id, wall_id_to_line_string in room_to_wall_to_string.items():
        lines = []
        for wall_id, line_strings in wall_id_to_line_string.items():
            for line_string in line_strings:
                bounds = line_string.boundary.geoms
                if not bounds:
                    continue
                lines.append(_line_record(line_string, wall_id))
        if lines:
            rooms_lines[room_id] = lines
    return rooms_lines


def _line_record(line_string, wall_id: str) -> dict:
    """The row stock makes of a free stretch of wall."""
    start, end = line_string.boundary.geoms
    x1, z1 = start.x, start.y
    x2, z2 = end.x, end.y
    return {"length": line_string.length, "x1": min(x1, x2), "x2": max(x1, x2), "z1": min(z1, z2),
            "z2": max(z1, z2), "lineString": line_string, "wallId": wall_id}


def _hang_on_wall(partial_house, object_id: str, room_line: dict, asset: DrawnRow, wall_map: dict,
                  wall_object_heights: list, ceiling_height: float):
    """Stock's steps, the same for a television and a painting, that hang `asset` (a DrawnRow) on
    `room_line`: where it starts along the line (a draw), its placement, its height (a draw), the
    object appended to the house. Returns what is left of the line's line string beside it."""
    start_position = random.random() * (room_line["length"] - asset["xSize"].iloc[0])
    wall_poly = wall_map[room_line["wallId"]]["polygon"]
    placement = wall_objects.get_wall_placement_info(
        wall_poly=wall_poly, room_line=room_line, asset=asset, start_position=start_position
    )
    min_y, max_y = wall_objects.sample_asset_y_position(
        asset_height=asset["ySize"].iloc[0],
        wall_object_heights=wall_object_heights,
        asset_top_down_poly=placement["poly"],
        ceiling_height=ceiling_height,
    )
    center_y_position = (min_y + max_y) / 2
    partial_house.objects.append(
        Object(
            id=object_id,
            assetId=asset["assetId"].iloc[0],
            position=Vector3(x=placement["centerX"], y=center_y_position, z=placement["centerZ"]),
            rotation=Vector3(x=0, y=placement["rotation"], z=0),
            kinematic=True,
        )
    )
    line_string = room_line["lineString"]
    line_string -= placement["poly"]
    return line_string


def add_televisions(partial_house, rooms, boundary_groups, split, room_type_map, wall_map, ceiling_height):
    """`wall_objects.add_televisions`, stock line by line but for a room's wall lines held as a list of
    records (see `add_paintings`; the one placed is removed from the room's whole list, as stock
    drops its label from the room's frame) and the televisions as KeptRows of the frame made
    once, drawn by `sample_position` and read as stock reads the one-row frame `.sample()` returns (a DrawnRow)."""
    rooms_lines_df_map, wall_object_heights_per_room = wall_objects.setup_wall_placement(
        boundary_groups=boundary_groups, room_type_map=room_type_map, partial_house=partial_house,
        wall_map=wall_map, rooms=rooms,
    )
    televisions = made_once(_wall_televisions(split))
    if len(televisions.frame) == 0:
        return rooms_lines_df_map, wall_object_heights_per_room
    tvs_per_room = defaultdict(int)
    sizes = televisions.column("xSize")
    min_asset_size = sizes.min()
    for room_id, room_lines in rooms_lines_df_map.items():
        if (room_type_map[room_id] not in wall_objects.ROOMS_WITH_WALL_TELEVISIONS
                or random.random() > wall_objects.ROOMS_WITH_WALL_TELEVISIONS[room_type_map[room_id]]["p"]):
            continue
        room_has_television = False
        for asset in rooms[room_id].assets:
            if isinstance(asset, AssetGroup):
                for obj in asset.objects:
                    if asset_id_database[obj["assetId"]]["objectType"] == "Television":
                        room_has_television = True
            elif asset_id_database[asset.asset_id]["objectType"] == "Television":
                room_has_television = True
            if room_has_television:
                break
        if room_has_television:
            continue
        room_lines = [line for line in room_lines if line["length"] > min_asset_size]
        if not room_lines:
            break
        room_line = random.choices(population=room_lines, weights=[line["length"] for line in room_lines], k=1)[0]
        asset = televisions.drawn(sample_position(np.flatnonzero(sizes < room_line["length"])))
        line_string = _hang_on_wall(partial_house, f"{room_id}|{len(rooms[room_id].assets)}", room_line, asset,
                                    wall_map, wall_object_heights_per_room[room_id], ceiling_height)
        if isinstance(line_string, MultiLineString):
            line_strings_to_add = [ls for ls in line_string.geoms]
        elif line_string.length:
            line_strings_to_add = [line_string]
        else:
            line_strings_to_add = []
        rooms_lines_df_map[room_id] = [line for line in rooms_lines_df_map[room_id] if line is not room_line] + [
            _line_record(line_string, room_line["wallId"]) for line_string in line_strings_to_add]
        tvs_per_room[room_id] += 1
    return tvs_per_room, rooms_lines_df_map, wall_object_heights_per_room


def add_paintings(partial_house, rooms, split, wall_map, ceiling_height, tvs_per_room, rooms_lines_df_map,
                  wall_object_heights_per_room) -> None:
    """`wall_objects.add_paintings`, stock line by line but for a room's wall lines held as a list
    of records and the paintings as KeptRows of the frame made once.

    Stock filters, drops and appends rows of a room's wall-lines frame; a list of its records,
    filtered, with the chosen row removed and new rows appended, holds the same rows in the same
    order (`concat(ignore_index=True)` renumbers labels, which serve only as the population of a
    `random.choices` whose draw depends on the weights alone). A record holds Python floats where
    `.loc` gives numpy ones: the same numbers, in the same float64 arithmetic. A painting is drawn
    by `sample_position` and read as stock reads the one-row frame `.sample()` returns (a DrawnRow); dropping it narrows
    the mask.
    """
    paintings = _asset_rows(split, "Painting")
    sizes = paintings.column("xSize")
    max_paintings_in_rooms = random.choices(k=len(rooms_lines_df_map), **wall_objects.PAINTINGS_PER_ROOM)
    min_painting_size = sizes.min() if len(sizes) else np.nan  # Series.min() of no values is NaN
    for max_paintings_in_room, (room_id, room_lines_df) in zip(max_paintings_in_rooms, rooms_lines_df_map.items()):
        room_lines = list(room_lines_df)
        for painting_i in range(max_paintings_in_room):
            room_lines = [line for line in room_lines if line["length"] > min_painting_size]
            if not room_lines or not paintings.keep.any():
                break
            room_line_i = random.choices(
                population=range(len(room_lines)), weights=[line["length"] for line in room_lines], k=1
            )[0]
            room_line = room_lines[room_line_i]
            position = sample_position(np.flatnonzero(paintings.keep & (sizes < room_line["length"])))
            painting = paintings.drawn(position)
            painting_id = f"{room_id}|{len(rooms[room_id].assets) + painting_i + tvs_per_room[room_id]}"
            line_string = _hang_on_wall(partial_house, painting_id, room_line, painting, wall_map,
                                        wall_object_heights_per_room[room_id], ceiling_height)
            del room_lines[room_line_i]
            if isinstance(line_string, MultiLineString):
                line_strings_to_add = [ls for ls in line_string.geoms if ls.length > min_painting_size]
            elif line_string.length > min_painting_size:
                line_strings_to_add = [line_string]
            else:
                line_strings_to_add = []
            room_lines.extend(_line_record(line_string, room_line["wallId"]) for line_string in line_strings_to_add)
            if not wall_objects.ALLOW_DUPLICATE_PAINTINGS_IN_HOUSE:
                paintings.keep &= paintings.frame.index != paintings.frame.index[position]  # drop(label)
                kept_sizes = sizes[paintings.keep]
                min_painting_size = kept_sizes.min() if len(kept_sizes) else np.nan


def add_windows(partial_house, rooms, boundary_groups, split, room_type_map, wall_map, ceiling_height) -> None:
    """`wall_objects.add_windows`, stock line by line but for a room's wall lines held as a list of
    records (filtered as stock filters its frame, keeping the order; see `add_paintings`) and
    windows drawn by `sample_position`, each read as stock reads the one-row frame `.sample()` returns (a DrawnRow)."""
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
    windows = _asset_rows(split, "Window")
    sizes = windows.column("xSize")
    min_window_size = sizes.min() if len(sizes) else np.nan  # Series.min() of no values is NaN
    partial_house.windows = []
    max_windows_in_rooms = random.choices(k=len(rooms_lines_df_map), **wall_objects.WINDOWS_PER_ROOM)
    for max_windows_in_room, (room_id, room_lines_df) in zip(max_windows_in_rooms, rooms_lines_df_map.items()):
        room_lines = [line for line in room_lines_df
                      if line["wallId"] not in remove_wall_ids and line["length"] > min_window_size]
        for window_i in range(max_windows_in_room):
            if not room_lines:
                break
            room_line = random.choices(population=room_lines, weights=[line["length"] for line in room_lines], k=1)[0]
            window = windows.drawn(sample_position(np.flatnonzero(sizes < room_line["length"])))
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
