"""The Blender renderer without Blender: the scenes and cameras it hands Blender, the build identity and card
it records, and the one-line errors when Blender is not there (tests/render/blender_check.py renders)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from handmade import room, thing

from pipeline.dataset.build import BuildPlan, build, identity_difference
from pipeline.errors import RoomspaceError
from pipeline.render.blender import (PYTHON_VARIABLE, BlenderSettings, blender_key, perspective_camera,
                                     perspective_request, plan_camera)
from pipeline.render.door import _object_faces, _room_faces, elevation, pose_view, south_door_frame
from pipeline.render.job import Renderer, render_rooms
from pipeline.render.plan import plan_frame
from pipeline.scene.scene_file import write_scene
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS


def small_room():
    return room(thing(0, "Bed", 1.3, 4.0, 1.6, 2.0, 0.6, yaw=180), thing(1, "Chair", 4.2, 1.6, 0.5, 0.5, 0.9, yaw=90),
                thing(2, "Painting", 2.7, 5.37, 0.8, 0.06, 0.6, bottom=1.4, wall_hung=True))


def blender_pixels(camera: dict, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Where Blender puts Blender-world points on the image (continuous pixels, origin at the top-left
    corner): its camera looks along -z of its matrix, +y up; a perspective camera with a horizontal
    sensor fit maps x/depth to lens/sensor of the width, shifted by shift times the larger side; an
    orthographic one spans ortho_scale over the larger side."""
    matrix = np.asarray(camera["matrix"])
    local = (points - matrix[:3, 3]) @ matrix[:3, :3]  # the camera's axes are the matrix's columns
    width, height = size
    if camera["type"] == "ortho":
        per_metre = max(size) / camera["scale"]
        return np.stack([width / 2 + local[:, 0] * per_metre, height / 2 - local[:, 1] * per_metre], axis=-1)
    depth = -local[:, 2]
    focal = camera["lens"] / camera["sensor"] * width
    shift_x, shift_y = camera["shift"]
    return np.stack([width / 2 + focal * local[:, 0] / depth - shift_x * max(size),
                     height / 2 - focal * local[:, 1] / depth + shift_y * max(size)], axis=-1)


def to_blender(points: np.ndarray) -> np.ndarray:
    return points[:, [0, 2, 1]]


@pytest.mark.parametrize("view", ["south_door", "first_person_N", "first_person_E", "first_person_W"])
def test_blender_cameras_see_every_point_where_the_offline_camera_does(view):
    scene, house = small_room()
    camera = (south_door_frame(scene, house).camera if view == "south_door"
              else pose_view(scene, house, (2.5, 2.2), view[-1]).frame.camera)
    points = np.array([(x, y, z) for x in (0.3, 2.0, 4.9) for y in (0.0, 1.1, 2.5) for z in (0.4, 3.0, 5.1)])
    offline, depth = camera.project(points)
    ahead = depth > 0.1
    seen = blender_pixels(perspective_camera(camera), to_blender(points), (camera.width, camera.height))
    # an offline pixel (col, row) is the point (col, row); Blender's pixel centres are half a pixel in
    assert np.allclose(seen[ahead] - 0.5, offline[ahead], atol=1e-3)  # the request rounds to micrometres


def test_the_plan_camera_frames_the_plan_exactly():
    scene, house = small_room()
    frame = plan_frame(scene)
    points = np.array([(x, 0.0, z) for x in (0.0, 1.7, scene.side) for z in (0.0, 4.2, scene.side)])
    seen = blender_pixels(plan_camera(scene, house), to_blender(points), (frame.size, frame.size))
    expected = np.array([frame.pixel(x, z) for x, _, z in points])
    assert np.allclose(seen - 0.5, expected, atol=1e-4)


@pytest.mark.parametrize("cut_south", [True, False])
def test_blender_is_handed_the_offline_faces_each_facing_out(cut_south):
    scene, house = small_room()
    camera = south_door_frame(scene, house).camera
    request = perspective_request(scene, house, camera, BlenderSettings.asked(), cut_south)
    heights = elevation(scene, house)
    offline = _room_faces(scene, heights, cut_south) + _object_faces(scene, heights, cut_south)
    faces = [(np.asarray(mesh["vertices"])[face], mesh) for mesh in request["meshes"] for face in mesh["faces"]]
    ceiling = not cut_south
    assert len(faces) == len(offline) + ceiling
    def key(corners: np.ndarray) -> tuple:
        return tuple(sorted(map(tuple, np.round(corners, 5))))

    offline_normals = {key(to_blender(points)): to_blender(normal[None])[0] for points, normal, _ in offline}
    for corners, mesh in faces:
        normal = np.cross(corners[1] - corners[0], corners[2] - corners[0])
        if mesh["material"] == "ceiling":
            assert normal[2] < 0  # facing down, into the room
            continue
        assert normal @ offline_normals[key(corners)] > 0, mesh["material"]
    # every prominent object's colours are the offline renderer's (render.json), every material is declared
    assert {mesh["material"] for mesh in request["meshes"]} <= set(request["materials"])
    assert {"#3563e7", "#ff7305"} <= {mesh["colour"] for mesh in request["meshes"]}  # Bed, Chair


def test_settings_are_checked_and_named():
    assert BlenderSettings.asked().engine == "workbench"
    cycles = BlenderSettings.asked("cycles", 8)
    assert cycles.describe() == f"Blender {cycles.bpy} cycles, 8 samples, denoised, 1 thread"
    assert blender_key(cycles, "top_down", 12).endswith("top_down grid=12")
    with pytest.raises(RoomspaceError, match="unknown Blender engine 'povray' \\(choose from cycles, workbench, eevee\\)"):
        BlenderSettings.asked("povray")
    with pytest.raises(RoomspaceError, match="settings of --renderer blender"):
        Renderer.asked("offline", engine="cycles")


def test_the_build_identity_names_the_renderer_and_its_settings():
    base = Config.parse("n5_m4_d144")
    offline = BuildPlan.asked("x", 0, 3, [base], {"vision": [base]})
    assert "renderer" not in offline.identity()  # an offline build's identity is what it always was
    workbench = BuildPlan.asked("x", 0, 3, [base], {"vision": [base]}, renderer=Renderer.asked("blender"))
    cycles = BuildPlan.asked("x", 0, 3, [base], {"vision": [base]}, renderer=Renderer.asked("blender", "cycles", 16))
    assert workbench.identity()["renderer"] == {"name": "blender", **vars(BlenderSettings.asked())}
    assert BuildPlan.from_identity(cycles.identity()).renderer == cycles.renderer
    assert identity_difference(offline.identity(), cycles.identity()) == (
        f"its --renderer is roomspace's offline renderer, this command's Blender {cycles.renderer.blender.bpy} cycles, "
        "16 samples, denoised, 1 thread")
    assert identity_difference(workbench.identity(), cycles.identity()).startswith("its --renderer is Blender")
    assert KINDS["vision"].images


def roomspace(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("python", ["missing", "without bpy"])
def test_without_blender_render_and_build_stop_at_once_in_one_line(python, tmp_path, monkeypatch):
    scene, house = small_room()
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    write_scene(scenes / f"{scene.room_id}.json", house, scene)
    named = str(tmp_path / "no-python") if python == "missing" else sys.executable
    env = {**os.environ, PYTHON_VARIABLE: named}
    out = tmp_path / "renders"
    done = roomspace("render", "--scenes", str(scenes), "--out", str(out), "--seed", "7", "--renderer", "blender",
                     "--quiet", env=env)
    assert done.returncode == 1
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1
    assert message.startswith("roomspace render: error: ")
    assert ("does not exist: run `make blender`" if python == "missing" else f"no bpy in {sys.executable}") in message
    assert not out.exists()

    monkeypatch.setenv(PYTHON_VARIABLE, named)
    base = Config.parse("n5_m4_d144")
    plan = BuildPlan.asked("b", 7, 1, [base], {"vision": [base]}, renderer=Renderer.asked("blender"))
    with pytest.raises(RoomspaceError, match="make blender") as stopped:
        build(plan, scenes, tmp_path / "b", progress=False)
    assert "\n" not in str(stopped.value)
    assert not (tmp_path / "b").exists()
    with pytest.raises(RoomspaceError, match="make blender"):
        render_rooms(scenes, out, seed=7, renderer=Renderer.asked("blender"), progress=False)


def test_unknown_renderers_and_settings_are_refused_by_the_commands(tmp_path):
    env = dict(os.environ)
    wrong = roomspace("build", "--rooms", "1", "--out", str(tmp_path / "b"), "--renderer", "ai2thor", env=env)
    assert wrong.stderr.strip() == "roomspace build: error: unknown renderer 'ai2thor' (choose from offline, blender)"
    engine = roomspace("render", "--out", str(tmp_path / "r"), "--blender-engine", "cycles", env=env)
    assert engine.stderr.strip() == ("roomspace render: error: --blender-engine and --blender-samples are settings of "
                                     "--renderer blender")
