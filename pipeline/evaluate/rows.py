"""A finished build's rows, as the evaluation commands (prompts, score, run-model) read them."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from pipeline.dataset.manifest import build_configs, read_manifest, shard_files
from pipeline.errors import RoomspaceError
from pipeline.text.configs import Config


def chosen_configs(out: Path, configs: str | None) -> tuple[str, ...]:
    """`configs` (comma-separated names) checked against the build; None means all of the build's."""
    available = build_configs(read_manifest(out))
    if configs is None:
        return available
    names = tuple(dict.fromkeys(Config.parse(part).name for part in configs.split(",") if part.strip()))
    if not names:
        raise RoomspaceError("no configuration given")
    for name in names:
        if name not in available:
            raise RoomspaceError(f"{out} has no configuration {name}; it has {', '.join(available)}")
    return names


def load_rows(out: Path, configs: str | None = None) -> list[dict]:
    """Every row of the chosen configurations, in build order (configuration, then room)."""
    manifest = read_manifest(out)
    return [row for name in chosen_configs(out, configs) for path in shard_files(out, manifest, name)
            for row in pq.read_table(path).to_pylist()]


def all_ids(out: Path) -> set[str]:
    """The id of every row of the build, of every configuration: reads only the id column."""
    manifest = read_manifest(out)
    return {i for name in build_configs(manifest) for path in shard_files(out, manifest, name)
            for i in pq.read_table(path, columns=["id"]).column("id").to_pylist()}
