"""run-model against what small real models do (a loopback server answering as llama.cpp's does):
prompts longer than the model's context are refused with an HTTP 400 naming the context, one by one,
and must neither stop the run nor be retried; they are counted apart as null predictions. Long
rambling answers without a final "Answer:" line are kept as they are (score counts them unparseable).
The real model is tests/evaluate/test_tiny_model.py's (`make eval-tiny`)."""

import json

import pytest
from loopback import LoopbackChat, completion

from pipeline.errors import RoomspaceError
from pipeline.evaluate.model_runner import GIVE_UP_AFTER, Endpoint, Retry, run_model
from pipeline.evaluate.prompts import Prompt

FAST = Retry(attempts=3, backoff=0.0)
CONTEXT = 50  # the stand-in model's context, in characters of the prompt
# llama-cpp-python's refusal, word for word as version 0.3.36 gives it
REFUSAL = ("This model's maximum context length is 4096 tokens. However, you requested 5041 tokens (5031 in the "
           "messages, 10 in the completion). Please reduce the length of the messages or completion.")
RAMBLE = "Let me think about the room. " * 40 + "The lamp could be anywhere, really"


class ContextLimited:
    """Refuses prompts longer than CONTEXT as llama-cpp-python does; rambles without a final line otherwise."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.loopback = LoopbackChat(self.respond)

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        (message,) = body["messages"]
        self.requests.append(message["content"])
        if len(message["content"]) > CONTEXT:
            return 400, {"error": {"message": REFUSAL, "type": "invalid_request_error", "param": "messages",
                                   "code": "context_length_exceeded"}}
        return 200, completion(body, RAMBLE)


@pytest.fixture
def server():
    stand_in = ContextLimited()
    yield stand_in
    stand_in.loopback.close()


def test_prompts_over_the_context_are_counted_apart_and_never_stop_the_run(server, tmp_path):
    long = [Prompt(f"long{k}", "a story that does not fit " * 5) for k in range(GIVE_UP_AFTER + 5)]
    prompts = [Prompt("short", "a short story"), *long, Prompt("last", "fits too")]
    out = tmp_path / "preds.jsonl"
    report = run_model(prompts, Endpoint(f"{server.loopback.root}/v1", "tiny"), out, tmp_path / "cache.jsonl",
                       concurrency=2, retry=FAST, progress=False)
    assert (report.over_context, report.failed, report.asked) == (len(long), 0, 2)
    assert len(server.requests) == len(prompts)  # asked once each: no retry can make a prompt shorter
    lines = {record["id"]: record for record in map(json.loads, out.read_text().splitlines()) if "id" in record}
    for prompt in long:
        assert lines[prompt.id]["prediction"] is None
        assert lines[prompt.id]["error"].startswith("over the context: HTTP 400")
    assert lines["short"]["prediction"] == lines["last"]["prediction"] == RAMBLE  # kept whole, no final line


def test_other_refusals_still_stop_at_once(tmp_path):
    def refuse(path: str, body: dict) -> tuple[int, dict]:
        return 400, {"error": {"message": "model 'tiny' not found"}}

    other = LoopbackChat(refuse)
    try:
        with pytest.raises(RoomspaceError, match="refused the request: HTTP 400.*not found"):
            run_model([Prompt("a", "short")], Endpoint(f"{other.root}/v1", "tiny"), tmp_path / "p.jsonl",
                      tmp_path / "c.jsonl", retry=FAST, progress=False)
    finally:
        other.close()
