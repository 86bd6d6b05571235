"""Relations between two shapes given by coordinates: circles, rectangles and polygons (docs/semantics.md
section 20).

A `Figure` is what a shapes row states: a circle by its centre and radius, a rectangle or polygon by
its corners, all in metres to the centimetre. Every relation is read off the stated numbers, in
whole centimetres, so that a reader who computes with them gets exactly the relation computed here:

* topological, RCC-8: circles exactly, by comparing the squared distance of the centres with the
  squared sums and differences of the radii (integers); rectangles and polygons by
  `topology.rcc8_of_matrix` of Shapely's DE-9IM on the integer corners (exact predicates).
* directional: the bearing from B's centre to A's (a circle's centre, the mean of a polygon's
  corners), clockwise from north; A is the compass direction whose 45-degree sector holds it.
  `margin` says how far the bearing is from a sector's edge.
* distance: the shortest distance between a point of A and one of B (0 when they meet), in metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapely.geometry import Polygon

from pipeline.scene.records import Point
from pipeline.spatial.relations import COMPASS
from pipeline.spatial.topology import rcc8_of_matrix

CIRCLE, RECTANGLE, POLYGON = "circle", "rectangle", "polygon"
SECTOR = 360 / len(COMPASS)


@dataclass(frozen=True)
class Figure:
    """A shape as a shapes row states it, in metres to 0.01."""

    name: str  # "A" or "B"
    kind: str  # circle, rectangle or polygon
    object_id: str  # the scene object it outlines, or "floor"
    centre: Point  # a circle's centre; a rectangle's or polygon's, the mean of its corners
    radius: float  # a circle's; 0.0 for the others
    corners: tuple[Point, ...]  # a rectangle's or polygon's, counter-clockwise, the first not repeated; () for a circle


def centimetres(value: float) -> int:
    return round(value * 100)


def _polygon(figure: Figure) -> Polygon:
    return Polygon([(centimetres(x), centimetres(y)) for x, y in figure.corners])


def _centres(a: Figure, b: Figure) -> tuple[int, int, int]:
    """The offset of A's centre from B's and its squared length, in centimetres (centres of circles)."""
    dx = centimetres(a.centre[0]) - centimetres(b.centre[0])
    dy = centimetres(a.centre[1]) - centimetres(b.centre[1])
    return dx, dy, dx * dx + dy * dy


def rcc8_of(a: Figure, b: Figure) -> str:
    """The RCC-8 relation of A to B."""
    if a.kind != CIRCLE or b.kind != CIRCLE:
        return rcc8_of_matrix(_polygon(a).relate(_polygon(b)))
    _, _, apart = _centres(a, b)
    ra, rb = centimetres(a.radius), centimetres(b.radius)
    if apart > (ra + rb) ** 2:
        return "DC"
    if apart == (ra + rb) ** 2:
        return "EC"
    if apart == 0 and ra == rb:
        return "EQ"
    if ra < rb and apart <= (rb - ra) ** 2:
        return "TPP" if apart == (rb - ra) ** 2 else "NTPP"
    if rb < ra and apart <= (ra - rb) ** 2:
        return "TPPi" if apart == (ra - rb) ** 2 else "NTPPi"
    return "PO"


def bearing(a: Figure, b: Figure) -> float | None:
    """Degrees clockwise from north of the direction from B's centre to A's; None when they coincide."""
    ax, ay = (sum(values) / len(values) for values in zip(*_points(a)))
    bx, by = (sum(values) / len(values) for values in zip(*_points(b)))
    if (ax, ay) == (bx, by):
        return None
    return math.degrees(math.atan2(ax - bx, ay - by)) % 360


def _points(figure: Figure) -> list[tuple[int, int]]:
    """What a centre is the mean of, in centimetres: a circle's centre, or the corners."""
    if figure.kind == CIRCLE:
        return [(centimetres(figure.centre[0]), centimetres(figure.centre[1]))]
    return [(centimetres(x), centimetres(y)) for x, y in figure.corners]


def direction_of(a: Figure, b: Figure) -> tuple[str, float] | None:
    """(the compass direction of A from B, degrees between the bearing and its sector's nearer edge);
    None when the centres coincide."""
    angle = bearing(a, b)
    if angle is None:
        return None
    sector = round(angle / SECTOR) % len(COMPASS)
    return COMPASS[sector], SECTOR / 2 - abs((angle - sector * SECTOR + 180) % 360 - 180)


def gap(a: Figure, b: Figure) -> float:
    """The shortest distance between a point of A and a point of B, in metres (0 when they meet)."""
    if a.kind == CIRCLE and b.kind == CIRCLE:
        _, _, apart = _centres(a, b)
        return max(0.0, math.sqrt(apart) - centimetres(a.radius) - centimetres(b.radius)) / 100
    return _polygon(a).distance(_polygon(b)) / 100
