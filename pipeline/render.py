"""Renders of a scene for VLM items: a top-down plan and the view from the south door (design.md section 0).

Two images per room, `OUT/<room_id>/top_down.png` and `OUT/<room_id>/south_door.png`, drawn from
the scene record (footprints, yaw, sizes, walls, openings) and the house JSON in the scene file
(each object's height above the floor, the wall height, the openings' heights). The images show
the continuous scene: object centres in metres, as `Item.continuous_relation` measures them.

* Top-down: north up, east right, one pixel scale for both axes. Floor, walls, the door (a gap in
  the bottom wall, labelled) and windows (light blue in the walls); every object is its oriented
  footprint filled with its type's colour (pipeline/data/render.json), drawn lowest top first so
  that what is higher hides what is under it, as seen from above. Prominent objects carry their
  type words (the dataset's object names, unnumbered); other objects are grey and unlabelled.
  `grid=d` overlays the d x d cells and the nine regions (thicker lines, region codes).
* South door: a perspective view looking north. The camera stands behind the door, outside the
  room, with the south wall cut down to a low sill, so that objects near the south corners are
  in frame (from inside the doorway they would be behind the observer's shoulders). Every object
  is a box of its real height at its height above the floor, wall-hung ones on their wall; an
  object hung on the cut-away south wall is drawn as a low block at the foot of that wall, so it
  keeps its place in plan without hiding the room. Hidden surfaces are exact: the faces are
  triangles rasterised into a numpy z-buffer (1/depth interpolated linearly in screen space,
  the nearest face wins each pixel); face edges and silhouettes are drawn where the winning face
  changes. Labels sit above each object's visible pixels, with a leader to a dot on the object;
  objects fully hidden are not labelled.

Both images are deterministic: the same scene gives byte-identical PNGs (no antialiasing, fixed
PNG settings; the label font is Pillow's bundled one). Each PNG carries two text chunks:
RENDER_KEY (what drew it; an image is redrawn when it differs) and LABELS_KEY (JSON list of
[object id, label] for the objects labelled, i.e. visible, in it; pipeline.vision reads it).
`--renderer ai2thor` (pipeline.render_thor) draws the same two views photoreal.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo
from shapely.geometry import Polygon, box

from pipeline.assets import data_json
from pipeline.errors import RoomspaceError
from pipeline.files import writable_folder, write_atomic
from pipeline.grid import check_grid_size
from pipeline.items import type_words
from pipeline.records import Scene, SceneObject
from pipeline.relations import REGIONS, band, region_bands

RENDERERS = ("offline", "ai2thor")
IMAGES = ("top_down", "south_door")  # file stems, one per view
RENDER_KEY = "roomspace-render"
LABELS_KEY = "roomspace-labels"
DRAWING_VERSION = 1  # part of RENDER_KEY: bump it when the drawings change, and old images are redrawn

SOUTH_SILL = 0.12  # m: the south wall is drawn cut down to this height in the south-door view
WALL_THICKNESS = 0.12  # m: the cut south wall's thickness, outside the room (z < 0)
CAMERA_BACK = 0.7  # the south-door camera stands this many room sides behind the door ...
CAMERA_HEIGHT = 0.62  # ... this many room sides above the floor ...
CAMERA_PITCH = math.radians(28)  # ... and looks north, tilted down by this much
MIN_VISIBLE_PX = 40  # an object with fewer visible pixels than this is not labelled in the south-door view
LABEL_PAD = 3  # px between a label's text and its box


# --------------------------------------------------------------------------- style and heights


@cache
def style() -> dict:
    return data_json("render.json")


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))


def colour(name: str) -> tuple[int, int, int]:
    return rgb(style()["colours"][name])


def object_colour(obj: SceneObject) -> tuple[int, int, int]:
    """The fill of an object: its type's colour if it is prominent, the clutter grey otherwise."""
    if not obj.prominent:
        return rgb(style()["clutter"])
    return rgb(style()["types"].get(obj.type, style()["other_type"]))


@cache
def font(px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(px)


@dataclass(frozen=True)
class Elevation:
    """The heights a scene record leaves out, read from its house JSON (metres above the floor)."""

    wall: float  # height of the walls
    bottoms: Mapping[str, float]  # object id -> height of the bottom of its bounding box
    openings: tuple[tuple[float, float], ...]  # per scene.openings entry: (bottom, top)


def elevation(scene: Scene, house: Mapping) -> Elevation:
    """Heights from the house JSON: ProcTHOR's object position is its bounding box's centre."""
    centres = {o["id"]: float(o["position"]["y"]) for o in house["objects"]}
    missing = [o.id for o in scene.objects if o.id not in centres]
    if missing:
        raise RoomspaceError(f"scene {scene.room_id}: objects {missing} are not in its house JSON")
    bottoms = {o.id: max(0.0, centres[o.id] - o.size[1] / 2) for o in scene.objects}
    wall = max(float(p["y"]) for w in house["walls"] for p in w["polygon"])
    # scene.openings lists the house's doors, then its windows (pipeline.scenes._openings)
    holes = [*(house.get("doors") or []), *(house.get("windows") or [])]
    openings = tuple((float(h["boundingBox"]["min"]["y"]), float(h["boundingBox"]["max"]["y"])) for h in holes)
    if len(openings) != len(scene.openings):
        raise RoomspaceError(f"scene {scene.room_id}: its house JSON has {len(openings)} openings, the record {len(scene.openings)}")
    return Elevation(wall=wall, bottoms=bottoms, openings=openings)


def check_drawable(scene: Scene) -> None:
    if not scene.objects:
        raise RoomspaceError(f"scene {scene.room_id} has no objects to draw")


def png_bytes(image: Image.Image, render_key: str, labels: list[tuple[str, str]] | None) -> bytes:
    """PNG with fixed settings, so the same pixels and labels always give the same bytes."""
    info = PngInfo()
    info.add_text(RENDER_KEY, render_key)
    if labels is not None:
        info.add_text(LABELS_KEY, json.dumps([list(pair) for pair in labels], separators=(",", ":")))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", pnginfo=info, compress_level=6)
    return buffer.getvalue()


def offline_key(image_name: str, grid: int | None = None) -> str:
    """What drew an offline image; the grid overlay is drawn on the top-down image only."""
    overlay = f" grid={grid or 0}" if image_name == "top_down" else ""
    return f"offline v{DRAWING_VERSION} {image_name}{overlay}"


# --------------------------------------------------------------------------- labels


@dataclass(frozen=True)
class LabelRequest:
    text: str
    dot: tuple[float, float]  # the point on the object the label names (px)
    candidates: tuple[tuple[float, float], ...]  # label-box centres to try, best first (px)
    inside: Callable[[tuple[float, float, float, float]], bool] | None  # does a box lie on the object itself?


def place_labels(draw: ImageDraw.ImageDraw, requests: list[LabelRequest], size: tuple[int, int], px: int) -> None:
    """Draw each label at its first candidate that stays in the image and overlaps no earlier label.

    A label away from its object gets a leader line to a dot on the object, so every label
    points at exactly one object.
    """
    text_font = font(px)
    taken: list[tuple[float, float, float, float]] = []
    for request in requests:
        left, top, right, bottom = text_font.getbbox(request.text)
        half_w, half_h = (right - left) / 2 + LABEL_PAD, (bottom - top) / 2 + LABEL_PAD
        boxes = [(cx - half_w, cy - half_h, cx + half_w, cy + half_h) for cx, cy in request.candidates]
        # A label lies inside its object's area, or off the dot it points at: never over the object's centre.
        clear = [b for b in boxes if _inside(request.inside, b) or not _overlap(b, (*request.dot, *request.dot), 4)]
        fits = [b for b in clear if b[0] >= 1 and b[1] >= 1 and b[2] <= size[0] - 2 and b[3] <= size[1] - 2]
        free = [b for b in fits if not any(_overlap(b, t) for t in taken)]
        chosen = (free or fits or clear or boxes)[0]
        taken.append(chosen)
        x0, y0, x1, y1 = (round(v) for v in chosen)
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        if not _inside(request.inside, (x0, y0, x1, y1)):
            target = _nearest_on_box(request.dot, (x0, y0, x1, y1))
            draw.line([target, request.dot], fill=colour("label_border"), width=1)
            dx, dy = request.dot
            draw.ellipse([dx - 3, dy - 3, dx + 3, dy + 3], fill=colour("label_text"))
        draw.rectangle([x0, y0, x1, y1], fill=colour("label_box"), outline=colour("label_border"))
        draw.text(centre, request.text, fill=colour("label_text"), font=text_font, anchor="mm")


def _inside(on_object: Callable[[tuple], bool] | None, rect: tuple) -> bool:
    """A label on its object needs neither leader nor dot."""
    return on_object is not None and on_object(rect)


def _overlap(a: tuple, b: tuple, gap: float = 2) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _nearest_on_box(point: tuple[float, float], rect: tuple) -> tuple[float, float]:
    return (min(max(point[0], rect[0]), rect[2]), min(max(point[1], rect[1]), rect[3]))


# --------------------------------------------------------------------------- top-down


@dataclass(frozen=True)
class PlanFrame:
    """Where the room [0, side]^2 lies on the top-down image; pixel (col, row) is the point (col, row)."""

    size: int  # image width = height, px
    margin: float  # px between the image edge and the room's inner wall face
    scale: float  # px per metre
    side: float  # metres

    def pixel(self, x: float, z: float) -> tuple[float, float]:
        """North up: z grows upward on the image, so rows count down from the north wall."""
        return (self.margin + x * self.scale, self.margin + (self.side - z) * self.scale)


def plan_frame(scene: Scene) -> PlanFrame:
    layout = style()["top_down"]
    size, margin = layout["size"], layout["margin"]
    return PlanFrame(size=size, margin=margin, scale=(size - 1 - 2 * margin) / scene.side, side=scene.side)


def top_down_image(scene: Scene, grid: int | None = None) -> tuple[Image.Image, list[tuple[str, str]]]:
    """The plan image and the (object id, label) pairs drawn on it."""
    check_drawable(scene)
    if grid is not None:
        check_grid_size(grid)
    layout = style()["top_down"]
    frame = plan_frame(scene)
    image = Image.new("RGB", (frame.size, frame.size), colour("background"))
    draw = ImageDraw.Draw(image)
    (x0, y0), (x1, y1) = frame.pixel(0, scene.side), frame.pixel(scene.side, 0)
    wall_px = layout["wall_px"]
    draw.rectangle([x0 - wall_px, y0 - wall_px, x1 + wall_px, y1 + wall_px], fill=colour("wall"))
    draw.rectangle([x0, y0, x1, y1], fill=colour("floor"))
    for opening in scene.openings:
        _draw_opening(draw, frame, opening.wall, opening.start, opening.end, colour(opening.kind), wall_px)

    # Higher tops hide lower ones from above; wall-hung objects are drawn last, on their wall.
    for obj in sorted(scene.objects, key=lambda o: (o.wall_hung, o.size[1])):
        points = [frame.pixel(x, z) for x, z in obj.footprint]
        fill = object_colour(obj)
        outline = tuple(int(c * 0.55) for c in fill)
        if obj.wall_hung:  # a few centimetres deep: a bar on the wall, thick enough to see
            draw.polygon(points, fill=fill, outline=fill, width=5)
        else:
            draw.polygon(points, fill=fill, outline=outline, width=1)
    if grid is not None:
        image = _grid_overlay(image, frame, grid)
        draw = ImageDraw.Draw(image)

    door = next((o for o in scene.openings if o.kind == "door"), None)
    if door is not None:
        dx, dy = frame.pixel((door.start[0] + door.end[0]) / 2, 0)
        draw.text((dx, dy + wall_px + 3), "door", fill=colour("label_text"), font=font(layout["small_font_px"]), anchor="mt")
    _draw_compass(draw, frame, layout["small_font_px"])

    labelled = [o for o in scene.objects if o.prominent]
    labelled.sort(key=lambda o: Polygon(o.footprint).area)  # small objects choose their place first
    requests, labels = [], []
    for obj in labelled:
        shape = Polygon([frame.pixel(x, z) for x, z in obj.footprint])
        cx, cy = frame.pixel(obj.x, obj.z)
        minx, miny, maxx, maxy = shape.bounds
        text = type_words(obj.type)
        height = font(layout["font_px"]).getbbox(text)[3] + 2 * LABEL_PAD
        step = height + 2
        around = [(cx, miny - step / 2 - 2), (cx, maxy + step / 2 + 2), (maxx + 40, cy), (minx - 40, cy)]
        further = [(cx, miny - step / 2 - 2 - k * step) for k in range(1, 4)] + [(cx, maxy + step / 2 + 2 + k * step) for k in range(1, 4)]
        on_object = None if obj.wall_hung else (lambda rect, shape=shape: shape.contains(box(*rect)))
        requests.append(LabelRequest(text, (cx, cy), ((cx, cy), *around, *further), on_object))
        labels.append((obj.id, text))
    place_labels(draw, requests, image.size, layout["font_px"])
    return image, sorted(labels)


def _draw_opening(draw, frame: PlanFrame, wall: str, start, end, fill, wall_px: int) -> None:
    """An opening as a coloured block across the wall's thickness, between its ends."""
    (ax, ay), (bx, by) = frame.pixel(*start), frame.pixel(*end)
    offset = {"south": (0, 1), "north": (0, -1), "east": (1, 0), "west": (-1, 0)}[wall]
    cx0, cx1 = sorted((ax, bx))
    cy0, cy1 = sorted((ay, by))
    ox, oy = offset[0] * wall_px, offset[1] * wall_px
    draw.rectangle([min(cx0, cx0 + ox), min(cy0, cy0 + oy), max(cx1, cx1 + ox), max(cy1, cy1 + oy)], fill=fill)


def _draw_compass(draw, frame: PlanFrame, px: int) -> None:
    """A north arrow in the top-right margin."""
    x = frame.size - frame.margin / 2
    top, bottom = 6, frame.margin - 14
    ink = colour("compass")
    draw.line([(x, top + 6), (x, bottom)], fill=ink, width=2)
    draw.polygon([(x, top), (x - 5, top + 9), (x + 5, top + 9)], fill=ink)
    draw.text((x, bottom + 1), "N", fill=ink, font=font(px), anchor="mt")


def region_lines(d: int) -> tuple[int, int]:
    """The two cell indices where band(k) steps up: the region borders of a d x d grid."""
    return tuple(k for k in range(1, d) if band(k, d) != band(k - 1, d))


def _grid_overlay(image: Image.Image, frame: PlanFrame, d: int) -> Image.Image:
    """The d x d cells (thin) and the nine regions (thick, with their codes), translucent over the plan."""
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    cell = frame.side / d
    borders = region_lines(d)
    for k in range(1, d):
        thick = k in borders
        ink = (*colour("region" if thick else "grid"), 200 if thick else 110)
        x, _ = frame.pixel(k * cell, 0)
        _, y = frame.pixel(0, k * cell)
        top, bottom = frame.pixel(0, frame.side)[1], frame.pixel(0, 0)[1]
        left, right = frame.pixel(0, 0)[0], frame.pixel(frame.side, 0)[0]
        draw.line([(x, top), (x, bottom)], fill=ink, width=3 if thick else 1)
        draw.line([(left, y), (right, y)], fill=ink, width=3 if thick else 1)
    starts = (0, *borders)
    for code in REGIONS:
        bi, bj = region_bands(code)
        x, y = frame.pixel(starts[bi] * cell, (starts[bj + 1] if bj < 2 else d) * cell)
        draw.text((x + 4, y + 3), code, fill=(*colour("region"), 230), font=font(style()["top_down"]["small_font_px"]),
                  stroke_width=2, stroke_fill=(*colour("label_box"), 200))  # a halo: legible on any fill
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")


def top_down_png(scene: Scene, grid: int | None = None) -> bytes:
    image, labels = top_down_image(scene, grid)
    return png_bytes(image, offline_key("top_down", grid), labels)


# --------------------------------------------------------------------------- south door: geometry


@dataclass(frozen=True)
class Camera:
    """A pinhole camera looking north, tilted down; pixel (col, row) is the point (col, row)."""

    position: tuple[float, float, float]  # x, y, z in metres
    pitch: float  # radians below the horizon
    focal: float  # px
    centre: tuple[float, float]  # principal point, px
    width: int
    height: int

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        """World points (..., 3) -> camera coordinates (right, up, forward); east is right."""
        d = points - np.asarray(self.position)
        s, c = math.sin(self.pitch), math.cos(self.pitch)
        right = d[..., 0]
        up = d[..., 1] * c + d[..., 2] * s
        forward = d[..., 2] * c - d[..., 1] * s
        return np.stack([right, up, forward], axis=-1)

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pixels (..., 2), forward depth (...)) of world points."""
        cam = self.to_camera(points)
        depth = cam[..., 2]
        cols = self.centre[0] + self.focal * cam[..., 0] / depth
        rows = self.centre[1] - self.focal * cam[..., 1] / depth
        return np.stack([cols, rows], axis=-1), depth


@dataclass(frozen=True)
class Surface:
    """One flat face drawn in the south-door view."""

    owner: str | None  # the object id, or None for the room (floor, walls, openings)
    colour: tuple[int, int, int]


@dataclass(frozen=True)
class SouthDoorFrame:
    """The rasterised view before labels: which surface, and which object, each pixel shows."""

    camera: Camera
    surfaces: tuple[Surface, ...]
    surface_of_pixel: np.ndarray  # (height, width) int32 index into surfaces, -1 for background
    object_of_pixel: np.ndarray  # (height, width) int32 index into scene.objects, -1 for room or background


def shade(normal: np.ndarray) -> float:
    """Brightness of a face: Lambert with render.json's light, scaled so that top faces are 1."""
    spec = style()["shade"]
    light = np.asarray(spec["light"], dtype=float)
    light /= np.linalg.norm(light)

    def lit(n: np.ndarray) -> float:
        return spec["ambient"] + spec["diffuse"] * max(0.0, float(n @ light))

    return lit(normal) / lit(np.array([0.0, 1.0, 0.0]))


def _shaded(base: tuple[int, int, int], normal: np.ndarray) -> tuple[int, int, int]:
    k = shade(normal)
    return tuple(min(255, round(c * k)) for c in base)


def _box_faces(corners: list[tuple[float, float]], bottom: float, top: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """The six faces of a vertical prism over a convex footprint: (quad (4, 3), outward normal)."""
    low = [np.array([x, bottom, z]) for x, z in corners]
    high = [np.array([x, top, z]) for x, z in corners]
    centre = (sum(low) + sum(high)) / (2 * len(corners))
    quads = [np.array(low[::-1]), np.array(high)]
    quads += [np.array([low[k], low[(k + 1) % 4], high[(k + 1) % 4], high[k]]) for k in range(4)]
    faces = []
    for quad in quads:
        normal = np.cross(quad[1] - quad[0], quad[2] - quad[0])
        length = np.linalg.norm(normal)
        if length < 1e-12:
            continue
        normal /= length
        if normal @ (quad.mean(axis=0) - centre) < 0:
            normal = -normal
        faces.append((quad, normal))
    return faces


def _room_faces(scene: Scene, heights: Elevation) -> list[tuple[np.ndarray, np.ndarray, Surface]]:
    """Floor, the west, north and east walls with their windows, the cut south wall and the door's threshold."""
    w, h = scene.side, heights.wall
    wall = colour("wall_face")
    out = []

    def quad(points, normal, fill):
        n = np.asarray(normal, dtype=float)
        out.append((np.asarray(points, dtype=float), n, Surface(None, _shaded(fill, n))))

    quad([(0, 0, 0), (w, 0, 0), (w, 0, w), (0, 0, w)], (0, 1, 0), colour("floor"))
    quad([(0, 0, 0), (0, 0, w), (0, h, w), (0, h, 0)], (1, 0, 0), wall)  # west, facing east
    quad([(0, 0, w), (w, 0, w), (w, h, w), (0, h, w)], (0, 0, -1), wall)  # north, facing south
    quad([(w, 0, 0), (w, 0, w), (w, h, w), (w, h, 0)], (-1, 0, 0), wall)  # east, facing west
    inset = 0.01  # m: a window is drawn just inside its wall, so the z-buffer puts it in front
    planes = {"west": (0, inset, (1, 0, 0)), "north": (2, w - inset, (0, 0, -1)), "east": (0, w - inset, (-1, 0, 0))}
    door_span = (0.0, 0.0)
    for opening, (low, high) in zip(scene.openings, heights.openings):
        if opening.kind == "door":
            door_span = (min(opening.start[0], opening.end[0]), max(opening.start[0], opening.end[0]))
            x0, x1 = door_span
            quad([(x0, 0.003, -WALL_THICKNESS), (x1, 0.003, -WALL_THICKNESS), (x1, 0.003, 0), (x0, 0.003, 0)],
                 (0, 1, 0), colour("door"))
        elif opening.wall in planes:  # a window on the cut-away south wall is not drawn
            axis, level, normal = planes[opening.wall]
            (ax, az), (bx, bz) = opening.start, opening.end
            corners = [(ax, az), (bx, bz)]
            points = []
            for (px, pz), y in zip(corners + corners[::-1], (low, low, high, high)):
                point = [px, y, pz]
                point[axis] = level
                points.append(point)
            quad(points, normal, colour("window"))
    sill = colour("wall")
    for x0, x1 in ((0.0, door_span[0]), (door_span[1], w)):
        if x1 - x0 > 1e-6:
            for points, normal in _box_faces([(x0, -WALL_THICKNESS), (x1, -WALL_THICKNESS), (x1, 0), (x0, 0)], 0.0, SOUTH_SILL):
                out.append((points, normal, Surface(None, _shaded(sill, normal))))
    return out


def _object_faces(scene: Scene, heights: Elevation) -> list[tuple[np.ndarray, np.ndarray, Surface]]:
    out = []
    for obj in scene.objects:
        if obj.wall_hung and "south" in obj.walls:  # on the cut-away wall: a low block at its foot
            bottom, top = 0.0, SOUTH_SILL
        else:
            bottom = heights.bottoms[obj.id]
            top = bottom + obj.size[1]
        base = object_colour(obj)
        for points, normal in _box_faces(list(obj.footprint), bottom, top):
            out.append((points, normal, Surface(obj.id, _shaded(base, normal))))
    return out


def south_door_camera(scene: Scene, heights: Elevation, faces: list) -> Camera:
    """The camera behind the door, its focal length and principal point fitted to frame the room.

    Fitted to the floor, the door's threshold, the far wall and every object, so nothing the
    questions ask about leaves the frame; the near ends of the side walls may.
    """
    layout = style()["south_door"]
    width, height, margin = layout["width"], layout["height"], layout["margin"]
    w = scene.side
    position = (w / 2, CAMERA_HEIGHT * w, -CAMERA_BACK * w)
    probe = Camera(position, CAMERA_PITCH, 1.0, (0.0, 0.0), width, height)
    keep = [np.array([(0, 0, -WALL_THICKNESS), (w, 0, -WALL_THICKNESS), (0, 0, w), (w, 0, w), (0, heights.wall, w), (w, heights.wall, w)], dtype=float)]
    keep += [points for points, _, surface in faces if surface.owner is not None]
    flat, depth = probe.project(np.concatenate(keep))
    if depth.min() <= 0.05:
        raise RoomspaceError(f"scene {scene.room_id}: geometry behind the south-door camera")
    u, v = flat[:, 0], -flat[:, 1]  # v grows upward
    focal = min((width - 2 * margin) / (u.max() - u.min()), (height - 2 * margin) / (v.max() - v.min()))
    centre = (width / 2 - focal * (u.max() + u.min()) / 2, height / 2 + focal * (v.max() + v.min()) / 2)
    return Camera(position, CAMERA_PITCH, focal, centre, width, height)


def rasterise(triangles: np.ndarray, owners: np.ndarray, camera: Camera) -> np.ndarray:
    """Index of the nearest triangle's surface at every pixel (-1 where none): a z-buffer over 1/depth."""
    screen, depth = camera.project(triangles)  # (T, 3, 2), (T, 3)
    screen, inverse = screen.astype(np.float32), (1.0 / depth).astype(np.float32)
    height, width = camera.height, camera.width
    nearest = np.zeros((height, width), dtype=np.float32)  # 1/depth of the nearest surface so far; 0 = infinitely far
    surface = np.full((height, width), -1, dtype=np.int32)
    for (a, b, c), (ia, ib, ic), owner in zip(screen, inverse, owners):
        area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        if abs(area) < 1e-9:
            continue
        col0, col1 = max(0, math.ceil(min(a[0], b[0], c[0]))), min(width - 1, math.floor(max(a[0], b[0], c[0])))
        row0, row1 = max(0, math.ceil(min(a[1], b[1], c[1]))), min(height - 1, math.floor(max(a[1], b[1], c[1])))
        if col0 > col1 or row0 > row1:
            continue
        # float32 halves the work and keeps 1/depth exact enough to order surfaces a millimetre apart
        xs = np.arange(col0, col1 + 1, dtype=np.float32)[None, :]
        ys = np.arange(row0, row1 + 1, dtype=np.float32)[:, None]
        wa = ((b[0] - xs) * (c[1] - ys) - (b[1] - ys) * (c[0] - xs)) / area
        wb = ((c[0] - xs) * (a[1] - ys) - (c[1] - ys) * (a[0] - xs)) / area
        wc = 1.0 - wa - wb
        near = wa * ia + wb * ib + wc * ic
        window = nearest[row0 : row1 + 1, col0 : col1 + 1]
        wins = (wa >= 0) & (wb >= 0) & (wc >= 0) & (near > window)
        window[wins] = near[wins]
        surface[row0 : row1 + 1, col0 : col1 + 1][wins] = owner
    return surface


def south_door_frame(scene: Scene, house: Mapping) -> SouthDoorFrame:
    """The view from behind the south door, rasterised with exact hidden surfaces."""
    check_drawable(scene)
    heights = elevation(scene, house)
    faces = _room_faces(scene, heights) + _object_faces(scene, heights)
    camera = south_door_camera(scene, heights, faces)
    triangles, owners = [], []
    for index, (quad, _, _) in enumerate(faces):
        for k in range(1, len(quad) - 1):
            triangles.append((quad[0], quad[k], quad[k + 1]))
            owners.append(index)
    surface = rasterise(np.asarray(triangles), np.asarray(owners), camera)
    index_of = {obj.id: k for k, obj in enumerate(scene.objects)}
    object_of_surface = np.array([index_of.get(s.owner, -1) for _, _, s in faces] + [-1], dtype=np.int32)
    return SouthDoorFrame(camera=camera, surfaces=tuple(s for _, _, s in faces), surface_of_pixel=surface,
                          object_of_pixel=object_of_surface[surface])  # -1 (background) takes the trailing -1


def south_door_image(scene: Scene, house: Mapping) -> tuple[Image.Image, list[tuple[str, str]]]:
    """The south-door image and the (object id, label) pairs of the visible prominent objects."""
    frame = south_door_frame(scene, house)
    palette = np.array([colour("background"), *(s.colour for s in frame.surfaces)], dtype=np.uint8)
    ids = frame.surface_of_pixel
    pixels = palette[ids + 1]
    edges = np.zeros(ids.shape, dtype=bool)
    edges[:, :-1] |= ids[:, :-1] != ids[:, 1:]
    edges[:-1, :] |= ids[:-1, :] != ids[1:, :]
    pixels[edges] = colour("edge")
    image = Image.fromarray(pixels, "RGB")
    draw = ImageDraw.Draw(image)

    layout = style()["south_door"]
    step = font(layout["font_px"]).getbbox("Ag")[3] + 2 * LABEL_PAD + 2
    # One pass over the pixels for every object's visible area, centroid and top row.
    owner = frame.object_of_pixel
    rows, cols = np.nonzero(owner >= 0)  # row-major: each object's first pixel is on its top row
    which = owner[rows, cols]
    count = np.bincount(which, minlength=len(scene.objects))
    mean_col = np.bincount(which, cols, minlength=len(scene.objects)) / np.maximum(count, 1)
    mean_row = np.bincount(which, rows, minlength=len(scene.objects)) / np.maximum(count, 1)
    present, first = np.unique(which, return_index=True)
    top = dict(zip(present.tolist(), rows[first].tolist()))
    visible = [k for k, obj in enumerate(scene.objects) if obj.prominent and count[k] >= MIN_VISIBLE_PX]
    visible.sort(key=lambda k: count[k])  # small (far, hidden) objects choose their place first
    requests, labels = [], []
    for k in visible:
        obj, col, row = scene.objects[k], float(mean_col[k]), float(mean_row[k])
        text = type_words(obj.type)
        above = [(col, top[k] - step / 2 - 6 - j * step) for j in range(6)]
        below = [(col, row + j * step) for j in range(1, 4)]
        on_object = partial(_covers, owner, k)
        requests.append(LabelRequest(text, (round(col), round(row)), ((col, row), *above, *below), on_object))
        labels.append((obj.id, text))
    place_labels(draw, requests, image.size, layout["font_px"])
    return image, sorted(labels)


def _covers(owner: np.ndarray, index: int, rect: tuple) -> bool:
    """Whether every pixel of the rectangle shows object `index`."""
    x0, y0, x1, y1 = (round(v) for v in rect)
    if x0 < 0 or y0 < 0 or x1 >= owner.shape[1] or y1 >= owner.shape[0]:
        return False
    return bool((owner[y0 : y1 + 1, x0 : x1 + 1] == index).all())


def south_door_png(scene: Scene, house: Mapping) -> bytes:
    image, labels = south_door_image(scene, house)
    return png_bytes(image, offline_key("south_door"), labels)


def offline_images(scene: Scene, house: Mapping, grid: int | None = None) -> dict[str, bytes]:
    """Both offline PNGs of a scene, by image name."""
    return {"top_down": top_down_png(scene, grid), "south_door": south_door_png(scene, house)}


# --------------------------------------------------------------------------- the render job


@dataclass(frozen=True)
class RenderReport:
    rooms: int  # rooms considered
    rendered: int  # images drawn now
    kept: int  # images already on disk with the same RENDER_KEY


def render_key_of(path: Path) -> str | None:
    """The RENDER_KEY of an existing PNG (read from its header chunks), or None if unreadable."""
    try:
        with Image.open(path) as image:
            return image.info.get(RENDER_KEY)
    except (OSError, SyntaxError):  # truncated or not a PNG: draw it again
        return None


def _scene_files(scenes_dir: Path, seed: int, rooms: int | None) -> tuple[int, Iterator[Path]]:
    """(how many, the scene files to render): rooms 0..rooms-1 of `seed`, sampled when missing,
    else every scene file of `seed` in the folder."""
    from pipeline.scenes import ensure_scene, scene_path

    if rooms is None:
        paths = sorted(scenes_dir.glob(f"s{seed}-*.json"))
        if not paths:
            raise RoomspaceError(f"no scenes of seed {seed} in {scenes_dir}; run `roomspace scenes` or pass --rooms")
        return len(paths), iter(paths)

    def sampled() -> Iterator[Path]:
        for index in range(rooms):
            ensure_scene(scenes_dir, seed, index)
            yield scene_path(scenes_dir, seed, index)

    return rooms, sampled()


def render_rooms(
    scenes_dir: str | os.PathLike,
    out: str | os.PathLike,
    rooms: int | None = None,
    seed: int = 0,
    grid: int | None = None,
    renderer: str = "offline",
    force: bool = False,
    progress: bool = True,
) -> RenderReport:
    """Write OUT/<room_id>/top_down.png and south_door.png for each scene; images already made are kept.

    Every argument is checked, and the output folder proven writable, before anything is drawn.
    """
    from tqdm import tqdm

    from pipeline.scenes import load_house, load_scene

    if renderer not in RENDERERS:
        raise RoomspaceError(f"unknown renderer {renderer!r} (choose from {', '.join(RENDERERS)})")
    if grid is not None:
        check_grid_size(grid)
        if renderer != "offline":
            raise RoomspaceError("--grid is drawn by the offline renderer only")
    if rooms is not None and (isinstance(rooms, bool) or not isinstance(rooms, int) or rooms <= 0):
        raise RoomspaceError(f"rooms must be a positive whole number, got {rooms!r}")
    scenes_dir, out = Path(scenes_dir), Path(out)
    total, paths = _scene_files(scenes_dir, seed, rooms)
    draw, keys = _renderer(renderer, grid)
    writable_folder(out)

    rendered = kept = count = 0
    with tqdm(total=total, unit="room", desc="renders", file=sys.stderr, disable=not progress) as bar:
        for path in paths:
            scene = load_scene(path)
            folder = out / scene.room_id
            targets = {name: folder / f"{name}.png" for name in IMAGES}
            todo = [name for name, target in targets.items() if force or render_key_of(target) != keys[name]]
            if todo:
                images = draw(scene, load_house(path))
                folder.mkdir(exist_ok=True)
                for name in todo:
                    write_atomic(targets[name], lambda target: target.write_bytes(images[name]))
            rendered += len(todo)
            kept += len(IMAGES) - len(todo)
            count += 1
            bar.update(1)
    return RenderReport(rooms=count, rendered=rendered, kept=kept)


def _renderer(renderer: str, grid: int | None) -> tuple[Callable[[Scene, Mapping], dict[str, bytes]], dict[str, str]]:
    """(scene, house) -> images, and the RENDER_KEY each image carries; AI2-THOR is checked here, at once."""
    if renderer == "offline":
        keys = {name: offline_key(name, grid) for name in IMAGES}
        return (lambda scene, house: offline_images(scene, house, grid)), keys
    from pipeline.render_thor import ThorRenderer, thor_key

    return ThorRenderer(), {name: thor_key() for name in IMAGES}
