"""Footprints and the prominence rule (docs/semantics.md section 2)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import Polygon

from pipeline.errors import RoomspaceError
from pipeline.scene.footprints import footprint
from pipeline.scene.objects import load_rule, rule_from_json, scene_objects


def extents(points):
    xs = [x for x, _ in points]
    zs = [z for _, z in points]
    return max(xs) - min(xs), max(zs) - min(zs)


def test_unturned_box():
    assert footprint(2.0, 3.0, 0, (1.0, 0.5, 0.4)) == ((1.5, 2.8), (2.5, 2.8), (2.5, 3.2), (1.5, 3.2))
    assert footprint(2.0, 3.0, 0, (1.0, 0.4)) == footprint(2.0, 3.0, 0, (1.0, 9.9, 0.4))


@pytest.mark.parametrize("yaw", [90, 270, -90, 450])
def test_quarter_turn_swaps_extents(yaw):
    points = footprint(1.0, 1.0, yaw, (2.0, 1.0, 0.5))
    width, depth = extents(points)
    assert (width, depth) == (0.5, 2.0)  # exact: no cos(90) = 6e-17 noise


def test_half_turn_keeps_extents():
    assert extents(footprint(1.0, 1.0, 180, (2.0, 1.0, 0.5))) == (2.0, 0.5)


def test_yaw_sign_is_procthors():
    """Yaw 90 turns the front (+z) to +x (east), as Unity's clockwise yaw seen from above."""
    # the own-frame front-centre point (0, depth/2) of a 90-degree object lies east of its centre
    points = footprint(0.0, 0.0, 90, (0.2, 1.0, 2.0))
    front = ((points[2][0] + points[3][0]) / 2, (points[2][1] + points[3][1]) / 2)
    assert front == pytest.approx((1.0, 0.0))
    # and ProcTHOR's own box of a turned asset-group member agrees with ours, at any angle
    from procthor.generation.asset_groups import AssetGroupGenerator

    for yaw in (0, 36.8, 90, 123.4, 200, 299.9):
        box = AssetGroupGenerator.rotate_bounding_box(yaw, {"x": 1.3, "z": 0.6}, 2.0, 1.0)
        ours = footprint(2.0, 1.0, yaw, (1.3, 0.6))
        assert min(x for x, _ in ours) == pytest.approx(box["x"]["min"])
        assert max(x for x, _ in ours) == pytest.approx(box["x"]["max"])
        assert min(z for _, z in ours) == pytest.approx(box["z"]["min"])
        assert max(z for _, z in ours) == pytest.approx(box["z"]["max"])
        # ProcTHOR rotates the corner (+x/2, +z/2) to the one that we rotate too
        cos, sin = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
        assert ours[2] == pytest.approx((2.0 + 0.65 * cos + 0.3 * sin, 1.0 - 0.65 * sin + 0.3 * cos))


def test_yaw_36_8_gives_a_rotated_polygon():
    points = footprint(3.0, 2.0, 36.8, (1.0, 0.7, 0.5))
    polygon = Polygon(points)
    assert polygon.is_valid and polygon.exterior.is_ccw
    assert polygon.area == pytest.approx(0.5)
    assert polygon.centroid.x == pytest.approx(3.0) and polygon.centroid.y == pytest.approx(2.0)
    assert not polygon.equals(polygon.envelope)  # not axis-aligned
    width, depth = extents(points)
    c, s = math.cos(math.radians(36.8)), math.sin(math.radians(36.8))
    assert width == pytest.approx(1.0 * c + 0.5 * s)
    assert depth == pytest.approx(1.0 * s + 0.5 * c)
    # edges keep their lengths and stay perpendicular
    (ax, az), (bx, bz), (cx, cz) = points[:3]
    assert math.dist((ax, az), (bx, bz)) == pytest.approx(1.0)
    assert math.dist((bx, bz), (cx, cz)) == pytest.approx(0.5)
    assert (bx - ax) * (cx - bx) + (bz - az) * (cz - bz) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    x=st.floats(-10, 10),
    z=st.floats(-10, 10),
    yaw=st.floats(-720, 720),
    w=st.floats(0.01, 5),
    d=st.floats(0.01, 5),
)
def test_any_yaw_is_a_rigid_turn(x, z, yaw, w, d):
    polygon = Polygon(footprint(x, z, yaw, (w, 1.0, d)))
    assert polygon.exterior.is_ccw
    assert polygon.area == pytest.approx(w * d, rel=1e-9)
    assert polygon.centroid.x == pytest.approx(x, abs=1e-9)
    assert polygon.centroid.y == pytest.approx(z, abs=1e-9)
    assert Polygon(footprint(x, z, yaw + 360, (w, 1.0, d))).equals_exact(polygon, 1e-9)


def test_bad_size():
    with pytest.raises(ValueError):
        footprint(0, 0, 0, (1.0,))
    with pytest.raises(ValueError):
        footprint(0, 0, 0, (-1.0, 1.0))


def test_prominence_rule_is_data():
    rule = load_rule()
    for furniture in ("Bed", "Sofa", "DiningTable", "CounterTop", "Fridge", "Toilet", "Sink", "Chair"):
        assert rule.is_prominent(furniture, 0.1, wall_hung=False)
    for clutter in ("Plunger", "Boots", "BasketBall", "BaseballBat"):
        assert not rule.is_prominent(clutter, 5.0, wall_hung=False)  # whatever their box
    assert rule.is_prominent("Cart", rule.min_area, wall_hung=False)  # big enough
    assert not rule.is_prominent("Cart", rule.min_area / 2, wall_hung=False)
    assert rule.is_prominent("Painting", 0.01, wall_hung=True)
    assert not rule.is_prominent("Chair", 1.0, wall_hung=True)  # only listed wall types
    no_walls = rule_from_json({"types": [], "min_area": 1, "wall_hung": {"count": False, "types": ["Painting"]}})
    assert not no_walls.is_prominent("Painting", 1.0, wall_hung=True)
    with pytest.raises(RoomspaceError):
        rule_from_json({"types": []})


def test_scene_objects_from_house_json():
    objects = [
        {"id": "2|0", "assetId": "Bed_1", "position": {"x": 1.0, "y": 0.5, "z": 1.5}, "rotation": {"x": 0, "y": 90, "z": 0},
         "children": [{"id": "2|0|pillow", "assetId": "Pillow_1"}]},
        {"id": "2|1", "assetId": "Plunger_1", "position": {"x": 4.0, "y": 0.2, "z": 4.0}, "rotation": {"x": 0, "y": -90, "z": 0}},
    ]
    bed, plunger = scene_objects(objects, side=5.0, wall_hung_ids=())
    assert (bed.type, bed.prominent, plunger.type, plunger.prominent) == ("Bed", True, "Plunger", False)
    assert plunger.yaw == 270.0
    assert extents(bed.footprint) == pytest.approx((bed.size[2], bed.size[0]))
    json.dumps([bed.footprint, bed.size])  # plain floats
