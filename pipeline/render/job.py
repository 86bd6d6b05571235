"""The `roomspace render` job: two images per room, `OUT/<room_id>/top_down.png` and `south_door.png`.

The offline renderer draws them from a scene file: the top-down plan (pipeline.render.plan) from
its scene record, the view from the south door (pipeline.render.door) with the heights its house
JSON adds. `--renderer blender` (pipeline.render.blender) renders the same views of the same shapes
with Blender, labelled alike; `--renderer ai2thor` (pipeline.render.thor) draws them photoreal.
Offline images are deterministic: the same scene gives byte-identical PNGs (no antialiasing, fixed
PNG settings; the label font is Pillow's bundled one); the dataset build embeds them, through
`offline_images`, in its vision rows. An image already on disk is kept while its RENDER_KEY
(pipeline.render.png) is the one the chosen renderer would write.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from pipeline.errors import RoomspaceError
from pipeline.files import writable_folder, write_atomic
from pipeline.render.blender import BlenderSettings, blender_images, blender_view_png, blender_key, check_blender
from pipeline.render.door import View, south_door_png, view_png
from pipeline.render.plan import top_down_png
from pipeline.render.png import IMAGES, render_key_of
from pipeline.render.style import offline_key
from pipeline.render.thor import ThorRenderer, thor_key
from pipeline.scene.records import Scene
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.scene_folder import ensure_scene
from pipeline.spatial.grid import check_grid_size

RENDERERS = ("offline", "blender", "ai2thor")
BUILD_RENDERERS = ("offline", "blender")  # the ones that record which objects an image shows: the vision rows need that


@dataclass(frozen=True)
class Renderer:
    """Which renderer draws a build's or a render job's images, with its settings (Blender's)."""

    name: str = "offline"
    blender: BlenderSettings | None = field(default=None)

    @classmethod
    def asked(cls, name: str = "offline", engine: str | None = None, samples: int | None = None,
              choices: tuple[str, ...] = RENDERERS) -> Renderer:
        if name not in choices:
            raise RoomspaceError(f"unknown renderer {name!r} (choose from {', '.join(choices)})")
        if name != "blender":
            if engine is not None or samples is not None:
                raise RoomspaceError("--blender-engine and --blender-samples are settings of --renderer blender")
            return cls(name)
        return cls(name, BlenderSettings.asked(engine, samples))

    @classmethod
    def from_identity(cls, identity: Mapping | None) -> Renderer:
        """The renderer a build's identity names (none: the offline renderer)."""
        if identity is None:
            return cls()
        settings = {key: value for key, value in identity.items() if key != "name"}
        return cls(identity["name"], BlenderSettings(**settings))

    def identity(self) -> dict | None:
        """What a build's identity says of it: nothing for the offline renderer (a build's identity is
        what it was before other renderers), the settings for Blender."""
        return None if self.blender is None else self.blender.identity()

    def describe(self) -> str:
        return self.blender.describe() if self.blender is not None else f"roomspace's {self.name} renderer"

    def check(self) -> None:
        """Fail now, in one line, if the renderer cannot run here (Blender's bpy missing)."""
        if self.blender is not None:
            check_blender(self.blender)

    def images(self, scene: Scene, house: Mapping, grid: int | None = None,
               names: Mapping[str, str] | None = None) -> dict[str, bytes]:
        """Both images of a scene (`offline_images`'s views), labelled by `names`."""
        if self.blender is not None:
            return blender_images(scene, house, self.blender, grid, names)
        return offline_images(scene, house, grid, names)

    def view_png(self, scene: Scene, house: Mapping, view: View, names: Mapping[str, str] | None = None) -> bytes:
        """A first-person view's PNG (pipeline.render.door.pose_view), labelled by `names`."""
        if self.blender is not None:
            return blender_view_png(scene, house, view, self.blender, names)
        return view_png(scene, view, names)


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
    renderer: str | Renderer = "offline",
    force: bool = False,
    progress: bool = True,
) -> RenderReport:
    """Write OUT/<room_id>/top_down.png and south_door.png for each scene; images already made are kept.

    Every argument is checked, and the output folder proven writable, before anything is drawn.
    """
    renderer = renderer if isinstance(renderer, Renderer) else Renderer.asked(renderer)
    if grid is not None:
        check_grid_size(grid)
        if renderer.name == "ai2thor":
            raise RoomspaceError("--grid is drawn by the offline and Blender renderers only")
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


def _renderer(renderer: Renderer, grid: int | None) -> tuple[Callable[[Scene, Mapping], dict[str, bytes]], dict[str, str]]:
    """(scene, house) -> images, and the RENDER_KEY each image carries; AI2-THOR and Blender are checked here, at once."""
    if renderer.name == "ai2thor":
        return ThorRenderer(), {name: thor_key() for name in IMAGES}
    renderer.check()
    if renderer.blender is not None:
        keys = {name: blender_key(renderer.blender, name, grid) for name in IMAGES}
    else:
        keys = {name: offline_key(name, grid) for name in IMAGES}
    return (lambda scene, house: renderer.images(scene, house, grid)), keys
