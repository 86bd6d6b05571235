"""The top-down plan of a scene (docs/semantics.md section 12): `top_down.png`, drawn from the scene record alone.

North up, east right, one pixel scale for both axes. Floor, walls, the door (a gap in the bottom
wall, labelled) and windows (light blue in the walls); every object is its oriented footprint
filled with its type's colour (pipeline/data/render.json), drawn lowest top first so that what is
higher hides what is under it, as seen from above. Every prominent object carries its name (the
caller's, as the story names it; pipeline.render.labels), on its visible pixels or joined to a dot
on them by a leader; other objects are grey and unlabelled. The image shows the
continuous scene: object centres in metres, as `Item.continuous_relation` measures them.
`grid=d` overlays the d x d cells and the nine regions (thicker lines, region codes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw
from shapely.geometry import Polygon

from pipeline.render.labels import LABEL_PAD, LabelRequest, dot_on, label_texts, place_labels
from pipeline.render.png import LabelPlace, png_bytes
from pipeline.render.style import check_drawable, colour, drawing, font, object_colour, offline_key, style
from pipeline.scene.records import Scene
from pipeline.spatial.grid import check_grid_size
from pipeline.spatial.relations import REGIONS, band, region_bands


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
                   ) -> tuple[Image.Image, dict[str, str], dict[str, LabelPlace]]:
    """The plan image, the label of every prominent object on it ({object id: label}; `names`, by
    default `label_texts`'s) and where each label lies."""
    check_drawable(scene)
    if grid is not None:
        check_grid_size(grid)
    texts = label_texts(scene, names)
    layout = style()["top_down"]
    frame = plan_frame(scene)
    image = Image.new("RGB", (frame.size, frame.size), colour("background"))
    draw = drawing(image)
    # Which object each pixel shows (index into scene.objects, -1 for none): labels sit on it and point at it.
    owners = Image.new("I", image.size, -1)
    owner_draw = ImageDraw.Draw(owners)
    (x0, y0), (x1, y1) = frame.pixel(0, scene.side), frame.pixel(scene.side, 0)
    wall_px = layout["wall_px"]
    draw.rectangle([x0 - wall_px, y0 - wall_px, x1 + wall_px, y1 + wall_px], fill=colour("wall"))
    draw.rectangle([x0, y0, x1, y1], fill=colour("floor"))
    for opening in scene.openings:
        _draw_opening(draw, frame, opening.wall, opening.start, opening.end, colour(opening.kind), wall_px)

    # Higher tops hide lower ones from above; wall-hung objects are drawn last, on their wall.
    order = sorted(range(len(scene.objects)), key=lambda k: (scene.objects[k].wall_hung, scene.objects[k].size[1]))
    for k in order:
        obj = scene.objects[k]
        points = [frame.pixel(x, z) for x, z in obj.footprint]
        fill = object_colour(obj)
        outline = tuple(int(c * 0.55) for c in fill)
        width = 5 if obj.wall_hung else 1  # a wall-hung object is a few centimetres deep: a bar thick enough to see
        draw.polygon(points, fill=fill, outline=fill if obj.wall_hung else outline, width=width)
        owner_draw.polygon(points, fill=k, outline=k, width=width)
    reserved = []  # the region codes, the door's word and the compass: no label may cover them
    if grid is not None:
        image, reserved = _grid_overlay(image, frame, grid)
        draw = drawing(image)

    small = font(layout["small_font_px"])
    door = next((o for o in scene.openings if o.kind == "door"), None)
    if door is not None:
        dx, dy = frame.pixel((door.start[0] + door.end[0]) / 2, 0)
        draw.text((dx, dy + wall_px + 3), "door", fill=colour("label_text"), font=small, anchor="mt")
        reserved.append(draw.textbbox((dx, dy + wall_px + 3), "door", font=small, anchor="mt"))
    reserved.append(_draw_compass(draw, frame, layout["small_font_px"]))

    owner = np.asarray(owners)
    labelled = sorted((k for k, o in enumerate(scene.objects) if o.prominent),
                      key=lambda k: Polygon(scene.objects[k].footprint).area)  # small objects choose their place first
    step = font(layout["font_px"]).getbbox("Ag")[3] + 2 * LABEL_PAD + 2
    requests = []
    for k in labelled:
        obj = scene.objects[k]
        cx, cy = frame.pixel(obj.x, obj.z)
        minx, miny, maxx, maxy = Polygon([frame.pixel(x, z) for x, z in obj.footprint]).bounds
        above = [(cx, miny - step / 2 - 2 - j * step) for j in range(4)]
        below = [(cx, maxy + step / 2 + 2 + j * step) for j in range(4)]
        preferred = ((cx, cy), above[0], below[0], (maxx + 40, cy), (minx - 40, cy), *above[1:], *below[1:])
        requests.append(LabelRequest(obj.id, texts[obj.id], k, dot_on(owner, k, (cx, cy)), preferred))
    places = place_labels(draw, requests, owner, layout["font_px"], f"scene {scene.room_id} top_down",
                          tuple(tuple(round(v) for v in r) for r in reserved))
    return image, texts, places


def _draw_opening(draw, frame: PlanFrame, wall: str, start, end, fill, wall_px: int) -> None:
    """An opening as a coloured block across the wall's thickness, between its ends."""
    (ax, ay), (bx, by) = frame.pixel(*start), frame.pixel(*end)
    offset = {"south": (0, 1), "north": (0, -1), "east": (1, 0), "west": (-1, 0)}[wall]
    cx0, cx1 = sorted((ax, bx))
    cy0, cy1 = sorted((ay, by))
    ox, oy = offset[0] * wall_px, offset[1] * wall_px
    draw.rectangle([min(cx0, cx0 + ox), min(cy0, cy0 + oy), max(cx1, cx1 + ox), max(cy1, cy1 + oy)], fill=fill)


def _draw_compass(draw, frame: PlanFrame, px: int) -> tuple[float, float, float, float]:
    """A north arrow in the top-right margin; the box it covers."""
    x = frame.size - frame.margin / 2
    top, bottom = 6, frame.margin - 14
    ink = colour("compass")
    draw.line([(x, top + 6), (x, bottom)], fill=ink, width=2)
    draw.polygon([(x, top), (x - 5, top + 9), (x + 5, top + 9)], fill=ink)
    draw.text((x, bottom + 1), "N", fill=ink, font=font(px), anchor="mt")
    text = draw.textbbox((x, bottom + 1), "N", font=font(px), anchor="mt")
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
