"""RoomSpace as an inspect_ai task, scored exactly as `roomspace score` scores the same answers.

From the command line (the package's `inspect_ai` entry point makes the task known to inspect):

    inspect eval roomspace/roomspace --model PROVIDER/MODEL -T source=SOURCE [-T config=n5_m4_d144]
        [-T question_type=YN|FR|MAP] [-T limit=N -T seed=S] [-T limit_rooms=N] [-T style=paper] [-T split=validation]

and from Python: `inspect_ai.eval(roomspace(source=SOURCE, config="n5_m4_d144"), model=...)` with this
module's `roomspace`, or
`inspect_ai.eval("roomspace/roomspace", task_args={"source": SOURCE}, model=...)`.

* `source` is what every roomspace command takes: a built folder, a Hub snapshot folder or a Hub
  dataset id OWNER/NAME (pipeline.evaluate.rows). A local folder is made absolute when the task is
  made: inspect runs a task from its own folder.
* `config` names one configuration (or several, comma-separated, which are then scored together,
  as `roomspace score --pool` does); without it the source's default configuration. Every kind
  works: a base or `twin_*` row is sent as one user message holding its `prompt` column; a
  `vision_*` row as one user message holding its image (a PNG data URI) and then that text, as
  `pipeline.evaluate.prompts.Prompt.messages` sends it to an OpenAI-compatible endpoint.
* `question_type` keeps only YN, FR or MAP items; `limit` and `seed` keep the sample `roomspace
  run-model --limit N --seed S` asks of the same configurations (pipeline.evaluate.sample; seed 0
  by default); `limit_rooms` keeps the items of each configuration's first N rooms (whole rooms);
  `style` is the prompt style (`paper`: the story-only prompt of the published evaluation);
  `split` the split read (default `test`, the benchmark; `train` or `validation` where the build
  has them).
* Samples come in the sample order of `seed`, so inspect's own `--limit K` asks a stratified
  sample of K (every setting, view and question type in proportion), not the first K rows.

Sample ids are the row ids. A sample's metadata is what scoring reads of its row (the fields of
`pipeline.evaluate.score.ScoreRow`: question_type, answer_set, candidate, options, view, config,
setting, room_id, n, m, d, hops, ...), never its story, prompt or image, plus `measure`, the
metric the item counts toward: `yn_accuracy` for a YN item, `fr_exact` for an FR item,
`map_consistent` for a map (right when every fact its story states holds on it; the share that
holds is the score's `map_facts` metadata).

The scorer hands the answer text to `pipeline.evaluate.score.score_item`, the code `roomspace
score` runs on a predictions file, so the two agree item by item: a YN item is right when its
Yes/No says whether the candidate is in the answer set, an FR item when the relations it names are
exactly the answer set. An answer that does not parse scores 0 (value N, reason
`invalid_response_format`, the parser's problem in the explanation); an answer cut at the token
limit (inspect's stop_reason `max_tokens`, what `run-model` marks `"truncated": true`) scores 0
unparsed (value N, reason `max_tokens`, `truncated: true` in the score's metadata). Metrics:
`accuracy` and `stderr` over every item, and per question type `yn_accuracy` (YN accuracy),
`fr_exact` (FR exact match) and `map_consistent` (maps consistent), each with its `..._stderr`.

An inspect log's answers become a `roomspace score` predictions file (for its breakdowns, intervals
and paired gaps) with `log_predictions`, or from the shell:

    python -m pipeline.evaluate.harness.inspect_tasks LOG.eval [LOG.eval ...] > predictions.jsonl

The registered task (the name inspect knows, in every install) is `roomspace.inspect_tasks.roomspace`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import (CORRECT, INCORRECT, NOANSWER, Score, Scorer, Target, accuracy, grouped, scorer,
                               stderr)
from inspect_ai.solver import TaskState, generate

from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.errors import RoomspaceError
from pipeline.evaluate.prompts import make_prompt, png_data_uri, prompt_columns
from pipeline.evaluate.rows import BenchmarkRows, open_rows
from pipeline.evaluate.sample import Sample as RoomspaceSample
from pipeline.evaluate.sample import ordered_ids
from pipeline.evaluate.score import (BIT, MAP_COLUMNS, PLAN_COLUMNS, SCORE_COLUMNS, TRUNCATED, UNPARSEABLE, ScoreRow,
                                     judged_columns, score_item)
from pipeline.text.prompts import DEFAULT_STYLE, STYLES

QUESTION_TYPES = ("YN", "FR", "MAP", "PLAN")
# the name `roomspace score` gives each question type's rate (a map: every fact its story states holds on it;
# a plan: the gold plan's steps, ordered alike)
MEASURE = {"YN": "yn_accuracy", "FR": "fr_exact", "MAP": "map_consistent", "PLAN": "plan_exact"}
ROW_FIELDS = tuple(name for name in SCORE_COLUMNS if name != "id")  # a sample's metadata; its id is the row id
JUDGED = {"MAP": MAP_COLUMNS, "PLAN": PLAN_COLUMNS}  # what a question type's answer is judged on besides
TRUNCATED_STOP = "max_tokens"  # inspect's stop_reason for an answer cut at the token limit


def roomspace(source: str, config: str | None = None, question_type: str | None = None,
              limit_rooms: int | None = None, style: str = DEFAULT_STYLE, split: str = DATASET_SPLIT,
              limit: int | None = None, seed: int = 0) -> Task:
    """The items of `config` at `source`, asked one at a time and scored as `roomspace score` does."""
    rows = open_rows(_location(source), split)
    if config is not None:
        configs = rows.choose(str(config))
    else:
        configs = (rows.default,) if rows.default is not None else rows.configs
    samples = list(roomspace_samples(rows, configs, question_type, limit_rooms, style, limit, seed))
    if not samples:
        raise RoomspaceError(f"{source}: no items of {', '.join(configs)} are left to ask"
                             + (f" with question_type={question_type}" if question_type else ""))
    return Task(
        dataset=MemoryDataset(samples, name=f"roomspace:{','.join(configs)}", location=str(source)),
        solver=generate(),
        scorer=roomspace_scorer(),
        metadata={"source": str(source), "configs": list(configs), "question_type": question_type,
                  "limit_rooms": limit_rooms, "style": style, "limit": limit, "seed": seed},
    )


def roomspace_samples(rows: BenchmarkRows, configs: Sequence[str], question_type: str | None = None,
                      limit_rooms: int | None = None, style: str = DEFAULT_STYLE, limit: int | None = None,
                      seed: int = 0) -> Iterator[Sample]:
    """One inspect Sample per row of `configs` (chosen with `rows.choose`), in the sample order of `seed`
    (pipeline.evaluate.sample), the first `limit` of them where one is given."""
    if style not in STYLES:
        raise RoomspaceError(f"unknown prompt style {style!r}; expected one of {', '.join(STYLES)}")
    wanted = None
    if question_type is not None:
        wanted = str(question_type).upper()
        if wanted not in QUESTION_TYPES:
            raise RoomspaceError(f"unknown question type {question_type!r}; expected {', '.join(QUESTION_TYPES)}")
    if limit_rooms is not None and (isinstance(limit_rooms, bool) or not isinstance(limit_rooms, int)
                                    or limit_rooms < 1):
        raise RoomspaceError(f"limit_rooms must be a whole number >= 1, got {limit_rooms!r}")
    drawn = None if limit is None else RoomspaceSample(limit, seed)  # a bad limit or seed: a one-line error
    order = ordered_ids(rows, configs, seed)[:None if drawn is None else drawn.limit]
    columns = list(dict.fromkeys([*prompt_columns(style), *SCORE_COLUMNS]))
    kept: dict[str, dict] = {}
    for config in configs:
        rooms: set[str] = set()
        read = [*columns, *judged_columns(rows, config)]  # a map is judged on its facts, a plan on its gold steps
        for row in rows.rows([config], read, None if drawn is None else order):
            if limit_rooms is not None and row["room_id"] not in rooms:
                if len(rooms) == limit_rooms:
                    continue
                rooms.add(row["room_id"])
            if wanted is not None and row["question_type"] != wanted:
                continue
            kept[row["id"]] = row
    for item in order:
        if item in kept:
            yield sample(kept[item], style)


def sample(row: dict, style: str = DEFAULT_STYLE) -> Sample:
    """A row as inspect asks it: the prompt text, after the image for a vision row."""
    prompt = make_prompt(row, style)
    if prompt.image is None:
        content: str | list[ChatMessage] = prompt.text
    else:
        content = [ChatMessageUser(content=[ContentImage(image=png_data_uri(prompt.image)),
                                            ContentText(text=prompt.text)])]
    metadata: dict[str, Any] = {name: row.get(name) for name in ROW_FIELDS}
    metadata.update({name: row[name] for name in JUDGED.get(row["question_type"], ())})  # a map's facts, a plan's steps
    metadata["measure"] = MEASURE[row["question_type"]]
    return Sample(id=row["id"], input=content, target=row["answer"], metadata=metadata)


@scorer(metrics=[accuracy(), stderr(),
                 grouped(accuracy(), "measure", all=False),
                 grouped(stderr(), "measure", all=False, name_template="{group_name}_stderr")])
def roomspace_scorer() -> Scorer:
    """YN accuracy, FR exact match, maps consistent and exact plans, by `pipeline.evaluate.score.score_item`."""

    async def score(state: TaskState, target: Target) -> Score:
        return judge(ScoreRow.of({**state.metadata, "id": str(state.sample_id)}), state.output.completion,
                     state.output.stop_reason == TRUNCATED_STOP)

    return score


def judge(row: ScoreRow, text: str | None, truncated: bool = False) -> Score:
    """One answer's Score: what `roomspace score` counts for the same text (1 right, 0 otherwise)."""
    outcome = score_item(row, text or "", truncated)
    status = int(outcome.status[0, 0])
    truth = ", ".join(row.answer_set)
    metadata: dict[str, Any] = {"question_type": row.question_type, "truncated": status == TRUNCATED}
    if status == TRUNCATED:
        metadata["status"] = "truncated"
        return Score(value=NOANSWER, reason=TRUNCATED_STOP, metadata=metadata,
                     explanation="truncated at the token limit (stop_reason max_tokens): not parsed, scores 0")
    if status == UNPARSEABLE:
        metadata["status"] = "unparseable"
        problem = outcome.examples[0]["problem"] if outcome.examples else "does not parse"
        return Score(value=NOANSWER, reason="invalid_response_format", metadata=metadata,
                     explanation=f"unparseable ({problem}): scores 0")
    metadata["status"] = "scored"  # the only status left: a text is never "no answer"
    right = bool(outcome.correct[0, 0])
    if row.question_type == "PLAN":
        said = "a plan"
        metadata["plan_content"] = float(outcome.jaccard[0, 0])
        metadata["plan_preconditions"] = float(outcome.f1[0, 0])
        explanation = (f"{'the' if right else 'not the'} gold plan's steps ordered alike; step F1 "
                       f"{outcome.jaccard[0, 0]:.0%}, precondition F1 {outcome.f1[0, 0]:.0%}")
    elif row.question_type == "MAP":
        said = "a map"
        metadata["map_facts"] = float(outcome.jaccard[0, 0])
        explanation = (f"a map on which {'every' if right else 'not every'} stated fact holds "
                       f"({outcome.jaccard[0, 0]:.0%} of them)")
    elif row.question_type == "YN":
        said = "Yes" if outcome.yes[0, 0] == 1 else "No"
        inside = "is" if row.candidate in row.answer_set else "is not"
        explanation = f"said {said}; the candidate {row.candidate} {inside} in the answer set {{{truth}}}"
    else:
        named = int(outcome.named[0, 0])
        said = ", ".join(code for code, bit in BIT.items() if named & bit)
        metadata["fr_f1"] = float(outcome.f1[0, 0])
        metadata["fr_jaccard"] = float(outcome.jaccard[0, 0])
        explanation = f"named {{{said}}}; the answer set is {{{truth}}}"
    return Score(value=CORRECT if right else INCORRECT, answer=said, explanation=explanation, metadata=metadata)


def log_predictions(log: EvalLog) -> Iterator[dict]:
    """An inspect log's answers as `roomspace score` predictions: {"id", "prediction"}, with
    "truncated": true for an answer cut at the token limit, "sample": k for epoch k + 1 of several,
    and a null prediction (no answer) for a sample that ended in an error."""
    for item in log.samples or []:
        record: dict[str, Any] = {"id": str(item.id), "prediction": None if item.error else item.output.completion}
        if item.epoch > 1:
            record["sample"] = item.epoch - 1
        if item.output.stop_reason == TRUNCATED_STOP and not item.error:
            record["truncated"] = True
        yield record


def _location(source: str) -> str:
    """A local folder made absolute (inspect runs the task from its own folder); a Hub id as given."""
    path = Path(str(source)).expanduser()
    return str(path.resolve()) if path.exists() else str(source)


def main(argv: Sequence[str] | None = None) -> None:
    """Print the answers of the inspect logs named on the command line as predictions JSON lines."""
    import json
    import sys

    usage = "usage: python -m pipeline.evaluate.harness.inspect_tasks LOG [LOG ...] > predictions.jsonl"
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        sys.exit(usage)
    if any(path in ("-h", "--help") for path in paths):
        print(f"{usage}\n\nPrints the answers of inspect eval logs (.eval or .json) as predictions JSON lines for "
              "`roomspace score`.")
        return
    for path in paths:
        if not Path(path).is_file():
            sys.exit(f"inspect_tasks: error: {path}: no such log file; {usage}")
        for record in log_predictions(read_eval_log(path)):
            sys.stdout.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
