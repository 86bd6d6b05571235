"""How the offline renderer draws: pipeline/data/render.json (colours, image layouts, shading), the
label font, its pen, and the RENDER_KEY of an offline image.

The font is Pillow's bundled one, so labels look the same on every machine. `check_drawable` is
what every renderer, AI2-THOR's too, asks of a scene before drawing it.
"""

from __future__ import annotations

from functools import cache

from PIL import Image, ImageDraw, ImageFont

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.records import Scene, SceneObject

DRAWING_VERSION = 4  # part of RENDER_KEY: bump it when the drawings change, and old images are redrawn


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


def drawing(image: Image.Image) -> ImageDraw.ImageDraw:
    """A pen for an offline image; text is drawn unantialiased, like everything else, so an image
    holds few flat colours and is saved as a small palette PNG (pipeline.render.png)."""
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"
    return draw


def check_drawable(scene: Scene) -> None:
    if not scene.objects:
        raise RoomspaceError(f"scene {scene.room_id} has no objects to draw")


def offline_key(image_name: str, grid: int | None = None) -> str:
    """What drew an offline image; the grid overlay is drawn on the top-down image only."""
    overlay = f" grid={grid or 0}" if image_name == "top_down" else ""
    return f"offline v{DRAWING_VERSION} {image_name}{overlay}"
