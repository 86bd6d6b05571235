"""The scene record: what the sampling stage hands to every later stage, small, frozen, typed.

A scene file on disk holds ProcTHOR's house JSON and a `Scene` (pipeline.scene.scene_file); the
file's JSON Schema is derived from these declarations (schemas/scene.schema.json is a generated
copy). Coordinates are metres in the world frame of docs/semantics.md section 1: x east, z north, the
room the square [0, side] x [0, side].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pipeline.typed_json import Rule

ROOM_TYPES = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
WALLS = ("south", "east", "north", "west")
SOURCE_NAMES = {"offline": "procthor-offline", "ai2thor": "ai2thor", "procthor-10k": "procthor-10k"}

Point = tuple[float, float]
Wall = Annotated[str, Rule(enum=list(WALLS))]
Name = Annotated[str, Rule(minLength=1)]
Length = Annotated[float, Rule(minimum=0)]
Count = Annotated[int, Rule(minimum=0)]
DOOR_FIRST = {"type": "object", "properties": {"kind": {"const": "door"}}}


def room_id(seed: int, index: int) -> str:
    """The name of house `index` of global seed `seed`: its scene file's stem and its rows' room_id."""
    return f"s{seed}-{index:06d}"


@dataclass(frozen=True)
class SceneObject:
    id: Name
    asset_id: Name
    type: Name  # ProcTHOR objectType, e.g. "DiningTable"
    x: float  # centre, metres east
    z: float  # centre, metres north
    # degrees in [0, 360), ProcTHOR's rotation about y: clockwise seen from above (yaw 90 turns the front, +z, to +x)
    yaw: Annotated[float, Rule(minimum=0, exclusiveMaximum=360)]
    size: tuple[Length, Length, Length]  # bounding box in the asset's own frame: x width, y height, z depth
    # the box's base rotated by yaw about the centre, counter-clockwise, not closed
    footprint: Annotated[tuple[Point, ...], Rule(minItems=4, maxItems=4)]
    # walls it touches within footprints.WALL_TOLERANCE, e.g. ("north", "west"); () = NTPP
    walls: Annotated[tuple[Wall, ...], Rule(uniqueItems=True, maxItems=4)]
    wall_hung: bool  # placed on a wall by ProcTHOR's wall-objects stage (paintings, wall TVs)
    prominent: bool  # chosen by the prominence rule (pipeline/data/prominence.json)


@dataclass(frozen=True)
class SmallObject:
    """A small object put on or in a room's furniture offline (pipeline.scene.small_objects)."""

    id: Name  # "small|<k>", in the order they were placed
    asset_id: Name
    type: Name  # ProcTHOR objectType, e.g. "Book"
    support: Name  # the id of what it rests on or is inside: a top-level object's or another small object's
    # the support's part it is on or in: a surface ("top", "seat", "lower middle shelf") or a closed
    # compartment ("top left drawer", "fridge"; "inside" for a box or a microwave); None on a small object's top
    part: str | None
    inside: bool  # inside the support's compartment (a drawer, a box), not resting on it
    level: Annotated[int, Rule(minimum=1, maximum=3)]  # 1 on or in the furniture, 2 on or in a level-1 object, 3
    x: float  # centre, metres east
    z: float  # centre, metres north
    y: Annotated[float, Rule(minimum=0)]  # bottom, metres above the floor
    yaw: Annotated[float, Rule(minimum=0, exclusiveMaximum=360)]  # as SceneObject.yaw
    size: tuple[Length, Length, Length]  # its bounding box as placed (a laptop shut): x width, y height, z depth
    closed: bool | None = None  # a box's lid or a microwave's door: shut or not; None for an object that does not open


@dataclass(frozen=True)
class Opening:
    kind: Annotated[str, Rule(enum=["door", "window"])]
    wall: Wall
    start: Point  # ends of the opening along its wall, metres
    end: Point


@dataclass(frozen=True)
class Scene:
    seed: int  # the global seed S
    index: Count  # k: the house is a pure function of (S, k)
    source: Annotated[str, Rule(enum=list(SOURCE_NAMES.values()))]
    versions: Annotated[tuple[tuple[str, str], ...], Rule(minItems=1)]  # (package, version) pairs that produced it
    room_type: Annotated[str, Rule(enum=list(ROOM_TYPES))]
    side: Annotated[float, Rule(exclusiveMinimum=0)]  # w, metres
    openings: Annotated[tuple[Opening, ...], Rule(minItems=1, prefixItems=[DOOR_FIRST])]  # the door, then windows
    objects: tuple[SceneObject, ...]  # every top-level object, in ProcTHOR's order
    attempt: Count = 0  # ProcTHOR was seeded from (seed, index, attempt); > 0 when resampled for prominent objects
    # small objects on and in its furniture (pipeline.scene.small_objects: `roomspace scenes --small-objects`);
    # None, and absent from the file, where the scene was written without them
    small_objects: tuple[SmallObject, ...] | None = None

    @property
    def room_id(self) -> str:
        return room_id(self.seed, self.index)

    @property
    def prominent(self) -> tuple[SceneObject, ...]:
        return tuple(o for o in self.objects if o.prominent)
