"""The hooks the RoomSpace vision task YAMLs name with `!function` (lmms-eval loads this file by its
path, the module next to the YAML).

The rows come from `datasets.load_dataset(dataset_path, name=dataset_name)`, as lmms-eval loads
every task's data: a question per row with its image (pipeline.dataset.layout). A question whose
image another configuration of the same rows holds (a vision_agent question on the plan or the
door view: the vision configuration stores those images) gets it from there (`questions`), read
from the rows that `dataset_path` names in the settings file beside this one. The question type is
kept, and an answer scored, by the same hooks the lm-evaluation-harness tasks use (pipeline.evaluate.harness.lm_eval_tasks.utils), so an answer is
judged exactly as `roomspace score` judges it: the first generation, 1.0 right, 0.0 wrong or
unparseable.
"""

from __future__ import annotations

import io

import re
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.dataset.layout import IMAGE, IMAGE_ID, IMAGELESS, held_images, with_held_images
from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.lm_eval_tasks import utils as text_tasks
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.harness.lm_eval_tasks.utils import process_results

__all__ = ["doc_to_text", "doc_to_visual", "fr_items", "plan_items", "process_results", "yn_items"]
SETTINGS = Path(__file__).with_name("_roomspace_vision_common.yaml")  # names the rows: its dataset_path
ROWS_AT_ONCE = 64  # questions given their held images together


def questions(dataset):
    """A configuration's questions, each with the image it is sent with ({"bytes", "path"}; None for a
    question asked without it): an image another configuration holds is read from there."""
    table = dataset.with_format("arrow")[:]
    missing = pc.and_(pc.is_null(table[IMAGE]), pc.not_equal(table["modality"], IMAGELESS))
    wanted = set(pc.filter(table[IMAGE_ID], missing).to_pylist())
    if not wanted:
        return dataset
    held = held_elsewhere(table["config"][0].as_py(), wanted)
    return dataset.with_format("arrow").map(lambda batch: with_held_images(batch, held), batched=True,
                                             batch_size=ROWS_AT_ONCE).with_format(None)


def held_elsewhere(config: str, wanted: set[str]) -> dict[str, dict]:
    """{image id: image} of the `wanted` images that other configurations of the rows hold."""
    found = re.search(r"^dataset_path: *(\S+)", SETTINGS.read_text(encoding="utf-8"), re.MULTILINE)
    rows = open_rows(found.group(1) if found else "")
    held: dict[str, dict] = {}
    for other in rows.image_holders(config):
        for path in rows.files[other]:
            held.update(held_images(pq.ParquetFile(path), wanted))
    if not wanted <= set(held):
        raise RoomspaceError(f"{config}: images {sorted(wanted - set(held))[:3]} are held by no configuration of "
                             f"{rows.location}")
    return held


def yn_items(dataset):
    """`process_docs` of the YN tasks: the YN questions, a doc each."""
    return questions(text_tasks.yn_items(dataset))


def fr_items(dataset):
    """`process_docs` of the FR tasks: the FR questions, a doc each."""
    return questions(text_tasks.fr_items(dataset))


def plan_items(dataset):
    """`process_docs` of the plan tasks: the object tasks, a doc each (a text row without its picture)."""
    return questions(text_tasks.plan_items(dataset))


def doc_to_visual(doc: dict) -> list:
    """The row's image as a one-element list of RGB PIL images; none for a text row (a pair
    question asked with the centres in words only).

    `datasets` decodes the card's Image column to a PIL image; a row read straight from Parquet
    has it as {"bytes", "path"}: both are accepted."""
    from PIL import Image

    image = doc["image"]
    if image is None:
        return []
    if isinstance(image, dict):
        image = Image.open(io.BytesIO(image["bytes"]))
    return [image.convert("RGB")]


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """The row's prompt, between the (by default empty) pre_prompt and post_prompt a model's kwargs may set."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"
