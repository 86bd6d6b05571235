"""RoomSpace for veRL: a Parquet file in veRL's data layout and its reward function.

    from pipeline.environment.items import Environment
    from pipeline.environment.verl_data import write_parquet
    write_parquet(Environment(seed=0, rooms=100), "n5_m4_d144_balanced", 1000, "train.parquet")

    python -m verl.trainer.main_ppo data.train_files=train.parquet ... \
        reward.custom_reward_function.path=pipeline/environment/verl_data.py \
        reward.custom_reward_function.name=compute_score

A record is veRL's (its examples' data_preprocess scripts): `data_source` ("roomspace/<config>"),
`prompt` (the chat messages: the row's prompt, after "<image>" for a question sent with its picture),
`images` (in the records of a kind with pictures: its PNG, or none for a question asked without it), `ability`, `reward_model` ({"style": "rule", "ground_truth": the
row's answer}) and `extra_info` (split, index, the row's id and rung, and `scoring`: the fields the
reward reads, as JSON text, so that every record has one Parquet type whatever its kind).
`compute_score(data_source, solution_str, ground_truth, extra_info)` is the checker's reward
(pipeline.evaluate.reward): YN right or wrong, FR the Jaccard of the named set, a map its facts held,
a plan its mean F1, 0 for an answer the parser does not read. Needs pyarrow only; veRL itself loads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.environment.items import Environment, EnvironmentItem, reward_of
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError
from pipeline.files import write_atomic

DATA_SOURCE = "roomspace"  # a record's data_source: DATA_SOURCE/<config>
ABILITY = "spatial_reasoning"
IMAGE_TOKEN = "<image>"  # where veRL's multimodal datasets put a message's image


def verl_record(item: EnvironmentItem, split: str = "train") -> dict:
    row = item.row
    image = row.get("image")
    content = (IMAGE_TOKEN if image is not None else "") + row["prompt"]
    record = {"data_source": f"{DATA_SOURCE}/{item.rung.config}", "prompt": [{"role": "user", "content": content}],
              "ability": ABILITY, "reward_model": {"style": "rule", "ground_truth": row["answer"]},
              "extra_info": {"split": split, "index": item.index, "id": row["id"],
                             "rung": json.dumps(item.rung.metadata()), "scoring": json.dumps(item.scoring())}}
    if not item.rung.kind.images:
        return record
    return {**record, "images": [] if image is None else [{"bytes": image["bytes"]}]}  # a question asked without it: none


def write_parquet(environment: Environment, rung: Rung | str, count: int, path: str | Path,
                  split: str = "train", start: int = 0) -> Path:
    """Items start .. start + count - 1 of a rung as one Parquet file in veRL's layout, written whole or not at all."""
    if count < 1:
        raise RoomspaceError(f"a veRL file needs at least one item (asked: {count})")
    table = pa.Table.from_pylist([verl_record(item, split) for item in environment.items(rung, count, start)])
    path = Path(path)
    write_atomic(path, lambda target: pq.write_table(table, target))
    return path


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **_: object) -> float:
    """veRL's reward function for a RoomSpace record (module docstring); veRL passes more keywords to some
    reward managers, which it does not read."""
    if not str(data_source).startswith(DATA_SOURCE) or not extra_info or "scoring" not in extra_info:
        raise RoomspaceError(f"compute_score scores RoomSpace records (data_source {DATA_SOURCE}/..., "
                             f"extra_info with scoring); given data_source {data_source!r}")
    scoring = json.loads(extra_info["scoring"])
    if scoring["answer"] != ground_truth:
        raise RoomspaceError(f"record {extra_info.get('id')}: ground_truth {ground_truth!r} is not its answer "
                             f"{scoring['answer']!r}")
    return reward_of(scoring, solution_str)
