"""Records declared once: a frozen dataclass's type hints give its JSON Schema and its JSON round trip.

The scene record (pipeline.scene.records) and the dataset row (pipeline.text.items.Item) are
both declared as dataclasses; their JSON Schemas, the scene file's reader and writer and the
row's Hugging Face features (pipeline.dataset.rows) are all derived from those declarations, so
a field added to a record reaches every schema at once.

Types understood: str, int, float, bool, `X | None`, `tuple[X, ...]`, fixed tuples
`tuple[X, Y]`, nested dataclasses, and `Annotated[X, Rule(...)]`, whose keywords are extra JSON
Schema constraints (an enum, a minimum, a length) for the schema only.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
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


def _items(kind: object) -> tuple[tuple, bool]:
    """A tuple type's element annotations and whether it is variadic (`tuple[X, ...]`)."""
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        return (args[0],), True
    return args, False


def json_schema_of(annotation: object) -> dict:
    """The JSON Schema (draft 2020-12) of values of `annotation`."""
    kind, nullable = unwrap(annotation)
    kind, rules = _rules(kind)
    if dataclasses.is_dataclass(kind):
        fields = fields_of(kind)
        schema: dict = {"type": "object", "properties": {name: json_schema_of(hint) for name, hint in fields},
                        "required": [name for name, _ in fields], "additionalProperties": False}
    elif typing.get_origin(kind) is tuple:
        elements, variadic = _items(kind)
        if variadic:
            schema = {"type": "array", "items": json_schema_of(elements[0])}
        else:
            schema = {"type": "array", "prefixItems": [json_schema_of(e) for e in elements],
                      "minItems": len(elements), "maxItems": len(elements)}
    else:
        schema = {"type": JSON_TYPES[kind]}
    schema.update(rules)
    if nullable:
        schema["type"] = [schema["type"], "null"]
    return schema


def to_json(value: Any) -> Any:
    """A record as plain JSON values: dataclasses as objects, tuples as lists."""
    if value is None or type(value) in JSON_TYPES:  # most values: no dataclass test needed
        return value
    if dataclasses.is_dataclass(value):
        return {name: to_json(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    return value


def from_json(annotation: object, value: Any) -> Any:
    """The record of type `annotation` that `to_json` turned into `value` (already schema-checked)."""
    kind, nullable = unwrap(annotation)
    kind, _ = _rules(kind)
    if nullable and value is None:
        return None
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, Mapping):
            raise TypeError(f"expected an object for {kind.__name__}")
        return kind(**{name: from_json(hint, value[name]) for name, hint in fields_of(kind)})
    if typing.get_origin(kind) is tuple:
        elements, variadic = _items(kind)
        if variadic:
            return tuple(from_json(elements[0], v) for v in value)
        return tuple(from_json(e, v) for e, v in zip(elements, value, strict=True))
    return kind(value)
