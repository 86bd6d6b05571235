"""The main job: rooms -> scenes -> items -> rows -> Parquet shards and the dataset card.

Work is cut into shards of SHARD_ROOMS consecutive rooms. Each shard's files are written
atomically and recorded with their sha256 in manifest.json, so an interrupted build re-run with
the same command redoes only what is missing. Rooms are computed in worker processes but
collected in room order, so the bytes do not depend on the number of workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from tqdm import tqdm

from pipeline import __version__
from pipeline.dataset.card import dataset_card, merge, room_stats
from pipeline.dataset.manifest import MANIFEST, read_manifest, shard_files, shard_path, write_manifest
from pipeline.dataset.rows import arrow_schema, check_row, read_rows, to_row, write_parquet
from pipeline.dataset.vision import vision_config_name, vision_rows
from pipeline.errors import RoomspaceError
from pipeline.files import file_sha256, write_atomic
from pipeline.parallel import ordered_map
from pipeline.render.job import offline_images
from pipeline.scene.scene_file import load_house, scene_path
from pipeline.scene.scene_folder import ensure_scene
from pipeline.text.configs import Config
from pipeline.text.items import room_items
from pipeline.text.twins import twin_config_name, twin_items

SHARD_ROOMS = 100  # rooms per shard: the unit of atomic output and of resumption
EXAMPLES = (("o2_d2_layout", "top_down", "FR"), ("o2", "north_facing", "YN"), ("tpp", "north_facing", "FR"),
            ("rcc8", "top_down", "YN"))


@dataclass(frozen=True)
class BuildPlan:
    name: str
    seed: int
    rooms: int
    configs: tuple[Config, ...]
    shard_rooms: int = SHARD_ROOMS
    vision: tuple[Config, ...] = ()  # base configurations that also get a vision_<base> configuration
    twins: tuple[Config, ...] = ()  # base configurations that also get a name-swapped twin_<base> configuration

    def identity(self) -> dict:
        """What makes two builds the same build: a folder holding another identity is refused."""
        return {"name": self.name, "seed": self.seed, "rooms": self.rooms, "shard_rooms": self.shard_rooms,
                "configs": self.outputs, "roomspace": __version__}

    @property
    def outputs(self) -> list[str]:
        """Every configuration the build writes, in card order."""
        return ([c.name for c in self.configs] + [vision_config_name(c.name) for c in self.vision]
                + [twin_config_name(c.name) for c in self.twins])

    @property
    def shards(self) -> list[range]:
        size = self.shard_rooms
        return [range(first, min(first + size, self.rooms)) for first in range(0, self.rooms, size)]


@dataclass
class RoomResult:
    index: int
    tables: dict[str, pa.Table]  # a room's rows per output, made in the worker: cheap to send back
    stats: dict[str, dict]
    scene_seconds: float
    item_seconds: float


def room_job(seed: int, index: int, scenes_dir: Path, configs: tuple[Config, ...],
             vision: tuple[Config, ...] = (), twins: tuple[Config, ...] = ()) -> RoomResult:
    """Everything one room contributes: its scene (sampled if missing), then its rows per configuration."""
    start = time.perf_counter()
    scene = ensure_scene(scenes_dir, seed, index)
    sampled = time.perf_counter()
    items = {config: room_items(scene, config) for config in dict.fromkeys(configs + vision + twins)}
    rows = {config.name: [to_row(item) for item in items[config]] for config in configs}
    for config in twins:
        rows[twin_config_name(config.name)] = [to_row(item) for item in twin_items(items[config])]
    if vision:
        images = offline_images(scene, load_house(scene_path(scenes_dir, seed, index)))
        for config in vision:
            rows[vision_config_name(config.name)] = vision_rows(scene, items[config], images)
    stats = {}
    for name, config_rows in rows.items():
        for row in config_rows:
            check_row(row)
        stats[name] = room_stats(config_rows, scene.room_type, skipped=not config_rows)
    tables = {name: pa.Table.from_pylist(config_rows, schema=arrow_schema(name)) for name, config_rows in rows.items()}
    return RoomResult(index, tables, stats, sampled - start, time.perf_counter() - sampled)


def _room_job(args: tuple) -> RoomResult:
    return room_job(*args)


@dataclass
class BuildReport:
    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    rooms_built: int = 0
    scene_seconds: float = 0.0
    item_seconds: float = 0.0
    wall_seconds: float = 0.0


def check_folder(out: Path, plan: BuildPlan) -> dict:
    """The folder's manifest, new or resumed; another build or foreign files there are an error."""
    if (out / MANIFEST).exists():
        manifest = read_manifest(out, complete=False)
        identity = manifest["identity"]
        if identity != plan.identity():
            raise RoomspaceError(f"{out} holds a different build ({identity}); choose another --out or remove it")
        return manifest
    if out.exists() and any(out.iterdir()):
        raise RoomspaceError(f"{out} is not empty and holds no roomspace build; choose another --out")
    return {"identity": plan.identity(), "complete": False, "shards": {}}


def shard_done(out: Path, manifest: dict, plan: BuildPlan, shard: int) -> bool:
    entries = manifest["shards"].get(str(shard))
    if entries is None:
        return False
    return all((out / path).exists() and file_sha256(out / path) == entry["sha256"]
               for path, entry in entries["files"].items())


def build(plan: BuildPlan, scenes_dir: Path, out: Path, workers: int = 1, progress: bool = True,
          scheduler: str | None = None) -> BuildReport:
    """Build (or finish building) `plan` into `out`, with `workers` local processes or on the Dask
    scheduler at `scheduler`; the bytes written are the same either way."""
    started = time.perf_counter()
    manifest = check_folder(out, plan)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.rglob(".*.tmp"):  # left by a killed run; never listed in the manifest
        stale.unlink()
    report = BuildReport(out)
    shards = plan.shards
    todo = [s for s in range(len(shards)) if not shard_done(out, manifest, plan, s)]
    tasks = [(plan.seed, k, scenes_dir, plan.configs, plan.vision, plan.twins) for s in todo for k in shards[s]]
    pending: dict[int, list[RoomResult]] = {s: [] for s in todo}
    shard_of = {k: s for s in todo for k in shards[s]}
    with tqdm(total=plan.rooms, initial=plan.rooms - len(tasks), unit="room", desc=plan.name,
              disable=not progress, smoothing=0.1) as bar:
        for result in ordered_map(_room_job, tasks, workers, scheduler):
            shard = shard_of[result.index]
            pending[shard].append(result)
            report.rooms_built += 1
            report.scene_seconds += result.scene_seconds
            report.item_seconds += result.item_seconds
            bar.update()
            if len(pending[shard]) == len(shards[shard]):
                manifest["shards"][str(shard)] = write_shard(out, plan, shard, pending.pop(shard))
                write_manifest(out, manifest)
    finish(out, plan, manifest, report)
    report.wall_seconds = time.perf_counter() - started
    return report


def write_shard(out: Path, plan: BuildPlan, shard: int, results: list[RoomResult]) -> dict:
    files, stats = {}, {}
    for name in plan.outputs:
        table = pa.concat_tables([result.tables[name] for result in results]).combine_chunks()
        path = shard_path(name, shard)
        files[path] = {"sha256": write_parquet(table, out / path), "rows": table.num_rows}
        stats[name] = {}
        for result in results:
            merge(stats[name], result.stats[name])
    rooms = plan.shards[shard]
    return {"rooms": [rooms.start, rooms.stop], "files": files, "stats": stats}


def finish(out: Path, plan: BuildPlan, manifest: dict, report: BuildReport) -> None:
    """The card from the manifest's statistics; then the build is marked complete."""
    stats: dict[str, dict] = {name: {} for name in plan.outputs}
    for entry in manifest["shards"].values():
        for name, part in entry["stats"].items():
            merge(stats[name], part)
    report.rows = {name: s.get("rows", 0) for name, s in stats.items()}
    examples = []
    first_rows = read_rows(shard_files(out, manifest, plan.outputs[0])[:1])
    for setting, view, question_type in EXAMPLES:
        examples.extend([r for r in first_rows if (r["setting"], r["view"], r["question_type"]) ==
                         (setting, view, question_type)][:1])
    card = dataset_card(plan.name, plan.seed, plan.rooms, stats, examples)
    write_atomic(out / "README.md", lambda target: target.write_text(card, encoding="utf-8"))
    manifest["complete"] = True
    write_manifest(out, manifest)
