"""Re-checking a built folder: shards against the manifest, rows against the schema and the witness
invariant, and the nesting of smaller builds of the same seed that sit beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.dataset.manifest import MANIFEST, build_configs, read_manifest, shard_files
from pipeline.dataset.rows import arrow_schema, check_row
from pipeline.errors import RoomspaceError
from pipeline.files import file_sha256


@dataclass
class ValidationReport:
    out: Path
    shards: int = 0
    rows: int = 0
    nested: list[str] = field(default_factory=list)  # smaller builds found to be exact prefixes


def check_shards(out: Path, manifest: dict, report: ValidationReport) -> None:
    for entry in manifest["shards"].values():
        for path, expected in entry["files"].items():
            target = out / path
            if not target.exists():
                raise RoomspaceError(f"{target}: listed in the manifest but missing")
            if file_sha256(target) != expected["sha256"]:
                raise RoomspaceError(f"{target}: checksum differs from the manifest (damaged or edited)")
            table = pq.read_table(target)
            declared = arrow_schema(path.split("/")[1])
            if not table.schema.equals(declared, check_metadata=False):
                raise RoomspaceError(f"{target}: its columns are not the declared row schema")
            rows = table.to_pylist()
            if len(rows) != expected["rows"]:
                raise RoomspaceError(f"{target}: {len(rows)} rows, the manifest says {expected['rows']}")
            for row in rows:
                check_row(row)
            report.shards += 1
            report.rows += len(rows)


def check_nesting(out: Path, manifest: dict, report: ValidationReport) -> None:
    """Every smaller complete build of the same seed beside `out` must equal our first rooms, row for row."""
    identity = manifest["identity"]
    for other in sorted(p for p in out.parent.iterdir() if p != out and (p / MANIFEST).exists()):
        smaller = read_manifest(other, complete=False)
        theirs = smaller["identity"]
        if not smaller.get("complete") or theirs["seed"] != identity["seed"] or theirs["rooms"] >= identity["rooms"]:
            continue
        for config in sorted(set(build_configs(smaller)) & set(build_configs(manifest))):
            mine = config_table(out, manifest, config)
            prefix = mine.filter(pc.less(mine["room_index"], theirs["rooms"]))
            if not prefix.equals(config_table(other, smaller, config)):
                raise RoomspaceError(f"{other} ({config}) is not the first {theirs['rooms']} rooms of {out}")
        report.nested.append(other.name)


def config_table(out: Path, manifest: dict, config: str) -> pa.Table:
    return pa.concat_tables([pq.read_table(p) for p in shard_files(out, manifest, config)])


def validate(out: Path) -> ValidationReport:
    manifest = read_manifest(out)
    report = ValidationReport(out)
    check_shards(out, manifest, report)
    check_nesting(out, manifest, report)
    return report
