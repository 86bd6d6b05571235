"""Asking an OpenAI-compatible chat endpoint (POST .../v1/chat/completions) every prompt, for `score`.

Each request carries the prompt's messages: a string for a text row, an image part (a PNG data URI)
and a text part for a vision row, and `max_tokens` (DEFAULT_MAX_TOKENS unless told otherwise; an
endpoint without a limit generates up to its whole context, and a model caught in a repetition
loop takes minutes an answer). Prompts are streamed: only a bounded number of them (four per
request slot) are held at once, so a 10K-room run with images holds no more prompts than a small
one; what grows with the run is its ids.

Predictions (pipeline.evaluate.predictions) are written as they come: the header (what asked, how
and what) first, then each answer, or each prompt that failed, appended the moment it is known,
cached answers first as the stream reaches them. An interrupted run leaves a file `score` reads; a
finished one sorts it into prompt order, then sample order.

Requests run on a thread pool. 5xx, 408 and 429 answers, timeouts, dropped connections and
garbage (a body that is not a chat completion, or one whose content is null without a length stop) are retried with
exponential backoff; a prompt that still fails is written with "prediction": null and its error,
which `score` counts as no answer, and counted on the progress bar as it happens. Any other 4xx (a
wrong key or model name), an endpoint that cannot be reached at all, or GIVE_UP_AFTER prompts in a
row failing every attempt (an endpoint answering only 5xx or garbage) stops the run with the
endpoint's last error: every other prompt would fail the same way. Where the caller runs the
server itself (bench/eval_tiny.py, pipeline.evaluate.server), `watch` is asked after every failed
request: a server process that has exited stops the run at once, saying how it ended and what its
log says last, rather than retrying an endpoint that is gone. An empty
answer is an answer (unparseable to `score`); one the endpoint stopped at its length limit
(finish_reason "length") is kept as cut and marked "truncated", a null one as "" (a reasoning
model that spent its budget before answering). The completion tokens the endpoint counts
(`usage.completion_tokens`) are kept with each answer as "tokens", for the length distribution
`score` reports.

A prompt the endpoint refuses as longer than the model's context (an HTTP 400 naming the context:
CONTEXT_OVERFLOW) is not retried and does not count toward stopping the run: its line is a null
prediction whose error says so, counted apart (`RunReport.over_context`).

With `samples` K above 1 every prompt is asked K times (for the spread over rounds and for
self-consistency), which only makes sense when sampling: K > 1 at temperature 0 is refused.

Every answer is appended to a JSON-lines cache keyed by (model, prompt hash, sample) as soon as it
arrives, so an interrupted run, re-run with the same command, asks only what is missing. The hash
covers everything sent but the model name, the image included.

A run that stops (Ctrl-C, SIGTERM, or an error that ends it) closes the connections of its
requests in flight at once (`Connections`) rather than waiting for their answers: a server that
never answers would otherwise hold it until the request timeout. Those requests leave no line; the
answers that came before are whole lines in the predictions file and the cache, and a re-run asks
the rest.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from tqdm import tqdm

from pipeline.errors import RoomspaceError
from pipeline.evaluate.predictions import PredictionsWriter, RunHeader
from pipeline.evaluate.prompts import Prompt
from pipeline.evaluate.server import ServerDied
from pipeline.files import write_atomic

RETRIED_STATUS = frozenset({408, 429})  # besides every 5xx
# Prompts in a row (no answer between them) that fail every attempt before the run stops. A prompt fails
# only after all its attempts (5, about 15 s of backoff, by default), so on an endpoint that works, failures
# are rare and isolated; 10 in a row, 50 requests without one answer, is an endpoint that answers only
# 5xx or garbage. Stopping there takes about a minute rather than hours (3,400 prompts x 5 attempts), and
# the answers already given are in the cache, so a re-run once the server is fixed resumes.
GIVE_UP_AFTER = 10
PROMPTS_PER_SLOT = 4  # requests queued per slot: a reserve that keeps every slot busy while the next shard is read
# Completion tokens asked for at most, unless told otherwise: the lm-evaluation-harness tasks' max_gen_toks
# (lm_eval_tasks/_roomspace_common.yaml), so both harnesses cut an answer at the same length. Reasoning
# through a five-object story takes a few hundred tokens; a model that loops repeats itself up to here.
DEFAULT_MAX_TOKENS = 2048


# How endpoints say a prompt and its answer's budget do not fit the model's context (an HTTP 400): OpenAI and
# llama-cpp-python ("context_length_exceeded", "maximum context length"), vLLM ("maximum context length"),
# llama.cpp's server ("exceeds the available context size"). No retry can succeed: the prompt is counted apart.
CONTEXT_OVERFLOW = ("context_length_exceeded", "maximum context length", "context window", "context size")


class EndpointFailure(Exception):
    """One request failed in a way worth retrying; the message says how."""


class ContextOverflow(EndpointFailure):
    """The prompt, with the answer's token budget, exceeds the model's context: asking again cannot help."""


class Answer(NamedTuple):
    text: str
    truncated: bool  # the endpoint stopped at its length limit: `text` is cut short
    tokens: int | None = None  # completion tokens, as the endpoint counted them (usage.completion_tokens)


@dataclass(frozen=True)
class Endpoint:
    url: str  # the full chat-completions address
    model: str
    api_key: str | None = None
    timeout: float = 120.0  # seconds per request
    temperature: float = 0.0
    max_tokens: int | None = DEFAULT_MAX_TOKENS  # None: send none (the endpoint's own limit)

    @staticmethod
    def chat_url(base_url: str) -> str:
        """"http://host:8000", ".../v1" or the full ".../v1/chat/completions" -> the full address."""
        base = base_url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")

    def body(self, prompt: Prompt) -> dict:
        body = {"model": self.model, "messages": prompt.messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def prompt_hash(self, prompt: Prompt) -> str:
        """sha256 of everything sent but the model name: the messages (image too) and the sampling settings."""
        sent = {k: v for k, v in self.body(prompt).items() if k != "model"}
        return hashlib.sha256(json.dumps(sent, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Retry:
    attempts: int = 5  # requests per prompt at most
    backoff: float = 1.0  # seconds before the second request, doubled for each one after
    give_up_after: int = GIVE_UP_AFTER  # failed prompts in a row that stop the run


class Connections:
    """The sockets of the requests in flight (one per thread), so that a run being stopped ends them
    at once (`abort`): a request blocked on a server that never answers would otherwise hold the run
    until its timeout, the thread pool waiting for it. `open` is urlopen with every connection it
    makes registered; after `abort`, a connection made is shut at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sockets: dict[int, socket.socket] = {}  # thread id -> its request's socket
        self.aborted = False
        classes: dict[type, type] = {}

        def tracked(base: type) -> type:
            """`base` (HTTPConnection, HTTPSConnection) registering its socket once connected."""
            if base not in classes:
                connections = self

                class Tracked(base):
                    def connect(self) -> None:
                        super().connect()
                        connections._opened(self.sock)

                classes[base] = Tracked
            return classes[base]

        class HTTP(urllib.request.HTTPHandler):
            def do_open(self, http_class, req, **kwargs):
                return super().do_open(tracked(http_class), req, **kwargs)

        class HTTPS(urllib.request.HTTPSHandler):
            def do_open(self, http_class, req, **kwargs):
                return super().do_open(tracked(http_class), req, **kwargs)

        self.opener = urllib.request.build_opener(HTTP(), HTTPS())  # proxies and redirects as urlopen's

    def open(self, request: urllib.request.Request, timeout: float):
        return self.opener.open(request, timeout=timeout)

    def _opened(self, sock: socket.socket) -> None:
        with self.lock:
            if self.aborted:
                _shut(sock)
            else:
                self.sockets[threading.get_ident()] = sock

    def done(self) -> None:
        """The calling thread's request is over (its socket is closed)."""
        with self.lock:
            self.sockets.pop(threading.get_ident(), None)

    def abort(self) -> None:
        """End every request in flight now: the blocked reads return, and no request starts after."""
        with self.lock:
            self.aborted = True
            for sock in self.sockets.values():
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed already


def ask_once(endpoint: Endpoint, prompt: Prompt, connections: Connections | None = None) -> Answer:
    """The answer of one request; EndpointFailure when worth retrying, RoomspaceError when not.
    `connections` (a run's) lets the run end the request when it stops."""
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(endpoint.url, data=json.dumps(endpoint.body(prompt)).encode(),
                                     headers=headers, method="POST")
    try:
        with (urllib.request.urlopen if connections is None else connections.open)(
                request, timeout=endpoint.timeout) as response:
            payload = response.read()
    except urllib.error.HTTPError as error:
        body = _read(error)
        detail = f"HTTP {error.code} {error.reason}: {_snippet(body)}"
        if error.code == 400 and any(words in body.decode("utf-8", "replace").lower() for words in CONTEXT_OVERFLOW):
            raise ContextOverflow(detail) from None
        if error.code >= 500 or error.code in RETRIED_STATUS:
            raise EndpointFailure(detail) from None
        raise RoomspaceError(f"{endpoint.url} refused the request: {detail}") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise EndpointFailure(f"no answer within {endpoint.timeout:g} s") from None
        raise EndpointFailure(f"cannot connect ({error.reason})") from None
    except TimeoutError:
        raise EndpointFailure(f"no answer within {endpoint.timeout:g} s") from None
    except (http.client.HTTPException, ConnectionError) as error:
        raise EndpointFailure(f"connection broken ({type(error).__name__})") from None
    finally:
        if connections is not None:
            connections.done()
    try:
        reply = json.loads(payload)
        choice = reply["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, LookupError, TypeError):
        raise EndpointFailure(f"not a chat completion: {_snippet(payload)}") from None
    truncated = choice.get("finish_reason") == "length"
    if content is None and truncated:
        content = ""  # a reasoning model that spent its whole budget thinking: cut short, not garbage
    if not isinstance(content, str):
        raise EndpointFailure(f"not a chat completion: {_snippet(payload)}")
    return Answer(content, truncated, _completion_tokens(reply))


def _completion_tokens(reply: dict) -> int | None:
    """usage.completion_tokens where the endpoint counts them (vLLM, Ollama, llama.cpp and hosted APIs do)."""
    usage = reply.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return tokens if type(tokens) is int and tokens >= 0 else None


def _read(error: urllib.error.HTTPError) -> bytes:
    """An error reply's body (the server's own words: "CUDA out of memory", "model not found")."""
    try:
        return error.read()
    except (OSError, http.client.HTTPException):
        return b"(no body)"


def _short(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def _snippet(payload: bytes) -> str:
    text = payload.decode("utf-8", "replace").strip().replace("\n", " ")
    return repr(text[:80] + ("..." if len(text) > 80 else ""))


def ask(endpoint: Endpoint, prompt: Prompt, retry: Retry, stop: threading.Event,
        watch: Callable[[], None] | None = None, connections: Connections | None = None) -> Answer:
    """The answer, after up to `retry.attempts` requests; the last EndpointFailure if none succeeds.
    A connection that is refused on every attempt is the endpoint being down: RoomspaceError. After
    each failed request `watch` (if any) raises where the server behind the endpoint has died."""
    for attempt in range(retry.attempts):
        try:
            return ask_once(endpoint, prompt, connections)
        except ContextOverflow:
            raise
        except EndpointFailure as error:
            failure = error
            if watch is not None:
                watch()
        if attempt + 1 < retry.attempts and stop.wait(retry.backoff * 2 ** attempt):
            break  # the run is being stopped: give up at once
    if str(failure).startswith("cannot connect"):
        raise RoomspaceError(f"{endpoint.url}: {failure} after {retry.attempts} attempts")
    raise failure


class AnswerCache:
    """Answers on disk, one JSON line each: {"model", "prompt_sha256", "sample", "answer", "truncated"[, "tokens"]},
    appended as they come. Lines written before samples and truncation were recorded lack those two
    keys: they are sample 0 and whole; lines without "tokens" have no count."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[tuple[str, str, int], Answer] = {}
        self.lock = threading.Lock()
        data = path.read_bytes() if path.exists() else b""
        if not data.endswith(b"\n") and data:
            # A run killed mid-write leaves its last line cut short, perhaps inside a character: drop it.
            data = data[:data.rfind(b"\n") + 1]
            write_atomic(path, lambda target: target.write_bytes(data))
        # Only "\n" ends a line: an answer may hold U+2028 and the like, which json.dumps leaves raw.
        for number, line in enumerate(data.split(b"\n")[:-1], 1):
            try:
                record = json.loads(line.decode("utf-8"))
                answer = Answer(record["answer"], record.get("truncated", False), record.get("tokens"))
                if not isinstance(answer.text, str):
                    raise TypeError
                self.answers[record["model"], record["prompt_sha256"], record.get("sample", 0)] = answer
            except (ValueError, KeyError, TypeError, AttributeError):
                raise RoomspaceError(f"{path}:{number}: not an answer-cache line; remove the file") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "a", encoding="utf-8")

    def get(self, model: str, prompt_hash: str, sample: int = 0) -> Answer | None:
        return self.answers.get((model, prompt_hash, sample))

    def put(self, model: str, prompt_hash: str, sample: int, answer: Answer) -> None:
        record = {"model": model, "prompt_sha256": prompt_hash, "sample": sample, "answer": answer.text,
                  "truncated": answer.truncated}
        if answer.tokens is not None:
            record["tokens"] = answer.tokens
        line = json.dumps(record, ensure_ascii=False)
        with self.lock:
            self.answers[model, prompt_hash, sample] = answer
            self.file.write(line + "\n")
            self.file.flush()

    def close(self) -> None:
        self.file.close()


@dataclass(frozen=True)
class RunReport:
    prompts: int
    images: int  # prompts that carried an image
    samples: int  # answers asked per prompt
    cached: int  # answers taken from the cache, without a request
    asked: int  # answers given by the endpoint now
    failed: int  # answers that never came (but for over_context)
    truncated: int  # answers, cached or new, cut at the endpoint's length limit
    first_error: str | None
    over_context: int = 0  # prompts the endpoint refused as longer than the model's context: null predictions
    # answers of a prompt identical (same text and image) to one of another id answered earlier in this run:
    # taken from what this run asked, not from an earlier run's cache
    shared: int = 0


def check_samples(samples: int, temperature: float) -> None:
    """Refuse a sample count that cannot give distinct answers."""
    if samples < 1:
        raise RoomspaceError(f"samples must be at least 1, got {samples}")
    if samples > 1 and temperature == 0:
        raise RoomspaceError(f"{samples} samples at temperature 0 would be {samples} copies of one answer; "
                             "set --temperature (e.g. 0.7)")


def run_model(prompts: Iterable[Prompt], endpoint: Endpoint, out: Path, cache_path: Path, concurrency: int = 4,
              retry: Retry = Retry(), progress: bool = True, samples: int = 1, count: int | None = None,
              header: RunHeader | None = None, watch: Callable[[], None] | None = None) -> RunReport:
    """Answer every prompt `samples` times (cache first), appending each answer to `out` as it comes
    (after `header`), then sort `out` into prompt order, then sample order (pipeline.evaluate.predictions).
    `count` is how many prompts a stream will give, for the progress bar. `watch`, called after a
    failed request, raises (pipeline.evaluate.server.ServerDied) when the server has died: the run stops."""
    check_samples(samples, endpoint.temperature)
    cache = AnswerCache(cache_path)
    ids: list[str] = []
    seen: set[str] = set()
    errors: dict[tuple[int, int], str] = {}  # (prompt index, sample) -> the last error
    images = cached = shared = answered = truncated = over_context = 0
    asked_now: set[tuple[str, int]] = set()  # (prompt hash, sample) answered by the endpoint in this run
    stop = threading.Event()
    finished = threading.Event()  # a request finished (`_settle`)
    pending: set[Future] = set()
    in_a_row = 0  # prompts failed since the last answer, in the order they finished
    lock = threading.Lock()
    connections = Connections()
    written = PredictionsWriter(out, header)

    def keep(prompt_id: str, sample: int, answer: Answer) -> None:
        nonlocal answered, truncated
        written.add(prediction(prompt_id, endpoint.model, sample, samples, answer))
        with lock:
            answered += 1
            truncated += answer.truncated
            bar.update()

    def job(index: int, prompt: Prompt, prompt_hash: str, sample: int) -> None:
        nonlocal in_a_row, over_context
        if stop.is_set():
            return  # queued before the run gave up
        try:
            answer = ask(endpoint, prompt, retry, stop, watch, connections)
        except ServerDied as died:
            stop.set()  # the other requests in flight give up at their next backoff
            raise RoomspaceError(f"{endpoint.url}: {died}\n{answered} answers of this run are kept in {cache.path} "
                                 f"and {out}; re-run the same command once the server runs again, and only what is "
                                 "missing is asked") from None
        except ContextOverflow as error:  # the endpoint works: this prompt is too long for the model
            written.add(prediction(prompt.id, endpoint.model, sample, samples, None, f"over the context: {error}"))
            with lock:
                over_context += 1
                bar.set_postfix_str(f"{over_context} over the context", refresh=False)
                bar.update()
            return
        except EndpointFailure as error:
            if connections.aborted:
                return  # its request was ended by the run stopping: no line; a re-run asks it
            written.add(prediction(prompt.id, endpoint.model, sample, samples, None, str(error)))
            with lock:
                errors[index, sample] = str(error)
                in_a_row += 1
                bar.set_postfix_str(f"{len(errors)} failed, last: {_short(str(error))}", refresh=False)
                bar.update()
                if in_a_row >= retry.give_up_after and not stop.is_set():
                    stop.set()  # the requests in flight give up at their next backoff
                    raise RoomspaceError(
                        f"{endpoint.url}: stopped after {in_a_row} prompts in a row failed {retry.attempts} attempts "
                        f"each (last: {error}); {answered} answers of this run are kept in {cache.path} and {out}; "
                        "re-run the same command once the endpoint answers, and only what is missing is asked"
                    ) from None
            return
        with lock:
            asked_now.add((prompt_hash, sample))
        cache.put(endpoint.model, prompt_hash, sample, answer)
        with lock:
            in_a_row = 0
        keep(prompt.id, sample, answer)

    count = len(prompts) if isinstance(prompts, Sized) else count
    total = None if count is None else count * samples
    try:
        with tqdm(total=total, unit="answer", desc=endpoint.model, disable=not progress) as bar, \
                ThreadPoolExecutor(max_workers=concurrency) as pool:
            try:
                for index, prompt in enumerate(prompts):
                    if prompt.id in seen:
                        raise RoomspaceError(f"two prompts share the id {prompt.id}")
                    seen.add(prompt.id)
                    ids.append(prompt.id)
                    images += prompt.image is not None
                    prompt_hash = endpoint.prompt_hash(prompt)
                    for sample in range(samples):
                        answer = cache.get(endpoint.model, prompt_hash, sample)
                        if answer is not None:
                            with lock:
                                if (prompt_hash, sample) in asked_now:
                                    shared += 1
                                else:
                                    cached += 1
                            keep(prompt.id, sample, answer)
                            continue
                        _settle(pending, PROMPTS_PER_SLOT * concurrency - 1, finished)
                        future = pool.submit(job, index, prompt, prompt_hash, sample)
                        future.add_done_callback(lambda _: finished.set())
                        pending.add(future)
                _settle(pending, 0, finished)
            except BaseException:
                stop.set()
                connections.abort()  # the requests in flight end now, not at their timeout
                raise
            finally:
                stop.set()
                pool.shutdown(cancel_futures=True)
                cache.close()
    except BaseException as stopping:
        written.close()  # what came is kept, in the order it came
        if isinstance(stopping, KeyboardInterrupt):  # Ctrl-C or SIGTERM: the command says what is kept
            stopping.kept = f"{answered} answers of this run are kept in {out} and {cache_path}"
        raise
    written.finish(ids)
    first_error = errors[min(errors)] if errors else None
    return RunReport(len(ids), images, samples, cached, answered - cached - shared, len(errors), truncated,
                     first_error, over_context, shared)


def prediction(prompt_id: str, model: str, sample: int, samples: int, answer: Answer | None,
               error: str | None = None) -> dict:
    """One predictions line: {"id", "prediction", "model"[, "sample"][, "truncated"][, "tokens"][, "error"]}."""
    record = {"id": prompt_id, "prediction": None if answer is None else answer.text, "model": model}
    if samples > 1:
        record["sample"] = sample
    if answer is not None and answer.truncated:
        record["truncated"] = True
    if answer is not None and answer.tokens is not None:
        record["tokens"] = answer.tokens
    if error is not None:
        record["error"] = error
    return record


def _settle(pending: set[Future], most: int, finished: threading.Event) -> None:
    """Wait until at most `most` requests are pending; a finished one's RoomspaceError stops the run here.

    `finished` is set as each request finishes. Waiting on it, not on concurrent.futures.wait, is what
    lets Ctrl-C stop a run: wait() takes every pending future's lock in a Python loop, and a
    KeyboardInterrupt raised in that loop left some taken, so the requests ending them blocked for
    ever and the run with them (a hang under load, issue 43's test)."""
    while True:
        finished.clear()  # before looking: a request finishing after the look sets it again
        done = {future for future in pending if future.done()}
        pending -= done
        for future in done:
            future.result()
        if len(pending) <= most:
            return
        finished.wait()
