"""A build folder's manifest.json: the one reader and writer, and where each shard lives.

The manifest records the build's identity (what makes two builds the same build), every shard
written so far with its files' sha256 and row counts and its statistics, and whether the build
is complete. Readers that only need the listing (the evaluation commands) import this module
alone: it needs neither the builder nor the row schemas.
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.errors import RoomspaceError
from pipeline.files import write_json

MANIFEST = "manifest.json"
DATASET_SPLIT = "test"  # a benchmark: every row is for evaluation


def shard_path(config: str, shard: int) -> str:
    """Where shard `shard` of configuration `config` lives, relative to the build folder."""
    return f"data/{config}/{DATASET_SPLIT}-{shard:05d}.parquet"


def read_manifest(out: Path, complete: bool = True) -> dict:
    """The manifest of the build in `out`; with `complete`, an unfinished build is refused too."""
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        manifest["identity"]["rooms"], manifest["identity"]["configs"], manifest["shards"]
    except (OSError, ValueError, KeyError, TypeError):
        raise RoomspaceError(f"{out} is not a roomspace build (no readable {MANIFEST})") from None
    if complete and manifest.get("complete") is not True:
        raise RoomspaceError(f"{out} is an unfinished build; re-run its build command to complete it")
    return manifest


def write_manifest(out: Path, manifest: dict) -> None:
    write_json(out / MANIFEST, manifest)


def build_configs(manifest: dict) -> tuple[str, ...]:
    """Every configuration the build writes, in card order."""
    return tuple(manifest["identity"]["configs"])


def shard_files(out: Path, manifest: dict, config: str) -> list[Path]:
    """The Parquet files of one configuration, in shard order, as the manifest lists them."""
    prefix = f"data/{config}/"
    return [out / path for _, entry in sorted(manifest["shards"].items(), key=lambda item: int(item[0]))
            for path in entry["files"] if path.startswith(prefix)]
