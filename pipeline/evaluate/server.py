"""A local model server run as a child process for `run-model` to ask (bench/eval_tiny.py serves
llama.cpp so): started with its output in a log, waited for until it answers, watched while a run
asks it, then stopped.

`check` is what a run calls when a request fails (pipeline.evaluate.model_runner.run_model's
`watch`): when the process has exited it raises ServerDied, which says how (its exit status, or
the signal that killed it: a segmentation fault in decode is SIGSEGV) and quotes the end of its
log, so the run stops at once instead of retrying an address nobody listens on any more.
"""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import RoomspaceError

LOG_TAIL = 12  # lines of the server's log quoted when it dies
TAIL_BYTES = 16384  # read from the end of the log for them (a server's log grows with every request)


class ServerDied(RoomspaceError):
    """The server process behind the endpoint has exited."""


def exit_status(code: int) -> str:
    """How a process ended, from its Popen return code (a negative code is the signal that killed it)."""
    if code >= 0:
        return f"with status {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"on signal {-code}"
    return f"on signal {-code} ({name})"


class ServerProcess:
    """`command` run with its output (stdout and stderr) in `log`, ready once `url` + `ready` answers."""

    def __init__(self, command: Sequence[str], url: str, log: Path, name: str = "the server",
                 start_timeout: float = 180.0, ready: str = "/v1/models") -> None:
        self.url, self.log_path, self.name = url, Path(log), name
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(list(command), stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + start_timeout
        while True:
            self.check(" while starting")
            try:
                urllib.request.urlopen(url + ready, timeout=5).read()
                return
            except urllib.error.HTTPError:
                return  # it answers, if not that address
            except OSError:
                if time.monotonic() > deadline:
                    self.close()
                    raise RoomspaceError(f"{name} did not answer {url}{ready} within {start_timeout:g} s; "
                                         f"{self.tail()}") from None
                time.sleep(0.2)

    def check(self, when: str = "") -> None:
        """Nothing while the process runs; ServerDied, saying how it ended and quoting its log, once it has exited."""
        code = self.process.poll()
        if code is not None:
            raise ServerDied(f"{self.name} (pid {self.process.pid}) exited {exit_status(code)}{when}; {self.tail()}")

    def tail(self) -> str:
        """The last LOG_TAIL lines of the log, indented, after a line naming it."""
        with self.log_path.open("rb") as log:
            start = max(0, log.seek(0, 2) - TAIL_BYTES)
            log.seek(start)
            lines = log.read().decode("utf-8", "replace").splitlines()[1 if start else 0:]  # whole lines only
        lines = [line for line in lines if line.strip()][-LOG_TAIL:]
        if not lines:
            return f"its log {self.log_path} is empty"
        return f"the end of its log {self.log_path}:\n" + "\n".join(f"    {line}" for line in lines)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
