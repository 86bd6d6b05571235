"""The top-down plan of a scene (docs/semantics.md section 12): `top_down.png`, drawn from the scene record alone.

North up, east right, one pixel scale for both axes. Floor, walls, the door (a gap in the bottom
wall, labelled) and windows (light blue in the walls); every object is its oriented footprint
filled with its type's colour (pipeline/data/render.json), drawn lowest top first so that what is
higher hides what is under it, as seen from above. Prominent objects carry their type words (the
dataset's object names, unnumbered); other objects are grey and unlabelled. The image shows the
continuous scene: object centres in metres, as `Item.continuous_relation` measures them.
`grid=d` overlays the d x d cells and the nine regions (thicker lines, region codes).
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw
from shapely.geometry import Polygon, box

from pipeline.render.labels import LABEL_PAD, LabelRequest, place_labels
from pipeline.render.png import png_bytes
from pipeline.render.style import check_drawable, colour, font, object_colour, offline_key, style
from pipeline.scene.records import Scene
from pipeline.spatial.grid import check_grid_size
from pipeline.spatial.relations import REGIONS, band, region_bands
from pipeline.text.words import type_words


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
