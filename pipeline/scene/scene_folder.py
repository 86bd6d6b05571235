"""A folder of scene files (`roomspace scenes`): houses 0..N-1 of a seed, sampled once, kept if valid."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pipeline.errors import RoomspaceError
from pipeline.files import writable_folder
from pipeline.parallel import ordered_map
from pipeline.scene.ai2thor import check_ai2thor_build
from pipeline.scene.procthor10k import import_prior, procthor10k_scene, procthor10k_single_rooms
from pipeline.scene.records import SOURCE_NAMES, Scene
from pipeline.scene.sampling import MIN_PROMINENT, check_controller, sample_scene
from pipeline.scene.scene_file import load_scene, scene_path, write_scene

SOURCES = ("procthor", "procthor-10k")


def _existing(path: Path, seed: int, index: int, source: str) -> Scene | None:
    """The valid scene of (seed, index, source) already at `path`, or None; errors name bad files."""
    if not path.exists():
        return None
    scene = load_scene(path)
    if scene.source != source:
        raise RoomspaceError(
            f"{path}: was sampled from source {scene.source!r}, not {source!r}; delete it or re-run with --force"
        )
    return scene


def ensure_scene(out: str | os.PathLike, seed: int, index: int, controller: str = "offline") -> Scene:
    """The record of house (seed, index) in folder `out`: read if there and valid, else sampled and written.

    For stages that need one scene at a time (the dataset build, in worker processes). A corrupt
    or foreign file is a RoomspaceError naming it, as in `sample_scenes`.
    """
    check_controller(controller)
    path = scene_path(out, seed, index)
    existing = _existing(path, seed, index, SOURCE_NAMES[controller])
    if existing is not None:
        return existing
    Path(out).mkdir(parents=True, exist_ok=True)
    house, scene = sample_scene(seed, index, controller=controller)
    write_scene(path, house, scene)
    return scene


def _sample_task(task: tuple) -> tuple[dict, Scene]:
    seed, index, controller, min_prominent = task
    return sample_scene(seed, index, controller=controller, min_prominent=min_prominent)


def sample_scenes(
    count: int,
    seed: int = 0,
    out: str | os.PathLike = "scenes",
    controller: str = "offline",
    source: str = "procthor",
    force: bool = False,
    progress: bool = True,
    min_prominent: int = MIN_PROMINENT,
    workers: int = 1,
    scheduler: str | None = None,
) -> list[Path]:
    """Sample houses 0..count-1 of global seed `seed` into `out`; the paths of all `count` files.

    Scenes already on disk and valid are kept (unless `force`); a corrupt or foreign file is an
    error that names it. Bad input fails before anything is sampled or written. Houses are
    sampled by `workers` processes (or on the Dask `scheduler`) and written in order.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise RoomspaceError(f"count must be a positive whole number, got {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RoomspaceError(f"seed must be a whole number, got {seed!r}")
    if source not in SOURCES:
        raise RoomspaceError(f"unknown source {source!r} (choose from {', '.join(SOURCES)})")
    check_controller(controller)
    if source == "procthor-10k" and controller != "offline":
        raise RoomspaceError("--controller applies to --source procthor only")
    # Fast checks of what is missing come first: nothing is created when they fail.
    if source == "procthor-10k":
        import_prior()
    elif controller == "ai2thor":
        check_ai2thor_build()
    out = Path(out)
    writable_folder(out)

    record_source = SOURCE_NAMES["procthor-10k" if source == "procthor-10k" else controller]
    paths = [scene_path(out, seed, k) for k in range(count)]
    todo = [k for k, path in enumerate(paths) if force or _existing(path, seed, k, record_source) is None]

    from tqdm import tqdm

    if source == "procthor-10k":
        houses = procthor10k_single_rooms(seed) if todo else []
        made = (procthor10k_scene(houses, seed, k) for k in todo)
    else:
        tasks = [(seed, k, controller, min_prominent) for k in todo]
        made = ordered_map(_sample_task, tasks, workers, scheduler)

    with tqdm(total=count, initial=count - len(todo), unit="room", desc="scenes", file=sys.stderr, disable=not progress) as bar:
        for k, (house, scene) in zip(todo, made):
            write_scene(paths[k], house, scene)
            bar.update(1)
    return paths

