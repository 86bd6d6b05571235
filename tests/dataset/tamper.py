"""Tampering with a copy of a built folder, for the tests of `validate` and `push`.

`rewrite_rows` and `replace_shard` are the hostile edits: they re-list the edited file's sha256 and
row count in manifest.json, so that every checksum still passes and only the rows can tell.
"""

import dataclasses
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset.manifest import MANIFEST, Listed, read_manifest, shard_path, write_manifest
from pipeline.dataset.rows import write_parquet
from pipeline.files import file_sha256


def copy_build(built: Path, into: Path) -> Path:
    """A copy of the build folder `built` under `into`, alone there (no smaller builds beside it)."""
    return Path(shutil.copytree(built, into / built.name))


def _relist(out: Path, path: str) -> None:
    """The manifest's entry of `path` made to match the file as it now is."""
    manifest = read_manifest(out)
    for key, entry in manifest["shards"].items():
        if path in entry.files:
            listed = Listed(file_sha256(out / path), pq.read_metadata(out / path).num_rows)
            manifest["shards"][key] = dataclasses.replace(entry, files={**entry.files, path: listed})
    write_manifest(out, manifest)


def find_row(out: Path, path: str, wanted: Callable[[dict], bool]) -> dict:
    """The first row of the shard `path` (relative to `out`) that `wanted` accepts."""
    return next(row for row in pq.read_table(out / path).to_pylist() if wanted(row))


def only(row_id: str, **fields) -> Callable[[dict], dict]:
    """A change for `rewrite_rows`: `fields` replaced in the row `row_id`, every other row kept."""
    return lambda row: {**row, **fields} if row["id"] == row_id else row


def rewrite_rows(out: Path, path: str, change: Callable[[dict], dict]) -> None:
    """Every row of the shard `path` replaced by change(row), written with the file's schema and re-listed."""
    rows = [change(row) for row in pq.read_table(out / path).to_pylist()]
    write_parquet(pa.Table.from_pylist(rows, schema=pq.read_schema(out / path)), out / path)
    _relist(out, path)


def replace_shard(out: Path, config: str, source: int, target: int) -> None:
    """Shard `target` of `config` overwritten with the rows of shard `source`, and re-listed."""
    shutil.copyfile(out / shard_path(config, source), out / shard_path(config, target))
    _relist(out, shard_path(config, target))


def remove_shard_entry(out: Path, shard: int) -> None:
    manifest = read_manifest(out)
    del manifest["shards"][str(shard)]
    write_manifest(out, manifest)


def edit_identity_seed(out: Path, seed: int) -> None:
    manifest = read_manifest(out)
    manifest["identity"]["seed"] = seed
    write_manifest(out, manifest)


def add_unlisted_shard(out: Path, config: str) -> Path:
    """A copy of shard 0 of `config` as the next shard file, which the manifest does not list."""
    shards = sorted((out / "data" / config).glob("*.parquet"))
    extra = out / shard_path(config, len(shards))
    shutil.copyfile(shards[0], extra)
    return extra


def damage_shard(out: Path, path: str) -> None:
    """The last bytes of a shard overwritten, the manifest left as it was."""
    data = (out / path).read_bytes()
    (out / path).write_bytes(data[:-10] + b"0123456789")


def edit_card_count(out: Path, config: str, change: int) -> int:
    """`config`'s num_examples in the card's dataset_info changed by `change`; the new count."""
    card = out / "README.md"
    text = card.read_text(encoding="utf-8")
    entry = text.index(f"- config_name: {config}\n", text.index("dataset_info:"))
    count = re.compile(r"num_examples: (\d+)").search(text, entry)
    edited = int(count.group(1)) + change
    card.write_text(text[:count.start(1)] + str(edited) + text[count.end(1):], encoding="utf-8")
    return edited


def edit_manifest_json(out: Path, change: Callable[[dict], None]) -> None:
    """manifest.json as JSON, changed in place by `change` (a damaged manifest, which no record could hold)."""
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    change(manifest)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
