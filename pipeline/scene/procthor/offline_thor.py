"""The one place where Unity is replaced: ProcTHOR's pre-physics stages without an AI2-THOR build.

ProcTHOR's `HouseGenerator` needs a `Controller` (a Unity process) for very little before the
physics stages (docs/semantics.md section 1, re-measured on procthor==0.0.1.dev2 by running the
generator with a recording stand-in):

* `HouseGenerator.set_seed` sends `SetRandomSeed` (seeds Unity's physics RNG; no reply used);
* `AssetGroupGenerator.get_intersecting_objects` (only when two boxes of an asset group such
  as chairs around a dining table overlap) sends `reset`, then `SpawnAsset` and
  `GetInSceneAssetGeometry` per object, and hands the returned meshes to a trimesh collision
  check. Answering "no mesh" (an empty list) makes that check find no collision, which is what
  Unity answers whenever the meshes do not touch: the group is kept as sampled. That check
  builds a `trimesh.collision.CollisionManager`, which needs `python-fcl` (not a dependency of
  procthor, nor of roomspace) even when it is given no mesh: offline it is replaced by
  `NoMeshCollisionManager`, which returns what an FCL manager holding no mesh returns
  (no collision);
* the small-objects stage (`add_small_objects`: `ResetObjectFilter`, `CreateHouse`, object
  metadata, physics drops) and `House.validate` (`CreateHouse`, `TeleportFull`,
  `GetReachablePositions`) need real physics. They are not run offline: small objects sit on
  receptacles and are never prominent, and validation is a reachability check.

`OfflineController` answers exactly the four pre-physics actions and raises a `RoomspaceError`
naming any other action, so a future procthor that asks Unity for more fails loudly instead of
silently producing different houses. `offline_stages()` is the only run-time patch for Unity: it
swaps ProcTHOR's small-objects stage for a no-op and the mesh collision manager of
`procthor.generation.asset_groups` for `NoMeshCollisionManager` while a house is sampled, and
restores both.

Everything else (room specs, floor plan, doors' data, materials, lights, floor objects, asset
groups, wall objects) is ProcTHOR's own code, called unchanged.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pipeline.errors import RoomspaceError
from pipeline.scene.procthor.patching import patched

# The actions ProcTHOR's pre-physics stages send through `step` (plus `Controller.reset()`).
PRE_PHYSICS_ACTIONS = ("SetRandomSeed", "SpawnAsset", "GetInSceneAssetGeometry")


class OfflineEvent:
    """The part of `ai2thor.server.Event` that ProcTHOR reads: success and `actionReturn`."""

    def __init__(self, action: str, action_return: Any = None) -> None:
        self.metadata = {
            "lastActionSuccess": True,
            "lastAction": action,
            "errorMessage": "",
            "actionReturn": action_return,
        }

    def __bool__(self) -> bool:
        return True


class OfflineController:
    """A stand-in for `ai2thor.controller.Controller` that answers the pre-physics actions only.

    `actions` counts what was asked, so tests and benches can see what ProcTHOR needed.
    """

    def __init__(self) -> None:
        self.actions: Counter[str] = Counter()
        self.last_event = OfflineEvent("Initialize")

    def step(self, action: str | dict | None = None, **kwargs: Any) -> OfflineEvent:
        if isinstance(action, dict):  # ai2thor also accepts step(dict(action=..., ...))
            kwargs = {**action, **kwargs}
            action = kwargs.pop("action", None)
        if action not in PRE_PHYSICS_ACTIONS:
            raise RoomspaceError(
                f"the offline ProcTHOR controller cannot answer the AI2-THOR action {action!r}: "
                "it needs the Unity build (--controller ai2thor)"
            )
        self.actions[action] += 1
        # "No mesh": the collision check of asset groups then finds no collision.
        self.last_event = OfflineEvent(action, [] if action == "GetInSceneAssetGeometry" else None)
        return self.last_event

    def reset(self, scene: str | None = None, **kwargs: Any) -> OfflineEvent:
        self.actions["reset"] += 1
        self.last_event = OfflineEvent("reset")
        return self.last_event

    def stop(self) -> None:
        pass


class NoMeshCollisionManager:
    """What `trimesh.collision.CollisionManager` is for the offline controller's empty meshes."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def add_object(self, name: str, mesh: Any = None, **kwargs: Any) -> None:
        if mesh is not None and len(getattr(mesh, "faces", ())) > 0:
            raise RoomspaceError("the offline collision check was given a real mesh; it needs python-fcl")
        self.names.append(name)

    def in_collision_internal(self, return_names: bool = False, return_data: bool = False):
        result: tuple = (False,)
        if return_names:
            result += (set(),)
        if return_data:
            result += ([],)
        return result if len(result) > 1 else result[0]


def _no_small_objects(**kwargs: Any) -> None:
    """Offline replacement of `procthor.generation.add_small_objects`: needs Unity physics."""
    return None


@contextlib.contextmanager
def offline_stages() -> Iterator[None]:
    """While active, `HouseGenerator.sample()` skips the small-objects stage and collides no meshes."""
    import procthor.generation as generation
    import procthor.generation.asset_groups as asset_groups

    with patched(generation, "add_small_objects", _no_small_objects), \
            patched(asset_groups, "CollisionManager", NoMeshCollisionManager):
        yield
