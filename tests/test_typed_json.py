"""pipeline.typed_json: a record's JSON Schema and JSON round trip from its declaration, and the
checked reading that refuses a value of another shape, saying where."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import jsonschema
import pytest

from pipeline.typed_json import JSONMismatch, Rule, from_json, json_schema_of, to_json


@dataclass(frozen=True)
class Point:
    x: float
    z: float


@dataclass(frozen=True)
class Shape:
    name: Annotated[str, Rule(minLength=1)]
    corners: tuple[Point, ...]
    size: tuple[int, int]
    counts: dict[str, int]
    parts: dict[str, Point]
    flag: bool
    note: str | None  # nullable, but always written
    extra: dict[str, int] | None = None  # optional: left out while None
    label: str = field(init=False)  # made by the record: written, not read

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", f"{self.name} of {len(self.corners)}")


SHAPE = Shape("square", (Point(0.0, 0.0), Point(1.0, 2.5)), (3, 4), {"a": 1, "b": 2}, {"c": Point(1.0, 1.0)},
              True, None)


def test_a_record_round_trips_and_its_json_fits_its_schema():
    data = to_json(SHAPE)
    assert data == {"name": "square", "corners": [{"x": 0.0, "z": 0.0}, {"x": 1.0, "z": 2.5}], "size": [3, 4],
                    "counts": {"a": 1, "b": 2}, "parts": {"c": {"x": 1.0, "z": 1.0}}, "flag": True, "note": None,
                    "label": "square of 2"}
    jsonschema.validate(data, json_schema_of(Shape))
    assert from_json(Shape, data) == SHAPE
    with_extra = Shape(**{**{k: getattr(SHAPE, k) for k in ("name", "corners", "size", "counts", "parts", "flag",
                                                            "note")}, "extra": {"k": 3}})
    assert to_json(with_extra)["extra"] == {"k": 3}
    assert from_json(Shape, to_json(with_extra)) == with_extra


def test_a_mapping_keeps_its_keys_order():
    counts = from_json(dict[str, int], {"b": 1, "a": 2, "c": 3})
    assert list(counts) == ["b", "a", "c"]
    assert list(to_json({"z": Point(1.0, 2.0), "y": Point(0.0, 0.0)})) == ["z", "y"]


def test_the_schema_of_a_mapping_and_of_optional_fields():
    schema = json_schema_of(Shape)
    assert schema["properties"]["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert schema["properties"]["extra"]["type"] == ["object", "null"]
    assert "extra" not in schema["required"] and "note" in schema["required"] and "label" in schema["required"]
    with pytest.raises(TypeError, match="keys are strings"):
        json_schema_of(dict[int, int])


def test_an_absent_optional_field_reads_as_none_and_a_made_one_is_made_again():
    data = to_json(SHAPE)
    assert "extra" not in data
    data["label"] = "whatever was stored"
    assert from_json(Shape, data).label == "square of 2"


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(flag=1), "flag: expected bool, got int 1"),
    (lambda d: d["size"].__setitem__(0, True), "size/0: expected int, got bool True"),
    (lambda d: d["size"].append(5), "size: expected 2 items, got 3"),
    (lambda d: d["counts"].update(b="2"), "counts/b: expected int, got str '2'"),
    (lambda d: d["corners"][1].update(z="far"), "corners/1/z: expected float, got str 'far'"),
    (lambda d: d["parts"]["c"].pop("x"), "parts/c: Point's field 'x' is missing"),
    (lambda d: d.update(colour="red"), "(top): Shape has no field 'colour'"),
    (lambda d: d.update(counts=[1]), "counts: expected an object, got list [1]"),
    (lambda d: d.update(note=3), "note: expected str, got int 3"),
])
def test_a_value_of_another_shape_is_refused_saying_where(change, message):
    data = to_json(SHAPE)
    change(data)
    with pytest.raises(JSONMismatch) as refused:
        from_json(Shape, data)
    assert str(refused.value) == message


def test_a_float_may_be_written_as_an_int():
    data = to_json(SHAPE)
    data["corners"][1]["z"] = 3
    point = from_json(Shape, data).corners[1]
    assert point.z == 3.0 and type(point.z) is float
