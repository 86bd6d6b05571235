"""The view from the south door (docs/semantics.md section 12): `south_door.png`, a perspective view looking north.

Drawn from the scene record and the heights its house JSON adds (each object's height above the
floor, the wall height, the openings' heights). The camera stands behind the door, outside the
room, with the south wall cut down to a low sill, so that objects near the south corners are in
frame (from inside the doorway they would be behind the observer's shoulders). Every object is its
low-poly shape (pipeline.render.shapes: parts inside its bounding box) of its real height at its
height above the floor, wall-hung ones on their wall; an object hung on the cut-away south wall is
drawn as a low block at the foot of that wall, so it keeps its place in plan without hiding the
room. Hidden surfaces are exact: the faces are triangles
rasterised into a numpy z-buffer (1/depth interpolated linearly in screen space, the nearest face
wins each pixel, the earlier of two exactly as near: `zbuffer`); face edges and silhouettes are
drawn where the winning face changes. A room's faces are made once for all its views
(`room_faces`). Each visible object the caller names carries its name (pipeline.render.labels),
on its visible pixels or, preferably above them, with a leader to a dot on them; objects hidden
(fewer than MIN_VISIBLE_PX pixels) are not labelled.

The same renderer draws the first-person view from a pose (docs/semantics.md section 16): a
pinhole camera at eye height over a point of the room, looking at the wall faced (N, E, S or W),
every wall standing, its horizontal field of view wide enough to take in that wall; what the
camera cannot see in front of it is clipped. Left in the image is the observer's left.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from PIL import Image
from shapely.geometry import Point, Polygon

from pipeline.errors import RoomspaceError
from pipeline.render.labels import LabelRequest, dot_on, label_step, label_texts, place_labels
from pipeline.render.png import LabelPlace, png_bytes
from pipeline.render.shapes import Solid, solids
from pipeline.render.style import check_drawable, colour, drawing, offline_key, style
from pipeline.scene.records import Scene
from pipeline.text.agents import half_view
from pipeline.text.pictured import CameraPose, Sighting

SOUTH_SILL = 0.12  # m: the south wall is drawn cut down to this height in the south-door view
WALL_THICKNESS = 0.12  # m: the cut south wall's thickness, outside the room (z < 0)
CAMERA_BACK = 0.7  # the south-door camera stands this many room sides behind the door ...
CAMERA_HEIGHT = 0.62  # ... this many room sides above the floor ...
CAMERA_PITCH = math.radians(28)  # ... and looks north, tilted down by this much
MIN_VISIBLE_PX = 40  # an object with fewer visible pixels than this is not labelled in the south-door view
EYE_HEIGHT = 1.6  # m: the first-person camera's height above the floor
POSE_PITCH = math.radians(12)  # the first-person camera looks this much below the horizon
NEAR = 0.05  # m: the first-person camera sees nothing nearer than this in front of it
# A first-person picture is not drawn where an object this near the camera (m, from its footprint) fills more than
# this share of the picture: a fridge beside the camera covering two thirds of it, its top and bottom cut off,
# shows no centre a reader could place.
CLOSE_OBJECT = 1.0
MOST_FILLED = 0.3
# Horizontal (right, ahead) unit vectors (x, z) of a camera facing each wall: north is +z, east +x.
AXES = {"N": ((1.0, 0.0), (0.0, 1.0)), "E": ((0.0, -1.0), (1.0, 0.0)), "S": ((-1.0, 0.0), (0.0, -1.0)),
        "W": ((0.0, 1.0), (-1.0, 0.0))}


class CrowdedPicture(RoomspaceError):
    """A perspective picture whose labels do not fit at a legible size (pipeline.render.labels)."""


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
    # scene.openings lists the house's doors, then its windows (pipeline.scene.procthor.sampling._openings)
    holes = [*(house.get("doors") or []), *(house.get("windows") or [])]
    openings = tuple((float(h["boundingBox"]["min"]["y"]), float(h["boundingBox"]["max"]["y"])) for h in holes)
    if len(openings) != len(scene.openings):
        raise RoomspaceError(f"scene {scene.room_id}: its house JSON has {len(openings)} openings, the record {len(scene.openings)}")
    return Elevation(wall=wall, bottoms=bottoms, openings=openings)


@dataclass(frozen=True)
class Camera:
    """A pinhole camera looking at a wall, tilted down; pixel (col, row) is the point (col, row)."""

    position: tuple[float, float, float]  # x, y, z in metres
    pitch: float  # radians below the horizon
    focal: float  # px
    centre: tuple[float, float]  # principal point, px
    width: int
    height: int
    facing: str = "N"  # the wall looked at; facing north, east is right

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        """World points (..., 3) -> camera coordinates (right, up, forward)."""
        d = points - np.asarray(self.position)
        s, c = math.sin(self.pitch), math.cos(self.pitch)
        (rx, rz), (ax, az) = AXES[self.facing]
        right = d[..., 0] * rx + d[..., 2] * rz  # facing north exactly d[..., 0]: the door view's numbers
        ahead = d[..., 0] * ax + d[..., 2] * az
        up = d[..., 1] * c + ahead * s
        forward = ahead * c - d[..., 1] * s
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
    triangles: np.ndarray  # (T, 3, 3) the faces' triangles in front of the camera, world points
    owners: np.ndarray  # (T,) index into surfaces of each triangle
    centres: np.ndarray  # (objects, 3) each object's centre as drawn: its footprint's centre at half its height


def flat_image(ids: np.ndarray, fills: Sequence[tuple[int, int, int]]) -> Image.Image:
    """The picture of a z-buffer's result: each pixel its surface's fill (`ids` index `fills`, -1 the
    background), edges drawn where the surface changes."""
    palette = np.array([colour("background"), *fills], dtype=np.uint8)
    pixels = palette[ids + 1]
    edges = np.zeros(ids.shape, dtype=bool)
    edges[:, :-1] |= ids[:, :-1] != ids[:, 1:]
    edges[:-1, :] |= ids[:-1, :] != ids[1:, :]
    pixels[edges] = colour("edge")
    return Image.fromarray(pixels, "RGB")


def shade(normal: np.ndarray) -> float:
    """Brightness of a face: Lambert with render.json's light, scaled so that top faces are 1."""
    ambient, diffuse, light, top = _light()
    return (ambient + diffuse * max(0.0, float(normal @ light))) / top


@cache
def _light() -> tuple[float, float, np.ndarray, float]:
    """render.json's shading: ambient, diffuse, the light as a unit vector, and a top face's brightness."""
    spec = style()["shade"]
    light = np.asarray(spec["light"], dtype=float)
    light /= np.linalg.norm(light)
    light.setflags(write=False)
    top = spec["ambient"] + spec["diffuse"] * max(0.0, float(np.array([0.0, 1.0, 0.0]) @ light))
    return spec["ambient"], spec["diffuse"], light, top


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


def room_quads(scene: Scene, heights: Elevation, cut_south: bool = True) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """Floor, the west, north and east walls with their windows, and the south wall: cut down to a
    sill with the door's threshold (the door view), or standing with its door and windows. Each face
    as (polygon, outward normal, its render.json colour name): what every renderer draws of the room."""
    w, h = scene.side, heights.wall
    out = []

    def quad(points, normal, name):
        out.append((np.asarray(points, dtype=float), np.asarray(normal, dtype=float), name))

    quad([(0, 0, 0), (w, 0, 0), (w, 0, w), (0, 0, w)], (0, 1, 0), "floor")
    quad([(0, 0, 0), (0, 0, w), (0, h, w), (0, h, 0)], (1, 0, 0), "wall_face")  # west, facing east
    quad([(0, 0, w), (w, 0, w), (w, h, w), (0, h, w)], (0, 0, -1), "wall_face")  # north, facing south
    quad([(w, 0, 0), (w, 0, w), (w, h, w), (w, h, 0)], (-1, 0, 0), "wall_face")  # east, facing west
    inset = 0.01  # m: a window is drawn just inside its wall, so the z-buffer puts it in front
    planes = {"west": (0, inset, (1, 0, 0)), "north": (2, w - inset, (0, 0, -1)), "east": (0, w - inset, (-1, 0, 0))}
    if not cut_south:
        quad([(0, 0, 0), (0, h, 0), (w, h, 0), (w, 0, 0)], (0, 0, 1), "wall_face")  # south, facing north
        planes["south"] = (2, inset, (0, 0, 1))
    door_span = (0.0, 0.0)
    for opening, (low, high) in zip(scene.openings, heights.openings):
        if opening.kind == "door" and cut_south:
            door_span = (min(opening.start[0], opening.end[0]), max(opening.start[0], opening.end[0]))
            x0, x1 = door_span
            quad([(x0, 0.003, -WALL_THICKNESS), (x1, 0.003, -WALL_THICKNESS), (x1, 0.003, 0), (x0, 0.003, 0)],
                 (0, 1, 0), "door")
        elif opening.wall in planes:  # a window on the cut-away south wall is not drawn
            axis, level, normal = planes[opening.wall]
            (ax, az), (bx, bz) = opening.start, opening.end
            corners = [(ax, az), (bx, bz)]
            points = []
            for (px, pz), y in zip(corners + corners[::-1], (low, low, high, high)):
                point = [px, y, pz]
                point[axis] = level
                points.append(point)
            quad(points, normal, opening.kind)
    if not cut_south:
        return out
    for x0, x1 in ((0.0, door_span[0]), (door_span[1], w)):
        if x1 - x0 > 1e-6:
            for points, normal in _box_faces([(x0, -WALL_THICKNESS), (x1, -WALL_THICKNESS), (x1, 0), (x0, 0)], 0.0, SOUTH_SILL):
                out.append((points, normal, "wall"))
    return out


def _room_faces(scene: Scene, heights: Elevation, cut_south: bool = True) -> list[tuple[np.ndarray, np.ndarray, Surface]]:
    return [(points, normal, Surface(None, _shaded(colour(name), normal)))
            for points, normal, name in room_quads(scene, heights, cut_south)]


def _span(obj, heights: Elevation, cut_south: bool) -> tuple[float, float]:
    """The heights (bottom, top) an object is drawn between."""
    if cut_south and obj.wall_hung and "south" in obj.walls:  # on the cut-away wall: a low block at its foot
        return 0.0, SOUTH_SILL
    bottom = heights.bottoms[obj.id]
    return bottom, bottom + obj.size[1]


def object_solids(scene: Scene, heights: Elevation, cut_south: bool = True) -> list[tuple[int, Solid]]:
    """Every object's parts (pipeline.render.shapes) as the perspective views stand them, with the
    object's index in scene.objects: what every renderer draws of the objects."""
    out = []
    for k, obj in enumerate(scene.objects):
        bottom, top = _span(obj, heights, cut_south)
        plain = cut_south and obj.wall_hung and "south" in obj.walls  # the low block `_span` gives it: no shape
        out.extend((k, solid) for solid in solids(obj, bottom, top, plain))
    return out


def _object_faces(scene: Scene, heights: Elevation, cut_south: bool = True) -> list[tuple[np.ndarray, np.ndarray, Surface]]:
    out = []
    for k, solid in object_solids(scene, heights, cut_south):
        for points, normal in solid.faces():
            out.append((points, normal, Surface(scene.objects[k].id, _shaded(solid.colour, normal))))
    return out


def _faces(scene: Scene, heights: Elevation, cut_south: bool) -> list[tuple[np.ndarray, np.ndarray, Surface]]:
    """The room's faces and its objects' (`_room_faces`, `_object_faces`) as read-only arrays, made once
    for the last few rooms (`room_faces`): every view of a room draws the same faces."""
    return list(room_faces(scene, heights.wall, tuple(heights.bottoms.items()), heights.openings, cut_south))


@lru_cache(maxsize=4)
def room_faces(scene: Scene, wall: float, bottoms: tuple, openings: tuple, cut_south: bool) -> tuple:
    """`_faces`, cached by the scene and its heights (`room_faces.cache_clear()` forgets them)."""
    heights = Elevation(wall, dict(bottoms), openings)
    faces = _room_faces(scene, heights, cut_south) + _object_faces(scene, heights, cut_south)
    for points, normal, _ in faces:
        points.setflags(write=False)
        normal.setflags(write=False)
    return tuple(faces)


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


def _in_front(triangle: tuple, camera: Camera) -> list[tuple]:
    """The triangle clipped to the part at least NEAR in front of the camera, as triangles: depth is
    linear in space, so an edge crossing the near plane is cut where it reaches NEAR."""
    depth = camera.to_camera(np.asarray(triangle))[:, 2]
    if depth.min() >= NEAR:
        return [triangle]
    kept = []
    for k in range(3):
        a, b, da, db = triangle[k], triangle[(k + 1) % 3], depth[k], depth[(k + 1) % 3]
        if da >= NEAR:
            kept.append(a)
        if (da >= NEAR) != (db >= NEAR):
            kept.append(a + (b - a) * ((NEAR - da) / (db - da)))
    return [(kept[0], kept[k], kept[k + 1]) for k in range(1, len(kept) - 1)]


EARLIER = np.uint64(0xFFFFFFFF)  # a small triangle's key ends in this minus its index: the earlier, the larger
SMALL_TRIANGLE = 2048  # px of bounding box: smaller triangles are rasterised together, larger ones one by one


@dataclass(frozen=True)
class _Raster:
    """Triangles on the screen, as the z-buffer reads them: corners in float32 pixels, 1/depth at each
    corner in float32, the doubled signed area, and the pixel bounds of each (inclusive)."""

    screen: np.ndarray  # (T, 3, 2)
    inverse: np.ndarray  # (T, 3)
    area: np.ndarray  # (T,)
    bounds: np.ndarray  # (T, 4): col0, col1, row0, row1
    drawn: np.ndarray  # indices of the triangles with an area and pixels inside the picture
    width: int

    @classmethod
    def of(cls, triangles: np.ndarray, camera: Camera) -> _Raster:
        screen, depth = camera.project(triangles)  # (T, 3, 2), (T, 3)
        screen, inverse = screen.astype(np.float32), (1.0 / depth).astype(np.float32)
        a, b, c = screen[:, 0], screen[:, 1], screen[:, 2]
        area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
        low, high = np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)
        bounds = np.stack([np.maximum(0, np.ceil(low[:, 0])), np.minimum(camera.width - 1, np.floor(high[:, 0])),
                           np.maximum(0, np.ceil(low[:, 1])), np.minimum(camera.height - 1, np.floor(high[:, 1]))],
                          axis=1).astype(np.int64)
        drawn = np.flatnonzero(~(np.abs(area) < 1e-9) & (bounds[:, 0] <= bounds[:, 1]) & (bounds[:, 2] <= bounds[:, 3]))
        return cls(screen, inverse, area, bounds, drawn, camera.width)

    def weights(self, t, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(inside, 1/depth) at pixels (x, y) of triangle(s) t: the pixel centre inside (barycentric
        weights all >= 0) and in front (1/depth above 0). Computed in place, in float32, in the order
        ((b - p) x (c - p)) / area, 1 - wa - wb, (wa ia + wb ib) + wc ic: the z-buffer's exact numbers."""
        corners = self.screen[t]  # (..., 3, 2)
        (ax, ay), (bx, by), (cx, cy) = ((corners[..., k, 0], corners[..., k, 1]) for k in range(3))
        area = self.area[t]
        wa = (bx - x) * (cy - y)
        wa -= (by - y) * (cx - x)
        wa /= area
        wb = (cx - x) * (ay - y)
        wb -= (cy - y) * (ax - x)
        wb /= area
        wc = 1.0 - wa
        wc -= wb
        inside = wa >= 0
        inside &= wb >= 0
        inside &= wc >= 0
        wa *= self.inverse[t, 0]
        wb *= self.inverse[t, 1]
        wa += wb
        wc *= self.inverse[t, 2]
        wa += wc
        inside &= wa > 0
        return inside, wa

    def fragments(self, chosen: np.ndarray):
        """The pixels the `chosen` triangles cover: (triangle, pixel row * width + col, 1/depth), a batch
        per window size. Triangles are taken together in windows of the same power-of-two size, each
        from its bounding box's corner; a window's pixels outside the box are left out, as the
        one-by-one drawing never reaches them."""
        col0, col1, row0, row1 = self.bounds[chosen].T
        wide = 1 << np.ceil(np.log2(col1 - col0 + 1)).astype(np.int64)
        tall = 1 << np.ceil(np.log2(row1 - row0 + 1)).astype(np.int64)
        for size in sorted(set(zip(tall.tolist(), wide.tolist()))):
            group = np.flatnonzero((tall == size[0]) & (wide == size[1]))
            t = chosen[group][:, None, None]
            xs = col0[group][:, None, None] + np.arange(size[1])[None, None, :]
            ys = row0[group][:, None, None] + np.arange(size[0])[None, :, None]
            inside, near = self.weights(t, xs.astype(np.float32), ys.astype(np.float32))
            inside &= (xs <= col1[group][:, None, None]) & (ys <= row1[group][:, None, None])
            yield np.broadcast_to(t, inside.shape)[inside], (ys * self.width + xs)[inside], near[inside]

    def window(self, t: int) -> tuple[tuple[slice, slice], np.ndarray, np.ndarray]:
        """One triangle's bounding box (rows, cols) and (inside, 1/depth) over it."""
        col0, col1, row0, row1 = (int(v) for v in self.bounds[t])
        xs = np.arange(col0, col1 + 1, dtype=np.float32)[None, :]
        ys = np.arange(row0, row1 + 1, dtype=np.float32)[:, None]
        return (slice(row0, row1 + 1), slice(col0, col1 + 1)), *self.weights(t, xs, ys)

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """The drawn triangles (small, large) by SMALL_TRIANGLE."""
        col0, col1, row0, row1 = self.bounds[self.drawn].T
        small = (col1 - col0 + 1) * (row1 - row0 + 1) <= SMALL_TRIANGLE
        return self.drawn[small], self.drawn[~small]


def zbuffer(triangles: np.ndarray, owners: np.ndarray, camera: Camera) -> np.ndarray:
    """Index of the nearest triangle's surface at every pixel (-1 where none): a z-buffer over 1/depth
    in float32 that gives a pixel two surfaces share exactly to the earlier triangle, as drawing the
    triangles in order and keeping only a nearer one does. Large triangles are drawn so, one by one;
    the small ones (`_Raster.fragments`) are then resolved together and kept where nearer, or as
    near and earlier."""
    raster = _Raster.of(triangles, camera)
    nearest = np.zeros((camera.height, camera.width), dtype=np.float32)  # 0: infinitely far
    first = np.full((camera.height, camera.width), len(triangles), dtype=np.int64)  # the triangle shown
    small, large = raster.split()
    for t in large:
        box, inside, near = raster.window(t)
        wins = inside & (near > nearest[box])
        nearest[box][wins] = near[wins]
        first[box][wins] = t
    best = np.zeros(nearest.size, dtype=np.uint64)  # the small triangles': 1/depth's bits, then the earlier
    for t, pixel, near in raster.fragments(small):
        keys = (near.view(np.uint32).astype(np.uint64) << np.uint64(32)) | (EARLIER - t.astype(np.uint64))
        np.maximum.at(best, pixel, keys)
    best = best.reshape(nearest.shape)
    near = (best >> np.uint64(32)).astype(np.uint32).view(np.float32)
    earliest = (EARLIER - (best & EARLIER)).astype(np.int64)
    wins = (best > 0) & ((near > nearest) | ((near == nearest) & (earliest < first)))
    first[wins] = earliest[wins]
    shown = first < len(triangles)
    surface = np.full(first.shape, -1, dtype=np.int32)
    surface[shown] = np.asarray(owners)[first[shown]]
    return surface


def covered(triangles: np.ndarray, groups: np.ndarray, count: int, camera: Camera) -> np.ndarray:
    """Per group 0..count-1, how many pixels its triangles cover (`groups`: each triangle's, -1 for
    none): what the group would fill drawn alone."""
    raster = _Raster.of(triangles, camera)
    pixels = camera.height * camera.width
    seen = np.zeros((count, camera.height, camera.width), dtype=bool)
    small, large = raster.split()
    for t in large[groups[large] >= 0]:
        box, inside, _ = raster.window(t)
        seen[groups[t]][box] |= inside
    flat = seen.reshape(-1)
    for t, pixel, _ in raster.fragments(small[groups[small] >= 0]):
        flat[groups[t] * pixels + pixel] = True
    return seen.reshape(count, -1).sum(axis=1)


def south_door_frame(scene: Scene, house: Mapping) -> SouthDoorFrame:
    """The view from behind the south door, rasterised with exact hidden surfaces."""
    check_drawable(scene)
    heights = elevation(scene, house)
    faces = _faces(scene, heights, cut_south=True)
    return _frame(scene, faces, south_door_camera(scene, heights, faces), _centres(scene, heights, True))


def _centres(scene: Scene, heights: Elevation, cut_south: bool) -> np.ndarray:
    spans = [_span(obj, heights, cut_south) for obj in scene.objects]
    return np.array([(obj.x, (low + high) / 2, obj.z) for obj, (low, high) in zip(scene.objects, spans)],
                    dtype=float).reshape(-1, 3)


def pose_camera(scene: Scene, position: tuple[float, float], facing: str) -> Camera:
    """The first-person camera at eye height over `position` (x, z in metres), looking at the wall
    `facing`: its field of view takes in that wall, between 70 and 130 degrees across."""
    layout = style()["south_door"]
    width, height, margin = layout["width"], layout["height"], layout["margin"]
    x, z = position
    focal = (width / 2 - margin) / math.tan(half_view(scene.side, position, facing))
    return Camera((x, EYE_HEIGHT, z), POSE_PITCH, focal, (width / 2, height / 2), width, height, facing)


def pose_frame(scene: Scene, house: Mapping, position: tuple[float, float], facing: str) -> SouthDoorFrame:
    """The first-person view from `position` facing `facing`, every wall standing, rasterised with
    exact hidden surfaces; what lies behind the camera's near plane is cut away."""
    check_drawable(scene)
    if facing not in AXES:
        raise RoomspaceError(f"unknown facing {facing!r}; expected one of {', '.join(AXES)}")
    x, z = position
    if not (0 < x < scene.side and 0 < z < scene.side):
        raise RoomspaceError(f"scene {scene.room_id}: the first-person camera at {position} is not inside the room")
    heights = elevation(scene, house)
    faces = _faces(scene, heights, cut_south=False)
    return _frame(scene, faces, pose_camera(scene, position, facing), _centres(scene, heights, False))


def _triangles(faces: list, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """The faces' triangles (each polygon a fan from its first corner) clipped to what is NEAR or more in
    front of the camera (`_in_front`), in face order, and the face of each."""
    fans = [polygon[[(0, k, k + 1) for k in range(1, len(polygon) - 1)]] for polygon, _, _ in faces]
    owners = np.repeat(np.arange(len(faces), dtype=np.int64), [len(fan) for fan in fans])
    fans = np.concatenate(fans).astype(float)
    depth = camera.to_camera(fans)[..., 2]
    behind = depth.max(axis=1) < NEAR  # wholly behind the near plane: nothing of it is drawn
    cut = np.flatnonzero(depth.min(axis=1) < NEAR)
    if not len(cut):
        return fans, owners
    triangles, faces_of, start = [], [], 0
    for t in cut:  # whole triangles before it as they are, then its part in front
        part = [] if behind[t] else _in_front(tuple(fans[t]), camera)
        triangles += [fans[start:t], np.asarray(part, dtype=float).reshape(-1, 3, 3)]
        faces_of += [owners[start:t], np.full(len(part), owners[t])]
        start = t + 1
    return np.concatenate([*triangles, fans[start:]]), np.concatenate([*faces_of, owners[start:]])


def _frame(scene: Scene, faces: list, camera: Camera, centres: np.ndarray) -> SouthDoorFrame:
    triangles, owners = _triangles(faces, camera)
    surface = zbuffer(triangles, owners, camera)
    index_of = {obj.id: k for k, obj in enumerate(scene.objects)}
    object_of_surface = np.array([index_of.get(s.owner, -1) for _, _, s in faces] + [-1], dtype=np.int32)
    return SouthDoorFrame(camera=camera, surfaces=tuple(s for _, _, s in faces), surface_of_pixel=surface,
                          object_of_pixel=object_of_surface[surface],  # -1 (background) takes the trailing -1
                          triangles=triangles, owners=owners, centres=centres)


def camera_pose(camera: Camera) -> CameraPose:
    """A camera as a row records it: position in metres, facing, pitch and horizontal field of view in degrees."""
    left, right = math.atan(camera.centre[0] / camera.focal), math.atan((camera.width - camera.centre[0]) / camera.focal)
    x, y, z = camera.position
    return CameraPose(round(x, 4), round(y, 4), round(z, 4), camera.facing, round(math.degrees(camera.pitch), 4),
                      round(math.degrees(left + right), 4))


def sightings(scene: Scene, frame: SouthDoorFrame) -> dict[str, Sighting]:
    """What the frame shows of each prominent object: its centre's bearing in the picture (from the
    column it projects to), its distance ahead of the camera, whether it projects inside the
    picture in front of the camera, and the share of its pixels drawn alone that the z-buffer shows."""
    camera = frame.camera
    counts = np.bincount(frame.object_of_pixel[frame.object_of_pixel >= 0], minlength=len(scene.objects))
    measured = [k for k, obj in enumerate(scene.objects) if obj.prominent]
    group_of = {scene.objects[k].id: g for g, k in enumerate(measured)}
    group_of_triangle = np.array([group_of.get(s.owner, -1) for s in frame.surfaces], dtype=np.int64)[frame.owners]
    alone_pixels = covered(frame.triangles, group_of_triangle, len(measured), camera)
    (ax, az) = AXES[camera.facing][1]
    pixels, depths = camera.project(frame.centres)
    out = {}
    for g, k in enumerate(measured):
        obj = scene.objects[k]
        alone = int(alone_pixels[g])
        (col, row), depth = pixels[k], float(depths[k])
        in_view = depth >= NEAR and 0 <= col < camera.width and 0 <= row < camera.height
        out[obj.id] = Sighting(
            bearing=round(math.degrees(math.atan((col - camera.centre[0]) / camera.focal)), 6) if depth > 0 else 0.0,
            ahead=round((obj.x - camera.position[0]) * ax + (obj.z - camera.position[2]) * az, 6),
            in_view=bool(in_view), share=round(int(counts[k]) / alone, 6) if alone else 0.0, pixels=int(counts[k]))
    return out


def south_door_image(scene: Scene, house: Mapping, names: Mapping[str, str] | None = None,
                     ) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The south-door image, the label of every visible prominent object on it ({object id: label};
    `names`, by default `label_texts`'s) and where each label lies."""
    return perspective_image(scene, south_door_frame(scene, house), names, "south_door")


def pose_image(scene: Scene, house: Mapping, position: tuple[float, float], facing: str,
               names: Mapping[str, str] | None = None) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The first-person image from `position` facing `facing`, labelled as the south-door image is."""
    return perspective_image(scene, pose_frame(scene, house, position, facing), names, f"pose {position} {facing}",
                             may_cross=False)


def perspective_image(scene: Scene, frame: SouthDoorFrame, names: Mapping[str, str] | None, what: str,
                      backdrop: Image.Image | None = None,
                      may_cross: bool = True) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The frame drawn (its surfaces' colours, edges where they change) or, given, `backdrop` (the
    same view rendered otherwise: pipeline.render.blender), and its labels, placed by the frame's
    pixels either way; `what` names the picture in errors; `may_cross`: place_labels' (False for a
    first-person view, which another stance can replace)."""
    texts = label_texts(scene, names)
    if backdrop is None:
        image = flat_image(frame.surface_of_pixel, [s.colour for s in frame.surfaces])
    else:
        if backdrop.size != (frame.camera.width, frame.camera.height):
            raise RoomspaceError(f"{what}: a backdrop of {backdrop.size} for a {frame.camera.width} x {frame.camera.height} view")
        image = backdrop.convert("RGB")
    draw = drawing(image)

    step = label_step(image.width, image.height)
    # One pass over the pixels for every object's visible area, centroid and top row.
    owner = frame.object_of_pixel
    rows, cols = np.nonzero(owner >= 0)  # row-major: each object's first pixel is on its top row
    which = owner[rows, cols]
    count = np.bincount(which, minlength=len(scene.objects))
    mean_col = np.bincount(which, cols, minlength=len(scene.objects)) / np.maximum(count, 1)
    mean_row = np.bincount(which, rows, minlength=len(scene.objects)) / np.maximum(count, 1)
    top = np.full(len(scene.objects), owner.shape[0], dtype=np.int64)
    np.minimum.at(top, which, rows)  # each object's top row
    visible = [k for k, obj in enumerate(scene.objects) if obj.id in texts and count[k] >= MIN_VISIBLE_PX]
    visible.sort(key=lambda k: count[k])  # small (far, hidden) objects choose their place first
    requests = []
    for k in visible:
        obj, col, row = scene.objects[k], float(mean_col[k]), float(mean_row[k])
        above = [(col, int(top[k]) - step / 2 - 6 - j * step) for j in range(6)]
        below = [(col, row + j * step) for j in range(1, 4)]
        requests.append(LabelRequest(obj.id, texts[obj.id], k, dot_on(owner, k, (col, row)), ((col, row), *above, *below)))
    try:
        places = place_labels(draw, requests, owner, f"scene {scene.room_id} {what}", may_cross=may_cross)
    except RoomspaceError as error:  # place_labels' only error: the labels do not fit
        raise CrowdedPicture(str(error)) from None
    return image, {i: texts[i] for i in places}, places


def south_door_png(scene: Scene, house: Mapping, names: Mapping[str, str] | None = None) -> bytes:
    image, labels, places = south_door_image(scene, house, names)
    return png_bytes(image, offline_key("south_door"), labels, places)


def pose_png(scene: Scene, house: Mapping, position: tuple[float, float], facing: str,
             names: Mapping[str, str] | None = None) -> bytes:
    """The first-person PNG, drawn without measuring its objects (`pose_view` does both)."""
    frame = pose_frame(scene, house, position, facing)
    return view_png(scene, View(frame, camera_pose(frame.camera), {}), names)


@dataclass(frozen=True)
class View:
    """A first-person view before it is drawn: its frame, where its camera stands, what it shows."""

    frame: SouthDoorFrame | None  # None in a view kept only for what it shows (it cannot be drawn)
    camera: CameraPose
    sightings: dict[str, Sighting]
    blocked_by: str | None = None  # an object too close that fills too much of the picture (`filling`): not drawn

    def labelled(self) -> set[str]:
        """The ids of the objects its picture labels where named (MIN_VISIBLE_PX pixels or more seen)."""
        return {i for i, seen in self.sightings.items() if seen.pixels >= MIN_VISIBLE_PX}


def pose_view(scene: Scene, house: Mapping, position: tuple[float, float], facing: str) -> View:
    """The first-person view from `position` facing `facing`, measured (`sightings`), not yet drawn."""
    frame = pose_frame(scene, house, position, facing)
    close = [i for i, (share, distance) in filling(scene, frame).items()
             if distance < CLOSE_OBJECT and share > MOST_FILLED]
    return View(frame, camera_pose(frame.camera), sightings(scene, frame), close[0] if close else None)


def filling(scene: Scene, frame: SouthDoorFrame) -> dict[str, tuple[float, float]]:
    """{object id: (the share of the picture its pixels fill, its footprint's distance from the camera
    in plan, m)} of every object the picture shows, prominent or not."""
    camera = frame.camera
    counts = np.bincount(frame.object_of_pixel[frame.object_of_pixel >= 0], minlength=len(scene.objects))
    where = Point(camera.position[0], camera.position[2])
    return {obj.id: (int(counts[k]) / (camera.width * camera.height), where.distance(Polygon(obj.footprint)))
            for k, obj in enumerate(scene.objects) if counts[k]}


def view_png(scene: Scene, view: View, names: Mapping[str, str] | None = None) -> bytes:
    """The PNG of a first-person view, labelled as the south-door image is."""
    camera = view.camera
    what = f"pose ({camera.x}, {camera.z}) {camera.facing}"
    image, labels, places = perspective_image(scene, view.frame, names, what, may_cross=False)
    return png_bytes(image, offline_key(view_name(view)), labels, places)


def view_name(view: View) -> str:
    """A first-person image's name in its RENDER_KEY: where its camera stands and the wall it faces."""
    x, _, z = view.frame.camera.position
    return f"pose {x:.3f},{z:.3f} {view.camera.facing}"


def south_door_sightings(scene: Scene, house: Mapping) -> tuple[CameraPose, dict[str, Sighting]]:
    """Where the south-door camera stands and what its picture shows of each object (`sightings`)."""
    frame = south_door_frame(scene, house)
    return camera_pose(frame.camera), sightings(scene, frame)
