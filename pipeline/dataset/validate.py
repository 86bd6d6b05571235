"""Re-checking a built folder, in two tiers.

`check_build` reads the folder alone, and `push` runs it before anything is sent: the manifest's
identity and listing (shards 0..n-1 of each split, each covering the rooms the identity implies and
holding its configurations' files: one each, or one for those sharing a folder), no file under
data/ that the manifest does not list, every file's checksum, schema and row count, every row's
invariants (`check_row`), row ids unique within a configuration, each row's configuration, seed and
room those of its shard, and the card's configurations and row counts.

Checksums cannot catch an edit whose checksums were recomputed, so `validate` then re-derives
rows: it recomputes every room's rows (or a seeded sample of rooms) from its scene file with the
build's own `room_job` and compares them with the shards' rows field by field, then checks the
nesting of smaller builds of the same seed beside the folder: one whose rows are our first rooms'
is reported nested, one whose rows differ (built from other scene files, say) is reported as not
nested, another dataset: a neighbour says nothing about this build's validity. It writes nothing:
a scene missing from the scene folder is sampled into a temporary folder.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml
from huggingface_hub import metadata_load
from tqdm import tqdm

from pipeline import __version__
from pipeline.dataset.build import BuildPlan, room_job
from pipeline.dataset.layout import CONFIG, IMAGE, file_configs, question_columns, table_questions
from pipeline.dataset.card import data_files
from pipeline.dataset.manifest import (MANIFEST, REBUILD, Listed, build_configs, build_splits, data_folder, key_split,
                                       read_manifest, shard_files, shard_path)
from pipeline.dataset.rows import arrow_schema, check_row
from pipeline.errors import RoomspaceError
from pipeline.files import check_folder_path, file_sha256
from pipeline.scene.scene_file import scene_path
from pipeline.text.kinds import kind_of

SAMPLE_ROOMS = 1000  # rooms re-derived by default: every room of a build up to this size
REDO = "re-run its build command to redo it"
SHOWN = 70  # characters of each value a mismatch shows


@dataclass
class ValidationReport:
    out: Path
    shards: int = 0  # shards of rooms, of every split; each is one Parquet file per configuration
    files: int = 0
    rows: int = 0
    rooms: int = 0  # rooms in the build, of every split
    rederived: int = 0  # rooms whose rows were recomputed from their scenes and found equal
    nested: list[str] = field(default_factory=list)  # smaller builds found to be exact prefixes
    # smaller builds of the same seed sharing a configuration whose rows are not our first rooms', each with
    # the first configuration and room that differ: other datasets beside it, not a fault of this one
    not_nested: list[str] = field(default_factory=list)


def check_build(out: Path, manifest: dict) -> ValidationReport:
    """Every check of the folder that needs no scene (module docstring); the first failure is a
    RoomspaceError naming the file or row."""
    identity = manifest["identity"]
    plan = identity_plan(out, identity)  # checks the identity before anything else relies on it
    report = ValidationReport(out, rooms=sum(plan.split_rooms.values()))
    check_listing(out, manifest, plan)
    check_unlisted(out, manifest)
    for name in build_configs(manifest):
        check_rows(out, manifest, plan, name, report)
    check_card(out, manifest)
    report.shards = len(manifest["shards"])
    report.files = sum(len(entry.files) for entry in manifest["shards"].values())
    return report


def identity_plan(out: Path, identity: dict) -> BuildPlan:
    """The build plan the identity records, checked: an identity that is not a build's is an error."""
    where = out / MANIFEST
    for key, least in (("seed", None), ("rooms", 0), ("shard_rooms", 1), ("train_rooms", 1), ("validation_rooms", 1)):
        if key not in identity and key.endswith("_rooms") and key != "shard_rooms":
            continue  # a training split's size is there only when the build has it
        value = identity.get(key)
        if type(value) is not int or (least is not None and value < least):
            raise RoomspaceError(f"{where}: the identity's {key} is {value!r}, not a whole number"
                                 f"{'' if least is None else f' of at least {least}'}; {REBUILD}")
    names = identity.get("configs")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise RoomspaceError(f"{where}: the identity's configs {names!r} are not distinct configuration names; "
                             f"{REBUILD}")
    try:
        plan = BuildPlan.from_identity(identity)
    except (RoomspaceError, KeyError) as error:
        raise RoomspaceError(f"{where}: the identity is not a roomspace build's ({error}); {REBUILD}") from None
    if plan.names != names:
        raise RoomspaceError(f"{where}: the identity lists its configurations out of the build's order; {REBUILD}")
    return plan


def check_listing(out: Path, manifest: dict, plan: BuildPlan) -> None:
    """The manifest lists shards 0..n-1 of each split and no other, each with the rooms the identity
    implies and its configurations' files, `shard_path`'s (`read_manifest` has read each entry as its
    record)."""
    listed, where = manifest["shards"], out / MANIFEST
    parts = plan.parts()
    extra = sorted(set(listed) - {part.key for part in parts})
    if extra:
        rooms = ", ".join(f"{count} {split} rooms" for split, count in plan.split_rooms.items())
        raise RoomspaceError(f"{where}: lists shard {extra[0]!r}, but {rooms} in shards of {plan.shard_rooms} "
                             f"make shards {', '.join(part.key for part in parts)}; {REBUILD}")
    for part in parts:
        shard, rooms = part.key, part.rooms
        entry = listed.get(shard)
        if entry is None:
            raise RoomspaceError(f"{where}: shard {shard} (rooms {rooms.start}..{rooms.stop - 1}) is not listed; {REDO}")
        if entry.rooms != (rooms.start, rooms.stop):
            raise RoomspaceError(f"{where}: shard {shard} covers rooms {list(entry.rooms)!r}, the identity implies "
                                 f"[{rooms.start}, {rooms.stop}]; {REBUILD}")
        expected = {shard_path(name, part.shard, part.split) for name in build_configs(manifest)}
        if set(entry.files) != expected:
            differs = sorted(expected ^ set(entry.files))
            raise RoomspaceError(f"{where}: shard {shard} does not list exactly its configurations' files "
                                 f"({differs[0]} is {'missing' if differs[0] in expected else 'extra'}); {REBUILD}")


def check_unlisted(out: Path, manifest: dict) -> None:
    """No file under data/ beside the listed ones: `load_dataset` reads every file of a configuration's folder."""
    listed = {path for entry in manifest["shards"].values() for path in entry.files}
    for path in sorted((out / "data").rglob("*")):
        if path.is_file() and path.relative_to(out).as_posix() not in listed:
            raise RoomspaceError(f"{path}: not listed in {out / MANIFEST}, so not part of the build; remove it")


def check_rows(out: Path, manifest: dict, plan: BuildPlan, name: str, report: ValidationReport) -> None:
    """Every shard of configuration `name`: the file as listed, every row valid, ids unique across the
    configuration, each row's configuration, seed and room those of its shard."""
    identity = manifest["identity"]
    seen: set[str] = set()
    for part in plan.parts():
        path = shard_path(name, part.shard, part.split)
        target = out / path
        table = read_shard(target, manifest["shards"][part.key].files[path], sharing(plan, name))
        rows = table_questions(table, [c for c in question_columns(table.schema) if c != IMAGE], name).to_pylist()
        rooms = part.rooms
        for row in rows:
            check_row(row)
            if row["id"] in seen:
                raise RoomspaceError(f"{target}: row id {row['id']} appears twice in {name} "
                                     f"(a copied or duplicated shard); {REBUILD}")
            seen.add(row["id"])
            if row["config"] != name:
                raise RoomspaceError(f"{target}: row {row['id']} is of configuration {row['config']}, "
                                     f"in a shard of {name}; {REBUILD}")
            if row["seed"] != identity["seed"]:
                raise RoomspaceError(f"{target}: row {row['id']} has seed {row['seed']}, the identity in "
                                     f"{MANIFEST} says {identity['seed']}; {REBUILD}")
            if row["room_index"] not in rooms:
                raise RoomspaceError(f"{target}: row {row['id']} is of room {row['room_index']}, outside the "
                                     f"shard's rooms {rooms.start}..{rooms.stop - 1}; {REBUILD}")
        report.rows += len(rows)


def sharing(plan: BuildPlan, name: str) -> list[str]:
    """The configurations whose rows share `name`'s files (itself included), in card order."""
    return [other for other in plan.names if data_folder(other) == data_folder(name)]


def read_shard(target: Path, listing: Listed, names: Sequence[str]) -> pa.Table:
    """One listed file's rows, its checksum, schema and row count checked against the manifest: the
    declared row schema of its configuration `names` or, in a shared folder, theirs united, each
    configuration's columns named in its metadata and no row of another configuration."""
    if not target.is_file():
        raise RoomspaceError(f"{target}: listed in the manifest but missing; {REDO}")
    if file_sha256(target) != listing.sha256:
        raise RoomspaceError(f"{target}: checksum differs from the manifest (damaged or edited); {REDO}")
    try:
        schema = pq.read_schema(target)
        table = pq.read_table(target, columns=[c for c in schema.names if c != IMAGE])  # the images: by checksum
    except (pa.ArrowException, OSError) as error:
        raise RoomspaceError(f"{target}: not a readable Parquet file ({error}); {REBUILD}") from None
    shared = kind_of(names[0]).shared_images
    declared = pa.unify_schemas([arrow_schema(name) for name in names])
    if not schema.equals(declared, check_metadata=False):
        raise RoomspaceError(f"{target}: its columns are not the declared row schema; {REBUILD}")
    if shared and (file_configs(schema) != {name: arrow_schema(name).names for name in names}
                   or not set(pc.unique(table[CONFIG]).to_pylist()) <= set(names)):
        raise RoomspaceError(f"{target}: its configurations are not {', '.join(names)}, or their columns not "
                             f"the declared ones; {REBUILD}")
    if table.num_rows != listing.rows:
        raise RoomspaceError(f"{target}: {table.num_rows} rows, the manifest says {listing.rows}; {REBUILD}")
    return table


def check_card(out: Path, manifest: dict) -> None:
    """README.md's YAML header declares exactly the manifest's configurations, each reading its own
    folder, with the manifest's row count as num_examples."""
    card = out / "README.md"
    try:
        header = metadata_load(card) or {}
    except (OSError, ValueError, yaml.YAMLError) as error:
        raise RoomspaceError(f"{card}: no readable card ({type(error).__name__}); {REBUILD}") from None
    names, splits = build_configs(manifest), build_splits(manifest)
    rows = {(name, split): sum(entry.stats[name].rows for key, entry in manifest["shards"].items()
                               if key_split(key)[0] == split and name in entry.stats)
            for name in names for split in splits}
    declared = {c.get("config_name"): c.get("data_files") for c in _entries(header.get("configs"))}
    infos = {i.get("config_name"): i.get("splits") for i in _entries(header.get("dataset_info"))}
    for key, listed in (("configs", declared), ("dataset_info", infos)):
        if sorted(listed, key=str) != sorted(names):
            raise RoomspaceError(f"{card}: its {key} lists {sorted(listed, key=str)}, the manifest "
                                 f"{sorted(names)}; {REBUILD}")
    for name in names:
        files = data_files(name, splits)
        if declared[name] != files:
            raise RoomspaceError(f"{card}: configuration {name} reads {declared[name]!r}, not {files!r}; {REBUILD}")
        for split in splits:
            counts = [s.get("num_examples") for s in _entries(infos[name]) if s.get("name") == split]
            if counts != [rows[name, split]]:
                shown = counts[0] if len(counts) == 1 else f"{counts} (one {split} split expected)"
                raise RoomspaceError(f"{card}: {name} has num_examples {shown} in its {split} split in the card, "
                                     f"{rows[name, split]} rows in the manifest; {REBUILD}")


def _entries(value: object) -> list[dict]:
    """A card field's entries: the card writes a one-entry list as the entry alone."""
    entries = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    return [entry for entry in entries if isinstance(entry, dict)]


def sample_rooms(rooms: Sequence[int], sample: int | None, seed: int) -> list[int]:
    """The rooms `validate` re-derives, in order: `sample` of the build's rooms (house indices, every
    split's) drawn with `seed`, by default all of them up to SAMPLE_ROOMS."""
    return sorted(Random(seed).sample(rooms, min(len(rooms), SAMPLE_ROOMS if sample is None else sample)))


def rederive(out: Path, manifest: dict, scenes: Path, rooms: list[int], report: ValidationReport,
             progress: bool) -> None:
    """Recompute the rows of `rooms` from their scene files with the build's `room_job` and compare
    them with the shards' rows field by field; the first difference is an error naming the row, the
    field and both values. A scene missing from `scenes` is sampled into a temporary folder."""
    identity = manifest["identity"]
    seed, names = identity["seed"], build_configs(manifest)
    plan = identity_plan(out, identity)
    check_folder_path(scenes, "scene folder")
    built_by = identity.get("roomspace")
    version = "" if built_by == __version__ else f" (the build was made by roomspace {built_by}; this is {__version__})"
    with tempfile.TemporaryDirectory(prefix="roomspace-validate-") as sampled, \
            tqdm(total=len(rooms), unit="room", desc="re-deriving rows", file=sys.stderr, disable=not progress) as bar:
        parts = plan.parts()
        for part, indices in itertools.groupby(rooms, key=lambda k: next(p for p in parts if k in p.rooms)):
            files = {path: pq.read_table(out / path) for path in
                     dict.fromkeys(shard_path(name, part.shard, part.split) for name in names)}
            tables = {name: table_questions(files[shard_path(name, part.shard, part.split)], config=name)
                      for name in names}
            for index in indices:
                # room_job samples a missing scene into the folder it is given: never the user's
                present = scene_path(scenes, seed, index).exists()
                result = room_job(seed, index, scenes if present else Path(sampled), plan.outputs)
                for name in names:
                    table = tables[name]
                    stored = table_questions(table.filter(pc.equal(table["room_index"], index))).to_pylist()
                    difference = first_difference(stored, table_questions(result.tables[name]).to_pylist())
                    if difference:
                        source = scene_path(scenes, seed, index) if present else "its scene, sampled afresh"
                        raise RoomspaceError(f"{difference} (in {out / shard_path(name, part.shard, part.split)}, recomputed from "
                                             f"{source}){version}; the rows were edited or the scene is not the "
                                             f"one they were built from: {REBUILD}")
                report.rederived += 1
                bar.update()


def first_difference(stored: list[dict], fresh: list[dict]) -> str | None:
    """The first field, in row order then column order, where a room's stored rows differ from its
    recomputed ones, as "row ID: FIELD is X, recomputed Y"; None when they are equal."""
    for mine, theirs in zip(stored, fresh):
        for name, value in theirs.items():
            if mine[name] != value:
                shown, recomputed = _shorten(repr(_plain(mine[name])), repr(_plain(value)))
                return f"row {mine['id']}: {name} is {shown}, recomputed {recomputed}"
    if len(stored) != len(fresh):
        room = (stored or fresh)[0]["room_id"]
        return f"room {room}: {len(stored)} rows of its configuration in the shard, recomputed {len(fresh)}"
    return None


class _Digest:
    """Stands for bytes in a mismatch message: an image is shown by its size and hash, not its bytes."""

    def __init__(self, data: bytes) -> None:
        self.text = f"<{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:12]}>"

    def __repr__(self) -> str:
        return self.text


def _plain(value: object) -> object:
    if isinstance(value, bytes):
        return _Digest(value)
    if isinstance(value, dict):
        return {key: _plain(part) for key, part in value.items()}
    if isinstance(value, list):
        return [_plain(part) for part in value]
    return value


def _shorten(mine: str, theirs: str) -> tuple[str, str]:
    """Both texts cut to SHOWN characters around where they first differ, so the difference shows."""
    if max(len(mine), len(theirs)) <= SHOWN:
        return mine, theirs
    first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
    start = max(0, first - SHOWN // 3)

    def cut(text: str) -> str:
        window = text[start:start + SHOWN]
        return ("…" if start else "") + window + ("…" if start + SHOWN < len(text) else "")

    return cut(mine), cut(theirs)


def check_nesting(out: Path, manifest: dict, report: ValidationReport) -> None:
    """Sort the smaller complete builds of the same seed beside `out` that share a configuration with it:
    nested where they equal our first rooms, row for row, in every configuration both have, else not
    nested, with the first configuration and room that differ. Neither makes `out` invalid: a folder
    beside it may be built from other scene files or by another version, another dataset; one that has
    none of our configurations is not looked at."""
    identity = manifest["identity"]
    for other in sorted(p for p in out.parent.iterdir() if p != out and (p / MANIFEST).exists()):
        smaller = read_manifest(other, complete=False)
        theirs = smaller["identity"]
        shared = sorted(set(build_configs(smaller)) & set(build_configs(manifest)))
        if (not smaller.get("complete") or theirs["seed"] != identity["seed"] or theirs["rooms"] >= identity["rooms"]
                or not shared):
            continue
        for config in shared:
            mine = config_table(out, manifest, config)
            prefix = mine.filter(pc.less(mine["room_index"], theirs["rooms"]))
            room = first_unequal_room(prefix, config_table(other, smaller, config))
            if room is not None:
                report.not_nested.append(f"{other.name} ({config} from room {room})")
                break
        else:
            report.nested.append(other.name)


def first_unequal_room(mine: pa.Table, theirs: pa.Table) -> str | None:
    """The room of the first row where two tables of the same rooms differ, None where they are equal."""
    if mine.equals(theirs):
        return None
    if mine.schema != theirs.schema:
        return f"{mine['room_id'][0].as_py()} (other columns)"
    for start in range(0, min(mine.num_rows, theirs.num_rows)):
        if not mine.slice(start, 1).equals(theirs.slice(start, 1)):
            return mine["room_id"][start].as_py()
    shorter = mine if mine.num_rows < theirs.num_rows else theirs
    longer = theirs if shorter is mine else mine
    return longer["room_id"][shorter.num_rows].as_py()


def config_table(out: Path, manifest: dict, config: str) -> pa.Table:
    return pa.concat_tables([table_questions(pq.read_table(path), config=config)
                             for path in shard_files(out, manifest, config)])


def validate(out: Path, scenes: Path = Path("scenes"), sample: int | None = None, seed: int = 0,
             progress: bool = False) -> ValidationReport:
    """Check the build in `out` (module docstring): `check_build`, then the rows of `sample` rooms
    (drawn with `seed`; by default every room up to SAMPLE_ROOMS) re-derived from the scene files in
    `scenes`, then the nesting of smaller builds beside it."""
    manifest = read_manifest(out)
    report = check_build(out, manifest)
    rooms = [k for part in identity_plan(out, manifest["identity"]).parts() for k in part.rooms]
    rederive(out, manifest, Path(scenes), sample_rooms(rooms, sample, seed), report, progress)
    check_nesting(out, manifest, report)
    return report
