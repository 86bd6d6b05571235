"""Dataset rows: the row records, their one derived schema, and typed conversion to rows.

A row is declared once, as the fields of `pipeline.text.items.Item` (and `VisionItem`, an Item
with its image); the Hugging Face `Features`, the Arrow schema of every shard and
schemas/row.schema.json are all derived from those declarations.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from datasets import Image as ImageFeature
from datasets import List, Value

from pipeline.errors import RoomspaceError
from pipeline.files import file_sha256, write_atomic
from pipeline.text.items import Item
from pipeline.typed_json import json_schema_of, unwrap

SCALARS = {str: "string", int: "int64", float: "float64", bool: "bool"}
VISION_PREFIX = "vision_"


@dataclass(frozen=True)
class VisionItem(Item):
    """One vision row: an Item, with the image it is asked about."""

    modality: str  # "image" (answered from the image) or "image+story" (answered from the story)
    image_name: str  # "top_down" or "south_door": OUT/<room_id>/<image_name>.png
    image: bytes  # the PNG


def feature_of(annotation: object):
    kind, _ = unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return {f.name: feature_of(hints[f.name]) for f in dataclasses.fields(kind)}
    if typing.get_origin(kind) is tuple:
        return List(feature_of(typing.get_args(kind)[0]))
    return Value(SCALARS[kind])


def _vision_features() -> Features:
    hints = typing.get_type_hints(VisionItem)
    fields = {f.name: feature_of(hints[f.name]) for f in dataclasses.fields(VisionItem) if f.name != "image"}
    return Features({**fields, "image": ImageFeature()})


FEATURES = Features(feature_of(Item))
VISION_FEATURES = _vision_features()
ROW_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "roomspace.row",
    "title": "RoomSpace dataset row",
    "description": "Derived from pipeline.text.items.Item; regenerate with `roomspace schemas`.",
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
    kind, nullable = unwrap(annotation)
    if kind not in SCALARS:
        return None
    return frozenset({kind} | ({int} if kind is float else set()) | ({type(None)} if nullable else set()))


def _type_error(annotation: object, value: object) -> _Mismatch:
    kind, _ = unwrap(annotation)
    return _Mismatch("", f"expected {kind.__name__}, got {type(value).__name__} {value!r}")


def row_converter(annotation: object):
    """value -> its plain row value, checking every type against the declaration on the way.

    This is how the row schema is enforced on every row before it is written: a row is made from
    an `Item` only through this function, so a field of the wrong type cannot reach a shard.
    Scalars are checked where they sit (a set lookup, not a call): rows hold hundreds of them.
    """
    kind, nullable = unwrap(annotation)
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


def to_vision_row(item: VisionItem) -> dict:
    """The row dict for VISION_FEATURES: plain lists, the image as {"bytes", "path"}."""
    return {**to_row(item), "modality": item.modality, "image_name": item.image_name,
            "image": {"bytes": item.image, "path": f"{item.room_id}/{item.image_name}.png"}}


def features_of_config(config: str) -> Features:
    """A configuration's features: the row's, or for vision_<base> the vision row's."""
    return VISION_FEATURES if config.startswith(VISION_PREFIX) else FEATURES


@lru_cache(maxsize=None)  # asked for every room by the build's workers; building it takes about 1 ms
def arrow_schema(config: str) -> pa.Schema:
    return features_of_config(config).arrow_schema


def write_parquet(table: pa.Table, path: Path) -> str:
    """Write a table of validated rows as one Parquet file; returns its sha256."""
    write_atomic(path, lambda target: pq.write_table(table, target, compression="zstd"))
    return file_sha256(path)


def read_rows(paths: Iterable[Path]) -> list[dict]:
    return [row for path in paths for row in pq.read_table(path).to_pylist()]
