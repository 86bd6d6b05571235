"""A fixed, seeded, stratified sample of a benchmark's questions: `--limit N --seed S`.

The questions of the chosen configurations are put in one order, a pure function of the seed and
the questions themselves (ids, rooms and strata; not the row order, the shards, the build's other
configurations or its size beyond them), whose every prefix is a stratified sample: the sample of
N is its first N questions. The same seed and N on any build of the same rooms give the same ids,
and a larger N keeps a smaller one's.

* Strata are (configuration, setting, view, question type, modality): in any prefix each has its
  share of N to within one question. Each question is placed at the middle of its quantile in its
  stratum, (rank + 1/2) / size, and the prefix takes questions by that place.
* Within a stratum questions are ranked by a seeded hash of what paired comparisons match them by
  (pipeline.evaluate.gaps): the room and setting (and an agent row's frames), or the room and pair
  of a vision pair question, never the view, configuration or modality. A question and its twin,
  its other view, its image+story counterpart or its other modalities rank alike in their equal
  strata, so a sample keeps them together and `score`'s paired gaps have pairs to compare.

Every harness asks the same sample: `run-model` and `prompts` with `--limit`, `score` with the
sample a predictions file records (or `--limit`), the lm-evaluation-harness tasks (their rows are in
this order, so lm-eval's `--limit K` takes a task's first K, and `roomspace_limit` the very ids
`run-model --limit` asks) and the inspect task (`-T limit=N -T seed=S`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.seeding import derive_seed

STRATUM = ("config", "setting", "view", "question_type", "modality")
PAIRED_BY = ("room_id", "setting", "pair", "story_view", "frame_changes")  # what a question's rank is drawn from
SAMPLE_COLUMNS = tuple(dict.fromkeys(("id", *STRATUM, *PAIRED_BY)))


@dataclass(frozen=True)
class Sample:
    """`--limit N --seed S`: the first `limit` questions of the chosen configurations in the order of `seed`."""

    limit: int
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise RoomspaceError(f"a sample's limit must be a whole number >= 1, got {self.limit!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise RoomspaceError(f"a sample's seed must be a whole number, got {self.seed!r}")

    def describe(self) -> str:
        return f"--limit {self.limit} --seed {self.seed}"


def _rank_key(row: Mapping, seed: int) -> int:
    """A question's place within its stratum, shared by the questions paired with it."""
    if row.get("pair") is not None:  # a vision pair question: its three modalities have other settings
        return derive_seed(seed, "sample", row["room_id"], "pair", row["pair"])
    return derive_seed(seed, "sample", row["room_id"], row["setting"], row.get("story_view"), row.get("frame_changes"))


def sample_order(rows: Iterable[Mapping], seed: int = 0) -> list[str]:
    """The ids of `rows` (dicts with SAMPLE_COLUMNS; a column a configuration lacks may be absent) in
    the sample order of `seed`: the sample of N is the first N (module docstring)."""
    strata: dict[tuple, list[tuple[int, str]]] = {}
    for row in rows:
        strata.setdefault(tuple(row.get(name) for name in STRATUM), []).append((_rank_key(row, seed), row["id"]))
    placed = []
    for stratum, members in strata.items():
        members.sort()
        size, tie = len(members), derive_seed(seed, "stratum", *stratum)  # equal places: a seeded order of strata
        placed.extend(((2 * rank + 1) / (2 * size), tie, question) for rank, (_, question) in enumerate(members))
    placed.sort()
    return [question for _, _, question in placed]


def ordered_ids(rows: BenchmarkRows, configs: Sequence[str], seed: int = 0) -> list[str]:
    """Every question id of `configs` in the sample order of `seed` (reads only the columns it needs)."""
    return sample_order((row for table in _tables(rows, configs) for row in table.to_pylist()), seed)


def sample_ids(rows: BenchmarkRows, configs: Sequence[str], sample: Sample) -> list[str]:
    """The ids of `sample` among the questions of `configs`, in the sample order."""
    return ordered_ids(rows, configs, sample.seed)[:sample.limit]


def _tables(rows: BenchmarkRows, configs: Sequence[str]):
    for config in configs:
        yield from rows.batches(config, SAMPLE_COLUMNS)
