"""Labels on the offline images: each a boxed text that names exactly one object and points at it.

A view asks for its labels in the order they should choose their places, each with the places it
prefers, best first, and a dot on its object (moved where it would touch an earlier label's dot:
`_dots_apart`). `place_labels` puts each label at its first preferred place that is free, else at
the free place nearest its object's dot, searching the image (a summed-area table counts the
blocked pixels under every box at once). Free means inside the image, clear of every earlier
label, leader, dot and reserved box (text the view drew), and, unless the label lies wholly on its
object's own pixels, clear of its own dot, with a leader line to the dot that crosses no other
label, leader or dot (two crossing leaders over a cluster of chairs cannot be told apart at a
model's input size); where every leader to the dot would cross something, a leader to another spot
wholly on the object will do. A label is also kept clear of the pixels of every other object
labelled (a label on the table beside its chair reads as the table's) unless it finds no such place
among the TRIED_PLACES nearest; then it lies over them and its place says which (`LabelPlace.over`:
the vision kinds ask nothing about an object another label covers). If some label finds no place,
the image's labels are all placed again with a smaller font, down to the smallest legible one;
where even that cannot hold them, a picture that must be drawn (the plan, the door view: `may_cross`)
is placed again with leaders allowed to cross one another, every free place tried, the last
resort; failing that, or for a picture that can be left out, it is an error, never a cluttered
image. The boxes and dots are recorded in the PNG (pipeline.render.png).

Label text is sized to the image, not in fixed pixels: a vision-language model sees an image
shrunk to a few hundred pixels (render.json's `labels.downscaled_to`, 448), so the font is the
smallest whose text line (ascenders to descenders, `text_height`) is `labels.text_px` high once the image's longer
side is shrunk to that size, and where labels do not fit, never smaller than
`labels.fewest_text_px` there (`label_font_px`). Text is bold (drawn twice, a pixel apart, so that it
stays unantialiased) on the label's light box, which keeps it apart from any fill behind it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from PIL import ImageDraw

from pipeline.errors import RoomspaceError
from pipeline.render.png import LabelPlace
from pipeline.render.style import colour, font, style
from pipeline.scene.records import Scene
from pipeline.text.words import object_labels

LABEL_PAD = 3  # px between a label's text and its box
GAP = 2  # px kept clear around every label box
DOT_RADIUS = 4  # px
LEADER_PX = 2  # a leader line's width
BOLD = 1  # px: text is drawn again this far to the right, a bold face without antialiased strokes
SEARCH_STEP = 2  # px between the label places tried in the search
# Free places tried per label, nearest first, with a leader to its dot, then to another spot of its object: beyond
# them a label counts as not fitting (then over other objects, at a smaller font, ...), which bounds the search
# (but for the last resort, `_layout`'s cross_leaders, which tries every free place with a leader to its dot).
TRIED_PLACES = 4000
TRIED_SPOTS = 400
LINE = "Ahdgjlpqy"  # a text line's ascenders and descenders: how high a label's text line is


@dataclass(frozen=True)
class LabelRequest:
    id: str  # object id
    text: str
    index: int  # the object's number in the owner map
    dot: tuple[int, int]  # pixel on the object the label points at
    preferred: tuple[tuple[float, float], ...]  # label-box centres to try first, best first (px)


def text_height(px: int) -> int:
    """The height of a label's text line at font size `px`: from the top of its tallest letters to
    the bottom of its descenders (LINE). Every label's box is this high, whatever its letters."""
    _, top, _, bottom = _ink(LINE, px)
    return bottom - top


@cache
def label_font_px(width: int, height: int, text_px: str = "text_px") -> int:
    """The smallest font size whose text line is render.json's labels[text_px] pixels high once the
    image's longer side is shrunk to labels.downscaled_to."""
    spec = style()["labels"]
    needed = spec[text_px] * max(width, height) / spec["downscaled_to"]
    return next(px for px in range(4, 400) if text_height(px) >= needed)


def label_step(width: int, height: int) -> int:
    """A label box's height and the gap after it at the image's label font: how far apart the views
    put the places they prefer."""
    return text_height(label_font_px(width, height)) + 2 * LABEL_PAD + GAP + 1


def label_texts(scene: Scene, names: Mapping[str, str] | None) -> dict[str, str]:
    """{object id: label} of the objects to label: the caller's names (prominent objects only; a
    prominent object they leave out is drawn unlabelled), by default numbered type words for every
    prominent object (pipeline.text.words.object_labels)."""
    if names is None:
        return object_labels(scene.prominent)
    unknown = set(names) - {o.id for o in scene.prominent}
    if unknown:
        raise RoomspaceError(f"scene {scene.room_id}: label names must name prominent objects only "
                             f"(unknown {sorted(unknown)})")
    return dict(names)


def dot_on(owner: np.ndarray, index: int, point: tuple[float, float]) -> tuple[int, int]:
    """The pixel showing object `index` nearest to `point` (the point itself if none shows it)."""
    col, row = round(point[0]), round(point[1])
    if 0 <= row < owner.shape[0] and 0 <= col < owner.shape[1] and owner[row, col] == index:
        return col, row
    rows, cols = np.nonzero(owner == index)
    if not len(rows):
        return col, row
    k = int(np.argmin((cols - point[0]) ** 2 + (rows - point[1]) ** 2))
    return int(cols[k]), int(rows[k])


def place_labels(draw: ImageDraw.ImageDraw, requests: list[LabelRequest], owner: np.ndarray, image: str,
                 reserved: tuple[tuple[int, int, int, int], ...] = (), may_cross: bool = True) -> dict[str, LabelPlace]:
    """Place and draw every label at the image's label font (`label_font_px`) or, where they do not
    all fit, a smaller one down to the smallest legible; {object id: place}.

    `owner` is the object index each pixel shows (-1 for none), `image` names the image in errors;
    `may_cross`: leaders may cross one another as the last resort (module docstring), which a picture
    that can be left out (a first-person view, an object task's) does not take: it does not fit.
    """
    height, width = owner.shape
    largest, smallest = label_font_px(width, height), label_font_px(width, height, "fewest_text_px")
    requests = _dots_apart(requests, owner)
    for cross_leaders in (False, True) if may_cross else (False,):
        for size in range(largest, smallest - 1, -1):
            places = _layout(requests, owner, size, reserved, cross_leaders)
            if places is not None:
                for request in requests:
                    _draw(draw, request.text, places[request.id], size)
                return places
    raise RoomspaceError(f"{image}: no room for {len(requests)} labels at {smallest} px or more")


def _dots_apart(requests: list[LabelRequest], owner: np.ndarray) -> list[LabelRequest]:
    """The requests with each dot at least two dots' width and a gap from every earlier one: where two
    objects' dots would touch (two chairs, one behind the other), the later moves to its object's pixel
    nearest its dot that is that far from them (staying if none is), so that no leader ends on another's dot."""
    apart = 2 * DOT_RADIUS + GAP + 1
    out: list[LabelRequest] = []
    for request in requests:
        taken = np.array([r.dot for r in out], dtype=np.int64).reshape(-1, 2)
        near = ((taken - request.dot) ** 2).sum(axis=1) < apart**2
        if near.any():
            rows, cols = np.nonzero(owner == request.index)
            far = ((cols[:, None] - taken[:, 0]) ** 2 + (rows[:, None] - taken[:, 1]) ** 2 >= apart**2).all(axis=1)
            if far.any():
                k = int(np.argmin(np.where(far, (cols - request.dot[0]) ** 2 + (rows - request.dot[1]) ** 2, np.inf)))
                request = replace(request, dot=(int(cols[k]), int(rows[k])))
        out.append(request)
    return out


def _layout(requests, owner: np.ndarray, px: int, reserved, cross_leaders: bool) -> dict[str, LabelPlace] | None:
    """Every label's place at this font size, or None if one finds no free place: clear of the other
    labelled objects' pixels where it can be, else over them; leaders cross one another only with
    `cross_leaders`."""
    height, width = owner.shape
    fixed = np.ones((height, width), dtype=bool)  # what no label box may cover, though leaders may cross it
    fixed[1:-1, 1:-1] = False  # the image's outermost pixels: a box drawn there would touch the edge
    for rect in reserved:
        _mark(fixed, rect, GAP)
    boxes, leaders, dots = np.zeros_like(fixed), np.zeros_like(fixed), np.zeros_like(fixed)
    for request in requests:
        _mark(dots, (*request.dot, *request.dot), DOT_RADIUS + GAP)
    labelled = np.isin(owner, [request.index for request in requests])
    id_of = {request.index: request.id for request in requests}
    places = {}
    for request in requests:
        left, _, right, _ = _ink(request.text, px)
        size = (right - left + 2 * LABEL_PAD, text_height(px) + 2 * LABEL_PAD)  # x1 - x0, y1 - y0
        own = np.zeros_like(dots)
        _mark(own, (*request.dot, *request.dot), DOT_RADIUS + GAP)
        # A leader crosses no label, no other object's dot and (unless allowed) no other leader.
        crossed = boxes | (dots & ~own) if cross_leaders else boxes | leaders | (dots & ~own)
        covered = boxes | leaders | (dots & ~own) | fixed
        tried = None if cross_leaders else TRIED_PLACES  # the last resort searches every free place
        place = _first_free(request, size, owner, covered | (labelled & (owner != request.index)), own, crossed, tried)
        if place is None:  # nowhere clear of the other labelled objects: over them
            place = _first_free(request, size, owner, covered, own, crossed, tried)
        if place is None:
            return None
        x0, y0, x1, y1 = place.box
        under = set(np.unique(owner[y0 : y1 + 1, x0 : x1 + 1]).tolist()) & set(id_of) - {request.index}
        place = places[request.id] = replace(place, over=tuple(sorted(id_of[k] for k in under)))
        _mark(boxes, place.box, GAP)
        if place.dot is not None:
            _mark_segment(leaders, _nearest_on_box(place.dot, place.box), place.dot)
            _mark(dots, (*place.dot, *place.dot), DOT_RADIUS + GAP)
    return places


def _first_free(request: LabelRequest, size, owner, covered, own, crossed, tried: int | None) -> LabelPlace | None:
    """The first preferred place that is free, else the free place nearest the dot, else (where every
    leader to the dot would cross something, as into a cluster of chairs) the free place nearest the
    dot whose leader reaches another spot of the object (`_spots`) without crossing anything.

    No box may cover a pixel of `covered`, nor `own` (around its dot) unless it lies on its
    object; no leader may cross `crossed`. Only the `tried` nearest free places are tried (None: all).
    """
    w, h = size
    height, width = owner.shape
    blocked = covered | own
    for cx, cy in request.preferred:
        box = (round(cx - w / 2), round(cy - h / 2), round(cx - w / 2) + w, round(cy - h / 2) + h)
        if not (0 <= box[0] and 0 <= box[1] and box[2] < width and box[3] < height):
            continue
        x0, y0, x1, y1 = box
        if not covered[y0 : y1 + 1, x0 : x1 + 1].any() and (owner[y0 : y1 + 1, x0 : x1 + 1] == request.index).all():
            return LabelPlace(box, None)  # on the object's own pixels: no leader needed
        place = LabelPlace(box, request.dot)
        if not blocked[y0 : y1 + 1, x0 : x1 + 1].any() and _leader_clear(place, crossed):
            return place
    # Every top-left corner whose box holds no blocked pixel, counted with a summed-area table.
    table = np.zeros((height + 1, width + 1), dtype=np.int32)
    table[1:, 1:] = blocked.cumsum(0, dtype=np.int32).cumsum(1, dtype=np.int32)
    ys = np.arange(0, height - h, SEARCH_STEP)[:, None]
    xs = np.arange(0, width - w, SEARCH_STEP)[None, :]
    count = table[ys + h + 1, xs + w + 1] - table[ys, xs + w + 1] - table[ys + h + 1, xs] + table[ys, xs]
    free_y, free_x = np.nonzero(count == 0)
    x0s, y0s = xs[0, free_x].astype(np.int64), ys[free_y, 0].astype(np.int64)
    # Nearest first, ties by row then column, so the choice is fixed: four times the squared distance
    # between the box's centre and the dot is a whole number, the key's high bits.
    quadruple = (2 * x0s + w - 2 * request.dot[0]) ** 2 + (2 * y0s + h - 2 * request.dot[1]) ** 2
    keys = (quadruple << 32) | (y0s << 16) | x0s
    left = len(keys) if tried is None else tried
    for batch in _ascending_batches(keys):
        batch = batch[:left]
        if not len(batch):  # no free place, or the `tried` nearest tried
            break
        clear = _leaders_clear(x0s[batch], y0s[batch], size, request.dot, crossed)
        if clear.any():
            k = batch[int(np.argmax(clear))]
            x0, y0 = int(x0s[k]), int(y0s[k])
            return LabelPlace((x0, y0, x0 + w, y0 + h), request.dot)
        left -= len(batch)
    spots = _spots(owner == request.index, covered | crossed)
    if not len(spots):
        return None
    for k in itertools.islice(_ascending(keys), TRIED_SPOTS):
        x0, y0 = int(x0s[k]), int(y0s[k])
        x1, y1 = x0 + w, y0 + h
        # the spot nearest the box, a dot's width and a gap clear of it
        off = np.maximum(np.maximum(x0 - spots[:, 0], spots[:, 0] - x1), 0) ** 2 + np.maximum(
            np.maximum(y0 - spots[:, 1], spots[:, 1] - y1), 0) ** 2
        off[off <= (DOT_RADIUS + GAP) ** 2] = np.iinfo(off.dtype).max
        j = int(np.argmin(off))
        if off[j] == np.iinfo(off.dtype).max:
            continue
        place = LabelPlace((x0, y0, x1, y1), (int(spots[j, 0]), int(spots[j, 1])))
        if _leader_clear(place, crossed):
            return place
    return None


def _spots(mine: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """(col, row) of every pixel of `mine` where a dot drawn lies wholly on it, a gap clear of `taken`."""
    reach = DOT_RADIUS + GAP
    height, width = mine.shape
    good = mine & ~taken
    table = np.zeros((height + 1, width + 1), dtype=np.int32)
    table[1:, 1:] = good.cumsum(0, dtype=np.int32).cumsum(1, dtype=np.int32)
    rows, cols = np.nonzero(mine[reach : height - reach, reach : width - reach])
    rows, cols = rows + reach, cols + reach
    side = 2 * reach + 1
    full = (table[rows + reach + 1, cols + reach + 1] - table[rows - reach, cols + reach + 1]
            - table[rows + reach + 1, cols - reach] + table[rows - reach, cols - reach]) == side * side
    return np.stack([cols[full], rows[full]], axis=1).astype(np.int64)


def _ascending(keys: np.ndarray, first: int = 64):
    """Indices of distinct `keys` in ascending order, one at a time."""
    for batch in _ascending_batches(keys, first):
        yield from batch


BATCH = 256


def _ascending_batches(keys: np.ndarray, first: int = 64):
    """Indices of distinct `keys` in ascending order, in arrays: the `first` smallest sorted alone (the
    place is nearly always among them), then the rest, BATCH at a time (a crowded image tries thousands)."""
    if len(keys) <= first:
        yield np.argsort(keys)
        return
    nearest = np.argpartition(keys, first)[:first]
    yield nearest[np.argsort(keys[nearest])]
    rest = np.ones(len(keys), dtype=bool)
    rest[nearest] = False
    others = np.nonzero(rest)[0]
    others = others[np.argsort(keys[others])]
    for start in range(0, len(others), BATCH):
        yield others[start : start + BATCH]


def _leaders_clear(x0s: np.ndarray, y0s: np.ndarray, size: tuple[int, int], dot: tuple[int, int],
                   crossed: np.ndarray) -> np.ndarray:
    """`_leader_clear` of each box of this size at (x0s, y0s) with its leader to `dot`, all at once: the
    same pixels of each leader, computed by the same arithmetic (a leader shorter than the longest repeats
    its last pixel)."""
    w, h = size
    starts = (np.minimum(np.maximum(dot[0], x0s), x0s + w), np.minimum(np.maximum(dot[1], y0s), y0s + h))
    steps = np.maximum(1, 2 * np.maximum(np.abs(dot[0] - starts[0]), np.abs(dot[1] - starts[1])))[:, None]
    t = np.minimum(np.arange(int(steps.max()) + 1), steps) / steps
    cols = np.rint(starts[0][:, None] + t * (dot[0] - starts[0])[:, None]).astype(int)
    rows = np.rint(starts[1][:, None] + t * (dot[1] - starts[1])[:, None]).astype(int)
    return ~crossed[rows, cols].any(axis=1)


def _leader_clear(place: LabelPlace, crossed: np.ndarray) -> bool:
    start = _nearest_on_box(place.dot, place.box)
    return not crossed[_segment_pixels(start, place.dot)].any()


def _segment_pixels(a: tuple[float, float], b: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the pixels a one-pixel line from a to b passes through."""
    steps = max(1, math.ceil(2 * max(abs(b[0] - a[0]), abs(b[1] - a[1]))))
    t = np.arange(steps + 1) / steps
    cols = np.rint(a[0] + t * (b[0] - a[0])).astype(int)
    rows = np.rint(a[1] + t * (b[1] - a[1])).astype(int)
    return rows, cols


def _mark(mask: np.ndarray, rect: tuple, margin: int) -> None:
    x0, y0, x1, y1 = rect
    mask[max(0, y0 - margin) : y1 + margin + 1, max(0, x0 - margin) : x1 + margin + 1] = True


def _mark_segment(mask: np.ndarray, a: tuple, b: tuple) -> None:
    """A leader and one pixel either side of it."""
    rows, cols = _segment_pixels(a, b)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            mask[np.clip(rows + dr, 0, mask.shape[0] - 1), np.clip(cols + dc, 0, mask.shape[1] - 1)] = True


def _nearest_on_box(point: tuple[int, int], rect: tuple) -> tuple[int, int]:
    return (min(max(point[0], rect[0]), rect[2]), min(max(point[1], rect[1]), rect[3]))


@cache  # asked for every label at every size tried, and for every image's font
def _ink(text: str, px: int) -> tuple[int, int, int, int]:
    """The box of the text's pixels drawn unantialiased (style.drawing) from (0, 0), bold: it goes
    LABEL_PAD inside the label's box."""
    left, top, right, bottom = font(px).getbbox(text, mode="1")
    return left, top, right + BOLD, bottom


def _draw(draw: ImageDraw.ImageDraw, text: str, place: LabelPlace, px: int) -> None:
    x0, y0, x1, y1 = place.box
    if place.dot is not None:
        draw.line([_nearest_on_box(place.dot, place.box), place.dot], fill=colour("label_border"), width=LEADER_PX)
        dx, dy = place.dot
        draw.ellipse([dx - DOT_RADIUS, dy - DOT_RADIUS, dx + DOT_RADIUS, dy + DOT_RADIUS], fill=colour("label_text"))
    draw.rectangle([x0, y0, x1, y1], fill=colour("label_box"), outline=colour("label_border"))
    left, _, _, _ = _ink(text, px)
    _, top, _, _ = _ink(LINE, px)  # the text sits on the line's baseline, LABEL_PAD below the box's top
    for dx in range(BOLD + 1):
        draw.text((x0 + LABEL_PAD - left + dx, y0 + LABEL_PAD - top), text, fill=colour("label_text"), font=font(px))
