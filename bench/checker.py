"""Benchmark of the consistency checker against the python-constraint oracle.

    .venv/bin/python bench/checker.py [--rooms 8] [--seed 0] [--n7-rooms 60] [--agreement 300]
                                      [--build-rooms 20] [--scenes scenes]

1. n5_m4_d144: random rooms (pipeline.testing.synthetic), all 8 settings; the oracle and the checker
   on the same instances, their answers asserted equal. Checker times are cold (its memo
   cleared), best of 3 runs to keep timer and GC noise out; the oracle runs once. A setting
   whose median is under FAST_MS is reported but not held to the ratio: its ratio only measures
   the oracle's fixed cost.
2. n = 7, m cycling through 6..20, d = 12: checker only (the oracle takes minutes there).
3. A longer agreement check over mixed n, d, settings and arbitrary (often unsatisfiable)
   fact sets, sized so that the oracle stays quick.
4. The figure users feel: the checker's time per real room (scene files of --scenes, sampled if
   missing) over the default configurations, and its share of their item generation.
The relation tables are built once per grid size before any timing (reported separately).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.scene.scene_folder import ensure_scene  # noqa: E402
from pipeline.spatial.checker import Answers, answer_set, forget_answers  # noqa: E402
from pipeline.spatial.facts import SETTINGS, Fact, described_pairs, raster_facts, story_facts  # noqa: E402
from pipeline.spatial.grid import GRID_SIZES  # noqa: E402
from pipeline.testing.oracle import oracle_answer_set  # noqa: E402
from pipeline.testing.synthetic import random_facts, random_raster  # noqa: E402
from pipeline.text.configs import DEFAULT_CONFIGS  # noqa: E402
from pipeline.text.items import RoomItems  # noqa: E402

SPEEDUP_TARGET = 200.0
FAST_MS = 0.1  # a setting's median under this is not held to SPEEDUP_TARGET
N7_MEDIAN_MS, N7_MAX_MS = 5.0, 250.0


def names_of(n: int) -> list[str]:
    return [f"o{k + 1}" for k in range(n)]


def story(rng: random.Random, n: int, m: int, d: int) -> dict[str, tuple[Fact, ...]]:
    """The facts of every setting for one random room."""
    raster = random_raster(rng, n, d)
    pairs = described_pairs(n, m) if n >= 3 else ()
    return story_facts(raster_facts(raster, names_of(n)), pairs)


def time_checker(facts, names, d, repeats: int = 1) -> tuple[float, frozenset[str]]:
    """Seconds of the fastest of `repeats` cold runs, and the answer."""
    best = float("inf")
    for _ in range(repeats):
        forget_answers()
        start = time.perf_counter()
        answer = answer_set(facts, names, (names[0], names[-1]), d)
        best = min(best, time.perf_counter() - start)
    return best, answer


def time_oracle(facts, names, d) -> tuple[float, frozenset[str]]:
    start = time.perf_counter()
    answer = oracle_answer_set(facts, names, (names[0], names[-1]), d)
    return time.perf_counter() - start, answer


def speedup(rooms: int, seed: int) -> bool:
    n, m, d = 5, 4, 12
    rng = random.Random(f"speed-{seed}")
    oracle_s = {s: [] for s in SETTINGS}
    checker_s = {s: [] for s in SETTINGS}
    names = names_of(n)
    for room in range(rooms):
        for setting, facts in story(rng, n, m, d).items():
            seconds, expected = time_oracle(facts, names, d)
            oracle_s[setting].append(seconds)
            seconds, answer = time_checker(facts, names, d, repeats=3)
            checker_s[setting].append(seconds)
            assert answer == expected, (room, setting, facts, answer, expected)
        print(f"  room {room + 1}/{rooms} done", file=sys.stderr)
    print(f"\n## n{n}_m{m}_d{d * d}: {rooms} rooms x 8 settings, oracle vs checker (answers equal on all)\n")
    print("| setting | oracle median ms | checker median ms | ratio of medians |")
    print("|---|---:|---:|---:|")
    for setting in SETTINGS:
        o, c = statistics.median(oracle_s[setting]), statistics.median(checker_s[setting])
        print(f"| {setting} | {o * 1e3:.2f} | {c * 1e3:.3f} | {o / c:.0f}x |")
    total_oracle = sum(sum(v) for v in oracle_s.values())
    total_checker = sum(sum(v) for v in checker_s.values())
    ratio = total_oracle / total_checker
    print(f"| **all 8 (total time)** | {total_oracle * 1e3:.0f} | {total_checker * 1e3:.2f} | {ratio:.0f}x |")
    held = [s for s in SETTINGS if statistics.median(checker_s[s]) * 1e3 >= FAST_MS]
    per_setting = [statistics.median(oracle_s[s]) / statistics.median(checker_s[s]) for s in held]
    passed = ratio >= SPEEDUP_TARGET and all(r >= SPEEDUP_TARGET for r in per_setting)
    print(
        f"\ntarget >= {SPEEDUP_TARGET:.0f}x over all 8 settings and in each setting whose median is at least "
        f"{FAST_MS:g} ms: {'MET' if passed else 'NOT MET'} ({ratio:.0f}x overall; "
        f"{sum(r >= SPEEDUP_TARGET for r in per_setting)}/{len(held)} such settings"
        + (f", lowest {min(per_setting):.0f}x" if per_setting else "") + f"); {8 - len(held)} settings under "
        f"{FAST_MS:g} ms; checker time per room over all 8 settings: {total_checker / rooms * 1e3:.2f} ms"
    )
    return passed


def build_share(scenes: Path, rooms: int, seed: int) -> None:
    """The checker's time per real room over the default configurations, and its share of their item
    generation (the items' time includes the checker's; both cold, their memos cleared)."""
    items_s = checker_s = 0.0
    for index in range(rooms):
        scene = ensure_scene(scenes, seed, index)
        forget_answers()
        start = time.perf_counter()
        room = RoomItems(scene)
        items = {config: room(config) for config in DEFAULT_CONFIGS}
        items_s += time.perf_counter() - start
        forget_answers()
        for config, config_items in items.items():
            if config_items:
                names = [o.name for o in config_items[0].objects]
                facts = {item.setting: item.facts for item in config_items if item.setting in SETTINGS}
                start = time.perf_counter()
                Answers(names, (names[0], names[-1]), config.d).answer_sets(facts)
                checker_s += time.perf_counter() - start
    configs = ", ".join(config.name for config in DEFAULT_CONFIGS)
    print(f"\n## the checker in the build: {rooms} rooms of seed {seed}, {configs}\n\n"
          f"checker {checker_s / rooms * 1e3:.2f} ms per room of {items_s / rooms * 1e3:.1f} ms of item generation: "
          f"{checker_s / items_s:.0%} of it")


def n7_batch(rooms: int, seed: int) -> bool:
    n, d = 7, 12
    rng = random.Random(f"n7-{seed}")
    checker_s = {s: [] for s in SETTINGS}
    names = names_of(n)
    ms = list(range(n - 1, n * (n - 1) // 2))  # 6..20
    for room in range(rooms):
        for setting, facts in story(rng, n, ms[room % len(ms)], d).items():
            checker_s[setting].append(time_checker(facts, names, d)[0])
    print(f"\n## n = 7, m = 6..20, d = 12: {rooms} rooms, checker only (one cold run each)\n")
    print("| setting | median ms | max ms |")
    print("|---|---:|---:|")
    passed = True
    for setting in SETTINGS:
        median, worst = statistics.median(checker_s[setting]) * 1e3, max(checker_s[setting]) * 1e3
        passed &= median < N7_MEDIAN_MS and worst < N7_MAX_MS
        print(f"| {setting} | {median:.3f} | {worst:.2f} |")
    verdict = "MET" if passed else "NOT MET"
    print(f"\ntarget median < {N7_MEDIAN_MS:g} ms and max < {N7_MAX_MS:g} ms per setting: {verdict}")
    return passed


# The oracle's exhaustive refutations grow fast with n when no regions shrink the domains.
def largest_n(setting: str, d: int) -> int:
    if "layout" in setting or setting == "tpp":
        return 7
    return 4 if d == 9 else 3


def agreement(count: int, seed: int) -> None:
    rng = random.Random(f"agree-{seed}")
    empty = 0
    start = time.perf_counter()
    for k in range(count):
        d = rng.choice(GRID_SIZES)
        if k % 3 == 2:  # arbitrary facts, often contradictory
            names = names_of(rng.randint(2, 4))
            facts = random_facts(rng, names, max_facts=2 * len(names) + 2)
        else:
            setting = rng.choice(SETTINGS)
            n = rng.randint(2, largest_n(setting, d))
            m = rng.randint(n - 1, n * (n - 1) // 2 - 1) if n >= 3 else 0
            facts = story(rng, n, m, d)[setting]
            names = names_of(n)
        forget_answers()
        query = (names[0], names[-1])
        answer, expected = answer_set(facts, names, query, d), oracle_answer_set(facts, names, query, d)
        assert answer == expected, (facts, names, d, answer, expected)
        empty += not answer
    print(
        f"\n## agreement: checker == oracle on all {count} further instances "
        f"({empty} with an empty answer set; n 2-7, d 9 and 12; {time.perf_counter() - start:.0f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=8, help="n5_m4_d144 rooms timed against the oracle")
    parser.add_argument("--n7-rooms", type=int, default=60, help="n = 7 rooms timed (checker only)")
    parser.add_argument("--agreement", type=int, default=300, help="further instances checked against the oracle")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--build-rooms", type=int, default=20, help="real rooms for the checker's share of the build")
    parser.add_argument("--scenes", type=Path, default=Path("scenes"), help="their scene folder, filled if need be")
    args = parser.parse_args()

    for d in GRID_SIZES:
        start = time.perf_counter()
        warm_up = [Fact("a", "N", "b"), Fact("a", "D2C", "b"), Fact("a", "TPP", None)]
        answer_set(warm_up, ["a", "b"], ("a", "b"), d)
        print(f"relation tables for d={d} built in {(time.perf_counter() - start) * 1e3:.0f} ms (once per process)")
    results = [speedup(args.rooms, args.seed), n7_batch(args.n7_rooms, args.seed)]
    agreement(args.agreement, args.seed)
    build_share(args.scenes, args.build_rooms, args.seed)
    print(f"\nall targets {'MET' if all(results) else 'NOT MET'}")


if __name__ == "__main__":
    main()
