"""Small objects on and in a room's furniture, placed offline (docs/semantics.md section 21).

ProcTHOR puts small objects on receptacles with Unity's physics (`InitialRandomSpawn`), which cannot
run here. This stage places them without it, as a pure function of the scene record and its house
JSON (themselves pure functions of (seed, room)): one generator seeded by the room id draws
everything, in a fixed order (furniture in the scene's order, its surfaces, then its compartments).

* What may go where is ProcTHOR's: its receptacle table (`procthor.databases.objects_in_receptacles`,
  receptacle type -> small types with their frequency p, used as the weight of each type), kept to
  the types its placement annotations allow in the room's type and, as ProcTHOR does, without a type
  the room already holds that may appear once per room. Sizes are the asset database's boxes.
* Where is this project's (pipeline/data/small_objects.json): each furniture type's surfaces (a
  table's top, a sofa's seat, a shelving unit's shelves) and closed compartments (drawers, a cabinet,
  the fridge) as fractions of its bounding box, in its own frame; small objects lie square to the
  furniture (turned by a multiple of 90 degrees), inside a surface less a margin, each a gap apart
  from the others and from what already stands there (a TV on its stand, a chair pushed under the
  table), and under the shelf above.
* Stacks: a carrier (a book, a shut laptop, a plate, a bowl, a shut box) takes loads whose box fits
  on it, up to three levels from the furniture; containers (a box, a microwave) hold objects inside,
  shut or open.

The result is recorded in the scene record (`Scene.small_objects`, `roomspace scenes --small-objects`);
a scene written without it reads as None, and `small_objects_of` places them when asked.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from random import Random

from pipeline.data import data_json
from pipeline.scene.footprints import footprint
from pipeline.scene.records import Scene, SceneObject, SmallObject
from pipeline.seeding import derive_seed

RULES_FILE = "small_objects.json"
MOST_LEVELS = 3  # a stack is at most three small objects high, counted from the furniture
INSIDE = "inside"  # the part of a box or microwave its contents are in
ROUND = 6  # decimals of a placed object's numbers (the scene files' precision)

Rect = tuple[float, float, float, float]  # (u0, u1, v0, v1): across from the furniture's own left, back to front


@cache
def rules() -> dict:
    return data_json(RULES_FILE)


@cache
def _tables() -> tuple[dict, object, dict]:
    """ProcTHOR's receptacle table, its placement annotations and its assets by type (sorted by id)."""
    from procthor.databases import asset_database, objects_in_receptacles, placement_annotations

    assets = {kind: sorted((a for a in found if a.get("split") in ("train", None)), key=lambda a: a["assetId"])
              for kind, found in asset_database.items()}
    return objects_in_receptacles, placement_annotations, assets


@cache
def _room_kinds(room_type: str) -> dict[str, bool]:
    """The small types ProcTHOR's annotations allow in a room type (skip_types left out), each with
    whether a room may hold more than one object of it."""
    annotations = _tables()[1]
    return {kind: bool(row["multiplePerRoom"]) for kind, row in annotations.iterrows()
            if row[f"in{room_type}s"] > 0 and kind not in rules()["skip_types"]}


@dataclass(frozen=True)
class Holder:
    """A piece of furniture in its own frame: u across from its own left (footprint corner 0), v from
    its back to its front, heights above the floor."""

    obj: SceneObject
    bottom: float

    @property
    def axes(self) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
        (x0, z0), (x1, z1), _, (x3, z3) = self.obj.footprint
        width, depth = self.obj.size[0], self.obj.size[2]
        across = ((x1 - x0) / width, (z1 - z0) / width) if width else (1.0, 0.0)
        ahead = ((x3 - x0) / depth, (z3 - z0) / depth) if depth else (0.0, 1.0)
        return (x0, z0), across, ahead

    def world(self, u: float, v: float) -> tuple[float, float]:
        (x0, z0), (ax, az), (bx, bz) = self.axes
        return x0 + u * ax + v * bx, z0 + u * az + v * bz

    def local(self, x: float, z: float) -> tuple[float, float]:
        (x0, z0), (ax, az), (bx, bz) = self.axes
        return (x - x0) * ax + (z - z0) * az, (x - x0) * bx + (z - z0) * bz

    def rect_of(self, points: Sequence[tuple[float, float]]) -> Rect:
        us, vs = zip(*(self.local(x, z) for x, z in points))
        return min(us), max(us), min(vs), max(vs)

    def fraction_rect(self, box: Sequence[float], margin: float = 0.0) -> Rect:
        """(u0, u1, v0, v1) of the fractions x0, x1, z0, z1 of its box, less a margin all round."""
        x0, x1, z0, z1 = box
        width, depth = self.obj.size[0], self.obj.size[2]
        return x0 * width + margin, x1 * width - margin, z0 * depth + margin, z1 * depth - margin

    def height_at(self, fraction: float) -> float:
        return self.bottom + fraction * self.obj.size[1]


@dataclass
class Placing:
    """A small object while it is being placed: its rectangle in its furniture's frame."""

    record: SmallObject
    rect: Rect
    height: float


def bottoms(house: Mapping) -> dict[str, float]:
    """Each top-level object's bottom above the floor: ProcTHOR's position is its box's centre."""
    from pipeline.scene.objects import asset_info

    return {o["id"]: max(0.0, float(o["position"]["y"]) - asset_info(o["assetId"])[1][1] / 2)
            for o in house["objects"]}


def small_objects_of(scene: Scene, house: Mapping) -> tuple[SmallObject, ...]:
    """The scene's small objects: those its record holds, else placed now (the same ones)."""
    return scene.small_objects if scene.small_objects is not None else place_small_objects(scene, house)


def with_small_objects(scene: Scene, house: Mapping) -> Scene:
    """The scene record with its small objects placed (module docstring)."""
    return dataclasses.replace(scene, small_objects=place_small_objects(scene, house))


def place_small_objects(scene: Scene, house: Mapping) -> tuple[SmallObject, ...]:
    """Every small object of the room, a pure function of the scene and its house JSON."""
    spec, (table, _, _) = rules(), _tables()
    rng = Random(derive_seed(scene.room_id, spec["seed_text"]))
    present = {o.type for o in scene.objects}
    allowed = {kind for kind, many in _room_kinds(scene.room_type).items() if many or kind not in present}
    heights = bottoms(house)
    placer = _Placer(rng, allowed, [])
    for obj in scene.objects:
        entry = spec["receptacles"].get(obj.type)
        if entry is None or obj.wall_hung or obj.type not in table:
            continue
        holder = Holder(obj, heights.get(obj.id, 0.0))
        blocked = _obstacles(scene, house, holder, heights)
        own = {kind: data["p"] for kind, data in table[obj.type].items() if kind in allowed}
        for surface in entry["surfaces"]:
            placer.surface(holder, surface, own, blocked)
        for compartment in entry.get("compartments", ()):
            placer.compartment(holder, compartment, own)
    return tuple(placing.record for placing in placer.placed)


def _obstacles(scene: Scene, house: Mapping, holder: Holder, heights: Mapping[str, float]) -> list[tuple[Rect, float, float]]:
    """(rectangle, bottom, top) of what stands on or over the furniture already: its children in the
    house JSON (a TV on its stand, a faucet) and other floor objects whose footprints reach over it."""
    from pipeline.scene.objects import asset_info

    found = []
    record = next((o for o in house["objects"] if o["id"] == holder.obj.id), {})
    for child in record.get("children") or ():
        _, size = asset_info(child["assetId"])
        points = footprint(float(child["position"]["x"]), float(child["position"]["z"]),
                           float(child["rotation"]["y"]) % 360.0, size)
        bottom = max(0.0, float(child["position"]["y"]) - size[1] / 2)
        found.append((holder.rect_of(points), bottom, bottom + size[1]))
    for other in scene.objects:
        if other.id == holder.obj.id or other.wall_hung:
            continue
        bottom = heights.get(other.id, 0.0)
        found.append((holder.rect_of(other.footprint), bottom, bottom + other.size[1]))
    return found


def _placed_size(kind: str, asset: Mapping) -> tuple[float, float, float]:
    """An asset's box as placed: its height shut for a type placed shut (placed_closed)."""
    box = asset["boundingBox"]
    return box["x"], rules()["placed_closed"].get(kind, box["y"]), box["z"]


def _overlap(a: Rect, b: Rect, gap: float) -> bool:
    return a[0] < b[1] + gap and b[0] < a[1] + gap and a[2] < b[3] + gap and b[2] < a[3] + gap


@dataclass
class Space:
    """Where objects are being placed: a surface, a compartment or a container's inside; its
    rectangle, floor and ceiling (None: open above), and the boxes (rectangle, bottom, top) in it."""

    region: Rect
    floor: float
    ceiling: float | None
    boxes: list[tuple[Rect, float, float]]

    def free(self, rect: Rect, bottom: float, top: float, gap: float, carrier: Rect | None = None) -> bool:
        """No box in the space meets this one (a gap apart across, touching from above allowed) but
        its carrier's, which an object in a bowl sits in."""
        return not any(_overlap(rect, other, gap) and low < top - 1e-9 and high > bottom + 1e-9
                       for other, low, high in self.boxes if other != carrier)


class _Placer:
    """The room's placements so far and the generator drawing them (`place_small_objects`)."""

    def __init__(self, rng: Random, allowed: set[str], placed: list[Placing]) -> None:
        self.rng, self.allowed, self.placed = rng, allowed, placed
        self.spec = rules()

    def surface(self, holder: Holder, surface: Mapping, own: Mapping[str, float],
                blocked: list[tuple[Rect, float, float]]) -> None:
        region = holder.fraction_rect([surface["box"][k] for k in (0, 1, 3, 4)], self.spec["margin"])
        if region[1] <= region[0] or region[3] <= region[2]:
            return
        ceiling = None if surface["below"] is None else holder.height_at(surface["below"])
        space = Space(region, holder.height_at(surface["box"][2]), ceiling, list(blocked))
        area = (region[1] - region[0]) * (region[3] - region[2])
        most = min(self.spec["most"], math.floor(area * self.spec["objects_per_m2"]))
        count = self.rng.randint(min(1, most), max(most, 0))
        kinds = sorted(own)
        for _ in range(count):
            kind = self.rng.choices(kinds, weights=[own[k] for k in kinds])[0]
            made = self._put(holder, kind, space, space.floor, None, support=holder.obj.id, part=surface["name"],
                             inside=False, level=1)
            if made is not None:
                self._dress(holder, made, space, self._pile(made))

    def compartment(self, holder: Holder, compartment: Mapping, own: Mapping[str, float]) -> None:
        x0, x1, y0, y1, z0, z1 = compartment["box"]
        space = Space(holder.fraction_rect((x0, x1, z0, z1), self.spec["gap"]), holder.height_at(y0),
                      holder.height_at(y1), [])
        kinds = sorted(k for k in own if k not in self.spec["containers"] and k not in self.spec["never_inside"])
        count = self.rng.randint(0, self.spec["per_compartment"])
        for _ in range(count if kinds else 0):
            kind = self.rng.choices(kinds, weights=[own[k] for k in kinds])[0]
            made = self._put(holder, kind, space, space.floor, None, support=holder.obj.id,
                             part=compartment["name"], inside=True, level=1)
            if made is not None:
                self._dress(holder, made, space, self._pile(made))

    def _pile(self, placing: Placing) -> bool:
        """Whether an object on or in the furniture is a pile (drawn for carriers only)."""
        return placing.record.type in self.spec["carriers"] and self.rng.random() < self.spec["pile"]["p"]

    def _dress(self, holder: Holder, base: Placing, space: Space, pile: bool = False) -> None:
        """Contents in a container and loads on a carrier, drawn for a newly placed object; on a pile
        (and on every carrier on it) with the pile's weights."""
        record = base.record
        container = self.spec["containers"].get(record.type)
        if container is not None and record.level < MOST_LEVELS:
            self._fill(holder, base, container)
        carrier = self.spec["carriers"].get(record.type)
        if carrier is None or record.level >= MOST_LEVELS or (carrier.get("closed_only") and not record.closed):
            return
        weights = {k: w for k, w in self._types(record.type, carrier["types"]).items() if k in self.allowed}
        kinds = sorted(weights)
        chances = self.spec["pile"]["loads"] if pile else carrier["loads"]
        loads = min(self.rng.choices(range(len(chances)), weights=chances)[0], carrier.get("most", len(chances)))
        bottom = record.y + (base.height if carrier["relation"] == "on" else 0.25 * base.height)
        for _ in range(loads if kinds else 0):
            kind = self.rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            made = self._put(holder, kind, space, bottom, base, support=record.id, part=None, inside=False,
                             level=record.level + 1)
            if made is not None:
                self._dress(holder, made, space, pile)

    def _fill(self, holder: Holder, base: Placing, container: Mapping) -> None:
        record = base.record
        kinds = sorted(k for k in self._types(record.type, container["holds"]) if k in self.allowed
                       and k not in self.spec["containers"] and k not in self.spec["never_inside"])
        count = self.rng.randint(0, container["per_container"])
        u0, u1, v0, v1 = base.rect
        wall = self.spec["gap"]
        space = Space((u0 + wall, u1 - wall, v0 + wall, v1 - wall), record.y + wall, record.y + base.height - wall, [])
        for _ in range(count if kinds else 0):
            made = self._put(holder, self.rng.choice(kinds), space, space.floor, None, support=record.id,
                             part=INSIDE, inside=True, level=record.level + 1)
            if made is not None:
                self._dress(holder, made, space)

    @staticmethod
    def _types(kind: str, listed: str | Sequence[str] | Mapping[str, float]) -> dict[str, float]:
        """{type: weight} of a carrier's loads or a container's contents: ProcTHOR's row for `kind`
        ("procthor", its p the weight), the types listed (each 1) or the weights given."""
        if listed == "procthor":
            return {k: data["p"] for k, data in _tables()[0].get(kind, {}).items()}
        return dict(listed) if isinstance(listed, Mapping) else dict.fromkeys(listed, 1.0)

    def _fitting(self, kind: str, space: Space, bottom: float, carrier: Placing | None) -> list:
        """(asset id, size as placed) of the assets of `kind` that fit the space one way round or the
        other, under its ceiling, and no larger than `carrier` (if any) by more than the overhang."""
        spec = self.spec
        width, depth = space.region[1] - space.region[0], space.region[3] - space.region[2]
        if carrier is not None:
            stretch = 1 + spec["overhang"]
            width = min(width, stretch * (carrier.rect[1] - carrier.rect[0]))
            depth = min(depth, stretch * (carrier.rect[3] - carrier.rect[2]))
        found = []
        for asset in _tables()[2].get(kind, ()):
            if kind == "HousePlant" and asset["boundingBox"]["y"] >= spec["house_plant_max_height"]:
                continue
            size = _placed_size(kind, asset)
            flat = (size[0] <= width and size[2] <= depth) or (size[2] <= width and size[0] <= depth)
            if flat and (space.ceiling is None or bottom + size[1] <= space.ceiling):
                found.append((asset["assetId"], size))
        return found

    def _put(self, holder: Holder, kind: str, space: Space, bottom: float, carrier: Placing | None, *,
             support: str, part: str | None, inside: bool, level: int) -> Placing | None:
        """One object of `kind` in `space` with its bottom at `bottom`, at a free place inside the
        space's rectangle (on a `carrier`, also with its centre over the middle of the carrier's);
        None where no asset fits or no free place is found in the tries allowed."""
        spec, rng = self.spec, self.rng
        fitting = self._fitting(kind, space, bottom, carrier)
        if not fitting:
            return None
        asset, size = rng.choice(fitting)
        turn = rng.randrange(4)
        closed = None
        if kind in spec["containers"]:
            closed = rng.random() < spec["containers"][kind]["closed"]
        region = space.region
        for attempt in range(spec["tries"]):
            quarter = (turn + attempt) % 4
            across, ahead = (size[0], size[2]) if quarter % 2 == 0 else (size[2], size[0])
            low_u, high_u, low_v, high_v = region[0], region[1] - across, region[2], region[3] - ahead
            if carrier is not None:  # the centre over the middle part of the carrier
                c0, c1, d0, d1 = carrier.rect
                keep = (1 - spec["centred"]) / 2
                low_u = max(low_u, c0 + keep * (c1 - c0) - across / 2)
                high_u = min(high_u, c1 - keep * (c1 - c0) - across / 2)
                low_v = max(low_v, d0 + keep * (d1 - d0) - ahead / 2)
                high_v = min(high_v, d1 - keep * (d1 - d0) - ahead / 2)
            if high_u < low_u or high_v < low_v:
                continue
            u = low_u + rng.random() * (high_u - low_u)
            v = low_v + rng.random() * (high_v - low_v)
            rect = (u, u + across, v, v + ahead)
            if not space.free(rect, bottom, bottom + size[1], spec["gap"], carrier and carrier.rect):
                continue
            x, z = holder.world(u + across / 2, v + ahead / 2)
            record = SmallObject(
                id=f"small|{len(self.placed)}", asset_id=asset, type=kind, support=support, part=part,
                inside=inside, level=level, x=round(x, ROUND) + 0.0, z=round(z, ROUND) + 0.0,
                y=round(bottom, ROUND) + 0.0, yaw=round((holder.obj.yaw + 90 * quarter) % 360.0, ROUND) % 360.0,
                size=tuple(round(s, ROUND) for s in size), closed=closed)
            placing = Placing(record, rect, size[1])
            space.boxes.append((rect, bottom, bottom + size[1]))
            self.placed.append(placing)
            return placing
        return None
