"""Ordered parallel map: local worker processes or a Dask cluster, results always in task order.

Every stage's work is a pure function of its task, and results are consumed in task order, so
the bytes a stage writes do not depend on how many workers computed them or where. At most
`WINDOW` tasks per worker are in flight and tasks are drawn from their iterable only as slots
free up, which bounds memory whatever the number of tasks.

Local worker processes started: min(workers, the cores this process may use, the number of
tasks), and none when that is 1 (the tasks then run in this process). Processes beyond the cores
cannot run at once and processes beyond the tasks have nothing to do; both only cost forks and
memory (`--workers 1000` forked 1000 processes for a 6-room build, 26 s instead of 2).

No worker outlives the command: an interrupted or stopped run (SIGINT, SIGTERM, an error)
waits for its local workers to finish the task in hand and exit, and releases its Dask tasks;
local workers are also killed by the kernel when the main process dies without a word (SIGKILL).
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from pipeline.errors import RoomspaceError

WINDOW = 4  # tasks in flight per worker: enough to keep workers busy while results are consumed in order
RERUN = "re-run the same command to resume"
DASK_CONNECT_SECONDS = 20  # to reach the scheduler
DASK_WORKERS_SECONDS = 60  # for a first worker to join, and how long a run may have none before it gives up
DASK_POLL_SECONDS = 5  # how often a wait for a result checks that workers are still there
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)
GC_YOUNG = 20_000  # a worker's threshold of young collections (`worker_setup`)


def _windowed(submit: Callable, tasks: Iterable, width: int) -> Iterator:
    """Submit tasks keeping `width` in flight; yield each future in task order."""
    pending: deque = deque()
    for task in tasks:
        pending.append(submit(task))
        if len(pending) >= width:
            yield pending.popleft()
    yield from pending


def usable_cores() -> int:
    """The cores this process may use (all of them where the OS cannot say)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ordered_map(job: Callable, tasks: Iterable, workers: int = 1, scheduler: str | None = None) -> Iterator:
    """job(task) for every task, in task order: here, in local worker processes, or on the Dask
    scheduler at `scheduler` (an address such as tcp://10.0.0.5:8786). Locally, `workers` is an upper
    bound: min(workers, usable_cores(), the number of tasks) processes are started, none where that
    is 1 (the tasks run here). The tasks are counted by drawing at most that many ahead."""
    if scheduler is not None:
        yield from _dask_map(job, tasks, scheduler)
        return
    tasks = iter(tasks)
    first = list(islice(tasks, min(workers, usable_cores())))
    if len(first) <= 1:
        yield from map(job, chain(first, tasks))
    else:
        yield from _process_map(job, chain(first, tasks), len(first))


def worker_setup() -> None:
    """Worker initializer. The main process alone answers SIGINT and SIGTERM: it stops taking work,
    lets each worker finish the task in hand and waits for them (a worker killed while it sends a
    result can leave the executor waiting forever for the rest of it), then says what was kept. So a
    worker ignores both (a terminal or `kill -TERM -GROUP` sends them to the whole group); on Linux
    the kernel kills it when its parent dies without a word (SIGKILL)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # What a forked worker inherits (imported packages, ProcTHOR's databases) lives as long as it
    # does: out of the collector's sight, full collections stop traversing it (a sweep build's
    # item time fell by about a tenth), and its pages stay shared with the parent.
    gc.freeze()
    # A worker's objects die young and by reference counts (a room's rows, a house's frames): a young
    # collection every GC_YOUNG container objects, not every 700, spends a fifth of the time (about
    # 1 ms a room of default,balanced items and 0.7 ms a sampled scene of 1.8 in all).
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _process_map(job: Callable, tasks: Iterable, workers: int) -> Iterator:
    # fork: workers inherit the imported packages (ProcTHOR's databases take seconds to load)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=worker_setup)
    try:
        for future in _windowed(lambda task: pool.submit(job, task), tasks, WINDOW * workers):
            yield future.result()
    except BrokenProcessPool:
        raise RoomspaceError(f"a worker process died (killed, or out of memory?); {RERUN}") from None
    finally:
        # Stopped early (an error, SIGINT, SIGTERM) or done: queued tasks are dropped, the tasks in hand
        # finish, and every worker has exited before this returns.
        pool.shutdown(wait=True, cancel_futures=True)


def _dask_map(job: Callable, tasks: Iterable, scheduler: str) -> Iterator:
    from distributed import Client

    try:
        client = Client(scheduler, timeout=f"{DASK_CONNECT_SECONDS}s", set_as_default=False)
    except Exception as error:  # a bad address is a ValueError, an unreachable one an OSError or a timeout
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise RoomspaceError(f"cannot reach the Dask scheduler at {scheduler} ({reason}); check the address "
                             "(tcp://HOST:8786) and that `dask scheduler` runs there") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=DASK_WORKERS_SECONDS)
        except (TimeoutError, FutureTimeout):
            raise RoomspaceError(f"no Dask worker joined the scheduler at {scheduler} within "
                                 f"{DASK_WORKERS_SECONDS} s; start some with `dask worker {scheduler}`") from None
        width = WINDOW * max(1, sum(client.nthreads().values()))
        for future in _windowed(lambda task: client.submit(job, task, pure=False), tasks, width):
            yield _dask_result(client, future, scheduler)


def _dask_result(client, future, scheduler: str):
    """The future's result; a cluster left without workers for DASK_WORKERS_SECONDS is an error, not a hang."""
    without_workers = 0.0
    while True:
        try:
            return future.result(timeout=DASK_POLL_SECONDS)
        except (TimeoutError, FutureTimeout):
            without_workers = 0.0 if client.nthreads() else without_workers + DASK_POLL_SECONDS
            if without_workers >= DASK_WORKERS_SECONDS:
                raise RoomspaceError(f"every Dask worker of {scheduler} is gone and none came back within "
                                     f"{DASK_WORKERS_SECONDS} s; restart them, then {RERUN}") from None
