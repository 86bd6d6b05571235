"""The hooks the RoomSpace vision task YAMLs name with `!function` (lmms-eval loads this file by its
path, the module next to the YAML).

The rows come from `datasets.load_dataset(dataset_path, name=dataset_name)`, as lmms-eval loads
every task's data: a vision configuration's rows are images, each with its questions in `items`,
which `process_docs` turns into a doc per question (`questions`, pipeline.dataset.layout's
reading). The question type is kept, and an answer scored, by the same hooks the
lm-evaluation-harness tasks use (pipeline.evaluate.harness.lm_eval_tasks.utils), so an answer is
judged exactly as `roomspace score` judges it: the first generation, 1.0 right, 0.0 wrong or
unparseable.
"""

from __future__ import annotations

import io

from pipeline.dataset.layout import table_questions
from pipeline.evaluate.harness.lm_eval_tasks import utils as text_tasks
from pipeline.evaluate.harness.lm_eval_tasks.utils import process_results

__all__ = ["doc_to_text", "doc_to_visual", "fr_items", "process_results", "yn_items"]
FILE_ROWS_AT_ONCE = 8  # images exploded together into their questions


def questions(dataset):
    """A vision configuration's rows (an image each, its questions in `items`) as a doc per
    question, with its image ({"bytes", "path"}; None for a question asked without it)."""
    return dataset.with_format("arrow").map(table_questions, batched=True, batch_size=FILE_ROWS_AT_ONCE,
                                             remove_columns=dataset.column_names).with_format(None)


def yn_items(dataset):
    """`process_docs` of the YN tasks: the YN questions, a doc each."""
    return text_tasks.yn_items(questions(dataset))


def fr_items(dataset):
    """`process_docs` of the FR tasks: the FR questions, a doc each."""
    return text_tasks.fr_items(questions(dataset))


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
