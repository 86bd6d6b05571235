"""The hooks the RoomSpace task YAMLs name with `!function`: load a configuration's rows, keep one
question type, score one answer.

lm-evaluation-harness loads this file by its path (the module next to the YAML); it imports the
project's own reader and scorer, so a row is read and an answer judged exactly as `roomspace score`
does: an FR answer is right when the relations it names are the answer set, a YN answer when its
Yes/No says whether the candidate is in the answer set, and an answer that does not parse is wrong.

Where the rows are is the task metadata `roomspace_source` (a built folder, a Hub snapshot folder
or OWNER/NAME, as `pipeline.evaluate.rows.open_rows` reads them); lm-eval passes the task's
metadata, with `--metadata` (CLI) or `TaskManager(metadata=...)` merged over the YAML's, and its
`dataset_kwargs` to `load_rows`.

The rows come in the sample order of `roomspace_seed` (default 0; pipeline.evaluate.sample), so
lm-eval's `--limit K` asks a task's first K questions: a stratified sample, not the first rows.
`roomspace_limit=N` keeps the very questions `roomspace run-model --config C --limit N --seed S`
asks (each task then keeps its question type's share of them).
"""

from __future__ import annotations

from pipeline.errors import RoomspaceError
from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.evaluate.harness.tasks import QUESTION_TYPES
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import ordered_ids
from pipeline.evaluate.score import SCORE_COLUMNS, ScoreRow, judged_columns, score_item

PLACEHOLDER = "OWNER/NAME"  # the YAML's roomspace_source until a user says where their copy is
COLUMNS = (*SCORE_COLUMNS, "prompt")  # what scoring and the prompt need; stories, facts and images stay unread
# A task's metrics per question type, as `roomspace score` names them: a map is right when every fact
# its story states holds on it (map_consistent); map_facts is the share of facts that hold.
METRICS = {question_type: metrics for question_type, (_, metrics, _) in QUESTION_TYPES.items()}


def load_rows(roomspace_source: str = PLACEHOLDER, roomspace_config: str | None = None,
              roomspace_split: str = DATASET_SPLIT, roomspace_seed: int | str = 0,
              roomspace_limit: int | str | None = None, **_metadata):
    """`custom_dataset`: one configuration's rows of one split (`roomspace_split`, by default the
    benchmark's test split) as a DatasetDict whose one split lm-eval reads as "test", in the sample
    order of `roomspace_seed`, only the first `roomspace_limit` where one is given (module docstring).

    lm-eval calls it with the task's metadata (version, model_args, ...) and dataset_kwargs as
    keyword arguments; only the `roomspace_*` ones are read."""
    import datasets
    import pyarrow as pa

    if not roomspace_source or roomspace_source == PLACEHOLDER:
        raise RoomspaceError("the RoomSpace tasks need to know where the rows are: pass "
                             "--metadata roomspace_source=FOLDER_OR_OWNER/NAME to lm_eval, or "
                             "TaskManager(metadata={'roomspace_source': ...}) in Python")
    if not roomspace_config:
        raise RoomspaceError("a RoomSpace task needs dataset_kwargs: {roomspace_config: <configuration>}")
    seed = _whole(roomspace_seed, "roomspace_seed")
    limit = None if roomspace_limit in (None, "") else _whole(roomspace_limit, "roomspace_limit", least=1)
    rows = open_rows(roomspace_source, roomspace_split)
    (config,) = rows.choose(roomspace_config)
    order = ordered_ids(rows, [config], seed)[:limit]
    columns = (*COLUMNS, *judged_columns(rows, config))  # a map is judged on its facts, a plan on its gold steps
    table = pa.concat_tables(list(rows.batches(config, columns)))
    position = {item: k for k, item in enumerate(table.column("id").to_pylist())}
    return datasets.DatasetDict({"test": datasets.Dataset(table.take([position[item] for item in order]))})


def _whole(value, name: str, least: int | None = None) -> int:
    """A metadata value as a whole number (lm-eval's --metadata may pass it as text)."""
    try:
        number = int(str(value))
    except ValueError:
        number = None
    if number is None or (least is not None and number < least):
        raise RoomspaceError(f"{name} must be a whole number{'' if least is None else f' >= {least}'}, got {value!r}")
    return number


def _items(dataset, question_type: str):
    kinds = dataset["question_type"]
    return dataset.select([k for k, kind in enumerate(kinds) if kind == question_type])


def yn_items(dataset):
    """`process_docs` of the YN tasks."""
    return _items(dataset, "YN")


def fr_items(dataset):
    """`process_docs` of the FR tasks."""
    return _items(dataset, "FR")


def map_items(dataset):
    """`process_docs` of the map tasks."""
    return _items(dataset, "MAP")


def plan_items(dataset):
    """`process_docs` of the plan tasks (pipeline.text.object_tasks)."""
    return _items(dataset, "PLAN")


def process_results(doc: dict, results: list) -> dict[str, float]:
    """One answer (the first generation) scored by the project's scorer: 1.0 right, 0.0 wrong or
    unparseable; a map also its share of facts held, a plan its step and precondition F1 (0.0
    unparseable)."""
    row = ScoreRow.of(doc)
    outcome = score_item(row, results[0])
    scores = {METRICS[row.question_type][0]: float(outcome.correct[0, 0])}
    if row.question_type == "MAP":
        scores["map_facts"] = float(outcome.jaccard[0, 0])
    if row.question_type == "PLAN":
        scores["plan_content"] = float(outcome.jaccard[0, 0])
        scores["plan_preconditions"] = float(outcome.f1[0, 0])
    return scores
