"""Distribution of sampled scenes: room types, sides, prominent objects, resampling.

    python bench/scene_stats.py [--rooms 200] [--seed 0] [--jobs 2] [--out DIR]

Samples houses 0..rooms-1 of the global seed exactly as `roomspace scenes` does
(`sample_scene(seed, k)`, resampling rooms with fewer than MIN_PROMINENT prominent objects) in
`--jobs` worker processes; with `--out` the scene files are written there too (existing valid
files are read instead of resampled).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.scene import scene_file  # noqa: E402
from pipeline.scene.procthor import sampling  # noqa: E402
from pipeline.scene.records import ROOM_TYPES  # noqa: E402


def one(job: tuple[int, int, str | None]):
    seed, index, out = job
    if out is not None:
        path = scene_file.scene_path(out, seed, index)
        if path.exists():
            return scene_file.load_scene(path)
    house, scene = sampling.sample_scene(seed, index)
    if out is not None:
        scene_file.write_scene(scene_file.scene_path(out, seed, index), house, scene)
    return scene


def histogram(values, width=40) -> list[str]:
    counts = Counter(values)
    top = max(counts.values())
    return [f"  {value!s:>6}: {counts[value]:4d} {'#' * round(width * counts[value] / top)}" for value in sorted(counts)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    jobs = [(args.seed, k, None if args.out is None else str(args.out)) for k in range(args.rooms)]
    with Pool(args.jobs) as pool:
        records = pool.map(one, jobs, chunksize=1)
    elapsed = time.perf_counter() - started

    n = len(records)
    need = sampling.MIN_PROMINENT
    print(f"{n} rooms, seed {args.seed}, {args.jobs} processes, {elapsed:.0f} s ({elapsed * args.jobs / n:.2f} s/room/process)")
    print(f"prominence rule: pipeline/data/prominence.json; n = {need}; at most {sampling.MAX_ATTEMPTS} attempts per room")

    print("\nroom types:")
    types = Counter(r.room_type for r in records)
    for room_type in ROOM_TYPES:
        print(f"  {room_type:>10}: {types[room_type]:4d} ({types[room_type] / n:.0%})")

    sides = [r.side for r in records]
    print(f"\nside w (m): min {min(sides):.2f}, median {statistics.median(sides):.2f}, mean {statistics.mean(sides):.2f}, max {max(sides):.2f}")
    print("\n".join(histogram([f"{round(s * 5) / 5:.1f}" for s in sides])))

    counts = [len(r.prominent) for r in records]
    print(f"\nprominent objects per room (kept attempt): fraction with >= {need}: {sum(c >= need for c in counts) / n:.1%}")
    print("\n".join(histogram(counts)))

    print(f"\nby room type: rooms, prominent min/median/max, >= {need}, needed resampling, still short, mean attempts")
    by_type = defaultdict(list)
    for r in records:
        by_type[r.room_type].append(r)
    for room_type in ROOM_TYPES:
        rs = by_type[room_type]
        if not rs:
            continue
        c = [len(r.prominent) for r in rs]
        resampled = sum(r.attempt > 0 for r in rs)
        short = sum(x < need for x in c)
        print(
            f"  {room_type:>10}: {len(rs):4d}  {min(c):2d}/{statistics.median(c):4.1f}/{max(c):2d}  "
            f"{sum(x >= need for x in c) / len(rs):6.1%}  {resampled / len(rs):6.1%}  {short:3d}  "
            f"{statistics.mean(r.attempt + 1 for r in rs):.2f}"
        )
    resampled = sum(r.attempt > 0 for r in records)
    print(f"  {'all':>10}: {n:4d}  resampled {resampled / n:.1%}, still short {sum(c < need for c in counts)}")

    print("\nattempts used (attempt index kept):")
    print("\n".join(histogram([r.attempt for r in records])))

    print("\nprominent object types (all rooms): floor / wall-hung")
    floor = Counter(o.type for r in records for o in r.prominent if not o.wall_hung)
    hung = Counter(o.type for r in records for o in r.prominent if o.wall_hung)
    print("  floor: " + ", ".join(f"{t} {c}" for t, c in floor.most_common()))
    print("  wall:  " + ", ".join(f"{t} {c}" for t, c in hung.most_common()))
    other = Counter(o.type for r in records for o in r.objects if not o.prominent)
    print("  not prominent: " + ", ".join(f"{t} {c}" for t, c in other.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
