"""The lmms-eval tasks (pipeline/evaluate/harness/lmms_eval_tasks) score as `roomspace score` does.

lmms-eval itself is not installed here (too heavy: `make test-vlm-harness` runs it for real): the
YAMLs, generated for a build of every kind with images of the registry (every_kind.py), are parsed
with a loader that records `!function` tags, and the hooks are called as lmms-eval 0.7.3 calls them:
rows from `datasets.load_dataset(dataset_path, name=dataset_name)[test_split]`, `process_docs` on
them, `doc_to_visual` / `doc_to_text` on a row with its image, `process_results(doc, [answer])` on
the row without it; the mean of each task's metric must equal the project's report for the same answers.
"""

import importlib.util
import io
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml
from every_kind import BASE, every_kind, read_by

from pipeline.dataset.layout import table_questions
from pipeline.dataset.manifest import read_manifest, shard_files
from pipeline.evaluate.harness.lmms_eval_tasks import PLACEHOLDER, TASKS_DIR, write_tasks
from pipeline.evaluate.harness.tasks import LMMS_EVAL, PACKAGED_CONFIGS, QUESTION_TYPES, family, task_name
from pipeline.evaluate.report import evaluate
from pipeline.text.kinds import kind_of

datasets = pytest.importorskip("datasets")  # the `harness` extra
from PIL import Image  # noqa: E402

METRIC = {question_type: metrics[0] for question_type, (_, metrics, _) in QUESTION_TYPES.items()}  # each type's rate
SYSTEM = "stub"


class Function(str):
    """A `!function` target, kept as its dotted name."""


class TaskLoader(yaml.SafeLoader):
    pass


TaskLoader.add_constructor("!function", lambda loader, node: Function(loader.construct_scalar(node)))


def read_yaml(path: Path) -> dict:
    """One YAML with its `include`s merged under it, as lmms-eval merges them."""
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=TaskLoader)
    merged = {}
    for include in reversed([config.pop("include")] if isinstance(config.get("include"), str)
                            else config.pop("include", [])):
        merged.update(read_yaml(path.parent / include))
    return {**merged, **config}


def load_utils(folder: Path):
    """utils.py loaded by its path, as lmms-eval's `!function` constructor loads it."""
    spec = importlib.util.spec_from_file_location("utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hook(utils, target: Function):
    module, name = target.split(".")
    assert module == "utils"
    return getattr(utils, name)


def right_wrong_or_unparseable(row: dict) -> str:
    kind = zlib.crc32(row["id"].encode("utf-8")) % 3
    if row["question_type"] == "YN":
        if kind == 2:
            return "Perhaps; the picture is unclear on this."
        possible = row["candidate"] in row["answer_set"]
        return "Looking at the image.\nAnswer: " + ("Yes" if (possible if kind == 0 else not possible) else "No")
    if kind == 2:
        return "Maybe " + row["options"][0] + "."
    if kind == 0:
        return "Answer: " + row["answer"]
    wrong = ", ".join(row["options"]) if len(row["answer_set"]) < len(row["options"]) else row["options"][0]
    return "Answer: " + wrong


@pytest.fixture(scope="module")
def built(scenes, request) -> Path:
    return every_kind(scenes, request)


@pytest.fixture(scope="module")
def configs(built) -> list[str]:
    """The build's configurations lmms-eval reads: every kind with images, paper and balanced."""
    return read_by(built, "lmms_eval")


@pytest.fixture(scope="module")
def tasks(built, tmp_path_factory) -> Path:
    return write_tasks(built, tmp_path_factory.mktemp("lmms-tasks"))


def test_every_yaml_parses_and_names_hooks_that_exist():
    utils = load_utils(TASKS_DIR)
    configs = {path.name: read_yaml(path) for path in TASKS_DIR.glob("*.yaml")}
    targets = set()

    def walk(value):
        if isinstance(value, Function):
            targets.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for config in configs.values():
        walk(config)
    assert {"utils.doc_to_visual", "utils.doc_to_text", "utils.process_results", "utils.yn_items",
            "utils.fr_items"} <= targets
    for target in targets:
        assert callable(hook(utils, target)), target
    named = {config["task"]: config for config in configs.values() if "task" in config and "group" not in config}
    expected = {task_name(name, q): (name, q) for name in LMMS_EVAL.names(PACKAGED_CONFIGS)
                for q in kind_of(name).questions}
    assert set(named) == set(expected) and expected
    for task, (name, question_type) in expected.items():
        config = named[task]
        assert config["dataset_path"] == PLACEHOLDER and config["dataset_name"] == name
        assert config["output_type"] == "generate_until" and config["test_split"] == "test"
        assert config["generation_kwargs"]["until"] == []  # lmms-eval's default would stop at a blank line
        assert [m["metric"] for m in config["metric_list"]] == list(QUESTION_TYPES[question_type][1])
        pooled = configs[f"{family(name)}_{question_type.lower()}.yaml"]
        assert task in pooled["task"] and pooled["aggregate_metric_list"][0]["weight_by_size"] is True


def test_write_tasks_fills_in_the_location(built, tasks, configs):
    written = {path.name: read_yaml(path) for path in tasks.glob("*.yaml")}
    named = {config["task"]: config for config in written.values() if "task" in config and "group" not in config}
    assert set(named) == {task_name(name, q) for name in configs for q in kind_of(name).questions}
    assert {config["dataset_path"] for config in named.values()} == {str(built.resolve())}
    assert (tasks / "utils.py").read_text() == (TASKS_DIR / "utils.py").read_text()


def test_the_hooks_score_as_roomspace_score_does(built, tasks, configs, tmp_path):
    utils = load_utils(tasks)
    for name in configs:
        predictions = tmp_path / name / f"{SYSTEM}.jsonl"
        predictions.parent.mkdir()
        means = {}
        with predictions.open("w", encoding="utf-8") as file:
            for question_type in kind_of(name).questions:
                config = read_yaml(tasks / f"{task_name(name, question_type)}.yaml")
                kwargs = config.get("dataset_kwargs") or {}
                dataset = datasets.load_dataset(path=config["dataset_path"], name=config["dataset_name"], **kwargs)
                docs = hook(utils, config["process_docs"])(dataset[config["test_split"]])
                no_image = docs.remove_columns("image")  # lmms-eval's docs for process_results
                assert len(docs) > 0 and set(docs["question_type"]) == {question_type}
                specific = config["lmms_eval_specific_kwargs"]["default"]
                scores = []
                for k, doc in enumerate(docs):
                    visuals = hook(utils, config["doc_to_visual"])(doc)
                    if doc["modality"] == "text":  # a pair question asked with the centres in words only
                        assert visuals == [] and doc["image"] is None
                    else:
                        (image,) = visuals
                        assert isinstance(image, Image.Image) and image.mode == "RGB"
                    assert hook(utils, config["doc_to_text"])(doc, specific) == doc["prompt"]
                    assert hook(utils, config["doc_to_text"])(doc) == doc["prompt"]
                    answer = right_wrong_or_unparseable(doc)
                    file.write(json.dumps({"id": doc["id"], "prediction": answer}) + "\n")
                    result = hook(utils, config["process_results"])(no_image[k], [answer])
                    assert set(result) == set(QUESTION_TYPES[question_type][1])
                    scores.append(result[METRIC[question_type]])
                assert {0.0, 1.0} == set(scores) or (len(scores) < 3 and set(scores) <= {0.0, 1.0})
                means[question_type] = float(np.mean(scores))
        (group,) = evaluate(str(built), name, [predictions], []).groups
        project = group.overall.systems[SYSTEM]
        enough = project.items >= 3  # a configuration this small (a room's few object tasks) may get one kind
        assert project.unparseable > 0 or not enough
        for question_type, mean in means.items():
            ours = getattr(project, METRIC[question_type]).value
            print(f"{task_name(name, question_type)}: hooks {METRIC[question_type]} = {mean!r}, roomspace score = {ours!r}")
            assert (0 < ours < 1 or not enough) and mean == pytest.approx(ours, abs=1e-12)


def test_doc_to_visual_gives_the_rows_image(built, tasks):
    import pyarrow.parquet as pq

    utils = load_utils(tasks)
    config = f"vision_{BASE}"
    (shard, *_) = shard_files(built, read_manifest(built), config)
    raw = table_questions(pq.read_table(shard), ["id", "image"], config).to_pylist()  # image: {"bytes", "path"}
    loaded = {doc["id"]: doc for doc in datasets.load_dataset(str(built), name=config)["test"]}
    for row in [r for r in raw if r["image"] is not None][:6]:
        expected = np.asarray(Image.open(io.BytesIO(row["image"]["bytes"])).convert("RGB"))
        (from_parquet,) = utils.doc_to_visual(row)  # a raw Parquet row
        (from_datasets,) = utils.doc_to_visual(loaded[row["id"]])  # a row as lmms-eval holds it (PIL)
        assert np.array_equal(np.asarray(from_parquet), expected)
        assert np.array_equal(np.asarray(from_datasets), expected)
