"""Composition tables and conceptual neighbourhoods of RCC-8 and of the nine point directions,
computed from configurations rather than typed in (docs/semantics.md section 19).

* Composition: R belongs to R1 o R2 when some x, y, z have R1(x, y), R2(y, z) and R(x, z). RCC-8:
  every triple of axis-aligned rectangles with corners on the integers 0..RECTANGLE_GRID; the nine
  directions: every triple of points on the integers 0..POINT_GRID per axis. Configurations only
  ever show possible relations, so each cell is a lower bound; these grids realise every cell
  (tests/spatial/test_calculi.py compares both tables with derivations of their own, and a larger
  grid adds nothing).
* Conceptual neighbourhood: S follows R directly when some configuration P shows S and every
  configuration close enough to P in some direction shows R, so that a continuous motion or
  deformation passes from R to S with nothing in between. P: two rectangles (or points) with
  coordinates 1, 4, ..., 1 + 3 * MOVE_GRID; P + v: each coordinate moved by -1, 0 or +1 (any
  edges moved a little, the rectangles staying rectangles). Coordinates of P are 3 apart or equal,
  and a move changes a difference by at most 2, so P + v keeps every strict order of P and breaks
  each equality either way: R is the relation of P + v, S that of P. Reversing time gives S to R,
  so the graph is symmetric.

Relations are the ones rows use: RCC-8 by `topology.rcc8_of_matrix` of Shapely's DE-9IM (the rule
footprints get), directions by `relations.direction` (the grid's rule). Two rectangles relate as
the two whose coordinates are replaced by their ranks on each axis (0..3), so Shapely relates the
36 x 36 rectangles on 0..3 once and every other pair is looked up. Shapely is used here, at build
time only: rows carry the answers, and evaluation reads those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from itertools import product

import numpy as np
import shapely

from pipeline.spatial.relations import DIRECTIONS, direction
from pipeline.spatial.topology import RCC8, rcc8_of_matrix

RECTANGLE_GRID = 5  # corners on 0..5: 225 rectangles realise every RCC-8 composition (0..4 misses some)
POINT_GRID = 2  # points on 0..2 per axis realise every direction composition (three values per axis)
MOVE_GRID = 2  # P's coordinates 1, 4, 7, moved by one: every neighbour (1..10 adds none)

Table = dict[tuple[str, str], tuple[str, ...]]
Neighbours = dict[str, tuple[str, ...]]


def rectangles(values: Sequence[int]) -> np.ndarray:
    """Every axis-aligned rectangle with corners at these values, one row (x from, x to, y from, y to) each."""
    spans = [(low, high) for low in values for high in values if low < high]
    return np.array([(x0, x1, y0, y1) for x0, x1 in spans for y0, y1 in spans])


@cache
def _ranked_rcc8() -> np.ndarray:
    """The RCC-8 relation (position in RCC8) of two rectangles with corners on 0..3, indexed by
    their eight coordinates: Shapely's DE-9IM of each pair."""
    small = rectangles(range(4))
    boxes = shapely.box(small[:, 0], small[:, 2], small[:, 1], small[:, 3])
    matrices = shapely.relate(boxes[:, None], boxes[None, :])
    table = np.full((4,) * 8, -1, np.int8)
    position = {code: k for k, code in enumerate(RCC8)}
    for a, b in product(range(len(small)), repeat=2):
        table[(*small[a][:2], *small[b][:2], *small[a][2:], *small[b][2:])] = position[rcc8_of_matrix(matrices[a, b])]
    return table


def rcc8_of_rectangles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The RCC-8 relation (position in RCC8) of each rectangle of `a` to the one of `b` in the same row."""
    axes = []
    for axis in (slice(0, 2), slice(2, 4)):
        values = np.concatenate([a[:, axis], b[:, axis]], axis=1)  # a's two ends, then b's
        axes.append((values[:, None, :] < values[:, :, None]).sum(axis=2))  # how many of the four lie below
    return _ranked_rcc8()[tuple(np.concatenate(axes, axis=1).T)]


def rcc8_matrix(shapes: np.ndarray) -> np.ndarray:
    """The RCC-8 relation of every rectangle to every other."""
    count = len(shapes)
    return rcc8_of_rectangles(np.repeat(shapes, count, axis=0), np.tile(shapes, (count, 1))).reshape(count, count)


@cache
def _signed_directions() -> np.ndarray:
    """The direction (position in DIRECTIONS) of a point whose offsets from another have these
    signs, indexed by sign + 1 on each axis: `relations.direction` of the two."""
    position = {code: k for k, code in enumerate(DIRECTIONS)}
    return np.array([[position[direction((si, sj), (0, 0))] for sj in (-1, 0, 1)] for si in (-1, 0, 1)], np.int8)


def directions_of_points(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The direction (position in DIRECTIONS) of each point of `a` relative to the one of `b` in the same row."""
    signs = np.sign(a - b) + 1
    return _signed_directions()[signs[:, 0], signs[:, 1]]


def direction_matrix(points: np.ndarray) -> np.ndarray:
    """The direction of every point relative to every other."""
    count = len(points)
    return directions_of_points(np.repeat(points, count, axis=0), np.tile(points, (count, 1))).reshape(count, count)


def composition(relation: np.ndarray, codes: Sequence[str]) -> Table:
    """(R1, R2) -> every R(x, z) some triple of the things related by `relation` shows, in `codes` order."""
    seen = np.zeros((len(codes),) * 3, bool)
    for y in range(len(relation)):
        seen[relation[:, y][:, None], relation[y, :][None, :], relation] = True
    return {(first, second): tuple(codes[k] for k in np.flatnonzero(seen[a, b]))
            for a, first in enumerate(codes) for b, second in enumerate(codes)}


@cache
def rcc8_composition() -> Table:
    return composition(rcc8_matrix(rectangles(range(RECTANGLE_GRID + 1))), RCC8)


@cache
def direction_composition() -> Table:
    return composition(direction_matrix(np.array(list(product(range(POINT_GRID + 1), repeat=2)))), DIRECTIONS)


def neighbourhood(things: np.ndarray, relate: Callable[[np.ndarray, np.ndarray], np.ndarray],
                  codes: Sequence[str]) -> Neighbours:
    """Each relation's direct successors under small moves (module docstring): `things` are the
    rectangles or points of P, one row of coordinates each; `relate(a, b)` relates rows pairwise."""
    steps = np.array(list(product((-1, 0, 1), repeat=things.shape[1])))
    follows = np.zeros((len(codes), len(codes)), bool)
    for a, b in product(things, repeat=2):
        moved_a = np.repeat(a + steps, len(steps), axis=0)
        moved_b = np.tile(b + steps, (len(steps), 1))
        follows[relate(moved_a, moved_b), relate(a[None], b[None])[0]] = True
    follows |= follows.T  # a path run backwards
    np.fill_diagonal(follows, False)
    return {code: tuple(codes[k] for k in np.flatnonzero(follows[r])) for r, code in enumerate(codes)}


def _corners() -> list[int]:
    return [1 + 3 * k for k in range(MOVE_GRID + 1)]


@cache
def rcc8_neighbourhood() -> Neighbours:
    return neighbourhood(rectangles(_corners()), rcc8_of_rectangles, RCC8)


@cache
def direction_neighbourhood() -> Neighbours:
    return neighbourhood(np.array(list(product(_corners(), repeat=2))), directions_of_points, DIRECTIONS)
