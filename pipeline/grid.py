"""The rasterised domain: the one definition of cells and wall contact (design.md section 3)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.records import Point

WALL_TOLERANCE = 0.1  # metres: a footprint this close to a wall touches it (TPP)
WALLS = ("south", "east", "north", "west")


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
