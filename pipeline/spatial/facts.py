"""The facts of a story, computed from the snapped cells of a raster (docs/semantics.md section 6).

Because every fact is read off the raster, the rasterised scene satisfies all of them: the
witness invariant of docs/semantics.md section 9.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations

from pipeline.errors import RoomspaceError
from pipeline.spatial.grid import Cell, Raster
from pipeline.spatial.relations import DISTANCE_SCALES, direction, distance, holds, region, wall_contact

SETTINGS = ("layout", "tpp", "o2", "o2_d2", "o2_d3", "o2_layout", "o2_d2_layout", "o2_d3_layout")
# The hard stories (docs/semantics.md section 22): the direction of each chain pair, the distance of every
# described pair, on one scale each. Region and wall facts pin objects, and directions on every pair give
# the axes away: measured, either leaves almost no question that only search answers.
HARD_SETTINGS = ("chain_d2", "chain_d3")


@dataclass(frozen=True)
class Fact:
    """ "subject is <relation> (of) object"; object is None for unary facts (regions, TPP/NTPP)."""

    subject: str
    relation: str
    object: str | None


def facts_held(facts: Iterable[Fact], cells: Mapping[str, Cell], d: int) -> tuple[bool, ...]:
    """Whether each fact is true of a cell per object (a drawn map, or the raster): the checker's
    reading of a fact on a cell assignment (`relations.holds`, which its tables and the oracle use),
    so a map is consistent with a story exactly when every fact of the story holds. A cell off the
    d x d grid, or an object without a cell, is a RoomspaceError."""
    for name, (i, j) in cells.items():
        if not (0 <= i < d and 0 <= j < d):
            raise RoomspaceError(f"{name} is in cell ({i}, {j}), off the {d} x {d} grid")
    held = []
    for fact in facts:
        missing = [name for name in (fact.subject, fact.object) if name is not None and name not in cells]
        if missing:
            raise RoomspaceError(f"the fact about {fact.subject} names {missing[0]}, which has no cell")
        other = None if fact.object is None else cells[fact.object]
        held.append(holds(fact.relation, d, cells[fact.subject], other))
    return tuple(held)


def described_pairs(n: int, m: int) -> tuple[tuple[int, int], ...]:
    """The first m index pairs (a, b), a < b, in bands: the chain, then pairs two apart, and so on.

    m = n - 1 is the bare chain, an (n-1)-hop question about (0, n-1); at most all pairs but
    the query pair itself.
    """
    if n < 3 or not n - 1 <= m <= n * (n - 1) // 2 - 1:
        raise RoomspaceError(
            f"no valid described pairs for n={n}, m={m}: need n >= 3 and n-1 <= m <= n(n-1)/2 - 1"
        )
    order = [(a, a + gap) for gap in range(1, n) for a in range(n - gap)]
    return tuple(order[:m])


def hops(n: int, pairs: Sequence[tuple[int, int]], ends: tuple[int, int] | None = None) -> int:
    """Shortest path length over the described pairs (undirected) between the ends, (0, n-1) unless given."""
    start, end = ends or (0, n - 1)
    neighbours: dict[int, set[int]] = {k: set() for k in range(n)}
    for a, b in pairs:
        neighbours[a].add(b)
        neighbours[b].add(a)
    distance = {start: 0}
    frontier = [start]
    while frontier:
        following = []
        for k in frontier:
            for nxt in neighbours[k] - distance.keys():
                distance[nxt] = distance[k] + 1
                following.append(nxt)
        frontier = following
    if end not in distance:
        raise RoomspaceError(f"the described pairs {list(pairs)} do not connect object {start} to object {end}")
    return distance[end]


def setting_facts(
    raster: Raster, names: Sequence[str], pairs: Sequence[tuple[int, int]], setting: str
) -> tuple[Fact, ...]:
    """The facts of one setting: region and wall facts per object, direction and distance per pair."""
    if setting not in SETTINGS:
        raise RoomspaceError(f"unknown setting {setting!r}; expected one of {SETTINGS}")
    return story_facts(raster_facts(raster, names), pairs)[setting]


@dataclass(frozen=True)
class RasterFacts:
    """Every fact a story about a raster's objects can state, each made once: a room's
    configurations with the same objects and grid share them, whatever pairs they describe."""

    regions: tuple[Fact, ...]  # per object
    walls: tuple[Fact, ...]  # per object: TPP or NTPP
    directions: dict[tuple[int, int], Fact]  # per ordered pair of objects (a, b): a relative to b
    distances: dict[str, dict[tuple[int, int], Fact]]  # per scale, per ordered pair


def raster_facts(raster: Raster, names: Sequence[str]) -> RasterFacts:
    if len(names) != len(raster.cells):
        raise RoomspaceError(f"{len(names)} names for {len(raster.cells)} objects")
    d, cells = raster.d, raster.cells
    pairs = list(permutations(range(len(cells)), 2))
    return RasterFacts(
        regions=tuple(Fact(name, region(cell, d), None) for name, cell in zip(names, cells)),
        walls=tuple(Fact(name, wall_contact(cell, d), None) for name, cell in zip(names, cells)),
        directions={(a, b): Fact(names[a], direction(cells[a], cells[b]), names[b]) for a, b in pairs},
        distances={scale: {(a, b): Fact(names[a], distance(cells[a], cells[b], d, scale), names[b]) for a, b in pairs}
                   for scale in DISTANCE_SCALES},
    )


# What each setting states: regions, wall contact, directions, and distances on which scale (o2_d2 -> D2).
_STATED = {setting: (setting in ("layout", "tpp") or setting.endswith("_layout"), setting == "tpp",
                     setting.startswith("o2"), next((s for s in DISTANCE_SCALES if f"_{s.lower()}" in setting), None))
           for setting in SETTINGS}


def story_facts(facts: RasterFacts, pairs: Sequence[tuple[int, int]]) -> dict[str, tuple[Fact, ...]]:
    """The facts of every setting about the described pairs, each fact made once (in `facts`) and
    shared by the settings that state it."""
    for pair in pairs:
        if pair not in facts.directions:
            raise RoomspaceError(f"described pair {pair} is not two of the objects 0..{len(facts.regions) - 1}")
    out = {}
    for setting, (regions, walls, directions, scale) in _STATED.items():
        stated: list[Fact] = []
        if regions:
            for k, fact in enumerate(facts.regions):
                stated.append(fact)
                if walls:
                    stated.append(facts.walls[k])
        if directions:
            for pair in pairs:
                stated.append(facts.directions[pair])
                if scale:
                    stated.append(facts.distances[scale][pair])
        out[setting] = tuple(stated)
    return out


def hard_story_facts(facts: RasterFacts, pairs: Sequence[tuple[int, int]], n: int) -> dict[str, tuple[Fact, ...]]:
    """The facts of every hard setting about the described pairs (`described_pairs`: the chain's
    n - 1 first), each fact made once (in `facts`)."""
    chain = set(pairs[:n - 1])
    return {setting: tuple(fact for pair in pairs for fact in
                           ((facts.directions[pair],) if pair in chain else ()) + (facts.distances[scale][pair],))
            for setting, scale in zip(HARD_SETTINGS, DISTANCE_SCALES)}
