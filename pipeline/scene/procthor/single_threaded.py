"""Run a job where no other thread can touch the process-global state it depends on.

`run_single_threaded(job, *args)` calls `job(*args)` here when this process has no other Python
thread, and otherwise in a helper process: one per process, single-threaded, started on first
need and reused, safe to call from several threads at once (their jobs run one after another).

Why a process and not private generators: ProcTHOR draws from the module-level `random` and
`numpy.random` functions in many modules, and pandas' `DataFrame.sample()` reads numpy's global
RandomState; sampling also swaps ProcTHOR module attributes and clears its caches for the length
of a house (pipeline.scene.procthor.sampling). All of that is process-global, so any other thread (a Dask
worker's event loop, a second task thread, a caller's own thread) can advance the generators or
see the swaps, and rerouting every draw site to private generators would also be process-global
and would break silently the day a draw site is missed. A process of its own isolates whatever
the job touches, and its bytes are those of a single-threaded run by construction. Any other
thread counts, even one known to draw nothing (tqdm's monitor): which threads draw cannot be
checked, and a wrong guess changes houses without a word, where a needless helper costs a few
seconds once per process.

Why a plain `subprocess` and not `multiprocessing`: a Dask worker started by its nanny is a
daemonic multiprocessing process, and those may not start multiprocessing children. The helper
is `python -c` with this process's `sys.path` (exec'd straight after the fork: forking the
threads of this process into a live interpreter is what must not happen). It reads
length-prefixed pickled (job, args) from its stdin and answers on a copy of its stdout (whatever
a job prints goes to stderr). The pipes are unbuffered file objects, which hold no lock that a
process forked from this one could inherit held. Its first job pays the imports once.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

from pipeline.errors import RoomspaceError
from pipeline.parallel import RERUN, worker_setup

_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
         "from pipeline.scene.procthor.single_threaded import _serve; _serve(int(sys.argv[2]))")
_DIED = f"the helper process that samples scenes died (killed, or out of memory?); {RERUN}"


def _message(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(8, "big") + data


def _write(stream: BinaryIO, message: bytes) -> None:
    view = memoryview(message)
    while view:
        view = view[stream.write(view):]


def _read(stream: BinaryIO, size: int) -> bytes:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_message(stream: BinaryIO) -> bytes:
    return _read(stream, int.from_bytes(_read(stream, 8), "big"))


class _Helper:
    """The helper process, and the thread that started it.

    The helper asks the kernel to stop it when the *thread* that started it ends (PR_SET_PDEATHSIG,
    in pipeline.parallel's worker set-up, which also leaves SIGINT and SIGTERM to this process), so that it
    never outlives this process. The first caller may be a short-lived thread (a pool thread of
    Dask, say), so the process is started by a thread of our own that lives until `close`.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one request and its reply at a time
        self._release = threading.Event()
        self._started = threading.Event()
        self._failure: OSError | None = None
        self.process: subprocess.Popen | None = None
        threading.Thread(target=self._keep, name="roomspace-single-threaded-helper", daemon=True).start()
        self._started.wait()
        if self.process is None:
            self._release.set()
            raise RoomspaceError(f"could not start the helper process that samples scenes ({self._failure}); {RERUN}")

    def _keep(self) -> None:
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, close_fds=True,
            )
        except OSError as error:
            self._failure = error
        self._started.set()
        self._release.wait()

    def alive(self) -> bool:
        return self.process.poll() is None and not self.process.stdin.closed

    def call(self, job: Callable[..., Any], args: tuple) -> Any:
        request = _message((job, args))  # a request that does not pickle leaves the helper as it was
        with self.lock:
            if not self.alive():
                raise RoomspaceError(_DIED)
            try:
                _write(self.process.stdin, request)
                reply = _read_message(self.process.stdout)
            except (EOFError, OSError):
                self.close(kill=True)
                raise RoomspaceError(_DIED) from None
            except BaseException:  # interrupted half-way: the next reply would not be this request's
                self.close(kill=True)
                raise
        ok, value = pickle.loads(reply)
        if ok:
            return value
        raise value

    def close(self, kill: bool = False) -> None:
        """End the helper: at once (`kill`), or after the job in hand (the end of its input)."""
        if kill:
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # a broken pipe to a dead helper
                pass
        self.process.wait()
        self._release.set()


_lock = threading.Lock()
_helper: _Helper | None = None


def _forget_after_fork() -> None:
    # A forked child has none of the parent's threads, and its copies of the pipes would keep the
    # helper's input open after the parent closes it.
    global _lock, _helper
    if _helper is not None and _helper.process is not None:
        _helper.process.stdin.close()
        _helper.process.stdout.close()
    _lock, _helper = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_after_fork)


def run_single_threaded(job: Callable[..., Any], *args: Any) -> Any:
    """`job(*args)`, run where no other thread runs beside it (see the module docstring).

    `job` is a module-level function; it, its arguments and its result must pickle, and it sees
    module state as imported (not as patched in this process). A helper that dies (killed, out of
    memory) is one RoomspaceError, and the next call starts another.
    """
    if threading.active_count() == 1:
        return job(*args)
    global _helper
    with _lock:
        if _helper is not None and not _helper.alive():
            _helper.close(kill=True)  # killed between two jobs: reap it and release its thread
            _helper = None
        if _helper is None:
            _helper = _Helper()
        helper = _helper
    return helper.call(job, args)


def _serve(parent: int) -> None:
    """The helper's loop: one (job, args) in, one (ok, result or exception) out, until end of input."""
    worker_setup()
    if os.getppid() != parent:  # the parent died before the kernel was told to stop us with it
        return
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # what a job prints goes to stderr, never into a reply
    while True:
        try:
            request = _read_message(requests)
        except EOFError:
            return
        try:
            job, args = pickle.loads(request)
            reply = (True, job(*args))
        except Exception as error:  # noqa: BLE001 -- raised again in the caller's process
            if not isinstance(error, RoomspaceError):
                error.add_note("in the helper process:\n" + traceback.format_exc().rstrip())
            reply = (False, error)
        try:
            message = _message(reply)
        except Exception as error:  # noqa: BLE001 -- a result or exception that does not pickle
            kind = type(reply[1]).__name__
            message = _message((False, RoomspaceError(f"the helper process could not send back a {kind}: {error}")))
        _write(replies, message)
