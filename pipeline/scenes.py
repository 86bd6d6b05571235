"""Scenes: seeded ProcTHOR single-room houses, one canonical JSON file each (design.md section 1).

House k of global seed S is a pure function of (S, k):

* the room's generator seed is `room_seed(S, k, attempt)`, the first 4 bytes of a sha256 of a
  fixed text (never Python's `hash()`), and the room type is drawn uniformly from Kitchen,
  LivingRoom, Bedroom, Bathroom with another sha256 of (S, k);
* ProcTHOR's own `HouseGenerator` builds it from its one-room spec, through
  `generator.partial_house` with `interior_boundary = np.zeros((3, 3))` (a square of 3 x 3 cells
  scaled by ProcTHOR's `interior_boundary_scale`, about 4.8-6.6 m): floor plan, materials,
  lights, floor objects and asset groups, windows, TVs and paintings are ProcTHOR's;
* the door stage is this module's `south_door_stage`: ProcTHOR's `add_doors` puts the one
  outdoor door of a single room at a random place on a random wall, and RoomSpace needs one
  door centred on the south wall (z = 0). It builds the door with ProcTHOR's own
  `ProceduralDoor` and door assets, so the house-JSON entry and the floor area kept free in
  front of it are exactly what ProcTHOR makes for an outdoor door; windows then avoid that wall
  (AI2-THOR cannot put a door and a window on one wall) and paintings avoid the door;
* Unity-only parts are handled by `pipeline.offline_thor` (offline) or a real AI2-THOR
  controller pinned to `AI2THOR_COMMIT_ID` (`--controller ai2thor`, which restores the
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

A scene file `OUT/{room_id}.json` is canonical JSON (sorted keys, floats rounded to
`FLOAT_DIGITS` decimals, no NaN, one trailing newline): {"record": Scene, "house": house JSON},
written atomically (temporary file in the same folder, then `os.replace`) and validated against
schemas/scene.schema.json on the way out and on the way in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import sys
import warnings
from collections import defaultdict
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

import pipeline
from pipeline.errors import RoomspaceError
from pipeline.files import writable_folder, write_atomic
from pipeline.objects import scene_objects
from pipeline.parallel import ordered_map
from pipeline.records import Opening, Scene, SceneObject, room_id

ROOM_TYPES = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
ROOM_SPEC_IDS = {"Kitchen": "kitchen", "LivingRoom": "living-room", "Bedroom": "bedroom", "Bathroom": "bathroom"}
SPLIT = "train"  # ProcTHOR's asset split used for every house
CONTROLLERS = ("offline", "ai2thor")
SOURCES = ("procthor", "procthor-10k")
SOURCE_NAMES = {"offline": "procthor-offline", "ai2thor": "ai2thor", "procthor-10k": "procthor-10k"}
MIN_PROMINENT = 5  # the dataset draws n = 5 prominent objects per room
MAX_ATTEMPTS = 8  # attempts 0..7 per room before keeping the best one
FLOAT_DIGITS = 6  # decimals kept in scene files
SEED_DOMAIN = "roomspace/scenes/v1"  # part of every hashed text: change it and every house changes

# AI2-THOR's Unity build for `--controller ai2thor`: the build ai2thor==5.0.0 ships with.
AI2THOR_COMMIT_ID = "f0825767cd50d69f666c7f282e54abfe58f1e917"
AI2THOR_PROBE_TIMEOUT = 3.0  # seconds to wait for the build server before giving up

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "scene.schema.json"


# --------------------------------------------------------------------------- seeds


def _digest(*parts: object) -> bytes:
    text = "/".join([SEED_DOMAIN, *(str(p) for p in parts)])
    return hashlib.sha256(text.encode("utf-8")).digest()


def room_seed(seed: int, index: int, attempt: int = 0) -> int:
    """ProcTHOR's generator seed for house `index` of global seed `seed` (a 32-bit integer)."""
    return int.from_bytes(_digest("room", seed, index, attempt)[:4], "big")


def room_type_for(seed: int, index: int) -> str:
    """The room type of house (seed, index): uniform over ROOM_TYPES, the same for all attempts."""
    return ROOM_TYPES[int.from_bytes(_digest("room-type", seed, index)[:8], "big") % len(ROOM_TYPES)]


def scene_path(out: str | os.PathLike, seed: int, index: int) -> Path:
    """Where house `index` of global seed `seed` is written in folder `out`."""
    return Path(out) / f"{room_id(seed, index)}.json"


# --------------------------------------------------------------------------- canonical JSON


def canonical(value: Any, ndigits: int = FLOAT_DIGITS) -> Any:
    """Plain JSON values with floats rounded to `ndigits` (numpy scalars and tuples included)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if not math.isfinite(number):
            raise RoomspaceError(f"cannot write a non-finite number ({number}) to a scene file")
        return round(number, ndigits) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(k): canonical(v, ndigits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v, ndigits) for v in value]
    if value is None:
        return None
    raise RoomspaceError(f"cannot write a {type(value).__name__} to a scene file")


def dumps(document: Any) -> str:
    """The canonical text of a JSON document: the same value always gives the same bytes."""
    return json.dumps(canonical(document), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- records <-> JSON


def scene_to_json(scene: Scene) -> dict:
    return {
        "seed": scene.seed,
        "index": scene.index,
        "attempt": scene.attempt,
        "source": scene.source,
        "versions": [list(pair) for pair in scene.versions],
        "room_type": scene.room_type,
        "side": scene.side,
        "openings": [
            {"kind": o.kind, "wall": o.wall, "start": list(o.start), "end": list(o.end)} for o in scene.openings
        ],
        "objects": [
            {
                "id": o.id,
                "asset_id": o.asset_id,
                "type": o.type,
                "x": o.x,
                "z": o.z,
                "yaw": o.yaw,
                "size": list(o.size),
                "footprint": [list(p) for p in o.footprint],
                "walls": list(o.walls),
                "wall_hung": o.wall_hung,
                "prominent": o.prominent,
            }
            for o in scene.objects
        ],
    }


def _point(values: list) -> tuple[float, float]:
    return (float(values[0]), float(values[1]))


def scene_from_json(data: Mapping[str, Any]) -> Scene:
    return Scene(
        seed=int(data["seed"]),
        index=int(data["index"]),
        attempt=int(data["attempt"]),
        source=str(data["source"]),
        versions=tuple((str(a), str(b)) for a, b in data["versions"]),
        room_type=str(data["room_type"]),
        side=float(data["side"]),
        openings=tuple(
            Opening(kind=o["kind"], wall=o["wall"], start=_point(o["start"]), end=_point(o["end"]))
            for o in data["openings"]
        ),
        objects=tuple(
            SceneObject(
                id=o["id"],
                asset_id=o["asset_id"],
                type=o["type"],
                x=float(o["x"]),
                z=float(o["z"]),
                yaw=float(o["yaw"]),
                size=tuple(float(s) for s in o["size"]),
                footprint=tuple(_point(p) for p in o["footprint"]),
                walls=tuple(o["walls"]),
                wall_hung=bool(o["wall_hung"]),
                prominent=bool(o["prominent"]),
            )
            for o in data["objects"]
        ),
    )


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except OSError as error:
        raise RoomspaceError(f"scene schema missing: {SCHEMA_PATH} ({error.strerror})") from None
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_errors(document: Any) -> list[str]:
    """Every way `document` breaks schemas/scene.schema.json (empty if it is a valid scene file)."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


def load_scene(path: str | os.PathLike) -> Scene:
    """The record of a scene file, validated; a broken or foreign file is a RoomspaceError."""
    return _load_document(Path(path))[0]


def load_house(path: str | os.PathLike) -> dict:
    """The ProcTHOR house JSON of a scene file, validated like `load_scene`."""
    return _load_document(Path(path))[1]


def _load_document(path: Path) -> tuple[Scene, dict]:
    hint = "delete it or re-run with --force to resample it"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RoomspaceError(f"{path}: not a scene file (not UTF-8 text); {hint}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise RoomspaceError(f"{path}: truncated or corrupt scene file (bad JSON: {error.msg} at line {error.lineno}); {hint}") from None
    problems = schema_errors(document)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RoomspaceError(f"{path}: not a roomspace scene file ({problems[0]}{more}); {hint}")
    scene = scene_from_json(document["record"])
    if path.name != f"{scene.room_id}.json":
        raise RoomspaceError(f"{path}: holds scene {scene.room_id}, not the one its name says; {hint}")
    return scene, document["house"]


# --------------------------------------------------------------------------- ProcTHOR, patched


class _SortedSet(set):
    """A set that iterates in sorted order (see the module docstring, PYTHONHASHSEED)."""

    def __iter__(self):
        return iter(sorted(set.__iter__(self)))


@lru_cache(maxsize=None)  # one function per original, so pipeline.fast_procthor can parse once
def _sorted_asset_groups(original):
    def get_asset_groups() -> dict:
        groups = original()
        return {name: groups[name] for name in sorted(groups)}

    return get_asset_groups


def south_door_stage(partial_house, split: str) -> dict[int, list]:
    """ProcTHOR door stage for one room: one outdoor door centred on the south wall (z = 0).

    Replaces `procthor.generation.doors.add_doors` (same arguments, same result: the polygons
    each room keeps free for the door). The door asset is drawn from ProcTHOR's doorways of the
    split that fit the wall; the door is built by ProcTHOR's `ProceduralDoor` as an outdoor,
    closed door (as ProcTHOR makes outdoor doors), with its wall-hole box centred on the wall.
    """
    from procthor.constants import OUTDOOR_ROOM_ID
    from procthor.databases import asset_database, wall_holes
    from procthor.generation.doors import PADDING_IN_FRONT_OF_DOOR, PREFERRED_ENTRANCE_PADDING, ProceduralDoor
    from procthor.utils.types import BoundingBox, Vector3

    rooms = list(partial_house.room_spec.room_type_map)
    if len(rooms) != 1:
        raise RoomspaceError(f"the south-door stage makes one-room houses, got rooms {rooms}")
    room = rooms[0]
    boundary = partial_house.house_structure.boundary_groups[(min(room, OUTDOOR_ROOM_ID), max(room, OUTDOOR_ROOM_ID))]
    min_z = min(min(z0, z1) for (_, z0), (_, z1) in boundary)
    south = [((x0, z0), (x1, z1)) for (x0, z0), (x1, z1) in boundary if z0 == z1 == min_z]
    if len(south) != 1:
        raise RoomspaceError(f"expected one south wall, got {south}")
    (x0, z0), (x1, _) = south[0]
    min_x, max_x = min(x0, x1), max(x0, x1)
    wall_size = max_x - min_x
    wall_position_id = f"{min_x:.2f}|{z0:.2f}|{max_x:.2f}|{z0:.2f}"
    wall = next(w for w in partial_house.walls if w["id"] == f"wall|{room}|{wall_position_id}")

    doorways = [
        d
        for d in asset_database["Doorway"]
        if d["split"] == split and d["states"]["open"]["boundingBox"]["x"] < wall_size
    ]
    if not doorways:
        raise RoomspaceError(f"no ProcTHOR doorway fits a {wall_size:.2f} m wall")
    asset = random.choice(doorways)
    width = asset["boundingBox"]["x"]
    # The house JSON stores the box shifted by the hole's offset: centre that stored box.
    offset_x = wall_holes[asset["assetId"]]["offset"]["x"]
    start = (wall_size - width) / 2 + offset_x
    door = ProceduralDoor(
        room_0_id=room,
        room_1_id=OUTDOOR_ROOM_ID,
        wall_0=wall,
        wall_1=None,
        wall_position_id=wall_position_id,
        bounding_box=BoundingBox(
            min=Vector3(x=start, y=0, z=0),
            max=Vector3(x=start + width, y=asset["boundingBox"]["y"], z=0),
        ),
        door_width=width,
        door_open_size=asset["states"]["open"]["boundingBox"]["z"],
        start_door_position=start,
        min_x_wall=min_x,
        max_x_wall=max_x,
        min_z_wall=z0,
        max_z_wall=z0,
        asset_id=asset["assetId"],
        is_open=False,
    )
    partial_house.doors = [door.asdict()]
    keep_free = door.polygon(entrance_padding=PREFERRED_ENTRANCE_PADDING, in_front_padding=PADDING_IN_FRONT_OF_DOOR)
    polygons = defaultdict(list)
    for room_id_ in (room, OUTDOOR_ROOM_ID):  # as ProcTHOR's add_door_meta does
        polygons[room_id_].append(keep_free)
    return polygons


@contextlib.contextmanager
def _procthor_for_roomspace(floor_counts: list[int], offline: bool, stock_procthor: bool) -> Iterator[None]:
    """ProcTHOR with the door stage, the determinism fixes, pipeline.fast_procthor's equivalents
    (unless `stock_procthor`) and (offline) no Unity stages."""
    import procthor.databases as databases
    import procthor.generation as generation
    import procthor.generation.materials as materials

    from pipeline.fast_procthor import installed as fast_procthor_installed
    from pipeline.offline_thor import offline_stages
    from pipeline.patching import patched

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


def versions(controller: str = "offline") -> tuple[tuple[str, str], ...]:
    pairs = [("procthor", metadata.version("procthor")), ("ai2thor", metadata.version("ai2thor")), ("roomspace", pipeline.__version__)]
    if controller == "ai2thor":
        pairs.append(("ai2thor-build", AI2THOR_COMMIT_ID))
    return tuple(pairs)


# --------------------------------------------------------------------------- controllers


def check_ai2thor_build() -> None:
    """Fail at once, in one line, if the pinned Unity build is neither local nor downloadable."""
    try:
        from ai2thor.build import Build
        from ai2thor.platform import CloudRendering, Linux64, OSXIntel64
    except ImportError as error:
        raise RoomspaceError(f"--controller ai2thor needs the ai2thor package ({error})") from None
    releases = Path.home() / ".ai2thor" / "releases"
    platforms = (OSXIntel64,) if sys.platform == "darwin" else (CloudRendering, Linux64)
    builds = [Build(p, AI2THOR_COMMIT_ID, False, releases_dir=str(releases)) for p in platforms]
    if any(os.path.isfile(b.executable_path) for b in builds):
        return
    import requests

    reason = "not reachable"
    for build in builds:
        try:
            response = requests.head(build.url, timeout=AI2THOR_PROBE_TIMEOUT, allow_redirects=True)
        except requests.RequestException as error:
            reason = f"not reachable: {type(error).__name__}"
            continue
        if response.status_code == 200:
            return
        reason = f"HTTP {response.status_code}"
    raise RoomspaceError(
        f"--controller ai2thor needs the AI2-THOR Unity build {AI2THOR_COMMIT_ID[:12]}, which is not in "
        f"{releases} and could not be downloaded ({reason}); use --controller offline"
    )


@lru_cache(maxsize=1)
def _ai2thor_controller():
    check_ai2thor_build()
    try:
        from ai2thor.controller import Controller
        from procthor.constants import PROCTHOR_INITIALIZATION

        init = {k: v for k, v in PROCTHOR_INITIALIZATION.items() if k != "branch"}
        return Controller(commit_id=AI2THOR_COMMIT_ID, quality="Low", **init)
    except Exception as error:  # the Unity process failed to start: say so in one line
        raise RoomspaceError(f"--controller ai2thor: could not start the Unity build ({type(error).__name__}: {error})") from None


def _check_controller(controller: str) -> None:
    if controller not in CONTROLLERS:
        raise RoomspaceError(f"unknown controller {controller!r} (choose from {', '.join(CONTROLLERS)})")


# --------------------------------------------------------------------------- sampling


def _generate(seed_value: int, room_type: str, controller: str, stock_procthor: bool) -> tuple[dict, set[str]]:
    """One ProcTHOR house (house JSON, ids of the wall-hung objects)."""
    from procthor.generation import PROCTHOR10K_ROOM_SPEC_SAMPLER, HouseGenerator
    from procthor.generation.house import HouseStructure, PartialHouse

    from pipeline.offline_thor import OfflineController

    offline = controller == "offline"
    thor = OfflineController() if offline else _ai2thor_controller()
    spec = PROCTHOR10K_ROOM_SPEC_SAMPLER[ROOM_SPEC_IDS[room_type]]
    floor_counts: list[int] = []
    with _procthor_for_roomspace(floor_counts, offline=offline, stock_procthor=stock_procthor), warnings.catch_warnings():
        # procthor's pandas idioms (inplace=True, ...) warn under pandas 3: not ours to fix
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"procthor(\.|$)")
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"procthor(\.|$)")
        generator = HouseGenerator(split=SPLIT, seed=seed_value, room_spec=spec, controller=thor)
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


def _room_side(house: Mapping[str, Any]) -> float:
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


def _record(
    house: Mapping[str, Any], hung: set[str], seed: int, index: int, attempt: int, source: str, versions_: tuple
) -> Scene:
    side = round(_room_side(house), FLOAT_DIGITS)
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


def sample_scene(
    seed: int, index: int, controller: str = "offline", min_prominent: int = MIN_PROMINENT, stock_procthor: bool = False
) -> tuple[dict, Scene]:
    """House `index` of global seed `seed`: (ProcTHOR house JSON, record), as written to disk.

    `stock_procthor` runs ProcTHOR's own code where pipeline.fast_procthor has equivalents
    (the same houses, much slower; bench/scenes.py measures it): for tests and benchmarks.

    If the house has fewer than `min_prominent` prominent objects, it is resampled from
    (seed, index, attempt) for attempt = 1, 2, ... < MAX_ATTEMPTS, keeping the room type; the
    first attempt that reaches the minimum is kept, else the first attempt with the most
    prominent objects (downstream stages skip rooms that are still short). Both returned
    values are canonical: they equal what `load_house` / `load_scene` read back.
    """
    _check_controller(controller)
    room_type = room_type_for(seed, index)
    source = SOURCE_NAMES[controller]
    versions_ = versions(controller)
    best: tuple[dict, Scene] | None = None
    for attempt in range(MAX_ATTEMPTS):
        data, hung = _generate(room_seed(seed, index, attempt), room_type, controller, stock_procthor)
        house = json.loads(dumps(data))
        scene = _record(house, hung, seed, index, attempt, source, versions_)
        if best is None or len(scene.prominent) > len(best[1].prominent):
            best = (house, scene)
        if len(scene.prominent) >= min_prominent:
            break
    assert best is not None
    return best


def scene_document(house: dict, scene: Scene) -> dict:
    return {"record": scene_to_json(scene), "house": house}


def write_scene(path: Path, house: dict, scene: Scene) -> None:
    """Write one scene file atomically, after checking it against the schema."""
    document = json.loads(dumps(scene_document(house, scene)))
    problems = schema_errors(document)
    if problems:
        raise RoomspaceError(f"scene {scene.room_id} breaks the scene schema: {problems[0]}")
    write_atomic(path, lambda target: target.write_text(dumps(document), encoding="utf-8", newline="\n"))


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
    _check_controller(controller)
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
    _check_controller(controller)
    if source == "procthor-10k" and controller != "offline":
        raise RoomspaceError("--controller applies to --source procthor only")
    # Fast checks of what is missing come first: nothing is created when they fail.
    if source == "procthor-10k":
        _import_prior()
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


# --------------------------------------------------------------------------- ProcTHOR-10K


def _import_prior():
    try:
        import prior  # optional: imported only for this source
    except ImportError:
        raise RoomspaceError(
            "--source procthor-10k needs the 'prior' package, which is not installed "
            "(pip install prior; it also needs network access to download ProcTHOR-10K)"
        ) from None
    return prior


def procthor10k_single_rooms(seed: int) -> list[dict]:
    """The single-room houses of ProcTHOR-10K that are squares at the origin, in an order seeded by `seed`.

    Reads the published set through `prior` (not a dependency of roomspace: `pip install prior`;
    it downloads the set, so it needs the network). Its houses keep ProcTHOR's own door, which
    is not necessarily centred on the south wall.
    """
    prior = _import_prior()
    try:
        dataset = prior.load_dataset("procthor-10k")
    except Exception as error:  # prior raises many kinds of network and git errors
        raise RoomspaceError(
            f"--source procthor-10k: prior could not load ProcTHOR-10K ({type(error).__name__}: {error}); it needs network access"
        ) from None
    rooms = []
    for split in ("train", "val", "test"):
        for position, house in enumerate(dataset[split]):
            if isinstance(house, str | bytes):
                house = json.loads(house)
            if len(house.get("rooms", ())) != 1:
                continue
            try:
                _room_side(house)
            except RoomspaceError:
                continue
            rooms.append((_digest("procthor-10k", seed, split, position), house))
    rooms.sort(key=lambda pair: pair[0])
    return [house for _, house in rooms]


def _hung_on_wall(house: Mapping[str, Any]) -> set[str]:
    """Objects ProcTHOR hung on a wall, recognised without its stage boundaries: well off the floor, not on top of anything."""
    from pipeline.objects import asset_info, load_rule

    hung = set()
    for obj in house["objects"]:
        object_type, size = asset_info(obj["assetId"])
        if object_type in load_rule().wall_hung_types and float(obj["position"]["y"]) > size[1] / 2 + 0.3:
            hung.add(obj["id"])
    return hung


def procthor10k_scene(houses: list[dict], seed: int, index: int) -> tuple[dict, Scene]:
    if index >= len(houses):
        raise RoomspaceError(f"ProcTHOR-10K has only {len(houses)} square single-room houses, asked for house {index}")
    house = json.loads(dumps(houses[index]))
    versions_ = (*versions("offline"), ("procthor-10k", "prior"))
    return house, _record(house, _hung_on_wall(house), seed, index, 0, SOURCE_NAMES["procthor-10k"], versions_)
