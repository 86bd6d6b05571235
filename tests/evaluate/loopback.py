"""An OpenAI-style /v1/chat/completions endpoint on 127.0.0.1 for the harness tests, as vLLM or Ollama
serve one: each request is answered with what `respond(path, body)` returns, (status, JSON reply).
`serve_then_die`, run in a process of its own, is a server that answers a few requests, then crashes
on the next as llama.cpp's server did in issue 43."""

import json
import os
import signal
import sys
import threading
import zlib
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Respond = Callable[[str, dict], tuple[int, dict]]


def completion(body: dict, text: str, finish: str = "stop") -> dict:
    """A chat completion reply saying `text`."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
    return {"id": "loopback", "object": "chat.completion", "created": 0, "model": body["model"], "choices": [choice]}


class LoopbackChat:
    def __init__(self, respond: Respond, port: int = 0) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802: /v1/models, which clients and starters ask first
                payload = json.dumps({"object": "list", "data": [{"id": "loopback", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):  # noqa: N802 (the http.server name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, reply = respond(self.path, body)
                payload = json.dumps(reply).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class SampledChat:
    """A loopback model answering each prompt with `answer(prompt, sample)`, `sample` counting the times
    that prompt was asked before (a run with --samples K and --concurrency 1 asks them in order)."""

    def __init__(self, answer: Callable[[str, int], str]) -> None:
        self.answer = answer
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()
        self.loopback = LoopbackChat(self.respond)
        self.root = self.loopback.root

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        prompt = body["messages"][0]["content"]
        with self.lock:
            sample = self.asked.get(prompt, 0)
            self.asked[prompt] = sample + 1
        return 200, completion(body, self.answer(prompt, sample))

    def close(self) -> None:
        self.loopback.close()


def right_wrong_or_unparseable(row: dict) -> str:
    """A rule model's answer to a benchmark row, by a hash of its prompt: right, wrong or unparseable,
    about a third each."""
    kind = zlib.crc32(row["prompt"].encode("utf-8")) % 3
    if row["question_type"] == "YN":
        possible = row["candidate"] in row["answer_set"]
        if kind == 2:
            return "Perhaps; the story is unclear on this."  # a hedge: does not parse
        said = possible if kind == 0 else not possible
        return "The facts decide it.\nAnswer: " + ("Yes" if said else "No")
    if kind == 2:
        return "Maybe " + row["options"][0] + "."  # a hedge: does not parse
    if kind == 0:
        return "Working through the facts.\nAnswer: " + row["answer"]
    if row["question_type"] == "PLAN":  # one step that names nothing of the view: read, and wrong
        return '<ans>{"step1": {"content": "Wait a moment", "precondition": []}}</ans>'
    if row["question_type"] == "MAP":  # the witness map turned half round: its stated directions reversed
        return "Answer:\n" + "\n".join(" ".join(reversed(line.split())) for line in reversed(row["answer"].splitlines()))
    wrong = ", ".join(row["options"]) if len(row["answer_set"]) < len(row["options"]) else row["options"][0]
    return "Answer: " + wrong


def asked(body: dict) -> tuple[str, bool]:
    """(text, whether an image came with it) of a chat request's user turns: content as a string, or as
    parts (text parts joined, image_url parts counted), as every OpenAI-compatible client sends it."""
    texts, image = [], False
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if part["type"] == "text":
                texts.append(part["text"])
            image = image or part["type"] == "image_url"
    return "".join(texts), image


class BenchmarkChat:
    """/v1/chat/completions on 127.0.0.1 answering a benchmark's questions by right_wrong_or_unparseable:
    a request is matched to its row by its text and whether it carries an image (rows that share both get
    the answer to the first by id), so whichever harness asks gets the same answer; `answers` records
    what it said to each (text, image?) and `unknown` the requests that are no row's (refused)."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self.rows: dict[tuple[str, bool], dict] = {}
        for row in sorted(rows, key=lambda row: row["id"]):
            self.rows.setdefault((row["prompt"], row.get("image") is not None), row)
        self.answers: dict[tuple[str, bool], str] = {}
        self.unknown: list[tuple[str, bool]] = []
        self.lock = threading.Lock()
        self.loopback = LoopbackChat(self.respond)
        self.url = f"{self.loopback.root}/v1/chat/completions"

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        key = asked(body)
        row = self.rows.get(key)
        with self.lock:
            if row is None:
                self.unknown.append(key)
                return 400, {"error": {"message": "not a question of this benchmark"}}
            answer = self.answers.setdefault(key, right_wrong_or_unparseable(row))
        return 200, completion(body, answer)

    def close(self) -> None:
        self.loopback.close()


CRASH = "Fatal Python error: Segmentation fault"  # what the dying server writes to its log before it dies


def serve_then_die(port: int, answers: int) -> None:
    """/v1/chat/completions on 127.0.0.1:`port` answering "Answer: Yes" to the first `answers` requests; the
    next one kills the process with SIGSEGV mid-request, after a fatal error on stderr, as llama.cpp's
    server compiled for the build machine's AVX-512 did in decode."""
    asked = []
    lock = threading.Lock()

    def respond(path: str, body: dict) -> tuple[int, dict]:
        with lock:
            asked.append(path)
            if len(asked) > answers:
                print(CRASH, file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGSEGV)
        return 200, completion(body, "The facts decide it.\nAnswer: Yes")

    print(f"serving on 127.0.0.1:{port}", flush=True)
    LoopbackChat(respond, port).thread.join()
