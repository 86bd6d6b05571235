"""The computed composition tables and conceptual neighbourhoods (pipeline/spatial/calculi.py) against
derivations of their own: no Shapely, no two-dimensional enumeration.

RCC-8 between axis-aligned rectangles is decided axis by axis (two closed intervals per axis), and
rectangles are pairs of intervals, so every configuration of rectangles is a configuration of
intervals on each axis, chosen independently. The tests enumerate intervals on one line, keep the
order pattern of each pair, and combine the two axes. Directions are checked with the
python-constraint2 oracle (points as variables, relations as sign constraints).
"""

from itertools import product

import pytest

from pipeline.data import data_json
from pipeline.spatial import calculi
from pipeline.spatial.relations import DIRECTIONS, converse, direction_signs
from pipeline.spatial.topology import RCC8, rcc8_converse

Interval = tuple[int, int]


def pattern(a: Interval, b: Interval) -> tuple[int, ...]:
    """The order of a's and b's ends: each end's count of the four ends below it."""
    ends = (*a, *b)
    return tuple(sum(other < end for other in ends) for end in ends)


def rcc8_of_patterns(x: tuple[int, ...], y: tuple[int, ...]) -> str:
    """RCC-8 of two rectangles from their intervals' patterns on each axis, by the textbook definitions."""
    axes = (x, y)
    overlap = all(a0 < b1 and b0 < a1 for a0, a1, b0, b1 in axes)  # interiors share a point
    meet = all(a0 <= b1 and b0 <= a1 for a0, a1, b0, b1 in axes)  # closed rectangles share a point
    inside = all(b0 <= a0 and a1 <= b1 for a0, a1, b0, b1 in axes)
    around = all(a0 <= b0 and b1 <= a1 for a0, a1, b0, b1 in axes)
    flush = any(a0 == b0 or a1 == b1 for a0, a1, b0, b1 in axes)  # an edge of one on an edge of the other
    if not meet:
        return "DC"
    if not overlap:
        return "EC"
    if inside and around:
        return "EQ"
    if inside:
        return "TPP" if flush else "NTPP"
    if around:
        return "TPPi" if flush else "NTPPi"
    return "PO"


def interval_triples(top: int) -> set[tuple]:
    """Patterns of (a, b), (b, c), (a, c) of every three intervals with ends on 0..top."""
    intervals = [(low, high) for low in range(top + 1) for high in range(low + 1, top + 1)]
    return {(pattern(a, b), pattern(b, c), pattern(a, c)) for a, b, c in product(intervals, repeat=3)}


def test_rcc8_composition_is_the_product_of_interval_configurations():
    triples = interval_triples(7)
    derived: dict[tuple[str, str], set[str]] = {}
    for (xab, xbc, xac), (yab, ybc, yac) in product(triples, repeat=2):
        first, second = rcc8_of_patterns(xab, yab), rcc8_of_patterns(xbc, ybc)
        derived.setdefault((first, second), set()).add(rcc8_of_patterns(xac, yac))
    table = calculi.rcc8_composition()
    assert set(table) == set(product(RCC8, repeat=2))
    for cell, relations in table.items():
        assert set(relations) == derived[cell], cell
        assert list(relations) == [code for code in RCC8 if code in relations]  # canonical order


def test_rcc8_composition_keeps_the_algebra_laws():
    table = calculi.rcc8_composition()
    for first, second in product(RCC8, repeat=2):
        # (R1 o R2) converse = R2 converse o R1 converse; EQ is the identity
        assert {rcc8_converse(r) for r in table[first, second]} == \
            set(table[rcc8_converse(second), rcc8_converse(first)])
    for code in RCC8:
        assert table["EQ", code] == table[code, "EQ"] == (code,)
    assert table["DC", "DC"] == RCC8 and table["NTPP", "NTPPi"] == RCC8
    assert set(table["EC", "NTPP"]) == {"PO", "TPP", "NTPP"} and table["NTPP", "NTPP"] == ("NTPP",)


def test_direction_composition_agrees_with_the_constraint_oracle():
    constraint = pytest.importorskip("constraint")  # python-constraint2, the test extra
    points = list(product(range(4), repeat=2))

    def holds(code):
        si, sj = direction_signs(code)
        return lambda a, b: ((a[0] > b[0]) - (a[0] < b[0]), (a[1] > b[1]) - (a[1] < b[1])) == (si, sj)

    table = calculi.direction_composition()
    for first, second in product(DIRECTIONS, repeat=2):
        found = set()
        for third in DIRECTIONS:
            problem = constraint.Problem()
            problem.addVariables(["x", "y", "z"], points)
            problem.addConstraint(constraint.FunctionConstraint(holds(first)), ["x", "y"])
            problem.addConstraint(constraint.FunctionConstraint(holds(second)), ["y", "z"])
            problem.addConstraint(constraint.FunctionConstraint(holds(third)), ["x", "z"])
            if problem.getSolution() is not None:
                found.add(third)
        assert set(table[first, second]) == found, (first, second)
    for first, second in product(DIRECTIONS, repeat=2):
        assert {converse(r) for r in table[first, second]} == set(table[converse(second), converse(first)])


def moved_patterns(top: int) -> set[tuple]:
    """(pattern after a small move, pattern before) of two intervals, ends on 1, 4, ..., each moved by -1, 0 or 1."""
    ends = range(1, top + 1, 3)
    intervals = [(low, high) for low in ends for high in ends if low < high]
    found = set()
    for a, b in product(intervals, repeat=2):
        for da0, da1, db0, db1 in product((-1, 0, 1), repeat=4):
            found.add((pattern((a[0] + da0, a[1] + da1), (b[0] + db0, b[1] + db1)), pattern(a, b)))
    return found


def test_rcc8_neighbourhood_from_moves_on_each_axis():
    moves = moved_patterns(10)
    derived = {code: set() for code in RCC8}
    for (x_after, x_before), (y_after, y_before) in product(moves, repeat=2):
        before, after = rcc8_of_patterns(x_before, y_before), rcc8_of_patterns(x_after, y_after)
        if before != after:
            derived[before].add(after)
            derived[after].add(before)
    assert {code: set(found) for code, found in calculi.rcc8_neighbourhood().items()} == derived


def test_rcc8_neighbourhood_is_the_typed_graph_plus_growing_inside():
    """pipeline/data/rcc8.json's near misses (the rcc8 setting's No questions) are the graph drawn for
    motion; deformation adds NTPP-EQ and NTPPi-EQ: a region inside another, grown evenly until the two
    coincide, passes from NTPP to EQ with no TPP between."""
    typed = {entry["code"]: set(entry["neighbours"]) for entry in data_json("rcc8.json")["codes"]}
    computed = {code: set(found) for code, found in calculi.rcc8_neighbourhood().items()}
    added = {code: computed[code] - typed[code] for code in RCC8 if computed[code] != typed[code]}
    assert added == {"NTPP": {"EQ"}, "NTPPi": {"EQ"}, "EQ": {"NTPP", "NTPPi"}}
    assert all(typed[code] <= computed[code] for code in RCC8)


def test_direction_neighbourhood_from_moves_on_each_axis():
    signs = {(after, before) for before in (-1, 0, 1) for after in (-1, 0, 1) if before == 0 or after == before}
    derived = {code: set() for code in DIRECTIONS}
    by_signs = {direction_signs(code): code for code in DIRECTIONS}
    for (xa, xb), (ya, yb) in product(signs, repeat=2):
        before, after = by_signs[xb, yb], by_signs[xa, ya]
        if before != after:
            derived[before].add(after)
            derived[after].add(before)
    computed = calculi.direction_neighbourhood()
    assert {code: set(found) for code, found in computed.items()} == derived
    assert computed["N"] == ("NE", "NW", "O") and len(computed["O"]) == 8


def test_larger_grids_add_nothing(monkeypatch):
    tables = calculi.rcc8_composition(), calculi.direction_composition(), calculi.rcc8_neighbourhood()
    for made in (calculi.rcc8_composition, calculi.direction_composition, calculi.rcc8_neighbourhood):
        made.cache_clear()
    monkeypatch.setattr(calculi, "RECTANGLE_GRID", calculi.RECTANGLE_GRID + 1)
    monkeypatch.setattr(calculi, "POINT_GRID", calculi.POINT_GRID + 2)
    monkeypatch.setattr(calculi, "MOVE_GRID", calculi.MOVE_GRID + 1)
    try:
        assert (calculi.rcc8_composition(), calculi.direction_composition(), calculi.rcc8_neighbourhood()) == tables
    finally:
        for made in (calculi.rcc8_composition, calculi.direction_composition, calculi.rcc8_neighbourhood):
            made.cache_clear()
