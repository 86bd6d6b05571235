"""The real AI2-THOR controller (`--controller ai2thor`): the pinned Unity build, or one line saying why not."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from pipeline.errors import RoomspaceError

# The Unity build ai2thor==5.0.0 ships with.
AI2THOR_COMMIT_ID = "f0825767cd50d69f666c7f282e54abfe58f1e917"
AI2THOR_PROBE_TIMEOUT = 3.0  # seconds to wait for the build server before giving up


def check_ai2thor_build() -> None:
    """Fail at once, in one line, if the pinned Unity build is neither local nor downloadable."""
    try:
        from ai2thor.build import Build
        from ai2thor.platform import CloudRendering, Linux64, OSXIntel64
    except ImportError as error:
        raise RoomspaceError(f"--controller ai2thor needs the ai2thor package ({error})") from None
    releases = Path.home() / ".ai2thor" / "releases"
    platforms = (OSXIntel64,) if sys.platform == "darwin" else (CloudRendering, Linux64)
    builds = [Build(p, AI2THOR_COMMIT_ID, False, releases_dir=str(releases)) for p in platforms]
    if any(os.path.isfile(b.executable_path) for b in builds):
        return
    import requests

    reason = "not reachable"
    for build in builds:
        try:
            response = requests.head(build.url, timeout=AI2THOR_PROBE_TIMEOUT, allow_redirects=True)
        except requests.RequestException as error:
            reason = f"not reachable: {type(error).__name__}"
            continue
        if response.status_code == 200:
            return
        reason = f"HTTP {response.status_code}"
    raise RoomspaceError(
        f"--controller ai2thor needs the AI2-THOR Unity build {AI2THOR_COMMIT_ID[:12]}, which is not in "
        f"{releases} and could not be downloaded ({reason}); use --controller offline"
    )


@lru_cache(maxsize=1)
def ai2thor_controller():
    check_ai2thor_build()
    try:
        from ai2thor.controller import Controller
        from procthor.constants import PROCTHOR_INITIALIZATION

        init = {k: v for k, v in PROCTHOR_INITIALIZATION.items() if k != "branch"}
        return Controller(commit_id=AI2THOR_COMMIT_ID, quality="Low", **init)
    except Exception as error:  # the Unity process failed to start: say so in one line
        raise RoomspaceError(f"--controller ai2thor: could not start the Unity build ({type(error).__name__}: {error})") from None

