"""The PNG files every renderer writes, and the two text chunks they carry.

A render is one PNG per view, named by IMAGES. It is saved with fixed settings, so the same pixels
and labels always give the same bytes, and carries two text chunks: RENDER_KEY (what drew it; an
image is redrawn when it differs) and LABELS_KEY (JSON list of [object id, label] for the objects
labelled, i.e. visible, in it; pipeline.dataset.vision reads it with `image_labels`). An AI2-THOR
render has no LABELS_KEY: nothing says which objects its frames show.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image, UnidentifiedImageError
from PIL.PngImagePlugin import PngInfo

from pipeline.errors import RoomspaceError

IMAGES = ("top_down", "south_door")  # file stems, one per view
RENDER_KEY = "roomspace-render"
LABELS_KEY = "roomspace-labels"


def png_bytes(image: Image.Image, render_key: str, labels: list[tuple[str, str]] | None) -> bytes:
    """PNG with fixed settings, so the same pixels and labels always give the same bytes."""
    info = PngInfo()
    info.add_text(RENDER_KEY, render_key)
    if labels is not None:
        info.add_text(LABELS_KEY, json.dumps([list(pair) for pair in labels], separators=(",", ":")))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", pnginfo=info, compress_level=6)
    return buffer.getvalue()


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
