"""The z-buffer and the coverage count against drawing the triangles one by one, in order, keeping a
pixel only for a nearer surface (the renderer's reading before the small triangles were drawn
together): the same surface at every pixel, ties to the earlier triangle, the same pixels per group."""

from __future__ import annotations

import math

import numpy as np

from pipeline.render.door import SMALL_TRIANGLE, Camera, covered, zbuffer

CAMERA = Camera((2.0, 1.5, -3.0), math.radians(20), 300.0, (160.0, 120.0), 320, 240)


def one_by_one(triangles: np.ndarray, owners: np.ndarray, camera: Camera) -> np.ndarray:
    screen, depth = camera.project(triangles)
    screen, inverse = screen.astype(np.float32), (1.0 / depth).astype(np.float32)
    nearest = np.zeros((camera.height, camera.width), dtype=np.float32)
    surface = np.full((camera.height, camera.width), -1, dtype=np.int32)
    for (a, b, c), (ia, ib, ic), owner in zip(screen, inverse, owners):
        area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        if abs(area) < 1e-9:
            continue
        col0, col1 = max(0, math.ceil(min(a[0], b[0], c[0]))), min(camera.width - 1, math.floor(max(a[0], b[0], c[0])))
        row0, row1 = max(0, math.ceil(min(a[1], b[1], c[1]))), min(camera.height - 1, math.floor(max(a[1], b[1], c[1])))
        if col0 > col1 or row0 > row1:
            continue
        xs = np.arange(col0, col1 + 1, dtype=np.float32)[None, :]
        ys = np.arange(row0, row1 + 1, dtype=np.float32)[:, None]
        wa = ((b[0] - xs) * (c[1] - ys) - (b[1] - ys) * (c[0] - xs)) / area
        wb = ((c[0] - xs) * (a[1] - ys) - (c[1] - ys) * (a[0] - xs)) / area
        wc = 1.0 - wa - wb
        near = wa * ia + wb * ib + wc * ic
        window = nearest[row0 : row1 + 1, col0 : col1 + 1]
        wins = (wa >= 0) & (wb >= 0) & (wc >= 0) & (near > window)
        window[wins] = near[wins]
        surface[row0 : row1 + 1, col0 : col1 + 1][wins] = owner
    return surface


def triangles() -> tuple[np.ndarray, np.ndarray]:
    """Large and small triangles, some in front of others, some partly off the picture, and copies of
    earlier ones (exactly as near everywhere: the earlier must keep the pixel) in between."""
    rng = np.random.default_rng(7)
    made = []
    while len(made) < 300:
        size = 3.0 if len(made) % 10 == 0 else 0.15  # every tenth large
        triangle = rng.uniform([-0.5, 0.0, 0.0], [4.5, 2.5, 4.0]) + rng.uniform(-size, size, (3, 3))
        if CAMERA.to_camera(triangle)[:, 2].min() > 0.5:  # in front of the camera, as the renderer clips them
            made.append(triangle)
    made += [made[k] for k in range(0, 300, 7)]  # copies: ties, after the triangles they copy
    made += [np.array([[-1.0, 0.0, 0.0], [5.0, 0.0, 0.0], [5.0, 0.0, 5.0]])]  # a floor under everything
    return np.asarray(made), np.arange(len(made)) % 40  # owners: surfaces shared by several triangles


def test_the_z_buffer_is_the_one_by_one_drawing():
    drawn, owners = triangles()
    screen, _ = CAMERA.project(drawn)
    boxes = (np.ptp(screen[..., 0], axis=1) + 1) * (np.ptp(screen[..., 1], axis=1) + 1)
    assert (boxes <= SMALL_TRIANGLE).sum() > 100 and (boxes > SMALL_TRIANGLE).sum() > 20  # both ways drawn
    expected = one_by_one(drawn, owners, CAMERA)
    assert (expected >= 0).mean() > 0.5
    assert np.array_equal(zbuffer(drawn, owners, CAMERA), expected)
    # ties: a copy drawn after its triangle never shows where the triangle does
    order = np.arange(len(drawn))
    first_wins = one_by_one(drawn, order, CAMERA)
    assert np.array_equal(zbuffer(drawn, order, CAMERA), first_wins)
    assert not np.isin(first_wins, np.arange(300, 300 + len(range(0, 300, 7)))).any()


def test_covered_counts_each_group_drawn_alone():
    drawn, _ = triangles()
    groups = np.arange(len(drawn)) % 9 - 1  # -1: no group
    counts = covered(drawn, groups, 8, CAMERA)
    for group in range(8):
        mine = groups == group
        assert counts[group] == np.count_nonzero(one_by_one(drawn[mine], np.zeros(mine.sum(), dtype=int), CAMERA) >= 0)


def test_a_small_and_a_large_triangle_exactly_as_near_go_to_the_earlier():
    # a plane facing the camera a power-of-two distance away: 1/depth 0.25 at every corner, so small
    # triangles on it are exactly as near as the large one at many pixels, and order decides there
    camera = Camera((2.0, 1.0, -1.0), 0.0, 300.0, (160.0, 120.0), 320, 240)
    large = np.array([[-3.0, -2.0, 3.0], [7.0, -2.0, 3.0], [2.0, 5.0, 3.0]])
    rng = np.random.default_rng(3)
    corners = rng.uniform([1.0, 0.5, 3.0], [3.0, 1.5, 3.0], (40, 3))
    small = [corner + rng.uniform(-0.08, 0.08, (3, 3)) * [1, 1, 0] for corner in corners]
    shown = {}
    for name, drawn in (("large first", np.array([large, *small])), ("small first", np.array([*small, large]))):
        order = np.arange(len(drawn))
        assert np.array_equal(zbuffer(drawn, order, camera), one_by_one(drawn, order, camera))
        shown[name] = one_by_one(drawn, order, camera) == order[0 if name == "large first" else -1]
    assert (shown["large first"] != shown["small first"]).sum() > 50  # ties: the order alone decides there
