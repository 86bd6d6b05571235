"""Rows: items as dataset rows, their one declared schema, Parquet shards and the dataset card.

The row schema is declared once, as the fields of `pipeline.items.Item`; the Hugging Face
`Features`, the Arrow schema of every shard and schemas/row.schema.json are all derived from it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, List, Value

from pipeline.errors import RoomspaceError
from pipeline.files import write_atomic
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
ROW_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "roomspace.row",
    "title": "RoomSpace dataset row",
    "description": "Derived from pipeline.items.Item; regenerate with `roomspace schema`.",
    **json_schema_of(Item),
}


class _Mismatch(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path, self.message = path, message


def _within(part: str, mismatch: _Mismatch) -> _Mismatch:
    return _Mismatch(f"{part}/{mismatch.path}" if mismatch.path else part, mismatch.message)


def _scalar_types(annotation: object) -> frozenset[type] | None:
    """The Python types a scalar field accepts (a float also takes an int), or None if not scalar."""
    kind, nullable = _unwrap(annotation)
    if kind not in SCALARS:
        return None
    return frozenset({kind} | ({int} if kind is float else set()) | ({type(None)} if nullable else set()))


def _type_error(annotation: object, value: object) -> _Mismatch:
    kind, _ = _unwrap(annotation)
    return _Mismatch("", f"expected {kind.__name__}, got {type(value).__name__} {value!r}")


def row_converter(annotation: object):
    """value -> its plain row value, checking every type against the declaration on the way.

    This is how the row schema is enforced on every row before it is written: a row is made from
    an `Item` only through this function, so a field of the wrong type cannot reach a shard.
    Scalars are checked where they sit (a set lookup, not a call): rows hold hundreds of them.
    """
    kind, nullable = _unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        parts = [(f.name, hints[f.name], _scalar_types(hints[f.name]), row_converter(hints[f.name]))
                 for f in dataclasses.fields(kind)]

        def convert(value):
            if not isinstance(value, kind):
                raise _Mismatch("", f"expected {kind.__name__}, got {type(value).__name__}")
            out = {}
            for name, declared, scalar_types, part in parts:
                field_value = getattr(value, name)
                if scalar_types is not None:
                    if type(field_value) not in scalar_types:
                        raise _within(name, _type_error(declared, field_value))
                    out[name] = field_value
                    continue
                try:
                    out[name] = part(field_value)
                except _Mismatch as mismatch:
                    raise _within(name, mismatch) from None
            return out

    elif typing.get_origin(kind) is tuple:
        declared = typing.get_args(kind)[0]
        scalar_types, part = _scalar_types(declared), row_converter(declared)

        def convert(value):
            if not isinstance(value, tuple):
                raise _Mismatch("", f"expected a tuple, got {type(value).__name__}")
            if scalar_types is not None and all(type(element) in scalar_types for element in value):
                return list(value)
            out = []
            for index, element in enumerate(value):
                try:
                    out.append(part(element))
                except _Mismatch as mismatch:
                    raise _within(str(index), mismatch) from None
            return out

    else:
        scalar_types = _scalar_types(annotation)

        def convert(value):
            if type(value) not in scalar_types:
                raise _type_error(annotation, value)
            return value

        return convert

    if not nullable:
        return convert
    return lambda value: None if value is None else convert(value)


_item_to_row = row_converter(Item)


def to_row(item: Item) -> dict:
    """The dataset row of an item, its types checked against the declared schema."""
    try:
        return _item_to_row(item)
    except _Mismatch as mismatch:
        raise RoomspaceError(f"row {getattr(item, 'id', '?')}: {mismatch.path or '(row)'}: {mismatch.message}") from None


def check_row(row: dict) -> None:
    """The invariants every row keeps; a RoomspaceError names the row and the fault.

    Types are checked where rows are made (`to_row`) and where they are read back (a shard's
    Arrow schema is the declared one), so this checks what types cannot say.
    """
    answer_set = row["answer_set"]
    # The scene that answers a row is its witness: the rasterised one for a story, the continuous
    # one (what a render shows) for an image-only row.
    witness = "continuous_relation" if row.get("modality") == "image" else "true_relation"
    if not answer_set or row[witness] not in answer_set:
        raise RoomspaceError(f"row {row['id']}: the witness relation {row[witness]} ({witness}) "
                             f"is not in the answer set {answer_set}")
    if row["answer_set_size"] != len(answer_set):
        raise RoomspaceError(f"row {row['id']}: answer_set_size disagrees with answer_set")
    if row["question_type"] == "YN":
        yes, no = row["options"]
        if row["answer"] != (yes if row["candidate"] in answer_set else no):
            raise RoomspaceError(f"row {row['id']}: YN answer disagrees with the answer set")


def features_of_config(config: str) -> Features:
    """A configuration's features: the row's, or for vision_<base> the vision row's."""
    from pipeline.vision import VISION_FEATURES, VISION_PREFIX

    return VISION_FEATURES if config.startswith(VISION_PREFIX) else FEATURES


@lru_cache(maxsize=None)  # asked for every room by the build's workers; building it takes about 1 ms
def arrow_schema(config: str) -> pa.Schema:
    return features_of_config(config).arrow_schema


def write_parquet(table: pa.Table, path: Path) -> str:
    """Write a table of validated rows as one Parquet file; returns its sha256."""
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
