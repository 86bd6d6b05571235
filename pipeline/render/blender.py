"""Renders through Blender: `roomspace render --renderer blender`, `roomspace build --renderer blender`.

The same views as the offline renderer, of the same geometry, shaded by Blender: the room's faces
and every object's low-poly parts are those the offline renderer draws (pipeline.render.door's
`room_quads` and `object_solids`, the parts of pipeline/data/shapes.json), each surface in its
render.json colour and made of its material (shapes.json's `materials`, shaded as
pipeline/data/blender.json says), lit by an area light under the ceiling and the sky above the
open room. The cameras are the offline ones: the door view's and every first-person view's
`Camera` (pixel (col, row) of both is the same ray) and the plan's frame, looked at straight down
by an orthographic camera. The labels are the offline renderer's: placed by the offline view's
own pixels (which object each shows) and drawn on the rendered picture by the same code, so both
renderers' images of a view carry the same labels at the same places, and every question of the
vision kinds is the same with either. The plan's walls, openings, wall-hung objects (bars on
their wall), grid, words and compass are drawn on the rendered floor as on the offline plan.

Blender runs in a process of its own (pipeline/render/blender_worker.py, under a Python that has
bpy: numpy < 2 comes with it, so it cannot share roomspace's environment; `make blender` installs
it into .venv-blender, or ROOMSPACE_BLENDER_PYTHON names another), one per roomspace process,
started when first needed. Pixels are deterministic on a machine: every view starts from Blender's
factory settings, with a fixed seed, fixed render threads (and Mesa's for Workbench); the PNG is
written by roomspace (pipeline.render.png), without Blender's metadata, so the bytes are too.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.render.door import (NEAR, Camera, View, elevation, object_solids, perspective_image, room_quads,
                                  south_door_frame, view_name)
from pipeline.render.plan import plan_frame, top_down_image
from pipeline.render.png import png_bytes
from pipeline.render.style import DRAWING_VERSION, check_drawable, colour, style
from pipeline.scene.records import Scene

BLENDER_VERSION = 1  # part of RENDER_KEY: bump it when the Blender images change
WORKER = Path(__file__).with_name("blender_worker.py")
PYTHON_VARIABLE = "ROOMSPACE_BLENDER_PYTHON"
CACHED_RENDERS = 16  # rendered views kept per process: a room's views, asked again with other labels


@cache
def blender_data() -> dict:
    return data_json("blender.json")


@dataclass(frozen=True)
class BlenderSettings:
    """How Blender renders (blender.json's `settings` by default): recorded in each image's
    RENDER_KEY, a build's identity and its card."""

    engine: str  # workbench, cycles or eevee
    samples: int  # Cycles' samples per pixel, EEVEE's (Workbench: blender.json's anti-aliasing)
    denoise: bool  # Cycles' OpenImageDenoise
    threads: int  # render threads
    bpy: str  # Blender's version

    @classmethod
    def asked(cls, engine: str | None = None, samples: int | None = None) -> BlenderSettings:
        """The defaults, with the engine and the sample count asked for, checked."""
        data = blender_data()
        settings = cls(**data["settings"], bpy=data["bpy"])
        if engine is not None:
            if engine not in data["engines"]:
                raise RoomspaceError(f"unknown Blender engine {engine!r} (choose from {', '.join(data['engines'])})")
            settings = replace(settings, engine=engine)
        if samples is not None:
            if isinstance(samples, bool) or not isinstance(samples, int) or samples <= 0:
                raise RoomspaceError(f"Blender samples must be a positive whole number, got {samples!r}")
            settings = replace(settings, samples=samples)
        return settings

    def describe(self) -> str:
        """The settings in words: the card's and the RENDER_KEY's."""
        if self.engine == "workbench":
            shading = f"{blender_data()['workbench']['aa']} anti-aliasing samples"
        else:
            shading = f"{self.samples} samples" + (", denoised" if self.engine == "cycles" and self.denoise else "")
        return f"Blender {self.bpy} {self.engine}, {shading}, {self.threads} thread{'s' * (self.threads != 1)}"

    def identity(self) -> dict:
        return {"name": "blender", **asdict(self)}


def blender_key(settings: BlenderSettings, image_name: str, grid: int | None = None) -> str:
    """What drew a Blender image: the settings, this module's and the offline drawing's versions
    (labels and the plan's marks are the offline renderer's), the view."""
    overlay = f" grid={grid or 0}" if image_name == "top_down" else ""
    return f"{settings.describe()} v{BLENDER_VERSION} offline v{DRAWING_VERSION} {image_name}{overlay}"


# --- the views as Blender scenes --------------------------------------------------------------------

def _blender_point(point) -> list[float]:
    """A point of the offline renderer's world (x east, y up, z north) in Blender's (x east, y north, z up)."""
    x, y, z = point
    return [round(float(x), 6), round(float(z), 6), round(float(y), 6)]


class _Meshes:
    """Faces gathered into one mesh per surface look (material, colour), in the order first seen."""

    def __init__(self) -> None:
        self.meshes: dict[tuple[str, str], dict] = {}

    def add(self, polygon: np.ndarray, normal: np.ndarray, material: str, fill: str) -> None:
        mesh = self.meshes.setdefault((material, fill), {"material": material, "colour": fill,
                                                         "vertices": [], "faces": []})
        points = [_blender_point(p) for p in polygon]
        # Blender's face normal follows the corners' order (counter-clockwise seen from outside)
        a, b, c = (np.asarray(points[k]) for k in range(3))
        if np.cross(b - a, c - a) @ np.asarray(_blender_point(normal)) < 0:
            points = points[::-1]
        start = len(mesh["vertices"])
        mesh["vertices"].extend(points)
        mesh["faces"].append(list(range(start, start + len(points))))

    def listed(self) -> list[dict]:
        return list(self.meshes.values())


def _hex(fill: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in fill)


def _scene_meshes(scene: Scene, house: Mapping, cut_south: bool, ceiling: bool) -> list[dict]:
    """The room's faces (the door view's cut-away south wall or all four walls) and every object's
    parts, as the offline renderer's perspective views stand them; the ceiling where asked."""
    heights = elevation(scene, house)
    meshes = _Meshes()
    room = blender_data()["room"]
    for polygon, normal, name in room_quads(scene, heights, cut_south):
        meshes.add(polygon, normal, room[name], style()["colours"][name])
    if ceiling:
        w, h = scene.side, heights.wall
        meshes.add(np.array([(0, h, 0), (w, h, 0), (w, h, w), (0, h, w)], dtype=float), np.array([0.0, -1.0, 0.0]),
                   "ceiling", blender_data()["ceiling"])
    for _, solid in object_solids(scene, heights, cut_south):
        for polygon, normal in solid.faces():
            meshes.add(polygon, normal, solid.material, _hex(solid.colour))
    return meshes.listed()


def _lights(scene: Scene, house: Mapping) -> list[dict]:
    spec = blender_data()["light"]
    wall = elevation(scene, house).wall
    side = spec["size"] * scene.side
    return [{"size": [side, side], "power": spec["watts_per_m2"] * scene.side ** 2, "colour": spec["colour"],
             "location": [scene.side / 2, scene.side / 2, wall - spec["below_ceiling"]]}]


def perspective_camera(camera: Camera) -> dict:
    """The offline renderer's pinhole camera as Blender's: the same ray through every pixel centre.

    Blender's camera looks down its -z with +y up; its sensor is the image's width in pixels, its
    lens the focal length in pixels, and its shift moves the principal point where the offline
    camera has it (an offline pixel (col, row) is the point (col, row), Blender's pixel centres
    are half a pixel in)."""
    s, c = math.sin(camera.pitch), math.cos(camera.pitch)
    (rx, rz), (ax, az) = {"N": ((1.0, 0.0), (0.0, 1.0)), "E": ((0.0, -1.0), (1.0, 0.0)),
                          "S": ((-1.0, 0.0), (0.0, -1.0)), "W": ((0.0, 1.0), (-1.0, 0.0))}[camera.facing]
    right = np.array([rx, 0.0, rz])
    forward = np.array([ax * c, -s, az * c])
    up = np.array([ax * s, c, az * s])
    columns = [_blender_point(v) for v in (right, up, -forward)] + [_blender_point(camera.position)]
    matrix = [[columns[j][i] for j in range(4)] for i in range(3)] + [[0.0, 0.0, 0.0, 1.0]]
    width, height = camera.width, camera.height
    shift = ((width / 2 - camera.centre[0] - 0.5) / max(width, height),
             (camera.centre[1] + 0.5 - height / 2) / max(width, height))
    return {"type": "persp", "matrix": matrix, "sensor": float(width), "lens": float(camera.focal),
            "shift": [round(v, 9) for v in shift], "clip": [NEAR, 200.0]}


def plan_camera(scene: Scene, house: Mapping) -> dict:
    """An orthographic camera straight above the room, north up, framing the plan's pixels exactly."""
    frame = plan_frame(scene)
    centre = (frame.size / 2 - 0.5 - frame.margin) / frame.scale  # the image's middle, in metres from the west wall
    height = elevation(scene, house).wall + 1.0
    matrix = [[1.0, 0.0, 0.0, round(centre, 6)], [0.0, 1.0, 0.0, round(scene.side - centre, 6)],
              [0.0, 0.0, 1.0, round(height, 6)], [0.0, 0.0, 0.0, 1.0]]
    return {"type": "ortho", "matrix": matrix, "scale": round(frame.size / frame.scale, 9), "clip": [0.01, height + 1.0]}


def view_request(scene: Scene, house: Mapping, camera: dict, size: tuple[int, int], settings: BlenderSettings,
                 cut_south: bool = False, ceiling: bool = False) -> dict:
    """Everything the worker needs to render one view (pipeline/render/blender_worker.py)."""
    data = blender_data()
    workbench = {**data["workbench"], "light_direction": data["workbench"]["light_direction"][
        "top_down" if camera["type"] == "ortho" else "perspective"]}
    return {"settings": asdict(settings), "engine": data["engines"][settings.engine], "size": list(size),
            "camera": camera, "meshes": _scene_meshes(scene, house, cut_south, ceiling),
            "materials": data["materials"], "lights": _lights(scene, house), "world": data["world"],
            "look": data["look"][settings.engine], "cycles": data["cycles"], "workbench": workbench}


def top_down_request(scene: Scene, house: Mapping, settings: BlenderSettings) -> dict:
    size = plan_frame(scene).size
    return view_request(scene, house, plan_camera(scene, house), (size, size), settings)


def perspective_request(scene: Scene, house: Mapping, camera: Camera, settings: BlenderSettings,
                        cut_south: bool) -> dict:
    """The door view (`cut_south`: its south wall cut down, seen from outside) or a first-person
    view (every wall standing, under the ceiling)."""
    return view_request(scene, house, perspective_camera(camera), (camera.width, camera.height), settings,
                        cut_south=cut_south, ceiling=not cut_south)


# --- the worker ------------------------------------------------------------------------------------

def blender_python() -> Path:
    """The Python that has bpy: ROOMSPACE_BLENDER_PYTHON, else this checkout's .venv-blender."""
    named = os.environ.get(PYTHON_VARIABLE)
    path = Path(named) if named else Path(__file__).resolve().parents[2] / ".venv-blender" / "bin" / "python"
    if not path.exists():
        where = f"{PYTHON_VARIABLE}={named}" if named else str(path)
        raise RoomspaceError(f"--renderer blender needs Blender's Python module bpy=={blender_data()['bpy']}, and "
                             f"{where} does not exist: run `make blender` (installs it into .venv-blender) or set "
                             f"{PYTHON_VARIABLE} to a Python 3.11 that has it")
    return path


class BlenderWorker:
    """One Blender process, rendering views one after another (pipeline/render/blender_worker.py)."""

    def __init__(self, python: Path, threads: int) -> None:
        self.python = python
        self.folder = tempfile.TemporaryDirectory(prefix="roomspace-blender-")
        self.log = open(Path(self.folder.name) / "blender.log", "w+b")
        # Workbench renders through Mesa's software OpenGL: its threads are fixed as Cycles' are.
        env = {**os.environ, "LP_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
        self.process = subprocess.Popen([str(python), str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, env=env, text=True, bufsize=1)
        hello = self._answer()
        if "bpy" not in hello:
            self.close()
            raise RoomspaceError(f"--renderer blender: {hello.get('error', hello)}; run `make blender` (installs "
                                 f"bpy=={blender_data()['bpy']} into .venv-blender) or set {PYTHON_VARIABLE} "
                                 "to a Python 3.11 that has it")
        self.version = hello["bpy"]
        if self.version != blender_data()["bpy"]:
            self.close()
            raise RoomspaceError(f"--renderer blender: {python} has bpy {self.version}, the images are made with "
                                 f"{blender_data()['bpy']}; run `make blender`")

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.log.seek(0)
            tail = self.log.read().decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise RoomspaceError(f"the Blender worker ({self.python}) stopped (exit code {self.process.wait()}): {tail[0]}")
        return json.loads(line)

    def render(self, request: dict) -> tuple[Image.Image, float]:
        """The view's pixels (RGBA) and the CPU seconds Blender took."""
        out = Path(self.folder.name) / "view.png"
        out.unlink(missing_ok=True)
        self.process.stdin.write(json.dumps({**request, "out": str(out)}) + "\n")
        self.process.stdin.flush()
        answer = self._answer()
        if "error" in answer:
            raise RoomspaceError(f"Blender could not render a view: {answer['error']}")
        with Image.open(out) as image:
            image.load()
            return image.convert("RGBA"), answer["seconds"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()
        self.log.close()
        self.folder.cleanup()


_workers: dict[tuple, BlenderWorker] = {}
_renders: OrderedDict[str, Image.Image] = OrderedDict()


def worker(settings: BlenderSettings) -> BlenderWorker:
    """This process's Blender worker, started at the first view (and stopped when the process ends)."""
    key = (os.getpid(), blender_python(), settings.threads)
    if key not in _workers:
        _workers[key] = BlenderWorker(key[1], settings.threads)
    return _workers[key]


@atexit.register
def _stop_workers() -> None:
    for started in _workers.values():
        started.close()
    _workers.clear()


def check_blender(settings: BlenderSettings) -> None:
    """Start a worker and stop it: a missing bpy is a one-line error before anything is drawn (the
    processes that draw start their own)."""
    BlenderWorker(blender_python(), settings.threads).close()


def rendered(request: dict) -> Image.Image:
    """The view rendered and laid on the background colour (RGB); a view asked again (another
    configuration's labels on the same room) is not rendered again."""
    key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    if key not in _renders:
        settings = BlenderSettings(**request["settings"])
        image, _ = worker(settings).render(request)
        background = Image.new("RGBA", image.size, (*colour("background"), 255))
        _renders[key] = Image.alpha_composite(background, image).convert("RGB")
        while len(_renders) > CACHED_RENDERS:
            _renders.popitem(last=False)
    _renders.move_to_end(key)
    return _renders[key]


# --- the images ------------------------------------------------------------------------------------

def blender_top_down_png(scene: Scene, house: Mapping, settings: BlenderSettings, grid: int | None = None,
                         names: Mapping[str, str] | None = None) -> bytes:
    check_drawable(scene)
    backdrop = rendered(top_down_request(scene, house, settings))
    image, labels, places = top_down_image(scene, grid, names, backdrop)
    return png_bytes(image, blender_key(settings, "top_down", grid), labels, places)


def blender_south_door_png(scene: Scene, house: Mapping, settings: BlenderSettings,
                           names: Mapping[str, str] | None = None) -> bytes:
    frame = south_door_frame(scene, house)
    backdrop = rendered(perspective_request(scene, house, frame.camera, settings, cut_south=True))
    image, labels, places = perspective_image(scene, frame, names, "south_door", backdrop)
    return png_bytes(image, blender_key(settings, "south_door"), labels, places)


def blender_view_png(scene: Scene, house: Mapping, view: View, settings: BlenderSettings,
                     names: Mapping[str, str] | None = None) -> bytes:
    """A first-person view (pipeline.render.door.pose_view) rendered, labelled as the offline one is."""
    backdrop = rendered(perspective_request(scene, house, view.frame.camera, settings, cut_south=False))
    camera = view.camera
    image, labels, places = perspective_image(scene, view.frame, names, f"pose ({camera.x}, {camera.z}) {camera.facing}",
                                              backdrop, may_cross=False)
    return png_bytes(image, blender_key(settings, view_name(view)), labels, places)


def blender_images(scene: Scene, house: Mapping, settings: BlenderSettings, grid: int | None = None,
                   names: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Both views of a scene rendered by Blender, by image name, labelled as the offline images are."""
    return {"top_down": blender_top_down_png(scene, house, settings, grid, names),
            "south_door": blender_south_door_png(scene, house, settings, names)}
