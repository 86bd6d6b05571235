"""run-model against a chat endpoint served by the test on 127.0.0.1: answers, 5xx, timeouts, garbage,
refusals, concurrency, and the answer cache that lets an interrupted run resume."""

import json
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import SCENE_SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.errors import RoomspaceError
from pipeline.evaluate.model_runner import AnswerCache, Endpoint, Retry, run_model
from pipeline.evaluate.prompts import Prompt
from pipeline.text.configs import parse_configs
from pipeline.text.items import ROWS_PER_ROOM

FAST = Retry(attempts=3, backoff=0.01)
TIMEOUT = 60.0  # seconds: no answer of this server takes long, except the one held back on purpose
HELD_TIMEOUT = 0.2  # seconds: the timeout of the test that needs one; the held answer never comes


class ChatServer:
    """An OpenAI-style /v1/chat/completions whose behaviour is chosen by the prompt's first word."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()  # prompt -> requests received
        self.headers: list[dict] = []
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.pair = threading.Barrier(2, timeout=TIMEOUT)
        self.retried = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["messages"][0]["content"]
                with server.lock:
                    server.seen[text] += 1
                    count = server.seen[text]
                    server.headers.append(dict(self.headers))
                    server.bodies.append(body)
                try:
                    server.respond(self, self.path, text, count)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout case)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def send(handler, status: int, payload: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def respond(self, handler, path: str, text: str, count: int) -> None:
        kind = text.split()[0]
        if path != "/v1/chat/completions":
            return self.send(handler, 404, b"no such route")
        if kind == "flaky" and count == 1:
            return self.send(handler, 503, b"overloaded")
        if kind == "slow" and count == 1:
            self.retried.wait(TIMEOUT)  # never answered in time: held until the client asks again
            return
        if kind == "slow":
            self.retried.set()
        if kind == "garbage":
            return self.send(handler, 200, b"<html>gateway says hi</html>")
        if kind == "empty":
            return self.send(handler, 200, json.dumps({"choices": []}).encode())
        if kind == "denied":
            return self.send(handler, 401, b'{"error": "bad key"}')
        if kind == "pair":
            self.pair.wait()  # passes only when two requests are in flight at once
        answer = "Answer: Yes" if '"Answer: Yes"' in text else f"Answer: north ({text[:20]})"
        self.send(handler, 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]}).encode())

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    chat = ChatServer()
    yield chat
    chat.close()


def endpoint(server, **extra) -> Endpoint:
    return Endpoint(Endpoint.chat_url(server.url + "/v1"), "test-model", timeout=TIMEOUT, **extra)


def read_predictions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


PROMPTS = [Prompt("a", "plain one"), Prompt("b", "flaky two"), Prompt("c", "plain three"),
           Prompt("d", "garbage four"), Prompt("e", "empty five"), Prompt("f", "plain six")]


def test_answers_with_retries_and_counted_failures(server, tmp_path):
    out, cache = tmp_path / "preds.jsonl", tmp_path / "cache.jsonl"
    report = run_model(PROMPTS, endpoint(server, api_key="sekrit"), out, cache, concurrency=3, retry=FAST,
                       progress=False)
    predictions = read_predictions(out)
    assert [p["id"] for p in predictions] == list("abcdef")
    by_id = {p["id"]: p for p in predictions}
    for answered in "abcf":
        assert by_id[answered]["prediction"].startswith("Answer: north") and "error" not in by_id[answered]
    assert by_id["d"]["prediction"] is None and "not a chat completion" in by_id["d"]["error"]
    assert by_id["e"]["prediction"] is None and "not a chat completion" in by_id["e"]["error"]
    assert (report.prompts, report.cached, report.asked, report.failed) == (6, 0, 4, 2)
    assert server.seen["flaky two"] == 2
    assert server.seen["garbage four"] == FAST.attempts
    assert {h["Authorization"] for h in server.headers} == {"Bearer sekrit"}
    assert {b["model"] for b in server.bodies} == {"test-model"}


def test_a_rerun_asks_only_what_is_not_cached_and_survives_a_cut_cache_line(server, tmp_path):
    out, cache = tmp_path / "preds.jsonl", tmp_path / "cache.jsonl"
    run_model(PROMPTS[:2], endpoint(server), out, cache, retry=FAST, progress=False)
    first = dict(server.seen)
    with open(cache, "a") as file:
        file.write('{"model": "test-model", "prompt_sha')  # a run killed mid-write
    report = run_model(PROMPTS[:3], endpoint(server), out, cache, retry=FAST, progress=False)
    assert (report.cached, report.asked) == (2, 1)
    assert {k: v for k, v in server.seen.items() if k != "plain three"} == first
    assert len(read_predictions(out)) == 3
    assert len(AnswerCache(cache).answers) == 3  # the new answer went on a line of its own
    other_model = Endpoint(endpoint(server).url, "another-model", timeout=TIMEOUT)
    assert run_model(PROMPTS[:1], other_model, out, cache, retry=FAST, progress=False).asked == 1


def test_a_request_that_times_out_is_asked_again(server, tmp_path):
    held = Endpoint(endpoint(server).url, "test-model", timeout=HELD_TIMEOUT)
    report = run_model([Prompt("s", "slow one")], held, tmp_path / "p.jsonl", tmp_path / "c.jsonl",
                       retry=Retry(attempts=10, backoff=0.01), progress=False)
    assert (report.asked, report.failed) == (1, 0)
    assert read_predictions(tmp_path / "p.jsonl")[0]["prediction"].startswith("Answer: north")
    assert server.seen["slow one"] >= 2  # the first request was never answered


def test_a_damaged_cache_is_refused(tmp_path):
    cache = tmp_path / "cache.jsonl"
    cache.write_text('not json\n{"model": "m", "prompt_sha256": "x", "answer": "Yes"}\n')
    with pytest.raises(RoomspaceError, match="cache.jsonl:1"):
        AnswerCache(cache)


def test_requests_run_concurrently(server, tmp_path):
    prompts = [Prompt("x", "pair one"), Prompt("y", "pair two")]
    report = run_model(prompts, endpoint(server), tmp_path / "p.jsonl", tmp_path / "c.jsonl", concurrency=2,
                       retry=Retry(attempts=1), progress=False)
    assert report.asked == 2 and report.failed == 0


def test_a_refusal_stops_the_run_and_keeps_what_was_answered(server, tmp_path):
    cache = tmp_path / "c.jsonl"
    run_model(PROMPTS[:1], endpoint(server), tmp_path / "p.jsonl", cache, retry=FAST, progress=False)
    with pytest.raises(RoomspaceError, match="refused the request: HTTP 401"):
        run_model([Prompt("z", "denied")], endpoint(server), tmp_path / "p.jsonl", cache, retry=FAST, progress=False)
    assert server.seen["denied"] == 1  # not retried
    assert len(AnswerCache(cache).answers) == 1


def test_an_unreachable_endpoint_is_an_error(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    dead = Endpoint(f"http://127.0.0.1:{port}/v1/chat/completions", "m", timeout=TIMEOUT)
    with pytest.raises(RoomspaceError, match="cannot connect"):
        run_model(PROMPTS[:1], dead, tmp_path / "p.jsonl", tmp_path / "c.jsonl", retry=FAST, progress=False)


def test_chat_url_accepts_the_usual_base_urls():
    full = "http://h:1/v1/chat/completions"
    assert Endpoint.chat_url("http://h:1") == Endpoint.chat_url("http://h:1/v1/") == Endpoint.chat_url(full) == full


def test_run_model_then_score_from_the_command_line(server, scenes, tmp_path, capsys, monkeypatch):
    built = tmp_path / "roomspace-run-test"
    build(BuildPlan(built.name, SCENE_SEED, 2, parse_configs("n3_m2_d81")), scenes, built, workers=1, progress=False)
    preds = tmp_path / "preds.jsonl"
    argv = ["run-model", str(built), "--base-url", server.url, "--model", "test-model", "--out", str(preds),
            "--concurrency", "4", "--api-key-env", "ROOMSPACE_TEST_KEY", "--quiet", "--style", "guided"]
    assert main(argv) == 1
    assert "ROOMSPACE_TEST_KEY" in capsys.readouterr().err
    monkeypatch.setenv("ROOMSPACE_TEST_KEY", "k")
    assert main(argv) == 0
    assert f"{2 * ROWS_PER_ROOM} prompts, 0 answered from" in capsys.readouterr().out
    assert main(argv) == 0
    assert f"{2 * ROWS_PER_ROOM} answered from" in capsys.readouterr().out
    assert main(["score", str(built), "--predictions", str(preds)]) == 0
    table = capsys.readouterr().out
    assert f"| preds | {2 * ROWS_PER_ROOM} | 0 | 0 |" in table  # every item answered and parsed: YN "Yes", FR "north"
