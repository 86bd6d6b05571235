"""Low-poly shapes of the objects, built from their footprint and height (pipeline/data/shapes.json).

Each object type is a few parts, each a prism inside the object's bounding box: a bed is a frame,
a mattress, a blanket, two pillows and a headboard; a chair four legs, a seat and a back; a floor
lamp a base, a pole and a shade. A part's place is given in fractions of the box (shapes.json's
`_about`), so a part never leaves the object's footprint or its height: a shape changes how an
object looks, never where it is. The perspective views (pipeline.render.door) draw every face of
every part through their z-buffer; the plan (pipeline.render.plan) draws each part as seen from
above, lowest top first. Parts are made in a fixed order from the scene record alone, so the
same scene always gives the same shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from pipeline.data import data_json
from pipeline.render.style import object_colour, rgb
from pipeline.scene.records import SceneObject

_T = math.tan(math.radians(22.5))
# A regular octagon touching the four sides of the square [-1, 1]^2, counter-clockwise.
OCTAGON = ((1, -_T), (1, _T), (_T, 1), (-_T, 1), (-1, _T), (-1, -_T), (-_T, -1), (_T, -1))
SQUARE = ((-1, -1), (1, -1), (1, 1), (-1, 1))


@cache
def shape_data() -> dict:
    return data_json("shapes.json")


def parts_of(object_type: str) -> list[dict]:
    """The parts shapes.json gives a type (its default box if it gives none)."""
    data = shape_data()
    return data["types"].get(object_type, data["default"])


@dataclass(frozen=True)
class Solid:
    """A prism: two parallel convex polygons of as many corners (world points, x east, y up, z
    north) joined by a quadrilateral per side, drawn in one colour and made of one material
    (shapes.json's `materials`: what a renderer that shades materials makes of it)."""

    start: np.ndarray  # (n, 3)
    end: np.ndarray  # (n, 3)
    colour: tuple[int, int, int]
    material: str = "plastic"

    def faces(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every face as (polygon (k, 3), outward unit normal); faces of no area are left out."""
        n = len(self.start)
        centre = (self.start.sum(axis=0) + self.end.sum(axis=0)) / (2 * n)
        following = np.roll(np.arange(n), -1)
        sides = np.stack([self.start, self.start[following], self.end[following], self.end], axis=1)  # (n, 4, 3)
        polygons = [self.start[::-1], self.end, *sides]
        firsts = np.array([p[:3] for p in polygons])  # (faces, 3, 3): each face's first three corners
        normals = np.cross(firsts[:, 1] - firsts[:, 0], firsts[:, 2] - firsts[:, 0])
        lengths = np.linalg.norm(normals, axis=1)
        outward = np.array([p.mean(axis=0) for p in polygons]) - centre
        out = []
        for polygon, normal, length, away in zip(polygons, normals, lengths, outward):
            if length < 1e-12:
                continue
            normal = normal / length
            out.append((polygon, -normal if normal @ away < 0 else normal))
        return out

    @property
    def top(self) -> float:
        return float(max(self.start[:, 1].max(), self.end[:, 1].max()))

    def from_above(self) -> tuple[list[tuple[float, float]], list[tuple[float, float]] | None]:
        """(its outline seen from above, (x, z) points; the polygon of its upward face, if it has one)."""
        points = np.concatenate([self.start, self.end])[:, [0, 2]]
        upward = self.end if self.end[:, 1].mean() > self.start[:, 1].mean() + 1e-9 else None
        return _hull(points), None if upward is None else [(float(x), float(z)) for x, _, z in upward]


def solids(obj: SceneObject, bottom: float, top: float, plain: bool = False) -> list[Solid]:
    """The parts of `obj`, standing between heights `bottom` and `top`, in shapes.json's order;
    `plain`: the object's whole box instead (a block that only marks where the object is)."""
    corners = np.asarray(obj.footprint, dtype=float)  # own-frame back-left, back-right, front-right, front-left
    origin, across, ahead = corners[0], corners[1] - corners[0], corners[3] - corners[0]
    height = top - bottom
    base = object_colour(obj)
    out = []
    for part in shape_data()["default"] if plain else parts_of(obj.type):
        x0, x1, y0, y1, z0, z1 = part["box"]
        outline = OCTAGON if part.get("round") else SQUARE
        if part.get("axis", "y") == "y":  # the outline in the (x, z) plane, extruded up
            flat = [((x0 + x1) / 2 + (x1 - x0) / 2 * a, (z0 + z1) / 2 + (z1 - z0) / 2 * b) for a, b in outline]
            taper = part.get("taper", 1.0)
            wide = [((x0 + x1) / 2 + (x1 - x0) / 2 * a * taper, (z0 + z1) / 2 + (z1 - z0) / 2 * b * taper)
                    for a, b in outline]
            start = [(u, y0, v) for u, v in flat]
            end = [(u, y1, v) for u, v in wide]
        else:  # axis z: the outline in the (x, y) plane, extruded from back to front
            flat = [((x0 + x1) / 2 + (x1 - x0) / 2 * a, (y0 + y1) / 2 + (y1 - y0) / 2 * b) for a, b in outline]
            start = [(u, t, z0) for u, t in flat]
            end = [(u, t, z1) for u, t in flat]
        start_points, end_points = (np.array([_place(origin, across, ahead, bottom, height, p) for p in points])
                                    for points in (start, end))
        out.append(Solid(start_points, end_points, part_colour(obj, part, base), part_material(obj, part)))
    return out


def _place(origin, across, ahead, bottom: float, height: float, point) -> tuple[float, float, float]:
    """A point of the box in fractions (across, up, back to front) -> world metres (x, y, z)."""
    u, t, v = point
    x, z = origin + u * across + v * ahead
    return (float(x), bottom + t * height, float(z))


def part_colour(obj: SceneObject, part: dict, base: tuple[int, int, int]) -> tuple[int, int, int]:
    """A part's fill: its accent colour or the type's, times its tone; every part of an object that
    is not prominent is the clutter grey, toned."""
    fill = base
    if obj.prominent and "colour" in part:
        fill = rgb(shape_data()["accents"][part["colour"]])
    tone = part.get("tone", 1.0)
    return tuple(min(255, round(c * tone)) for c in fill)


def part_material(obj: SceneObject, part: dict) -> str:
    """A part's material: its own, else its accent's, else its object type's (shapes.json's `_about`)."""
    data = shape_data()
    if "material" in part:
        return part["material"]
    if "colour" in part:
        return data["accent_materials"][part["colour"]]
    return data["materials"].get(obj.type, data["materials"]["_other"])


def _hull(points: np.ndarray) -> list[tuple[float, float]]:
    """The convex hull of (x, z) points, counter-clockwise (Andrew's monotone chain)."""
    ordered = sorted({(float(x), float(z)) for x, z in points})
    if len(ordered) < 3:
        return ordered

    def half(seq):
        chain: list[tuple[float, float]] = []
        for p in seq:
            while len(chain) >= 2 and ((chain[-1][0] - chain[-2][0]) * (p[1] - chain[-2][1])
                                       - (chain[-1][1] - chain[-2][1]) * (p[0] - chain[-2][0])) <= 0:
                chain.pop()
            chain.append(p)
        return chain

    lower, upper = half(ordered), half(ordered[::-1])
    return lower[:-1] + upper[:-1]
