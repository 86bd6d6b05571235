"""Scene records made by hand, for testing the stages after sampling without running ProcTHOR."""

from __future__ import annotations

import math
from random import Random

from pipeline.scene.footprints import walls_touched
from pipeline.scene.records import Opening, Scene, SceneObject

TYPES = ("Bed", "Dresser", "Chair", "Chair", "SideTable", "HousePlant", "Sofa", "Painting", "Desk")


def box(x: float, z: float, width: float, depth: float, yaw: float) -> tuple[tuple[float, float], ...]:
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    corners = [(-width / 2, -depth / 2), (width / 2, -depth / 2), (width / 2, depth / 2), (-width / 2, depth / 2)]
    return tuple((round(x + u * c + v * s, 6), round(z - u * s + v * c, 6)) for u, v in corners)


def handmade_scene(index: int, count: int = 7, side: float = 5.4, seed: int = 7) -> Scene:
    """A room with `count` prominent objects at seeded places, some against walls, with a repeated type."""
    rng = Random(index)
    objects = []
    for k in range(count):
        width, depth = rng.uniform(0.3, 1.2), rng.uniform(0.3, 1.2)
        reach = max(width, depth) / 2
        x, z = rng.uniform(reach, side - reach), rng.uniform(reach, side - reach)
        if k % 3 == 0:  # against the west or north wall
            x = reach if k % 2 else x
            z = side - reach if not k % 2 else z
        yaw = rng.choice([0, 90, 180, 270])
        footprint = box(x, z, width, depth, yaw)
        objects.append(SceneObject(
            id=f"obj|{k}", asset_id=f"Asset_{k}", type=TYPES[k % len(TYPES)], x=x, z=z, yaw=float(yaw),
            size=(width, 1.0, depth), footprint=footprint, walls=walls_touched(footprint, side),
            wall_hung=False, prominent=True,
        ))
    door = Opening("door", "south", (side / 2 - 0.5, 0.0), (side / 2 + 0.5, 0.0))
    return Scene(seed=seed, index=index, source="synthetic", versions=(("roomspace", "test"),),
                 room_type="Bedroom", side=side, openings=(door,), objects=tuple(objects))


# Rooms for the renderer: every object placed by hand, with the height of its base.
SIDE = 5.4
WALL_HEIGHT = 2.7


def thing(k: int, kind: str, x: float, z: float, width: float, depth: float, height: float = 0.8,
          yaw: float = 0.0, bottom: float = 0.0, wall_hung: bool = False) -> tuple[SceneObject, float]:
    """A prominent object and the height of its base above the floor."""
    footprint = box(x, z, width, depth, yaw)
    obj = SceneObject(id=f"obj|{k}", asset_id=f"Asset_{k}", type=kind, x=x, z=z, yaw=yaw % 360,
                      size=(width, height, depth), footprint=footprint, walls=walls_touched(footprint, SIDE),
                      wall_hung=wall_hung, prominent=True)
    return obj, bottom


def room(*things: tuple[SceneObject, float], index: int = 0, windows: tuple[Opening, ...] = ()) -> tuple[Scene, dict]:
    """A scene record with a door centred on the south wall, and the house JSON the renderer reads heights from."""
    door = Opening("door", "south", (SIDE / 2 - 0.6, 0.0), (SIDE / 2 + 0.6, 0.0))
    objects = tuple(obj for obj, _ in things)
    scene = Scene(seed=7, index=index, source="procthor-offline", versions=(("roomspace", "test"),),
                  room_type="Bedroom", side=SIDE, openings=(door, *windows), objects=objects)
    hole = {"boundingBox": {"min": {"y": 0.0}, "max": {"y": 2.1}}}
    window = {"boundingBox": {"min": {"y": 1.0}, "max": {"y": 2.0}}}
    house = {
        "rooms": [{"floorPolygon": []}],
        "walls": [{"polygon": [{"x": 0, "y": 0, "z": 0}, {"x": 0, "y": WALL_HEIGHT, "z": 0}]}],
        "doors": [hole],
        "windows": [window for _ in windows],
        "objects": [{"id": obj.id, "position": {"x": obj.x, "y": bottom + obj.size[1] / 2, "z": obj.z}}
                    for obj, bottom in things],
    }
    return scene, house
