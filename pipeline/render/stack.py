"""A close view of one piece of furniture and the small objects on and in it: `stack_<k>.png` (docs/semantics.md section 21).

The object tasks' picture (pipeline.text.object_tasks). Only the furniture and its small objects are
drawn, in the furniture's own frame, by a perspective camera in front of it looking at its front
from above (render.json's `stack_view`), fitted to the small objects it shows and the compartments'
fronts (or to the whole piece where it shows none). The furniture is its low-poly shape
(pipeline.render.shapes; the decoration a shelving unit's shape draws on its shelves is left out, so
that every book in the picture is a small object), each closed compartment (a drawer, a cabinet) a
panel on its front, each small object a box of its size in a colour of its own; an open container
and an open bowl or pot have no top face, so what is in them shows. What a closed compartment or
container holds (the fridge too) cannot be seen from outside: it is drawn in an inset below the main
view, one per closed thing, framed and captioned "inside the top left drawer", seen the same way.
Hidden surfaces come from the south-door view's z-buffer (pipeline.render.door); every thing the
caller names is labelled as in the other views (pipeline.render.labels), the insets' captions kept
clear, and the PNG records its labels (pipeline.render.png).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from pipeline.errors import RoomspaceError
from pipeline.render.door import Camera, CrowdedPicture, flat_image, shade, zbuffer
from pipeline.render.labels import LabelRequest, dot_on, label_font_px, label_step, place_labels
from pipeline.render.png import png_bytes
from pipeline.render.shapes import Solid, parts_of, solids
from pipeline.render.style import colour, drawing, font, offline_key, rgb, style
from pipeline.scene.records import Scene, SceneObject, SmallObject
from pipeline.scene.small_objects import Holder, Rect, bottoms, rules
from pipeline.text.words import type_words

MIN_VISIBLE_PX = 12  # a thing with fewer visible pixels than this is not labelled
DECORATION = "books"  # shapes.json's accent of the books a shelving unit's shape draws: not small objects


def _spec() -> dict:
    return style()["stack_view"]


@dataclass(frozen=True)
class Panel:
    """A part of the picture: what it draws (solids, each with its thing's number) in a rectangle of
    the image (x0, y0, x1, y1), fitted to `fit` (points in the furniture's frame), under a caption."""

    drawn: tuple[tuple[Solid, int], ...]
    fit: np.ndarray
    box: tuple[int, int, int, int]
    caption: str | None = None


def _box(rect: tuple[float, float, float, float], bottom: float, top: float, fill: tuple[int, int, int],
         open_top: bool = False) -> Solid:
    """A box over a rectangle (u0, u1, v0, v1) of the furniture's frame, as a Solid in the drawing's
    frame: x = u, z = v, y up; `open_top`: its top face is not drawn (`_faces`)."""
    u0, u1, v0, v1 = rect
    corners = [(u0, v0), (u1, v0), (u1, v1), (u0, v1)]
    solid = Solid(np.array([(u, bottom, v) for u, v in corners]), np.array([(u, top, v) for u, v in corners]), fill)
    return _OpenSolid(solid.start, solid.end, solid.colour) if open_top else solid


class _OpenSolid(Solid):
    """A box drawn without its top face: an open box, bowl or pot."""

    def faces(self):
        return [(polygon, normal) for polygon, normal in super().faces() if normal[1] < 0.5]


def _local(holder: Holder, solid: Solid) -> Solid:
    """A Solid in world metres turned into the furniture's frame."""
    def turn(points: np.ndarray) -> np.ndarray:
        out = []
        for x, y, z in points:
            u, v = holder.local(x, z)
            out.append((u, y, v))
        return np.array(out)

    return Solid(turn(solid.start), turn(solid.end), solid.colour)


def small_rect(holder: Holder, obj: SmallObject) -> tuple[float, float, float, float]:
    """A small object's rectangle in its furniture's frame (it lies square to it)."""
    u, v = holder.local(obj.x, obj.z)
    turn = round(((obj.yaw - holder.obj.yaw) % 360) / 90) % 4
    across, ahead = (obj.size[0], obj.size[2]) if turn % 2 == 0 else (obj.size[2], obj.size[0])
    return u - across / 2, u + across / 2, v - ahead / 2, v + ahead / 2


def held_in(obj: SmallObject, small: Mapping[str, SmallObject]) -> bool:
    """Whether a small object lies in the small object under it (a box's inside, a bowl, a pot), not on it."""
    support = small.get(obj.support)
    return support is not None and (obj.inside or rules()["carriers"].get(support.type, {}).get("relation") == "in")


def drawn_rects(holder: Holder, small: Sequence[SmallObject]) -> dict[str, Rect]:
    """{small object id: its rectangle as the picture draws it}, in the furniture's frame: where it was
    placed, except that what lies in a small object (`held_in`) is drawn inside it and what rests on
    one moves with it. The placer lets a load overhang its carrier (a potato bigger than the bowl it is
    in, its centre over the bowl's middle), which drawn as placed looks beside the bowl; so the things
    in one holder are shrunk together (one scale, never enlarged) and moved as little as they must to
    lie inside the holder's rim (`rules()["gap"]` in from its sides). Holders come before what they
    hold (placement order)."""
    by_id = {obj.id: obj for obj in small}
    wall = rules()["gap"]
    maps: dict[str, tuple[float, float, float, float, float]] = {}  # id -> its placed rect's map to the drawn one
    drawn: dict[str, Rect] = {}
    for obj in small:
        placed = small_rect(holder, obj)
        if obj.support not in by_id:
            maps[obj.id] = (1.0, 0.0, 0.0, 0.0, 0.0)
        elif not held_in(obj, by_id):
            maps[obj.id] = maps[obj.support]  # on its carrier: where the carrier goes
        elif obj.id not in maps:  # the first thing in its holder: a map for all of them
            group = [o for o in small if o.support == obj.support and held_in(o, by_id)]
            rects = [_mapped(small_rect(holder, o), maps[obj.support]) for o in group]
            inner = _inset(drawn[obj.support], wall)
            maps.update((o.id, _into(rects, inner, maps[obj.support])) for o in group)
        drawn[obj.id] = _mapped(placed, maps[obj.id])
    return drawn


def _mapped(rect: Rect, transform: tuple[float, float, float, float, float]) -> Rect:
    """A rectangle under (scale, u from, v from, u to, v to): p -> to + scale (p - from)."""
    scale, u_from, v_from, u_to, v_to = transform
    u0, u1, v0, v1 = rect
    return (u_to + scale * (u0 - u_from), u_to + scale * (u1 - u_from),
            v_to + scale * (v0 - v_from), v_to + scale * (v1 - v_from))


def _inset(rect: Rect, wall: float) -> Rect:
    """The rectangle `wall` in from each side (its centre, where it is narrower than two walls)."""
    u0, u1, v0, v1 = rect
    du, dv = min(wall, (u1 - u0) / 2), min(wall, (v1 - v0) / 2)
    return u0 + du, u1 - du, v0 + dv, v1 - dv


def _into(rects: Sequence[Rect], inner: Rect, outer: tuple[float, float, float, float, float],
          ) -> tuple[float, float, float, float, float]:
    """The map that takes placed rectangles through `outer` (their holder's map) and then shrinks
    (never enlarges) and shifts the box around them, as little as it must, to lie inside `inner`."""
    u0, u1 = min(r[0] for r in rects), max(r[1] for r in rects)
    v0, v1 = min(r[2] for r in rects), max(r[3] for r in rects)
    i0, i1, j0, j1 = inner
    scale = min(1.0, (i1 - i0) / max(u1 - u0, 1e-12), (j1 - j0) / max(v1 - v0, 1e-12))
    cu, cv = (u0 + u1) / 2, (v0 + v1) / 2
    half_u, half_v = scale * (u1 - u0) / 2, scale * (v1 - v0) / 2
    to_u = min(max(cu, i0 + half_u), i1 - half_u)
    to_v = min(max(cv, j0 + half_v), j1 - half_v)
    s, fu, fv, tu, tv = outer  # first the holder's map, then this one about the group's centre
    return s * scale, fu, fv, to_u + scale * (tu - cu), to_v + scale * (tv - cv)


def enclosed(furniture: SceneObject, small: Sequence[SmallObject]) -> dict[str, str]:
    """{small object id: the closed compartment ("<furniture id>/<name>") or container (its id) whose
    inset draws it}: the innermost closed one around it."""
    by_id = {o.id: o for o in small}
    found = {}
    for obj in small:
        thing = obj
        while True:
            if thing.inside and thing.support == furniture.id:
                found[obj.id] = f"{furniture.id}/{thing.part}"
                break
            if thing.inside and by_id[thing.support].closed:
                found[obj.id] = thing.support
                break
            if thing.support not in by_id:
                break
            thing = by_id[thing.support]
    return found


def stack_png(scene: Scene, house: Mapping, furniture: SceneObject, small: Sequence[SmallObject],
              names: Mapping[str, str], captions: Mapping[str, str], image_name: str) -> bytes:
    """The close view of `furniture` and its small objects `small`, labelled with `names` ({id: label}:
    small objects by id, the furniture by its id, a compartment by "<furniture id>/<name>"); an inset
    for each closed thing holding something, captioned with `captions` ({its id: caption}). A
    CrowdedPicture where the labels do not fit."""
    panels, ids = stack_panels(house, furniture, small, names, captions)
    return _draw(panels, ids, names, scene.room_id, image_name)


def stack_panels(house: Mapping, furniture: SceneObject, small: Sequence[SmallObject], names: Mapping[str, str],
                 captions: Mapping[str, str]) -> tuple[list[Panel], list[str]]:
    """What `stack_png` draws: its panels (the main view, then the insets), each solid with its thing's
    number, and the things' ids by number."""
    spec, data = _spec(), rules()
    holder = Holder(furniture, bottoms(house).get(furniture.id, 0.0))
    width, height, depth = furniture.size
    bottom, top = holder.bottom, holder.bottom + height
    ids: list[str] = [furniture.id]
    body = [(_local(holder, solid), 0) for part, solid in zip(parts_of(furniture.type), solids(furniture, bottom, top))
            if part.get("colour") != DECORATION]
    front, fit = [], []
    for compartment in data["receptacles"].get(furniture.type, {}).get("compartments", ()):
        key = f"{furniture.id}/{compartment['name']}"
        if key not in names or compartment["name"] == type_words(furniture.type):  # the fridge: itself
            continue
        x0, x1, y0, y1, _, _ = compartment["box"]
        ids.append(key)
        panel = _box((x0 * width, x1 * width, depth, depth + spec["panel"]), bottom + y0 * height,
                     bottom + y1 * height, rgb(spec["compartment"]))
        front.append((panel, len(ids) - 1))
        fit.append(panel)
    inside = enclosed(furniture, small)
    palette = [rgb(c) for c in spec["palette"]]
    rects = drawn_rects(holder, small)
    groups: dict[str, list[tuple[Solid, int]]] = {}
    for k, obj in enumerate(small):
        ids.append(obj.id)
        hollow = (obj.closed is False) or data["carriers"].get(obj.type, {}).get("relation") == "in"
        solid = _box(rects[obj.id], obj.y, obj.y + obj.size[1], palette[k % len(palette)], hollow)
        if obj.id in inside:
            groups.setdefault(inside[obj.id], []).append((solid, len(ids) - 1))
        else:
            front.append((solid, len(ids) - 1))
            fit.append(solid)
    if not any(obj.id not in inside for obj in small):  # nothing on it to frame: its top and fronts
        top_face = _box((0.0, width, 0.0, depth), top, top, (0, 0, 0))
        fit.append(top_face)
    shown = [key for key in captions if key in groups]
    return _layout(body + front, fit, [(groups[key], captions[key]) for key in shown]), ids


def _points(drawn: Sequence[Solid], least: float) -> np.ndarray:
    """The corners of the solids, with the box around them widened to at least `least` metres across
    and deep (so that one small thing is not drawn across the whole picture)."""
    points = np.concatenate([np.concatenate([s.start, s.end]) for s in drawn])
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2
    half = np.maximum((high - low) / 2, [least / 2, 0.0, least / 2])
    corners = [centre + half * np.array([a, b, c]) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)]
    return np.concatenate([points, np.array(corners)])


def _layout(main: list, fit: list, insets: list) -> list[Panel]:
    """The main view above, the insets in rows below it, three to a row."""
    spec = _spec()
    width, height, inset_height = spec["width"], spec["height"], spec["inset_height"]
    rows = math.ceil(len(insets) / spec["insets_per_row"]) if insets else 0
    main_height = height - rows * inset_height
    panels = [Panel(tuple(main), _points(fit, spec["least_across"]), (0, 0, width, main_height))]
    for k, (drawn, caption) in enumerate(insets):
        row, column = divmod(k, spec["insets_per_row"])
        across = width // min(spec["insets_per_row"], len(insets) - row * spec["insets_per_row"])
        y0 = main_height + row * inset_height
        panels.append(Panel(tuple(drawn), _points([s for s, _ in drawn], spec["least_inside"]),
                            (column * across, y0, (column + 1) * across, y0 + inset_height), caption))
    return panels


def _camera(points: np.ndarray, width: int, height: int, top_gap: int) -> Camera:
    """A camera before the furniture's front (+v) looking back at the points from above, fitted to them
    in an image of width x height, `top_gap` pixels at its top left free (a caption)."""
    spec = _spec()
    pitch = math.radians(spec["pitch_degrees"])
    low, high = points.min(axis=0), points.max(axis=0)
    size = max(float((high - low).max()), 0.3)
    distance = spec["distance"] * size
    centre = (low + high) / 2
    position = (float(centre[0]), float(high[1]) + distance * math.sin(pitch),
                float(centre[2]) + distance * math.cos(pitch))
    probe = Camera(position, pitch, 1.0, (0.0, 0.0), width, height, "S")
    flat, _ = probe.project(points)
    u, v = flat[:, 0], -flat[:, 1]
    margin = spec["margin"]
    focal = min((width - 2 * margin) / max(u.max() - u.min(), 1e-9),
                (height - 2 * margin - top_gap) / max(v.max() - v.min(), 1e-9))
    middle = (width / 2 - focal * (u.max() + u.min()) / 2,
              (height + top_gap) / 2 + focal * (v.max() + v.min()) / 2)
    return Camera(position, pitch, focal, middle, width, height, "S")


def _faces(drawn: Sequence[tuple[Solid, int]]) -> list[tuple[np.ndarray, tuple[int, int, int], int]]:
    """Every face (polygon, shaded fill, thing) of the solids, in order."""
    out = []
    for solid, thing in drawn:
        for polygon, normal in solid.faces():
            k = shade(normal)
            out.append((polygon, tuple(min(255, round(c * k)) for c in solid.colour), thing))
    return out


def _render(panel: Panel, caption_px: int) -> tuple[np.ndarray, list[tuple[tuple[int, int, int], int]]]:
    """The face each pixel of the panel shows (-1 for none), and each face's (fill, thing)."""
    x0, y0, x1, y1 = panel.box
    faces = _faces(panel.drawn)
    camera = _camera(panel.fit, x1 - x0, y1 - y0, caption_px if panel.caption else 0)
    triangles, owners = [], []
    for index, (polygon, _, _) in enumerate(faces):
        for k in range(1, len(polygon) - 1):
            triangles.append((polygon[0], polygon[k], polygon[k + 1]))
            owners.append(index)
    if not triangles:
        return np.full((y1 - y0, x1 - x0), -1, dtype=np.int32), []
    shown = zbuffer(np.asarray(triangles, dtype=float), np.asarray(owners, dtype=np.int64), camera)
    return shown, [(fill, thing) for _, fill, thing in faces]


def _draw(panels: Sequence[Panel], ids: Sequence[str], names: Mapping[str, str], room_id: str,
          image_name: str) -> bytes:
    spec = _spec()
    width, height = spec["width"], spec["height"]
    px = label_font_px(width, height)
    caption_px = label_step(width, height) + 4
    shown = np.full((height, width), -1, dtype=np.int32)
    surfaces: list[tuple[tuple[int, int, int], int]] = []
    for panel in panels:
        x0, y0, x1, y1 = panel.box
        faces, fills = _render(panel, caption_px)
        shown[y0:y1, x0:x1] = np.where(faces >= 0, faces + len(surfaces), -1)
        surfaces += fills
    image = flat_image(shown, [fill for fill, _ in surfaces])
    draw = drawing(image)
    reserved = []
    for panel in panels[1:]:
        x0, y0, x1, y1 = panel.box
        draw.rectangle([x0 + 2, y0 + 2, x1 - 3, y1 - 3], outline=colour("label_border"), width=2)
        left, top, right, bottom = font(px).getbbox(panel.caption, mode="1")
        place = (x0 + 8, y0 + 6)
        draw.text((place[0] - left, place[1] - top), panel.caption, fill=colour("label_text"), font=font(px))
        reserved.append((place[0], place[1], place[0] + right - left, place[1] + bottom - top))
    objects = np.array([thing for _, thing in surfaces] + [-1], dtype=np.int32)[shown]
    places = _label(draw, image, objects, ids, names, tuple(reserved), f"scene {room_id} {image_name}")
    return png_bytes(image, offline_key(image_name), {i: names[i] for i in places}, places)


def _label(draw, image: Image.Image, objects: np.ndarray, ids: Sequence[str], names: Mapping[str, str],
           reserved: tuple, what: str) -> dict:
    """Label every named thing with enough visible pixels, as the perspective views do."""
    step = label_step(image.width, image.height)
    rows, cols = np.nonzero(objects >= 0)
    which = objects[rows, cols]
    count = np.bincount(which, minlength=len(ids))
    mean_col = np.bincount(which, cols, minlength=len(ids)) / np.maximum(count, 1)
    mean_row = np.bincount(which, rows, minlength=len(ids)) / np.maximum(count, 1)
    present, firsts = np.unique(which, return_index=True)
    top = dict(zip(present.tolist(), rows[firsts].tolist()))
    visible = [k for k, i in enumerate(ids) if i in names and count[k] >= MIN_VISIBLE_PX]
    visible.sort(key=lambda k: (count[k], k))  # small things choose their place first
    requests = []
    for k in visible:
        col, row = float(mean_col[k]), float(mean_row[k])
        above = [(col, top[k] - step / 2 - 6 - j * step) for j in range(6)]
        below = [(col, row + j * step) for j in range(1, 4)]
        requests.append(LabelRequest(ids[k], names[ids[k]], k, dot_on(objects, k, (col, row)),
                                     ((col, row), *above, *below)))
    try:
        return place_labels(draw, requests, objects, what, reserved, may_cross=False)
    except RoomspaceError as error:  # place_labels' one error: the labels do not fit
        raise CrowdedPicture(str(error)) from None
