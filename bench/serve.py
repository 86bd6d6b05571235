"""Page times of `roomspace serve` (issue 46's table): a real server, real HTTP requests on 127.0.0.1.

    python bench/serve.py out/roomspace-10k [--pages 20] [--configs C,...] [--limit 20]

Starts `roomspace serve SOURCE --port 0` (the roomspace beside this Python) and times the first configuration's
first page at once (its listing, which the server begins making at start, may not be ready: its files hashed
against the manifest and their filter columns read); then, `--settle` seconds later, as a person who has read
the index page, per configuration: its first page, later pages at seeded random places, filtered pages (a
setting and a question type), question pages, and picture pages where it has pictures; then a person's
session (`--limit N` of the first configuration: the sample drawn, the file begun) and its question pages.
Prints wall seconds per request (median and max), the build's Parquet files and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from pipeline.evaluate.rows import open_rows

SERVED = re.compile(r"at (http://127\.0\.0\.1:\d+)/")
QUESTION_LINK = re.compile(r'href="(/question/[^"]+)"')


def fetch(url: str, data: dict | None = None) -> tuple[float, int, str]:
    """(seconds, status, body) of one request (a POST when `data`; redirects followed)."""
    body = None if data is None else urllib.parse.urlencode(data, doseq=True).encode()
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, body, timeout=600) as response:
            text = response.read().decode("utf-8", "replace")
            status = response.status
    except urllib.error.HTTPError as error:
        text, status = error.read().decode("utf-8", "replace"), error.code
    return time.perf_counter() - started, status, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("--pages", type=int, default=20, help="requests of each kind per configuration")
    parser.add_argument("--configs", help="configurations to time (default: every one)")
    parser.add_argument("--limit", type=int, default=20, help="questions of the person's session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between the start and the browsing")
    args = parser.parse_args()
    rows = open_rows(args.source)
    configs = rows.choose(args.configs)
    files = {path for config in configs for path in rows.files[config]}
    print(f"{args.source}: {len(configs)} configurations, {len(files)} Parquet files, "
          f"{sum(path.stat().st_size for path in files) / 2**20:.0f} MiB")
    draw = random.Random(args.seed)
    times: dict[str, list[float]] = {}

    def timed(kind: str, url: str, data: dict | None = None) -> str:
        seconds, status, text = fetch(url, data)
        assert status == 200, (url, status, text[-300:])
        times.setdefault(kind, []).append(seconds)
        return text

    roomspace = Path(sys.executable).with_name("roomspace")
    with tempfile.TemporaryDirectory() as answers:
        started = time.perf_counter()
        server = subprocess.Popen([str(roomspace), "serve", args.source, "--port", "0", "--predictions", answers],
                                  stderr=subprocess.PIPE, text=True)
        try:
            base = SERVED.search(server.stderr.readline()).group(1)
            timed("start: the index page", base + "/")
            print(f"server up and index page in {time.perf_counter() - started:.2f} s")
            timed("browse: a first page at once after the start", f"{base}/browse/{configs[0]}")
            time.sleep(args.settle)
            for config in configs:
                text = timed("browse: a configuration's first page", f"{base}/browse/{config}")
                pages = int(re.search(r"page 1 of (\d+)", text).group(1))
                links = QUESTION_LINK.findall(text)
                for _ in range(args.pages):
                    text = timed("browse: a later page", f"{base}/browse/{config}?page={draw.randint(1, pages)}")
                    links += QUESTION_LINK.findall(text)[:1]
                settings = re.findall(r'<option value="([^"]+)"', text.split('name="view"')[0])
                for _ in range(args.pages):
                    query = {"setting": draw.choice(settings), "question_type": draw.choice(["FR", "YN"])}
                    timed("browse: a filtered page", f"{base}/browse/{config}?{urllib.parse.urlencode(query)}")
                for link in draw.sample(links, min(args.pages, len(links))):
                    text = timed("question page", base + link)
                    if 'id="picture"' in text:
                        timed("picture", base + link.replace("/question/", "/image/") + ".png")
            session = {"name": "bench", "limit": str(args.limit), "seed": "0", "config": configs[0]}
            timed("answer: the session begun (the sample drawn)", f"{base}/answer", session)
            for _ in range(min(args.pages, args.limit)):
                timed("answer: a question page", f"{base}/answer/bench")
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("| request | count | median s | max s |\n|---|---:|---:|---:|")
    for kind, found in times.items():
        print(f"| {kind} | {len(found)} | {statistics.median(found):.3f} | {max(found):.3f} |")


if __name__ == "__main__":
    main()
