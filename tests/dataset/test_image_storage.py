"""Configurations with images, as a build stores them: a question per row that `datasets` loads as it
is, each with its image, every configuration on its own, and no PNG stored twice in the build
(pipeline.dataset.layout): the vision kinds of a base and of its balanced counterpart share their files."""

from __future__ import annotations

import hashlib
import io
import shutil
from collections import defaultdict
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED, linked_scenes
from PIL import Image

from pipeline.dataset import build as build_module
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.layout import CONFIGURATIONS, questions
from pipeline.dataset.manifest import data_folder, read_manifest, shard_files
from pipeline.dataset.rows import features_of_config
from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

BASE = Config(5, 4, 12)
BASES = [BASE, BASE.as_balanced()]
# vision and vision_agent, the paper's and balanced: their plan and door images are the same PNGs
IMAGE_CONFIGS = [kind.config_name(base) for kind in KINDS.values() if kind.shared_images for base in BASES]
FLAT = ("id", "room_id", "image_id", "image", "question", "options", "answer", "question_type", "modality")


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("images")
    out, linked = folder / "images", folder / "scenes"
    linked.mkdir()
    plan = BuildPlan.asked(out.name, SCENE_SEED, 3, BASES, {"vision": BASES, "agent": BASES}, shard_rooms=2)
    with pytest.MonkeyPatch.context() as patch:  # a row group per room: read back across row groups
        patch.setattr(build_module, "SHARED_GROUP_ROOMS", 1)
        build(plan, linked_scenes(scenes, linked), out, workers=1, progress=False)
    return out


def stored_pngs(path: Path) -> dict[str, int]:
    """{sha256: size} of the PNGs a file stores."""
    table = pq.read_table(path, columns=["image"])
    return {hashlib.sha256(image["bytes"]).hexdigest(): len(image["bytes"])
            for image in table["image"].to_pylist() if image is not None}


def test_no_png_is_stored_twice_in_a_build(built):
    where = defaultdict(list)
    for path in sorted((built / "data").rglob("*.parquet")):
        pngs = stored_pngs(path) if "image" in pq.read_schema(path).names else {}
        for digest in pngs:
            where[digest].append(path)
        if pngs:  # within a file, once: the image column's pages hold each PNG once and an index per question
            metadata = pq.ParquetFile(path).metadata
            groups = [metadata.row_group(k) for k in range(metadata.num_row_groups)]
            stored = sum(next(group.column(k) for k in range(group.num_columns)
                              if group.column(k).path_in_schema == "image.bytes").total_uncompressed_size
                         for group in groups)
            assert stored < sum(pngs.values()) + 8 * metadata.num_rows + 500 * len(groups), path
    assert where and all(len(paths) == 1 for paths in where.values())
    # the four configurations share one folder, each file holding all four's rows, a row group per few rooms
    assert {data_folder(config) for config in IMAGE_CONFIGS} == {f"data/images-{BASE.name}"}
    for path in shard_files(built, read_manifest(built), IMAGE_CONFIGS[0]):
        file = pq.ParquetFile(path)
        for group in range(file.num_row_groups):
            held = file.read_row_group(group, columns=["config", "room_index"]).to_pylist()
            assert list(dict.fromkeys(row["config"] for row in held)) == IMAGE_CONFIGS  # in turn, in card order
            assert len({row["room_index"] for row in held}) == 1  # SHARED_GROUP_ROOMS rooms: here 1
    # and the paper's and the balanced configurations, vision and vision_agent, show the same PNGs
    shown = defaultdict(set)
    for config in IMAGE_CONFIGS:
        for row in open_rows(built).rows([config], ["image"]):
            if row["image"] is not None:
                shown[config].add(hashlib.sha256(row["image"]["bytes"]).hexdigest())
    for vision, agents in zip(IMAGE_CONFIGS[:2], IMAGE_CONFIGS[2:]):
        assert shown[vision] & shown[agents]
    assert shown[IMAGE_CONFIGS[0]] & shown[IMAGE_CONFIGS[1]]


def hub_copy(built: Path, folder: Path, config: str | None = None) -> Path:
    """What a Hub repository of the build holds (the card and data/, no manifest); with `config`, only
    the card and that configuration's files, as a snapshot downloaded in part."""
    folder.mkdir()
    shutil.copy(built / "README.md", folder / "README.md")
    for path in sorted((built / "data").rglob("*.parquet")):
        if config is None or path.parent.name == Path(data_folder(config)).name:
            (folder / path.relative_to(built)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, folder / path.relative_to(built))
    return folder


@pytest.mark.parametrize("config", IMAGE_CONFIGS)
def test_each_configuration_loads_alone_a_question_per_row_with_its_image(built, config, tmp_path):
    read = {row["id"]: row for row in open_rows(built).rows([config], ["id", "image", "image_id", "modality"])}
    for where in (built, hub_copy(built, tmp_path / "hub")):
        loaded = datasets.load_dataset(str(where), config, split="test", cache_dir=str(tmp_path / "cache"))
        assert loaded.features == features_of_config(config) and set(FLAT) <= set(loaded.column_names)
        assert len(loaded) == len(read) and {row["id"] for row in loaded} == set(read)
        for row in loaded:
            stored = read[row["id"]]
            assert row["image_id"] == stored["image_id"] and f"-{config}-" in row["image_id"]
            if row["modality"] == "text":  # sent without its image: it has none
                assert row["image"] is None and stored["image"] is None
                continue
            assert isinstance(row["image"], Image.Image)  # every other question carries its own image
            expected = Image.open(io.BytesIO(stored["image"]["bytes"]))
            assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(expected.convert("RGB")))


@pytest.mark.parametrize("config", IMAGE_CONFIGS[2:])
def test_a_vision_agent_snapshot_alone_reads_with_its_images(built, config, tmp_path):
    alone = open_rows(hub_copy(built, tmp_path / "alone", config))
    rows = list(alone.rows([config], ["id", "image", "modality", "image_name"]))
    assert rows == list(open_rows(built).rows([config], ["id", "image", "modality", "image_name"]))
    assert {row["image_name"] for row in rows} >= {"top_down", "south_door", "first_person"}
    assert all((row["image"] is None) == (row["modality"] == "text") for row in rows)


def test_a_shared_file_is_read_one_configuration_at_a_time(built):
    (path, *_) = shard_files(built, read_manifest(built), IMAGE_CONFIGS[0])
    assert CONFIGURATIONS in pq.read_schema(path).metadata
    total = 0
    for config in IMAGE_CONFIGS:
        (table,) = questions(pq.ParquetFile(path), config=config)
        assert set(table["config"].to_pylist()) == {config}
        assert table.column_names == list(features_of_config(config))  # its own columns, no other kind's
        total += table.num_rows
    assert total == pq.ParquetFile(path).metadata.num_rows
    with pytest.raises(RoomspaceError, match="rows of several configurations: name one"):
        next(questions(pq.ParquetFile(path)))
