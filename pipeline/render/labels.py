"""Labels on the offline images: each a boxed text that names exactly one object.

A view asks for its labels in the order they should choose their places, each with candidate
places, best first; `place_labels` draws each at its first candidate that stays in the image and
overlaps no earlier label. A label on its object's own area stands alone; any other is placed off
the object's dot and joined to it by a leader line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PIL import ImageDraw

from pipeline.render.style import colour, font

LABEL_PAD = 3  # px between a label's text and its box


@dataclass(frozen=True)
class LabelRequest:
    text: str
    dot: tuple[float, float]  # the point on the object the label names (px)
    candidates: tuple[tuple[float, float], ...]  # label-box centres to try, best first (px)
    inside: Callable[[tuple[float, float, float, float]], bool] | None  # does a box lie on the object itself?


def place_labels(draw: ImageDraw.ImageDraw, requests: list[LabelRequest], size: tuple[int, int], px: int) -> None:
    """Draw each label at its first candidate that stays in the image and overlaps no earlier label.

    A label away from its object gets a leader line to a dot on the object, so every label
    points at exactly one object.
    """
    text_font = font(px)
    taken: list[tuple[float, float, float, float]] = []
    for request in requests:
        left, top, right, bottom = text_font.getbbox(request.text)
        half_w, half_h = (right - left) / 2 + LABEL_PAD, (bottom - top) / 2 + LABEL_PAD
        boxes = [(cx - half_w, cy - half_h, cx + half_w, cy + half_h) for cx, cy in request.candidates]
        # A label lies inside its object's area, or off the dot it points at: never over the object's centre.
        clear = [b for b in boxes if _inside(request.inside, b) or not _overlap(b, (*request.dot, *request.dot), 4)]
        fits = [b for b in clear if b[0] >= 1 and b[1] >= 1 and b[2] <= size[0] - 2 and b[3] <= size[1] - 2]
        free = [b for b in fits if not any(_overlap(b, t) for t in taken)]
        chosen = (free or fits or clear or boxes)[0]
        taken.append(chosen)
        x0, y0, x1, y1 = (round(v) for v in chosen)
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        if not _inside(request.inside, (x0, y0, x1, y1)):
            target = _nearest_on_box(request.dot, (x0, y0, x1, y1))
            draw.line([target, request.dot], fill=colour("label_border"), width=1)
            dx, dy = request.dot
            draw.ellipse([dx - 3, dy - 3, dx + 3, dy + 3], fill=colour("label_text"))
        draw.rectangle([x0, y0, x1, y1], fill=colour("label_box"), outline=colour("label_border"))
        draw.text(centre, request.text, fill=colour("label_text"), font=text_font, anchor="mm")


def _inside(on_object: Callable[[tuple], bool] | None, rect: tuple) -> bool:
    """A label on its object needs neither leader nor dot."""
    return on_object is not None and on_object(rect)


def _overlap(a: tuple, b: tuple, gap: float = 2) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _nearest_on_box(point: tuple[float, float], rect: tuple) -> tuple[float, float]:
    return (min(max(point[0], rect[0]), rect[2]), min(max(point[1], rect[1]), rect[3]))
