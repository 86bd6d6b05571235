"""The dataset card as the Hub reads it: its YAML header parsed by huggingface_hub, on small real builds."""

from collections import Counter
from pathlib import Path

import datasets
import pytest
from conftest import SCENE_SEED
from huggingface_hub import DatasetCard

from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.card import config_size, size_category, task_categories
from pipeline.evaluate.rows import open_rows
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.configs import parse_configs

BASE = "n3_m2_d81"


def built_card(scenes: Path, out: Path, vision: bool) -> tuple[Path, DatasetCard]:
    plan = BuildPlan.asked("roomspace-card", SCENE_SEED, 2, parse_configs(BASE),
                           {"vision": parse_configs(BASE)} if vision else {})
    build(plan, scenes, out, workers=1, progress=False)
    return out, DatasetCard.load(out / "README.md")


@pytest.fixture(scope="module")
def with_vision(scenes, tmp_path_factory) -> tuple[Path, DatasetCard]:
    return built_card(scenes, tmp_path_factory.mktemp("card") / "roomspace-card", vision=True)


@pytest.fixture(scope="module")
def text_only(scenes, tmp_path_factory) -> tuple[Path, DatasetCard]:
    return built_card(scenes, tmp_path_factory.mktemp("card-text") / "roomspace-card", vision=False)


def infos(card: DatasetCard) -> dict[str, dict]:
    info = card.data.dataset_info
    return {entry["config_name"]: entry for entry in (info if isinstance(info, list) else [info])}


def parquet_bytes(out: Path, config: str) -> int:
    return sum(path.stat().st_size for path in (out / "data" / config).glob("*.parquet"))


def test_the_header_says_what_hub_search_reads(with_vision):
    _, card = with_vision
    data = card.data
    assert data.pretty_name == "roomspace-card"
    assert data.license == "apache-2.0" and data.language == ["en"]
    assert data.annotations_creators == ["machine-generated"]
    assert data.language_creators == ["machine-generated"]
    assert data.source_datasets == ["original"]  # the build's houses come from ProcTHOR's generator
    assert data.task_categories == ["question-answering", "visual-question-answering"]


def test_the_size_category_is_the_bucket_of_all_rows(with_vision, tmp_path):
    out, card = with_vision
    rows = sum(split["num_examples"] for entry in infos(card).values() for split in entry["splits"])
    assert rows == sum(datasets.load_dataset(str(out), c, split="test", cache_dir=str(tmp_path)).num_rows
                      for c in infos(card))
    assert card.data.size_categories == [size_category(rows)]


def test_each_configuration_declares_its_real_sizes(with_vision):
    out, card = with_vision
    declared = infos(card)
    assert sorted(declared) == sorted([BASE, f"vision_{BASE}"])
    for config, entry in declared.items():
        (split,) = entry["splits"]
        assert entry["download_size"] == parquet_bytes(out, config) > 0
        assert entry["dataset_size"] == split["num_bytes"] > 0
    # Images make the vision configuration the larger one, in Arrow as on disk.
    assert declared[f"vision_{BASE}"]["dataset_size"] > declared[BASE]["dataset_size"]


def test_the_declared_sizes_are_those_datasets_reports(with_vision, tmp_path):
    out, card = with_vision
    for config, entry in infos(card).items():
        loaded = datasets.load_dataset(str(out), config, split="test", cache_dir=str(tmp_path))
        assert loaded.info.splits["test"].num_bytes == entry["dataset_size"]
        assert loaded.info.download_size == entry["download_size"]


def test_a_build_without_vision_asks_no_visual_questions(text_only):
    out, card = text_only
    assert card.data.task_categories == ["question-answering"]
    entry = infos(card)[BASE]
    assert entry["download_size"] == parquet_bytes(out, BASE)
    assert entry["dataset_size"] == config_size(sorted((out / "data" / BASE).glob("*.parquet"))).arrow


def test_the_card_links_the_semantics_the_sources_and_both_citations(with_vision):
    _, card = with_vision
    text = card.text
    assert "docs/semantics.md" in text
    assert "https://github.com/Fangjun-Li/RoomSpace" in text
    assert "https://huggingface.co/datasets/Fangjun/RoomSpace" in text
    assert "@inproceedings{li2024reframing" in text and "@inproceedings{procthor" in text
    assert "## Compared with the published RoomSpace" in text and "## Sources and licences" in text


@pytest.mark.parametrize(("rows", "bucket"), [
    (0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (9_999, "1K<n<10K"), (10_000, "10K<n<100K"),
    (340_000, "100K<n<1M"), (10 ** 6, "1M<n<10M"), (10 ** 12 - 1, "100B<n<1T"), (10 ** 12, "n>1T"),
])
def test_size_buckets(rows, bucket):
    assert size_category(rows) == bucket


def test_task_categories_follow_the_build():
    assert task_categories(["n5_m4_d144", "twin_n5_m4_d144"]) == ["question-answering"]
    assert task_categories(["n5_m4_d144", "vision_n5_m4_d144"])[-1] == "visual-question-answering"


def test_the_vision_statistics_count_pair_questions_per_view_and_answer(with_vision):
    out, card = with_vision
    rows = open_rows(out)
    pairs = [r for r in rows.rows([f"vision_{BASE}"], ["view", "question_type", "answer", "modality", "room_id",
                                                          "true_relation"]) if r["modality"] == "image"]
    assert pairs
    rooms = len({r["room_id"] for r in pairs})
    images = len({r["image_id"] for r in rows.rows([f"vision_{BASE}"], ["image_id"])})
    assert f"questions, about {images} images (each stored once)" in card.text
    assert f"pair questions (each asked as image, text, image+text): rooms with any: {rooms} of 2;" in card.text
    for view, image in (("top_down", "top_down"), ("north_facing", "south_door")):
        asked = Counter((r["question_type"], r["answer"]) for r in pairs if r["view"] == view)
        fr = sum(n for (kind, _), n in asked.items() if kind == "FR")
        answers = Counter(r["true_relation"] for r in pairs if r["view"] == view and r["question_type"] == "FR")
        shown = ", ".join(f"{code}: {answers[code]}" for code in DIRECTIONS if code in answers)
        assert (f"- pair questions, {image} image: {fr} FR, {asked['YN', 'Yes'] + asked['YN', 'No']} YN "
                f"({asked['YN', 'Yes']} Yes, {asked['YN', 'No']} No); FR answers: {shown}") in card.text
