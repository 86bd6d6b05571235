"""How a configuration's rows lie in its Parquet files, and how to read them a question per row.

A base or twin configuration has a row per question. A vision configuration has a row per image
(pipeline.dataset.rows.VisionImage): the image once, and in its `items` column every question
asked with it, or about it without it (modality "text"), so that a loaded vision configuration
grows with its images, not its questions. `questions` reads either as a table of one question per
row, a vision question with its image (null for a "text" question), reading only the columns
asked for. Needs pyarrow only: the evaluator reads builds through it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

QUESTIONS = "items"  # a vision row's column of questions
IMAGE = "image"
IMAGELESS = "text"  # the modality of a question asked without its image


def question_columns(schema: pa.Schema) -> list[str]:
    """The columns of a question row of a configuration with this file schema."""
    if QUESTIONS not in schema.names:
        return list(schema.names)
    return [field.name for field in schema.field(QUESTIONS).type.value_type] + [IMAGE]


def questions(shard: pq.ParquetFile, columns: Sequence[str] | None = None,
              file_rows: int | None = None) -> Iterator[pa.Table]:
    """A shard's questions, a row each, as tables of `file_rows` file rows at a time (all at once if
    None: a vision row's image is repeated for each of its questions, so read images in small
    batches); only `columns` (those a question row has), all if None."""
    schema = shard.schema_arrow
    wanted = [c for c in question_columns(schema) if columns is None or c in columns]
    nested = QUESTIONS in schema.names
    if nested:
        leaves = [shard.schema.column(k).path for k in range(len(shard.schema))]
        prefix = next(path for path in leaves if path.startswith(f"{QUESTIONS}.")).rsplit(".", 1)[0]
        fields = [c for c in wanted if c != IMAGE]
        needed = list(dict.fromkeys(fields + (["modality"] if IMAGE in wanted else []) + ["id"]))
        read = [f"{prefix}.{name}" for name in needed] + ([IMAGE] if IMAGE in wanted else [])
    else:
        read = wanted
    if file_rows is None:
        parts = [shard.read(columns=read)]
    else:
        parts = (pa.Table.from_batches([batch]) for batch in shard.iter_batches(batch_size=file_rows, columns=read))
    for table in parts:
        yield _flattened(table, wanted) if nested else table


def table_questions(table: pa.Table, columns: Sequence[str] | None = None) -> pa.Table:
    """`questions` of a table already read (a whole vision shard, or base rows as they are)."""
    wanted = [c for c in question_columns(table.schema) if columns is None or c in columns]
    if QUESTIONS not in table.schema.names:
        return table.select(wanted)
    return _flattened(table, wanted)


def _flattened(table: pa.Table, wanted: list[str]) -> pa.Table:
    nested = table.column(QUESTIONS).combine_chunks()
    flat = pa.Table.from_struct_array(nested.flatten())
    if IMAGE in wanted:
        image = table.column(IMAGE).combine_chunks().take(pc.list_parent_indices(nested))
        sent = pc.not_equal(flat.column("modality"), IMAGELESS)
        flat = flat.append_column(IMAGE, pc.if_else(sent, image, pa.nulls(len(image), image.type)))
    return flat.select(wanted)
