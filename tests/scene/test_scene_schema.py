"""The scene file schema's check (scene_file.schema_errors) says what jsonschema alone says: its compiled
validator (jsonschema-rs) only lets a document through sooner, so every document, valid or broken anywhere,
gets jsonschema's errors, none more, none fewer."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from conftest import SCENE_SEED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.scene.scene_file import SCENE_FILE_SCHEMA, load_house, load_scene, schema_errors, scene_path, scene_text
from pipeline.scene.small_objects import with_small_objects

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5)
# Values near what the schema allows: its bounds, enums and lengths, and the JSON values Python reads
# that JSON Schema has no word for (NaN, infinities).
NEAR = (-1, 0, -0.0, 0.5, 3.0, 359.999999, 360, 1e308, float("nan"), float("inf"), True, False, None, "",
        "door", "window", "north", "south", "Kitchen", "a", "a\n", "0" * 64, "0" * 64 + "\n", [], {})


def reference_errors(document) -> list[str]:
    errors = sorted(jsonschema.Draft202012Validator(SCENE_FILE_SCHEMA).iter_errors(document),
                    key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


@st.composite
def broken(draw, document: dict):
    """`document` with one value somewhere in it replaced, removed, duplicated or added to."""
    document = copy.deepcopy(document)
    parent, key = None, None
    value = document
    while isinstance(value, dict | list) and value and draw(st.integers(0, 4)):  # how deep, drawn step by step
        parent, key = value, draw(st.sampled_from(sorted(value) if isinstance(value, dict) else range(len(value))))
        value = parent[key]
    change = draw(st.sampled_from(("near", "any", "drop", "twice", "add")))
    if change in ("near", "any") or parent is None:
        replacement = draw(st.sampled_from(NEAR) if change == "near" else JSON_VALUES)
        if parent is None:
            return replacement
        parent[key] = replacement
    elif change == "drop":
        del parent[key]
    elif change == "twice" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(value))
    elif isinstance(parent, dict):
        parent[draw(st.sampled_from(("extra", "sha256", "record", "house")))] = draw(st.sampled_from(NEAR))
    else:
        parent.append(draw(st.sampled_from(NEAR)))
    return document


@pytest.fixture(scope="module")
def documents(scenes) -> list[dict]:
    """Four scene files as read, and the first one's scene with its small objects (`--small-objects`)."""
    paths = [scene_path(scenes, SCENE_SEED, index) for index in range(4)]
    furnished = with_small_objects(load_scene(paths[0]), load_house(paths[0]))
    return [json.loads(path.read_text()) for path in paths] + [json.loads(scene_text(load_house(paths[0]), furnished))]


def test_a_valid_scene_file_has_no_error(documents):
    assert documents[-1]["record"]["small_objects"]
    for document in documents:
        assert schema_errors(document) == [] == reference_errors(document)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_changed_scene_file_has_jsonschemas_errors(documents, data):
    document = data.draw(broken(data.draw(st.sampled_from(documents))))
    assert schema_errors(document) == reference_errors(document)
