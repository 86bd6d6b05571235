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
wins each pixel); face edges and silhouettes are drawn where the winning face changes. Each
visible object the caller names carries its name (pipeline.render.labels), on its visible pixels or,
preferably above them, with a leader to a dot on them; objects hidden (fewer than MIN_VISIBLE_PX
pixels) are not labelled.

The same renderer draws the first-person view from a pose (docs/semantics.md section 16): a
pinhole camera at eye height over a point of the room, looking at the wall faced (N, E, S or W),
every wall standing, its horizontal field of view wide enough to take in that wall; what the
camera cannot see in front of it is clipped. Left in the image is the observer's left.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from PIL import Image

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


def zbuffer(triangles: np.ndarray, owners: np.ndarray, camera: Camera) -> np.ndarray:
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
    faces = _room_faces(scene, heights, cut_south=False) + _object_faces(scene, heights, cut_south=False)
    return _frame(scene, faces, pose_camera(scene, position, facing), _centres(scene, heights, False))


def _frame(scene: Scene, faces: list, camera: Camera, centres: np.ndarray) -> SouthDoorFrame:
    triangles, owners = [], []
    for index, (quad, _, _) in enumerate(faces):
        for k in range(1, len(quad) - 1):
            for triangle in _in_front((quad[0], quad[k], quad[k + 1]), camera):
                triangles.append(triangle)
                owners.append(index)
    triangles, owners = np.asarray(triangles, dtype=float).reshape(-1, 3, 3), np.asarray(owners, dtype=np.int64)
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
    index_of = {obj.id: k for k, obj in enumerate(scene.objects)}
    object_of_triangle = np.array([index_of.get(s.owner, -1) for s in frame.surfaces], dtype=np.int64)[frame.owners]
    (ax, az) = AXES[camera.facing][1]
    pixels, depths = camera.project(frame.centres)
    out = {}
    for k, obj in enumerate(scene.objects):
        if not obj.prominent:
            continue
        mine = object_of_triangle == k
        alone = int(np.count_nonzero(zbuffer(frame.triangles[mine], frame.owners[mine], camera) >= 0)) if mine.any() else 0
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
    return perspective_image(scene, pose_frame(scene, house, position, facing), names, f"pose {position} {facing}")


def perspective_image(scene: Scene, frame: SouthDoorFrame, names: Mapping[str, str] | None, what: str,
                      backdrop: Image.Image | None = None) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The frame drawn (its surfaces' colours, edges where they change) or, given, `backdrop` (the
    same view rendered otherwise: pipeline.render.blender), and its labels, placed by the frame's
    pixels either way; `what` names the picture in errors."""
    texts = label_texts(scene, names)
    if backdrop is None:
        palette = np.array([colour("background"), *(s.colour for s in frame.surfaces)], dtype=np.uint8)
        ids = frame.surface_of_pixel
        pixels = palette[ids + 1]
        edges = np.zeros(ids.shape, dtype=bool)
        edges[:, :-1] |= ids[:, :-1] != ids[:, 1:]
        edges[:-1, :] |= ids[:-1, :] != ids[1:, :]
        pixels[edges] = colour("edge")
        image = Image.fromarray(pixels, "RGB")
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
    present, first = np.unique(which, return_index=True)
    top = dict(zip(present.tolist(), rows[first].tolist()))
    visible = [k for k, obj in enumerate(scene.objects) if obj.id in texts and count[k] >= MIN_VISIBLE_PX]
    visible.sort(key=lambda k: count[k])  # small (far, hidden) objects choose their place first
    requests = []
    for k in visible:
        obj, col, row = scene.objects[k], float(mean_col[k]), float(mean_row[k])
        above = [(col, top[k] - step / 2 - 6 - j * step) for j in range(6)]
        below = [(col, row + j * step) for j in range(1, 4)]
        requests.append(LabelRequest(obj.id, texts[obj.id], k, dot_on(owner, k, (col, row)), ((col, row), *above, *below)))
    try:
        places = place_labels(draw, requests, owner, f"scene {scene.room_id} {what}")
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

    frame: SouthDoorFrame
    camera: CameraPose
    sightings: dict[str, Sighting]

    def labelled(self) -> set[str]:
        """The ids of the objects its picture labels where named (MIN_VISIBLE_PX pixels or more seen)."""
        return {i for i, seen in self.sightings.items() if seen.pixels >= MIN_VISIBLE_PX}


def pose_view(scene: Scene, house: Mapping, position: tuple[float, float], facing: str) -> View:
    """The first-person view from `position` facing `facing`, measured (`sightings`), not yet drawn."""
    frame = pose_frame(scene, house, position, facing)
    return View(frame, camera_pose(frame.camera), sightings(scene, frame))


def view_png(scene: Scene, view: View, names: Mapping[str, str] | None = None) -> bytes:
    """The PNG of a first-person view, labelled as the south-door image is."""
    camera = view.camera
    image, labels, places = perspective_image(scene, view.frame, names, f"pose ({camera.x}, {camera.z}) {camera.facing}")
    return png_bytes(image, offline_key(view_name(view)), labels, places)


def view_name(view: View) -> str:
    """A first-person image's name in its RENDER_KEY: where its camera stands and the wall it faces."""
    x, _, z = view.frame.camera.position
    return f"pose {x:.3f},{z:.3f} {view.camera.facing}"


def south_door_sightings(scene: Scene, house: Mapping) -> tuple[CameraPose, dict[str, Sighting]]:
    """Where the south-door camera stands and what its picture shows of each object (`sightings`)."""
    frame = south_door_frame(scene, house)
    return camera_pose(frame.camera), sightings(scene, frame)
