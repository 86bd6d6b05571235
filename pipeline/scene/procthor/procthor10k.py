"""ProcTHOR-10K's square single-room houses as scenes (`--source procthor-10k`), read through `prior`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pipeline.errors import RoomspaceError
from pipeline.scene.objects import asset_info, load_rule
from pipeline.scene.procthor.sampling import digest, record, room_side, versions
from pipeline.scene.records import SOURCE_NAMES, Scene
from pipeline.scene.scene_file import dumps


def import_prior():
    try:
        import prior  # optional: imported only for this source
    except ImportError:
        raise RoomspaceError(
            "--source procthor-10k needs the 'prior' package, which is not installed "
            "(pip install prior; it also needs network access to download ProcTHOR-10K)"
        ) from None
    return prior


def procthor10k_single_rooms(seed: int) -> list[dict]:
    """The single-room houses of ProcTHOR-10K that are squares at the origin, in an order seeded by `seed`.

    Reads the published set through `prior` (not a dependency of roomspace: `pip install prior`;
    it downloads the set, so it needs the network). Its houses keep ProcTHOR's own door, which
    is not necessarily centred on the south wall.
    """
    prior = import_prior()
    try:
        dataset = prior.load_dataset("procthor-10k")
    except Exception as error:  # prior raises many kinds of network and git errors
        raise RoomspaceError(
            f"--source procthor-10k: prior could not load ProcTHOR-10K ({type(error).__name__}: {error}); it needs network access"
        ) from None
    rooms = []
    for split in ("train", "val", "test"):
        for position, house in enumerate(dataset[split]):
            if isinstance(house, str | bytes):
                house = json.loads(house)
            if len(house.get("rooms", ())) != 1:
                continue
            try:
                room_side(house)
            except RoomspaceError:
                continue
            rooms.append((digest("procthor-10k", seed, split, position), house))
    rooms.sort(key=lambda pair: pair[0])
    return [house for _, house in rooms]


def _hung_on_wall(house: Mapping[str, Any]) -> set[str]:
    """Objects ProcTHOR hung on a wall, recognised without its stage boundaries: well off the floor, not on top of anything."""
    hung = set()
    for obj in house["objects"]:
        object_type, size = asset_info(obj["assetId"])
        if object_type in load_rule().wall_hung_types and float(obj["position"]["y"]) > size[1] / 2 + 0.3:
            hung.add(obj["id"])
    return hung


def procthor10k_scene(houses: list[dict], seed: int, index: int) -> tuple[dict, Scene]:
    if index >= len(houses):
        raise RoomspaceError(f"ProcTHOR-10K has only {len(houses)} square single-room houses, asked for house {index}")
    house = json.loads(dumps(houses[index]))
    versions_ = (*versions("offline"), ("procthor-10k", "prior"))
    return house, record(house, _hung_on_wall(house), seed, index, 0, SOURCE_NAMES["procthor-10k"], versions_)
