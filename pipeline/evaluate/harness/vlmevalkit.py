"""RoomSpace as VLMEvalKit image datasets: a TSV per configuration, and the scoring its dataset class runs.

VLMEvalKit (open-compass/VLMEvalKit; on PyPI as `ms-vlmeval`, ModelScope's release of it) reads an
image benchmark from `$LMUData/<name>.tsv`, a question per line: `index`, `question` and `image`,
the image as base64 or, where an earlier question carries the same image, that question's index
(so each PNG is written once, as the build stores it). For every configuration of a kind whose
`Kind.harness` names `vlmevalkit` (the kinds with images: pipeline.text.kinds), `write_tsvs` writes
`RoomSpace_<config>.tsv` with, per question:

* `index` (0, 1, ... in row order), `id` (the row's id), `config`, `question_type`;
* `question`: the row's self-contained prompt, sent as it is;
* `image`: the PNG the question is asked with, empty for a question asked without it (modality `text`);
* `answer`: the exact answer, shown beside each prediction;
* `roomspace`: what scoring reads of the row (pipeline.evaluate.score.ScoreRow's fields) as JSON.

The dataset class, pipeline.evaluate.harness.vlmevalkit_dataset.RoomSpaceDataset (it imports
VLMEvalKit, so only where that is installed), sends each question's image and then its prompt, and
its `evaluate` scores the prediction file VLMEvalKit writes with `score_records` here: each answer
goes to the hook the lm-evaluation-harness and lmms-eval tasks use (process_results), which is the
project's scorer, so a question is judged exactly as `roomspace score` judges it. Write the TSVs of
a build, then point VLMEvalKit at the folder:

    python -m pipeline.evaluate.harness.vlmevalkit SOURCE --out DIR   # DIR/RoomSpace_<config>.tsv
    LMUData=DIR python -c "from pipeline.evaluate.harness.vlmevalkit_dataset import RoomSpaceDataset; ..."

(`make test-vlm-harness` runs it inside VLMEvalKit: bench/vlm_harness.py.)
"""

from __future__ import annotations

import argparse
import base64
import csv
import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pipeline.dataset.layout import IMAGE, IMAGE_ID
from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.lm_eval_tasks.utils import METRICS, process_results
from pipeline.evaluate.harness.tasks import PACKAGED_CONFIGS
from pipeline.evaluate.rows import BenchmarkRows, open_rows
from pipeline.evaluate.score import SCORE_COLUMNS, ScoreRow, judged_columns
from pipeline.text.kinds import KINDS, kind_of

HARNESS = "vlmevalkit"  # as Kind.harness names it
BENCHMARK = "RoomSpace"  # a dataset's name: RoomSpace_<configuration>
COLUMNS = ("index", "id", "config", "question_type", "question", "image", "answer", "roomspace")
FIELDS = tuple(f.name for f in dataclasses.fields(ScoreRow))  # the `roomspace` column's keys


def read_by_vlmevalkit(configs: Iterable[str]) -> list[str]:
    """The configurations among `configs` whose kind VLMEvalKit reads, in their order."""
    return [config for config in configs if HARNESS in kind_of(config).harness]


def dataset_name(config: str) -> str:
    return f"{BENCHMARK}_{config}"


def config_of(name: str) -> str:
    """The configuration a dataset name stands for; a name of no such dataset is a RoomspaceError."""
    benchmark, _, config = name.partition("_")
    try:
        ours = benchmark == BENCHMARK and bool(read_by_vlmevalkit([config]))
    except RoomspaceError:  # no configuration at all
        ours = False
    if not ours:
        raise RoomspaceError(f"{name!r} is no RoomSpace dataset: a name is {BENCHMARK}_<configuration> of a kind "
                             f"with images ({', '.join(k.name for k in KINDS.values() if HARNESS in k.harness)})")
    return config


# The datasets of the configurations `make roomspace-100` writes (the class's supported_datasets)
DATASETS = tuple(dataset_name(config) for config in read_by_vlmevalkit(PACKAGED_CONFIGS))


def write_tsv(rows: BenchmarkRows, config: str, folder: Path) -> Path:
    """`folder/RoomSpace_<config>.tsv` (module docstring); returns its path."""
    path = folder / f"{dataset_name(config)}.tsv"
    columns = [*SCORE_COLUMNS, *judged_columns(rows, config), "prompt", IMAGE, IMAGE_ID]
    first: dict[str, int] = {}  # image id -> the index of the first question carrying it
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        for index, row in enumerate(rows.rows([config], columns)):
            image = ""
            if row[IMAGE] is not None:
                image = str(first.setdefault(row[IMAGE_ID], index))
                if first[row[IMAGE_ID]] == index:
                    image = base64.b64encode(row[IMAGE]["bytes"]).decode("ascii")
            scored = {name: row[name] for name in FIELDS if row.get(name) is not None}
            writer.writerow([index, row["id"], config, row["question_type"], row["prompt"], image, row["answer"],
                             json.dumps(scored, ensure_ascii=False)])
    return path


def write_tsvs(source: str | Path, folder: str | Path) -> list[Path]:
    """The TSVs of every configuration at `source` that VLMEvalKit reads, in `folder`."""
    rows = open_rows(source)
    configs = read_by_vlmevalkit(rows.configs)
    if not configs:
        raise RoomspaceError(f"{rows.location} has no configuration with images (build with --vision)")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [write_tsv(rows, config, folder) for config in configs]


def _answer(value) -> str:
    """A prediction as VLMEvalKit's table holds it: an empty answer is read back as NaN."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def score_records(records: Iterable[Mapping]) -> dict[str, float]:
    """The scores of a prediction table's records (each with `roomspace` and `prediction`): per question
    type its metrics (yn_accuracy, fr_exact, map_consistent and map_facts, plan_exact, plan_content and
    plan_preconditions) as means, and `<type> items`."""
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for record in records:
        fields = json.loads(record["roomspace"])
        if fields["question_type"] not in METRICS:
            raise RoomspaceError(f"{record['id']}: no harness scores {fields['question_type']} questions yet (the "
                                 "question types of pipeline/evaluate/harness/tasks.py's QUESTION_TYPES)")
        for metric, value in process_results(fields, [_answer(record["prediction"])]).items():
            totals[metric] = totals.get(metric, 0.0) + value
        counts[fields["question_type"]] = counts.get(fields["question_type"], 0) + 1
    scores: dict[str, float] = {}
    for question_type, count in counts.items():
        for metric in METRICS[question_type]:
            scores[metric] = totals[metric] / count
        scores[f"{question_type} items"] = count
    return scores


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pipeline.evaluate.harness.vlmevalkit",
                                     description="Write VLMEvalKit's TSV of every configuration with images of a build.")
    parser.add_argument("source", help="a built folder, a Hub snapshot folder or OWNER/NAME")
    parser.add_argument("--out", type=Path, required=True, help="the folder VLMEvalKit reads (its LMUData)")
    args = parser.parse_args(argv)
    try:
        written = write_tsvs(args.source, args.out)
    except RoomspaceError as error:
        raise SystemExit(f"error: {error}") from None
    for path in written:
        print(path)


if __name__ == "__main__":
    main()
