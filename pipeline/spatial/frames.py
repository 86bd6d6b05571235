"""Frames of reference: the plan seen from above, and an observer standing in the room facing a wall.

A facing is one of the four walls, N, E, S or W. Turning the observer by a multiple of 90 degrees
only relabels relations (docs/semantics.md section 16): a direction or region code R of the plan
is said, by an observer facing f, with the words the north-facing view gives to
`turn(R, -quarters(f))`. Facing east, a thing north of you is on your left, one east of you in
front. Wall contact and distances do not depend on the frame. Turning a whole room (every cell,
every fact) turns every answer set the same way, so the checker answers in plan codes and the
answer is turned into the asked frame afterwards, as a set.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pipeline.errors import RoomspaceError
from pipeline.spatial.grid import Cell
from pipeline.spatial.relations import (direction_of_signs, direction_signs, in_canonical_order, kind,
                                        region_bands, region_of_bands)

FACINGS = ("N", "E", "S", "W")  # clockwise: the quarter-turns of each facing from north
TOP_DOWN = "top_down"  # the plan's frame: compass words, no observer
OBSERVER = "north_facing"  # the view whose words an observer uses, whatever their facing


def quarters(facing: str) -> int:
    """Quarter-turns clockwise from north: N 0, E 1, S 2, W 3."""
    try:
        return FACINGS.index(facing)
    except ValueError:
        raise RoomspaceError(f"unknown facing {facing!r}; expected one of {', '.join(FACINGS)}") from None


@cache
def turn(code: str, turns: int) -> str:
    """`code` turned `turns` quarter-turns clockwise: directions (O stays) and regions (the centre
    stays) turn with the room; wall contact and distances do not."""
    relation_kind = kind(code)
    if relation_kind == "direction":
        return direction_of_signs(_quarter_turned(direction_signs(code), turns))
    if relation_kind == "region":
        i, j = _quarter_turned(tuple(b - 1 for b in region_bands(code)), turns)  # offsets from the centre band
        return region_of_bands((i + 1, j + 1))
    return code


def _quarter_turned(offset: tuple[int, int], turns: int) -> tuple[int, int]:
    """An offset (di, dj) on the plan turned `turns` quarter-turns clockwise: north goes east."""
    i, j = offset
    for _ in range(turns % 4):
        i, j = j, -i
    return i, j


def seen_facing(code: str, facing: str) -> str:
    """The code whose north-facing words say plan code `code` to an observer facing `facing`."""
    return turn(code, -quarters(facing))


def on_plan(code: str, facing: str) -> str:
    """The plan code of what an observer facing `facing` calls `code` in north-facing words."""
    return turn(code, quarters(facing))


def seen_set(codes: Iterable[str], facing: str) -> tuple[str, ...]:
    """An answer set of plan codes as an observer facing `facing` says it, in canonical order."""
    return in_canonical_order(seen_facing(code, facing) for code in codes)


def turn_cell(cell: Cell, turns: int, d: int) -> Cell:
    """A cell of a d x d plan turned `turns` quarter-turns clockwise about the plan's centre."""
    i, j = cell
    for _ in range(turns % 4):
        i, j = j, d - 1 - i
    return (i, j)


def facing_between(first: str, second: str) -> int:
    """The angle in degrees between two facings, 0, 90 or 180 (a quarter-turn either way is 90)."""
    difference = (quarters(second) - quarters(first)) % 4
    return 90 * min(difference, 4 - difference)

