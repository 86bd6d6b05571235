"""Choosing floor assets with numpy row positions where stock filters frames (item 5 of the package docstring)."""

from __future__ import annotations

import copy
import math
import random
import statistics
import sys
from functools import lru_cache

import numpy as np
from procthor.constants import (
    MARGIN,
    MAX_INTERSECTING_OBJECT_RETRIES,
    P_CHOOSE_ASSET_GROUP,
    P_W1_ASSET_SKIPPED,
    PADDING_AGAINST_WALL,
    PRIORITY_ASSET_TYPES,
)
import procthor.generation.objects as procthor_objects
from procthor.databases import asset_id_database, placement_annotations
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.generation.objects import (Asset, AssetGroup, ChosenAsset, ChosenAssetGroup, OrthogonalPolygon,
                                         ProceduralRoom)
from procthor.utils.types import Object, Vector3

from pipeline.scene.procthor.fast_procthor.asset_groups import house_asset_groups
from pipeline.scene.procthor.fast_procthor.rows import KeptRows, KeptRowsAttribute, made_once, sample_position

SMALLEST_EXACT_SUM = 8 * sys.float_info.min  # a sum of at least this, divided by 8 or less, is not subnormal
SPAWNABLE_ASSETS = KeptRowsAttribute("spawnable_assets")
SPAWNABLE_ASSET_GROUPS = KeptRowsAttribute("spawnable_asset_groups")


def mean(data) -> float:
    """`statistics.mean`, which ProcTHOR takes of the four corners of every object it places, by `math.fsum`
    where that is the same number.

    statistics.mean sums exactly (as fractions) and rounds the quotient once. For floats only,
    `fsum` is that exact sum rounded once, and dividing it by a count of 1, 2, 4 or 8 is exact
    (a power of two, the sum far from the smallest floats), so the quotient is the same float.
    Anything else (a zero sum too, +0.0 from the fraction whatever its signs) is left to
    statistics.mean.
    """
    values = list(data)
    if len(values) in (1, 2, 4, 8) and all(type(value) is float for value in values):
        try:
            total = math.fsum(values)
        except OverflowError:  # a partial sum beyond the floats, where fractions have no bound
            return statistics.mean(values)
        if SMALLEST_EXACT_SUM <= abs(total) < math.inf:
            return total / len(values)
    return statistics.mean(values)


def procedural_room_init(self: ProceduralRoom, polygon, room_type, room_id, split, door_polygons, controller) -> None:
    """`ProceduralRoom.__init__`, stock line by line but for where the room's candidates are held.

    The floor assets are stock's frame, made once (`get_floor_assets` is cached), as KeptRows
    reading its columns and rows once per process; the asset groups are the room's GroupRows of
    the house's HouseAssetGroups, where stock filters its house's table by the room weight. The
    random draws are stock's, in stock's order: the priority types shuffled, then the groups'
    dimensions (made on the house's first room, as stock's cached table is).
    """
    assert room_type in {"Kitchen", "LivingRoom", "Bedroom", "Bathroom"}
    assert split in {"train", "val", "test"}
    self.room_polygon = OrthogonalPolygon(polygon=copy.deepcopy(polygon))
    self.open_polygon = OrthogonalPolygon(polygon=copy.deepcopy(polygon))
    self.door_polygons = door_polygons
    self._cut_out_doors()
    self.room_type = room_type
    self.room_id = room_id
    self.floor_types, spawnable_assets = ProceduralRoom.get_floor_assets(room_type=room_type, split=split)
    SPAWNABLE_ASSETS.hold(self, made_once(spawnable_assets))
    self.priority_asset_types = list(PRIORITY_ASSET_TYPES[room_type])
    random.shuffle(self.priority_asset_types)
    SPAWNABLE_ASSET_GROUPS.hold(self, house_asset_groups(split, controller).rows(room_type))
    self.split = split
    self.assets = []
    self.last_rectangles = None


@lru_cache(maxsize=None)
def _annotation(asset_type: str, column: str) -> bool:
    """`placement_annotations.loc[asset_type][column]` (`multiplePerRoom`, `isKinematic`), which stock only
    takes the truth of, read once per type: the annotations are loaded once at import and never changed."""
    return bool(placement_annotations.loc[asset_type][column])


@lru_cache(maxsize=None)
def _can_spawn_standalone(room_type: str, asset_type: str) -> bool:
    """Stock's `placement_annotations[placement_annotations.index == asset_type][f"in{room_type}s"].iloc[0] > 0`
    (the type's first row), which it takes the truth of, read once per room type and type."""
    in_room = placement_annotations[f"in{room_type}s"].to_numpy()
    return bool(in_room[placement_annotations.index == asset_type][0] > 0)


def _multiple_per_room(asset_type: str) -> bool:
    return _annotation(asset_type, "multiplePerRoom")


def asset_dict(self: Asset) -> Object:
    """`Asset.asset_dict`, stock's but for `isKinematic` read once per type (`_annotation`)."""
    return Object(
        id=f"{self.room_id}|{self.object_n}",
        position=self.position,
        rotation=Vector3(x=0, y=self.rotation, z=0),
        assetId=self.asset_id,
        kinematic=_annotation(asset_id_database[self.asset_id]["objectType"], "isKinematic"),
        **self.states,
    )


def assets_dict(self: AssetGroup) -> list[Object]:
    """`AssetGroup.assets_dict`, stock's line by line but for `isKinematic` read once per type (`_annotation`)."""
    asset_group_metadata = procthor_objects.asset_groups[self.asset_group_name]["assetMetadata"]
    parent_children_pairs = []
    for child_id, metadata in asset_group_metadata.items():
        if "parentInstanceId" in metadata and metadata["position"]["verticalAlignment"] == "above":
            parent_id = str(metadata["parentInstanceId"])
            parent_children_pairs.append((parent_id, child_id))
    objects = {
        obj["instanceId"]: Object(
            id=f"{self.room_id}|{self.object_n}|{i}",
            position=obj["position"],
            rotation=Vector3(x=0, y=obj["rotation"], z=0),
            assetId=obj["assetId"],
            kinematic=_annotation(asset_id_database[obj["assetId"]]["objectType"], "isKinematic"),
        )
        for i, obj in enumerate(self.objects)
    }
    child_instance_ids = set()
    for parent_id, child_id in parent_children_pairs:
        if "children" not in objects[parent_id]:
            objects[parent_id]["children"] = []
        objects[parent_id]["children"].append(objects[child_id])
        child_instance_ids.add(child_id)
    for child_id in child_instance_ids:
        del objects[child_id]
    return list(objects.values())


def _not_multiple_per_room(room: ProceduralRoom, asset_type: str) -> None:
    """Stock's filters once an asset of a type allowed once per room is chosen: no standalone asset
    of the type, and no group having it."""
    assets, groups = SPAWNABLE_ASSETS.rows(room), SPAWNABLE_ASSET_GROUPS.rows(room)
    assets.keep &= assets.column("assetType") != asset_type
    groups.keep &= ~groups.column(f"has{asset_type}")


def _place_asset_group(room: ProceduralRoom, position: int, set_rotated, rect_x_length, rect_z_length):
    """`ProceduralRoom._place_asset_group` of the group frame's row `position`, stock line by line but
    for reading that row from KeptRows and narrowing its mask where stock filters frames."""
    groups = SPAWNABLE_ASSET_GROUPS.rows(room)
    asset_group_generator: AssetGroupGenerator = groups.generator(position)
    for _ in range(MAX_INTERSECTING_OBJECT_RETRIES):
        object_placement = asset_group_generator.sample_object_placement()
        any_collisions, intersecting_objects = asset_group_generator.get_intersecting_objects(
            object_placement=object_placement["objects"]
        )
        if not any_collisions:
            if set_rotated is None:
                set_rotated = ProceduralRoom.sample_rotation(
                    asset=groups.record(position), rect_x_length=rect_x_length, rect_z_length=rect_z_length
                )
            if not groups.column("allowDuplicates")[position]:
                groups.keep &= groups.frame.index != groups.frame.index[position]  # drop(label)
            for obj in object_placement["objects"]:
                if obj["assetType"] in room.priority_asset_types:
                    room.priority_asset_types.remove(obj["assetType"])
                if not _multiple_per_room(obj["assetType"]):
                    _not_multiple_per_room(room, obj["assetType"])
            return ChosenAssetGroup(
                assetGroupName=groups.column("assetGroupName")[position],
                xSize=object_placement["bounds"]["x"]["length"],
                ySize=object_placement["bounds"]["y"]["length"],
                zSize=object_placement["bounds"]["z"]["length"],
                rotated=set_rotated,
                objects=object_placement["objects"],
                bounds=object_placement["bounds"],
            )


def _place_asset(room: ProceduralRoom, position: int, set_rotated, rect_x_length, rect_z_length) -> ChosenAsset:
    """`ProceduralRoom._place_asset` of the asset frame's row `position`, stock line by line but for
    reading that row from KeptRows and narrowing masks where stock filters frames."""
    asset = SPAWNABLE_ASSETS.rows(room).record(position, with_index=True)
    if set_rotated is None:
        set_rotated = ProceduralRoom.sample_rotation(
            asset=asset, rect_x_length=rect_x_length, rect_z_length=rect_z_length
        )
    asset["rotated"] = set_rotated
    if not _multiple_per_room(asset["assetType"]):
        _not_multiple_per_room(room, asset["assetType"])
    if asset["assetType"] in room.priority_asset_types:
        room.priority_asset_types.remove(asset["assetType"])
    return ChosenAsset(**asset)


def _fits(rows: KeptRows, anchor_type: str, x_margin: float, z_margin: float, rect_x_length: float,
          rect_z_length: float, rotations: str) -> np.ndarray:
    """Stock's `frame[anchor_type] & size_filter(frame)` of the kept rows, as a mask over the whole
    frame: the same float64 sums and comparisons, on the columns' numpy arrays."""
    x, z = rows.column("xSize"), rows.column("zSize")
    upright = (x + x_margin < rect_x_length) & (z + z_margin < rect_z_length)
    turned = (z + z_margin < rect_x_length) & (x + x_margin < rect_z_length)
    fits = {"upright": upright, "turned": turned, "either": upright | turned}[rotations]
    return rows.keep & rows.column(anchor_type) & fits


def sample_asset(self: ProceduralRoom, rectangle, anchor_type, anchor_delta, allow_house_plant_group, allow_tv_group):
    """`ProceduralRoom.sample_asset`, stock line by line but for candidate frames held as row positions.

    Each stock candidate frame is a boolean filter of the room's frame: here it is the array of
    the positions of its rows, in the same order (`flatnonzero` of the combined mask), filtered
    the same ways on the columns' numpy arrays. Only lengths and the rows drawn reach ProcTHOR;
    a draw is `sample_position`'s, the same one `.sample()` makes, and the types choice is made
    from the kept types in order of first appearance, as `unique()` lists them.
    """
    set_rotated = None
    x0, z0, x1, z1 = rectangle
    rect_x_length = x1 - x0
    rect_z_length = z1 - z0
    if anchor_type == "onEdge":
        x_margin = 2 * MARGIN["edge"]["sides"]
        z_margin = MARGIN["edge"]["front"] + MARGIN["edge"]["back"] + PADDING_AGAINST_WALL
    elif anchor_type == "inCorner":
        x_margin = 2 * MARGIN["corner"]["sides"] + PADDING_AGAINST_WALL
        z_margin = MARGIN["corner"]["front"] + MARGIN["corner"]["back"] + PADDING_AGAINST_WALL
    elif anchor_type == "inMiddle":
        x_margin = 2 * MARGIN["middle"]
        z_margin = 2 * MARGIN["middle"]
    if anchor_delta in {1, 7}:
        rotations, set_rotated = "upright", False
    elif anchor_delta in {3, 5}:
        rotations, set_rotated = "turned", True
    else:
        rotations = "either"
    sizes = (anchor_type, x_margin, z_margin, rect_x_length, rect_z_length, rotations)
    groups, assets = SPAWNABLE_ASSET_GROUPS.rows(self), SPAWNABLE_ASSETS.rows(self)

    keep = _fits(groups, *sizes)
    names = groups.column("assetGroupName")  # str, or NaN (!= any name, as in stock)
    if not allow_house_plant_group:
        keep &= names != "floor-house-plant"
    if not allow_tv_group:
        keep &= names != "television"
    asset_group_candidates = np.flatnonzero(keep)
    asset_candidates = np.flatnonzero(_fits(assets, *sizes))
    asset_types = assets.column("assetType")

    if self.priority_asset_types:
        for asset_type in self.priority_asset_types:
            asset_groups_with_type = asset_group_candidates[groups.column(f"has{asset_type}")[asset_group_candidates]]
            can_spawn_standalone = _can_spawn_standalone(self.room_type, asset_type)
            assets_with_type = None
            if can_spawn_standalone:
                assets_with_type = asset_candidates[asset_types[asset_candidates] == asset_type]
            if len(asset_groups_with_type) and (assets_with_type is None or random.random() <= P_CHOOSE_ASSET_GROUP):
                chosen_asset_group = _place_asset_group(
                    self, sample_position(asset_groups_with_type), set_rotated, rect_x_length, rect_z_length
                )
                if chosen_asset_group is not None:
                    return chosen_asset_group
            if assets_with_type is not None and len(assets_with_type):
                return _place_asset(self, sample_position(assets_with_type), set_rotated, rect_x_length, rect_z_length)

    if len(asset_group_candidates) and random.random() <= P_CHOOSE_ASSET_GROUP:
        chosen_asset_group = _place_asset_group(
            self, sample_position(asset_group_candidates), set_rotated, rect_x_length, rect_z_length
        )
        if chosen_asset_group is not None:
            return chosen_asset_group
    if random.random() <= P_W1_ASSET_SKIPPED:
        asset_candidates = asset_candidates[assets.column(f"in{self.room_type}s")[asset_candidates] != 1]
    if not len(asset_candidates):
        return None
    asset_type = random.choice(list(dict.fromkeys(asset_types[asset_candidates].tolist())))
    asset = sample_position(asset_candidates[asset_types[asset_candidates] == asset_type])
    return _place_asset(self, asset, set_rotated, rect_x_length, rect_z_length)
