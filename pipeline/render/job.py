"""The `roomspace render` job: two images per room, `OUT/<room_id>/top_down.png` and `south_door.png`.

The offline renderer draws them from a scene file: the top-down plan (pipeline.render.plan) from
its scene record, the view from the south door (pipeline.render.door) with the heights its house
JSON adds. `--renderer ai2thor` (pipeline.render.thor) draws the same two views photoreal.
Offline images are deterministic: the same scene gives byte-identical PNGs (no antialiasing, fixed
PNG settings; the label font is Pillow's bundled one); the dataset build embeds them, through
`offline_images`, in its vision rows. An image already on disk is kept while its RENDER_KEY
(pipeline.render.png) is the one the chosen renderer would write.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from pipeline.errors import RoomspaceError
from pipeline.files import writable_folder, write_atomic
from pipeline.render.door import south_door_png
from pipeline.render.plan import top_down_png
from pipeline.render.png import IMAGES, render_key_of
from pipeline.render.style import offline_key
from pipeline.render.thor import ThorRenderer, thor_key
from pipeline.scene.records import Scene
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.scene_folder import ensure_scene
from pipeline.spatial.grid import check_grid_size

RENDERERS = ("offline", "ai2thor")


def offline_images(scene: Scene, house: Mapping, grid: int | None = None,
                   names: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Both offline PNGs of a scene, by image name, its prominent objects labelled by `names`
    ({object id: label}; by default pipeline.render.labels.label_texts's)."""
    return {"top_down": top_down_png(scene, grid, names), "south_door": south_door_png(scene, house, names)}


@dataclass(frozen=True)
class RenderReport:
    rooms: int  # rooms considered
    rendered: int  # images drawn now
    kept: int  # images already on disk with the same RENDER_KEY


def _scene_files(scenes_dir: Path, seed: int, rooms: int | None) -> tuple[int, Iterator[Path]]:
    """(how many, the scene files to render): rooms 0..rooms-1 of `seed`, sampled when missing,
    else every scene file of `seed` in the folder."""
    if rooms is None:
        paths = sorted(scenes_dir.glob(f"s{seed}-*.json"))
        if not paths:
            raise RoomspaceError(f"no scenes of seed {seed} in {scenes_dir}; run `roomspace scenes` or pass --rooms")
        return len(paths), iter(paths)

    def sampled() -> Iterator[Path]:
        for index in range(rooms):
            ensure_scene(scenes_dir, seed, index)
            yield scene_path(scenes_dir, seed, index)

    return rooms, sampled()


def render_rooms(
    scenes_dir: str | os.PathLike,
    out: str | os.PathLike,
    rooms: int | None = None,
    seed: int = 0,
    grid: int | None = None,
    renderer: str = "offline",
    force: bool = False,
    progress: bool = True,
) -> RenderReport:
    """Write OUT/<room_id>/top_down.png and south_door.png for each scene; images already made are kept.

    Every argument is checked, and the output folder proven writable, before anything is drawn.
    """
    if renderer not in RENDERERS:
        raise RoomspaceError(f"unknown renderer {renderer!r} (choose from {', '.join(RENDERERS)})")
    if grid is not None:
        check_grid_size(grid)
        if renderer != "offline":
            raise RoomspaceError("--grid is drawn by the offline renderer only")
    if rooms is not None and (isinstance(rooms, bool) or not isinstance(rooms, int) or rooms <= 0):
        raise RoomspaceError(f"rooms must be a positive whole number, got {rooms!r}")
    scenes_dir, out = Path(scenes_dir), Path(out)
    total, paths = _scene_files(scenes_dir, seed, rooms)
    draw, keys = _renderer(renderer, grid)
    writable_folder(out)

    rendered = kept = count = 0
    with tqdm(total=total, unit="room", desc="renders", file=sys.stderr, disable=not progress) as bar:
        for path in paths:
            scene = load_scene(path)
            folder = out / scene.room_id
            targets = {name: folder / f"{name}.png" for name in IMAGES}
            todo = [name for name, target in targets.items() if force or render_key_of(target) != keys[name]]
            if todo:
                images = draw(scene, load_house(path))
                folder.mkdir(exist_ok=True)
                for name in todo:
                    write_atomic(targets[name], lambda target: target.write_bytes(images[name]))
            rendered += len(todo)
            kept += len(IMAGES) - len(todo)
            count += 1
            bar.update(1)
    return RenderReport(rooms=count, rendered=rendered, kept=kept)


def _renderer(renderer: str, grid: int | None) -> tuple[Callable[[Scene, Mapping], dict[str, bytes]], dict[str, str]]:
    """(scene, house) -> images, and the RENDER_KEY each image carries; AI2-THOR is checked here, at once."""
    if renderer == "offline":
        keys = {name: offline_key(name, grid) for name in IMAGES}
        return (lambda scene, house: offline_images(scene, house, grid)), keys
    return ThorRenderer(), {name: thor_key() for name in IMAGES}
