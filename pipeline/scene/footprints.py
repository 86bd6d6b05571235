"""Footprints: an object's bounding-box base on the floor, and the walls it touches (docs/semantics.md sections 2-3).

Footprint. An object's footprint is its asset's bounding box base (x = width, z = depth, in the
asset's own frame) rotated by its yaw about its centre. The sign of the yaw is ProcTHOR's (and
Unity's): a yaw of theta turns the object clockwise seen from above (x east, z north), so the
object's own +z (its front) points to (sin theta, cos theta) and an own-frame offset (dx, dz)
lands at

    (x + dx cos theta + dz sin theta,  z - dx sin theta + dz cos theta).

This is the rotation ProcTHOR itself uses to place the members of an asset group
(`ProceduralRoom.sample_place_asset_in_rectangle`, rotation by -theta) and to box them
(`AssetGroupGenerator.rotate_bounding_box`). A yaw of 90 or 270 degrees swaps the extents, as
ProcTHOR's `rotated` flag does when it fits a box into a free rectangle. Any yaw is allowed
(house plants and some asset-group members are turned by arbitrary angles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.scene.records import WALLS, Point

WALL_TOLERANCE = 0.1  # metres: a footprint this close to a wall touches it (TPP)


def _cos_sin(yaw: float) -> tuple[float, float]:
    """cos and sin of a yaw in degrees, exact at multiples of 90 degrees."""
    quarter, rest = divmod(float(yaw), 90.0)
    if rest == 0.0:
        return ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))[int(quarter) % 4]
    radians = math.radians(yaw)
    return math.cos(radians), math.sin(radians)


def footprint(x: float, z: float, yaw: float, size: Sequence[float]) -> tuple[Point, ...]:
    """The bounding box base of an object centred at (x, z), turned by `yaw` degrees.

    `size` is the bounding box in the object's own frame: (width x, height y, depth z) as in
    `SceneObject.size`, or just (width x, depth z). Returns the four corners counter-clockwise
    (x east, z north), starting from the own-frame south-west corner, not closed.
    """
    if len(size) == 3:
        width, depth = float(size[0]), float(size[2])
    elif len(size) == 2:
        width, depth = float(size[0]), float(size[1])
    else:
        raise ValueError(f"size must be (x, y, z) or (x, z), got {tuple(size)!r}")
    if width < 0 or depth < 0:
        raise ValueError(f"size must not be negative, got {tuple(size)!r}")
    cos, sin = _cos_sin(yaw)
    half_w, half_d = width / 2, depth / 2
    corners = ((-half_w, -half_d), (half_w, -half_d), (half_w, half_d), (-half_w, half_d))
    return tuple((x + dx * cos + dz * sin, z - dx * sin + dz * cos) for dx, dz in corners)


def walls_touched(footprint: Sequence[Point], side: float) -> tuple[str, ...]:
    """The walls of the room [0, side]^2 that the footprint comes within WALL_TOLERANCE of."""
    xs = [x for x, _ in footprint]
    zs = [z for _, z in footprint]
    near = {
        "south": min(zs) <= WALL_TOLERANCE,
        "east": max(xs) >= side - WALL_TOLERANCE,
        "north": max(zs) >= side - WALL_TOLERANCE,
        "west": min(xs) <= WALL_TOLERANCE,
    }
    return tuple(wall for wall in WALLS if near[wall])
