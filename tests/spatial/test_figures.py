"""Relations between shapes given by coordinates (pipeline/spatial/figures.py), each against another way
of reading the same numbers: outlines in metres and circles as fine polygons by the footprints' rule,
the guiding strategy's rules for directions and gaps, and the worked cases the example strategy shows."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import Point as ShapelyPoint
from shapely.geometry import Polygon

from pipeline.data import data_json
from pipeline.spatial.figures import CIRCLE, POLYGON, RECTANGLE, Figure, direction_of, gap, rcc8_of
from pipeline.spatial.relations import COMPASS
from pipeline.spatial.topology import rcc8

CENTIMETRES = st.integers(0, 400)


def rectangle(x0, y0, x1, y1, name="A") -> Figure:
    corners = ((x0 / 100, y0 / 100), (x1 / 100, y0 / 100), (x1 / 100, y1 / 100), (x0 / 100, y1 / 100))
    centre = ((x0 + x1) / 200, (y0 + y1) / 200)
    return Figure(name, RECTANGLE, "o", centre, 0.0, corners)


def circle(x, y, r, name="A") -> Figure:
    return Figure(name, CIRCLE, "o", (x / 100, y / 100), r / 100, ())


@st.composite
def rectangles(draw, name="A"):
    x0, x1 = sorted(draw(st.lists(CENTIMETRES, min_size=2, max_size=2, unique=True)))
    y0, y1 = sorted(draw(st.lists(CENTIMETRES, min_size=2, max_size=2, unique=True)))
    return rectangle(x0, y0, x1, y1, name)


@given(rectangles(), rectangles("B"))
def test_outlines_relate_as_footprints_do_in_metres(a, b):
    """In centimetres as in the stated metres: footprints' rule (tests/spatial/test_topology.py checks it)."""
    assert rcc8_of(a, b) == rcc8(*(Polygon(f.corners) for f in (a, b)))


def test_turned_outlines_relate_exactly_in_centimetres():
    square = Figure("A", POLYGON, "o", (1.0, 1.0), 0.0, ((1.0, 0.5), (1.5, 1.0), (1.0, 1.5), (0.5, 1.0)))
    box = rectangle(50, 50, 150, 150, "B")
    assert rcc8_of(square, box) == "TPP"  # its corners on the box's edges
    assert rcc8_of(box, square) == "TPPi" and rcc8_of(rectangle(150, 0, 200, 100), box) == "EC"


@given(st.integers(0, 300), st.integers(0, 300), st.integers(1, 120), st.integers(0, 300), st.integers(0, 300),
       st.integers(1, 120))
def test_circles_relate_as_fine_polygons_do_away_from_contact(ax, ay, ar, bx, by, br):
    a, b = circle(ax, ay, ar), circle(bx, by, br, "B")
    apart = math.dist((ax, ay), (bx, by))
    if min(abs(apart - ar - br), abs(apart - abs(ar - br))) < 2 or (apart == 0 and ar == br):
        return  # contact or equality: exact only in the integers, checked below
    fine = [ShapelyPoint(x, y).buffer(r, 256) for x, y, r in ((ax, ay, ar), (bx, by, br))]
    assert rcc8_of(a, b) == rcc8(*fine)
    assert gap(a, b) == pytest.approx(fine[0].distance(fine[1]) / 100, abs=1e-3)


def test_circles_in_contact_are_exact():
    assert rcc8_of(circle(0, 0, 20), circle(50, 0, 30, "B")) == "EC"
    assert rcc8_of(circle(10, 0, 20), circle(0, 0, 30, "B")) == "TPP"
    assert rcc8_of(circle(0, 0, 30), circle(10, 0, 20, "B")) == "TPPi"
    assert rcc8_of(circle(5, 5, 30), circle(5, 5, 30, "B")) == "EQ"
    assert rcc8_of(circle(0, 0, 10), circle(3, 4, 30, "B")) == "NTPP"


@given(st.integers(-500, 500), st.integers(-500, 500))
def test_directions_follow_the_guiding_rule(dx, dy):
    a, b = circle(500 + dx, 500 + dy, 10), circle(500, 500, 10, "B")
    found = direction_of(a, b)
    if dx == dy == 0:
        assert found is None
        return
    code, margin = found
    if margin < 1e-9:
        return
    small, large = sorted((abs(dx), abs(dy)))
    signs = ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
    if small < math.tan(math.radians(22.5)) * large:  # a compass point: the larger offset alone
        signs = (signs[0], 0) if abs(dx) > abs(dy) else (0, signs[1])
    expected = {(0, 1): "N", (1, 1): "NE", (1, 0): "E", (1, -1): "SE", (0, -1): "S", (-1, -1): "SW", (-1, 0): "W",
                (-1, 1): "NW"}[signs]
    assert code == expected and COMPASS.index(code) >= 0
    bearing = math.degrees(math.atan2(dx, dy)) % 360
    assert margin == pytest.approx(min(abs(bearing - (45 * k + 22.5)) for k in range(-1, 9)))


@given(rectangles(), rectangles("B"))
def test_rectangle_gaps_follow_the_guiding_rule(a, b):
    (ax0, ay0), (ax1, ay1) = a.corners[0], a.corners[2]
    (bx0, by0), (bx1, by1) = b.corners[0], b.corners[2]
    across = max(0.0, bx0 - ax1, ax0 - bx1)
    along = max(0.0, by0 - ay1, ay0 - by1)
    assert gap(a, b) == pytest.approx(math.hypot(across, along), abs=1e-9)


def test_the_worked_cases_are_right():
    """Every case the example strategy shows gives the answer its reasoning reaches."""
    relations = {"topological": rcc8_of, "directional": lambda a, b: direction_of(a, b)[0]}
    bounds = data_json("coordinates.json")["distances"]
    for category, entry in data_json("coordinates.json")["categories"].items():
        for case in entry["examples"]:
            a, b = (Figure(name, shape["kind"], "o", tuple(sum(v) / len(v) for v in zip(*shape["corners"])), 0.0,
                           tuple(map(tuple, shape["corners"]))) for name, shape in zip("AB", case["shapes"]))
            if category == "distance":
                found = next(e["code"] for e in bounds if e["within"] is None or gap(a, b) <= e["within"])
            else:
                found = relations[category](a, b)
            assert found == case["answer"], (category, case["reasoning"])
