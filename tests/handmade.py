"""Scene records made by hand, for testing the stages after sampling without running ProcTHOR."""

from __future__ import annotations

import math
from random import Random

from pipeline.grid import walls_touched
from pipeline.records import Opening, Scene, SceneObject

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
