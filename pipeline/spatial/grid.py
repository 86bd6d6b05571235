"""The rasterised domain: the one definition of cells and of snapping to wall contact (docs/semantics.md section 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.errors import RoomspaceError
from pipeline.scene.footprints import walls_touched
from pipeline.scene.records import Point

GRID_SIZES = (9, 12)  # d: the room is a d x d grid of cells
CENTRE_TOLERANCE = 1e-9  # metres: float noise allowed on a centre lying on a wall

Cell = tuple[int, int]  # (i, j): i grows eastward, j northward; (0, 0) is the south-west corner


def check_grid_size(d: int) -> int:
    """d itself, or a RoomspaceError when it is not one of GRID_SIZES."""
    if d not in GRID_SIZES:
        raise RoomspaceError(f"grid size d={d!r} is not one of {GRID_SIZES}")
    return d


def is_border(cell: Cell, d: int) -> bool:
    """TPP on the grid: the cell lies in the outer row or column."""
    i, j = cell
    return i in (0, d - 1) or j in (0, d - 1)


@dataclass(frozen=True)
class Raster:
    """A room's objects on the d x d grid, snapped so that the cells agree with wall contact."""

    d: int
    side: float  # metres
    cells: tuple[Cell, ...]  # per object, in input order
    walls: tuple[tuple[str, ...], ...]  # per object: the walls its footprint touches

    @property
    def tpp(self) -> tuple[bool, ...]:
        """Per object: touches any wall (TPP), else NTPP."""
        return tuple(bool(w) for w in self.walls)


def rasterise(
    centres: Sequence[Point], footprints: Sequence[Sequence[Point]], side: float, d: int
) -> Raster:
    """The snapped cells of objects with these centres and footprints in the room [0, side]^2."""
    check_grid_size(d)
    if not side > 0:
        raise RoomspaceError(f"room side must be positive, got {side!r}")
    if len(centres) != len(footprints):
        raise RoomspaceError(f"{len(centres)} centres but {len(footprints)} footprints")
    cells = []
    walls = []
    for k, (centre, footprint) in enumerate(zip(centres, footprints)):
        if len(footprint) < 3:
            raise RoomspaceError(f"object {k}: a footprint needs at least 3 corners, got {len(footprint)}")
        touched = walls_touched(footprint, side)
        cells.append(_snap(_cell_of(k, centre, side, d), touched, d))
        walls.append(touched)
    return Raster(d=d, side=side, cells=tuple(cells), walls=tuple(walls))


def _cell_of(k: int, centre: Point, side: float, d: int) -> Cell:
    x, z = centre
    lo, hi = -CENTRE_TOLERANCE, side + CENTRE_TOLERANCE
    if not (lo <= x <= hi and lo <= z <= hi):
        raise RoomspaceError(f"object {k}: centre ({x}, {z}) lies outside the room [0, {side}]^2")
    s = side / d
    # max(0, ...) only absorbs the tolerated float noise below 0.
    return (max(0, min(d - 1, math.floor(x / s))), max(0, min(d - 1, math.floor(z / s))))


def _snap(cell: Cell, touched: tuple[str, ...], d: int) -> Cell:
    """Move a TPP cell onto the border row/column of each wall touched; an NTPP cell off the border."""
    i, j = cell
    if not touched:
        return (min(max(i, 1), d - 2), min(max(j, 1), d - 2))
    return (_snap_axis(i, "west" in touched, "east" in touched, d),
            _snap_axis(j, "south" in touched, "north" in touched, d))


def _snap_axis(k: int, low: bool, high: bool, d: int) -> int:
    """One axis of a TPP cell: onto the low (west/south) or high (east/north) border it touches."""
    if low and high:
        # An object spanning the room touches two opposite walls; the border nearer its centre's
        # cell keeps it TPP and moves it least.
        return 0 if 2 * k < d - 1 else d - 1
    if low:
        return 0
    if high:
        return d - 1
    return k
