"""What every picture of a build must be (docs/semantics.md section 12, "Labels a reader cannot misread"),
read back from its PNG and the renderer's own pixels: used by tests/dataset/test_pictured_build.py (a few
rooms) and tests/dataset/pictures_check.py (every picture of RoomSpace-100, `make test-pictures`).

- no object of a labelled object's type is left unlabelled where it shows (MIN_VISIBLE_PX pixels; on
  the plan, every object), so "the chair" can only be one chair; in a picture marked by letters, every
  prominent object that shows carries one, as its prompt says;
- no two label boxes overlap, no two leader lines cross or touch, and no leader crosses another label;
- no label box covers a pixel of another object a question about the picture asks about;
- no first-person camera stands nearer than CLOSE_OBJECT to an object that fills more than MOST_FILLED
  of its picture;
- an object task's picture draws each thing in a bowl, pot or box inside its holder's box, and each
  thing on a carrier on its top, its centre over it (`held_problems`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np
from shapely.geometry import LineString, Point, Polygon, box

from pipeline.evaluate.rows import open_rows
from pipeline.render.door import CLOSE_OBJECT, MIN_VISIBLE_PX, MOST_FILLED, pose_frame, south_door_frame
from pipeline.render.labels import DOT_RADIUS, LEADER_PX
from pipeline.render.plan import plan_owner
from pipeline.render.png import LabelPlace, image_labels, label_places
from pipeline.render.stack import held_in, small_rect, stack_panels
from pipeline.scene.records import SmallObject
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.small_objects import Holder, bottoms
from pipeline.spatial.topology import ROOM
from pipeline.text.object_tasks import View, picture_captions, picture_labels
from pipeline.text.pictured import MARKED, picture_kind

ROOM_PICTURES = ("top_down", "south_door", "first_person")  # picture_kind of the pictures of a whole room
READ = ("id", "image_id", "image_name", "room_index", "camera", "query", "modality")


def leader(place: LabelPlace) -> LineString | None:
    """A label's leader line, from its box's nearest point to its dot (pipeline.render.labels), or None."""
    if place.dot is None:
        return None
    x0, y0, x1, y1 = place.box
    start = (min(max(place.dot[0], x0), x1), min(max(place.dot[1], y0), y1))
    return LineString([start, place.dot])


def label_problems(png: bytes, what: str) -> list[str]:
    """Overlapping labels and crossing or touching leaders of one picture."""
    places = label_places(png)
    problems = []
    boxes = {i: box(*p.box) for i, p in places.items()}
    lines = {i: line for i, p in places.items() if (line := leader(p)) is not None}
    for a, b in combinations(sorted(places), 2):
        if boxes[a].intersects(boxes[b]):
            problems.append(f"{what}: the labels of {a} and {b} overlap")
        if a in lines and b in lines and lines[a].distance(lines[b]) < LEADER_PX:
            problems.append(f"{what}: the leaders of {a} and {b} cross or touch")
        for one, other in ((a, b), (b, a)):
            if one in lines and lines[one].intersects(boxes[other]):
                problems.append(f"{what}: the leader of {one} crosses the label of {other}")
            dot = places[other].dot
            if one in lines and dot is not None and lines[one].distance(Point(dot)) <= DOT_RADIUS:
                problems.append(f"{what}: the leader of {one} crosses the dot of {other}")
    return problems


class Rooms:
    """The scenes of a build, their houses and the owner maps of their pictures (which object each pixel shows)."""

    def __init__(self, scenes: Path, seed: int):
        self.scenes, self.seed = scenes, seed
        self.cache: dict = {}

    def room(self, index: int):
        if index not in self.cache:
            path = scene_path(self.scenes, self.seed, index)
            self.cache[index] = (load_scene(path), load_house(path))
        return self.cache[index]

    def owner(self, index: int, image_name: str, camera: dict | None) -> np.ndarray:
        """The object index each pixel of a picture of a whole room shows, -1 for none."""
        scene, house = self.room(index)
        kind = picture_kind(image_name)
        if kind == "top_down":
            return plan_owner(scene)
        if kind == "south_door":
            return south_door_frame(scene, house).object_of_pixel
        return pose_frame(scene, house, (camera["x"], camera["z"]), camera["facing"]).object_of_pixel


def room_picture_problems(rooms: Rooms, index: int, image_name: str, camera: dict | None, png: bytes,
                          asked: set[str]) -> tuple[list[str], dict]:
    """What is wrong with one picture of a whole room, and its measures; `asked`: the labels the
    questions about it ask about."""
    scene, _ = rooms.room(index)
    what = f"room {index} {image_name}"
    labels, places = image_labels(png), label_places(png)
    owner = rooms.owner(index, image_name, camera)
    kind = picture_kind(image_name)
    counts = np.bincount(owner[owner >= 0], minlength=len(scene.objects))
    shows = [k for k, obj in enumerate(scene.objects)
             if counts[k] >= (1 if kind == "top_down" else MIN_VISIBLE_PX) or kind == "top_down" and obj.prominent]
    problems = label_problems(png, what)
    if image_name.startswith(MARKED):  # the prompt: every piece drawn in colour carries a letter
        unmarked = [obj.id for obj in (scene.objects[k] for k in shows) if obj.prominent and obj.id not in labels]
        problems += [f"{what}: {i} shows but carries no letter" for i in unmarked]
    else:
        types = {obj.type for obj in scene.objects if obj.id in labels}
        unlabelled = [scene.objects[k] for k in shows if scene.objects[k].type in types
                      and scene.objects[k].id not in labels]
        problems += [f"{what}: {obj.id}, a {obj.type} like a labelled one, shows unlabelled" for obj in unlabelled]
    index_of = {obj.id: k for k, obj in enumerate(scene.objects)}
    ids = {name: object_id for object_id, name in labels.items()}
    for name in sorted(asked & set(ids)):  # a balanced agent row is asked with its picture whatever it shows
        k = index_of[ids[name]]
        for other, place in places.items():
            x0, y0, x1, y1 = place.box
            if other != ids[name] and (owner[y0 : y1 + 1, x0 : x1 + 1] == k).any():
                problems.append(f"{what}: the label of {other} covers {name}, which a question asks about")
    measures: dict = {}
    if kind == "first_person":
        width = owner.shape[0] * owner.shape[1]
        where = Point(camera["x"], camera["z"])
        close = [(counts[k] / width, where.distance(Polygon(obj.footprint)), obj.id)
                 for k, obj in enumerate(scene.objects) if counts[k]]
        measures["most filled by an object nearer than CLOSE_OBJECT"] = max(
            [share for share, distance, _ in close if distance < CLOSE_OBJECT], default=0.0)
        problems += [f"{what}: {i}, {distance:.2f} m from the camera, fills {share:.0%} of the picture"
                     for share, distance, i in close if distance < CLOSE_OBJECT and share > MOST_FILLED]
    return problems, measures


def build_picture_problems(out: Path, scenes: Path, seed: int) -> tuple[Counter, list[str], dict]:
    """(pictures checked per kind, problems, the largest measures) over every picture of a room in a
    build's vision kinds, each once (a picture several configurations share is one PNG)."""
    rooms = Rooms(scenes, seed)
    rows = open_rows(out)
    checked: Counter = Counter()
    problems: list[str] = []
    worst: dict = defaultdict(float)
    seen_pngs: set[bytes] = set()
    for config in rows.configs:
        if not config.startswith("vision"):
            continue
        pictures: dict[str, dict] = {}
        asked: dict[str, set[str]] = defaultdict(set)
        for row in rows.rows([config], READ):
            if row["modality"] == "text":  # asked without its picture
                continue
            pictures.setdefault(row["image_id"], row)
            asked[row["image_id"]].update(set(row["query"].values()) - {ROOM})
        pngs = {row["image_id"]: row["image"]["bytes"]
                for row in rows.rows([config], ("image_id", "image"), keep={r["id"] for r in pictures.values()})}
        for image_id, row in sorted(pictures.items()):
            png = pngs[image_id]
            if png in seen_pngs:
                continue
            seen_pngs.add(png)
            kind = picture_kind(row["image_name"])
            checked[("marked " if row["image_name"].startswith(MARKED) else "") + kind] += 1
            found, measures = room_picture_problems(rooms, row["room_index"], row["image_name"], row["camera"], png,
                                                    asked[image_id])
            problems += [f"{config}: {problem}" for problem in found]
            for key, value in measures.items():
                worst[key] = max(worst[key], value)
    return checked, problems, dict(worst)


def held_problems(house: dict, view: View, mine: list[SmallObject]) -> tuple[list[str], Counter]:
    """What is wrong with the drawn boxes (each small object's solid in the picture, in the furniture's
    frame) of an object task's picture, and how many things lie in (`in`) or on (`on`) a small object,
    and in one but overhanging it as placed (`overhanging`: drawn where placed, it would lie beside it)."""
    panels, ids = stack_panels(house, view.furniture, mine, picture_labels(view), picture_captions(view))
    small = {obj.id: obj for obj in mine}
    solids = {ids[thing]: solid for panel in panels for solid, thing in panel.drawn if ids[thing] in small}
    counts: Counter = Counter()
    if set(solids) != set(small):
        return [f"{view.image_name}: draws {sorted(solids)}, not each of {sorted(small)} once"], counts
    holder = Holder(view.furniture, bottoms(house).get(view.furniture.id, 0.0))
    problems = []

    def across(obj_id: str) -> tuple[float, float, float, float]:
        corners = solids[obj_id].start
        return corners[:, 0].min(), corners[:, 0].max(), corners[:, 2].min(), corners[:, 2].max()

    for obj in mine:
        if obj.support not in small:
            continue
        (u0, u1, v0, v1), (h0, h1, k0, k1) = across(obj.id), across(obj.support)
        bottom, below, top = solids[obj.id].start[0, 1], solids[obj.support].start[0, 1], solids[obj.support].end[0, 1]
        what = f"{view.image_name}: the {obj.type} {obj.id}"
        if held_in(obj, small):
            counts["in"] += 1
            if not (h0 - 1e-9 <= u0 < u1 <= h1 + 1e-9 and k0 - 1e-9 <= v0 < v1 <= k1 + 1e-9 and bottom >= below):
                problems.append(f"{what} is drawn outside the {small[obj.support].type} it is in")
            p0, p1, q0, q1 = small_rect(holder, obj)
            r0, r1, s0, s1 = small_rect(holder, small[obj.support])
            counts["overhanging"] += not (r0 <= p0 and p1 <= r1 and s0 <= q0 and q1 <= s1)
        else:
            counts["on"] += 1
            if not (h0 <= (u0 + u1) / 2 <= h1 and k0 <= (v0 + v1) / 2 <= k1 and abs(bottom - top) < 1e-3):
                problems.append(f"{what} is drawn off the {small[obj.support].type} it is on")
    return problems, counts
