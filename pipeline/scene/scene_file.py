"""One scene file: canonical JSON of {"record": Scene, "house": ProcTHOR house JSON, "sha256": its checksum},
checked both ways.

A scene file `OUT/{room_id}.json` is canonical JSON (sorted keys, floats rounded to
`FLOAT_DIGITS` decimals, no NaN, one trailing newline), written atomically (temporary file in
the same folder, then `os.replace`) and validated against `SCENE_FILE_SCHEMA` on the way out and
on the way in. That schema is derived from the record's declaration (pipeline.scene.records), so
it travels with the code: schemas/scene.schema.json is a generated copy for readers.

"sha256" is the sha256 of the canonical text of the file's record and house (the file without
it): every command that reads a scene (scenes, build, validate, render) recomputes it, so a file
edited by hand since it was sampled, still valid JSON and a valid scene, is refused in one line
naming it and the `roomspace scenes` command that samples it again. Files written before the
checksum existed have none; they are read as before, unchecked, and build the same rows.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import RoomspaceError
from pipeline.files import write_atomic
from pipeline.scene.records import SOURCE_NAMES, Scene, room_id
from pipeline.typed_json import from_json, json_schema_of, to_json

FLOAT_DIGITS = 6  # decimals kept in scene files

SCENE_FILE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "roomspace.scene",
    "title": "RoomSpace scene file",
    "description": "One seeded ProcTHOR single-room house: the record the pipeline reads (pipeline.scene.records.Scene, "
                   "from which this schema is derived; regenerate with `roomspace schemas`) and the house JSON "
                   "ProcTHOR produced. Metres, world frame x east, z north; the room is the square [0, side]^2.",
    "type": "object",
    "required": ["record", "house"],
    "additionalProperties": False,
    "properties": {
        "sha256": {
            "description": "sha256 (hex) of the canonical JSON text of {record, house}, the file without this key: "
                           "written with the file and checked by every reader; absent from files sampled before "
                           "roomspace wrote it, which are read unchecked.",
            "type": "string", "pattern": "^[0-9a-f]{64}$",
        },
        "record": json_schema_of(Scene),
        "house": {
            "description": "ProcTHOR's house JSON (floats rounded), loadable by AI2-THOR's CreateHouse.",
            "type": "object",
            "required": ["rooms", "walls", "doors", "windows", "objects"],
            "properties": {"rooms": {"type": "array", "minItems": 1}, "walls": {"type": "array"},
                           "doors": {"type": "array"}, "windows": {"type": "array"}, "objects": {"type": "array"}},
        },
    },
}


def scene_path(out: str | os.PathLike, seed: int, index: int) -> Path:
    """Where house `index` of global seed `seed` is written in folder `out`."""
    return Path(out) / f"{room_id(seed, index)}.json"


def canonical(value: Any, ndigits: int = FLOAT_DIGITS) -> Any:
    """Plain JSON values with floats rounded to `ndigits` (numpy scalars and tuples included)."""
    kind = type(value)  # a house's own types first, as the general checks below take them (a third of the time)
    if kind is float or kind is np.float64:
        number = float(value)
        if not math.isfinite(number):
            raise RoomspaceError(f"cannot write a non-finite number ({number}) to a scene file")
        return round(number, ndigits) + 0.0
    if kind is str or kind is bool or kind is int or value is None:
        return value
    if kind is dict:
        return {str(k): canonical(v, ndigits) for k, v in value.items()}
    if kind is list:
        return [canonical(v, ndigits) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if not math.isfinite(number):
            raise RoomspaceError(f"cannot write a non-finite number ({number}) to a scene file")
        return round(number, ndigits) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(k): canonical(v, ndigits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v, ndigits) for v in value]
    if value is None:
        return None
    raise RoomspaceError(f"cannot write a {type(value).__name__} to a scene file")


def dumps(document: Any) -> str:
    """The canonical text of a JSON document: the same value always gives the same bytes."""
    return json.dumps(canonical(document), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False) + "\n"


def scene_document(house: dict, scene: Scene) -> dict:
    document = {"record": to_json(scene), "house": house}
    return {**document, "sha256": content_sha256(document)}


def scene_text(house: dict, scene: Scene, house_text: str | None = None) -> str:
    """`dumps(scene_document(house, scene))`, the text of a scene file, from one canonical text: the checksummed
    text with the checksum added where the sorted keys put it, last ("sha256" after "house" and "record").

    The checksummed text is `dumps({"record": ..., "house": ...})`, laid out from the canonical texts
    of its two members in their sorted order; `house_text`, when given, must be `dumps(house)`
    (sampling has it at hand: `SampledHouse.text`), which is then not made again.
    """
    house_text = dumps(house) if house_text is None else house_text
    record_text = dumps(to_json(scene))
    checksummed = f'{{"house":{house_text[:-1]},"record":{record_text[:-1]}}}\n'
    return checksummed[:-len("}\n")] + _sha256_member(hashlib.sha256(checksummed.encode()).hexdigest())


def _sha256_member(sha256: str) -> str:
    """How the text of a scene file ends: its checksum, the last of its sorted keys, and the closing brace."""
    return f',"sha256":"{sha256}"}}\n'


def content_sha256(document: Mapping) -> str:
    """The checksum a scene file carries: the sha256 of the canonical text of the document without it."""
    return hashlib.sha256(dumps({key: value for key, value in document.items() if key != "sha256"}).encode()).hexdigest()


@lru_cache(maxsize=1)
def _validators():
    """(jsonschema-rs's compiled validator, jsonschema's) of the scene file schema."""
    import jsonschema
    import jsonschema_rs

    jsonschema.Draft202012Validator.check_schema(SCENE_FILE_SCHEMA)
    return jsonschema_rs.Draft202012Validator(SCENE_FILE_SCHEMA), jsonschema.Draft202012Validator(SCENE_FILE_SCHEMA)


def schema_errors(document: Any) -> list[str]:
    """Every way `document` breaks the scene file schema (empty if it is a valid scene file). jsonschema-rs,
    compiled, passes a valid document at once (0.02 ms a scene file, where jsonschema takes 1.7: most of the
    time of reading one); jsonschema lists the errors of any other, so the messages are its own, and so is
    the verdict on what only it reads as valid (a NaN, a pattern's "$" before a final newline)."""
    fast, listing = _validators()
    if fast.is_valid(document):
        return []
    errors = sorted(listing.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


def load_scene(path: str | os.PathLike, source: str | None = None) -> Scene:
    """The record of a scene file, validated; a broken or foreign file is a RoomspaceError, and so is
    one sampled from another source than `source` (a SOURCE_NAMES value) when one is given."""
    path = Path(path)
    scene = _load_document(path, source)[0]
    if source is not None and scene.source != source:
        raise RoomspaceError(f"{path}: was sampled from source {scene.source!r}, not {source!r}; "
                             f"{repair_hint(path, source)}")
    return scene


def load_house(path: str | os.PathLike) -> dict:
    """The ProcTHOR house JSON of a scene file, validated like `load_scene`."""
    return _load_document(Path(path))[1]


def house_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a scene file's house JSON, canonical: two files hold the same house exactly when
    these are equal, whatever their records (seed, index) say."""
    return hashlib.sha256(dumps(load_house(path)).encode()).hexdigest()


_ROOM_ID = re.compile(r"s(-?[0-9]+)-([0-9]+)")  # records.room_id
_SOURCE_OPTIONS = {SOURCE_NAMES["ai2thor"]: " --controller ai2thor",
                   SOURCE_NAMES["procthor-10k"]: " --source procthor-10k"}


def repair_hint(path: Path, source: str | None = None) -> str:
    """What mends a bad scene file, whichever command read it: the `roomspace scenes` command that
    samples it again, its seed and count read from the file's name, its folder and `source` (a
    SOURCE_NAMES value; offline ProcTHOR when not given, as the other commands read)."""
    match = _ROOM_ID.fullmatch(path.stem)
    seed, count = (match[1], int(match[2]) + 1) if match else ("S", "N")
    options = _SOURCE_OPTIONS.get(source, "")
    command = f"roomspace scenes --count {count} --seed {seed} --out {shlex.quote(str(path.parent))}{options}"
    return (f"resample it with `{command} --force`, or delete it and run that without --force to sample only "
            "what is missing")


def _load_document(path: Path, source: str | None = None) -> tuple[Scene, dict]:
    hint = repair_hint(path, source)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RoomspaceError(f"{path}: not a scene file (not UTF-8 text); {hint}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise RoomspaceError(f"{path}: truncated or corrupt scene file (bad JSON, {error}); {hint}") from None
    problems = schema_errors(document)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RoomspaceError(f"{path}: not a roomspace scene file ({problems[0]}{more}); {hint}")
    if "sha256" in document and not _written_as_is(text, document["sha256"]) and \
            content_sha256(document) != document["sha256"]:
        raise RoomspaceError(f"{path}: edited since it was sampled (its content does not match the sha256 it was "
                             f"written with); {hint}")
    scene = from_json(Scene, document["record"])
    if path.name != f"{scene.room_id}.json":
        raise RoomspaceError(f"{path}: holds scene {scene.room_id}, not the one its name says; {hint}")
    return scene, document["house"]


def _written_as_is(text: str, sha256: str) -> bool:
    """Whether a file's text is, byte for byte, the canonical text its checksum was made from with the
    checksum added (sorted last): then it holds without making that text again from the document, a
    third of the time of reading a scene. A file written otherwise (by hand, by json.dumps) is checked
    on its content."""
    member = _sha256_member(sha256)
    return text.endswith(member) and hashlib.sha256(f"{text[:-len(member)]}}}\n".encode()).hexdigest() == sha256


def write_scene(path: Path, house: dict, scene: Scene, house_text: str | None = None) -> None:
    """Write one scene file atomically, after checking it against the schema (`house_text` as in `scene_text`)."""
    text = scene_text(house, scene, house_text)
    problems = schema_errors(json.loads(text))
    if problems:
        raise RoomspaceError(f"scene {scene.room_id} breaks the scene schema: {problems[0]}")
    write_atomic(path, lambda target: target.write_text(text, encoding="utf-8", newline="\n"))
