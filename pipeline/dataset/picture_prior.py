"""Fits the picture prior of the balanced image pair questions (pipeline.text.pictured) and writes
pipeline/data/picture_prior.json:

    roomspace build --rooms 400 --seed 1 --configs n5_m4_d144 --vision n5_m4_d144 --agents n5_m4_d144 --out FIT
    python -m pipeline.dataset.picture_prior FIT

The paper's vision configurations ask pairs drawn uniformly among those a picture shows clearly, so
their image-only FR pair questions are a fair sample of what pictures show. Per kind of picture
(the plan, the door view, first person), the prior holds the share of those pairs showing each
relation, overall and per object as the pair's subject and as its object, an object known by what
the question calls it without its number ("chair 2" is a chair: what a reader sees without the
picture); the table is pipeline.text.prior's (`prior_table`). The rooms are of a seed no build uses
by default (seed 1), so no benchmark picture shapes the prior its questions are drawn with.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.dataset.audit import object_type
from pipeline.dataset.layout import questions
from pipeline.dataset.manifest import build_configs, read_manifest, shard_files
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.kinds import parse
from pipeline.text.pictured import PICTURE_PRIOR_FILE, picture_kind
from pipeline.text.prior import dumps, prior_table
from pipeline.text.prompts import IMAGE_ONLY_SETTING

COLUMNS = ("setting", "question_type", "image_name", "query", "answer_set")


def seen(build: Path) -> Iterator[tuple[str, str, str, frozenset[str]]]:
    """(kind of picture, subject, object, {relation}) of every image-only FR pair question of the
    paper's image configurations of a build (its test split)."""
    manifest = read_manifest(build)
    for config in build_configs(manifest):
        kind, base = parse(config)
        if not kind.shared_images or base.balanced:
            continue
        tables = (table for path in shard_files(build, manifest, config)
                  for table in questions(pq.ParquetFile(path), COLUMNS, config=config))
        for row in (row for table in tables for row in table.to_pylist()):
            if row["setting"] == IMAGE_ONLY_SETTING and row["question_type"] == "FR":
                query = row["query"]
                yield (picture_kind(row["image_name"]), object_type(query["subject"]), object_type(query["object"]),
                       frozenset(row["answer_set"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="a build of the paper's vision (and vision_agent) configurations")
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "data" / PICTURE_PRIOR_FILE)
    args = parser.parse_args()
    observed = list(seen(args.build))
    table = {"fitted_on": {"build": args.build.name, "questions": len(observed)},
             "settings": prior_table(observed, lambda _: DIRECTIONS)}
    args.out.write_text(dumps(table), encoding="utf-8")
    kinds = ", ".join(f"{kind} ({len(entry['subject'])} subject types)" for kind, entry in table["settings"].items())
    print(f"wrote {args.out}: {kinds}")


if __name__ == "__main__":
    main()
