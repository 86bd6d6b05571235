"""The first-person view from a pose: what is ahead is in the middle, what is on the observer's left is on the left."""

import io

import numpy as np
import pytest
from handmade import SIDE, room, thing
from PIL import Image

from pipeline.errors import RoomspaceError
from pipeline.render.door import NEAR, pose_frame, pose_png, pose_view, view_png
from pipeline.render.png import image_labels
from pipeline.render.style import style
from pipeline.spatial.frames import seen_facing

CENTRE = (SIDE / 2, SIDE / 2)
# Where a box 1.8 m from the centre lies, by the wall it is towards.
TOWARDS = {"N": (0.0, 1.8), "E": (1.8, 0.0), "S": (0.0, -1.8), "W": (-1.8, 0.0)}
LEFT_OF = {"N": "W", "E": "N", "S": "E", "W": "S"}


def box_towards(*walls: str):
    """A box 1.8 m from the centre towards a wall, or halfway between two (ahead-left: facing, left)."""
    dx, dz = (sum(TOWARDS[w][k] for w in walls) / len(walls) for k in (0, 1))
    return room(thing(0, "Sofa", CENTRE[0] + dx, CENTRE[1] + dz, 0.6, 0.6, height=0.9))


def columns_of(frame, index: int = 0) -> np.ndarray:
    return np.nonzero(frame.object_of_pixel == index)[1]


@pytest.mark.parametrize("facing", ["N", "E", "S", "W"])
def test_an_object_straight_ahead_is_in_the_horizontal_middle(facing):
    scene, house = box_towards(facing)
    frame = pose_frame(scene, house, CENTRE, facing)
    cols = columns_of(frame)
    width = style()["south_door"]["width"]
    assert cols.size > 200
    assert abs((cols.min() + cols.max()) / 2 - width / 2) <= 2  # symmetric about the middle column


@pytest.mark.parametrize("facing", ["N", "E", "S", "W"])
def test_an_object_on_the_observers_left_is_in_the_left_half(facing):
    assert seen_facing(LEFT_OF[facing], facing) == "W"  # the frames' left: "to the left of" in the observer's words
    scene, house = box_towards(facing, LEFT_OF[facing])  # ahead and to the left: in the field of view
    frame = pose_frame(scene, house, CENTRE, facing)
    cols = columns_of(frame)
    assert cols.size > 0 and cols.max() < style()["south_door"]["width"] / 2
    # and behind the observer it is not seen at all
    scene, house = box_towards({"N": "S", "E": "W", "S": "N", "W": "E"}[facing])
    assert columns_of(pose_frame(scene, house, CENTRE, facing)).size == 0


def test_geometry_crossing_the_camera_is_cut_not_smeared():
    """A table the observer stands in: its near part is cut at the near plane, its far part drawn."""
    scene, house = room(thing(0, "DiningTable", SIDE / 2, SIDE / 2 + 0.5, 1.0, 2.0, height=0.8))
    frame = pose_frame(scene, house, CENTRE, "N")
    rows, cols = np.nonzero(frame.object_of_pixel == 0)
    assert rows.size > 0 and rows.max() == frame.object_of_pixel.shape[0] - 1  # runs out of the bottom edge


def test_the_image_labels_what_it_shows_and_is_deterministic():
    scene, house = room(thing(0, "Sofa", 2.7, 4.5, 0.9, 0.6), thing(1, "Bed", 1.0, 4.0, 0.9, 1.6),
                        thing(2, "Desk", 4.5, 1.0, 0.7, 0.5))
    png = pose_png(scene, house, CENTRE, "N", {"obj|0": "sofa", "obj|1": "bed", "obj|2": "desk"})
    assert png == pose_png(scene, house, CENTRE, "N", {"obj|0": "sofa", "obj|1": "bed", "obj|2": "desk"})
    assert image_labels(png) == {"obj|0": "sofa", "obj|1": "bed"}  # the desk is behind, to the right
    assert Image.open(io.BytesIO(png)).size == (style()["south_door"]["width"], style()["south_door"]["height"])


@pytest.mark.parametrize("facing", ["N", "E", "S", "W"])
def test_a_view_measures_where_each_object_is_seen_and_how_much_of_it(facing):
    """Bearings grow to the right, `ahead` is along the facing; a low box behind a tall one is hidden;
    a box behind the camera is out of view; the camera pose is recorded in metres."""
    (fx, fz), (lx, lz) = TOWARDS[facing], TOWARDS[LEFT_OF[facing]]
    x, z = CENTRE
    scene, house = room(
        thing(0, "Sofa", x + fx, z + fz, 0.6, 0.6, height=0.4),  # straight ahead, low, hidden by ...
        thing(1, "Dresser", x + 0.5 * fx, z + 0.5 * fz, 0.8, 0.8, height=2.2),  # ... this tall one before it
        thing(2, "Bed", x + fx + 0.8 * lx, z + fz + 0.8 * lz, 0.6, 0.6, height=0.5),  # ahead and to the left
        thing(3, "Desk", x - fx, z - fz, 0.6, 0.6))  # behind the camera
    view = pose_view(scene, house, CENTRE, facing)
    seen = {obj.type: view.sightings[obj.id] for obj in scene.objects}
    assert abs(seen["Dresser"].bearing) < 0.5 and seen["Dresser"].share == 1.0 and seen["Dresser"].in_view
    assert seen["Sofa"].share < 0.05 and seen["Sofa"].ahead == pytest.approx(1.8)
    assert seen["Bed"].bearing < -10 and seen["Bed"].in_view and 0.3 < seen["Bed"].share < 1  # partly behind the dresser
    assert not seen["Desk"].in_view and seen["Desk"].pixels == 0 and seen["Desk"].ahead == pytest.approx(-1.8)
    assert (view.camera.x, view.camera.z, view.camera.facing) == (pytest.approx(x), pytest.approx(z), facing)
    assert view.camera.y == 1.6 and 70 <= view.camera.fov <= 130 and view.camera.pitch == 12
    png = view_png(scene, view, {o.id: o.type.lower() for o in scene.objects})
    assert set(image_labels(png)) == view.labelled() == {"obj|1", "obj|2"}
    assert png == pose_png(scene, house, CENTRE, facing, {o.id: o.type.lower() for o in scene.objects})
    assert NEAR > 0


def test_bad_poses_are_one_line_errors():
    scene, house = box_towards("N")
    with pytest.raises(RoomspaceError, match="not inside the room"):
        pose_frame(scene, house, (SIDE + 1, 1.0), "N")
    with pytest.raises(RoomspaceError, match="unknown facing"):
        pose_frame(scene, house, CENTRE, "up")
