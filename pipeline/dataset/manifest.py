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
DATASET_SPLIT = "test"  # the benchmark: what evaluation reads unless told otherwise
TRAINING_SPLITS = ("train", "validation")  # optional, of rooms disjoint from the test rooms (pipeline.dataset.build)
SPLITS = (*TRAINING_SPLITS, DATASET_SPLIT)  # card order


def shard_path(config: str, shard: int, split: str = DATASET_SPLIT) -> str:
    """Where shard `shard` of `split` of configuration `config` lives, relative to the build folder."""
    return f"data/{config}/{split}-{shard:05d}.parquet"


def shard_key(split: str, shard: int) -> str:
    """A shard's key in the manifest: its number for a test shard (as builds without training splits
    have always written it), "train-3" for a training split's."""
    return str(shard) if split == DATASET_SPLIT else f"{split}-{shard}"


def key_split(key: str) -> tuple[str, int]:
    """(split, shard) of a manifest key: `shard_key` undone."""
    split, _, shard = key.rpartition("-")
    return split or DATASET_SPLIT, int(shard)


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


def build_splits(manifest: dict) -> tuple[str, ...]:
    """The splits the build writes, in card order: the test split, and the training splits its identity
    gives rooms (`train_rooms`, `validation_rooms`)."""
    identity = manifest["identity"]
    return tuple(split for split in SPLITS if split == DATASET_SPLIT or identity.get(f"{split}_rooms"))


def shard_files(out: Path, manifest: dict, config: str, split: str = DATASET_SPLIT) -> list[Path]:
    """The Parquet files of one configuration and split, in shard order, as the manifest lists them."""
    prefix = f"data/{config}/"
    entries = sorted((key_split(key)[1], entry) for key, entry in manifest["shards"].items()
                     if key_split(key)[0] == split)
    return [out / path for _, entry in entries for path in entry["files"] if path.startswith(prefix)]


def listed_checksums(out: Path, manifest: dict) -> dict[Path, str]:
    """Every file the manifest lists (under `out`) -> its sha256 as listed."""
    return {out / path: listed["sha256"] for entry in manifest["shards"].values()
            for path, listed in entry["files"].items()}
