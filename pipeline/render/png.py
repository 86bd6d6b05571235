"""The PNG files every renderer writes, and the text chunks they carry.

A render is one PNG per view, named by IMAGES. It is saved with fixed settings, so the same pixels
and labels always give the same bytes; an image of at most 256 colours (every offline one: flat
fills, nothing antialiased) is saved as a palette image, the same pixels in far fewer bytes. It carries text chunks: RENDER_KEY (what drew it; an image is redrawn when it
differs), LABELS_KEY (JSON list of [object id, label] for the objects labelled, i.e. visible, in
it; pipeline.dataset.vision reads it with `image_labels`) and PLACES_KEY (JSON {object id: [box,
dot(, over)]}, where each label lies, the end of its leader and the other labelled objects it
covers, if any; read with `label_places`). An AI2-THOR
render has neither of the last two: nothing says which objects its frames show.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError
from PIL.PngImagePlugin import PngInfo

from pipeline.errors import RoomspaceError

IMAGES = ("top_down", "south_door")  # file stems, one per view
RENDER_KEY = "roomspace-render"
LABELS_KEY = "roomspace-labels"
PLACES_KEY = "roomspace-label-places"


@dataclass(frozen=True)
class LabelPlace:
    """Where a label of an offline image lies (pipeline.render.labels)."""

    box: tuple[int, int, int, int]  # x0, y0, x1, y1: the pixels drawn, ends included
    dot: tuple[int, int] | None  # where its leader ends, None for a label on its object's own pixels
    # the other labelled objects some of whose pixels the box covers (only where the labels fit no other way)
    over: tuple[str, ...] = ()


def png_bytes(image: Image.Image, render_key: str, labels: Mapping[str, str] | None = None,
              places: Mapping[str, LabelPlace] | None = None) -> bytes:
    """PNG with fixed settings, so the same pixels and labels always give the same bytes.

    `labels` ({object id: label}) and `places` (where each lies) are recorded for an offline image.
    """
    info = PngInfo()
    info.add_text(RENDER_KEY, render_key)
    if labels is not None:
        info.add_text(LABELS_KEY, json.dumps(sorted(map(list, labels.items())), separators=(",", ":")))
        info.add_text(PLACES_KEY, json.dumps({i: [p.box, p.dot, *([list(p.over)] if p.over else [])]
                                              for i, p in sorted(places.items())}, separators=(",", ":")))
    buffer = io.BytesIO()
    _paletted(image).save(buffer, "PNG", pnginfo=info, compress_level=9)
    return buffer.getvalue()


def _paletted(image: Image.Image) -> Image.Image:
    """The same pixels as a palette image if they hold at most 256 colours, else the image itself."""
    colours = image.getcolors(256)
    if colours is None:
        return image
    pixels = np.asarray(image)
    codes = (pixels[..., 0].astype(np.uint32) << 16) | (pixels[..., 1].astype(np.uint32) << 8) | pixels[..., 2]
    palette = np.array(sorted((r << 16) | (g << 8) | b for _, (r, g, b) in colours), dtype=np.uint32)  # a fixed order
    index = np.zeros(1 << 24, dtype=np.uint8)  # colour code -> its place in the palette (untouched pages cost nothing)
    index[palette] = np.arange(len(palette))
    out = Image.fromarray(index[codes], "P")
    out.putpalette(np.stack([palette >> 16, (palette >> 8) & 255, palette & 255], axis=-1).astype(np.uint8).tobytes())
    return out


def render_key_of(path: Path) -> str | None:
    """The RENDER_KEY of an existing PNG (read from its header chunks), or None if unreadable."""
    try:
        with Image.open(path) as image:
            return image.info.get(RENDER_KEY)
    except (OSError, SyntaxError):  # truncated or not a PNG: draw it again
        return None


def image_labels(png: bytes) -> dict[str, str] | None:
    """{object id: label} of the objects labelled in a render, or None if it records none (AI2-THOR)."""
    try:
        with Image.open(io.BytesIO(png)) as image:
            if image.format != "PNG":
                raise RoomspaceError(f"expected a PNG render, got {image.format}")
            text = image.info.get(LABELS_KEY)
    except UnidentifiedImageError:
        raise RoomspaceError("a render is not an image") from None
    return None if text is None else dict(json.loads(text))


def label_places(png: bytes) -> dict[str, LabelPlace]:
    """{object id: where its label lies} of an offline render, read from the PNG."""
    with Image.open(io.BytesIO(png)) as image:
        text = image.info.get(PLACES_KEY)
    if text is None:
        raise RoomspaceError("this render records no label places")
    return {i: LabelPlace(tuple(box), None if dot is None else tuple(dot), tuple(over[0]) if over else ())
            for i, (box, dot, *over) in json.loads(text).items()}


def covered_objects(png: bytes) -> frozenset[str]:
    """The ids of the labelled objects of an offline render that another object's label partly covers
    (`LabelPlace.over`); none for a render that records no labels (AI2-THOR)."""
    if image_labels(png) is None:
        return frozenset()
    return frozenset(i for place in label_places(png).values() for i in place.over)
