"""The first-person view from a pose: what is ahead is in the middle, what is on the observer's left is on the left."""

import io

import numpy as np
import pytest
from handmade import SIDE, room, thing
from PIL import Image

from pipeline.errors import RoomspaceError
from pipeline.render.door import pose_frame, pose_png
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


def test_bad_poses_are_one_line_errors():
    scene, house = box_towards("N")
    with pytest.raises(RoomspaceError, match="not inside the room"):
        pose_frame(scene, house, (SIDE + 1, 1.0), "N")
    with pytest.raises(RoomspaceError, match="unknown facing"):
        pose_frame(scene, house, CENTRE, "up")
