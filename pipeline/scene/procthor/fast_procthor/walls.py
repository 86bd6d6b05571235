"""Paintings and windows with a room's free wall lines as lists of records (item 6 of the package docstring)."""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np
import pandas as pd
import procthor.generation.wall_objects as wall_objects
from procthor.utils.types import BoundingBox, Object, Vector3, Window
from shapely.geometry import MultiLineString

from pipeline.scene.procthor.fast_procthor.rows import KeptRows, records, sample_position

STOCK_GET_ASSETS_DF = wall_objects.get_assets_df


@lru_cache(maxsize=None)
def _assets_frame(split: str, asset_type: str) -> pd.DataFrame:
    return STOCK_GET_ASSETS_DF(split=split, asset_type=asset_type)


def get_assets_df(split: str, asset_type: str) -> pd.DataFrame:
    """`wall_objects.get_assets_df`, made once per split and type and copied for every call: it reads
    only ProcTHOR's asset database, loaded once at import and never changed."""
    return _assets_frame(split, asset_type).copy()


def add_paintings(partial_house, rooms, split, wall_map, ceiling_height, tvs_per_room, rooms_lines_df_map,
                  wall_object_heights_per_room) -> None:
    """`wall_objects.add_paintings`, stock line by line but for a room's wall lines held as a list
    of records and the paintings as KeptRows.

    Stock filters, drops and appends rows of a room's wall-lines frame; a list of its records,
    filtered, with the chosen row removed and new rows appended, holds the same rows in the same
    order (`concat(ignore_index=True)` renumbers labels, which serve only as the population of a
    `random.choices` whose draw depends on the weights alone). A record holds Python floats where
    `.loc` gives numpy ones: the same numbers, in the same float64 arithmetic. A painting is drawn
    by `sample_position` and read as the one-row frame `.sample()` returns; dropping it narrows
    the mask.
    """
    paintings = KeptRows(wall_objects.get_assets_df(split=split, asset_type="Painting"))
    sizes = paintings.column("xSize")
    max_paintings_in_rooms = random.choices(k=len(rooms_lines_df_map), **wall_objects.PAINTINGS_PER_ROOM)
    min_painting_size = sizes.min() if len(sizes) else np.nan  # Series.min() of no values is NaN
    for max_paintings_in_room, (room_id, room_lines_df) in zip(max_paintings_in_rooms, rooms_lines_df_map.items()):
        room_lines = records(room_lines_df)
        for painting_i in range(max_paintings_in_room):
            room_lines = [line for line in room_lines if line["length"] > min_painting_size]
            if not room_lines or not paintings.keep.any():
                break
            room_line_i = random.choices(
                population=range(len(room_lines)), weights=[line["length"] for line in room_lines], k=1
            )[0]
            room_line = room_lines[room_line_i]
            position = sample_position(np.flatnonzero(paintings.keep & (sizes < room_line["length"])))
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
    records (filtered as stock filters its frame, keeping the order; see `add_paintings`) and
    windows drawn by `sample_position`, each read as the one-row frame `.sample()` returns."""
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
        room_lines = [line for line in records(room_lines_df)
                      if line["wallId"] not in remove_wall_ids and line["length"] > min_window_size]
        for window_i in range(max_windows_in_room):
            if not room_lines:
                break
            room_line = random.choices(population=room_lines, weights=[line["length"] for line in room_lines], k=1)[0]
            window = windows_df.iloc[[sample_position(np.flatnonzero(sizes < room_line["length"]))]]
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
