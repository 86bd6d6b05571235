"""The object tasks' close view of a piece of furniture (pipeline.render.stack, docs/semantics.md section 21):
the same bytes every time, labels that name the view's things, an inset for each closed thing that
holds something, what lies in or on a small object drawn in or on it, and the image rows of the kind
showing every thing their plan names."""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
import pytest
from conftest import SCENE_COUNT, SCENE_SEED
from pictures import held_problems, label_problems
from PIL import Image

from pipeline.dataset.build import RoomWork
from pipeline.render.door import CrowdedPicture
from pipeline.render.png import image_labels, label_places
from pipeline.render.stack import enclosed, stack_png
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.small_objects import place_small_objects
from pipeline.text.configs import Config
from pipeline.text.object_tasks import picture_captions, picture_labels, views


@pytest.fixture(scope="module")
def pictures(scenes):
    """(scene, house, view, the view's small objects, PNG) of every view of the shared rooms whose labels
    fit (a CrowdedPicture has no image rows: tiny things side by side leave no room for leaders)."""
    out, crowded = [], 0
    for k in range(SCENE_COUNT):
        path = scene_path(scenes, SCENE_SEED, k)
        scene, house = load_scene(path), load_house(path)
        small = place_small_objects(scene, house)
        for view in views(scene, small):
            held = set(view.ids.values())
            mine = [o for o in small if o.id in held]
            try:
                png = stack_png(scene, house, view.furniture, mine, picture_labels(view), picture_captions(view),
                                view.image_name)
            except CrowdedPicture:
                crowded += 1
                continue
            out.append((scene, house, view, mine, png))
    assert crowded <= len(out) // 5
    return out


def test_same_bytes_every_time(pictures):
    scene, house, view, mine, png = pictures[0]
    assert stack_png(scene, house, view.furniture, mine, picture_labels(view), picture_captions(view),
                     view.image_name) == png


def test_labels_name_the_things_and_lie_on_the_image(pictures):
    labelled = total = 0
    for _, _, view, _, png in pictures:
        names = picture_labels(view)
        found = image_labels(png)
        assert set(found.items()) <= set(names.items())
        image = Image.open(io.BytesIO(png))
        assert image.size == (800, 600)
        for place in label_places(png).values():
            x0, y0, x1, y1 = place.box
            assert 0 <= x0 < x1 < image.width and 0 <= y0 < y1 < image.height
        assert label_problems(png, view.image_name) == []  # no overlapping labels, no crossing leaders
        labelled += len(found)
        total += len(names)
    assert labelled >= 0.9 * total


def test_closed_things_get_an_inset_with_what_they_hold(pictures):
    insets = 0
    for _, _, view, mine, png in pictures:
        hidden = enclosed(view.furniture, mine)
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        if hidden:
            insets += 1
            assert set(hidden) <= set(image_labels(png))  # every object in an inset is labelled
            # the insets' frames: a row of border pixels across the lower part of the image
            border = np.all(pixels == (0x55, 0x55, 0x55), axis=2)
            assert border[pixels.shape[0] // 2:].sum(axis=1).max() > pixels.shape[1] // 3
    assert insets


def test_what_lies_in_or_on_a_small_object_is_drawn_in_or_on_it(pictures):
    """The drawn boxes (tests/pictures.py's held_problems): a thing in a bowl, pot or box lies inside its
    holder's box, a thing on a carrier on its top, its centre over it. The placer lets loads overhang
    their carrier, so drawn where placed some would lie beside it (counted: the test would fail)."""
    counts: Counter = Counter()
    for _, house, view, mine, _ in pictures:
        problems, found = held_problems(house, view, mine)
        assert problems == []
        counts += found
    assert counts["in"] and counts["on"] and counts["overhanging"], counts


def test_image_rows_show_every_thing_their_plan_names(scenes):
    rows = []
    for k in range(4):
        path = scene_path(scenes, SCENE_SEED, k)
        rows += RoomWork(load_scene(path), path).rows("object_tasks", Config.parse("n5_m4_d144"))
    images = [row for row in rows if row.modality == "image"]
    assert images and len(images) >= len(rows) // 2 - 1
    for row in images:
        view = next(v for v in views(load_scene(scene_path(scenes, SCENE_SEED, row.room_index)),
                                     place_small_objects(load_scene(scene_path(scenes, SCENE_SEED, row.room_index)),
                                                         load_house(scene_path(scenes, SCENE_SEED, row.room_index))))
                    if v.image_name == row.image_name)
        assert {view.ids[step.object] for step in row.plan} <= set(image_labels(row.image))
