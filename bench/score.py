"""Peak memory and time of `roomspace score` on a built folder, against reading its rows as dicts.

    python bench/score.py out/roomspace-1k [--systems 2] [--config n5_m4_d81,n5_m4_d144] [--no-anchor]

Writes one predictions file per system (the checker's answers with seeded noise, as a model's
free text would be scored), then runs, each in a fresh process so that its peak resident memory
is its own: the anchor, which reads every row of the configurations as a Python dict (what the
scorer did before it read columns shard by shard), and `roomspace score` with every predictions
file. Prints both peaks and their ratio. The anchor holds about 28 KB per row (stories, facts,
topology, prompt): at 10K rooms (680,000 rows) that is about 20 GB, so measure the scorer alone
there with --no-anchor.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.evaluate.rows import open_rows  # noqa: E402
from pipeline.seeding import derive_seed  # noqa: E402

ANCHOR = """
import sys
from pipeline.evaluate.rows import open_rows
source = open_rows(sys.argv[1])
rows = list(source.rows(source.choose(sys.argv[2] or None)))
print(len(rows))
"""


def write_predictions(location: str, configs: str | None, path: Path, noise: float) -> int:
    source = open_rows(location)
    count = 0
    with open(path, "w", encoding="utf-8") as file:
        for row in source.rows(source.choose(configs), ["id", "answer", "options"]):
            rng = Random(derive_seed(noise, row["id"]))
            text = rng.choice(row["options"]) if rng.random() < noise else row["answer"]
            file.write(json.dumps({"id": row["id"], "prediction": f"Answer: {text}"}) + "\n")
            count += 1
    return count


def peak_of(command: list[str]) -> tuple[float, float]:
    """(peak resident MiB, seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        raise SystemExit("the child's peak did not exceed an earlier child's: run the measurements in separate invocations")
    return peak / 1024, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--systems", type=int, default=2)
    parser.add_argument("--config", default="")
    parser.add_argument("--no-anchor", action="store_true", help="measure the scorer only (for builds too big to hold)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for k in range(args.systems):
            path = Path(folder) / f"system{k}.jsonl"
            rows = write_predictions(args.build, args.config or None, path, noise=0.1 * (k + 1))
            files.append(path)
        print(f"{args.build}: {rows} rows scored, {args.systems} predictions files")
        # The scorer first: getrusage reports the largest child so far, so the smaller peak must come first.
        score = [sys.executable, "-m", "pipeline.cli", "score", args.build, "--quiet"]
        score += [part for path in files for part in ("--predictions", str(path))]
        score += ["--config", args.config] if args.config else []
        score_mib, score_s = peak_of(score)
        print(f"roomspace score: peak {score_mib:.0f} MiB, {score_s:.1f} s")
        if args.no_anchor:
            return 0
        anchor_mib, anchor_s = peak_of([sys.executable, "-c", ANCHOR, args.build, args.config])
        print(f"anchor (every row as a dict, no scoring): peak {anchor_mib:.0f} MiB, {anchor_s:.1f} s")
        print(f"score uses {anchor_mib / score_mib:.1f}x less memory than holding the rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
