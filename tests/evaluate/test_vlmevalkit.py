"""The VLMEvalKit datasets (pipeline/evaluate/harness/vlmevalkit.py): a TSV per configuration with images,
read as VLMEvalKit reads it, and its scoring equal to `roomspace score` on the same answers.

VLMEvalKit itself is not installed here (torch: `make test-vlm-harness` runs the dataset class inside it,
bench/vlm_harness.py); the TSVs are read with pandas as its `load` reads a .tsv, images resolved as
ImageBaseDataset resolves them (an image of 64 characters or fewer is another question's index), and the
prediction table scored as the class's `evaluate` scores it."""

import base64
import json
import math
from pathlib import Path

import pytest
from every_kind import every_kind, read_by
from loopback import right_wrong_or_unparseable

from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.vlmevalkit import COLUMNS, DATASETS, config_of, dataset_name, score_records, write_tsvs
from pipeline.evaluate.harness.lm_eval_tasks.utils import METRICS
from pipeline.evaluate.harness.tasks import PACKAGED_CONFIGS, QUESTION_TYPES
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.rows import open_rows
from pipeline.text.kinds import kind_of

pd = pytest.importorskip("pandas")
SYSTEM = "rule"


@pytest.fixture(scope="module")
def built(scenes, request) -> Path:
    return every_kind(scenes, request)


@pytest.fixture(scope="module")
def tables(built, tmp_path_factory) -> dict:
    """{configuration: its TSV as VLMEvalKit loads it} for every configuration VLMEvalKit reads."""
    folder = tmp_path_factory.mktemp("LMUData")
    paths = write_tsvs(built, folder)
    configs = read_by(built, "vlmevalkit")  # every kind with images, paper and balanced
    assert [path.name for path in paths] == [f"{dataset_name(config)}.tsv" for config in configs]
    return {config: pd.read_csv(path, sep="\t") for config, path in zip(configs, paths)}


def test_the_packaged_configurations_with_images_are_named_datasets():
    assert set(DATASETS) == {f"RoomSpace_{c}" for c in PACKAGED_CONFIGS if kind_of(c).images} and DATASETS
    for name in DATASETS:
        assert dataset_name(config_of(name)) == name
    for wrong in ("RoomSpace_n5_m4_d144", "vision_n5_m4_d144", "RoomSpace_vision_n9"):
        with pytest.raises(RoomspaceError):
            config_of(wrong)


def test_each_question_carries_its_prompt_and_its_image_once(built, tables):
    rows = open_rows(built)
    for config, table in tables.items():
        expected = list(rows.rows([config], ["id", "prompt", "image", "image_id", "answer", "question_type", "modality"]))
        assert list(table.columns) == list(COLUMNS)
        assert list(table["index"]) == list(range(len(expected))) and list(table["id"]) == [r["id"] for r in expected]
        assert list(table["question"]) == [r["prompt"] for r in expected]
        images = {str(k): image for k, image in zip(table["index"], table["image"])}
        carried = 0
        for row, image in zip(expected, table["image"]):
            if row["image"] is None:  # asked without its image
                assert row["modality"] == "text" and isinstance(image, float) and math.isnan(image)
                continue
            if len(image) <= 64:  # another question's index: that question carries the PNG
                image = images[image]
                assert len(image) > 64
            else:
                carried += 1
            assert base64.b64decode(image) == row["image"]["bytes"]
        assert carried == len({r["image_id"] for r in expected if r["image"] is not None})  # each PNG once
    assert all(len(table) for table in tables.values())
    assert any(table["image"].isna().any() for table in tables.values())  # questions asked without the image


def test_the_scores_are_roomspace_scores_for_the_same_answers(built, tables, tmp_path):
    rows = open_rows(built)
    for config, table in tables.items():
        if not set(kind_of(config).questions) <= set(METRICS):  # a question type no harness scores yet
            with pytest.raises(RoomspaceError, match="no harness scores"):
                score_records(table.assign(prediction="Answer: none").to_dict("records"))
            continue
        full = {row["id"]: row for row in rows.rows([config], ["id", "prompt", "question_type", "answer", "answer_set",
                                                               "candidate", "options"])}
        records = table.drop(columns="image").to_dict("records")  # the prediction file holds no images
        for record in records:
            record["prediction"] = right_wrong_or_unparseable(full[record["id"]])
        records[0]["prediction"] = float("nan")  # an empty answer, as VLMEvalKit's table reads it back
        predictions = tmp_path / config / f"{SYSTEM}.jsonl"
        predictions.parent.mkdir()
        predictions.write_text("".join(json.dumps({"id": r["id"], "prediction": "" if isinstance(r["prediction"], float)
                                                   else r["prediction"]}) + "\n" for r in records), encoding="utf-8")
        scores = score_records(records)
        (group,) = evaluate(str(built), config, [predictions], []).groups
        project = group.overall.systems[SYSTEM]
        assert project.unparseable > 0
        for question_type in kind_of(config).questions:
            (_, (metric, *_), items) = QUESTION_TYPES[question_type]
            assert scores[f"{question_type} items"] == getattr(project, items) > 0
            assert scores[metric] == pytest.approx(getattr(project, metric).value, abs=1e-12)
            assert 0 < scores[metric] < 1 or getattr(project, items) < 3  # a mixture, where there are enough
