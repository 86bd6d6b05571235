"""Sampling: seeded ProcTHOR single-room houses and their scene records (docs/semantics.md section 1).

House k of global seed S is a pure function of (S, k):

* the room's generator seed is `room_seed(S, k, attempt)`, the first 4 bytes of a sha256 of a
  fixed text (never Python's `hash()`), and the room type is drawn uniformly from Kitchen,
  LivingRoom, Bedroom, Bathroom with another sha256 of (S, k);
* ProcTHOR's own `HouseGenerator` builds it from its one-room spec, through
  `generator.partial_house` with `interior_boundary = np.zeros((3, 3))` (a square of 3 x 3 cells
  scaled by ProcTHOR's `interior_boundary_scale`, about 4.8-6.6 m): floor plan, materials,
  lights, floor objects and asset groups, windows, TVs and paintings are ProcTHOR's;
* the door stage is pipeline.scene.procthor.south_door: one door centred on the south wall;
* Unity-only parts are handled by `pipeline.scene.procthor.offline_thor` (offline) or a real AI2-THOR
  controller pinned to `ai2thor.AI2THOR_COMMIT_ID` (`--controller ai2thor`, which restores the
  collision checks, the small objects and `House.validate`).

Determinism fixes, applied only while a house is sampled and undone afterwards:

* `PYTHONHASHSEED`. `procthor.generation.materials.randomize_wall_materials` draws one material
  per element of a `set` of strings (the room ids and "ceiling"), so the draw order, and the
  wall and ceiling materials, follow the per-process string hash. We chose a run-time patch
  over re-executing the interpreter with PYTHONHASHSEED=0: a re-exec only fixes the command
  line, while `sample_scene` is also called in-process by tests, benches and other stages
  (and by worker processes), and the patch makes every one of them byte-identical whatever the
  hash seed. The patch gives that module a `set` whose iteration is sorted (the module uses
  `set` for nothing else); for the one-room houses, sorted order ("ceiling", "room|2") is also
  the order PYTHONHASHSEED=0 gives, so files match the Makefile's `PYTHONHASHSEED=0` runs.
* File-system order. `procthor.databases._get_asset_groups` lists the asset-group folder with
  `os.listdir`, whose order depends on the file system, and that order becomes the row order of
  the table that `DataFrame.sample()` draws asset groups from. The patch sorts it by name, so a
  house does not depend on the machine.
* Cached state. `procthor.databases.get_spawnable_asset_group_info` is `lru_cache`d and draws
  from the global RNG on its first call: its cache is cleared before every house. The global
  `random` and `numpy.random` states that ProcTHOR seeds are saved and restored around each
  house, so sampling does not disturb the caller either.
* Other threads. Those global states, and the swaps above, are shared by every thread of the
  process, so a thread drawing from `random` or `numpy.random` while a house is sampled (a Dask
  worker's event loop does) changes the house. A process with other threads samples in a
  single-threaded helper process instead (pipeline.scene.procthor.single_threaded, which says why).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import random
import warnings
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import metadata
from typing import Any, NamedTuple

import numpy as np

import pipeline
from pipeline.errors import RoomspaceError
from pipeline.scene.objects import scene_objects
from pipeline.scene.procthor.ai2thor import AI2THOR_COMMIT_ID, ai2thor_controller
from pipeline.scene.procthor.single_threaded import run_single_threaded
from pipeline.scene.procthor.south_door import south_door_stage
from pipeline.scene.records import ROOM_TYPES, SOURCE_NAMES, Opening, Scene
from pipeline.scene.scene_file import FLOAT_DIGITS, dumps

ROOM_SPEC_IDS = {"Kitchen": "kitchen", "LivingRoom": "living-room", "Bedroom": "bedroom", "Bathroom": "bathroom"}
ASSET_SPLIT = "train"  # ProcTHOR's asset split used for every house
CONTROLLERS = ("offline", "ai2thor")
MIN_PROMINENT = 5  # the dataset draws n = 5 prominent objects per room
MAX_ATTEMPTS = 8  # attempts 0..7 per room before keeping the best one
SEED_DOMAIN = "roomspace/scenes/v1"  # part of every hashed text: change it and every house changes


def digest(*parts: object) -> bytes:
    text = "/".join([SEED_DOMAIN, *(str(p) for p in parts)])
    return hashlib.sha256(text.encode("utf-8")).digest()


def room_seed(seed: int, index: int, attempt: int = 0) -> int:
    """ProcTHOR's generator seed for house `index` of global seed `seed` (a 32-bit integer)."""
    return int.from_bytes(digest("room", seed, index, attempt)[:4], "big")


def room_type_for(seed: int, index: int) -> str:
    """The room type of house (seed, index): uniform over ROOM_TYPES, the same for all attempts."""
    return ROOM_TYPES[int.from_bytes(digest("room-type", seed, index)[:8], "big") % len(ROOM_TYPES)]



class _SortedSet(set):
    """A set that iterates in sorted order (see the module docstring, PYTHONHASHSEED)."""

    def __iter__(self):
        return iter(sorted(set.__iter__(self)))


@lru_cache(maxsize=None)  # one function per original, so pipeline.scene.procthor.fast_procthor can parse once
def _sorted_asset_groups(original):
    def get_asset_groups() -> dict:
        groups = original()
        return {name: groups[name] for name in sorted(groups)}

    return get_asset_groups


@contextlib.contextmanager
def _procthor_for_roomspace(floor_counts: list[int], offline: bool, stock_procthor: bool) -> Iterator[None]:
    """ProcTHOR with the door stage, the determinism fixes, pipeline.scene.procthor.fast_procthor's equivalents
    (unless `stock_procthor`) and (offline) no Unity stages."""
    import procthor.databases as databases
    import procthor.generation as generation
    import procthor.generation.materials as materials

    from pipeline.scene.procthor.fast_procthor import installed as fast_procthor_installed
    from pipeline.scene.procthor.offline_thor import offline_stages
    from pipeline.scene.procthor.patching import patched

    original_wall_objects = generation.add_wall_objects

    def add_wall_objects(*, partial_house, **kwargs):
        floor_counts.append(len(partial_house.objects))  # objects from here on are wall-hung ...
        result = original_wall_objects(partial_house=partial_house, **kwargs)
        floor_counts.append(len(partial_house.objects))  # ... up to here (small objects follow)
        return result

    saved_random, saved_numpy = random.getstate(), np.random.get_state()
    with contextlib.ExitStack() as stack:
        stack.enter_context(patched(generation, "add_doors", south_door_stage))
        stack.enter_context(patched(generation, "add_wall_objects", add_wall_objects))
        stack.enter_context(patched(materials, "set", _SortedSet))
        stack.enter_context(patched(databases, "_get_asset_groups", _sorted_asset_groups(databases._get_asset_groups)))
        if offline:
            stack.enter_context(offline_stages())
        if not stock_procthor:
            stack.enter_context(fast_procthor_installed())
        databases.get_spawnable_asset_group_info.cache_clear()
        try:
            yield
        finally:
            databases.get_spawnable_asset_group_info.cache_clear()
            random.setstate(saved_random)
            np.random.set_state(saved_numpy)


@lru_cache(maxsize=None)  # installed versions do not change while a process runs; reading them costs ms per house
def versions(controller: str = "offline") -> tuple[tuple[str, str], ...]:
    pairs = [("procthor", metadata.version("procthor")), ("ai2thor", metadata.version("ai2thor")), ("roomspace", pipeline.__version__)]
    if controller == "ai2thor":
        pairs.append(("ai2thor-build", AI2THOR_COMMIT_ID))
    return tuple(pairs)


def check_controller(controller: str) -> None:
    if controller not in CONTROLLERS:
        raise RoomspaceError(f"unknown controller {controller!r} (choose from {', '.join(CONTROLLERS)})")


def _generate(seed_value: int, room_type: str, controller: str, stock_procthor: bool) -> tuple[dict, set[str]]:
    """One ProcTHOR house (house JSON, ids of the wall-hung objects)."""
    from procthor.generation import PROCTHOR10K_ROOM_SPEC_SAMPLER, HouseGenerator
    from procthor.generation.house import HouseStructure, PartialHouse

    from pipeline.scene.procthor.offline_thor import OfflineController

    offline = controller == "offline"
    thor = OfflineController() if offline else ai2thor_controller()
    spec = PROCTHOR10K_ROOM_SPEC_SAMPLER[ROOM_SPEC_IDS[room_type]]
    floor_counts: list[int] = []
    with _procthor_for_roomspace(floor_counts, offline=offline, stock_procthor=stock_procthor), warnings.catch_warnings():
        # procthor's pandas idioms (inplace=True, ...) warn under pandas 3: not ours to fix
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"procthor(\.|$)")
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"procthor(\.|$)")
        generator = HouseGenerator(split=ASSET_SPLIT, seed=seed_value, room_spec=spec, controller=thor)
        # `sample(partial_house=...)` is broken (enum vs int); this is the path that works.
        generator.partial_house = PartialHouse(
            house_structure=HouseStructure(
                interior_boundary=np.zeros((3, 3), dtype=int),
                floorplan=None,
                rowcol_walls=None,
                boundary_groups=None,
                xz_poly_map=None,
                ceiling_height=None,
            ),
            room_spec=spec,
            procedural_parameters=None,
        )
        house, _ = generator.sample()
        if not offline:
            house.validate(thor)
    data = house.data
    first, end = floor_counts
    hung = {obj["id"] for obj in data["objects"][first:end]}
    return data, hung


def room_side(house: Mapping[str, Any]) -> float:
    """w of a house whose one room is the square [0, w]^2 (checked)."""
    rooms = house["rooms"]
    if len(rooms) != 1:
        raise RoomspaceError(f"expected a one-room house, got {len(rooms)} rooms")
    xs = [float(p["x"]) for p in rooms[0]["floorPolygon"]]
    zs = [float(p["z"]) for p in rooms[0]["floorPolygon"]]
    side = max(xs)
    corners = {(round(x, 6), round(z, 6)) for x, z in zip(xs, zs)}
    square = {(0.0, 0.0), (round(side, 6), 0.0), (0.0, round(side, 6)), (round(side, 6), round(side, 6))}
    if len(xs) != 4 or corners != square:
        raise RoomspaceError(f"the room is not a square at the origin: floor polygon {sorted(corners)}")
    return side


def _wall_name(p0: tuple[float, float], p1: tuple[float, float], side: float) -> str:
    (x0, z0), (x1, z1) = p0, p1
    tol = 1e-3
    if abs(z0 - z1) < tol:
        if abs(z0) < tol:
            return "south"
        if abs(z0 - side) < tol:
            return "north"
    if abs(x0 - x1) < tol:
        if abs(x0) < tol:
            return "west"
        if abs(x0 - side) < tol:
            return "east"
    raise RoomspaceError(f"wall {p0}-{p1} is not on the border of the room [0, {side}]^2")


def _openings(house: Mapping[str, Any], side: float) -> tuple[Opening, ...]:
    """Doors then windows: the wall-hole box along its wall, measured from the wall's first point."""
    walls = {w["id"]: w for w in house["walls"]}
    out = []
    for kind, entries in (("door", house.get("doors") or []), ("window", house.get("windows") or [])):
        for entry in entries:
            wall = walls[entry["wall0"]]
            a, b = wall["polygon"][0], wall["polygon"][1]
            p0, p1 = (float(a["x"]), float(a["z"])), (float(b["x"]), float(b["z"]))
            length = math.dist(p0, p1)
            ux, uz = (p1[0] - p0[0]) / length, (p1[1] - p0[1]) / length
            ends = sorted(
                (round(p0[0] + t * ux, FLOAT_DIGITS) + 0.0, round(p0[1] + t * uz, FLOAT_DIGITS) + 0.0)
                for t in (float(entry["boundingBox"]["min"]["x"]), float(entry["boundingBox"]["max"]["x"]))
            )
            out.append(Opening(kind=kind, wall=_wall_name(p0, p1, side), start=ends[0], end=ends[1]))
    return tuple(out)


def record(
    house: Mapping[str, Any], hung: set[str], seed: int, index: int, attempt: int, source: str, versions_: tuple
) -> Scene:
    side = round(room_side(house), FLOAT_DIGITS)
    return Scene(
        seed=seed,
        index=index,
        attempt=attempt,
        source=source,
        versions=versions_,
        room_type=house["rooms"][0]["roomType"],
        side=side,
        openings=_openings(house, side),
        objects=scene_objects(house["objects"], side, hung, ndigits=FLOAT_DIGITS),
    )


class SampledHouse(NamedTuple):
    """A house as `sample_house` returns it: its canonical ProcTHOR JSON, the canonical text of that JSON
    (`dumps(house)`, which a scene file holds: writers need not make it again) and its record."""

    house: dict
    text: str
    scene: Scene


def sample_scene(
    seed: int, index: int, controller: str = "offline", min_prominent: int = MIN_PROMINENT, stock_procthor: bool = False
) -> tuple[dict, Scene]:
    """House `index` of global seed `seed`: (ProcTHOR house JSON, record), as written to disk (`sample_house`)."""
    sampled = sample_house(seed, index, controller, min_prominent, stock_procthor)
    return sampled.house, sampled.scene


def sample_house(
    seed: int, index: int, controller: str = "offline", min_prominent: int = MIN_PROMINENT, stock_procthor: bool = False
) -> SampledHouse:
    """House `index` of global seed `seed`, with the text of its JSON.

    `stock_procthor` runs ProcTHOR's own code where pipeline.scene.procthor.fast_procthor has equivalents
    (the same houses, much slower; bench/scenes.py measures it): for tests and benchmarks.

    If the house has fewer than `min_prominent` prominent objects, it is resampled from
    (seed, index, attempt) for attempt = 1, 2, ... < MAX_ATTEMPTS, keeping the room type; the
    first attempt that reaches the minimum is kept, else the first attempt with the most
    prominent objects (downstream stages skip rooms that are still short). The house and the
    record are canonical: they equal what `load_house` / `load_scene` read back.
    """
    check_controller(controller)
    # MAX_ATTEMPTS is read here and passed on: a helper process has its own copy of this module.
    return run_single_threaded(_sample_here, seed, index, controller, min_prominent, stock_procthor, MAX_ATTEMPTS)


def _sample_here(
    seed: int, index: int, controller: str, min_prominent: int, stock_procthor: bool, max_attempts: int
) -> SampledHouse:
    """`sample_house` in this process: right only where no other thread runs (see run_single_threaded)."""
    room_type = room_type_for(seed, index)
    source = SOURCE_NAMES[controller]
    versions_ = versions(controller)
    best: SampledHouse | None = None
    for attempt in range(max_attempts):
        data, hung = _generate(room_seed(seed, index, attempt), room_type, controller, stock_procthor)
        text = dumps(data)
        house = json.loads(text)
        scene = record(house, hung, seed, index, attempt, source, versions_)
        if best is None or len(scene.prominent) > len(best.scene.prominent):
            best = SampledHouse(house, text, scene)
        if len(scene.prominent) >= min_prominent:
            break
    assert best is not None
    return best
