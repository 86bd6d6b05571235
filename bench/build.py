"""Items per second and peak memory of a build, measured on a real `roomspace build` subprocess.

    python bench/build.py [--rooms 1000] [--workers 2] [--configs default|sweep|...] [--scenes scenes | --from-nothing]

Builds into a temporary folder from the scene folder (sampling what is missing first, timed
apart), samples the resident memory of the whole process tree every 50 ms, and prints the wall
time, rows, rows per second of item generation, the CPU seconds of the whole process tree (its
workers' and the main process's: unlike the workers' seconds, which are wall time in each worker,
they hardly change with the machine's load) and the peak memory of the tree. `--from-nothing`
times one build that samples every scene itself into an empty temporary folder, as
`make roomspace-10k` does on a fresh machine.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def children_cpu() -> float:
    """CPU seconds (user and system) of every child process waited for so far, theirs included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(command: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, int, str, float]:
    """(wall seconds, peak tree RSS in bytes, stdout, CPU seconds of the tree) of a command."""
    started, cpu = time.perf_counter(), children_cpu()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=env)
    watched = psutil.Process(process.pid)
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss(watched))
        time.sleep(0.05)
    out = process.stdout.read()
    if process.returncode:
        sys.exit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return time.perf_counter() - started, peak, out, children_cpu() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    parser.add_argument("--configs", default="default", help="as `roomspace build --configs`")
    parser.add_argument("--from-nothing", action="store_true", help="sample the scenes inside the build, into an empty folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    roomspace = [sys.executable, "-m", "pipeline.cli"]
    common = ["--seed", str(args.seed), "--workers", str(args.workers), "--quiet"]
    with tempfile.TemporaryDirectory() as folder:
        scenes = Path(folder) / "scenes" if args.from_nothing else args.scenes
        if not args.from_nothing:
            scenes_wall, scenes_peak, _, _ = run([*roomspace, "scenes", "--count", str(args.rooms), "--out", str(scenes),
                                                  *common])
            print(f"scenes for {args.rooms} rooms (missing ones sampled): {scenes_wall:.1f} s wall, "
                  f"peak {scenes_peak / 2**20:.0f} MiB")
        wall, peak, report, cpu = run([*roomspace, "build", "--rooms", str(args.rooms), "--scenes", str(scenes),
                                       "--out", f"{folder}/roomspace-bench-{args.rooms}", "--configs", args.configs,
                                       *common])
    rows = int(re.search(r": (\d+) rows", report).group(1))
    scene_seconds, item_seconds = map(float, re.search(r"scenes ([\d.]+) s and items ([\d.]+) s", report).groups())
    print(f"build of {args.rooms} rooms, --configs {args.configs}, {args.workers} workers, "
          f"{'from nothing' if args.from_nothing else 'scenes on disk'}: {wall:.1f} s wall "
          f"({wall // 60:.0f}:{wall % 60:04.1f}), {rows} rows, worker seconds: scenes {scene_seconds:.1f}, items "
          f"{item_seconds:.1f} ({rows / item_seconds:.0f} rows/s per worker, {rows / wall:.0f} rows/s wall); "
          f"CPU {cpu:.1f} s for the whole process tree; peak {peak / 2**20:.0f} MiB for the whole process tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
