"""Asking an OpenAI-compatible chat endpoint (POST .../v1/chat/completions) every prompt, for `score`.

Requests run on a thread pool. 5xx, 408 and 429 answers, timeouts, dropped connections and
garbage (a body that is not a chat completion) are retried with exponential backoff; a prompt
that still fails is written with "prediction": null and its error, which `score` counts as no
answer. Any other 4xx (a wrong key or model name), or an endpoint that cannot be reached at all,
stops the run: every other prompt would fail the same way.

Every answer is appended to a JSON-lines cache keyed by (model, prompt hash) as soon as it
arrives, so an interrupted run, re-run with the same command, asks only what is missing.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from pipeline.errors import RoomspaceError
from pipeline.evaluate.prompts import Prompt
from pipeline.files import write_atomic

RETRIED_STATUS = frozenset({408, 429})  # besides every 5xx


class EndpointFailure(Exception):
    """One request failed in a way worth retrying; the message says how."""


@dataclass(frozen=True)
class Endpoint:
    url: str  # the full chat-completions address
    model: str
    api_key: str | None = None
    timeout: float = 120.0  # seconds per request
    temperature: float = 0.0
    max_tokens: int | None = None

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
        """sha256 of everything sent but the model name: the messages and the sampling settings."""
        sent = {k: v for k, v in self.body(prompt).items() if k != "model"}
        return hashlib.sha256(json.dumps(sent, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Retry:
    attempts: int = 5  # requests per prompt at most
    backoff: float = 1.0  # seconds before the second request, doubled for each one after


def ask_once(endpoint: Endpoint, prompt: Prompt) -> str:
    """The answer text of one request; EndpointFailure when worth retrying, RoomspaceError when not."""
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(endpoint.url, data=json.dumps(endpoint.body(prompt)).encode(),
                                     headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=endpoint.timeout) as response:
            payload = response.read()
    except urllib.error.HTTPError as error:
        detail = f"HTTP {error.code} {error.reason}"
        if error.code >= 500 or error.code in RETRIED_STATUS:
            raise EndpointFailure(detail) from None
        raise RoomspaceError(f"{endpoint.url} refused the request: {detail}: {_snippet(error.read())}") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise EndpointFailure(f"no answer within {endpoint.timeout:g} s") from None
        raise EndpointFailure(f"cannot connect ({error.reason})") from None
    except TimeoutError:
        raise EndpointFailure(f"no answer within {endpoint.timeout:g} s") from None
    except (http.client.HTTPException, ConnectionError) as error:
        raise EndpointFailure(f"connection broken ({type(error).__name__})") from None
    try:
        content = json.loads(payload)["choices"][0]["message"]["content"]
    except (ValueError, LookupError, TypeError):
        raise EndpointFailure(f"not a chat completion: {_snippet(payload)}") from None
    if not isinstance(content, str):
        raise EndpointFailure(f"not a chat completion: {_snippet(payload)}")
    return content


def _snippet(payload: bytes) -> str:
    text = payload.decode("utf-8", "replace").strip().replace("\n", " ")
    return repr(text[:80] + ("..." if len(text) > 80 else ""))


def ask(endpoint: Endpoint, prompt: Prompt, retry: Retry, stop: threading.Event) -> str:
    """The answer, after up to `retry.attempts` requests; the last EndpointFailure if none succeeds.
    A connection that is refused on every attempt is the endpoint being down: RoomspaceError."""
    for attempt in range(retry.attempts):
        try:
            return ask_once(endpoint, prompt)
        except EndpointFailure as error:
            failure = error
        if attempt + 1 < retry.attempts and stop.wait(retry.backoff * 2 ** attempt):
            break  # the run is being stopped: give up at once
    if str(failure).startswith("cannot connect"):
        raise RoomspaceError(f"{endpoint.url}: {failure} after {retry.attempts} attempts")
    raise failure


class AnswerCache:
    """Answers on disk, one JSON line each: {"model", "prompt_sha256", "answer"}; appended as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if not text.endswith("\n") and text:
            # A run killed mid-write leaves its last line cut short: drop it, so every line stays whole.
            text = text[:text.rfind("\n") + 1]
            write_atomic(path, lambda target: target.write_text(text, encoding="utf-8"))
        for number, line in enumerate(text.splitlines(), 1):
            try:
                record = json.loads(line)
                self.answers[record["model"], record["prompt_sha256"]] = record["answer"]
            except (ValueError, KeyError, TypeError):
                raise RoomspaceError(f"{path}:{number}: not an answer-cache line; remove the file") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "a", encoding="utf-8")

    def get(self, model: str, prompt_hash: str) -> str | None:
        return self.answers.get((model, prompt_hash))

    def put(self, model: str, prompt_hash: str, answer: str) -> None:
        line = json.dumps({"model": model, "prompt_sha256": prompt_hash, "answer": answer}, ensure_ascii=False)
        with self.lock:
            self.answers[model, prompt_hash] = answer
            self.file.write(line + "\n")
            self.file.flush()

    def close(self) -> None:
        self.file.close()


@dataclass(frozen=True)
class RunReport:
    prompts: int
    cached: int  # answered from the cache, without a request
    asked: int  # answered by the endpoint now
    failed: int
    first_error: str | None


def run_model(prompts: list[Prompt], endpoint: Endpoint, out: Path, cache_path: Path, concurrency: int = 4,
              retry: Retry = Retry(), progress: bool = True) -> RunReport:
    """Answer every prompt (cache first), then write predictions {"id", "prediction", "model"[, "error"]}
    to `out` in prompt order."""
    if len({p.id for p in prompts}) != len(prompts):
        raise RoomspaceError("two prompts share an id")
    cache = AnswerCache(cache_path)
    answers: dict[str, str] = {}
    errors: dict[str, str] = {}
    todo = []
    for prompt in prompts:
        cached = cache.get(endpoint.model, endpoint.prompt_hash(prompt))
        if cached is None:
            todo.append(prompt)
        else:
            answers[prompt.id] = cached
    cached_count = len(answers)
    stop = threading.Event()

    def job(prompt: Prompt) -> None:
        try:
            answer = ask(endpoint, prompt, retry, stop)
        except EndpointFailure as error:
            errors[prompt.id] = str(error)
        else:
            cache.put(endpoint.model, endpoint.prompt_hash(prompt), answer)
            answers[prompt.id] = answer
        bar.update()

    with tqdm(total=len(prompts), initial=cached_count, unit="prompt", desc=endpoint.model,
              disable=not progress) as bar, ThreadPoolExecutor(max_workers=concurrency) as pool:
        try:
            futures = [pool.submit(job, prompt) for prompt in todo]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # re-raises the RoomspaceError that stops the run
        finally:
            stop.set()
            pool.shutdown(cancel_futures=True)
            cache.close()
    records = []
    for prompt in prompts:
        record = {"id": prompt.id, "prediction": answers.get(prompt.id), "model": endpoint.model}
        if prompt.id in errors:
            record["error"] = errors[prompt.id]
        records.append(json.dumps(record, ensure_ascii=False))
    text = "\n".join(records) + "\n" if records else ""
    write_atomic(out, lambda target: target.write_text(text, encoding="utf-8"))
    first_error = next((errors[p.id] for p in prompts if p.id in errors), None)
    return RunReport(len(prompts), cached_count, len(answers) - cached_count, len(errors), first_error)
