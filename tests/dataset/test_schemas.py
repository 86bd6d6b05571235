"""schemas/rows/: every row a build writes, of every configuration kind, as a user reads it as JSON,
fits its kind's JSON Schema, and not the schema of a kind with another record."""

import base64
import json
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED

from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.layout import table_questions
from pipeline.dataset.manifest import build_configs, read_manifest, shard_files
from pipeline.dataset.rows import kind_record
from pipeline.text.configs import parse_configs
from pipeline.text.kinds import KINDS, added_kinds, kind_of

REPO = Path(__file__).resolve().parents[2]
BASE = "n5_m4_d144"  # `make roomspace-100`: --vision, --twins and --agents of it, which adds vision_agent


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    """One room of every kind the default build writes (every kind a build adds on request of BASE)."""
    out = tmp_path_factory.mktemp("schemas") / "roomspace-schemas"
    configs = parse_configs(BASE)
    build(BuildPlan.asked(out.name, SCENE_SEED, 1, configs, {kind.name: configs for kind in added_kinds()}),
          scenes, out, workers=1, progress=False)
    return out


def as_json(value):
    """A row read from Parquet as JSON gives it: an image's bytes as a base64 string."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {key: as_json(v) for key, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value


@pytest.fixture(scope="module")
def rows(built) -> dict[str, list[dict]]:
    """Every row of every configuration of the build, by configuration, as JSON (a configuration's rows
    read out of the files it shares with others: pipeline.dataset.layout)."""
    manifest = read_manifest(built)
    return {config: json.loads(json.dumps(as_json([row for path in shard_files(built, manifest, config) for row in
                                                   table_questions(pq.read_table(path), config=config).to_pylist()])))
            for config in build_configs(manifest)}


def schema(kind: str) -> dict:
    """The kind's schema as schemas/ holds it (test_layout checks that it is the derived one)."""
    return json.loads((REPO / "schemas" / "rows" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def test_the_build_writes_every_kind(rows):
    assert {kind_of(config).name for config in rows} == set(KINDS)
    assert all(rows.values())


def test_every_row_of_every_kind_fits_its_kinds_schema(rows):
    for config, table in rows.items():
        kind = kind_of(config).name
        validator = jsonschema.Draft202012Validator(schema(kind))
        for row in table:
            validator.validate(row)


def test_an_image_is_its_path_and_bytes(rows):
    for config, table in rows.items():
        if KINDS[kind_of(config).name].images:
            row = next(row for row in table if row["image"] is not None)  # a question stored with its image
            assert row["image"]["path"] == f"{row['room_id']}/{row['image_name']}.png" and row["image_id"]
            assert base64.b64decode(row["image"]["bytes"]).startswith(b"\x89PNG")


def test_a_row_fits_no_schema_of_another_record(rows):
    """Every schema forbids fields it does not declare and requires those it does: an agent row is no
    base row, a base row no agent row, a vision row no vision_agent row. Kinds of one record (base and
    twin: Item) share their rows' shape."""
    firsts = {kind_of(config).name: table[0] for config, table in rows.items()}
    for kind, row in firsts.items():
        for other in KINDS.values():
            if kind_record(other) is not kind_record(KINDS[kind]):
                assert not jsonschema.Draft202012Validator(schema(other.name)).is_valid(row), (kind, other.name)
    errors = jsonschema.Draft202012Validator(schema("base")).iter_errors(firsts["agent"])
    assert any(error.validator == "additionalProperties" and "frame_angle" in error.message for error in errors)
    errors = jsonschema.Draft202012Validator(schema("agent")).iter_errors(firsts["base"])
    assert any(error.validator == "required" and "frame_angle" in error.message for error in errors)
