"""Rectangles of a room's open polygon, the bulk of stock sampling's time (items 1 and 4 of the
package docstring, which say why each replacement is exact)."""

from __future__ import annotations

import numpy as np
import shapely
from procthor.generation.objects import OrthogonalPolygon

Rect = tuple[float, float, float, float]  # (x0, z0, x1, z1)
STOCK_JOIN = OrthogonalPolygon._join_neighboring_rectangles
ALL_RECTANGLES_KEPT = 64  # polygons whose rectangles are remembered (the last house's, in practice)
ONE_KEY_MAX_CODES = 50_000  # v**4 below 2**63: four codes below v make one int64 key
COPY_ORDER_MIN = 8  # from here on, `rects - {r}` iterates in the order of `rects.copy()`


def _pairs_sharing_an_edge(codes: np.ndarray, v: int) -> tuple[np.ndarray, np.ndarray]:
    """(rect1, rect2) index arrays of the rectangles that share two corners, in stock visiting order.

    `codes` holds each rectangle's (x0, z0, x1, z1) as integer codes below `v`. Edge keys:
    (x-interval, z) for the bottom and top edges, (z-interval, x) offset by v^3 for the sides;
    2 v^3 fits in an int64 for any v below a million (n rectangles have at most 4n codes).
    """
    n = len(codes)
    x0, z0, x1, z1 = codes.T
    keys = np.concatenate([(x0 * v + x1) * v + z0, (x0 * v + x1) * v + z1,
                           ((v + z0) * v + z1) * v + x0, ((v + z0) * v + z1) * v + x1])
    owner = np.tile(np.arange(n), 4)
    by_key = np.argsort(keys, kind="stable")
    keys, owner = keys[by_key], owner[by_key]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    lengths = np.diff(np.r_[starts, len(keys)])
    starts, lengths = starts[lengths > 1], lengths[lengths > 1]
    # every ordered pair of entries within one run of equal keys
    member = np.repeat(starts, lengths) + _offsets(lengths)
    run_length = np.repeat(lengths, lengths)
    rect1 = owner[np.repeat(member, run_length)]
    rect2 = owner[np.repeat(member - _offsets(lengths), run_length) + _offsets(run_length)]
    distinct = rect1 != rect2  # a rectangle's four edge keys differ: only an entry with itself repeats
    rect1, rect2 = rect1[distinct], rect2[distinct]
    visit = np.argsort(rect1 * n + rect2)
    return rect1[visit], rect2[visit]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., L-1 for each L in `lengths`, concatenated."""
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def join_neighboring_rectangles(self: OrthogonalPolygon, rects: set[Rect]) -> set[Rect]:
    if len(rects) < COPY_ORDER_MIN:
        return STOCK_JOIN(self, rects)
    corners = np.array(list(rects.copy()), dtype=float)  # rows (x0, z0, x1, z1) in visiting order
    values, codes = np.unique(corners, return_inverse=True)  # codes keep the order of the values
    v = len(values)
    codes = codes.reshape(corners.shape).astype(np.int64)
    rect1, rect2 = _pairs_sharing_an_edge(codes, v)
    # The stock expression, min(x0_0, x1_0, x1_1, x1_1) etc., under x0 < x1 and z0 < z1 (true of
    # every rectangle here): each side is rect1's unless rect2's is strictly beyond it, and x0_1
    # stays out of the minimum as it does there. Per side: (rect2's column, rect1's, rect2 wins).
    sides = [(2, 0, codes[rect2, 2] < codes[rect1, 0]), (1, 1, codes[rect2, 1] < codes[rect1, 1]),
             (2, 2, codes[rect2, 2] > codes[rect1, 2]), (3, 3, codes[rect2, 3] > codes[rect1, 3])]

    def merged(table: np.ndarray, rows=slice(None)) -> list[np.ndarray]:
        return [np.where(wins[rows], table[rect2[rows], c2], table[rect1[rows], c1]) for c2, c1, wins in sides]

    mx0, mz0, mx1, mz1 = merged(codes)
    if v < ONE_KEY_MAX_CODES:  # one int64 key per merged rectangle, one sort
        _, first = np.unique(((mx0 * v + mz0) * v + mx1) * v + mz1, return_index=True)  # first occurrences
    else:
        _, x_interval = np.unique(mx0 * v + mx1, return_inverse=True)
        _, z_interval = np.unique(mz0 * v + mz1, return_inverse=True)
        _, first = np.unique(x_interval * len(rect1) + z_interval, return_index=True)
    first.sort()
    out: set[Rect] = set()
    out.update(map(tuple, np.column_stack(merged(corners, first)).tolist()))
    return out - rects


def _neighboring(self: OrthogonalPolygon) -> tuple[set[Rect], tuple[Rect, ...]]:
    """The stock neighbouring-rectangles set and its cells in insertion order; sets `self.area`."""
    xs, zs = self.unique_xs, self.unique_zs
    cells = [(x0, z0, x1, z1) for x0, x1 in zip(xs, xs[1:]) for z0, z1 in zip(zs, zs[1:])]
    out: set[Rect] = set()
    self.area = 0
    if not cells:
        return out, ()
    mids = np.array([((x0 + x1) / 2, (z0 + z1) / 2) for x0, z0, x1, z1 in cells])
    added = tuple(cell for cell, inside in zip(cells, shapely.contains_xy(self.polygon, mids[:, 0], mids[:, 1]).tolist())
                  if inside)
    for x0, z0, x1, z1 in added:
        out.add((x0, z0, x1, z1))
        self.area += (x1 - x0) * (z1 - z0)
    return out, added


def get_neighboring_rectangles(self: OrthogonalPolygon) -> set[Rect]:
    """`OrthogonalPolygon.get_neighboring_rectangles` with one `shapely.contains_xy` over all cell midpoints.

    Stock asks `polygon.contains(Point(mid))` cell by cell (run on every `subtract` too). The same
    GEOS point-in-area predicate on the same float midpoints answers the same; the cells are then
    added, and the area summed, in the stock order.
    """
    return _neighboring(self)[0]


_all_rectangles: dict[str, tuple[set[Rect], set[Rect]] | None] = {}


def get_all_rectangles(self: OrthogonalPolygon) -> set[Rect]:
    """`OrthogonalPolygon.get_all_rectangles`, its rounds of joins remembered by its starting cells.

    Stock recomputes every round when a room's open polygon is asked again unchanged (the agent's
    starting pose asks for the final polygon, usually already asked for). The rounds are a function
    of the sequence of cells added to a fresh set (that sequence fixes the set's table, so its copy
    and every join and union after it). The returned set must be a new one in the same table state,
    as `add_floor_objects` removes rectangles from it: it is rebuilt by the stock's last operation,
    `curr_rects | rect_candidates` on the two remembered sets (neither of which escapes), or is the
    fresh starting copy when no join added anything. The key is the sequence's `repr`, not the
    tuple: 4 == 4.0 and 0.0 == -0.0, but the rectangles carry their coordinates' types into the house.
    """
    neighboring, added = _neighboring(self)
    key = repr(added)
    if key in _all_rectangles:
        last = _all_rectangles[key]
        return neighboring.copy() if last is None else last[0] | last[1]
    curr_rects, last = neighboring.copy(), None
    while True:
        rect_candidates = self._join_neighboring_rectangles(curr_rects)
        rects = curr_rects | rect_candidates
        if len(rects) == len(curr_rects):
            break
        curr_rects, last = rects, (curr_rects, rect_candidates)
    if len(_all_rectangles) >= ALL_RECTANGLES_KEPT:
        _all_rectangles.clear()
    _all_rectangles[key] = last
    return curr_rects
