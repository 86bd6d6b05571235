"""Records declared once: a dataclass's type hints give its JSON Schema and its JSON round trip.

The scene record (pipeline.scene.records), the dataset rows (pipeline.text.items.Item and the
records made from it) and the build's manifest entries and statistics (pipeline.dataset.manifest)
are all declared as dataclasses; their JSON Schemas, the scene file's reader and writer, the rows'
Hugging Face features (pipeline.dataset.rows) and manifest.json's shard entries are all derived
from those declarations, so a field added to a record reaches every schema at once.

Types understood: str, int, float, bool, `X | None`, `tuple[X, ...]`, fixed tuples
`tuple[X, Y]`, `dict[str, X]` (an object of any keys), nested dataclasses, and
`Annotated[X, Rule(...)]`, whose keywords are extra JSON Schema constraints (an enum, a minimum,
a length) for the schema only.

A field whose default is None is optional: `to_json` leaves it out while it is None, `from_json`
reads it as None when it is absent, and the schema does not require it (a section of a record that
only some records have, such as a vision configuration's pair questions in its statistics). A
field not set by `__init__` (`field(init=False)`) is written but not read back: the record makes it
from the others.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from itertools import repeat
from typing import Any

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


class Rule(dict):
    """Extra JSON Schema keywords of an `Annotated` type, e.g. `Annotated[str, Rule(enum=WALLS)]`."""


def unwrap(annotation: object) -> tuple[object, bool]:
    """(type, nullable) for `X | None`; (type, False) otherwise. `Annotated` is kept."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation}")
        return args[0], True
    return annotation, False


def _rules(annotation: object) -> tuple[object, dict]:
    """(the bare type, its Rule keywords) of a possibly `Annotated` type."""
    if typing.get_origin(annotation) is typing.Annotated:
        bare, *extras = typing.get_args(annotation)
        return bare, {k: v for extra in extras if isinstance(extra, Rule) for k, v in extra.items()}
    return annotation, {}


@cache  # resolving type hints is slow, and a scene file's records ask for them a dozen times
def fields_of(record: type) -> tuple[tuple[str, object], ...]:
    """(name, annotation with its Rules) of each field of a dataclass, in declaration order."""
    hints = typing.get_type_hints(record, include_extras=True)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(record))


@cache
def _field_names(record: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(record))


@cache
def optional_fields(record: type) -> frozenset[str]:
    """The fields of a dataclass that default to None: left out of its JSON while they are None."""
    return frozenset(f.name for f in dataclasses.fields(record) if f.default is None)


def _items(kind: object) -> tuple[tuple, bool]:
    """A tuple type's element annotations and whether it is variadic (`tuple[X, ...]`)."""
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        return (args[0],), True
    return args, False


def _mapped(kind: object) -> object | None:
    """The value annotation of `dict[str, X]`; None for any other type."""
    if typing.get_origin(kind) is not dict:
        return None
    key, value = typing.get_args(kind)
    if key is not str:
        raise TypeError(f"unsupported mapping {kind}: JSON object keys are strings")
    return value


def json_schema_of(annotation: object) -> dict:
    """The JSON Schema (draft 2020-12) of values of `annotation`."""
    kind, nullable = unwrap(annotation)
    kind, rules = _rules(kind)
    if dataclasses.is_dataclass(kind):
        fields, optional = fields_of(kind), optional_fields(kind)
        schema: dict = {"type": "object", "properties": {name: json_schema_of(hint) for name, hint in fields},
                        "required": [name for name, _ in fields if name not in optional],
                        "additionalProperties": False}
    elif typing.get_origin(kind) is tuple:
        elements, variadic = _items(kind)
        if variadic:
            schema = {"type": "array", "items": json_schema_of(elements[0])}
        else:
            schema = {"type": "array", "prefixItems": [json_schema_of(e) for e in elements],
                      "minItems": len(elements), "maxItems": len(elements)}
    elif _mapped(kind) is not None:
        schema = {"type": "object", "additionalProperties": json_schema_of(_mapped(kind))}
    else:
        schema = {"type": JSON_TYPES[kind]}
    schema.update(rules)
    if nullable:
        schema["type"] = [schema["type"], "null"]
    return schema


def to_json(value: Any) -> Any:
    """A record as plain JSON values: dataclasses and dicts as objects (a record's optional fields
    left out while None), tuples as lists."""
    if value is None or type(value) in JSON_TYPES:  # most values: no dataclass test needed
        return value
    if dataclasses.is_dataclass(value):
        record = type(value)
        optional = optional_fields(record)
        if not optional:
            return {name: to_json(getattr(value, name)) for name in _field_names(record)}
        return {name: to_json(part) for name in _field_names(record)
                if (part := getattr(value, name)) is not None or name not in optional}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {key: to_json(v) for key, v in value.items()}
    return value


class JSONMismatch(ValueError):
    """A JSON value that is not of its declared type: `path` says where, as the keys and indices to it."""

    def __init__(self, path: tuple, problem: str) -> None:
        super().__init__(f"{'/'.join(map(str, path)) or '(top)'}: {problem}")
        self.path, self.problem = path, problem

    def within(self, step: object) -> JSONMismatch:
        return JSONMismatch((step, *self.path), self.problem)


def from_json(annotation: object, value: Any) -> Any:
    """The value of type `annotation` that `to_json` turned into `value`. Every type is checked on
    the way, exactly (a bool is no int; a float may be written as an int), and a record takes no
    field it does not declare: anything else is a JSONMismatch (a ValueError) saying where."""
    kind, _ = unwrap(annotation)
    reader = _record_reader(kind) if dataclasses.is_dataclass(kind) else _reader(annotation)
    return reader(value)


def _describe(value: Any) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def _reader(annotation: object) -> Callable[[Any], Any]:
    """value -> the value of `annotation` it stands for, checked (`from_json`)."""
    kind, nullable = unwrap(annotation)
    kind, _ = _rules(kind)
    if dataclasses.is_dataclass(kind):
        read = _record_reader(kind)
    elif typing.get_origin(kind) is tuple:
        read = _tuple_reader(kind)
    elif _mapped(kind) is not None:
        read = _mapping_reader(kind)
    else:
        read = _scalar_reader(kind)
    if not nullable:
        return read
    return lambda value: None if value is None else read(value)


def _scalar_reader(kind: type) -> Callable[[Any], Any]:
    accepted = (int, float) if kind is float else (kind,)  # JSON writes 2.0 as 2

    def read(value: Any) -> Any:
        if type(value) not in accepted:
            raise JSONMismatch((), f"expected {kind.__name__}, got {_describe(value)}")
        return kind(value)

    return read


def _tuple_reader(kind: object) -> Callable[[Any], tuple]:
    elements, variadic = _items(kind)
    readers = [_reader(e) for e in elements]

    def read(value: Any) -> tuple:
        if not isinstance(value, list | tuple):
            raise JSONMismatch((), f"expected an array, got {_describe(value)}")
        if not variadic and len(value) != len(readers):
            raise JSONMismatch((), f"expected {len(readers)} items, got {len(value)}")
        items = []
        for index, (part, item) in enumerate(zip(repeat(readers[0]) if variadic else readers, value)):
            try:
                items.append(part(item))
            except JSONMismatch as mismatch:
                raise mismatch.within(index) from None
        return tuple(items)

    return read


def _mapping_reader(kind: object) -> Callable[[Any], dict]:
    part = _reader(_mapped(kind))

    def read(value: Any) -> dict:
        if not isinstance(value, Mapping):
            raise JSONMismatch((), f"expected an object, got {_describe(value)}")
        result = {}
        for key, v in value.items():
            try:
                result[key] = part(v)
            except JSONMismatch as mismatch:
                raise mismatch.within(key) from None
        return result

    return read


@cache  # a record's reader is made once: from_json is called a row at a time
def _record_reader(record: type) -> Callable[[Any], Any]:
    made = {f.name for f in dataclasses.fields(record) if not f.init}  # the record makes these itself
    optional = optional_fields(record)
    known = frozenset(_field_names(record))
    fields = [(name, name in optional, _reader(hint)) for name, hint in fields_of(record) if name not in made]

    def read(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise JSONMismatch((), f"expected an object ({record.__name__}), got {_describe(value)}")
        if not value.keys() <= known:
            raise JSONMismatch((), f"{record.__name__} has no field {min(value.keys() - known, key=str)!r}")
        read_fields = {}
        for name, absent_is_none, part in fields:
            if name not in value:
                if absent_is_none:
                    continue  # its default, None
                raise JSONMismatch((), f"{record.__name__}'s field {name!r} is missing")
            try:
                read_fields[name] = part(value[name])
            except JSONMismatch as mismatch:
                raise mismatch.within(name) from None
        return record(**read_fields)

    return read
