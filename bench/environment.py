"""Items per second per core of the training environment (issue 44), from a scene pool and from nothing, per
ladder level, beside reasoning-core's `qualitative_reasoning` at a matched size, in the same run.

    .venv-train/bin/python bench/environment.py [--scenes scenes/] [--rooms 50] [--items 500] [--seed 0]

Run with the Python of .venv-train (`make test-train` makes it; reasoning-core is there). Every rate is per
core: items / CPU seconds (time.process_time) of one process, a fresh one per measurement, so that no
cache of an earlier one (ProcTHOR's databases, the checker's tables) helps a later one. Items are drawn
with replacement, so a small pool repeats questions: "distinct" counts the questions among them.

* From a scene pool: a new Environment per rung over houses 0 .. rooms-1 of the seed in --scenes (those
  missing are sampled first, untimed), each room's rows made when first drawn (timed: they are most of
  the cost), --items items of the rung.
* From nothing: the same over a fresh folder per rung, each house sampled by ProcTHOR (offline) when
  first drawn (timed).
* The rungs: n5_m4_d144_balanced at levels 0, 1 and 2 and n8_m20_d144_hard (level 3: only search answers).
* reasoning-core's qualitative_reasoning at the level whose number of entities is RoomSpace's number of
  objects (its `n_entities` is 5 + level): level 0 beside the n5 rungs, level 3 beside the n8 one.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.environment.items import Environment  # noqa: E402
from pipeline.environment.rungs import Rung  # noqa: E402
from pipeline.scene.scene_folder import sample_scenes  # noqa: E402

RUNGS = (Rung("n5_m4_d144_balanced", level=0), Rung("n5_m4_d144_balanced", level=1),
         Rung("n5_m4_d144_balanced", level=2), Rung("n8_m20_d144_hard", level=3))
REASONING_CORE_BASE_ENTITIES = 5  # qualitative_reasoning's n_entities at level 0 (5 + level)


def environment_rates(seed: int, rooms: int, scenes: Path | None, rung: Rung, items: int) -> tuple[float, float]:
    """(items drawn, distinct questions) per CPU second of a cold environment: run in a process of its own."""
    if scenes is None:
        with tempfile.TemporaryDirectory(prefix="roomspace-bench-") as fresh:
            return environment_rates(seed, rooms, Path(fresh), rung, items)
    environment = Environment(seed, rooms, scenes)
    started = time.process_time()
    ids = {item.row["id"] for item in environment.items(rung, items)}
    spent = time.process_time() - started
    return items / spent, len(ids) / spent


def reasoning_core_rate(level: int, items: int, seed: int) -> float:
    """qualitative_reasoning items per CPU second at `level`: run in a process of its own."""
    from reasoning_core import get_task

    task = get_task("qualitative_reasoning")
    random.seed(seed)
    started = time.process_time()
    for _ in range(items):
        task.generate_example(level=level)
    return items / (time.process_time() - started)


def cold(function, *args):
    """function(*args) in a fresh process (spawned: no module state or cache of an earlier measurement)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=Path, default=ROOT / "scenes", help="the scene pool's folder (default scenes/)")
    parser.add_argument("--rooms", type=int, default=50, help="rooms in the pool (default 50)")
    parser.add_argument("--items", type=int, default=500, help="items drawn per rung (default 500)")
    parser.add_argument("--core-items", type=int, default=30, help="reasoning-core items per level (default 30)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sample_scenes(count=args.rooms, seed=args.seed, out=args.scenes, progress=False, workers=1)  # untimed
    print(f"per CPU second of one process, each measured cold in a process of its own: {args.items} items drawn a "
          f"rung from a pool of {args.rooms} rooms of seed {args.seed} (distinct: the questions among them); "
          f"reasoning-core 0.5.0 qualitative_reasoning, {args.core_items} items a level\n")
    print("| rung | objects | pool: items | pool: distinct | nothing: items | nothing: distinct "
          "| reasoning-core (level, entities) | pool distinct / reasoning-core |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for rung in RUNGS:
        level = rung.base.n - REASONING_CORE_BASE_ENTITIES
        core = cold(reasoning_core_rate, level, args.core_items, args.seed)
        pool_items, pool_distinct = cold(environment_rates, args.seed, args.rooms, args.scenes, rung, args.items)
        nothing_items, nothing_distinct = cold(environment_rates, args.seed, args.rooms, None, rung, args.items)
        print(f"| {rung.describe()} | {rung.base.n} | {pool_items:,.1f} | {pool_distinct:,.1f} | {nothing_items:,.1f} | "
              f"{nothing_distinct:,.1f} | {core:,.2f} (level {level}, {REASONING_CORE_BASE_ENTITIES + level}) | "
              f"{pool_distinct / core:,.0f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
