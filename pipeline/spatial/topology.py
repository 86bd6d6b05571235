"""RCC-8 between footprints, and between each footprint and the floor of the room (docs/semantics.md section 10).

Footprints are snapped to a grid of PRECISION metres before any predicate: exact contact is
fragile in floats, and the rcc8 setting's stories state the snapped corners, so a reader who
computes with the stated numbers gets exactly the relation computed here. The relation is read
off one DE-9IM matrix, EQ tested first.
"""

from __future__ import annotations

from collections.abc import Sequence

import shapely
from shapely.geometry import Polygon, box
from shapely.geometry.polygon import orient

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.records import Point
from pipeline.spatial.facts import Fact

PRECISION = 0.001  # metres: footprints are snapped to this grid, and stories state them to the millimetre
ROOM = "room"  # the name of the floor of the room in topology facts and rcc8 queries
_TABLE = {entry["code"]: entry for entry in data_json("rcc8.json")["codes"]}
RCC8 = tuple(_TABLE)  # canonical order


def snapped_footprint(points: Sequence[Point]) -> tuple[Point, ...]:
    """The footprint on the PRECISION grid, counter-clockwise, not closed: the corners a story states."""
    polygon = shapely.set_precision(Polygon(points), PRECISION)
    if not isinstance(polygon, Polygon) or polygon.is_empty:
        raise RoomspaceError(f"footprint {list(points)} does not survive snapping to {PRECISION} m")
    ring = orient(polygon, 1.0).exterior.coords[:-1]
    return tuple((round(x, 3) + 0.0, round(z, 3) + 0.0) for x, z in ring)  # + 0.0: no "-0" in a story


def stated_side(side: float) -> float:
    """The room's side on the PRECISION grid: the floor is the square [0, stated_side]^2."""
    return round(side, 3)


def floor(side: float) -> Polygon:
    return box(0.0, 0.0, stated_side(side), stated_side(side))


def rcc8(a: Polygon, b: Polygon) -> str:
    """The RCC-8 relation of region a to region b (both already snapped)."""
    return rcc8_of_matrix(a.relate(b))


def rcc8_of_matrix(matrix: str) -> str:
    """The RCC-8 relation a DE-9IM matrix of two regions shows (Shapely's `relate` of a to b)."""
    ii, ib, ie, bi, bb, be, ei, eb, _ = matrix  # interior, boundary, exterior of a x those of b
    if ii != "F" and ie == be == ei == eb == "F":
        return "EQ"
    if ii == "F":
        return "DC" if ib == bi == bb == "F" else "EC"
    if ie == be == "F":
        return "TPP" if bb != "F" else "NTPP"
    if ei == eb == "F":
        return "TPPi" if bb != "F" else "NTPPi"
    return "PO"


def rcc8_converse(code: str) -> str:
    return _TABLE[code]["converse"]


def neighbours(code: str) -> tuple[str, ...]:
    """Relations one continuous change away from `code`: the near misses a No question asks about."""
    return tuple(_TABLE[code]["neighbours"])


def rcc8_question(code: str) -> str:
    return _TABLE[code]["question"]


def topology_facts(names: Sequence[str], snapped: Sequence[Sequence[Point]], side: float) -> tuple[Fact, ...]:
    """RCC-8 facts of every pair of objects (in the given order), then of each object and the room.

    The footprints come snapped (`snapped_footprint`): a room snaps each object once, whatever
    its configurations choose."""
    regions = [Polygon(points) for points in snapped]
    room = floor(side)
    pairs = [Fact(names[a], rcc8(regions[a], regions[b]), names[b])
             for a in range(len(names)) for b in range(a + 1, len(names))]
    return tuple(pairs) + tuple(Fact(name, rcc8(region, room), ROOM) for name, region in zip(names, regions))
