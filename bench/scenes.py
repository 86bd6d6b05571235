"""Time per room of stock offline scene sampling (one ProcTHOR house, no resampling).

    python bench/scenes.py [--rooms 10] [--seed 0]

Each room is `pipeline.scenes.sample_scene(seed, k, min_prominent=0)`: ProcTHOR's generator with
the offline controller, the south-door stage, the record and its canonical JSON. Printed: one
line per room, then mean / median / max, and the share of time spent in ProcTHOR's pure-Python
rectangle merging (`OrthogonalPolygon._join_neighboring_rectangles`, design.md section 1).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.scenes import dumps, sample_scene, scene_document  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sample_scene(args.seed, 0, min_prominent=0)  # warm-up: imports, asset databases
    profile = cProfile.Profile()
    times = []
    print(f"{'room':>14} {'type':>10} {'side':>6} {'objects':>7} {'seconds':>8}")
    for k in range(args.rooms):
        started = time.perf_counter()
        profile.enable()
        house, scene = sample_scene(args.seed, k, min_prominent=0)
        dumps(scene_document(house, scene))
        profile.disable()
        elapsed = time.perf_counter() - started
        times.append(elapsed)
        print(f"{scene.room_id:>14} {scene.room_type:>10} {scene.side:6.2f} {len(scene.objects):7d} {elapsed:8.2f}")
    stats = pstats.Stats(profile)
    merge = sum(
        row[3] for func, row in stats.stats.items() if func[2] == "_join_neighboring_rectangles"
    )
    total = sum(times)
    print(
        f"{args.rooms} rooms: mean {statistics.mean(times):.2f} s/room, median {statistics.median(times):.2f}, "
        f"max {max(times):.2f}; rectangle merging {merge / total:.0%} of the time (profiled)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
