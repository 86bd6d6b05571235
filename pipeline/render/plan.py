"""The top-down plan of a scene (docs/semantics.md section 12): `top_down.png`, drawn from the scene record alone.

North up, east right, one pixel scale for both axes. Floor, walls, the door (a gap in the bottom
wall, labelled) and windows (light blue in the walls); every object is its shape seen from above
(pipeline.render.shapes: a bed's pillows and headboard, a chair's seat and back, a lamp's shade),
each part filled with its colour (its type's, pipeline/data/render.json, or an accent) inside the
object's oriented footprint, parts drawn lowest top first so that what is higher hides what is
under it; a wall-hung object is a bar on its wall. Every prominent object carries its name (the
caller's, as the story names it; pipeline.render.labels), on its visible pixels or joined to a dot
on them by a leader, unless the caller leaves it unnamed; other objects are grey and unlabelled.
The image shows the continuous scene: object centres in metres, as `Item.continuous_relation`
measures them.
`grid=d` overlays the d x d cells and the nine regions (thicker lines, region codes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw
from shapely.geometry import Polygon

from pipeline.errors import RoomspaceError
from pipeline.render.labels import LabelRequest, dot_on, label_font_px, label_step, label_texts, place_labels
from pipeline.render.png import LabelPlace, png_bytes
from pipeline.render.shapes import solids
from pipeline.render.style import check_drawable, colour, drawing, font, object_colour, offline_key, style
from pipeline.scene.records import Scene
from pipeline.spatial.grid import check_grid_size
from pipeline.spatial.relations import REGIONS, band, region_bands


SIDE_TONE = 0.8  # a part's sides seen from above (a lamp shade's slope) are this much darker than its top
OUTLINE_TONE = 0.55  # and its outline this much
WALL_HUNG_PX = 5  # a wall-hung object's bar


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


def top_down_image(scene: Scene, grid: int | None = None, names: Mapping[str, str] | None = None,
                   backdrop: Image.Image | None = None) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The plan image, the label of every object labelled on it ({object id: label}; `names`, by
    default `label_texts`'s) and where each label lies.

    `backdrop`: the floor and the objects rendered otherwise from straight above, in this frame
    (pipeline.render.blender), instead of drawn here; the walls, openings, wall-hung bars, grid,
    words and labels are drawn on it as on the plan, the labels placed by the plan's own pixels."""
    check_drawable(scene)
    if grid is not None:
        check_grid_size(grid)
    texts = label_texts(scene, names)
    layout = style()["top_down"]
    frame = plan_frame(scene)
    if backdrop is not None and backdrop.size != (frame.size, frame.size):
        raise RoomspaceError(f"scene {scene.room_id} top_down: a backdrop of {backdrop.size} for a {frame.size} px plan")
    image = Image.new("RGB", (frame.size, frame.size), colour("background")) if backdrop is None else backdrop.convert("RGB")
    draw = drawing(image)
    (x0, y0), (x1, y1) = frame.pixel(0, scene.side), frame.pixel(scene.side, 0)
    wall_px = layout["wall_px"]
    walls = [x0 - wall_px, y0 - wall_px, x1 + wall_px, y1 + wall_px]
    if backdrop is None:
        draw.rectangle(walls, fill=colour("wall"))
        draw.rectangle([x0, y0, x1, y1], fill=colour("floor"))
    else:  # the same wall pixels around the rendered floor
        band = Image.new("1", image.size, 0)
        band_draw = ImageDraw.Draw(band)
        band_draw.rectangle(walls, fill=1)
        band_draw.rectangle([x0, y0, x1, y1], fill=0)
        image.paste(colour("wall"), mask=band)
    for opening in scene.openings:
        _draw_opening(draw, frame, opening.wall, opening.start, opening.end, colour(opening.kind), wall_px)

    parts = _parts(scene)
    for (hung, _, _, _), solid in parts if backdrop is None else ():
        if hung:
            continue
        outline, upward = solid.from_above()
        draw.polygon([frame.pixel(x, z) for x, z in outline], fill=_toned(solid.colour, SIDE_TONE),
                     outline=_toned(solid.colour, OUTLINE_TONE))
        if upward is not None:
            top = [frame.pixel(x, z) for x, z in upward]
            draw.polygon(top, fill=solid.colour, outline=_toned(solid.colour, OUTLINE_TONE))
    for obj in scene.objects:
        if obj.wall_hung:  # a few centimetres deep: a bar thick enough to see, in its type's colour
            points = [frame.pixel(x, z) for x, z in obj.footprint]
            draw.polygon(points, fill=object_colour(obj), outline=object_colour(obj), width=WALL_HUNG_PX)
    reserved = []  # the region codes, the door's word and the compass: no label may cover them
    if grid is not None:
        image, reserved = _grid_overlay(image, frame, grid)
        draw = drawing(image)

    words = font(label_font_px(frame.size, frame.size))  # the door's word and the compass's N, as legible as labels
    door = next((o for o in scene.openings if o.kind == "door"), None)
    if door is not None:
        dx, dy = frame.pixel((door.start[0] + door.end[0]) / 2, 0)
        draw.text((dx, dy + wall_px + 2), "door", fill=colour("label_text"), font=words, anchor="mt")
        reserved.append(draw.textbbox((dx, dy + wall_px + 2), "door", font=words, anchor="mt"))
    reserved.append(_draw_compass(draw, frame, words))

    owner = plan_owner(scene, parts)
    labelled = sorted((k for k, o in enumerate(scene.objects) if o.id in texts),
                      key=lambda k: Polygon(scene.objects[k].footprint).area)  # small objects choose their place first
    step = label_step(frame.size, frame.size)
    requests = []
    for k in labelled:
        obj = scene.objects[k]
        cx, cy = frame.pixel(obj.x, obj.z)
        minx, miny, maxx, maxy = Polygon([frame.pixel(x, z) for x, z in obj.footprint]).bounds
        above = [(cx, miny - step / 2 - 2 - j * step) for j in range(4)]
        below = [(cx, maxy + step / 2 + 2 + j * step) for j in range(4)]
        preferred = ((cx, cy), above[0], below[0], (maxx + 40, cy), (minx - 40, cy), *above[1:], *below[1:])
        requests.append(LabelRequest(obj.id, texts[obj.id], k, dot_on(owner, k, (cx, cy)), preferred))
    places = place_labels(draw, requests, owner, f"scene {scene.room_id} top_down",
                          tuple(tuple(round(v) for v in r) for r in reserved))
    return image, texts, places


def _parts(scene: Scene) -> list:
    """((wall-hung, top, object index, part index), solid) of each part of each object seen from above
    (pipeline.render.shapes) in the order drawn: higher tops hiding lower ones, wall-hung objects last."""
    return sorted(((obj.wall_hung, solid.top, k, j), solid) for k, obj in enumerate(scene.objects)
                  for j, solid in enumerate(solids(obj, 0.0, obj.size[1])))


def plan_owner(scene: Scene, parts: list | None = None) -> np.ndarray:
    """Which object each pixel of the plan shows (index into scene.objects, -1 for none), as
    `top_down_image` draws them (`parts`: `_parts(scene)`, made here if not given): its labels sit
    on it and point at it."""
    frame = plan_frame(scene)
    owners = Image.new("I", (frame.size, frame.size), -1)
    owner_draw = ImageDraw.Draw(owners)
    for (hung, _, k, _), solid in parts or _parts(scene):
        if not hung:
            hull = [frame.pixel(x, z) for x, z in solid.from_above()[0]]
            owner_draw.polygon(hull, fill=k, outline=k)
    for k, obj in enumerate(scene.objects):
        if obj.wall_hung:
            owner_draw.polygon([frame.pixel(x, z) for x, z in obj.footprint], fill=k, outline=k, width=WALL_HUNG_PX)
    return np.asarray(owners)


def _toned(fill: tuple[int, int, int], tone: float) -> tuple[int, int, int]:
    return tuple(min(255, round(c * tone)) for c in fill)


def _draw_opening(draw, frame: PlanFrame, wall: str, start, end, fill, wall_px: int) -> None:
    """An opening as a coloured block across the wall's thickness, between its ends."""
    (ax, ay), (bx, by) = frame.pixel(*start), frame.pixel(*end)
    offset = {"south": (0, 1), "north": (0, -1), "east": (1, 0), "west": (-1, 0)}[wall]
    cx0, cx1 = sorted((ax, bx))
    cy0, cy1 = sorted((ay, by))
    ox, oy = offset[0] * wall_px, offset[1] * wall_px
    draw.rectangle([min(cx0, cx0 + ox), min(cy0, cy0 + oy), max(cx1, cx1 + ox), max(cy1, cy1 + oy)], fill=fill)


def _draw_compass(draw, frame: PlanFrame, words) -> tuple[float, float, float, float]:
    """A north arrow with its N in the top-right margin, `words` the N's font; the box it covers."""
    x = frame.size - frame.margin / 2
    top, bottom = 4, frame.margin / 2
    ink = colour("compass")
    draw.line([(x, top + 6), (x, bottom)], fill=ink, width=2)
    draw.polygon([(x, top), (x - 5, top + 9), (x + 5, top + 9)], fill=ink)
    draw.text((x, bottom + 1), "N", fill=ink, font=words, anchor="mt")
    text = draw.textbbox((x, bottom + 1), "N", font=words, anchor="mt")
    return (min(x - 5, text[0]), top, max(x + 5, text[2]), text[3])


def region_lines(d: int) -> tuple[int, int]:
    """The two cell indices where band(k) steps up: the region borders of a d x d grid."""
    return tuple(k for k in range(1, d) if band(k, d) != band(k - 1, d))


def _grid_overlay(image: Image.Image, frame: PlanFrame, d: int) -> tuple[Image.Image, list[tuple[float, ...]]]:
    """The d x d cells (thin) and the nine regions (thick, with their codes), translucent over the
    plan; and the boxes of the codes."""
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = drawing(overlay)
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
    small = font(style()["top_down"]["small_font_px"])
    codes = []
    for code in REGIONS:
        bi, bj = region_bands(code)
        x, y = frame.pixel(starts[bi] * cell, (starts[bj + 1] if bj < 2 else d) * cell)
        draw.text((x + 4, y + 3), code, fill=(*colour("region"), 230), font=small,
                  stroke_width=2, stroke_fill=(*colour("label_box"), 200))  # a halo: legible on any fill
        codes.append(draw.textbbox((x + 4, y + 3), code, font=small, stroke_width=2))
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB"), codes


def top_down_png(scene: Scene, grid: int | None = None, names: Mapping[str, str] | None = None) -> bytes:
    image, labels, places = top_down_image(scene, grid, names)
    return png_bytes(image, offline_key("top_down", grid), labels, places)
