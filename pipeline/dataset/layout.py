"""How a configuration's rows lie in its Parquet files, and how to read them a question per row.

Every configuration has a row per question, so that `datasets.load_dataset(folder, name)` gives
its questions as they are. A configuration with images (a kind with `images`, pipeline.text.kinds)
adds to each question the image it goes with: `image_id` (`<room_id>-<config>-<image_name>`: the
image it is sent with or, asked as "text", the image it is about) and `image`, that PNG, null
where the question is sent without it (modality "text").

A PNG is stored once however many questions carry it. Within a file the image column is
dictionary-encoded: each distinct PNG once per file (IMAGE_DICTIONARY_BYTES), an index per
question. Across configurations, those whose kinds show the same pictures (Kind.shared_images:
vision and vision_agent, the plan and door views; a balanced configuration, which tells the
paper's stories, the paper's pictures) share their files: a shard is one file whose row groups
each hold SHARED_GROUP_ROOMS rooms' rows of all those configurations, each configuration's in turn
(`shared_table`). A picture belongs to one room, so each PNG lies in one row group's dictionary,
and a reader decodes a few rooms' images at a time. The file's schema is the union of theirs, its
metadata says which columns each has (CONFIGURATIONS). A configuration's rows are those whose
`config` is its name, in its own columns (`questions`); `datasets` reads them so through the
card's `filters` and `columns` (pipeline.dataset.card). Every row carries its own image: none is
left to another configuration. Needs pyarrow only: the evaluator reads builds through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import RoomspaceError

IMAGE = "image"
IMAGE_ID = "image_id"
IMAGELESS = "text"  # the modality of a question asked without its image
# Parquet falls back from dictionary to plain pages past its dictionary page limit (1 MiB by default):
# a shard's images, each stored once, take a few MB, so files with images are written with this one.
IMAGE_DICTIONARY_BYTES = 1 << 30
CONFIGURATIONS = b"roomspace.configurations"  # a shared file's schema metadata: JSON {configuration: its columns}
CONFIG = "config"  # the column naming a row's configuration
SHARED_GROUP_ROOMS = 10  # rooms per row group of a shared file


def question_columns(schema: pa.Schema) -> list[str]:
    """The columns of a question row of a configuration with this file schema: all of them."""
    return list(schema.names)


def shared_table(tables: Mapping[str, pa.Table]) -> pa.Table:
    """A row group of a shared file: some rooms' rows of several configurations ({configuration: its
    rows}, in the build's order), each configuration's in turn, their columns united (null where a
    configuration has no such column), which columns each has in the schema's metadata (CONFIGURATIONS)."""
    table = pa.concat_tables(list(tables.values()), promote_options="default")
    columns = json.dumps({config: part.schema.names for config, part in tables.items()}).encode()
    return table.replace_schema_metadata({**(table.schema.metadata or {}), CONFIGURATIONS: columns})


def file_configs(schema: pa.Schema) -> dict[str, list[str]] | None:
    """{configuration: its columns} of a file shared by several configurations (`shared_table`), None
    for a file of one configuration's rows."""
    shared = (schema.metadata or {}).get(CONFIGURATIONS)
    return None if shared is None else json.loads(shared)


def config_columns(schema: pa.Schema, config: str | None, where: str = "a file") -> tuple[list[str], bool]:
    """(the columns of `config`'s rows in a file of this schema, whether its rows must be picked out of
    others'). A shared file needs `config`: one it does not hold is a RoomspaceError."""
    shared = file_configs(schema)
    if shared is None:
        return list(schema.names), False
    if config not in shared:
        held = ", ".join(shared)
        asked = f"no rows of {config}" if config else "the rows of several configurations: name one"
        raise RoomspaceError(f"{where} holds {asked} (it holds {held}); rebuild or re-download it")
    return shared[config], True


def questions(shard: pq.ParquetFile, columns: Sequence[str] | None = None, file_rows: int | None = None,
              config: str | None = None, where: str = "a file") -> Iterator[pa.Table]:
    """A shard's questions of `config` (needed for a shared file), a row each, `file_rows` at a time (all
    at once if None); only `columns` (all of the configuration's if None)."""
    names, shared = config_columns(shard.schema_arrow, config, where)
    wanted = [c for c in names if columns is None or c in columns]
    if not shared:
        if file_rows is None:
            yield shard.read(columns=wanted)
        else:
            batches = shard.iter_batches(batch_size=file_rows, columns=wanted)
            yield from (pa.Table.from_batches([batch]) for batch in batches)
        return
    read = wanted + ([CONFIG] if CONFIG not in wanted else [])
    groups = (_own(shard.read_row_group(group, columns=read), config, wanted) for group in range(shard.num_row_groups))
    if file_rows is None:  # all at once: its rows picked out a row group at a time
        yield pa.concat_tables(list(groups), promote_options="none") if shard.num_row_groups else _own(
            shard.schema_arrow.empty_table().select(read), config, wanted)
    else:
        for table in groups:
            yield from (pa.Table.from_batches([batch]) for batch in table.to_batches(max_chunksize=file_rows))


def table_questions(table: pa.Table, columns: Sequence[str] | None = None, config: str | None = None) -> pa.Table:
    """`questions` of a table already read (a whole file's: `config`'s rows picked out of a shared one):
    its columns asked for."""
    names, shared = config_columns(table.schema, config)
    wanted = [c for c in names if columns is None or c in columns]
    return _own(table, config, wanted) if shared else table.select(wanted)


def _own(table: pa.Table, config: str, columns: Sequence[str]) -> pa.Table:
    """A shared file's rows of `config` in `columns`, as a table of that configuration alone."""
    own = table.filter(pc.equal(table[CONFIG], config)).select(columns)
    return own.replace_schema_metadata({k: v for k, v in (own.schema.metadata or {}).items() if k != CONFIGURATIONS})
