"""An OpenAI-style /v1/chat/completions endpoint on 127.0.0.1 for the harness tests, as vLLM or Ollama
serve one: each request is answered with what `respond(path, body)` returns, (status, JSON reply)."""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Respond = Callable[[str, dict], tuple[int, dict]]


def completion(body: dict, text: str, finish: str = "stop") -> dict:
    """A chat completion reply saying `text`."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
    return {"id": "loopback", "object": "chat.completion", "created": 0, "model": body["model"], "choices": [choice]}


class LoopbackChat:
    def __init__(self, respond: Respond) -> None:
        class Handler(BaseHTTPRequestHandler):
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

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
