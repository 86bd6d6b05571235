"""Rectangles of a room's open polygon, the bulk of stock sampling's time (items 1 and 4 of the
package docstring, which say why each replacement is exact)."""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import chain

import numpy as np
import procthor.generation.objects as procthor_objects
import shapely
from procthor.generation.objects import OrthogonalPolygon, ProceduralRoom

Rect = tuple[float, float, float, float]  # (x0, z0, x1, z1)
STOCK_JOIN = OrthogonalPolygon._join_neighboring_rectangles
STOCK_SAMPLE_NEXT_RECTANGLE = ProceduralRoom.sample_next_rectangle
ALL_RECTANGLES_KEPT = 64  # polygons whose rectangles are remembered (the last house's, in practice)
DENSE_RECTANGLES = 2 ** 20  # a join numbers merged rectangles among all those its codes can name up to this many
COPY_ORDER_MIN = 8  # from here on, `rects - {r}` iterates in the order of `rects.copy()`


def _pairs_sharing_an_edge(codes: list[np.ndarray], a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(rect1, rect2) index arrays of the ordered pairs of rectangles that share two corners, in no set order.

    `codes` holds the columns x0, z0, x1, z1 of the rectangles as integer codes, x-values below `a`
    and z-values below `b`. Edge keys: (x-interval, z) for the bottom and top edges, below a^2 b,
    and (z-interval, x) offset by a^2 b for the sides (int64 for a and b below a million).
    """
    x0, z0, x1, z1 = codes
    n = len(x0)
    x_interval, z_interval = (x0 * a + x1) * b, a * a * b + (z0 * b + z1) * a
    keys = np.concatenate([x_interval + z0, x_interval + z1, z_interval + x0, z_interval + x1])
    by_key = np.argsort(keys)
    keys, owner = keys[by_key], by_key % n
    run_ends = np.ones(len(keys) + 1, dtype=bool)  # where a run of equal keys starts, and the end
    np.not_equal(keys[1:], keys[:-1], out=run_ends[1:-1])
    bounds = np.flatnonzero(run_ends)
    starts, lengths = bounds[:-1], np.diff(bounds)
    shared = lengths > 1
    starts, lengths = starts[shared], lengths[shared]
    # every ordered pair of entries within one run of equal keys
    within = _offsets(lengths)
    member = np.repeat(starts, lengths) + within
    run_length = np.repeat(lengths, lengths)
    rect1 = owner[np.repeat(member, run_length)]
    rect2 = owner[np.repeat(member - within, run_length) + _offsets(run_length)]
    distinct = rect1 != rect2  # a rectangle's four edge keys differ: only an entry with itself repeats
    return rect1[distinct], rect2[distinct]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., L-1 for each L in `lengths`, concatenated."""
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def _merged(table: list[np.ndarray], codes: list[np.ndarray], rect1: np.ndarray, rect2: np.ndarray) -> list[np.ndarray]:
    """The stock merge of each pair (rect1, rect2): its columns x0, z0, x1, z1, of values taken from `table`.

    The stock expression, min(x0_0, x1_0, x1_1, x1_1) etc., under x0 < x1 and z0 < z1 (true of
    every rectangle here): each side is rect1's unless rect2's is strictly beyond it (compared on
    the codes), and x0_1 stays out of the minimum as it does there. Per side: (rect2's column,
    rect1's, whether rect2's wins). `table` and `codes` are given column by column.
    """
    sides = [(2, 0, codes[2][rect2] < codes[0][rect1]), (1, 1, codes[1][rect2] < codes[1][rect1]),
             (2, 2, codes[2][rect2] > codes[2][rect1]), (3, 3, codes[3][rect2] > codes[3][rect1])]
    return [np.where(wins, table[c2][rect2], table[c1][rect1]) for c2, c1, wins in sides]


def _merged_codes(codes: list[np.ndarray], rect1: np.ndarray, rect2: np.ndarray) -> list[np.ndarray]:
    """`_merged(codes, codes, rect1, rect2)` for pairs that share two corners, in fewer steps.

    Such a pair has the same x-interval, or an x-value in common, so x1_1 >= x0_0 and the merge's
    x0 is rect1's; each other side is the least or greatest code of the two.
    """
    x0, z0, x1, z1 = codes
    return [x0[rect1], np.minimum(z0[rect1], z0[rect2]), np.maximum(x1[rect1], x1[rect2]),
            np.maximum(z1[rect1], z1[rect2])]


def join_neighboring_rectangles(self: OrthogonalPolygon, rects: set[Rect]) -> set[Rect]:
    return _joined(self, rects, None)[0]


Grid = tuple[np.ndarray, np.ndarray]  # the sorted distinct x-values and z-values that rectangles' codes index


def _joined(self: OrthogonalPolygon, rects: set[Rect], grid: Grid | None) -> tuple[set[Rect], Grid | None]:
    """The stock join of `rects`, and the Grid its rectangles' codes index.

    `grid`, when given, holds every coordinate of `rects` (as get_all_rectangles' rounds do: a
    merged rectangle's coordinates are taken from the two it merges), so that codes are looked up
    in it rather than found by sorting the coordinates again; a coordinate's code is its rank
    among its axis's values either way (0.0 and -0.0 are one value, as the merge's comparisons take
    them). Each merged rectangle's first visit is the least visit of the pairs giving it, taken
    over its rectangle's place in the a^2 b^2 rectangles the codes can name (or, past
    DENSE_RECTANGLES, in the ones the pairs give, found by sorting them).
    """
    n = len(rects)
    if n < COPY_ORDER_MIN:
        return STOCK_JOIN(self, rects), grid
    # rows (x0, z0, x1, z1) in visiting order
    corners = np.fromiter(chain.from_iterable(rects.copy()), dtype=float, count=4 * n).reshape(n, 4)
    if grid is None:
        grid = np.unique(corners[:, 0::2]), np.unique(corners[:, 1::2])
    xs, zs = grid
    a, b = len(xs), len(zs)
    columns = list(corners.T)
    x_codes, z_codes = np.searchsorted(xs, corners[:, 0::2]), np.searchsorted(zs, corners[:, 1::2])
    code_columns = [x_codes[:, 0], z_codes[:, 0], x_codes[:, 1], z_codes[:, 1]]
    rect1, rect2 = _pairs_sharing_an_edge(code_columns, a, b)
    x0, z0, x1, z1 = _merged_codes(code_columns, rect1, rect2)
    if a * a * b * b <= DENSE_RECTANGLES:
        merged, count = ((x0 * a + x1) * b + z0) * b + z1, a * a * b * b
    else:
        distinct, merged = np.unique(np.column_stack([x0, z0, x1, z1]), axis=0, return_inverse=True)
        merged, count = merged.reshape(-1), len(distinct)
    first = np.full(count, n * n, dtype=np.int64)
    np.minimum.at(first, merged, rect1 * n + rect2)  # visits in the stock visiting order
    first_visits = np.sort(first[first < n * n])
    # a set made from an iterable adds its items in turn, as stock's `out.add` does
    out = set(zip(*(column.tolist() for column in _merged(columns, code_columns, first_visits // n,
                                                          first_visits % n))))
    return out - rects, grid


def _neighboring(self: OrthogonalPolygon) -> tuple[set[Rect], tuple[Rect, ...], np.ndarray]:
    """The stock neighbouring-rectangles set, its cells in insertion order, and which cells of the
    grid are inside (a boolean array, x-intervals by z-intervals, read only); sets `self.area`.

    The cells inside are found once per polygon: stock asks again of an unchanged one (a room's
    open polygon on each pick of a rectangle and each `get_all_rectangles`). A polygon is its
    shapely geometry, immutable (`subtract` makes a new one, and the grid from it); the set is
    made afresh each time, as stock makes it.
    """
    found = self.__dict__.get("_cells_inside")
    if found is None or found[0] is not self.polygon:
        found = self._cells_inside = (self.polygon, *_cells_inside(self))
    _, added, inside, area = found
    out: set[Rect] = set()
    for cell in added:
        out.add(cell)
    self.area = area
    return out, added, inside


def _cells_inside(self: OrthogonalPolygon) -> tuple[tuple[Rect, ...], np.ndarray, float]:
    """The grid's cells inside the polygon in stock's order, as a boolean array, and their area summed in that order."""
    xs, zs = self.unique_xs, self.unique_zs
    cells = [(x0, z0, x1, z1) for x0, x1 in zip(xs, xs[1:]) for z0, z1 in zip(zs, zs[1:])]
    area = 0
    if not cells:
        return (), np.zeros((0, 0), dtype=bool), area
    mids = np.array([((x0 + x1) / 2, (z0 + z1) / 2) for x0, z0, x1, z1 in cells])
    inside = shapely.contains_xy(self.polygon, mids[:, 0], mids[:, 1])
    added = tuple(cell for cell, cell_inside in zip(cells, inside.tolist()) if cell_inside)
    for x0, z0, x1, z1 in added:
        area += (x1 - x0) * (z1 - z0)
    inside = inside.reshape(len(xs) - 1, len(zs) - 1)
    inside.flags.writeable = False
    return added, inside, area


@lru_cache(maxsize=None)
def _intervals(lines: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.triu_indices(lines, 1)`: every (first, last) pair of `lines` grid lines, first < last (read only)."""
    first, last = np.triu_indices(lines, 1)
    first.flags.writeable = last.flags.writeable = False
    return first, last


def _full_columns(inside: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every z-interval of cells (grid lines z0 < z1), which columns have all their cells over it inside:
    (columns by z-intervals, z0, z1)."""
    columns, rows = inside.shape
    prefix = np.concatenate([np.zeros((columns, 1), dtype=np.int64), np.cumsum(inside, axis=1)], axis=1)
    z0, z1 = _intervals(rows + 1)
    return (prefix[:, z1] - prefix[:, z0]) == (z1 - z0), z0, z1


def _grid_rectangles(inside: np.ndarray) -> int:
    """How many rectangles of whole grid cells lie inside: the x-intervals by z-intervals of cells all inside.

    For each z-interval, the columns whose cells over it are all inside; the x-intervals of such
    columns are counted as the length of the run of them ending at each column, summed.
    """
    if not inside.size:
        return 0
    full = _full_columns(inside)[0]
    count = np.cumsum(full, axis=0)
    runs = count - np.maximum.accumulate(np.where(full, 0, count), axis=0)
    return int(runs.sum())


def is_point_inside(self: OrthogonalPolygon, point: tuple[float, float]) -> bool:
    """`OrthogonalPolygon.is_point_inside` by `shapely.contains_xy`: GEOS's `contains` of a point at the same
    floats, as stock asks it of a `Point` made for each question (four per corner of a rectangle)."""
    return bool(shapely.contains_xy(self.polygon, point[0], point[1]))


EPSILON = 1e-3  # stock's step off a corner, in sample_anchor_location
CORNER_STEPS = ((EPSILON, EPSILON), (-EPSILON, EPSILON), (-EPSILON, -EPSILON), (EPSILON, -EPSILON))  # q1..q4


def sample_anchor_location(self: ProceduralRoom, rectangle: Rect) -> tuple:
    """`ProceduralRoom.sample_anchor_location`, stock line by line but for its geometric questions asked at once.

    Stock asks, corner by corner in its shuffled order, whether four points a step off the corner
    are inside the room (`is_point_inside`: GEOS's point-in-area test, here one `contains_xy` over
    the sixteen points, each answered as alone), then, edge by edge in its shuffled order, whether
    the room's outline contains the edge's line string (one `shapely.contains` over the four; a
    `random.shuffle` of four items draws the same whatever they are). Its draws are made in its
    order and only where it makes them; an edge's xs and zs are its line string's coordinates,
    floats, as `coords` gives them.
    """
    x0, z0, x1, z1 = rectangle
    rect_corners = [(x0, z0, 2), (x0, z1, 8), (x1, z1, 6), (x1, z0, 0)]
    random.shuffle(rect_corners)
    points = [(x + dx, z + dz) for x, z, _ in rect_corners for dx, dz in CORNER_STEPS]
    inside = shapely.contains_xy(self.room_polygon.polygon, *zip(*points)).tolist()
    corners = []
    for k, (x, z, anchor_delta) in enumerate(rect_corners):
        q1, q2, q3, q4 = inside[4 * k:4 * k + 4]
        if (q1 and q3 and not q2 and not q4) or (q2 and q4 and not q1 and not q3):
            corners.append((x, z, anchor_delta, "inCorner"))
        elif (
            (q1 and not q2 and not q3 and not q4)
            or (q2 and not q1 and not q3 and not q4)
            or (q3 and not q1 and not q2 and not q4)
            or (q4 and not q1 and not q2 and not q3)
        ):
            corners.append((x, z, anchor_delta, "inCorner"))
    if corners:
        return random.choice(corners)
    rect_edge_lines = [(((x0, z0), (x1, z0)), 1), (((x0, z0), (x0, z1)), 5), (((x1, z0), (x1, z1)), 3),
                       (((x0, z1), (x1, z1)), 7)]
    random.shuffle(rect_edge_lines)
    lines = shapely.linestrings([ends for ends, _ in rect_edge_lines])
    on_outline = shapely.contains(shapely.LineString(self.room_polygon.polygon.exterior.coords), lines).tolist()
    edges = [([float(x) for x, _ in ends], [float(z) for _, z in ends], anchor_delta, "onEdge")
             for ((ends, anchor_delta), contained) in zip(rect_edge_lines, on_outline) if contained]
    if edges and random.random() < procthor_objects.P_CHOOSE_EDGE:
        return random.choice(edges)
    return (None, None, 4, "inMiddle")


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

    Stock stops after a round that adds nothing. A join only ever gives rectangles of whole inside
    cells (two of them sharing an edge merge into their union, the larger or rect1), and the
    smallest such rectangle missing from a set would come from two halves the set holds, so a
    round adds nothing exactly when the set holds all of them: once it holds as many as the grid has (`_grid_rectangles`),
    the loop ends where stock's would, with the same set, without running that last, largest round.
    """
    neighboring, added, inside = _neighboring(self)
    key = repr(added)
    if key in _all_rectangles:
        last = _all_rectangles[key]
        return neighboring.copy() if last is None else last[0] | last[1]
    complete = _grid_rectangles(inside)
    curr_rects, last, grid = neighboring.copy(), None, None
    while len(curr_rects) < complete:  # a set of all of them gains nothing more: stock's last round is not run
        rect_candidates, grid = _joined(self, curr_rects, grid)
        rects = curr_rects | rect_candidates
        if len(rects) == len(curr_rects):
            break
        curr_rects, last = rects, (curr_rects, rect_candidates)
    if len(_all_rectangles) >= ALL_RECTANGLES_KEPT:
        _all_rectangles.clear()
    _all_rectangles[key] = last
    return curr_rects


class UnmadeRectangles:
    """What stock keeps as `last_rectangles` after a largest rectangle found on the grid: the set of the open
    polygon's rectangles, made when first used as a set (iterated or counted).

    The set is a function of the polygon's geometry alone (`get_all_rectangles`), so an
    `OrthogonalPolygon` of the geometry of then (shapely's are immutable) makes the set stock made
    then. Until it is made, the rectangles removed from it (`add_floor_objects` removes the one no
    asset fit) are recorded, checked as `set.remove` checks them (a rectangle of whole inside cells
    of the grid, not removed yet), and removed from the set in the same order once it is made; and
    the largest of the rest can still be found on the grid.
    """

    def __init__(self, polygon: OrthogonalPolygon, inside: np.ndarray) -> None:
        self.geometry = polygon.polygon
        self.xs, self.zs, self.inside = polygon.unique_xs, polygon.unique_zs, inside
        self.removed: list[Rect] = []
        self._made: set[Rect] | None = None
        self._areas: tuple[np.ndarray, ...] | None = None

    def made(self) -> set[Rect]:
        if self._made is None:
            self._made = OrthogonalPolygon(self.geometry).get_all_rectangles()
            for rect in self.removed:
                self._made.remove(rect)
        return self._made

    def is_made(self) -> bool:
        return self._made is not None

    def __iter__(self):
        return iter(self.made())

    def __len__(self) -> int:
        return len(self.made())

    def remove(self, rect: Rect) -> None:
        if self._made is not None:
            self._made.remove(rect)
        elif rect in self.removed or not self._holds(rect):
            raise KeyError(rect)
        else:
            self.removed.append(rect)

    def _holds(self, rect: Rect) -> bool:
        """Whether the set holds `rect` (== on its coordinates, as a set's lookup compares them)."""
        x0, z0, x1, z1 = rect
        if not (x0 in self.xs and x1 in self.xs and z0 in self.zs and z1 in self.zs):
            return False
        i0, i1, j0, j1 = self.xs.index(x0), self.xs.index(x1), self.zs.index(z0), self.zs.index(z1)
        return i0 < i1 and j0 < j1 and bool(self.inside[i0:i1, j0:j1].all())

    def largest(self) -> Rect | None:
        """The one rectangle of the set, removed ones left out, of the largest area; None when none or several have it.

        Every rectangle of whole inside cells is an x-interval of columns full over a z-interval;
        its area is computed as stock computes it, `(x1 - x0) * (z1 - z0)` on the grid's floats
        (numpy's float64 operations round as Python's do).
        """
        if not self.inside.size:
            return None
        if self._areas is None:
            full, z0, z1 = _full_columns(self.inside)
            prefix = np.concatenate([np.zeros((1, full.shape[1]), dtype=np.int64), np.cumsum(full, axis=0)])
            x0, x1 = _intervals(self.inside.shape[0] + 1)
            whole = (prefix[x1] - prefix[x0]) == (x1 - x0)[:, None]  # x-intervals by z-intervals
            xs, zs = np.array(self.xs), np.array(self.zs)
            self._areas = (np.where(whole, (xs[x1] - xs[x0])[:, None] * (zs[z1] - zs[z0])[None, :], 0.0),
                           xs[x0], xs[x1], zs[z0], zs[z1], x0, x1, z0, z1)
        area, left, right, bottom, top, x0, x1, z0, z1 = self._areas
        if self.removed:
            area = area.copy()
            for rx0, rz0, rx1, rz1 in self.removed:
                area[np.ix_((left == rx0) & (right == rx1), (bottom == rz0) & (top == rz1))] = 0.0
        best = area.max()
        if not best > 0 or np.count_nonzero(area == best) != 1:
            return None
        i, k = np.unravel_index(area.argmax(), area.shape)
        return self.xs[x0[i]], self.zs[z0[k]], self.xs[x1[i]], self.zs[z1[k]]


def _next_random() -> float:
    """What the next `random.random()` will give, without drawing it."""
    state = random.getstate()
    value = random.random()
    random.setstate(state)
    return value


def sample_next_rectangle(self: ProceduralRoom, choose_largest_rectangle: bool = False,
                          cache_rectangles: bool = False) -> Rect | None:
    """`ProceduralRoom.sample_next_rectangle`, the largest rectangle found on the grid when one alone is largest.

    Stock makes every rectangle of the open polygon (or, cached, takes the set it kept, less the
    rectangles removed since), keeps the set as `last_rectangles`, and returns the first of
    largest area in the set's order when asked to (the agent's pose) or when its draw
    `random.random() < P_LARGEST_RECTANGLE` says so (four times in five), else one drawn by area.
    When the largest is asked for or will be drawn (the draw is looked at before it is made) and
    one rectangle alone has the largest area, the set's order does not matter: it is found on the
    grid, stock's draw is made, and what is kept is `UnmadeRectangles`, the set made only if used.
    Otherwise stock runs (on the kept rectangles, made then, when cached).
    """
    kept = self.last_rectangles if cache_rectangles else None
    grid_known = not cache_rectangles or (isinstance(kept, UnmadeRectangles) and not kept.is_made())
    if grid_known and (choose_largest_rectangle or _next_random() < procthor_objects.P_LARGEST_RECTANGLE):
        rectangles = kept if cache_rectangles else UnmadeRectangles(self.open_polygon, _neighboring(self.open_polygon)[2])
        largest = rectangles.largest()
        if largest is not None:
            if not choose_largest_rectangle:
                random.random()  # stock's draw, as looked at
            self.last_rectangles = rectangles
            return largest
    return STOCK_SAMPLE_NEXT_RECTANGLE(self, choose_largest_rectangle, cache_rectangles)
