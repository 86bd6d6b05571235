"""Item generation over the sweep: this checkout against an anchor commit, on the same rooms, in one run.

    python bench/sweep.py [--rooms 30] [--workers 2] [--repeats 2] [--anchor f8c19b2] [--scenes scenes]

Checks the anchor out in a temporary `git worktree`, then builds `--configs sweep` over the same
rooms from the same scene files with each tree's own `roomspace build` (a subprocess run from that
tree), the two taking turns `--repeats` times. Prints, per tree, the item seconds per room (worker
time, from the build's report; the best of the repeats), wall seconds per room and the peak memory
of the process tree, then the anchor's time over this checkout's: the speed-up per room.
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


def build_sweep(tree: Path, rooms: int, workers: int, scenes: Path, out: Path) -> dict:
    """One sweep build by the roomspace of `tree`: item and wall seconds per room, peak tree memory, rows."""
    command = [sys.executable, "-m", "pipeline.cli", "build", "--rooms", str(rooms), "--configs", "sweep",
               "--scenes", str(scenes), "--out", str(out), "--workers", str(workers), "--quiet"]
    environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    wall, peak, report = run(command, cwd=tree, env=environment)
    return {"items": float(re.search(r"items ([\d.]+) s", report).group(1)) / rooms, "wall": wall / rooms,
            "peak": peak, "rows": int(re.search(r": (\d+) rows", report).group(1))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--anchor", default="f8c19b2", help="the commit to compare with (issue 19's)")
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    args = parser.parse_args(argv)
    scenes = args.scenes.resolve()
    run([sys.executable, "-m", "pipeline.cli", "scenes", "--count", str(args.rooms), "--out", str(scenes),
         "--workers", str(args.workers), "--quiet"], cwd=ROOT)
    with tempfile.TemporaryDirectory(prefix="roomspace-sweep-") as folder:
        anchor = Path(folder) / "anchor"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(anchor), args.anchor],
                       check=True, capture_output=True)
        try:
            trees = {f"anchor {args.anchor}": anchor, "this checkout": ROOT}
            runs: dict[str, list[dict]] = {name: [] for name in trees}
            for repeat in range(args.repeats):
                for name, tree in trees.items():
                    out = Path(folder) / f"out-{repeat}-{name.split()[0]}"
                    runs[name].append(build_sweep(tree, args.rooms, args.workers, scenes, out))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(anchor)], check=True)
    best = {name: min(results, key=lambda r: r["items"]) for name, results in runs.items()}
    print(f"\n## the sweep ({best['this checkout']['rows']} rows) over {args.rooms} rooms, {args.workers} workers, "
          f"scenes on disk; best of {args.repeats}\n")
    print("| tree | item s per room | wall s per room | peak MiB (process tree) |")
    print("|---|---:|---:|---:|")
    for name, result in best.items():
        print(f"| {name} | {result['items']:.3f} | {result['wall']:.3f} | {result['peak'] / 2**20:.0f} |")
    anchor_result, current = best[f"anchor {args.anchor}"], best["this checkout"]
    ratio, wall_ratio = anchor_result["items"] / current["items"], anchor_result["wall"] / current["wall"]
    print(f"\nitem time per room: {ratio:.1f}x faster than {args.anchor} (wall per room {wall_ratio:.1f}x); "
          f"target >= {TARGET:g}x: {'MET' if ratio >= TARGET else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
