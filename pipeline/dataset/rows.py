"""Dataset rows: the schemas derived from the row records, and typed conversion to rows.

A row is declared once, as the fields of its kind's record (pipeline.text.kinds: `Item` for base
and twin rows, `AgentItem`, the image rows of pipeline.dataset.vision and vision_agent); the
Hugging Face `Features`, the Arrow schema of every shard and schemas/ are all derived from those
declarations.
"""

from __future__ import annotations

import dataclasses
import typing
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import accumulate, chain
from operator import attrgetter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from datasets import Image as ImageFeature
from datasets import List, Value

from pipeline.dataset.layout import IMAGE, IMAGE_DICTIONARY_BYTES
from pipeline.errors import RoomspaceError
from pipeline.files import file_sha256, write_atomic
from pipeline.text.items import Item
from pipeline.text.kinds import BASE, Kind, kind_of
from pipeline.spatial.facts import Fact, facts_held
from pipeline.spatial.plans import Thing, check_plan, gold_plan
from pipeline.text.prompts import MAP_QUESTION, PAIR_MODALITIES, PLAN_QUESTION
from pipeline.text.targets import read_map
from pipeline.typed_json import fields_of, json_schema_of, to_json, unwrap

T = typing.TypeVar("T")
SCALARS = {str: "string", int: "int64", float: "float64", bool: "bool"}


def feature_of(annotation: object):
    kind, _ = unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return {f.name: feature_of(hints[f.name]) for f in dataclasses.fields(kind)}
    if typing.get_origin(kind) is tuple:
        return List(feature_of(typing.get_args(kind)[0]))
    return Value(SCALARS[kind])


def row_features(record: type) -> Features:
    """The features of a row record; a `bytes` field (or `bytes | None`) is a PNG, `datasets.Image()`."""
    hints = typing.get_type_hints(record)
    return Features({f.name: ImageFeature() if is_image(hints[f.name]) else feature_of(hints[f.name])
                     for f in dataclasses.fields(record)})


def is_image(annotation: object) -> bool:
    """Whether a row record's field is an image: its PNG's bytes, or none (`bytes | None`)."""
    return unwrap(annotation)[0] is bytes


def kind_record(kind: Kind) -> type:
    return kind.maker().RECORD


FEATURES = row_features(Item)

# A `bytes` field of a row record as a row reads as JSON (`row_json`): what `datasets.Image()` stores.
IMAGE_SCHEMA = {
    "type": "object",
    "description": "The image, a PNG, as datasets.Image() stores it: `path` names it; `bytes` are the PNG's "
                   "bytes, which are not JSON: any value is allowed (a JSON export gives them as a base64 string).",
    "properties": {
        "bytes": {"description": "the PNG's bytes (not JSON; as a base64 string in a JSON export)",
                  "contentEncoding": "base64", "contentMediaType": "image/png"},
        "path": {"type": "string", "description": "<room_id>/<image_name>.png"},
    },
    "required": ["bytes", "path"],
    "additionalProperties": False,
}


def row_schema(kind: Kind) -> dict:
    """The JSON Schema of a row of this kind as a user reads it as JSON (`row_json`), derived from
    its record like the row's features: a `bytes` field is an image, IMAGE_SCHEMA."""
    record = kind_record(kind)
    fields = fields_of(record)
    images = [name for name, hint in fields if is_image(hint)]
    example = kind.config_name("n5_m4_d144")
    made_from = f" (made from the {' and '.join(kind.made_from)} kinds)" if kind.made_from else ""
    about = (f"A row of a `{kind.name}` configuration ({example} and the like): {kind.summary}{made_from}. "
             + ("A row is a question and the image it goes with (`image_id`). " if kind.images else "")
             + "".join(f"`{name}` is the PNG as an object {{bytes, path}}: its bytes are not JSON, so any value "
                       "is allowed there (a base64 string in a JSON export); null for a question sent without "
                       "it or whose image another configuration of the build holds. " for name in images)
             + f"Derived from {record.__module__}.{record.__qualname__}; regenerate with `roomspace schemas`.")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"roomspace.row.{kind.name}",
        "title": f"RoomSpace {kind.name} row",
        "description": about,
        "type": "object",
        "properties": {name: _image_schema(hint) if is_image(hint) else json_schema_of(hint)
                       for name, hint in fields},
        "required": [name for name, _ in fields],
        "additionalProperties": False,
    }


def _image_schema(annotation: object) -> dict:
    return {"anyOf": [IMAGE_SCHEMA, {"type": "null"}]} if unwrap(annotation)[1] else IMAGE_SCHEMA


ROW_SCHEMA = row_schema(BASE)  # base (and twin) rows'


class _Mismatch(Exception):
    """A value of the wrong type: `index` is its position in the values of its column."""

    def __init__(self, index: int, path: str, message: str) -> None:
        super().__init__(message)
        self.index, self.path, self.message = index, path, message

    def within(self, index: int, part: str) -> _Mismatch:
        return _Mismatch(index, f"{part}/{self.path}" if self.path else part, self.message)


def _scalar_types(annotation: object) -> frozenset[type]:
    """The Python types a scalar field accepts, exactly (a bool is no int): a float also takes an int."""
    kind, nullable = unwrap(annotation)
    return frozenset({kind} | ({int} if kind is float else set()) | ({type(None)} if nullable else set()))


def _type_error(annotation: object, value: object) -> str:
    kind, _ = unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        return f"expected {kind.__name__}, got {type(value).__name__}"
    if typing.get_origin(kind) is tuple:
        return f"expected a tuple, got {type(value).__name__}"
    return f"expected {kind.__name__}, got {type(value).__name__} {value!r}"


def _check_types(values: list, fits: Callable[[type], bool], annotation: object) -> None:
    """One test per distinct type of a whole column, not a call per value; a mismatch names the first culprit."""
    if all(map(fits, set(map(type, values)))):
        return
    index, value = next((k, v) for k, v in enumerate(values) if not fits(type(v)))
    raise _Mismatch(index, "", _type_error(annotation, value))


def column_builder(annotation: object, arrow_type: pa.DataType) -> Callable[[list], pa.Array]:
    """values -> their Arrow array of `arrow_type`, every type checked against the declaration first.

    This is how the row schema is enforced before anything is written: rows are made from `Item`s
    only through this function, a column at a time, so a field of the wrong type cannot reach a
    shard. Arrow's own conversion is laxer: it takes True for 1.0 and 1.0 for 1.
    Records become struct arrays of their fields' columns, tuples of records list arrays over the
    concatenated elements; tuples of plain values (strings, numbers, tuples of them), once their
    values are checked, Arrow converts whole (`column_check`).
    """
    kind, nullable = unwrap(annotation)
    if nullable and (dataclasses.is_dataclass(kind) or typing.get_origin(kind) is tuple):
        raise TypeError(f"unsupported nullable record or tuple {annotation}")
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        fields = [(f.name, column_builder(hints[f.name], arrow_type.field(f.name).type))
                  for f in dataclasses.fields(kind)]

        def build(values: list) -> pa.Array:
            _check_types(values, lambda t: issubclass(t, kind), annotation)
            children = []
            for name, part in fields:
                try:
                    children.append(part(list(map(attrgetter(name), values))))
                except _Mismatch as mismatch:
                    raise mismatch.within(mismatch.index, name) from None
            return pa.StructArray.from_arrays(children, fields=list(arrow_type))

    elif typing.get_origin(kind) is tuple and _holds_records(annotation):
        part = column_builder(typing.get_args(kind)[0], arrow_type.value_type)

        def lists(values: list) -> pa.Array:
            offsets, elements = _per_element(values, part)
            return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements, type=arrow_type)

        def build(values: list) -> pa.Array:
            _check_types(values, lambda t: issubclass(t, tuple), annotation)
            # Rows share tuples (a configuration's objects and topology, a setting's facts and path):
            # each distinct one is converted once and Arrow repeats it.
            ids = list(map(id, values))
            distinct = dict(zip(ids, values))  # id -> the tuple, in the order first met
            if len(distinct) == len(values):
                return lists(values)
            numbers = dict(zip(distinct, range(len(distinct))))
            try:
                converted = lists(list(distinct.values()))
            except _Mismatch as mismatch:
                first = ids.index(list(distinct)[mismatch.index])
                raise _Mismatch(first, mismatch.path, mismatch.message) from None
            return converted.take(pa.array(list(map(numbers.__getitem__, ids))))

    else:
        check = column_check(annotation)

        def build(values: list) -> pa.Array:
            check(values)
            return pa.array(values, type=arrow_type)

    return build


def column_check(annotation: object) -> Callable[[list], None]:
    """values -> None, or a _Mismatch naming the first that is not of this plain type: a scalar, or a
    tuple of plain values (none a record). Arrow then converts the column whole: a tuple column took a
    tenth of a millisecond a room as lists over its elements, a distinct tuple each, repeated by `take`."""
    kind, _ = unwrap(annotation)
    if typing.get_origin(kind) is tuple:
        part = column_check(typing.get_args(kind)[0])

        def check(values: list) -> None:
            _check_types(values, lambda t: issubclass(t, tuple), annotation)
            _per_element(values, part)

        return check
    fits = _scalar_types(annotation).__contains__
    return lambda values: _check_types(values, fits, annotation)


def _holds_records(annotation: object) -> bool:
    """Whether a tuple type holds records, at any depth."""
    kind, _ = unwrap(annotation)
    if typing.get_origin(kind) is tuple:
        return _holds_records(typing.get_args(kind)[0])
    return dataclasses.is_dataclass(kind)


def _per_element(values: list, part: Callable[[list], T]) -> tuple[list[int], T]:
    """(the offsets of tuples `values` in their elements, `part` of every element in order); a mismatch
    in an element is named by its tuple and its place there."""
    offsets = [0, *accumulate(map(len, values))]
    try:
        return offsets, part(list(chain.from_iterable(values)))
    except _Mismatch as mismatch:
        owner = bisect_right(offsets, mismatch.index) - 1
        raise mismatch.within(owner, str(mismatch.index - offsets[owner])) from None


ARROW_SCHEMA = FEATURES.arrow_schema  # the row schema of every text configuration (base and twin)
_ITEM_COLUMNS = column_builder(Item, pa.struct(list(ARROW_SCHEMA)))


def items_table(items: Sequence[Item]) -> pa.Table:
    """The rows of these items as one table of the row schema, their types checked as whole columns."""
    try:
        rows = _ITEM_COLUMNS(list(items))
    except _Mismatch as mismatch:
        row_id = getattr(items[mismatch.index], "id", "?")
        raise RoomspaceError(f"row {row_id}: {mismatch.path or '(row)'}: {mismatch.message}") from None
    return pa.Table.from_arrays(rows.flatten(), schema=ARROW_SCHEMA)


def to_row(item: Item) -> dict:
    """The dataset row of one item, its types checked against the declared schema."""
    return items_table([item]).to_pylist()[0]


# The fields of a question that `check_row` reads ("modality" only where the row has one), and
# those it reads of a map question (question type MAP) too.
CHECKED = ("id", "question_type", "options", "answer", "answer_set", "answer_set_size", "candidate",
           "true_relation", "continuous_relation", "modality")
MAP_CHECKED = ("facts", "d")
PLAN_CHECKED = ("plan", "things", "target")  # and those of a plan question (question type PLAN)


def check_row(row: Mapping) -> None:
    """The invariants every question keeps; a RoomspaceError names the row and the fault.

    Types are checked where rows are made (`items_table`) and where they are read back (a shard's
    Arrow schema is the declared one), so this checks what types cannot say. A row is a question as
    its file holds it: plain values, as `table.to_pylist()` reads it (all its fields, or those CHECKED),
    whether the build checks the rows it has just made or `validate` the rows it reads back. A map
    question's witness map must keep every stated fact (`check_witness_map`); a plan question's gold
    plan is derived again from its view and run step by step (`check_gold_plan`).
    """
    answer_set = row["answer_set"]
    # The scene that answers a row is its witness: the rasterised one for a story, the continuous
    # one (what a render shows) for a pair question, in any modality.
    witness = "continuous_relation" if row.get("modality") in PAIR_MODALITIES else "true_relation"
    if not answer_set or row[witness] not in answer_set:
        raise RoomspaceError(f"row {row['id']}: the witness relation {row[witness]} ({witness}) "
                             f"is not in the answer set {answer_set}")
    if row["answer_set_size"] != len(answer_set):
        raise RoomspaceError(f"row {row['id']}: answer_set_size disagrees with answer_set")
    if row["question_type"] == "YN":
        yes, no = row["options"]
        if row["answer"] != (yes if row["candidate"] in answer_set else no):
            raise RoomspaceError(f"row {row['id']}: YN answer disagrees with the answer set")
    if row["question_type"] == MAP_QUESTION:
        check_witness_map(row)
    if row["question_type"] == PLAN_QUESTION:
        check_gold_plan(row)


def check_gold_plan(row: Mapping) -> None:
    """A plan question's gold plan is the one its view gives (pipeline.spatial.plans.gold_plan, derived
    again from the row's `things`), passes the independent runner (`check_plan`: every step possible
    once the steps it needs are done, none superfluous, the target last), and is what its answer and
    answer set say, step by step."""
    things = [Thing(**thing) for thing in row["things"]]
    steps = tuple((s["action"], s["object"], s["source"], tuple(s["needs"])) for s in row["plan"])
    if gold_plan(things, row["target"]) != steps:
        raise RoomspaceError(f"row {row['id']}: its plan is not the gold plan of its view, derived again")
    problem = check_plan(things, row["target"], steps)
    if problem:
        raise RoomspaceError(f"row {row['id']}: its plan does not run: {problem}")
    if list(row["answer_set"]) != [s["content"] for s in row["plan"]]:
        raise RoomspaceError(f"row {row['id']}: its answer set is not its plan's steps")
    if {s["object"] for s in row["plan"]} - set(row["options"]):
        raise RoomspaceError(f"row {row['id']}: its plan names a thing its options do not")


def check_witness_map(row: Mapping) -> None:
    """A map question's answer, its witness map, reads back as a map of its options, and every fact
    its story states holds there (each fact's relation derived again from the drawn cells)."""
    cells, problem = read_map(row["answer"].splitlines(), len(row["options"]), row["d"])
    if cells is None:
        raise RoomspaceError(f"row {row['id']}: its answer is no map of its {len(row['options'])} objects ({problem})")
    facts = [Fact(**fact) for fact in row["facts"]]
    try:
        held = facts_held(facts, dict(zip(row["options"], cells)), row["d"])
    except RoomspaceError as error:
        raise RoomspaceError(f"row {row['id']}: {error}") from None
    for fact, kept in zip(facts, held):
        if not kept:
            stated = " ".join(part for part in (fact.subject, fact.relation, fact.object) if part is not None)
            raise RoomspaceError(f"row {row['id']}: the stated fact ({stated}) does not hold on its witness map")


def row_json(record: object) -> dict:
    """A row record's dict as Arrow takes it: plain lists, a PNG as {"bytes", "path"} (`datasets.Image()`)."""
    row = to_json(record)
    for name, value in row.items():
        if type(value) is bytes:
            row[name] = {"bytes": value, "path": f"{row['room_id']}/{row['image_name']}.png"}
    return row


def features_of_config(config: str) -> Features:
    """A configuration's features: its kind's row record's."""
    return row_features(kind_record(kind_of(config)))


def records_table(records: Sequence, config: str) -> pa.Table:
    """The rows of a configuration whose record is not `Item` (agent rows, image rows), converted by
    Arrow against the declared schema."""
    try:
        return pa.Table.from_pylist([row_json(record) for record in records], schema=arrow_schema(config))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise RoomspaceError(f"{config}: a row does not fit the declared schema ({error})") from None


def plain_row(record: object) -> dict:
    """One row record as a build's file reads it back (Arrow's `to_pylist` of its table: every field,
    records as dicts, tuples as lists, a float field a float, a PNG as {bytes, path}), made without
    Arrow: a tenth of the time of a one-row table (the training environment converts rows one by one)."""
    row = _plain_maker(type(record))(record)
    for name in _image_fields(type(record)):
        if row[name] is not None:
            row[name] = {"bytes": row[name], "path": f"{row['room_id']}/{row['image_name']}.png"}
    return row


@lru_cache(maxsize=None)
def _image_fields(record: type) -> tuple[str, ...]:
    return tuple(name for name, hint in fields_of(record) if is_image(hint))


@lru_cache(maxsize=None)
def _plain_maker(annotation: object) -> Callable[[object], object]:
    """value -> its plain form, as Arrow gives back a value of the declared type (`plain_row`). A record's
    fields are read in order, then those not plain as they are made so in place (the dict keeps the order);
    a tuple of plain values is listed at once."""
    kind, _ = unwrap(annotation)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        names = tuple(f.name for f in dataclasses.fields(kind))
        made = tuple((name, part) for name in names if (part := _plain_maker(hints[name])) is not _as_is)

        def record(value):
            if value is None:
                return None
            row = {name: getattr(value, name) for name in names}
            for name, part in made:
                row[name] = part(row[name])
            return row
        return record
    if typing.get_origin(kind) is tuple:
        part = _plain_maker(typing.get_args(kind)[0])
        if part is _as_is:
            return lambda value: None if value is None else list(value)
        return lambda value: None if value is None else [part(element) for element in value]
    if kind is float:  # Arrow's float64 column holds an int given it as a float
        return lambda value: None if value is None else float(value)
    return _as_is


def _as_is(value: object) -> object:
    """A value Arrow gives back as it is given (a str, int, bool or None)."""
    return value


@lru_cache(maxsize=None)  # asked for every room by the build's workers; building it takes about 1 ms
def arrow_schema(config: str) -> pa.Schema:
    return features_of_config(config).arrow_schema


def write_parquet(table: pa.Table, path: Path) -> str:
    """Write a table of validated rows as one Parquet file; returns its sha256. A table with images
    keeps each PNG once in its file: in the image column's dictionary (pipeline.dataset.layout), and
    nowhere else (no min and max statistics, which would hold two PNGs more)."""
    write_atomic(path, lambda target: pq.write_table(table, target, compression="zstd", **_options(table.schema)))
    return file_sha256(path)


def write_row_groups(groups: Iterable[pa.Table], path: Path) -> tuple[str, int]:
    """Write tables of one schema as the row groups of one Parquet file, a row group each (empty ones
    left out), written as `write_parquet` writes: a file the vision kinds share, a row group per few
    rooms (pipeline.dataset.layout). Returns its sha256 and rows."""
    rows = 0

    def write(target) -> None:
        nonlocal rows
        writer = None
        for table in groups:
            if writer is None:
                writer = pq.ParquetWriter(target, table.schema, compression="zstd", **_options(table.schema))
            if table.num_rows:
                writer.write_table(table)
                rows += table.num_rows
        writer.close()

    write_atomic(path, write)
    return file_sha256(path), rows


def _options(schema: pa.Schema) -> dict:
    """The Parquet writer's options beyond zstd: for a table with images, each PNG once in its dictionary."""
    if IMAGE not in schema.names:
        return {}
    return {"dictionary_pagesize_limit": IMAGE_DICTIONARY_BYTES,
            "write_statistics": [c for c in _column_paths(schema) if c != f"{IMAGE}.bytes"]}


def _column_paths(schema: pa.Schema) -> list[str]:
    """The Parquet column paths of a schema's leaves ("image.bytes", "answer_set.list.element")."""
    buffer = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), buffer)
    columns = pq.ParquetFile(pa.BufferReader(buffer.getvalue())).schema
    return [columns.column(k).path for k in range(len(columns))]


def read_rows(paths: Iterable[Path]) -> list[dict]:
    return [row for path in paths for row in pq.read_table(path).to_pylist()]
