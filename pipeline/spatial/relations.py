"""Relation codes, their meaning on the grid and their words, read from pipeline/data/relations.json.

Four kinds of relation (docs/semantics.md section 4):
- direction: binary, cardinal direction calculus on cells, "A is <code> of B";
- region: unary, which of the 3 x 3 bands of the room a cell lies in;
- wall: unary, TPP (a border cell) or NTPP;
- distance: binary and symmetric, between cell centres in cell units, on the D2 or D3 scale.
Every comparison is on integers, so thresholds are exact and inclusive.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from pipeline.errors import RoomspaceError
from pipeline.scene.records import Point
from pipeline.spatial.grid import Cell, is_border

_TABLE = json.loads(files("pipeline").joinpath("data/relations.json").read_text(encoding="utf-8"))
_BY_CODE = {entry["code"]: entry for entry in _TABLE["codes"]}

VIEWS: tuple[str, ...] = tuple(_TABLE["views"])


def _codes(kind: str) -> tuple[str, ...]:
    return tuple(e["code"] for e in _TABLE["codes"] if e["kind"] == kind)


DIRECTIONS = _codes("direction")  # the canonical order of answer sets
REGIONS = _codes("region")
WALL_CONTACT = _codes("wall")
DISTANCES = _codes("distance")
DISTANCE_SCALES: tuple[str, ...] = tuple(dict.fromkeys(_BY_CODE[c]["scale"] for c in DISTANCES))
BINARY_CODES = DIRECTIONS + DISTANCES
UNARY_CODES = REGIONS + WALL_CONTACT

_DIRECTION_OF_SIGNS = {tuple(_BY_CODE[c]["signs"]): c for c in DIRECTIONS}
COMPASS = tuple(c for c in DIRECTIONS if tuple(_BY_CODE[c]["signs"]) != (0, 0))  # the eight points, clockwise from N
_REGION_OF_BANDS = {tuple(_BY_CODE[c]["bands"]): c for c in REGIONS}
_WALL_OF_BORDER = {_BY_CODE[c]["border"]: c for c in WALL_CONTACT}
_SCALE_CODES = {s: tuple(c for c in DISTANCES if _BY_CODE[c]["scale"] == s) for s in DISTANCE_SCALES}

# The table must define each relation of a kind exactly once: a gap would leave some cell
# pair without a relation, a repeat would make two relations overlap.
_SIGN_PAIRS = {(si, sj) for si in (-1, 0, 1) for sj in (-1, 0, 1)}
_BAND_PAIRS = {(bi, bj) for bi in range(3) for bj in range(3)}
assert len(_DIRECTION_OF_SIGNS) == len(DIRECTIONS) and set(_DIRECTION_OF_SIGNS) == _SIGN_PAIRS
assert len(_REGION_OF_BANDS) == len(REGIONS) and set(_REGION_OF_BANDS) == _BAND_PAIRS
assert set(_WALL_OF_BORDER) == {True, False} and len(WALL_CONTACT) == 2
assert all(_BY_CODE[codes[-1]]["within"] is None for codes in _SCALE_CODES.values())


def in_canonical_order(directions: Iterable[str]) -> tuple[str, ...]:
    """A set of directions listed in the order of DIRECTIONS, as answer sets are shown."""
    chosen = set(directions)
    unknown = chosen - set(DIRECTIONS)
    if unknown:
        raise RoomspaceError(f"not directions: {sorted(unknown)}")
    return tuple(c for c in DIRECTIONS if c in chosen)


def _entry(code: str) -> dict:
    try:
        return _BY_CODE[code]
    except (KeyError, TypeError):
        raise RoomspaceError(f"unknown relation code {code!r}") from None


@cache  # this and the lookups below are asked for tens of thousands of times per room
def kind(code: str) -> str:
    """"direction", "region", "wall" or "distance"."""
    return _entry(code)["kind"]


def is_binary(code: str) -> bool:
    """Directions and distances relate two objects; regions and wall contact describe one."""
    return kind(code) in ("direction", "distance")


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def direction(cell_a: Cell, cell_b: Cell) -> str:
    """The direction of A relative to B: A is NE of B when i_a > i_b and j_a > j_b."""
    return _DIRECTION_OF_SIGNS[(_sign(cell_a[0] - cell_b[0]), _sign(cell_a[1] - cell_b[1]))]


def direction_of_points(pa: Point, pb: Point, eps: float = 1e-6) -> str:
    """The direction of A relative to B for centres in metres; within eps on an axis counts as equal."""

    def axis(delta: float) -> int:
        return 0 if abs(delta) <= eps else _sign(delta)

    return _DIRECTION_OF_SIGNS[(axis(pa[0] - pb[0]), axis(pa[1] - pb[1]))]


def direction_signs(code: str) -> tuple[int, int]:
    """(sign of i_A - i_B, sign of j_A - j_B) for "A is <code> of B"."""
    entry = _entry(code)
    if entry["kind"] != "direction":
        raise RoomspaceError(f"{code!r} is not a direction")
    si, sj = entry["signs"]
    return si, sj


@cache
def direction_of_signs(signs: tuple[int, int]) -> str:
    """The direction code whose `direction_signs` are `signs`."""
    return _DIRECTION_OF_SIGNS[signs]


def converse(code: str) -> str:
    """The relation of B relative to A given that of A relative to B (distances are symmetric)."""
    entry = _entry(code)
    if entry["kind"] == "distance":
        return code
    si, sj = direction_signs(code)
    return _DIRECTION_OF_SIGNS[(-si, -sj)]


def band(k: int, d: int) -> int:
    """0, 1 or 2: the west/middle/east (or south/middle/north) third that cell index k lies in."""
    return 3 * k // d


def region(cell: Cell, d: int) -> str:
    return _REGION_OF_BANDS[(band(cell[0], d), band(cell[1], d))]


def region_bands(code: str) -> tuple[int, int]:
    """(band of i, band of j) of a region code."""
    entry = _entry(code)
    if entry["kind"] != "region":
        raise RoomspaceError(f"{code!r} is not a region")
    bi, bj = entry["bands"]
    return bi, bj


def region_of_bands(bands: tuple[int, int]) -> str:
    """The region code whose `region_bands` are `bands`."""
    return _REGION_OF_BANDS[bands]


def wall_contact(cell: Cell, d: int) -> str:
    """TPP for a border cell, else NTPP."""
    return _WALL_OF_BORDER[is_border(cell, d)]


def distance(cell_a: Cell, cell_b: Cell, d: int, scale: str) -> str:
    """The distance code of the two cells on a scale ("D2" or "D3"), by exact integer comparison."""
    if scale not in _SCALE_CODES:
        raise RoomspaceError(f"unknown distance scale {scale!r}; expected one of {DISTANCE_SCALES}")
    dist2 = (cell_a[0] - cell_b[0]) ** 2 + (cell_a[1] - cell_b[1]) ** 2
    for code in _SCALE_CODES[scale]:
        within = _BY_CODE[code]["within"]
        if within is None or within[1] * dist2 <= within[0] * d * d:
            return code
    raise AssertionError("the last code of a scale has no bound")


def distance_scale(code: str) -> str:
    """"D2" or "D3"."""
    entry = _entry(code)
    if entry["kind"] != "distance":
        raise RoomspaceError(f"{code!r} is not a distance")
    return entry["scale"]


def alike(code: str) -> tuple[str, ...]:
    """The codes of a code's kind, and scale for a distance: the relations one question chooses among."""
    of_kind = _codes(kind(code))
    return of_kind if kind(code) != "distance" else tuple(c for c in of_kind if distance_scale(c) == distance_scale(code))


def holds(code: str, d: int, cell_a: Cell, cell_b: Cell | None = None) -> bool:
    """Whether the fact "A is <code> (of B)" is true of these cells: the one semantics of a fact."""
    match kind(code):
        case "direction":
            return direction(cell_a, cell_b) == code
        case "distance":
            return distance(cell_a, cell_b, d, distance_scale(code)) == code
        case "region":
            return region(cell_a, d) == code
        case _:  # "wall"
            return wall_contact(cell_a, d) == code


@cache
def relation_words(code: str, view: str, field: str) -> str:
    """The words of a code in a view: field "phrase" ("A is <phrase> B"), "label", or "place" (regions)."""
    words = _entry(code)["words"]
    if view not in words:
        raise RoomspaceError(f"unknown view {view!r}; expected one of {VIEWS}")
    try:
        return words[view][field]
    except KeyError:
        raise RoomspaceError(f"relation {code!r} has no {field!r} words") from None
