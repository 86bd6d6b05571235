"""CPU milliseconds per image of the offline renderer (pipeline.render), and seconds per image of Blender's engines.

    python bench/render.py [--scenes scenes] [--rooms 12] [--seed 0] [--repeats 3]
                           [--blender-rooms 1] [--engines workbench,cycles:4,cycles:16]

Rooms 0..rooms-1 of the seed are read from the scene folder (sampled into it when missing). Each
offline image is drawn `repeats` times after one warm-up (fonts, data files); the best time per image
is kept, as the least disturbed by the machine. The kinds: the plan, the plan with its 12 x 12 grid,
the south-door view, and a first-person view from the middle of the room facing north (the
vision_agent kind's). Times are this process's CPU time: the renderer runs on one thread, and
other jobs on a shared machine stretch wall time far more. Each image is drawn as the first of
its room: the renderer's cache of a room's faces (pipeline.render.door.room_faces), which its
other views share in a build, is emptied before every repeat. Printed: one line per room, then the
mean and the median per image kind, and PNG sizes. Each repeat must give the same bytes.

Then, given --blender-rooms (0 by default, so that `make bench` needs no Blender), each Blender
engine of --engines (engine:samples; needs `make blender`) renders the plan, the door view and that
first-person view of the first --blender-rooms rooms once each (after one warm-up view: the
worker's start), and prints per engine the wall seconds per view and the CPU seconds Blender spent
on it (the whole request: scene set-up, render, PNG), the median over the views; and what the
images of RoomSpace-100 (RENDERS_100 views: its plans, door views and distinct first-person views)
cost in CPU time and on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from pipeline.render import blender
from pipeline.render.door import pose_png, pose_view, room_faces, south_door_frame, south_door_png
from pipeline.render.plan import top_down_png
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.scene_folder import ensure_scene


RENDERS_100 = 544  # the views RoomSpace-100's images render: 100 plans, 100 door views, 344 first-person cameras


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
    parser.add_argument("--blender-rooms", type=int, default=0, help="rooms Blender renders (default 0: none)")
    parser.add_argument("--engines", default="workbench,cycles:4,cycles:16",
                        help="Blender engines to time, engine[:samples], comma-separated (eevee:16 is slow)")
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
    if args.blender_rooms:
        print()
        blender_bench(rooms[: args.blender_rooms], args.engines.split(","))
    return 0


def blender_bench(rooms: list, engines: list[str]) -> None:
    """Seconds per view of each Blender engine (module docstring)."""
    print(f"{'engine':<24} {'wall s/view':>11} {'CPU s/view':>10} {'RoomSpace-100 CPU':>17} {'on 2 cores':>10}")
    for spec in engines:
        engine, _, samples = spec.partition(":")
        settings = blender.BlenderSettings.asked(engine, int(samples) if samples else None)
        requests = []
        for scene, house in rooms:
            requests.append(blender.top_down_request(scene, house, settings))
            requests.append(blender.perspective_request(scene, house, south_door_frame(scene, house).camera, settings,
                                                        cut_south=True))
            view = pose_view(scene, house, (scene.side / 2, scene.side / 2), "N")
            requests.append(blender.perspective_request(scene, house, view.frame.camera, settings, cut_south=False))
        worker = blender.worker(settings)
        worker.render(requests[0])  # warm-up: the worker's start
        walls, cpus = [], []
        for request in requests:
            started = time.perf_counter()
            _, cpu = worker.render(request)
            walls.append(time.perf_counter() - started)
            cpus.append(cpu)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        total = cpu * RENDERS_100
        label = "workbench" if engine == "workbench" else f"{engine} {settings.samples} samples"
        label += ", denoised" if engine == "cycles" and settings.denoise else ""
        print(f"{label:<24} {wall:>11.1f} {cpu:>10.2f} "
              f"{total / 60:>13.1f} min {total / 120:>6.1f} min", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
