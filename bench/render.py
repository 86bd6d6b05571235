"""CPU milliseconds per image of the offline renderer (pipeline.render), on the scenes in a folder.

    python bench/render.py [--scenes scenes] [--rooms 12] [--seed 0] [--repeats 3]

Rooms 0..rooms-1 of the seed are read from the scene folder (sampled into it when missing). Each
image is drawn `repeats` times after one warm-up (fonts, data files); the best time per image is
kept, as the least disturbed by the machine. The kinds: the plan, the plan with its 12 x 12 grid,
the south-door view, and a first-person view from the middle of the room facing north (the
vision_agent kind's). Times are this process's CPU time: the renderer runs on one thread, and
other jobs on a shared machine stretch wall time far more. Each image is drawn as the first of
its room: the renderer's cache of a room's faces (pipeline.render.door.room_faces), which its
other views share in a build, is emptied before every repeat. Printed: one line per room, then the
mean and the median per image kind, and PNG sizes. Each repeat must give the same bytes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from pipeline.render.door import pose_png, room_faces, south_door_png
from pipeline.render.plan import top_down_png
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.scene_folder import ensure_scene


def best_ms(draw, repeats: int) -> tuple[float, bytes]:
    times, outputs = [], set()
    for _ in range(repeats):
        room_faces.cache_clear()  # each image drawn as a room's first: its faces made afresh
        started = time.process_time()
        outputs.add(draw())
        times.append((time.process_time() - started) * 1000)
    assert len(outputs) == 1, "the same scene gave different bytes"
    return min(times), outputs.pop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    parser.add_argument("--rooms", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    rooms = []
    for k in range(args.rooms):
        ensure_scene(args.scenes, args.seed, k)
        path = scene_path(args.scenes, args.seed, k)
        rooms.append((load_scene(path), load_house(path)))
    top_down_png(rooms[0][0]), south_door_png(*rooms[0])  # warm-up

    kinds = {
        "top_down": lambda scene, house: top_down_png(scene),
        "top_down+grid": lambda scene, house: top_down_png(scene, grid=12),
        "south_door": lambda scene, house: south_door_png(scene, house),
        "first_person": lambda scene, house: pose_png(scene, house, (scene.side / 2, scene.side / 2), "N"),
    }
    results: dict[str, list[tuple[float, int]]] = {kind: [] for kind in kinds}
    print(f"{'room':<11} {'type':<11} {'objects':>7} " + " ".join(f"{kind + ' ms':>17}" for kind in kinds))
    for scene, house in rooms:
        row = []
        for kind, draw in kinds.items():
            ms, png = best_ms(lambda: draw(scene, house), args.repeats)
            results[kind].append((ms, len(png)))
            row.append(f"{ms:>17.1f}")
        print(f"{scene.room_id:<11} {scene.room_type:<11} {len(scene.objects):>7} " + " ".join(row))
    print()
    for kind, values in results.items():
        times = [ms for ms, _ in values]
        sizes = [size for _, size in values]
        print(f"{kind:<14} mean {statistics.mean(times):6.1f} ms/image, median {statistics.median(times):6.1f} ms, "
              f"max {max(times):6.1f} ms; PNG {statistics.mean(sizes) / 1024:5.1f} KiB on average")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
