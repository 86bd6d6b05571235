"""Asset groups: their files and the asset database parsed once, their data prepared once, their
dimensions without DataFrames, their table made from a copy (items 2, 3, 4 and 7 of the package docstring)."""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import pandas as pd
import procthor.databases as databases
from procthor.databases import asset_id_database
from procthor.generation.asset_groups import AssetGroupGenerator
from procthor.utils.types import Vector3

STOCK_SET_DIMENSIONS = AssetGroupGenerator._set_dimensions
STOCK_POST_INIT = AssetGroupGenerator.__attrs_post_init__
STOCK_SPAWNABLE_ASSET_GROUP_INFO = databases.get_spawnable_asset_group_info
PER_HOUSE_COLUMNS = ("assetGroupGenerator", "xSize", "ySize", "zSize")


def set_dimensions(self: AssetGroupGenerator) -> None:
    """`AssetGroupGenerator._set_dimensions` with lists where it builds DataFrames."""
    asset_group_assets = {
        asset["name"]: set([asset_id for asset_type, asset_id in asset["assetIds"]])
        for asset in self.data["assetMetadata"].values()
    }
    widest, deepest, max_y = {}, {}, -np.inf
    for name, asset_ids in asset_group_assets.items():
        ids = list(asset_ids)
        boxes = [asset_id_database[asset_id]["boundingBox"] for asset_id in ids]
        for chosen, axis in ((widest, "x"), (deepest, "z")):
            asset_id = ids[max(range(len(ids)), key=lambda k: boxes[k][axis])]
            chosen[name] = (asset_id_database[asset_id]["objectType"], asset_id)
        height = np.array([box["y"] for box in boxes]).max()  # the numpy scalar a Series.max() gives
        if height > max_y:
            max_y = height
    x_dim_assets = self.sample_object_placement(chosen_asset_ids=widest)
    z_dim_assets = self.sample_object_placement(chosen_asset_ids=deepest)
    self.cache["dimensions"] = Vector3(
        x=x_dim_assets["bounds"]["x"]["length"], y=max_y, z=z_dim_assets["bounds"]["z"]["length"]
    )


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


_group_tables: dict[str, tuple[dict, pd.DataFrame]] = {}


@lru_cache(maxsize=None)  # as stock's: sampling clears it before and after every house
def spawnable_asset_group_info(split: str, controller) -> pd.DataFrame:
    """`get_spawnable_asset_group_info`, its table copied from one stock made once per split and asset groups.

    Stock builds a DataFrame of every group (its name, generator, dimensions, room weights,
    properties, places and a `has<Type>` column for every asset type of the database) from a list
    of dicts, for every house. Only four columns change from house to house: the generators, new
    ones for the house's controller, and the dimensions, sampled with random draws. The rest
    depends on the groups' data and the split alone (a generator's data after `__attrs_post_init__`
    does). So stock's own table is made once, with the random states put back as they were, and
    each house gets a copy with these four columns set to what stock computes for it, in stock's
    order: group by group, a generator, then its dimensions, the only random draws made.
    """
    groups = databases._get_asset_groups()
    found = _group_tables.get(split)
    if found is None or found[0] is not groups:
        saved_random, saved_numpy = random.getstate(), np.random.get_state()
        table = STOCK_SPAWNABLE_ASSET_GROUP_INFO.__wrapped__(split=split, controller=controller)
        random.setstate(saved_random)
        np.random.set_state(saved_numpy)
        found = _group_tables[split] = (groups, table)
    generators, sizes = [], []
    for name, data in groups.items():
        generator = AssetGroupGenerator(name=name, split=split, data=data, controller=controller)
        dimensions = generator.dimensions
        generators.append(generator)
        sizes.append((dimensions["x"], dimensions["y"], dimensions["z"]))
    table = found[1].copy()
    for column, values in zip(PER_HOUSE_COLUMNS, [generators, *zip(*sizes)]):
        table[column] = list(values)
    return table
