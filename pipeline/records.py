"""The records passed between stages: small, frozen, typed.

A scene file on disk holds ProcTHOR's house JSON and a `Scene` (as JSON, described by
schemas/scene.schema.json). Coordinates are metres in the world frame of design.md section 1:
x east, z north, the room the square [0, side] x [0, side].
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]


def room_id(seed: int, index: int) -> str:
    """The name of house `index` of global seed `seed`: its scene file's stem and its rows' room_id."""
    return f"s{seed}-{index:06d}"


@dataclass(frozen=True)
class SceneObject:
    id: str
    asset_id: str
    type: str  # ProcTHOR objectType, e.g. "DiningTable"
    x: float  # centre, metres east
    z: float  # centre, metres north
    yaw: float  # degrees in [0, 360), ProcTHOR's rotation about y: clockwise seen from above (yaw 90 turns the front, +z, to +x)
    size: tuple[float, float, float]  # bounding box in the asset's own frame: x width, y height, z depth
    footprint: tuple[Point, ...]  # the box's base rotated by yaw about the centre, counter-clockwise, not closed
    walls: tuple[str, ...]  # walls it touches within grid.WALL_TOLERANCE, e.g. ("north", "west"); () = NTPP
    wall_hung: bool  # placed on a wall by ProcTHOR's wall-objects stage (paintings, wall TVs)
    prominent: bool  # chosen by the prominence rule (pipeline/data/prominence.json)


@dataclass(frozen=True)
class Opening:
    kind: str  # "door" or "window"
    wall: str  # "south", "east", "north" or "west"
    start: Point  # ends of the opening along its wall, metres
    end: Point


@dataclass(frozen=True)
class Scene:
    seed: int  # the global seed S
    index: int  # k: the house is a pure function of (S, k)
    source: str  # "procthor-offline", "ai2thor" or "procthor-10k"
    versions: tuple[tuple[str, str], ...]  # (package, version) pairs that produced it
    room_type: str  # Kitchen, LivingRoom, Bedroom or Bathroom
    side: float  # w, metres
    openings: tuple[Opening, ...]  # the door first, then windows
    objects: tuple[SceneObject, ...]  # every top-level object, in ProcTHOR's order
    attempt: int = 0  # ProcTHOR was seeded from (seed, index, attempt); > 0 when resampled for prominent objects

    @property
    def room_id(self) -> str:
        return room_id(self.seed, self.index)

    @property
    def prominent(self) -> tuple[SceneObject, ...]:
        return tuple(o for o in self.objects if o.prominent)
