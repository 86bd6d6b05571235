"""Objects of a scene: ProcTHOR's top-level objects as records, and the prominence rule (docs/semantics.md section 2).

Prominence. The rule is data, `pipeline/data/prominence.json`: a top-level object is prominent
when it stands on the floor and its type is listed as large furniture (and not listed as
clutter), or its footprint area is at least `min_area`, or, when `wall_hung.count` is true, it
was hung on a wall by ProcTHOR's wall-objects stage and its type is in `wall_hung.types`.
Children (a TV on its stand, pillows on a bed) are never top-level, so never prominent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.footprints import footprint, walls_touched
from pipeline.scene.records import SceneObject

PROMINENCE_FILE = "prominence.json"


@dataclass(frozen=True)
class ProminenceRule:
    types: frozenset[str]  # large furniture: prominent whatever its size
    exclude_types: frozenset[str]  # floor clutter: never prominent, whatever its size
    min_area: float  # m^2: any other floor object this large is prominent
    wall_hung_count: bool  # do objects hung on a wall by ProcTHOR count?
    wall_hung_types: frozenset[str]  # ... and which of their types

    def is_prominent(self, object_type: str, area: float, wall_hung: bool) -> bool:
        if wall_hung:
            return self.wall_hung_count and object_type in self.wall_hung_types
        if object_type in self.exclude_types:
            return False
        return object_type in self.types or area >= self.min_area


def rule_from_json(data: Mapping[str, Any]) -> ProminenceRule:
    try:
        return ProminenceRule(
            types=frozenset(data["types"]),
            exclude_types=frozenset(data.get("exclude_types", ())),
            min_area=float(data["min_area"]),
            wall_hung_count=bool(data["wall_hung"]["count"]),
            wall_hung_types=frozenset(data["wall_hung"]["types"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise RoomspaceError(f"bad prominence rule ({PROMINENCE_FILE}): {error!r}") from None


@lru_cache(maxsize=1)
def load_rule() -> ProminenceRule:
    """The project's prominence rule, from pipeline/data/prominence.json."""
    return rule_from_json(data_json(PROMINENCE_FILE))


def asset_info(asset_id: str) -> tuple[str, tuple[float, float, float]]:
    """(objectType, bounding-box size x, y, z) of a ProcTHOR asset, from its asset database."""
    from procthor.databases import asset_id_database

    try:
        asset = asset_id_database[asset_id]
    except KeyError:
        raise RoomspaceError(f"unknown ProcTHOR asset {asset_id!r}") from None
    box = asset["boundingBox"]
    return asset["objectType"], (float(box["x"]), float(box["y"]), float(box["z"]))


def scene_objects(
    house_objects: Iterable[Mapping[str, Any]],
    side: float,
    wall_hung_ids: Iterable[str],
    rule: ProminenceRule | None = None,
    ndigits: int = 6,
) -> tuple[SceneObject, ...]:
    """The top-level objects of a ProcTHOR house JSON `objects` list, in ProcTHOR's order.

    Coordinates are rounded to `ndigits` decimals (the precision of the scene files) before
    the footprint, wall contact and prominence are derived, so a record read back from its
    file is the record that was written.
    """
    rule = rule or load_rule()
    hung = set(wall_hung_ids)
    out = []
    for obj in house_objects:
        object_type, size = asset_info(obj["assetId"])
        size = tuple(round(s, ndigits) for s in size)
        x = round(float(obj["position"]["x"]), ndigits)
        z = round(float(obj["position"]["z"]), ndigits)
        yaw = round(float(obj["rotation"]["y"]) % 360.0, ndigits) % 360.0
        points = tuple(
            (round(px, ndigits) + 0.0, round(pz, ndigits) + 0.0) for px, pz in footprint(x, z, yaw, size)
        )
        wall_hung = obj["id"] in hung
        area = size[0] * size[2]
        out.append(
            SceneObject(
                id=str(obj["id"]),
                asset_id=str(obj["assetId"]),
                type=object_type,
                x=x,
                z=z,
                yaw=yaw,
                size=size,
                footprint=points,
                walls=walls_touched(points, side),
                wall_hung=wall_hung,
                prominent=rule.is_prominent(object_type, area, wall_hung),
            )
        )
    return tuple(out)
