"""Configurations with images, as a build stores them: a question per row that `datasets` loads as it
is, each with its image, and no PNG stored twice in the build (pipeline.dataset.layout)."""

from __future__ import annotations

import hashlib
import io
from collections import defaultdict
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED, linked_scenes
from PIL import Image

from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.layout import held_images, questions
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

BASE = Config(5, 4, 12)
IMAGE_CONFIGS = [kind.config_name(BASE) for kind in KINDS.values() if kind.images]  # vision and vision_agent
FLAT = ("id", "room_id", "image_id", "image", "question", "options", "answer", "question_type", "modality")


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("images")
    out, linked = folder / "images", folder / "scenes"
    linked.mkdir()
    plan = BuildPlan.asked(out.name, SCENE_SEED, 3, [BASE], {"vision": [BASE], "agent": [BASE]}, shard_rooms=2)
    build(plan, linked_scenes(scenes, linked), out, workers=1, progress=False)
    return out


def stored_pngs(path: Path) -> dict[str, int]:
    """{sha256: size} of the PNGs a file stores."""
    table = pq.read_table(path, columns=["image"])
    return {hashlib.sha256(image["bytes"]).hexdigest(): len(image["bytes"])
            for image in table["image"].to_pylist() if image is not None}


def test_no_png_is_stored_twice_in_a_build(built):
    where = defaultdict(list)
    for config in IMAGE_CONFIGS:
        for path in sorted((built / "data" / config).glob("*.parquet")):
            pngs = stored_pngs(path)
            for digest in pngs:
                where[digest].append(path)
            # within a file, once: the image column's pages hold each PNG once and an index per question
            group = pq.ParquetFile(path).metadata.row_group(0)
            chunk = next(group.column(k) for k in range(group.num_columns)
                         if group.column(k).path_in_schema == "image.bytes")
            assert chunk.total_uncompressed_size < sum(pngs.values()) + 8 * group.num_rows + 500, path
    assert where and all(len(paths) == 1 for paths in where.values())
    assert len({path.parent.name for paths in where.values() for path in paths}) == 2  # both configurations store some


@pytest.mark.parametrize("config", IMAGE_CONFIGS)
def test_each_configuration_loads_a_question_per_row_with_its_image(built, config, tmp_path):
    loaded = datasets.load_dataset(str(built), config, split="test", cache_dir=str(tmp_path))
    rows = open_rows(built)
    assert len(loaded) == rows.count([config]) and set(FLAT) <= set(loaded.column_names)
    read = {row["id"]: row for row in rows.rows([config], ["id", "image", "image_id", "modality"])}
    for row in loaded:
        stored = read[row["id"]]
        if row["modality"] == "text":  # sent without its image: it has none
            assert row["image"] is None and stored["image"] is None
            continue
        # every other question has its image: in its own row, or (vision_agent on the plan or the door
        # view) in the vision configuration's rows, which `roomspace` readers fill in
        assert stored["image"] is not None
        if row["image"] is None:  # its PNG is another configuration's, named by its image id
            assert f"-{config}-" not in row["image_id"]
            continue
        assert isinstance(row["image"], Image.Image)
        expected = Image.open(io.BytesIO(stored["image"]["bytes"]))
        assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(expected.convert("RGB")))


def test_a_question_whose_image_is_held_elsewhere_gets_it_from_there(built):
    agents, vision = IMAGE_CONFIGS[1], IMAGE_CONFIGS[0]
    assert KINDS["vision_agent"].config_name(BASE) == agents
    rows = open_rows(built)
    assert rows.image_holders(agents) == [vision] and rows.image_holders(vision) == [agents]
    for own, theirs in zip(rows.files[agents], rows.files[vision]):
        held = held_images(pq.ParquetFile(theirs))
        (bare,) = questions(pq.ParquetFile(own), ["id", "image_id", "image", "modality"])
        missing = [row for row in bare.to_pylist() if row["image"] is None and row["modality"] != "text"]
        assert missing and {row["image_id"] for row in missing} <= set(held)
        (filled,) = questions(pq.ParquetFile(own), ["id", "image"], images=held)
        images = {row["id"]: row["image"] for row in filled.to_pylist()}
        assert all(images[row["id"]] == held[row["image_id"]] for row in missing)
