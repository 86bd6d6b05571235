"""Vision rows: image+story rows keep the checker's answers, image rows answer what the image shows."""

from __future__ import annotations

import dataclasses
import io
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Dataset
from handmade import room, thing
from PIL import Image

from pipeline.dataset.rows import VISION_FEATURES
from pipeline.dataset.vision import vision_rows
from pipeline.errors import RoomspaceError
from pipeline.render.job import offline_images
from pipeline.render.png import image_labels
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.configs import Config
from pipeline.text.items import room_items

CONFIG = Config(5, 4, 12)
# Five types, each once, centres well apart on both axes, all low enough to be seen from the door.
LAYOUT = [("Bed", 1.0, 4.3), ("Sofa", 4.4, 4.0), ("Desk", 2.6, 2.7), ("Dresser", 0.9, 1.2), ("Toilet", 4.2, 1.4)]


def layout_room(layout=LAYOUT):
    return room(*(thing(k, kind, x, z, 0.7, 0.6, height=0.5) for k, (kind, x, z) in enumerate(layout)))


@pytest.fixture(scope="module")
def made():
    scene, house = layout_room()
    items = room_items(scene, CONFIG)
    images = offline_images(scene, house)
    return scene, items, images, vision_rows(scene, items, images)


def test_every_item_gets_an_image_and_keeps_its_answers(made):
    _, items, images, rows = made
    story_rows = [r for r in rows if r["modality"] == "image+story"]
    assert len(story_rows) == len(items)
    for item, row in zip(items, story_rows):
        assert row["config"] == "vision_n5_m4_d144"
        assert (row["story"], row["answer"], row["answer_set"]) == (item.story, item.answer, list(item.answer_set))
        expected = "top_down" if item.view == "top_down" else "south_door"
        assert row["image_name"] == expected and row["image"]["bytes"] == images[expected]
    assert len({r["id"] for r in rows}) == len(rows)


def test_image_rows_are_answered_by_the_continuous_relation(made):
    _, items, _, rows = made
    image_rows = [r for r in rows if r["modality"] == "image"]
    assert Counter((r["view"], r["question_type"]) for r in image_rows) == Counter(
        {("top_down", "FR"): 1, ("top_down", "YN"): 1, ("north_facing", "FR"): 1, ("north_facing", "YN"): 1})
    truth = items[0].continuous_relation
    for row in image_rows:
        assert row["answer_set"] == [truth] and row["facts"] == [] and row["setting"] == "none"
        assert row["story"] and row["query"] == dataclasses.asdict(items[0].query)
        if row["question_type"] == "YN":
            assert row["candidate"] in DIRECTIONS
            assert row["answer"] == ("Yes" if row["candidate"] == truth else "No")


def test_rows_round_trip_through_parquet_and_datasets(made, tmp_path):
    *_, rows = made
    path = tmp_path / "vision.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=VISION_FEATURES.arrow_schema), path)
    loaded = Dataset.from_parquet(str(path), cache_dir=str(tmp_path / "cache"))
    assert loaded.features == VISION_FEATURES
    assert len(loaded) == len(rows)
    for k in (0, len(rows) - 1):
        image = loaded[k]["image"]  # decoded by datasets.Image()
        assert isinstance(image, Image.Image)
        original = Image.open(io.BytesIO(rows[k]["image"]["bytes"]))
        assert image.size == original.size
        assert np.array_equal(np.asarray(image.convert("RGB")), np.asarray(original.convert("RGB")))
    assert loaded[0]["id"] == rows[0]["id"] and loaded[0]["objects"] == rows[0]["objects"]


def test_no_image_question_when_the_image_cannot_answer_it():
    # A repeated type: "the chair" would not say which one.
    scene, house = room(*(thing(k, "Chair", x, z, 0.5, 0.5, height=0.5) for k, (_, x, z) in enumerate(LAYOUT)))
    rows = vision_rows(scene, room_items(scene, CONFIG), offline_images(scene, house))
    assert rows and {r["modality"] for r in rows} == {"image+story"}

    # Centres 5 cm apart on an axis: the relation is not something an image can show.
    scene, house = layout_room()
    items = room_items(scene, CONFIG)
    first, last = items[0].objects[0], items[0].objects[-1]
    moved = [(kind, x, z) for kind, x, z in LAYOUT]
    index = next(k for k, (kind, _, _) in enumerate(LAYOUT) if kind == last.type)
    moved[index] = (last.type, first.x + 0.05, last.z)
    scene, house = layout_room(moved)
    items = room_items(scene, CONFIG)
    assert items[0].objects[-1].type == last.type
    rows = vision_rows(scene, items, offline_images(scene, house))
    assert {r["modality"] for r in rows} == {"image+story"}


def test_images_without_labels_give_story_rows_only(made):
    scene, items, images, _ = made
    bare = {}
    for name, png in images.items():  # as AI2-THOR's images: pixels, no record of what is labelled
        buffer = io.BytesIO()
        Image.open(io.BytesIO(png)).save(buffer, "PNG")
        bare[name] = buffer.getvalue()
        assert image_labels(bare[name]) is None
    assert {r["modality"] for r in vision_rows(scene, items, bare)} == {"image+story"}


def test_bad_input(made):
    scene, items, images, _ = made
    with pytest.raises(RoomspaceError, match="no south_door image"):
        vision_rows(scene, items, {"top_down": images["top_down"]})
    with pytest.raises(RoomspaceError, match="not an image"):
        vision_rows(scene, items, {"top_down": b"junk", "south_door": images["south_door"]})
    assert vision_rows(scene, (), images) == []
