"""Items per second per core of the training environment (issue 44), from a scene pool and from nothing, beside
reasoning-core's `qualitative_reasoning` at a matched size, in the same run.

    .venv-train/bin/python bench/environment.py [--scenes scenes/] [--rooms 50] [--items 500] [--seed 0]

Run with the Python of .venv-train (`make test-train` makes it; reasoning-core is there). Every rate is per core:
items / CPU seconds (time.process_time) of one process, a fresh one per measurement, so that no cache of an
earlier measurement helps a later one. What a process makes once whatever it is asked (reasoning-core: its
calculi's composition tables, made when its task is; RoomSpace: the modules a kind imports, the checker's
tables, the scene schema's validator, ProcTHOR's databases) is made before the clock starts: reasoning-core's
task is made, and RoomSpace makes the rows of one room outside the pool (house `rooms` of the seed). Then Python's
cyclic collector goes through what is there once (gc.collect(), both sides): what those imports and tables left
in its young generations would otherwise be gone through by the first collections on the clock, a cost a process
pays once (RoomSpace: 50-65 ms, made while the collector is paused for a room, a tenth of 50 rooms of a map kind).

reasoning-core is measured before RoomSpace's rungs and again after them, and each ratio is against the faster
of its two rates: the machine's load moves both sides (reasoning-core's level 0 made 13.7 and 16.5 items/s at
the two ends of one run of the map kinds), and the faster is the ratio least in RoomSpace's favour.

Matched size: reasoning-core's level L asks about 5 + L entities (its boxes' corners on 7 integer coordinates
a side, its intervals' ends on 9), told as a tree of relations plus about L/2 more and then as many as its
answer needs; RoomSpace's n objects on a grid of 9 cells a side (d81), m = n - 1 described pairs (a tree),
each story stating those pairs' relations and the objects' regions; an egocentric map's n + 1 entities (its
answer draws the observer too, a variable of its story like any object, so it is matched one level up). The table gives each side's mean facts
per question, measured. Kinds whose questions are about other things (shapes: two objects; composition: the
calculi's tables and a room's footprints) and the hard family (20 described pairs) are listed beside them.

Three rates of RoomSpace per rung, from a pool of --rooms rooms (houses 0 .. rooms-1 of --seed in --scenes;
those missing are sampled first, untimed):
* drawn: --items items drawn with replacement (Environment.items), each room's rows made when it is first
  drawn, so a small pool repeats questions;
* distinct: the questions among those drawn, per CPU second of drawing them all;
* every row: each room's rows of the rung once (Environment.room_rows, room after room): what a trainer going
  through the pool gets, no question drawn twice and none made in vain.
And "from nothing" for the ladder's rungs: drawn as above from a fresh folder, each house sampled by ProcTHOR
(offline) when first drawn, timed.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import random
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.environment.items import Environment  # noqa: E402
from pipeline.environment.rungs import Rung  # noqa: E402
from pipeline.scene.scene_folder import sample_scenes  # noqa: E402

REASONING_CORE_BASE_ENTITIES = 5  # qualitative_reasoning's n_entities at level 0 (5 + level)
OBSERVER_DRAWN = ("agent_map",)  # kinds whose answer places the observer too (`entities`)
TEXT_KINDS = ("n5_m4_d81", "n5_m4_d81_balanced", "twin_n5_m4_d81", "agent_n5_m4_d81", "map_n5_m4_d81",
              "twin_map_n5_m4_d81", "agent_map_n5_m4_d81")  # at reasoning-core level 0's size (agent_map: 1's)
LARGER = ("n6_m5_d81", "n7_m6_d81", "n8_m7_d81")  # at levels 1, 2 and 3
UNMATCHED = ("shapes_n5_m4_d81", "composition_n5_m4_d81", "n8_m20_d81_hard")
LADDER = (Rung("n5_m4_d81_balanced", level=0), Rung("n5_m4_d81_balanced", level=1),
          Rung("n5_m4_d81_balanced", level=2), Rung("n8_m20_d81_hard", level=3))


def warm(seed: int, rooms: int, scenes: Path, rung: Rung) -> None:
    """Make the rows of house `rooms` (outside the pool): what a process makes once, made before the clock starts,
    and collected once (module docstring)."""
    Environment(seed, rooms + 1, scenes).room_rows(rooms, rung)
    gc.collect()


def facts(rows) -> float | None:
    counted = [len(row["facts"]) for row in rows if row.get("facts")]
    return mean(counted) if counted else None


def drawn_rates(seed: int, rooms: int, scenes: Path | None, rung: Rung, items: int) -> tuple[float, float, float | None]:
    """(items drawn, distinct questions) per CPU second, and the distinct questions' mean facts: a process of its own."""
    if scenes is None:
        with tempfile.TemporaryDirectory(prefix="roomspace-bench-") as fresh:
            return drawn_rates(seed, rooms, Path(fresh), rung, items)
    warm(seed, rooms, scenes, rung)
    environment = Environment(seed, rooms, scenes)
    started = time.process_time()
    drawn = [item.row for item in environment.items(rung, items)]
    spent = time.process_time() - started
    distinct = {row["id"]: row for row in drawn}
    return items / spent, len(distinct) / spent, facts(distinct.values())


def every_row_rate(seed: int, rooms: int, scenes: Path, rung: Rung) -> tuple[float, int]:
    """(the pool's rows of the rung per CPU second, how many): a process of its own."""
    warm(seed, rooms, scenes, rung)
    environment = Environment(seed, rooms, scenes)
    started = time.process_time()
    made = sum(len(environment.room_rows(index, rung)) for index in range(rooms))
    return made / (time.process_time() - started), made


def reasoning_core_rate(level: int, items: int, seed: int) -> tuple[float, float]:
    """(qualitative_reasoning items per CPU second at `level`, their mean facts): a process of its own."""
    warnings.filterwarnings("ignore")  # tiktoken's download refused offline: it counts words instead, said once
    from reasoning_core import get_task

    task = get_task("qualitative_reasoning")
    gc.collect()  # as RoomSpace's warm-up is (module docstring)
    random.seed(seed)
    started = time.process_time()
    made = [task.generate_example(level=level) for _ in range(items)]
    spent = time.process_time() - started
    return items / spent, mean(len(example.metadata["facts"]) for example in made)


def cold(function, *args):
    """function(*args) in a fresh process (spawned: no module state or cache of an earlier measurement)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def entities(rung: Rung) -> int:
    """What a rung's question places: its objects, and the observer where its answer draws them too (an
    egocentric map: the observer is a variable of its story like any object, and a cell of its map)."""
    return rung.base.n + (rung.kind.name in OBSERVER_DRAWN)


def level_of(rung: Rung) -> int:
    """reasoning-core's level with as many entities as the rung's questions place."""
    return entities(rung) - REASONING_CORE_BASE_ENTITIES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=Path, default=ROOT / "scenes", help="the scene pool's folder (default scenes/)")
    parser.add_argument("--rooms", type=int, default=50, help="rooms in the pool (default 50)")
    parser.add_argument("--items", type=int, default=500, help="items drawn per rung (default 500)")
    parser.add_argument("--core-items", type=int, default=60, help="reasoning-core items per level (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sample_scenes(count=args.rooms + 1, seed=args.seed, out=args.scenes, progress=False, workers=1)  # untimed
    print(f"per CPU second of one process, each measured in a process of its own after what it makes once: {args.items} "
          f"items drawn a rung from a pool of {args.rooms} rooms of seed {args.seed} (distinct: the questions among "
          f"them; every row: each room's rows of the rung once); reasoning-core 0.5.0 qualitative_reasoning, "
          f"{args.core_items} items a level\n")
    before = [cold(reasoning_core_rate, level, args.core_items, args.seed) for level in range(4)]
    rungs = [Rung(name) for name in (*TEXT_KINDS, *LARGER, *UNMATCHED)]
    measured = [(*cold(drawn_rates, args.seed, args.rooms, args.scenes, rung, args.items),
                 *cold(every_row_rate, args.seed, args.rooms, args.scenes, rung)) for rung in rungs]
    after = [cold(reasoning_core_rate, level, args.core_items, args.seed) for level in range(4)]
    core = [max(rates, key=lambda rate: rate[0]) for rates in zip(before, after)]
    for level, ((first, facts_told), (second, _)) in enumerate(zip(before, after)):
        print(f"reasoning-core level {level} ({REASONING_CORE_BASE_ENTITIES + level} entities): {first:.2f} items/s "
              f"before RoomSpace's rungs, {second:.2f} after (the faster in the ratios), {facts_told:.1f} facts "
              "a question")
    print("\n| rung | entities | facts | drawn/s | distinct/s | every row/s (rows) | reasoning-core/s (level) "
          "| distinct / reasoning-core | every row / reasoning-core |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for rung, (drawn, distinct, our_facts, every, made) in zip(rungs, measured):
        level = min(max(level_of(rung), 0), 3)
        rate, core_facts = core[level]
        told = f"{our_facts:.1f} / {core_facts:.1f}" if our_facts is not None else f"- / {core_facts:.1f}"
        print(f"| {rung.describe()} | {entities(rung)} | {told} | {drawn:,.0f} | {distinct:,.0f} | {every:,.0f} ({made}) "
              f"| {rate:.2f} ({level}) | {distinct / rate:,.0f}x | {every / rate:,.0f}x |", flush=True)
    print("\nthe ladder's rungs, from the pool and from nothing (drawn; distinct):\n")
    print("| rung | pool: drawn/s | pool: distinct/s | nothing: drawn/s | nothing: distinct/s |")
    print("|---|---:|---:|---:|---:|")
    for rung in LADDER:
        pool_drawn, pool_distinct, _ = cold(drawn_rates, args.seed, args.rooms, args.scenes, rung, args.items)
        nothing_drawn, nothing_distinct, _ = cold(drawn_rates, args.seed, args.rooms, None, rung, args.items)
        print(f"| {rung.describe()} | {pool_drawn:,.0f} | {pool_distinct:,.0f} | {nothing_drawn:,.0f} | "
              f"{nothing_distinct:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
