"""A finished build's rows, as the evaluation commands (prompts, score, run-model) read them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.build import MANIFEST
from pipeline.dataset import read_rows
from pipeline.errors import RoomspaceError
from pipeline.items import Config


def build_configs(out: Path) -> tuple[str, ...]:
    """The configuration names of a finished build; anything else is refused, naming the folder."""
    manifest = out / MANIFEST
    try:
        recorded = json.loads(manifest.read_text())
        configs, complete = tuple(recorded["identity"]["configs"]), recorded.get("complete") is True
    except (OSError, ValueError, KeyError, TypeError):
        raise RoomspaceError(f"{out} is not a roomspace build (no readable {MANIFEST})") from None
    if not complete:
        raise RoomspaceError(f"{out} is an unfinished build; re-run its build command first")
    return configs


def chosen_configs(out: Path, configs: str | None) -> tuple[str, ...]:
    """`configs` (comma-separated names) checked against the build; None means all of the build's."""
    available = build_configs(out)
    if configs is None:
        return available
    names = tuple(dict.fromkeys(Config.parse(part).name for part in configs.split(",") if part.strip()))
    if not names:
        raise RoomspaceError("no configuration given")
    for name in names:
        if name not in available:
            raise RoomspaceError(f"{out} has no configuration {name}; it has {', '.join(available)}")
    return names


def shard_paths(out: Path, config: str) -> list[Path]:
    return sorted((out / "data" / config).glob("*.parquet"))


def load_rows(out: Path, configs: str | None = None) -> list[dict]:
    """Every row of the chosen configurations, in build order (configuration, then room)."""
    return [row for name in chosen_configs(out, configs) for row in read_rows(shard_paths(out, name))]


def all_ids(out: Path) -> set[str]:
    """The id of every row of the build, of every configuration: reads only the id column."""
    return {i for name in build_configs(out) for path in shard_paths(out, name)
            for i in pq.read_table(path, columns=["id"]).column("id").to_pylist()}
