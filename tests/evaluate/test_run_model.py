"""run-model against a chat endpoint served by the test on 127.0.0.1: answers, 5xx, timeouts, garbage,
refusals, concurrency, streaming, images, truncated answers, samples, and the answer cache that
lets an interrupted run resume."""

import base64
import json
import re
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import SCENE_SEED, linked_scenes

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.layout import questions
from pipeline.dataset.manifest import read_manifest, shard_files
from pipeline.errors import RoomspaceError
from pipeline.evaluate.model_runner import GIVE_UP_AFTER, PROMPTS_PER_SLOT, AnswerCache, Endpoint, Retry, run_model
from pipeline.evaluate.prompts import Prompt
from pipeline.evaluate.rows import open_rows
from pipeline.text.configs import parse_configs
from pipeline.text.items import ROWS_PER_ROOM

FAST = Retry(attempts=3, backoff=0.01)
VISION_BASE = "n5_m4_d81"  # of SCENE_SEED's rooms 0 and 1
VISION = f"vision_{VISION_BASE}"
VISION_AGENT = f"vision_agent_{VISION_BASE}"
TIMEOUT = 60.0  # seconds: no answer of this server takes long, except the one held back on purpose
HELD_TIMEOUT = 0.2  # seconds: the timeout of the test that needs one; the held answer never comes


class ChatServer:
    """An OpenAI-style /v1/chat/completions whose behaviour is chosen by the prompt's first word."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()  # prompt text -> requests received
        self.headers: list[dict] = []
        self.bodies: list[dict] = []
        self.images: list[tuple[str, bytes]] = []  # (text, PNG) of every request that carried an image
        self.cut_everything = False  # answer every request as if stopped at the length limit
        self.fixed = False  # "broken" prompts are answered like plain ones
        self.lock = threading.Lock()
        self.pair = threading.Barrier(2, timeout=TIMEOUT)
        self.retried = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text, image = server.parts(body["messages"][0]["content"])
                with server.lock:
                    if image is not None:
                        server.images.append((text, image))
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
    def parts(content) -> tuple[str, bytes | None]:
        """The text and the decoded image of a user turn: a string, or [image_url part, text part]."""
        if isinstance(content, str):
            return content, None
        (image_part, text_part) = content
        assert image_part["type"] == "image_url" and text_part["type"] == "text"
        head, data = image_part["image_url"]["url"].split(",", 1)
        assert head == "data:image/png;base64"
        return text_part["text"], base64.b64decode(data, validate=True)

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
        if kind == "broken" and not self.fixed:
            return self.send(handler, 500, b'{"error": "CUDA out of memory"}')
        if kind == "garbage":
            return self.send(handler, 200, b"<html>gateway says hi</html>")
        if kind == "empty":
            return self.send(handler, 200, json.dumps({"choices": []}).encode())
        if kind == "null":
            return self.reply(handler, None)
        if kind == "thinking":  # a reasoning model out of budget before its answer
            return self.reply(handler, None, "length")
        if kind == "blank":
            return self.reply(handler, "")
        if kind == "odd":
            return self.reply(handler, "Answer: north\u2028then\u2029more\x85end\r\nlast")
        if kind == "long":
            return self.reply(handler, "Let me think step by st", "length")
        if kind == "denied":
            return self.send(handler, 401, b'{"error": "bad key"}')
        if kind == "pair":
            self.pair.wait()  # passes only when two requests are in flight at once
        answer = "Answer: Yes" if '"Answer: Yes"' in text else f"Answer: north ({text[:20]})"
        self.reply(handler, answer, "length" if self.cut_everything else "stop")

    def reply(self, handler, content: str | None, finish_reason: str = "stop") -> None:
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        self.send(handler, 200, json.dumps({"object": "chat.completion", "choices": [choice]}).encode())

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
    """The answers of a predictions file, its header (the command writes one) left out."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1]]
    return [line for line in lines if "roomspace_predictions" not in line]


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


NO_WAIT = Retry(attempts=2, backoff=0.0)  # no time between attempts: these tests do not depend on time


def test_an_endpoint_answering_only_500_stops_early_with_its_last_error(server, tmp_path):
    """It retried every prompt 5 times with backoff (hours for a few thousand prompts) before saying that
    none had an answer; it stops after GIVE_UP_AFTER failed prompts in a row, and a re-run resumes."""
    out, cache = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    prompts = [Prompt("a", "plain one"), Prompt("b", "plain two")] + [Prompt(f"x{k}", f"broken {k}") for k in range(40)]
    with pytest.raises(RoomspaceError) as stopped:
        run_model(prompts, endpoint(server), out, cache, concurrency=1, retry=NO_WAIT, progress=False)
    message = str(stopped.value)
    assert "\n" not in message and f"stopped after {GIVE_UP_AFTER} prompts in a row failed 2 attempts" in message
    assert "HTTP 500" in message and "CUDA out of memory" in message and f"2 answers of this run are kept in {cache}" in message
    broken = sum(count for text, count in server.seen.items() if text.startswith("broken"))
    assert broken == GIVE_UP_AFTER * NO_WAIT.attempts  # one request at a time: not one prompt more
    assert len(AnswerCache(cache).answers) == 2
    kept = read_predictions(out)  # as they came: the two answers, then the prompts that failed
    assert [p["id"] for p in kept[:2]] == ["a", "b"] and all(p["prediction"] for p in kept[:2])
    assert len(kept) == 2 + GIVE_UP_AFTER and all(p["prediction"] is None and "HTTP 500" in p["error"] for p in kept[2:])
    server.fixed = True
    report = run_model(prompts, endpoint(server), out, cache, concurrency=1, retry=NO_WAIT, progress=False)
    assert (report.cached, report.asked, report.failed) == (2, 40, 0)


def test_an_endpoint_answering_only_garbage_stops_and_the_bar_counts_failures(server, tmp_path, capsys):
    concurrency = 3
    prompts = [Prompt(f"g{k}", f"garbage {k}") for k in range(60)]
    with pytest.raises(RoomspaceError, match="prompts in a row failed 2 attempts each .last: not a chat completion"):
        run_model(prompts, endpoint(server), tmp_path / "p.jsonl", tmp_path / "c.jsonl", concurrency=concurrency,
                  retry=NO_WAIT)
    # the requests in flight when it gave up finish; nothing queued behind them is asked
    assert sum(server.seen.values()) <= (GIVE_UP_AFTER + concurrency - 1) * NO_WAIT.attempts
    assert re.search(r"\d+ failed, last: not a chat completion: '<html>", capsys.readouterr().err)


def test_failures_between_answers_do_not_stop_the_run(server, tmp_path, capsys):
    prompts = [Prompt(f"p{k}", f"broken {k}" if k % 2 == 0 else f"plain {k}") for k in range(7)]
    report = run_model(prompts, endpoint(server), tmp_path / "p.jsonl", tmp_path / "c.jsonl", concurrency=1,
                       retry=Retry(attempts=1, backoff=0.0, give_up_after=2))
    assert (report.asked, report.failed) == (3, 4)
    assert "4 failed, last: HTTP 500 Internal Server Error" in capsys.readouterr().err


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
    build(BuildPlan.asked(built.name, SCENE_SEED, 2, parse_configs("n3_m2_d81")), scenes, built, workers=1, progress=False)
    preds = tmp_path / "preds.jsonl"
    argv = ["run-model", str(built), "--base-url", server.url, "--model", "test-model", "--out", str(preds),
            "--concurrency", "4", "--api-key-env", "ROOMSPACE_TEST_KEY", "--quiet", "--style", "paper"]
    assert main(argv) == 1
    assert "ROOMSPACE_TEST_KEY" in capsys.readouterr().err
    monkeypatch.setenv("ROOMSPACE_TEST_KEY", "k")
    assert main(argv) == 0
    assert f"{2 * ROWS_PER_ROOM} prompts (0 with an image), 0 answered from" in capsys.readouterr().out
    assert main(argv) == 0
    assert f"{2 * ROWS_PER_ROOM} answered from" in capsys.readouterr().out
    assert main(["score", str(built), "--predictions", str(preds)]) == 0
    table = capsys.readouterr().out
    # named by the model its predictions record; every item answered and parsed: YN "Yes", FR "north"
    assert f"| test-model | {2 * ROWS_PER_ROOM} | 0 | 0 |" in table


def test_prompts_are_streamed_with_a_bounded_number_in_flight(server, tmp_path):
    concurrency = 2
    ahead = []  # when each prompt is taken: prompts taken before it that the server has not yet been asked

    def prompts():
        for k in range(40):
            with server.lock:
                ahead.append(k - sum(server.seen.values()))
            yield Prompt(f"p{k}", f"plain {k}")

    report = run_model(prompts(), endpoint(server), tmp_path / "p.jsonl", tmp_path / "c.jsonl",
                       concurrency=concurrency, retry=FAST, progress=False)
    assert (report.prompts, report.asked) == (40, 40)
    assert [p["id"] for p in read_predictions(tmp_path / "p.jsonl")] == [f"p{k}" for k in range(40)]
    assert max(ahead) <= PROMPTS_PER_SLOT * concurrency


def test_an_empty_answer_is_an_answer_and_a_null_one_is_retried(server, tmp_path):
    out = tmp_path / "p.jsonl"
    report = run_model([Prompt("g", "blank"), Prompt("h", "null"), Prompt("i", "thinking")], endpoint(server), out,
                       tmp_path / "c.jsonl", retry=FAST, progress=False)
    blank, null, thinking = read_predictions(out)
    assert blank == {"id": "g", "prediction": "", "model": "test-model"}
    assert null["prediction"] is None and "not a chat completion" in null["error"]
    assert thinking == {"id": "i", "prediction": "", "model": "test-model", "truncated": True}
    assert (server.seen["blank"], server.seen["null"], server.seen["thinking"]) == (1, FAST.attempts, 1)
    assert (report.asked, report.failed, report.truncated) == (2, 1, 1)


def test_an_answer_cut_at_the_length_limit_is_kept_and_marked(server, tmp_path):
    out, cache = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    prompts = [Prompt("t", "long one"), Prompt("a", "plain one")]
    for run in range(2):
        report = run_model(prompts, endpoint(server, max_tokens=8), out, cache, retry=FAST, progress=False)
        assert (report.cached, report.truncated) == (2 * run, 1)  # the cache remembers the cut
        cut, whole = read_predictions(out)
        assert cut == {"id": "t", "prediction": "Let me think step by st", "model": "test-model", "truncated": True}
        assert "truncated" not in whole
    assert server.seen["long one"] == 1  # a cut answer is an answer, not retried


def test_the_image_is_part_of_the_prompt_hash(server, tmp_path):
    out, cache = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    reports = [run_model([Prompt("v", "look here", png)], endpoint(server), out, cache, retry=FAST, progress=False)
               for png in (b"png one", b"png two", b"png one")]
    assert [(r.images, r.asked) for r in reports] == [(1, 1), (1, 1), (1, 0)]
    assert server.images == [("look here", b"png one"), ("look here", b"png two")]


def test_samples_ask_each_prompt_k_times_and_share_the_cache(server, tmp_path):
    out, cache = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    prompts = [Prompt("a", "plain one"), Prompt("c", "plain three")]
    warm = endpoint(server, temperature=0.7)
    run_model(prompts, warm, out, cache, retry=FAST, progress=False)
    assert "sample" not in read_predictions(out)[0]
    report = run_model(prompts, warm, out, cache, retry=FAST, progress=False, samples=3)
    assert (report.prompts, report.samples, report.cached, report.asked) == (2, 3, 2, 4)  # sample 0 was there
    assert [(p["id"], p["sample"]) for p in read_predictions(out)] == [
        ("a", 0), ("a", 1), ("a", 2), ("c", 0), ("c", 1), ("c", 2)]
    assert server.seen == Counter({"plain one": 3, "plain three": 3})
    again = run_model(prompts, warm, out, cache, retry=FAST, progress=False, samples=3)
    assert (again.cached, again.asked) == (6, 0) and sum(server.seen.values()) == 6
    with pytest.raises(RoomspaceError, match="set --temperature"):
        run_model(prompts, endpoint(server), out, cache, retry=FAST, progress=False, samples=2)


def test_samples_at_temperature_zero_are_refused_by_the_command(tmp_path, capsys):
    argv = ["run-model", str(tmp_path / "not-read"), "--base-url", "http://127.0.0.1:9", "--model", "m",
            "--out", str(tmp_path / "p.jsonl"), "--samples", "2"]
    assert main(argv) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "set --temperature" in error


def test_the_cache_keeps_answers_with_line_separators_and_reads_old_lines(server, tmp_path):
    out, cache = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    answer = "Answer: north\u2028then\u2029more\x85end\r\nlast"
    for run in range(2):
        report = run_model([Prompt("o", "odd one")], endpoint(server), out, cache, retry=FAST, progress=False)
        assert (report.cached, report.asked) == (run, 1 - run)
        assert read_predictions(out)[0]["prediction"] == answer
    assert server.seen["odd one"] == 1
    assert cache.read_bytes().count(b"\n") == 1
    old = Prompt("q", "plain old")  # a line written before samples and truncation were recorded
    with open(cache, "a", encoding="utf-8") as file:
        file.write(json.dumps({"model": "test-model", "prompt_sha256": endpoint(server).prompt_hash(old),
                               "answer": "Answer: Yes"}) + "\n")
    report = run_model([old], endpoint(server), out, cache, retry=FAST, progress=False)
    assert (report.cached, report.asked, report.truncated) == (1, 0, 0) and "plain old" not in server.seen


@pytest.fixture(scope="module")
def vision_build(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vision") / "roomspace-vision-test"
    configs = parse_configs(VISION_BASE)
    own_scenes = linked_scenes(scenes, tmp_path_factory.mktemp("vision-scenes"))  # the train house is sampled there
    build(BuildPlan.asked(out.name, SCENE_SEED, 2, configs, {"vision": configs, "agent": configs}, train_rooms=1), own_scenes, out,
          workers=1, progress=False)
    return out


@pytest.mark.parametrize("config, split", [(VISION, "test"), (VISION_AGENT, "test"), (VISION, "train")])
def test_vision_rows_reach_the_model_with_their_images(server, vision_build, config, split, tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    argv = ["run-model", str(vision_build), "--config", config, "--split", split, "--base-url", server.url,
            "--model", "test-model", "--out", str(preds), "--quiet"]
    assert main(argv) == 0
    files = shard_files(vision_build, read_manifest(vision_build), config, split)  # shared by the vision kinds
    columns = ["id", "setting", "modality", "prompt", "image"]
    rows = list(open_rows(vision_build, split).rows([config], columns))
    assert files and rows
    stored = [row for path in files for table in questions(pq.ParquetFile(path), columns, config=config)
              for row in table.to_pylist()]
    assert stored == rows  # each row as its file holds it: vision_agent's on the plan and door view too
    assert len(server.bodies) == len(rows)
    pictured = [row for row in rows if row["image"] is not None]
    assert pictured and all((row["image"] is None) == (row["modality"] == "text") for row in rows)
    if config == VISION:  # its pair questions are asked from the image alone and in words alone too
        assert any(row["setting"] == "none" for row in rows) and len(pictured) < len(rows)
    assert Counter(server.images) == Counter((row["prompt"], row["image"]["bytes"]) for row in pictured)
    assert [p["id"] for p in read_predictions(preds)] == [row["id"] for row in rows]
    assert f"{len(rows)} prompts ({len(pictured)} with an image), 0 answered from" in capsys.readouterr().out


def test_the_command_counts_truncated_answers(server, vision_build, tmp_path, capsys):
    server.cut_everything = True
    preds = tmp_path / "preds.jsonl"
    argv = ["run-model", str(vision_build), "--config", VISION_BASE, "--base-url", server.url, "--model", "test-model",
            "--out", str(preds), "--max-tokens", "8", "--quiet"]
    for run in range(2):
        assert main(argv) == 0
        predictions = read_predictions(preds)
        assert predictions and all(p["truncated"] is True for p in predictions)
        summary = capsys.readouterr().out
        assert f"{len(predictions) if run else 0} answered from" in summary
        assert f"0 failed, {len(predictions)} truncated at the length limit" in summary


def test_a_first_run_counts_identical_prompts_apart_from_the_cache(server, tmp_path):
    """Issue 43: a first run reported "2 answered from ...cache.jsonl" before any cache existed: prompts of
    other ids but the same text were answered from what this run had asked. They are counted as such."""
    others = [Prompt(f"x{k}", f"plain filler {k}") for k in range(PROMPTS_PER_SLOT + 2)]
    prompts = [Prompt("a", "plain same"), *others, Prompt("a2", "plain same")]
    cache = tmp_path / "c.jsonl"
    report = run_model(prompts, endpoint(server), tmp_path / "p.jsonl", cache, concurrency=1, retry=FAST,
                       progress=False)
    assert (report.cached, report.shared, report.asked) == (0, 1, len(prompts) - 1)
    again = run_model(prompts, endpoint(server), tmp_path / "p2.jsonl", cache, concurrency=1, retry=FAST,
                      progress=False)
    assert (again.cached, again.shared, again.asked) == (len(prompts), 0, 0)
