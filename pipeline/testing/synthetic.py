"""Random rooms and fact sets for testing and benchmarking the spatial core without ProcTHOR.

Rotated boxes in a square room of side 4.8-6.6 m (ProcTHOR's range, docs/semantics.md section 1), a
share of them pushed against a wall or into a corner, some within WALL_TOLERANCE of a wall
and some just beyond it, so that wall contact and snapping are exercised.
"""

from __future__ import annotations

import math
import random

from pipeline.scene.footprints import WALL_TOLERANCE
from pipeline.scene.records import Point
from pipeline.spatial.facts import Fact
from pipeline.spatial.grid import Raster, rasterise
from pipeline.spatial.relations import BINARY_CODES, UNARY_CODES

SIDES = (4.8, 6.6)  # metres


def random_object(rng: random.Random, side: float) -> tuple[Point, list[Point]]:
    """(centre, footprint) of a rotated box lying inside the room [0, side]^2."""
    width, depth = rng.uniform(0.3, 2.2), rng.uniform(0.3, 1.6)
    yaw = math.radians(rng.choice([0.0, 90.0, 180.0, 270.0, rng.uniform(0.0, 360.0)]))
    c, s = math.cos(yaw), math.sin(yaw)
    half = [(-width / 2, -depth / 2), (width / 2, -depth / 2), (width / 2, depth / 2), (-width / 2, depth / 2)]
    corners = [(dx * c - dz * s, dx * s + dz * c) for dx, dz in half]
    reach_x = max(abs(x) for x, _ in corners)
    reach_z = max(abs(z) for _, z in corners)
    x, z = rng.uniform(reach_x, side - reach_x), rng.uniform(reach_z, side - reach_z)
    # Which coordinates are pushed against a wall: none (free), one (a wall) or both (a corner).
    pushed = rng.choice([(), (), ("x",), ("z",), ("x", "z")])
    gap = rng.choice([0.0, WALL_TOLERANCE / 2, 2 * WALL_TOLERANCE])  # touching, touching, clear
    if "x" in pushed:
        x = rng.choice([reach_x + gap, side - reach_x - gap])
    if "z" in pushed:
        z = rng.choice([reach_z + gap, side - reach_z - gap])
    return (x, z), [(x + dx, z + dz) for dx, dz in corners]


def random_raster(rng: random.Random, n: int, d: int) -> Raster:
    """A random room with n objects, rasterised at grid size d."""
    side = rng.uniform(*SIDES)
    objects = [random_object(rng, side) for _ in range(n)]
    return rasterise([centre for centre, _ in objects], [footprint for _, footprint in objects], side, d)


def random_facts(rng: random.Random, names: list[str], max_facts: int) -> list[Fact]:
    """Up to max_facts facts with arbitrary codes about these objects: often contradictory."""
    facts = []
    for _ in range(rng.randint(0, max_facts)):
        if rng.random() < 0.5:
            facts.append(Fact(rng.choice(names), rng.choice(UNARY_CODES), None))
        else:
            subject, other = rng.sample(names, 2)
            facts.append(Fact(subject, rng.choice(BINARY_CODES), other))
    return facts
