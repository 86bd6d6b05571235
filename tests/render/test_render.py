"""The offline renderer, read back from its pixels: positions, orientation, hidden surfaces, bytes."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import SCENE_SEED
from handmade import SIDE, room, thing
from PIL import Image

from pipeline.errors import RoomspaceError
from pipeline.render.door import pose_png, south_door_frame, south_door_png
from pipeline.render.job import offline_images, render_rooms
from pipeline.render.plan import plan_frame, region_lines, top_down_png
from pipeline.render.png import LABELS_KEY, RENDER_KEY
from pipeline.render.style import object_colour, rgb, style
from pipeline.scene.records import SceneObject
from pipeline.scene.scene_file import load_house, load_scene, scene_path, write_scene


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def mask_of(image: np.ndarray, colour: tuple[int, int, int]) -> np.ndarray:
    return np.all(image == np.array(colour, dtype=np.uint8), axis=-1)


def centroid(mask: np.ndarray) -> tuple[float, float]:
    rows, cols = np.nonzero(mask)
    assert len(rows), "colour not found"
    return float(cols.mean()), float(rows.mean())


# --------------------------------------------------------------------------- top-down


@pytest.mark.parametrize(("x", "z", "yaw"), [(1.7, 3.9, 30.0), (4.1, 1.2, 0.0), (2.6, 2.2, 117.5)])
def test_top_down_centre_maps_back_to_the_scene_position(x, z, yaw):
    # a table's top covers its footprint, in its type's colour (its legs are under it)
    scene, _ = room(thing(0, "DiningTable", x, z, 1.6, 1.2, yaw=yaw))
    frame = plan_frame(scene)
    col, row = centroid(mask_of(pixels(top_down_png(scene)), object_colour(scene.objects[0])))
    # back to metres: the inverse of PlanFrame.pixel
    back_x = (col - frame.margin) / frame.scale
    back_z = frame.side - (row - frame.margin) / frame.scale
    assert abs(back_x - x) * frame.scale <= 1.5 and abs(back_z - z) * frame.scale <= 1.5


def test_top_down_north_is_up_and_east_is_right():
    scene, _ = room(thing(0, "DiningTable", 4.3, 4.4, 1.0, 0.8), thing(1, "TVStand", 1.0, 0.9, 1.0, 0.8))
    image = pixels(top_down_png(scene))
    middle = image.shape[0] / 2
    bed_col, bed_row = centroid(mask_of(image, object_colour(scene.objects[0])))
    sofa_col, sofa_row = centroid(mask_of(image, object_colour(scene.objects[1])))
    assert bed_row < middle < sofa_row  # north-east bed in the upper half, south-west sofa in the lower
    assert sofa_col < middle < bed_col


def test_top_down_door_is_on_the_bottom_edge():
    scene, _ = room(thing(0, "Bed", 2.0, 3.0, 1.0, 1.0))
    frame = plan_frame(scene)
    door = mask_of(pixels(top_down_png(scene)), rgb(style()["colours"]["door"]))
    rows, cols = np.nonzero(door)
    floor_bottom = frame.pixel(0, 0)[1]
    assert rows.min() >= floor_bottom - 1 and rows.max() <= floor_bottom + style()["top_down"]["wall_px"] + 1
    assert abs(cols.min() - frame.pixel(SIDE / 2 - 0.6, 0)[0]) <= 1.5
    assert abs(cols.max() - frame.pixel(SIDE / 2 + 0.6, 0)[0]) <= 1.5


def test_grid_overlay_draws_region_borders_where_the_bands_change():
    assert region_lines(9) == (3, 6) and region_lines(12) == (4, 8)
    scene, _ = room(thing(0, "Bed", 1.0, 1.0, 0.6, 0.6))
    plain, grid = pixels(top_down_png(scene)), pixels(top_down_png(scene, grid=12))
    frame = plan_frame(scene)
    col = round(frame.pixel(4 * SIDE / 12, 0)[0])
    row = round(frame.pixel(0, SIDE / 2)[1])
    floor = np.array(rgb(style()["colours"]["floor"]))
    assert (plain[row, col] == floor).all() and not (grid[row, col] == floor).all()
    with pytest.raises(RoomspaceError, match="grid size"):
        top_down_png(scene, grid=10)


def test_labels_use_the_dataset_type_words_and_are_recorded_in_the_png():
    scene, house = room(thing(0, "CounterTop", 1.2, 4.5, 1.8, 0.6), thing(1, "TVStand", 4.0, 2.0, 1.2, 0.5))
    for png in offline_images(scene, house).values():
        info = Image.open(io.BytesIO(png)).info
        assert info[LABELS_KEY] == '[["obj|0","counter"],["obj|1","TV stand"]]'
        assert info[RENDER_KEY].startswith("offline")


# --------------------------------------------------------------------------- south door


def top_face_centre(frame_png: bytes, obj: SceneObject) -> tuple[float, float]:
    """Centroid of the pixels drawn in the object's exact colour: its top face, lit straight on."""
    return centroid(mask_of(pixels(frame_png), object_colour(obj)))


def test_south_door_left_right_and_front_behind():
    # tables and cabinets: each has a top in its type's exact colour
    west, east = thing(0, "DiningTable", 1.0, 2.5, 0.8, 0.8), thing(1, "TVStand", 4.4, 2.5, 0.8, 0.8)
    near, far = thing(2, "Desk", 2.7, 1.0, 0.8, 0.8), thing(3, "Dresser", 2.7, 4.6, 0.8, 0.8)
    scene, house = room(west, east, near, far)
    png = offline_images(scene, house)["south_door"]
    (west_col, _), (east_col, _) = top_face_centre(png, west[0]), top_face_centre(png, east[0])
    (_, near_row), (_, far_row) = top_face_centre(png, near[0]), top_face_centre(png, far[0])
    assert west_col < east_col  # west is on the left, seen looking north
    assert far_row < near_row  # farther north is higher up the image


def test_south_door_top_face_lands_where_the_camera_projects_it():
    scene, house = room(thing(0, "DiningTable", 3.6, 3.1, 0.9, 0.7, height=0.5))
    frame = south_door_frame(scene, house)
    col, row = top_face_centre(offline_images(scene, house)["south_door"], scene.objects[0])
    (expected_col, expected_row), _ = frame.camera.project(np.array([3.6, 0.5, 3.1]))
    # a small face: the centroid of its pixels is the projected centre to within perspective's skew
    assert abs(col - expected_col) <= 2 and abs(row - expected_row) <= 2


def test_south_door_door_is_on_the_bottom_edge():
    scene, house = room(thing(0, "Bed", 2.0, 3.0, 1.0, 1.0))
    image = pixels(offline_images(scene, house)["south_door"])
    rows, cols = np.nonzero(mask_of(image, rgb(style()["colours"]["door"])))
    height, width = image.shape[:2]
    assert rows.min() > 0.85 * height
    assert abs((cols.min() + cols.max()) / 2 - width / 2) <= 2


def test_hidden_surfaces_come_from_depth_not_drawing_order():
    near = thing(0, "Dresser", 2.7, 1.2, 2.4, 0.5, height=2.2)
    low_far = thing(1, "Bed", 2.7, 2.2, 0.6, 0.4, height=0.3)
    scene, house = room(near, low_far)
    reversed_scene = dataclasses.replace(scene, objects=scene.objects[::-1])
    png = offline_images(scene, house)["south_door"]
    assert offline_images(reversed_scene, house)["south_door"] == png
    frame = south_door_frame(scene, house)
    assert not (frame.object_of_pixel == 1).any()  # wholly behind the dresser
    assert '"obj|1"' not in Image.open(io.BytesIO(png)).info[LABELS_KEY]  # so not labelled either

    tall_far = thing(1, "Bed", 2.7, 2.2, 0.6, 0.4, height=3.0)
    scene, house = room(near, tall_far)
    frame = south_door_frame(scene, house)
    seen, front = (frame.object_of_pixel == 1), (frame.object_of_pixel == 0)
    assert seen.any()
    # where the far box shows, the near one does not reach: all of it above the dresser's top
    cols = np.nonzero(seen)[1]
    top_of_near = np.nonzero(front[:, cols.min() : cols.max() + 1].any(axis=1))[0].min()
    assert np.nonzero(seen)[0].max() < top_of_near


def test_wall_hung_objects_hang_at_their_height():
    painting = thing(0, "Painting", 2.7, SIDE - 0.01, 0.8, 0.02, height=0.6, bottom=1.5, wall_hung=True)
    scene, house = room(painting, thing(1, "Bed", 1.0, 1.0, 0.5, 0.5))
    frame = south_door_frame(scene, house)
    rows = np.nonzero((frame.object_of_pixel == 0))[0]
    (_, bottom_row), _ = frame.camera.project(np.array([2.7, 1.5, SIDE - 0.02]))
    (_, top_row), _ = frame.camera.project(np.array([2.7, 2.1, SIDE - 0.02]))
    assert abs(rows.max() - bottom_row) <= 2 and abs(rows.min() - top_row) <= 2


def test_same_scene_gives_byte_identical_pngs():
    scene, house = room(thing(0, "Bed", 1.7, 3.9, 1.6, 1.2, yaw=30), thing(1, "Chair", 4.0, 1.5, 0.5, 0.5, yaw=200))
    assert offline_images(scene, house, grid=9) == offline_images(scene, house, grid=9)


def lab(colour: tuple[int, int, int]) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour."""
    c = np.asarray(colour, dtype=float) / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ c
    f = np.cbrt(xyz / [0.95047, 1.0, 1.08883])
    f = np.where(xyz / [0.95047, 1.0, 1.08883] > 0.008856, f, 7.787 * xyz / [0.95047, 1.0, 1.08883] + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_every_type_has_a_colour_of_its_own():
    """Every two types at least 20 CIELAB units apart (chairs and paintings once shared a magenta), and
    each as far from the floor, the walls, the label boxes and the grey of objects that are not prominent."""
    types = {name: lab(rgb(value)) for name, value in style()["types"].items()}
    room_colours = [lab(rgb(style()["colours"][name])) for name in ("floor", "wall_face", "label_box")]
    room_colours.append(lab(rgb(style()["clutter"])))
    names = sorted(types)
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            assert np.linalg.norm(types[a] - types[b]) >= 20, (a, b)
        assert min(np.linalg.norm(types[a] - other) for other in room_colours) >= 20, a


DRAW_ALL = """
import hashlib, sys
from pipeline.render.door import pose_png, south_door_png
from pipeline.render.plan import top_down_png
from pipeline.scene.scene_file import load_house, load_scene
scene, house = load_scene(sys.argv[1]), load_house(sys.argv[1])
for png in (top_down_png(scene, 12), south_door_png(scene, house), pose_png(scene, house, (1.0, 1.0), "E")):
    print(hashlib.sha256(png).hexdigest())
"""


@pytest.mark.parametrize("index", [0, 2])
def test_every_view_is_the_same_bytes_in_another_process_whatever_its_hash_seed(scenes, index):
    """A sampled room's plan, door view and a first-person view, shapes and labels included, drawn here
    and in processes with other string hash seeds."""
    path = scene_path(scenes, SCENE_SEED, index)
    scene, house = load_scene(path), load_house(path)
    pngs = (top_down_png(scene, 12), south_door_png(scene, house), pose_png(scene, house, (1.0, 1.0), "E"))
    here = [hashlib.sha256(png).hexdigest() for png in pngs]
    for seed in ("1", "4242"):
        done = subprocess.run([sys.executable, "-c", DRAW_ALL, str(path)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == here


# --------------------------------------------------------------------------- the job and the command line


@pytest.fixture()
def scene_folder(tmp_path):
    folder = tmp_path / "scenes"
    folder.mkdir()
    for index in range(2):
        scene, house = room(thing(0, "Bed", 1.5 + index, 3.0, 1.0, 1.0), thing(1, "Sofa", 4.0, 1.0, 1.0, 0.6), index=index)
        write_scene(folder / f"{scene.room_id}.json", house, scene)
    return folder


def roomspace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True)


def test_render_command_writes_both_images_and_keeps_them(scene_folder, tmp_path):
    out = tmp_path / "renders"
    done = roomspace("render", "--scenes", str(scene_folder), "--out", str(out), "--seed", "7", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "2 rooms, 4 images drawn now, 0 already there" in done.stdout
    scene, house = room(thing(0, "Bed", 1.5, 3.0, 1.0, 1.0), thing(1, "Sofa", 4.0, 1.0, 1.0, 0.6))
    expected = offline_images(scene, house)  # drawn in this process, the command's in another
    for name, png in expected.items():
        assert (out / "s7-000000" / f"{name}.png").read_bytes() == png

    again = render_rooms(scene_folder, out, seed=7, progress=False)
    assert (again.rendered, again.kept) == (0, 4)
    gridded = render_rooms(scene_folder, out, seed=7, grid=9, progress=False)
    assert (gridded.rendered, gridded.kept) == (2, 2)  # only the top-down images depend on the grid
    forced = render_rooms(scene_folder, out, seed=7, grid=9, force=True, progress=False)
    assert (forced.rendered, forced.kept) == (4, 0)
    assert not list(out.rglob(".*.tmp"))


def test_bad_input_is_a_one_line_error(scene_folder, tmp_path):
    out = tmp_path / "renders"
    unknown = roomspace("render", "--scenes", str(scene_folder), "--out", str(out), "--seed", "7", "--renderer", "povray")
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "roomspace render: error: unknown renderer 'povray' (choose from offline, blender, ai2thor)"

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    unwritable = roomspace("render", "--scenes", str(scene_folder), "--out", str(blocker / "renders"), "--seed", "7")
    assert unwritable.returncode == 1
    assert unwritable.stderr.strip().startswith("roomspace render: error: cannot write to output folder")
    assert len(unwritable.stderr.strip().splitlines()) == 1

    scene, house = room(index=5)
    write_scene(scene_folder / f"{scene.room_id}.json", house, scene)
    empty = roomspace("render", "--scenes", str(scene_folder), "--out", str(out), "--seed", "7", "--quiet")
    assert empty.returncode == 1
    assert empty.stderr.strip() == "roomspace render: error: scene s7-000005 has no objects to draw"
    with pytest.raises(RoomspaceError, match="no objects to draw"):
        offline_images(scene, house)


def test_ai2thor_without_a_build_fails_at_once_and_writes_nothing(scene_folder, tmp_path, monkeypatch):
    import pipeline.render.thor as render_thor

    def no_build():
        raise RoomspaceError("--controller ai2thor needs the AI2-THOR Unity build f0825767cd50, which is not in "
                             "~/.ai2thor/releases and could not be downloaded (offline); use --controller offline")

    monkeypatch.setattr(render_thor, "check_ai2thor_build", no_build)
    out = tmp_path / "renders"
    with pytest.raises(RoomspaceError, match=r"^--renderer ai2thor needs .* use --renderer offline$"):
        render_rooms(scene_folder, out, seed=7, renderer="ai2thor", progress=False)
    assert not out.exists()
    with pytest.raises(RoomspaceError, match="offline and Blender renderers only"):
        render_rooms(scene_folder, out, seed=7, renderer="ai2thor", grid=9, progress=False)
