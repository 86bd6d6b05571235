"""lmms-eval and VLMEvalKit for real, beside `roomspace score`, on the same answers (`make test-vlm-harness`).

    .venv-vlm/bin/python bench/vlm_harness.py BUILD [--out out/vlm-harness] [--concurrency 2]

BUILD is a build with images (`make test-vlm-harness` builds a few rooms of n5_m4_d144 with --vision
--agents --balanced). Run with the Python of .venv-vlm, where lmms-eval and VLMEvalKit are installed.

1. A loopback OpenAI-compatible server (tests/evaluate/loopback.py, BenchmarkChat) answers every
   question right, wrong or unparseably by a rule on its prompt, the same answer whoever asks.
2. `roomspace run-model` asks it every question of the build's configurations with images; `roomspace
   score` scores those answers, per configuration and pooled per family (`--pool`).
3. lmms-eval (`python -m lmms_eval --model openai`) runs the tasks generated for the build
   (pipeline/evaluate/harness/tasks.py) against the same server: every family group.
4. VLMEvalKit runs RoomSpaceDataset (pipeline/evaluate/harness/vlmevalkit_dataset.py) on each
   configuration's TSV with its OpenAIWrapper against the same server (infer_data_job, then the
   dataset's evaluate), as its run.py runs a dataset.
5. The three are printed side by side (pooled rows: lmms-eval's groups, score --pool, VLMEvalKit's
   datasets weighted by their sizes), and the script fails when a number differs, when a harness got
   an answer for a question other than the one run-model got, or when the server was asked anything
   that is no question of the build.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "evaluate")]
os.environ.setdefault("TQDM_DISABLE", "1")  # before tqdm is imported: the harnesses' progress bars, ~2,000 lines

from loopback import BenchmarkChat  # noqa: E402

from pipeline.cli import main as roomspace  # noqa: E402
from pipeline.errors import RoomspaceError  # noqa: E402
from pipeline.evaluate.harness.lm_eval_tasks.utils import METRICS  # noqa: E402
from pipeline.evaluate.harness.lmms_eval_tasks import write_tasks  # noqa: E402
from pipeline.evaluate.harness.tasks import LMMS_EVAL, family, task_name  # noqa: E402
from pipeline.evaluate.harness.vlmevalkit import dataset_name, read_by_vlmevalkit, write_tsvs  # noqa: E402
from pipeline.evaluate.rows import open_rows  # noqa: E402
from pipeline.text.kinds import kind_of  # noqa: E402

MODEL = "rule"  # the model name the server is asked for, and the predictions file's system
TOLERANCE = 1e-9  # each harness's number and score's are means of the same 0/1 outcomes
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "WANDB_MODE": "disabled",
           "OPENAI_API_KEY": "none"}


def score_run(source: str, configs: list[str], predictions: Path, report: Path, pool: bool = False) -> dict:
    """`roomspace score` on the predictions, its JSON report read back: {configuration, or the family when
    pooled: {metric: value, "<type> items": n}}; the printed report is kept beside the JSON."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = roomspace(["score", source, "--predictions", str(predictions), "--config", ",".join(configs),
                            "--json", str(report), *(["--pool"] if pool else [])])
    report.with_suffix(".md").write_text(printed.getvalue(), encoding="utf-8")
    if status:
        raise RoomspaceError(f"roomspace score failed (exit {status}); see {report.with_suffix('.md')}")
    scores = {}
    for group in json.loads(report.read_text(encoding="utf-8"))["groups"]:
        system = group["overall"]["systems"][MODEL]
        asked = [q for q in ("YN", "FR") if system[f"{q.lower()}_items"]]
        scores[family(group["configs"][0]) if pool else group["configs"][0]] = {
            **{METRICS[q][0]: system[METRICS[q][0]]["value"] for q in asked},
            **{f"{q} items": system[f"{q.lower()}_items"] for q in asked}}
    return scores


def run_model(source: str, base_url: str, configs: list[str], out: Path, concurrency: int) -> dict[str, str]:
    predictions = out / f"{MODEL}.jsonl"
    for earlier in (predictions, predictions.with_name(predictions.name + ".cache.jsonl")):
        earlier.unlink(missing_ok=True)  # asked anew, not answered from an earlier run
    status = roomspace(["run-model", source, "--base-url", base_url, "--model", MODEL, "--out", str(predictions),
                        "--config", ",".join(configs), "--concurrency", str(concurrency), "--retries", "1", "--quiet"])
    if status:
        raise RoomspaceError(f"run-model stopped (exit {status})")
    return {record["id"]: record["prediction"] for record in map(json.loads, predictions.read_text().splitlines())
            if "id" in record}


def lmms_eval_run(source: str, base_url: str, configs: list[str], out: Path, concurrency: int) -> tuple[dict, dict]:
    """lmms-eval's results {task or group: {metric: value}} and its answers {id: text}."""
    tasks = write_tasks(source, out / "lmms_eval_tasks")
    groups = list(dict.fromkeys(family(config) for config in configs))
    logs = out / "lmms_eval"
    shutil.rmtree(logs, ignore_errors=True)
    command = [sys.executable, "-m", "lmms_eval", "--model", "openai",
               "--model_args", f"model={MODEL},base_url={base_url},api_key=none,num_concurrent={concurrency},"
                               "max_retries=1,timeout=60",
               "--tasks", ",".join(groups), "--include_path", str(tasks), "--batch_size", "1",
               "--log_samples", "--output_path", str(logs), "--verbosity", "WARNING"]
    print("$ " + " ".join(command[1:]), flush=True)
    with (out / "lmms_eval.log").open("w") as log:
        done = subprocess.run(command, env={**os.environ, **OFFLINE}, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RoomspaceError(f"lmms-eval failed (exit {done.returncode}); see {out / 'lmms_eval.log'}")
    (results_file,) = logs.rglob("*results.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    scores = {name: {key.split(",")[0]: value for key, value in metrics.items() if key.endswith(",none")}
              for name, metrics in results.items()}
    # a logged sample names its doc by position among its task's docs: the configuration's rows of the
    # task's question type, in row order (process_docs); its input must be that row's prompt
    rows = open_rows(source)
    answers = {}
    for config in configs:
        for question_type in kind_of(config).questions:
            docs = [row for row in rows.rows([config], ["id", "question_type", "prompt"])
                    if row["question_type"] == question_type]
            (samples,) = logs.rglob(f"*samples_{task_name(config, question_type)}.jsonl")
            for sample in map(json.loads, samples.read_text(encoding="utf-8").splitlines()):
                doc = docs[sample["doc_id"]]
                if sample["input"] != doc["prompt"]:
                    raise RoomspaceError(f"lmms-eval's sample {sample['doc_id']} of {samples.name} is not {doc['id']}")
                answer = sample["filtered_resps"]
                answers[doc["id"]] = answer[0] if isinstance(answer, list) else answer
    return scores, answers


def vlmevalkit_run(source: str, base_url: str, configs: list[str], out: Path, concurrency: int) -> tuple[dict, dict]:
    """VLMEvalKit's scores {config: evaluate()'s dict} and its answers {id: text}."""
    data = out / "LMUData"
    shutil.rmtree(data, ignore_errors=True)
    write_tsvs(source, data)
    os.environ.update({**OFFLINE, "LMUData": str(data)})
    from vlmeval.api import OpenAIWrapper
    from vlmeval.inference import infer_data_job
    from vlmeval.smp import load

    from pipeline.evaluate.harness.vlmevalkit_dataset import RoomSpaceDataset

    work = out / "vlmevalkit"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    model = OpenAIWrapper(model=MODEL, api_base=f"{base_url}/chat/completions", key="none", temperature=0,
                          max_tokens=2048, retry=1, timeout=60, verbose=False)
    scores, answers = {}, {}
    for config in configs:
        dataset = RoomSpaceDataset(dataset_name(config))
        infer_data_job(model, work_dir=str(work), model_name=MODEL, dataset=dataset, api_nproc=concurrency)
        predictions = work / f"{MODEL}_{dataset_name(config)}.xlsx"
        scores[config] = dataset.evaluate(str(predictions))
        table = load(str(predictions))
        answers.update(zip(table["id"], table["prediction"]))
    return scores, answers


def pooled(per_config: dict, members: list[str], question_type: str) -> float | None:
    """A family's metric from its configurations' values, weighted by their item counts."""
    metric, items = METRICS[question_type][0], f"{question_type} items"
    chosen = [per_config[c] for c in members if items in per_config[c]]
    total = sum(scores[items] for scores in chosen)
    return sum(scores[metric] * scores[items] for scores in chosen) / total if total else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a build with --vision (and --agents, --balanced)")
    parser.add_argument("--out", type=Path, default=Path("out/vlm-harness"))
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight per harness (default 2)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    source = str(Path(args.source).resolve())
    rows = open_rows(source)
    configs = LMMS_EVAL.names(rows.configs)
    if not configs or configs != read_by_vlmevalkit(rows.configs):
        raise RoomspaceError(f"{source}: lmms-eval reads {configs}, VLMEvalKit {read_by_vlmevalkit(rows.configs)}")
    families: dict[str, list[str]] = {}
    for config in configs:
        families.setdefault(family(config), []).append(config)
    server = BenchmarkChat(rows.rows(configs, ["id", "prompt", "image", "question_type", "answer", "answer_set",
                                              "candidate", "options"]))
    base_url = server.url.removesuffix("/chat/completions")
    try:
        said = run_model(source, base_url, configs, args.out, args.concurrency)
        predictions = args.out / f"{MODEL}.jsonl"
        project = score_run(source, configs, predictions, args.out / "score.json")
        for name, members in families.items():
            project.update(score_run(source, members, predictions, args.out / f"score-{name}.json", pool=True))
        lmms, lmms_answers = lmms_eval_run(source, base_url, configs, args.out, args.concurrency)
        vlm, vlm_answers = vlmevalkit_run(source, base_url, configs, args.out, args.concurrency)
    finally:
        server.close()

    problems = [f"the server was asked {len(server.unknown)} times for no question of the build"] if server.unknown else []
    for harness, answers in (("lmms-eval", lmms_answers), ("VLMEvalKit", vlm_answers)):
        differ = sorted(i for i in said if answers.get(i) != said[i])
        if differ or set(answers) != set(said):
            problems.append(f"{harness}: {len(differ)} of {len(said)} questions got another answer than run-model's "
                            f"(e.g. {differ[:2]}), {len(set(answers) - set(said))} unknown ids")
    lines = ["| configuration or family | measure | items | roomspace score | lmms-eval | VLMEvalKit |",
             "|---|---|---:|---:|---:|---:|"]
    for name, members in [*((c, [c]) for c in configs), *families.items()]:
        for question_type in kind_of(members[0]).questions:
            metric = METRICS[question_type][0]
            ours = project[name][metric]
            theirs = (lmms[task_name(name, question_type) if name in configs else f"{name}_{question_type.lower()}"]
                      [metric], pooled(vlm, members, question_type))
            lines.append(f"| {name} | {metric} | {project[name][f'{question_type} items']} | {ours:.6f} | "
                         + " | ".join(f"{value:.6f}" for value in theirs) + " |")
            if any(value is None or abs(value - ours) > TOLERANCE for value in theirs):
                problems.append(f"{name} {metric}: roomspace score {ours!r}, lmms-eval {theirs[0]!r}, "
                                f"VLMEvalKit {theirs[1]!r}")
    table = "\n".join(lines)
    answered = f"{len(said)} questions, {len(server.answers)} distinct requests answered"
    report = f"{table}\n\n{answered}; " + ("every number equal." if not problems else "DIFFERENT:\n" + "\n".join(problems))
    (args.out / "report.md").write_text(report + "\n", encoding="utf-8")
    print(report)
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RoomspaceError as error:
        sys.exit(f"error: {error}")
