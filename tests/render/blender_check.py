"""Blender renders, with Blender (`make test-blender`; left out of `make test`): a small room rendered twice
gives the same bytes, Cycles at few samples too, every object stands where the offline renderer draws it,
and the labels are the offline image's.

The file's name is no test_*.py so that no run collects it unasked (it needs .venv-blender and a minute or
two): `make test-blender` names it, with -m blender. Selected without Blender, it fails, saying so."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from conftest import SCENE_SEED, linked_scenes
from handmade import room, thing
from PIL import Image, ImageDraw

import pipeline.render.blender as blender
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.manifest import read_manifest, shard_files
from pipeline.dataset.rows import read_rows
from pipeline.errors import RoomspaceError
from pipeline.render.blender import (BlenderSettings, _Meshes, blender_images, blender_view_png, perspective_request,
                                     top_down_request)
from pipeline.render.door import elevation, object_solids, pose_view, south_door_frame, zbuffer
from pipeline.render.job import Renderer, offline_images
from pipeline.render.plan import plan_frame
from pipeline.render.png import RENDER_KEY, image_labels, label_places
from pipeline.text.configs import Config

pytestmark = [pytest.mark.blender, pytest.mark.slow]
SETTINGS = BlenderSettings.asked()


@pytest.fixture(autouse=True)
def blender_there():
    try:
        blender.check_blender(SETTINGS)
    except RoomspaceError as error:
        pytest.fail(f"no Blender to render with: {error}")
    yield
    fresh_worker()


def fresh_worker() -> None:
    """The next view is rendered by a new Blender process, nothing remembered."""
    blender._stop_workers()
    blender._renders.clear()


def small_room():
    return room(thing(0, "Bed", 1.3, 4.0, 1.6, 2.0, 0.6, yaw=180), thing(1, "Chair", 4.2, 1.6, 0.5, 0.5, 0.9, yaw=90),
                thing(2, "DiningTable", 3.6, 2.6, 1.4, 0.9, 0.75), thing(3, "Sofa", 4.3, 4.6, 1.9, 0.85, 0.8))


def test_a_small_room_renders_to_the_same_bytes_in_two_blender_processes():
    scene, house = small_room()
    view = pose_view(scene, house, (2.7, 1.0), "N")
    first = {**blender_images(scene, house, SETTINGS), "first_person": blender_view_png(scene, house, view, SETTINGS)}
    fresh_worker()
    second = {**blender_images(scene, house, SETTINGS), "first_person": blender_view_png(scene, house, view, SETTINGS)}
    assert first == second
    for png in first.values():
        with Image.open(io.BytesIO(png)) as image:
            assert image.info[RENDER_KEY].startswith(f"Blender {SETTINGS.bpy} workbench")
            assert set(image.info) == {RENDER_KEY, "roomspace-labels", "roomspace-label-places"}  # nothing of Blender's
    # the offline images' labels, at the same places
    offline = offline_images(scene, house)
    for name in offline:
        assert image_labels(first[name]) == image_labels(offline[name])
        assert label_places(first[name]) == label_places(offline[name])


def test_cycles_at_few_samples_gives_the_same_bytes_twice():
    scene, house = small_room()
    camera = south_door_frame(scene, house).camera
    small = dataclasses.replace(camera, width=camera.width // 5, height=camera.height // 5, focal=camera.focal / 5,
                                centre=(camera.centre[0] / 5, camera.centre[1] / 5))
    settings = BlenderSettings.asked("cycles", 4)
    request = perspective_request(scene, house, small, settings, cut_south=True)
    first = blender.rendered(request)
    fresh_worker()
    second = blender.rendered(request)
    assert first.size == (160, 120)
    assert first.tobytes() == second.tobytes()
    assert len(np.unique(np.asarray(first).reshape(-1, 3), axis=0)) > 100  # shaded, not flat


def silhouette(request: dict, meshes: list[dict]) -> np.ndarray:
    """Where Blender draws `meshes` alone (their alpha), rendered flat."""
    alone, _ = blender.worker(SETTINGS).render({**request, "meshes": meshes})
    return np.asarray(alone)[..., 3] > 127


@pytest.mark.parametrize("view", ["south_door", "first_person", "top_down"])
def test_every_object_stands_where_the_offline_renderer_draws_it(view):
    scene, house = small_room()
    heights = elevation(scene, house)
    if view == "top_down":
        request = top_down_request(scene, house, SETTINGS)
        frame = plan_frame(scene)
    else:
        camera = (south_door_frame(scene, house).camera if view == "south_door"
                  else pose_view(scene, house, (2.7, 1.0), "N").frame.camera)
        request = perspective_request(scene, house, camera, SETTINGS, cut_south=view == "south_door")
    seen = 0
    for k, obj in enumerate(scene.objects):
        meshes = _Meshes()
        solids = [solid for owner, solid in object_solids(scene, heights, view == "south_door") if owner == k]
        for solid in solids:
            for polygon, normal in solid.faces():
                meshes.add(polygon, normal, solid.material, "#808080")
        drawn = silhouette(request, meshes.listed())
        if view == "top_down":  # the object seen from above: its parts' outlines, as the plan fills them
            mask = Image.new("1", (frame.size, frame.size), 0)
            pen = ImageDraw.Draw(mask)
            for solid in solids:
                outline, _ = solid.from_above()
                pen.polygon([frame.pixel(x, z) for x, z in outline], fill=1)
            expected = np.asarray(mask)
        else:
            triangles = [(p[0], p[j], p[j + 1]) for solid in solids for p, _ in solid.faces() for j in range(1, len(p) - 1)]
            expected = zbuffer(np.asarray(triangles, dtype=float), np.zeros(len(triangles), dtype=np.int64), camera) >= 0
        union, common = np.count_nonzero(drawn | expected), np.count_nonzero(drawn & expected)
        if np.count_nonzero(expected) < 200:  # out of this view, or nearly
            assert np.count_nonzero(drawn) < 200 + 2 * np.count_nonzero(expected), (view, obj.type)
            continue
        seen += 1
        assert common / union > 0.93, (view, obj.type, common / union)
    assert seen >= 2, view


def test_a_build_asks_the_same_questions_with_either_renderer(scenes, tmp_path):
    base = Config.parse("n5_m4_d144")
    rows, cards = {}, {}
    for name, renderer in (("offline", Renderer()), ("blender", Renderer.asked("blender"))):
        plan = BuildPlan.asked(name, SCENE_SEED, 2, [base], {"vision": [base], "agent": [base]}, renderer=renderer)
        folder = tmp_path / f"scenes-{name}"
        folder.mkdir()
        out = tmp_path / name
        build(plan, linked_scenes(scenes, folder), out, progress=False)
        manifest = read_manifest(out)
        rows[name] = {config: read_rows(shard_files(out, manifest, config)) for config in plan.names}
        cards[name] = (out / "README.md").read_text()
    assert list(rows["offline"]) == list(rows["blender"])
    images = 0
    for config, offline in rows["offline"].items():
        rendered = rows["blender"][config]
        assert len(offline) == len(rendered), config
        for a, b in zip(offline, rendered):
            assert {k: v for k, v in a.items() if k != "image"} == {k: v for k, v in b.items() if k != "image"}
            assert (a.get("image") is None) == (b.get("image") is None)
            if a.get("image") is not None:
                images += 1
                assert a["image"]["bytes"] != b["image"]["bytes"]
                assert image_labels(a["image"]["bytes"]) == image_labels(b["image"]["bytes"])
    assert images
    assert f"The images were rendered by {SETTINGS.describe()}" in cards["blender"]
    assert "The images were rendered by" not in cards["offline"]
