"""How a configuration's rows lie in its Parquet files, and how to read them a question per row.

Every configuration has a row per question, so that `datasets.load_dataset(folder, name)` gives
its questions as they are. A configuration with images (a kind with `images`, pipeline.text.kinds)
adds to each question the image it goes with: `image_id` (the image it is sent with or, asked as
"text", the image it is about) and `image`, that PNG, null where the question is sent without it
(modality "text"). A PNG is stored once however many questions carry it: the column is
dictionary-encoded, each distinct PNG once per file (IMAGE_DICTIONARY_BYTES); and where another
configuration of the same build holds the same PNG (the vision_agent rows on the plan and the door
view, whose images are the vision configuration's), the row leaves `image` null and its
`image_id` is that configuration's, in the shard of the same rooms. `questions` reads a shard a
question per row and, given the images other shards hold (`held_images`), fills those in.
Needs pyarrow only: the evaluator reads builds through it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

IMAGE = "image"
IMAGE_ID = "image_id"
IMAGELESS = "text"  # the modality of a question asked without its image
# Parquet falls back from dictionary to plain pages past its dictionary page limit (1 MiB by default):
# a shard's images, each stored once, take a few MB, so files with images are written with this one.
IMAGE_DICTIONARY_BYTES = 1 << 30
HELD_BATCH = 256  # rows read at a time when collecting a shard's images


def question_columns(schema: pa.Schema) -> list[str]:
    """The columns of a question row of a configuration with this file schema: all of them."""
    return list(schema.names)


def questions(shard: pq.ParquetFile, columns: Sequence[str] | None = None, file_rows: int | None = None,
              images: Mapping[str, dict] | None = None) -> Iterator[pa.Table]:
    """A shard's questions, a row each, `file_rows` at a time (all at once if None); only `columns`
    (all if None). With the image column, a question sent with an image another shard holds gets
    it from `images` ({image id: image}, `held_images` of those shards)."""
    names = shard.schema_arrow.names
    wanted = [c for c in names if columns is None or c in columns]
    filling = IMAGE in wanted and bool(images)
    read = list(dict.fromkeys(wanted + ([IMAGE_ID, "modality"] if filling else [])))
    if file_rows is None:
        parts = iter([shard.read(columns=read)])
    else:
        parts = (pa.Table.from_batches([batch]) for batch in shard.iter_batches(batch_size=file_rows, columns=read))
    for table in parts:
        yield (with_held_images(table, images) if filling else table).select(wanted)


def table_questions(table: pa.Table, columns: Sequence[str] | None = None) -> pa.Table:
    """`questions` of a table already read: its columns asked for."""
    return table.select([c for c in table.schema.names if columns is None or c in columns])


def held_images(shard: pq.ParquetFile, wanted: Collection[str] | None = None) -> dict[str, dict]:
    """{image id: image as {"bytes", "path"}} of the images a shard stores (none without images),
    those `wanted` only if given."""
    if IMAGE not in shard.schema_arrow.names:
        return {}
    held: dict[str, dict] = {}
    for batch in shard.iter_batches(batch_size=HELD_BATCH, columns=[IMAGE_ID, IMAGE]):
        ids, pngs = batch.column(IMAGE_ID), batch.column(IMAGE)
        for k in pc.indices_nonzero(pc.is_valid(pngs)).to_pylist():
            image_id = ids[k].as_py()
            if image_id not in held and (wanted is None or image_id in wanted):
                held[image_id] = pngs[k].as_py()
    return held


def with_held_images(table: pa.Table, images: Mapping[str, dict]) -> pa.Table:
    """The table with each missing image of a question sent with one (modality not "text") taken
    from `images` by its image id; an image held nowhere stays missing."""
    column = table[IMAGE].combine_chunks()
    wanted = pc.and_(pc.is_null(column), pc.not_equal(table["modality"], IMAGELESS)).to_pylist()
    if not any(wanted):
        return table
    values = column.to_pylist()
    for k, (want, image_id) in enumerate(zip(wanted, table[IMAGE_ID].to_pylist())):
        if want:
            values[k] = images.get(image_id)
    return table.set_column(table.schema.get_field_index(IMAGE), IMAGE, pa.array(values, type=column.type))
