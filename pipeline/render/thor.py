"""Photoreal renders through AI2-THOR: `roomspace render --renderer ai2thor`.

The same two views as the offline renderer (pipeline.render.plan, pipeline.render.door), from the
same house JSON, in the pinned Unity build (`pipeline.scene.procthor.ai2thor.AI2THOR_COMMIT_ID`, the build
ai2thor==5.0.0 ships with):

* top_down.png: AI2-THOR's map-view camera (`GetMapViewCameraProperties`, an orthographic
  camera above the room) added as a third-party camera, turned so that north (+z) is up;
* south_door.png: the agent teleported into the doorway, 0.4 m inside the room on the door's
  centre line, facing north (rotation y = 0), its head level (horizon 0).

The images carry RENDER_KEY ("ai2thor <commit>") but no LABELS_KEY: nothing here says which
objects a frame shows, so pipeline.dataset.vision makes only image-plus-story rows from them.
Unity's output depends on the GPU and driver, so these images are not promised to be
byte-identical.

How to run it. It needs the Unity build (about 1 GB, downloaded once by ai2thor to
~/.ai2thor/releases) and a display:

* a Linux desktop or a server with an X server on a GPU:
  `DISPLAY=:0 roomspace render --renderer ai2thor --scenes scenes/ --out renders-thor/ --rooms 100`
  (on a headless GPU server start one first, e.g. `sudo python -m ai2thor.startx`, then use its
  display);
* macOS: the same command; ai2thor runs the OSXIntel64 build.

Where no build can be had (offline, no release for the platform), `check_ai2thor_build` stops
the command at once with a one-line error, before any folder is written.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from PIL import Image

from pipeline.errors import RoomspaceError
from pipeline.render.png import png_bytes
from pipeline.render.style import check_drawable
from pipeline.scene.procthor.ai2thor import AI2THOR_COMMIT_ID, check_ai2thor_build
from pipeline.scene.records import Scene

THOR_SIZE = (800, 600)  # width, height of both frames, px
DOORWAY_STEP = 0.4  # m from the south wall to where the agent stands
AGENT_FOV = 90  # degrees, the agent camera's vertical field of view


def thor_key() -> str:
    return f"ai2thor {AI2THOR_COMMIT_ID}"


class ThorRenderer:
    """One Unity process, reused for every room; call it with (scene, house) for both PNGs."""

    def __init__(self) -> None:
        try:  # a missing build is a one-line error before anything starts
            check_ai2thor_build()
        except RoomspaceError as error:  # its words are the scenes command's: say them for this one
            raise RoomspaceError(str(error).replace("--controller", "--renderer")) from None
        try:
            from ai2thor.controller import Controller

            width, height = THOR_SIZE
            self.controller = Controller(
                commit_id=AI2THOR_COMMIT_ID, scene="Procedural", width=width, height=height,
                fieldOfView=AGENT_FOV, quality="Ultra",
            )
        except Exception as error:  # Unity failed to start (no display, no GPU): say so in one line
            raise RoomspaceError(
                f"--renderer ai2thor: could not start the Unity build ({type(error).__name__}: {error}); "
                "it needs a display (DISPLAY) or a GPU, see pipeline/render/thor.py"
            ) from None

    def __call__(self, scene: Scene, house: Mapping) -> dict[str, bytes]:
        check_drawable(scene)
        door = next((o for o in scene.openings if o.kind == "door"), None)
        if door is None:
            raise RoomspaceError(f"scene {scene.room_id} has no door to stand in")
        controller = self.controller
        controller.reset(scene="Procedural")
        event = controller.step(action="CreateHouse", house=dict(house))
        self._check(event, "CreateHouse")
        standing = house.get("metadata", {}).get("agent", {}).get("position", {}).get("y", 0.95)
        event = controller.step(
            action="TeleportFull", x=(door.start[0] + door.end[0]) / 2, y=standing, z=DOORWAY_STEP,
            rotation={"x": 0, "y": 0, "z": 0}, horizon=0, standing=True, forceAction=True,
        )
        self._check(event, "TeleportFull")
        south_door = self._png(event.frame)
        camera = controller.step(action="GetMapViewCameraProperties").metadata["actionReturn"]
        camera = {**camera, "rotation": {"x": 90, "y": 0, "z": 0}}  # looking down, north at the top
        event = controller.step(action="AddThirdPartyCamera", skyboxColor="white", **camera)
        self._check(event, "AddThirdPartyCamera")
        top_down = self._png(event.third_party_camera_frames[-1])
        return {"top_down": top_down, "south_door": south_door}

    @staticmethod
    def _check(event, action: str) -> None:
        if not event.metadata.get("lastActionSuccess", False):
            raise RoomspaceError(f"AI2-THOR {action} failed: {event.metadata.get('errorMessage') or 'no message'}")

    @staticmethod
    def _png(frame: np.ndarray) -> bytes:
        return png_bytes(Image.fromarray(np.ascontiguousarray(frame[..., :3]), "RGB"), thor_key())
