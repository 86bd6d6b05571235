"""RoomSpace as an inspect_ai task (pipeline/evaluate/harness/inspect_tasks.py), offline: inspect's mock
model answers every configuration of every kind of the registry, paper and balanced (one small
build of them all, every_kind.py) with a known mixture of right, wrong, unparseable and truncated
answers, and inspect's YN accuracy and FR exact match equal what `roomspace score` gives for the
same answers."""

import base64
import json
import shutil
import zlib
from pathlib import Path

import pytest
from every_kind import BASE, every_kind
from loopback import LoopbackChat, completion
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER

from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.inspect_tasks import MEASURE, log_predictions, main, roomspace
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.score import ScoreRow, score_item
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import ordered_ids
from pipeline.spatial.relations import DIRECTIONS, relation_words
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS as CONFIGURATION_KINDS
from pipeline.text.kinds import kind_of
from roomspace.inspect_tasks import TASK_NAME

TWIN, VISION = f"twin_{BASE}", f"vision_{BASE}"
KINDS = ("right", "wrong", "unparseable", "truncated", "reasoned")  # what the mock model answers, by item id
DATA_URI = "data:image/png;base64,"
SYSTEM = "mock"  # the predictions file's stem: the system's name in the report

# inspect_ai's model retry set-up passes tenacity a parameter tenacity has deprecated: not this project's
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")


# every configuration of the build that inspect reads: each kind's, paper and balanced
EVERY_CONFIG = [kind.config_name(base) for kind in CONFIGURATION_KINDS.values() if "inspect" in kind.harness
                for base in (Config.parse(BASE), *[Config.parse(BASE).as_balanced()] * kind.balanced)]


@pytest.fixture(scope="module")
def small(scenes, request) -> Path:
    return every_kind(scenes, request)


def kind(item_id: str, position: int | None = None) -> str:
    """What the mock answers an item: by its position among the task's samples, so that a configuration
    of five items or more gets every kind (a kind with few rows, shapes, missed one by hash), else by its id."""
    return KINDS[(zlib.crc32(item_id.encode()) if position is None else position) % len(KINDS)]


def answer(item_id: str, metadata: dict, position: int | None = None) -> ModelOutput:
    """The mock model's answer to an item: right, wrong, unparseable, cut at the token limit (the
    right text, which must not count), or right after some reasoning and in the view's words."""
    truth = metadata["answer_set"]
    if metadata["question_type"] == "PLAN":  # the gold plan, and a plan of one step naming nothing of the view
        right = worded = metadata["answer"]
        wrong = '<ans>{"step1": {"content": "Wait a moment", "precondition": []}}</ans>'
    elif metadata["question_type"] == "MAP":  # the witness map, and it turned half round (its directions reversed)
        lines = metadata["answer"].splitlines()
        right = worded = "Answer:\n" + metadata["answer"]
        wrong = "Answer:\n" + "\n".join(" ".join(reversed(line.split())) for line in reversed(lines))
    elif metadata["question_type"] == "YN":
        right = "Yes" if metadata["candidate"] in truth else "No"
        wrong = "No" if right == "Yes" else "Yes"
        worded = right
    else:  # FR: in the row's own names where it has them (composition rows), else in relation codes
        names = dict(zip(metadata["option_codes"], metadata["options"])) if metadata.get("option_codes") else {}
        right = ", ".join(names.get(code, code) for code in truth)
        other = next(code for code in (names or DIRECTIONS) if code != truth[0])
        wrong = ", ".join(names.get(code, code) for code in (truth[:-1] if len(truth) > 1 else [other]))
        worded = right if names else ", ".join(relation_words(code, metadata["view"], "label") for code in truth)
    text, stop = {"right": (right, "stop"), "wrong": (wrong, "stop"),
                  "unparseable": ("Perhaps; it is hard to say.", "stop"),
                  "truncated": (right, "max_tokens"),
                  "reasoned": (f"Reading the story fact by fact.\nAnswer: {worded}", "stop")}[kind(item_id, position)]
    output = ModelOutput.from_content("mockllm/model", text, stop_reason=stop)
    # with usage given, mockllm does not count tokens (tiktoken would download its encoding: no network here)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def parts(message: ChatMessageUser) -> tuple[str, bytes | None]:
    """(text, PNG) of a user message: a string, or an image part then a text part."""
    if isinstance(message.content, str):
        return message.content, None
    image, text = message.content
    assert isinstance(image, ContentImage) and isinstance(text, ContentText)
    assert image.image.startswith(DATA_URI)
    return text.text, base64.b64decode(image.image.removeprefix(DATA_URI))


class MockAnswers:
    """mockllm's custom_outputs: finds the sample a request is for by its text and image."""

    def __init__(self, task) -> None:
        self.items = {}
        for position, sample in enumerate(task.dataset):
            (message,) = sample.input if isinstance(sample.input, list) else [ChatMessageUser(content=sample.input)]
            self.items[parts(message)] = (sample.id, sample.metadata, position)
        assert len(self.items) == len(task.dataset), "two samples send the same input"
        self.received: dict[str, bytes | None] = {}  # id -> the image the model was sent

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        (message,) = messages
        text, image = parts(message)
        item_id, metadata, position = self.items[(text, image)]
        self.received[item_id] = image
        return answer(item_id, metadata, position)


def run(task, log_dir: Path):
    mock = MockAnswers(task)
    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=mock), log_dir=str(log_dir),
                          display="none")
    assert log.status == "success", log.error
    return log, mock


@pytest.mark.parametrize("config", EVERY_CONFIG)
def test_inspect_scores_equal_roomspace_score_for_the_same_answers(small, config, tmp_path):
    task = roomspace(source=str(small), config=config)
    rows = {row["id"]: row for row in open_rows(small).rows([config])}
    assert [sample.id for sample in task.dataset] == ordered_ids(open_rows(small), [config])  # every row, sample order
    log, mock = run(task, tmp_path / "logs")
    samples = {sample.id: sample for sample in log.samples}
    assert set(samples) == set(rows)

    # each item scored by its kind of answer; the metadata carries what scoring needs, not the row
    positions = {item_id: position for item_id, _, position in mock.items.values()}
    kinds = {item_id: kind(item_id, positions[item_id]) for item_id in rows}
    for item_id, sample in samples.items():
        score = sample.scores["roomspace_scorer"]
        assert set(sample.metadata) >= {"question_type", "answer_set", "candidate", "options", "view", "config",
                                        "setting"}
        assert not set(sample.metadata) & {"prompt", "story", "image"}
        assert ("facts" in sample.metadata) == (sample.metadata["question_type"] == "MAP")  # what a map is judged on
        assert ("plan" in sample.metadata) == (sample.metadata["question_type"] == "PLAN")  # and a plan
        assert sample.metadata["config"] == config
        expected = {"right": CORRECT, "reasoned": CORRECT, "wrong": INCORRECT, "unparseable": NOANSWER,
                    "truncated": NOANSWER}[kinds[item_id]]
        if sample.metadata["question_type"] == "MAP" and kinds[item_id] == "wrong":  # a map may keep its facts turned
            expected = CORRECT if score_item(ScoreRow.of({**sample.metadata, "id": item_id}),
                                             sample.output.completion).correct[0, 0] else INCORRECT
        assert score.value == expected, (item_id, kinds[item_id], sample.output.completion, score.explanation)
        assert score.metadata["truncated"] == (kinds[item_id] == "truncated")
        if kinds[item_id] == "unparseable":
            assert score.explanation.startswith("unparseable")

    # the same answers as a predictions file, read back from the log on disk, scored by `roomspace score`
    records = list(log_predictions(read_eval_log(log.location)))
    assert records == [{"id": item_id, "prediction": sample.output.completion}
                       | ({"truncated": True} if kinds[item_id] == "truncated" else {})
                       for item_id, sample in samples.items()]
    predictions = tmp_path / f"{SYSTEM}.jsonl"
    predictions.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    (group,) = evaluate(str(small), config, [predictions], []).groups
    reference = group.overall.systems[SYSTEM]
    metrics = {name: metric.value for name, metric in log.results.scores[0].metrics.items()}
    for measure in (MEASURE[question_type] for question_type in kind_of(config).questions):
        assert metrics[measure] == pytest.approx(getattr(reference, measure).value, abs=1e-12)
        assert 0 < metrics[measure] < 1  # a mixture, not a constant
    statuses = [sample.scores["roomspace_scorer"].metadata["status"] for sample in samples.values()]
    every = len(rows) >= len(KINDS)  # a configuration this small (a room's few object tasks) misses some kinds
    assert statuses.count("unparseable") == reference.unparseable and (reference.unparseable > 0 or not every)
    assert statuses.count("truncated") == reference.truncated and (reference.truncated > 0 or not every)
    correct = sum(kinds[i] in ("right", "reasoned") for i in rows)
    assert metrics["accuracy"] == pytest.approx(correct / len(rows), abs=1e-12)
    assert {"stderr", *(f"{MEASURE[q]}_stderr" for q in kind_of(config).questions)} <= set(metrics)

    # vision items carry their row's image, before the text, and the model receives exactly that
    for sample in task.dataset:
        row = rows[sample.id]
        if row.get("image") is not None:
            (message,) = sample.input
            text, image = parts(message)
            assert image == row["image"]["bytes"] and text == row["prompt"]
            assert mock.received[sample.id] == row["image"]["bytes"]
        else:
            assert sample.input == row["prompt"]
            assert mock.received[sample.id] is None


def test_the_task_runs_by_its_registered_name_with_filters(small, tmp_path, capsys):
    """As `inspect eval roomspace/roomspace -T ...` finds it: by name, through the entry point."""
    task = roomspace(source=str(small), config=BASE, question_type="YN", limit_rooms=1)
    rows = [row for row in open_rows(small).rows([BASE]) if row["question_type"] == "YN"]
    first_room = rows[0]["room_id"]
    assert sorted(sample.id for sample in task.dataset) == sorted(row["id"] for row in rows
                                                                  if row["room_id"] == first_room)
    mock = MockAnswers(task)
    (log,) = inspect_eval(TASK_NAME, task_args={"source": str(small), "config": BASE, "question_type": "YN",
                                                "limit_rooms": 1},
                          model=get_model("mockllm/model", custom_outputs=mock), log_dir=str(tmp_path / "logs"),
                          display="none")
    assert log.status == "success", log.error
    assert log.eval.task == TASK_NAME
    assert {sample.id for sample in log.samples} == {sample.id for sample in task.dataset}
    assert set(log.results.scores[0].metrics) >= {"accuracy", "stderr", "yn_accuracy"}
    assert "fr_exact" not in log.results.scores[0].metrics

    # the log's answers as predictions JSON lines, from the shell
    main([log.location])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == list(log_predictions(log)) and len(printed) == len(task.dataset)


def test_a_hub_snapshot_the_default_configuration_and_refusals(small, tmp_path):
    rows = open_rows(small)
    assert {sample.metadata["config"] for sample in roomspace(source=str(small)).dataset} == {rows.default}
    snapshot = tmp_path / "snapshot"  # what `push` uploads: the card and data/, no manifest
    shutil.copytree(small / "data", snapshot / "data")
    shutil.copy(small / "README.md", snapshot)
    for config in (BASE, VISION):
        assert list(MockAnswers(roomspace(source=str(snapshot), config=config)).items.items()) == \
            list(MockAnswers(roomspace(source=str(small), config=config)).items.items())
    with pytest.raises(RoomspaceError, match="no configuration"):
        roomspace(source=str(small), config="n9_m9_d81")
    with pytest.raises(RoomspaceError, match="question type"):
        roomspace(source=str(small), config=BASE, question_type="MC")
    with pytest.raises(RoomspaceError, match="limit_rooms"):
        roomspace(source=str(small), config=BASE, limit_rooms=0)
    with pytest.raises(RoomspaceError, match="limit must be a whole number >= 1"):
        roomspace(source=str(small), config=BASE, limit=0)


class OpenAICompatibleServer:
    """/v1/chat/completions on 127.0.0.1, as vLLM or Ollama serve it, answering by the mock's rule."""

    def __init__(self, mock: MockAnswers) -> None:
        self.requests: list[dict] = []
        self.mock = mock
        self.loopback = LoopbackChat(self.respond)
        self.base_url = f"{self.loopback.root}/v1"

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        self.requests.append(body)
        (message,) = body["messages"]
        content = message["content"]
        if isinstance(content, str):
            key = (content, None)
        else:
            image, text = content
            key = (text["text"], base64.b64decode(image["image_url"]["url"].removeprefix(DATA_URI)))
        output = answer(*self.mock.items[key])
        return 200, completion(body, output.completion, "length" if output.stop_reason == "max_tokens" else "stop")


def test_the_readme_command_against_an_openai_compatible_server(small, tmp_path, monkeypatch):
    """`inspect eval roomspace/roomspace --model openai-api/local/MODEL` with LOCAL_BASE_URL set, on the
    vision configuration: every image reaches the server, and the scores are `roomspace score`'s."""
    mock = MockAnswers(roomspace(source=str(small), config=VISION))
    server = OpenAICompatibleServer(mock)
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    try:
        (log,) = inspect_eval(TASK_NAME, task_args={"source": str(small), "config": VISION},
                              model="openai-api/local/served-model", log_dir=str(tmp_path / "logs"), display="none")
    finally:
        server.loopback.close()
    assert log.status == "success", log.error
    rows = list(open_rows(small).rows([VISION]))
    assert len(server.requests) == len(rows) and {r["model"] for r in server.requests} == {"served-model"}
    images = sum(isinstance(r["messages"][0]["content"], list) for r in server.requests)
    assert images == sum(row["image"] is not None for row in rows) > 0
    predictions = tmp_path / f"{SYSTEM}.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in log_predictions(log)), encoding="utf-8")
    (group,) = evaluate(str(small), VISION, [predictions], []).groups
    metrics = log.results.scores[0].metrics
    assert metrics["yn_accuracy"].value == pytest.approx(group.overall.systems[SYSTEM].yn_accuracy.value, abs=1e-12)
    assert metrics["fr_exact"].value == pytest.approx(group.overall.systems[SYSTEM].fr_exact.value, abs=1e-12)


def test_the_export_gives_usage_and_a_one_line_error_not_a_traceback(tmp_path):
    """Issue 43: `python -m pipeline.evaluate.harness.inspect_tasks --help` and a missing log gave tracebacks."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "pipeline.evaluate.harness.inspect_tasks"]
    shown = subprocess.run([*command, "--help"], capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m pipeline.evaluate.harness.inspect_tasks")
    missing = subprocess.run([*command, str(tmp_path / "none.eval")], capture_output=True, text=True)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines() == [missing.stderr.strip()]
    assert missing.stderr.startswith(f"inspect_tasks: error: {tmp_path / 'none.eval'}: no such log file")
