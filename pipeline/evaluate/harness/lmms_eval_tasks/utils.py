"""The hooks the RoomSpace vision task YAMLs name with `!function` (lmms-eval loads this file by its
path, the module next to the YAML).

The rows come from `datasets.load_dataset(dataset_path, name=dataset_name)`, as lmms-eval loads
every task's data: a question per row with its image (pipeline.dataset.layout; the card reads a
configuration's rows out of the files it shares with other vision configurations). The question type is
kept, and an answer scored, by the same hooks the lm-evaluation-harness tasks use (pipeline.evaluate.harness.lm_eval_tasks.utils), so an answer is
judged exactly as `roomspace score` judges it: the first generation, 1.0 right, 0.0 wrong or
unparseable.
"""

from __future__ import annotations

import io

import pyarrow.compute as pc

from pipeline.dataset.layout import IMAGE, IMAGELESS
from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.lm_eval_tasks import utils as text_tasks
from pipeline.evaluate.harness.lm_eval_tasks.utils import process_results

__all__ = ["doc_to_text", "doc_to_visual", "fr_items", "plan_items", "process_results", "yn_items"]


def questions(dataset):
    """A configuration's questions, each with the image it is sent with ({"bytes", "path"}; None for a
    question asked without it). A question sent with an image that has none is refused: rows built
    before every vision configuration carried its own images left some to another configuration."""
    table = dataset.select_columns([IMAGE, "modality"]).with_format("arrow")[:]
    missing = pc.and_(pc.is_null(table[IMAGE]), pc.not_equal(table["modality"], IMAGELESS))
    if pc.any(missing).as_py():
        raise RoomspaceError("a question sent with an image has none: these rows come from an older build, whose "
                             "vision_agent rows left the plan's and door view's images to the vision configuration; "
                             "rebuild them")
    return dataset


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
