"""A folder of scene files (`roomspace scenes`): houses 0..N-1 of a seed, sampled once, kept if valid."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from pipeline.errors import RoomspaceError
from pipeline.files import remove_stale_temporaries, writable_folder
from pipeline.parallel import ordered_map
from pipeline.scene.procthor.ai2thor import check_ai2thor_build
from pipeline.scene.procthor.procthor10k import import_prior, procthor10k_scene, procthor10k_single_rooms
from pipeline.scene.procthor.sampling import MIN_PROMINENT, SampledHouse, check_controller, sample_house
from pipeline.scene.records import SOURCE_NAMES, Scene
from pipeline.scene.scene_file import load_house, load_scene, scene_path, write_scene
from pipeline.scene.small_objects import with_small_objects

SOURCES = ("procthor", "procthor-10k")
MAX_SCENES = 10 ** 8  # a sane bound: refused before anything is made


def _existing(path: Path, source: str) -> Scene | None:
    """The valid scene of `source` already at `path`, or None; errors name bad files and their repair."""
    return load_scene(path, source) if path.exists() else None


def ensure_scene(out: str | os.PathLike, seed: int, index: int, controller: str = "offline") -> Scene:
    """The record of house (seed, index) in folder `out`: read if there and valid, else sampled and written.

    For stages that need one scene at a time (the dataset build, in worker processes). A corrupt
    or foreign file is a RoomspaceError naming it, as in `sample_scenes`.
    """
    check_controller(controller)
    path = scene_path(out, seed, index)
    existing = _existing(path, SOURCE_NAMES[controller])
    if existing is not None:
        return existing
    Path(out).mkdir(parents=True, exist_ok=True)
    house, house_text, scene = sample_house(seed, index, controller=controller)
    write_scene(path, house, scene, house_text)
    return scene


def _sample_task(task: tuple) -> SampledHouse:
    seed, index, controller, min_prominent = task
    return sample_house(seed, index, controller=controller, min_prominent=min_prominent)


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
    small_objects: bool = False,
) -> int:
    """Sample houses 0..count-1 of global seed `seed` into `out`; how many were sampled now.

    Scenes already on disk and valid are kept (unless `force`); a corrupt or foreign file is an
    error that names it. Bad input fails before anything is sampled or written. Houses are
    sampled by `workers` processes (or on the Dask `scheduler`) and written in order; which ones
    are missing is found as the work goes, so memory does not grow with `count`. With
    `small_objects`, every scene's record holds its small objects (pipeline.scene.small_objects):
    those sampled now are written with them, and a kept scene without them gets them, its house
    unchanged; without it, scene files are written exactly as before.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise RoomspaceError(f"count must be a positive whole number, got {count!r}")
    if count > MAX_SCENES:
        raise RoomspaceError(f"--count {count} is more than {MAX_SCENES} houses; sample in parts of at most that")
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
    remove_stale_temporaries(out)
    record_source = SOURCE_NAMES["procthor-10k" if source == "procthor-10k" else controller]

    from tqdm import tqdm

    with tqdm(total=count, unit="room", desc="scenes", file=sys.stderr, disable=not progress) as bar:

        def missing() -> Iterator[int]:
            for k in range(count):
                if force or _existing(scene_path(out, seed, k), record_source) is None:
                    yield k
                else:
                    bar.update(1)

        if source == "procthor-10k":
            made = _procthor10k_scenes(seed, missing())
        else:
            made = ordered_map(_sample_task, ((seed, k, controller, min_prominent) for k in missing()), workers,
                               scheduler)
        sampled = 0
        try:
            for house, house_text, scene in made:
                write_scene(scene_path(out, seed, scene.index), house,
                            with_small_objects(scene, house) if small_objects else scene, house_text)
                sampled += 1
                bar.update(1)
            if small_objects:
                add_small_objects(out, seed, count, record_source)
        except KeyboardInterrupt as stop:
            stop.kept = f"{sampled} scenes sampled now are kept in {out}"
            raise
    return sampled


def add_small_objects(out: Path, seed: int, count: int, source: str) -> int:
    """Give every scene 0..count-1 of `out` that has none its small objects (the house unchanged); how many."""
    added = 0
    for k in range(count):
        path = scene_path(out, seed, k)
        scene = load_scene(path, source)
        if scene.small_objects is None:
            house = load_house(path)
            write_scene(path, house, with_small_objects(scene, house))
            added += 1
    return added


def _procthor10k_scenes(seed: int, indices: Iterator[int]) -> Iterator[tuple[dict, None, Scene]]:
    """ProcTHOR-10K's houses for `indices` (no text at hand: None, as `write_scene` takes it), the set read
    (a download) only if one is needed."""
    houses = None
    for k in indices:
        houses = procthor10k_single_rooms(seed) if houses is None else houses
        house, scene = procthor10k_scene(houses, seed, k)
        yield house, None, scene
