"""Rows: items as dataset rows, their one declared schema, Parquet shards and the dataset card.

The row schema is declared once, as the fields of `pipeline.items.Item`; the Hugging Face
`Features`, the Arrow schema of every shard and schemas/row.schema.json are all derived from it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import types
import typing
from collections.abc import Iterable
from pathlib import Path

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, List, Value

from pipeline.errors import RoomspaceError
from pipeline.items import Item

SPLIT = "test"  # a benchmark: every row is for evaluation
SCALARS = {str: "string", int: "int64", float: "float64", bool: "bool"}
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _unwrap(annotation: object) -> tuple[object, bool]:
    """(type, nullable) for `X | None`; (type, False) otherwise."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation}")
        return args[0], True
    return annotation, False


def feature_of(annotation: object):
    kind, _ = _unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return {f.name: feature_of(hints[f.name]) for f in dataclasses.fields(kind)}
    if typing.get_origin(kind) is tuple:
        return List(feature_of(typing.get_args(kind)[0]))
    return Value(SCALARS[kind])


def json_schema_of(annotation: object) -> dict:
    kind, nullable = _unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        names = [f.name for f in dataclasses.fields(kind)]
        schema: dict = {"type": "object", "properties": {n: json_schema_of(hints[n]) for n in names},
                        "required": names, "additionalProperties": False}
    elif typing.get_origin(kind) is tuple:
        schema = {"type": "array", "items": json_schema_of(typing.get_args(kind)[0])}
    else:
        schema = {"type": JSON_TYPES[kind]}
    if nullable:
        schema["type"] = [schema["type"], "null"]
    return schema


FEATURES = Features(feature_of(Item))
ARROW_SCHEMA = FEATURES.arrow_schema
ROW_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "roomspace.row",
    "title": "RoomSpace dataset row",
    "description": "Derived from pipeline.items.Item; regenerate with `roomspace schema`.",
    **json_schema_of(Item),
}
_row_validator = jsonschema.Draft202012Validator(ROW_SCHEMA)


def to_row(item: Item) -> dict:
    return _plain(dataclasses.asdict(item))


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def validate_row(row: dict) -> None:
    """The schema, then the invariants every row keeps; a RoomspaceError names the row and the fault."""
    error = next(_row_validator.iter_errors(row), None)
    if error is not None:
        path = "/".join(map(str, error.absolute_path)) or "(row)"
        raise RoomspaceError(f"row {row.get('id', '?')}: {path}: {error.message}")
    answer_set = row["answer_set"]
    if not answer_set or row["true_relation"] not in answer_set:
        raise RoomspaceError(f"row {row['id']}: the rasterised scene's relation {row['true_relation']} "
                             f"is not in the answer set {answer_set}")
    if row["answer_set_size"] != len(answer_set):
        raise RoomspaceError(f"row {row['id']}: answer_set_size disagrees with answer_set")
    if row["question_type"] == "YN":
        yes, no = row["options"]
        if row["answer"] != (yes if row["candidate"] in answer_set else no):
            raise RoomspaceError(f"row {row['id']}: YN answer disagrees with the answer set")


def write_atomic(path: Path, write) -> None:
    """Write through a temporary file in the same folder, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_parquet(rows: list[dict], path: Path) -> str:
    """Write validated rows as one Parquet file with the declared schema; returns its sha256."""
    table = pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)
    write_atomic(path, lambda target: pq.write_table(table, target, compression="zstd"))
    return file_sha256(path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_rows(paths: Iterable[Path]) -> list[dict]:
    return [row for path in paths for row in pq.read_table(path).to_pylist()]


def write_json(path: Path, value) -> None:
    text = json.dumps(value, indent=2, sort_keys=True) + "\n"
    write_atomic(path, lambda target: target.write_text(text, encoding="utf-8"))
