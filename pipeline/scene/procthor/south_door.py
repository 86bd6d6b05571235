"""The door stage of a RoomSpace room: one outdoor door centred on the south wall (z = 0).

ProcTHOR's `add_doors` puts the one outdoor door of a single room at a random place on a random
wall; RoomSpace's north-facing view needs it centred on the south wall. The door is built with
ProcTHOR's own `ProceduralDoor` and door assets, so the house-JSON entry and the floor area kept
free in front of it are exactly what ProcTHOR makes for an outdoor door; windows then avoid that
wall (AI2-THOR cannot put a door and a window on one wall) and paintings avoid the door.
"""

from __future__ import annotations

import random
from collections import defaultdict

from pipeline.errors import RoomspaceError


def south_door_stage(partial_house, split: str) -> dict[int, list]:
    """ProcTHOR door stage for one room: one outdoor door centred on the south wall (z = 0).

    Replaces `procthor.generation.doors.add_doors` (same arguments, same result: the polygons
    each room keeps free for the door). The door asset is drawn from ProcTHOR's doorways of the
    split that fit the wall; the door is built by ProcTHOR's `ProceduralDoor` as an outdoor,
    closed door (as ProcTHOR makes outdoor doors), with its wall-hole box centred on the wall.
    """
    from procthor.constants import OUTDOOR_ROOM_ID
    from procthor.databases import asset_database, wall_holes
    from procthor.generation.doors import PADDING_IN_FRONT_OF_DOOR, PREFERRED_ENTRANCE_PADDING, ProceduralDoor
    from procthor.utils.types import BoundingBox, Vector3

    rooms = list(partial_house.room_spec.room_type_map)
    if len(rooms) != 1:
        raise RoomspaceError(f"the south-door stage makes one-room houses, got rooms {rooms}")
    room = rooms[0]
    boundary = partial_house.house_structure.boundary_groups[(min(room, OUTDOOR_ROOM_ID), max(room, OUTDOOR_ROOM_ID))]
    min_z = min(min(z0, z1) for (_, z0), (_, z1) in boundary)
    south = [((x0, z0), (x1, z1)) for (x0, z0), (x1, z1) in boundary if z0 == z1 == min_z]
    if len(south) != 1:
        raise RoomspaceError(f"expected one south wall, got {south}")
    (x0, z0), (x1, _) = south[0]
    min_x, max_x = min(x0, x1), max(x0, x1)
    wall_size = max_x - min_x
    wall_position_id = f"{min_x:.2f}|{z0:.2f}|{max_x:.2f}|{z0:.2f}"
    wall = next(w for w in partial_house.walls if w["id"] == f"wall|{room}|{wall_position_id}")

    doorways = [
        d
        for d in asset_database["Doorway"]
        if d["split"] == split and d["states"]["open"]["boundingBox"]["x"] < wall_size
    ]
    if not doorways:
        raise RoomspaceError(f"no ProcTHOR doorway fits a {wall_size:.2f} m wall")
    asset = random.choice(doorways)
    width = asset["boundingBox"]["x"]
    # The house JSON stores the box shifted by the hole's offset: centre that stored box.
    offset_x = wall_holes[asset["assetId"]]["offset"]["x"]
    start = (wall_size - width) / 2 + offset_x
    door = ProceduralDoor(
        room_0_id=room,
        room_1_id=OUTDOOR_ROOM_ID,
        wall_0=wall,
        wall_1=None,
        wall_position_id=wall_position_id,
        bounding_box=BoundingBox(
            min=Vector3(x=start, y=0, z=0),
            max=Vector3(x=start + width, y=asset["boundingBox"]["y"], z=0),
        ),
        door_width=width,
        door_open_size=asset["states"]["open"]["boundingBox"]["z"],
        start_door_position=start,
        min_x_wall=min_x,
        max_x_wall=max_x,
        min_z_wall=z0,
        max_z_wall=z0,
        asset_id=asset["assetId"],
        is_open=False,
    )
    partial_house.doors = [door.asdict()]
    keep_free = door.polygon(entrance_padding=PREFERRED_ENTRANCE_PADDING, in_front_padding=PADDING_IN_FRONT_OF_DOOR)
    polygons = defaultdict(list)
    for room_id_ in (room, OUTDOOR_ROOM_ID):  # as ProcTHOR's add_door_meta does
        polygons[room_id_].append(keep_free)
    return polygons

