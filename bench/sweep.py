"""Item generation over the sweep: this checkout against an anchor commit, on the same rooms, in one run.

    python bench/sweep.py [--rooms 30] [--workers 2] [--repeats 3] [--anchor f8c19b2] [--scenes scenes]

Checks the anchor out in a temporary `git worktree`. The ratio is of CPU seconds per room of each
tree's own `room_job` over `--configs sweep` (one process per tree and repeat, the trees taking
turns, the best repeat kept): CPU time, because wall time on a shared machine measures its other
jobs too. Then one `roomspace build --configs sweep` per tree from the same scene files gives the
wall time per room and the peak memory of the process tree.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from build import run

ROOT = Path(__file__).resolve().parents[1]
TARGET = 4.0  # issue 19: item generation over the sweep at least 4x faster per room than the anchor
CPU_PER_ROOM = """
import sys, time
from pathlib import Path
try:
    from pipeline.dataset.build import room_job
    from pipeline.text.configs import sweep
except ImportError:  # the layout before the stage packages (f8c19b2)
    from pipeline.build import room_job
    from pipeline.items import sweep
try:  # a tree with configuration kinds: room_job takes (kind, configuration) outputs
    from pipeline.dataset.build import BuildPlan
    outputs = BuildPlan.asked("sweep", 0, 0, sweep()).outputs
except (ImportError, AttributeError):
    outputs = sweep()
scenes, seed, rooms = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
room_job(seed, rooms, scenes, outputs)  # a room outside the timed ones: tables, schemas and memos warm
start = time.process_time()
for index in range(rooms):
    room_job(seed, index, scenes, outputs)
print((time.process_time() - start) / rooms)
"""


def environment(tree: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}


def cpu_per_room(tree: Path, scenes: Path, seed: int, rooms: int) -> float:
    done = subprocess.run([sys.executable, "-c", CPU_PER_ROOM, str(scenes), str(seed), str(rooms)], cwd=tree,
                          env=environment(tree), capture_output=True, text=True, check=True)
    return float(done.stdout)


def build_sweep(tree: Path, scenes: Path, seed: int, rooms: int, workers: int, out: Path) -> dict:
    """One sweep build by the roomspace of `tree`: wall seconds per room, peak tree memory, rows."""
    command = [sys.executable, "-m", "pipeline.cli", "build", "--rooms", str(rooms), "--configs", "sweep",
               "--seed", str(seed), "--scenes", str(scenes), "--out", str(out), "--workers", str(workers), "--quiet"]
    wall, peak, report = run(command, cwd=tree, env=environment(tree))
    return {"wall": wall / rooms, "peak": peak, "rows": int(re.search(r": (\d+) rows", report).group(1))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2, help="of the builds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--anchor", default="f8c19b2", help="the commit to compare with (issue 19's)")
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scenes = args.scenes.resolve()
    run([sys.executable, "-m", "pipeline.cli", "scenes", "--count", str(args.rooms + 1), "--seed", str(args.seed),
         "--out", str(scenes), "--workers", str(args.workers), "--quiet"], cwd=ROOT)
    with tempfile.TemporaryDirectory(prefix="roomspace-sweep-") as folder:
        anchor = Path(folder) / "anchor"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(anchor), args.anchor],
                       check=True, capture_output=True)
        try:
            trees = {f"anchor {args.anchor}": anchor, "this checkout": ROOT}
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeats):
                for name, tree in trees.items():
                    cpu[name].append(cpu_per_room(tree, scenes, args.seed, args.rooms))
            builds = {name: build_sweep(tree, scenes, args.seed, args.rooms, args.workers, Path(folder) / f"out-{k}")
                      for k, (name, tree) in enumerate(trees.items())}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(anchor)], check=True)
    print(f"\n## the sweep ({builds['this checkout']['rows']} rows) over {args.rooms} rooms of seed {args.seed}, "
          f"scenes on disk\n")
    print(f"| tree | item CPU s per room (best of {args.repeats}) | build wall s per room ({args.workers} workers) "
          "| build peak MiB (process tree) |")
    print("|---|---:|---:|---:|")
    for name in trees:
        print(f"| {name} | {min(cpu[name]):.3f} | {builds[name]['wall']:.3f} | {builds[name]['peak'] / 2**20:.0f} |")
    anchor_name = f"anchor {args.anchor}"
    ratio = min(cpu[anchor_name]) / min(cpu["this checkout"])
    wall_ratio = builds[anchor_name]["wall"] / builds["this checkout"]["wall"]
    print(f"\nitem CPU time per room: {ratio:.1f}x less than {args.anchor} (build wall per room {wall_ratio:.1f}x); "
          f"target >= {TARGET:g}x: {'MET' if ratio >= TARGET else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
