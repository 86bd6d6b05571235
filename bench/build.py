"""Items per second, peak memory and each family's share of a build, measured on a real `roomspace build`
subprocess, against the commit issue 47 starts from in the same run.

    python bench/build.py [--rooms 1000] [--workers 2] [--configs default|sweep|...] [--balanced] [--hard]
                          [--scenes scenes | --from-nothing] [--against 5723618|none]

Builds into a temporary folder from the scene folder (sampling what is missing first, timed
apart), samples the resident memory of the whole process tree every 50 ms, and prints the wall
time, rows, rows per second of item generation, the CPU seconds of the whole process tree (its
workers' and the main process's: unlike the workers' seconds, which are wall time in each worker,
they hardly change with the machine's load) and the peak memory of the tree; then each part's share
of the build's seconds as the build reports them: the workers' scenes, paper, balanced and hard
families and Arrow tables, the main process's shard writing and card (its audit). `--from-nothing`
times builds that sample every scene themselves into an empty temporary folder, as
`make roomspace-10k` does on a fresh machine.

`--against COMMIT` (default 5723618, where issue 47 starts) also builds, in the same run, the
families that commit has (paper and balanced: --hard dropped) with that commit's code (its
`git archive`, run by this interpreter) and with this checkout's, and prints the ratios of the two;
the hard family's cost is in the shares of the whole build.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
ISSUE_START = "5723618"  # the commit issue 47 starts from
FAMILIES = ("paper", "balanced", "hard")


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


@dataclass(frozen=True)
class Measured:
    """One build as measured here and as it reported itself."""

    rooms: int
    wall: float
    cpu: float
    peak: int
    rows: int
    scene_seconds: float
    item_seconds: float
    parts: dict[str, float]  # worker and main-process seconds per part; empty from a build that does not report them


def build_parts(report: str) -> dict[str, float]:
    """The seconds per part of `roomspace build`'s report (none from a commit before it printed them)."""
    line = re.search(r"worker seconds by part: (.*); main process: shards written ([\d.]+) s, card ([\d.]+) s",
                     report)
    if not line:
        return {}
    parts = {name: float(seconds) for name, seconds in re.findall(r"(\w+) (-?[\d.]+)", line.group(1))}
    return {**parts, "shards written": float(line.group(2)), "card": float(line.group(3))}


def roomspace(code: Path, command: str, args: argparse.Namespace, *options: str) -> tuple[float, int, str, float]:
    """`run` of `roomspace COMMAND` with the code in `code` (this checkout's or an archived commit's)."""
    return run([sys.executable, "-m", "pipeline.cli", command, *options, "--seed", str(args.seed), "--workers",
                str(args.workers), "--quiet"], cwd=code, env={**os.environ, "PYTHONPATH": str(code)})


def measure(code: Path, folder: Path, args: argparse.Namespace, flags: list[str], label: str,
            scenes: Path | None = None) -> Measured:
    """Builds args.rooms rooms with the code in `code` into `folder`, from `scenes` (default: args.scenes)."""
    # compiled first, untimed: not by the timed build's first imports (an archive's modules never are)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "pipeline")], check=True)
    scenes = folder / "scenes" if args.from_nothing else scenes or args.scenes.resolve()
    wall, peak, report, cpu = roomspace(code, "build", args, "--rooms", str(args.rooms), "--scenes", str(scenes),
                                        "--out", str(folder / f"roomspace-bench-{args.rooms}"), "--configs",
                                        args.configs, *flags)
    rows = int(re.search(r": (\d+) rows", report).group(1))
    scene_seconds, item_seconds = map(float, re.search(r"scenes ([\d.]+) s and items ([\d.]+) s", report).groups())
    asked = " ".join(["--configs", args.configs, *flags])
    print(f"{label}: build of {args.rooms} rooms, {asked}, {args.workers} workers, "
          f"{'from nothing' if args.from_nothing else 'scenes on disk'}: {wall:.1f} s wall "
          f"({wall // 60:.0f}:{wall % 60:04.1f}), {rows} rows, worker seconds: scenes {scene_seconds:.1f}, items "
          f"{item_seconds:.1f} ({rows / item_seconds:.0f} rows/s per worker, {rows / wall:.0f} rows/s wall); "
          f"CPU {cpu:.1f} s for the whole process tree; peak {peak / 2**20:.0f} MiB for the whole process tree",
          flush=True)
    return Measured(args.rooms, wall, cpu, peak, rows, scene_seconds, item_seconds, build_parts(report))


def print_shares(measured: Measured) -> None:
    total = sum(measured.parts.values())
    print("each part's share of the build's seconds (the workers' scenes, families and tables; the main process's "
          "shards written and card): " + ", ".join(f"{part} {seconds:.1f} s ({100 * seconds / total:.1f} %)"
                                                  for part, seconds in measured.parts.items()))
    print("worker time per room: " + ", ".join(f"{family} {1000 * measured.parts[family] / measured.rooms:.1f} ms"
                                               for family in FAMILIES if family in measured.parts))


def archived(commit: str, folder: Path) -> Path:
    """The code of `commit` of this checkout, its `git archive` in `folder`."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True)
    if archive.returncode:
        sys.exit(f"--against {commit}: git archive failed ({archive.stderr.decode().strip()}); "
                 "run from a git checkout holding that commit, or give --against none")
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    found = subprocess.run([sys.executable, "-c", "import pipeline; print(pipeline.__file__)"], cwd=folder,
                           env={**os.environ, "PYTHONPATH": str(folder)}, capture_output=True, text=True)
    if not found.stdout.startswith(str(folder)):
        sys.exit(f"--against {commit}: this interpreter imports pipeline from {found.stdout.strip() or found.stderr}, "
                 f"not from {folder}")
    return folder


def print_ratios(now: Measured, then: Measured, commit: str, asked: str) -> None:
    def ratio(ours: float, theirs: float) -> str:
        return f"{ours:.1f} now / {theirs:.1f} at {commit} = {ours / theirs:.2f}"

    same = "as many rows" if now.rows == then.rows else f"rows differ: {now.rows} now, {then.rows} then"
    print(f"against {commit}, {asked} ({same}): wall {ratio(now.wall, then.wall)}; "
          f"CPU of the tree {ratio(now.cpu, then.cpu)}; worker seconds: scenes "
          f"{ratio(now.scene_seconds, then.scene_seconds)}, items {ratio(now.item_seconds, then.item_seconds)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scenes", type=Path, default=Path("scenes"))
    parser.add_argument("--configs", default="default", help="as `roomspace build --configs`")
    parser.add_argument("--balanced", action="store_true", help="as `roomspace build --balanced`")
    parser.add_argument("--hard", action="store_true", help="as `roomspace build --hard`")
    parser.add_argument("--from-nothing", action="store_true",
                        help="sample the scenes inside the build, into an empty folder")
    parser.add_argument("--against", default=ISSUE_START,
                        help=f"a commit to compare with in the same run (default {ISSUE_START}), or none")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    flags = [flag for flag, asked in (("--balanced", args.balanced), ("--hard", args.hard)) if asked]
    older = [flag for flag in flags if flag != "--hard"]  # the families the compared commit has
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        if not args.from_nothing:
            scenes_wall, scenes_peak, _, _ = roomspace(REPO, "scenes", args, "--count", str(args.rooms), "--out",
                                                       str(args.scenes.resolve()))
            print(f"scenes for {args.rooms} rooms (missing ones sampled): {scenes_wall:.1f} s wall, "
                  f"peak {scenes_peak / 2**20:.0f} MiB", flush=True)
        if args.against != "none":
            code = archived(args.against, folder / "then")
            own = None  # an older commit may not read today's scene files (5723618 refuses their sha256)
            if not args.from_nothing:
                own = folder / "scenes-then"  # the same houses, sampled by that commit, untimed
                roomspace(code, "scenes", args, "--count", str(args.rooms), "--out", str(own))
            then = measure(code, folder / "build-then", args, older, args.against, own)
            now = measure(REPO, folder / "build-now", args, older, "now")
            print_ratios(now, then, args.against, " ".join(["--configs", args.configs, *older]))
        whole = now if args.against != "none" and older == flags else \
            measure(REPO, folder / "build-whole", args, flags, "now, every family asked")
    print_shares(whole)
    return 0


if __name__ == "__main__":
    sys.exit(main())
