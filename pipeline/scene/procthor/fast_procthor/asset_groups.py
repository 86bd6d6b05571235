"""Asset groups: their files and the asset database parsed once, their data prepared once, their
dimensions without DataFrames, their table made once with a house's columns beside it (items 2, 3,
4 and 7 of the package docstring)."""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import pandas as pd
import procthor.databases as databases
from pandas.core.dtypes.cast import maybe_box_native
from procthor.databases import asset_id_database
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.utils.types import Vector3

from pipeline.scene.procthor.fast_procthor.rows import KeptRows

STOCK_SET_DIMENSIONS = AssetGroupGenerator._set_dimensions
STOCK_POST_INIT = AssetGroupGenerator.__attrs_post_init__
STOCK_SPAWNABLE_ASSET_GROUP_INFO = databases.get_spawnable_asset_group_info
SIZE_COLUMNS = ("xSize", "ySize", "zSize")  # with "assetGroupGenerator", the table's columns made per house


class GroupBounds:
    """`sample_object_placement(chosen_asset_ids=...)` of one group's generator, every asset name of the group
    chosen, reduced to the bounds along x and z that `_set_dimensions` reads.

    With every name chosen stock draws no asset, only one `random.random()` per object (its turn
    within `dtheta`), so the order of its tree walk, the chosen boxes and the rest of each object's
    metadata are fixed: they are read once. `sample` makes the same draws in the same order and the
    same float64 operations on the same values (a box's corners about the origin, each turned by
    `np.cos` and `np.sin` of the same angle, which stock computes four times over; a child's
    centre from its parent's turned and shifted box; the group's bounds as the first minimum and
    maximum met), so its lengths are stock's, as numpy floats as stock's are.
    """

    def __init__(self, data: dict, chosen: dict[str, tuple[str, str]]) -> None:
        self.objects = []
        stack = [{"parentId": None, "tree": tree} for tree in reversed(data["treeData"])]
        while stack:  # stock's walk: children pushed before the object is placed
            entry = stack.pop()
            instance_id = str(entry["tree"]["instanceId"])
            for child in entry["tree"].get("children", ()):
                stack.append({"parentId": instance_id, "tree": child})
            metadata = data["assetMetadata"][instance_id]
            box = asset_id_database[chosen[metadata["name"]][1]]["boundingBox"]
            position = metadata["position"]
            corners = [(0 + box["x"] / 2, 0 + box["z"] / 2), (0 - box["x"] / 2, 0 + box["z"] / 2),
                       (0 - box["x"] / 2, 0 - box["z"] / 2), (0 + box["x"] / 2, 0 - box["z"] / 2)]
            placing = None if entry["parentId"] is None else (
                entry["parentId"], position["relativeAnchorToParent"], position["xAlignment"], position["zAlignment"])
            dtheta = metadata["randomness"]["dtheta"]
            # with no play in its turn an object's angle is its rotation whatever its draw: its box is turned once
            fixed = _turned(corners, _angle(0.0, dtheta, metadata["rotation"])) if dtheta == 0 else None
            self.objects.append((instance_id, dtheta, metadata["rotation"], corners, fixed, position["x"],
                                 position["z"], placing))

    def sample(self) -> tuple[np.float64, np.float64]:
        """The group's (x length, z length), stock's draws made."""
        placed: dict[str, tuple[float, float, float, float, float, float]] = {}
        bounds_x_min, bounds_x_max = float("inf"), float("-inf")
        bounds_z_min, bounds_z_max = float("inf"), float("-inf")
        for instance_id, dtheta, rotation, corners, fixed, x, z, placing in self.objects:
            draw = random.random()
            x_min, x_max, z_min, z_max = fixed or _turned(corners, _angle(draw, dtheta, rotation))
            if placing is None:
                x_center, z_center = x, z
            else:
                parent_id, anchor, x_alignment, z_alignment = placing
                parent_x, parent_z, parent_x_min, parent_x_max, parent_z_min, parent_z_max = placed[parent_id]
                x_center = parent_x + x
                z_center = parent_z + z
                parent_x_length = -(parent_x_max - parent_x_min)
                parent_z_length = parent_z_max - parent_z_min
                if anchor in {0, 1, 2}:
                    z_center -= parent_z_length / 2
                elif anchor in {6, 7, 8}:
                    z_center += parent_z_length / 2
                if anchor in {0, 3, 6}:
                    x_center -= parent_x_length / 2
                elif anchor in {2, 5, 8}:
                    x_center += parent_x_length / 2
                if x_alignment == 0:
                    x_center -= (x_max - x_min) / 2
                elif x_alignment == 2:
                    x_center += (x_max - x_min) / 2
                if z_alignment == 0:
                    z_center -= (z_max - z_min) / 2
                elif z_alignment == 2:
                    z_center += (z_max - z_min) / 2
            x_min += x_center
            x_max += x_center
            z_min += z_center
            z_max += z_center
            bounds_x_min = x_min if x_min < bounds_x_min else bounds_x_min
            bounds_z_min = z_min if z_min < bounds_z_min else bounds_z_min
            bounds_x_max = x_max if x_max > bounds_x_max else bounds_x_max
            bounds_z_max = z_max if z_max > bounds_z_max else bounds_z_max
            placed[instance_id] = (x_center, z_center, x_min, x_max, z_min, z_max)
        return np.float64(bounds_x_max - bounds_x_min), np.float64(bounds_z_max - bounds_z_min)


def _angle(draw: float, dtheta: float, rotation: float) -> float:
    """Stock's angle of an object from its draw: its rotation turned by up to `dtheta` either way."""
    theta_offset = draw * dtheta * 2 - dtheta
    return rotation + theta_offset


def _turned(corners: list[tuple[float, float]], theta: float) -> tuple[float, float, float, float]:
    """Stock's `rotate_bounding_box(theta, ...)` about the origin of a box's corners: (x min, x max, z min, z max)."""
    theta_rad = theta * np.pi / 180.0
    cos, sin = float(np.cos(theta_rad)), float(np.sin(theta_rad))
    turned_x = [0 + (cx - 0) * cos + (cz - 0) * sin for cx, cz in corners]
    turned_z = [0 - (cx - 0) * sin + (cz - 0) * cos for cx, cz in corners]
    return min(turned_x), max(turned_x), min(turned_z), max(turned_z)


class GroupDimensions:
    """What `AssetGroupGenerator._set_dimensions` computes of one group's prepared data: the widest and the
    deepest asset of each name (the first maximum, as `idxmax` picks, of the names' assets in the
    order of their set), the greatest height (the numpy scalar a Series.max() gives), and the two
    placements it samples, as GroupBounds."""

    def __init__(self, data: dict) -> None:
        asset_group_assets = {
            asset["name"]: set([asset_id for asset_type, asset_id in asset["assetIds"]])
            for asset in data["assetMetadata"].values()
        }
        widest, deepest, self.max_y = {}, {}, -np.inf
        for name, asset_ids in asset_group_assets.items():
            ids = list(asset_ids)
            boxes = [asset_id_database[asset_id]["boundingBox"] for asset_id in ids]
            for chosen, axis in ((widest, "x"), (deepest, "z")):
                asset_id = ids[max(range(len(ids)), key=lambda k: boxes[k][axis])]
                chosen[name] = (asset_id_database[asset_id]["objectType"], asset_id)
            height = np.array([box["y"] for box in boxes]).max()
            if height > self.max_y:
                self.max_y = height
        self.widest, self.deepest = GroupBounds(data, widest), GroupBounds(data, deepest)

    def sample(self) -> Vector3:
        """The dimensions, stock's draws made: the widest placement's, then the deepest's."""
        x = self.widest.sample()[0]
        z = self.deepest.sample()[1]
        return Vector3(x=x, y=self.max_y, z=z)


def set_dimensions(self: AssetGroupGenerator) -> None:
    """`AssetGroupGenerator._set_dimensions` by GroupDimensions of its data: the same choices and draws."""
    self.cache["dimensions"] = GroupDimensions(self.data).sample()


_prepared_groups: dict[tuple[str, str, int], tuple[dict, bytes]] = {}


def asset_group_post_init(self: AssetGroupGenerator) -> None:
    """`AssetGroupGenerator.__attrs_post_init__` done once per group: later ones unpickle its result.

    Stock deep-copies the group's parsed file, then flattens its asset ids by split and flips x, for
    every group of every house. Those steps depend on the group's data and split only (the data is
    never changed: stock copies before changing anything), so the first result is pickled and each
    later generator gets a fresh unpickled copy: the same dicts, lists, tuples, strings and floats
    (pickle keeps floats exact and shared references shared, as `copy.deepcopy` does).
    """
    key = (self.name, self.split, id(self.data))
    found = _prepared_groups.get(key)
    if found is not None and found[0] is self.data:
        self.data = pickle.loads(found[1])
        self.cache = {}
        return
    original = self.data
    STOCK_POST_INIT(self)
    _prepared_groups[key] = (original, pickle.dumps(self.data, protocol=pickle.HIGHEST_PROTOCOL))


@lru_cache(maxsize=None)
def read_once(read: Callable[[], dict]) -> dict:
    """`read()`, called once per function (item 3)."""
    return read()


_made_once: dict[tuple, tuple[dict, object]] = {}


def _once_per_groups(groups: dict, key: tuple, make: Callable[[], object]) -> object:
    """`make()` once per `key` and parsed asset-group files (`groups`, compared by identity)."""
    found = _made_once.get(key)
    if found is None or found[0] is not groups:
        found = _made_once[key] = (groups, make())
    return found[1]


def _stock_table(groups: dict, split: str, controller) -> pd.DataFrame:
    """Stock's table of every group, made once per split (the random states put back as they were)."""
    def make() -> pd.DataFrame:
        saved_random, saved_numpy = random.getstate(), np.random.get_state()
        table = STOCK_SPAWNABLE_ASSET_GROUP_INFO.__wrapped__(split=split, controller=controller)
        random.setstate(saved_random)
        np.random.set_state(saved_numpy)
        return table

    return _once_per_groups(groups, ("table", split), make)


class HouseAssetGroups:
    """One house's table of asset groups: stock's table made once, and the four columns that change from
    house to house (item 7 of the package docstring).

    Stock builds, for every house, a DataFrame of every group (its name, generator, dimensions,
    room weights, properties, places and a `has<Type>` column for every asset type of the
    database) from a list of dicts. All but four columns depend on the groups' data and the split
    alone (a generator's data after `__attrs_post_init__` does). The dimensions are sampled here as
    stock samples them, group by group (a generator, then its dimensions: the only random draws
    made), by each group's GroupDimensions, made once. The generators, which draw nothing when
    made, are made when first read, for the house's controller, their dimensions cached as stock's
    are.
    """

    def __init__(self, split: str, controller) -> None:
        self.split, self.controller = split, controller
        self.groups = databases._get_asset_groups()
        self.names = list(self.groups)
        self.table = _stock_table(self.groups, split, controller)
        self.dimensions = [self._dimensions(name, data).sample() for name, data in self.groups.items()]
        self.sizes = {column: [d[axis] for d in self.dimensions] for column, axis in zip(SIZE_COLUMNS, "xyz")}
        self.size_arrays = {column: np.array(values) for column, values in self.sizes.items()}
        self._generators: dict[int, AssetGroupGenerator] = {}

    def _dimensions(self, name: str, data: dict) -> GroupDimensions:
        def make() -> GroupDimensions:
            return GroupDimensions(AssetGroupGenerator(name=name, split=self.split, data=data, controller=None).data)

        return _once_per_groups(self.groups, ("dimensions", self.split, name), make)

    def generator(self, position: int) -> AssetGroupGenerator:
        """The generator of the table's row `position`."""
        if position not in self._generators:
            name = self.names[position]
            generator = AssetGroupGenerator(name=name, split=self.split, data=self.groups[name],
                                            controller=self.controller)
            generator.cache["dimensions"] = self.dimensions[position]
            self._generators[position] = generator
        return self._generators[position]

    def frame(self) -> pd.DataFrame:
        """The house's table as stock makes it."""
        table = self.table.copy()
        table["assetGroupGenerator"] = [self.generator(position) for position in range(len(table))]
        for column, values in self.sizes.items():
            table[column] = values
        return table

    def rows(self, room_type: str) -> GroupRows:
        """The rows of a room of `room_type`: stock's `table[table[f"in{room_type}s"] > 0]`."""
        def make() -> tuple[pd.DataFrame, np.ndarray, dict]:
            in_room = self.table[f"in{room_type}s"] > 0
            return self.table[in_room], np.flatnonzero(in_room.to_numpy()), {}

        frame, positions, columns = _once_per_groups(self.groups, ("rows", self.split, room_type), make)
        return GroupRows(self, frame, positions, columns)


class GroupRows(KeptRows):
    """A room's rows of the house's table of asset groups: its rows of stock's table made once, with the
    house's generators and dimensions read in place of that table's."""

    def __init__(self, house: HouseAssetGroups, frame: pd.DataFrame, positions: np.ndarray, columns: dict) -> None:
        super().__init__(frame, columns)
        self.house, self.positions = house, positions
        self._sizes = {column: values[positions] for column, values in house.size_arrays.items()}

    def column(self, name: str) -> np.ndarray:
        if name in self._sizes:
            return self._sizes[name]
        if name == "assetGroupGenerator":
            generators = np.empty(len(self.frame), dtype=object)
            generators[:] = [self.generator(position) for position in range(len(self.frame))]
            return generators
        return super().column(name)

    def generator(self, position: int) -> AssetGroupGenerator:
        """The house's generator of row `position`."""
        return self.house.generator(int(self.positions[position]))

    def kept(self) -> pd.DataFrame:
        frame = self.frame.copy()
        frame["assetGroupGenerator"] = [self.generator(position) for position in range(len(frame))]
        for column, values in self._sizes.items():
            frame[column] = values.tolist()
        return frame if self.keep.all() else frame[self.keep]

    def record(self, position: int, with_index: bool = False) -> dict:
        out = super().record(position, with_index)
        out["assetGroupGenerator"] = self.generator(position)
        for column, values in self._sizes.items():
            out[column] = maybe_box_native(values[position])
        return out


@lru_cache(maxsize=None)  # as stock's get_spawnable_asset_group_info: sampling clears it before and after every house
def house_asset_groups(split: str, controller) -> HouseAssetGroups:
    return HouseAssetGroups(split, controller)


def spawnable_asset_group_info(split: str, controller) -> pd.DataFrame:
    """`get_spawnable_asset_group_info`: the house's table (HouseAssetGroups) as stock makes it."""
    return house_asset_groups(split, controller).frame()


# Sampling clears stock's cache around every house through this name: here that forgets the house's groups.
spawnable_asset_group_info.cache_clear = house_asset_groups.cache_clear
