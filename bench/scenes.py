"""Seconds per room of scene sampling: stock ProcTHOR against ProcTHOR with pipeline.scene.procthor.fast_procthor installed.

    python bench/scenes.py [--rooms 30] [--seed 0]

Each room is sampled twice in this process, `sample_scene(seed, k, stock_procthor=True)` then
`sample_scene(seed, k)`, and the two house files must be byte-identical. Printed: one line per
room, then the totals and the speed-up measured in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from pipeline.scene.procthor.sampling import sample_scene
from pipeline.scene.scene_file import dumps, scene_document


def timed(seed: int, index: int, stock_procthor: bool) -> tuple[float, str, object]:
    started = time.perf_counter()
    house, scene = sample_scene(seed, index, stock_procthor=stock_procthor)
    return time.perf_counter() - started, dumps(scene_document(house, scene)), scene


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sample_scene(args.seed, 0)  # warm-up: imports, asset databases
    stock_times, fast_times = [], []
    print(f"{'room':>14} {'type':>10} {'objects':>7} {'stock s':>8} {'fast s':>8} {'ratio':>6} same")
    for k in range(args.rooms):
        stock, stock_bytes, scene = timed(args.seed, k, stock_procthor=True)
        fast, fast_bytes, _ = timed(args.seed, k, stock_procthor=False)
        if stock_bytes != fast_bytes:
            print(f"{scene.room_id}: pipeline.scene.procthor.fast_procthor changed the house", file=sys.stderr)
            return 1
        stock_times.append(stock)
        fast_times.append(fast)
        print(f"{scene.room_id:>14} {scene.room_type:>10} {len(scene.objects):7d} {stock:8.3f} {fast:8.3f} "
              f"{stock / fast:6.1f} yes")
    print(f"{args.rooms} rooms, byte-identical: stock {statistics.mean(stock_times):.3f} s/room "
          f"(median {statistics.median(stock_times):.3f}), fast {statistics.mean(fast_times):.3f} s/room "
          f"(median {statistics.median(fast_times):.3f}); fast is {sum(stock_times) / sum(fast_times):.1f}x "
          f"faster in total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
