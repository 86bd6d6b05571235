"""Ordered parallel map: local worker processes or a Dask cluster, results always in task order.

Every stage's work is a pure function of its task, and results are consumed in task order, so
the bytes a stage writes do not depend on how many workers computed them or where. At most
`WINDOW` tasks per worker are in flight, which bounds memory whatever the number of tasks.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from pipeline.errors import RoomspaceError

WINDOW = 4  # tasks in flight per worker: enough to keep workers busy while results are consumed in order
RERUN = "re-run the same command to resume"


def _windowed(submit: Callable, tasks: Iterable, width: int) -> Iterator:
    """Submit tasks keeping `width` in flight; yield each future in task order."""
    pending: deque = deque()
    for task in tasks:
        pending.append(submit(task))
        if len(pending) >= width:
            yield pending.popleft()
    yield from pending


def ordered_map(job: Callable, tasks: Iterable, workers: int = 1, scheduler: str | None = None) -> Iterator:
    """job(task) for every task, in task order: here (workers=1), in `workers` processes, or on the
    Dask scheduler at `scheduler` (an address such as tcp://10.0.0.5:8786)."""
    if scheduler is not None:
        yield from _dask_map(job, tasks, scheduler)
    elif workers == 1:
        yield from map(job, tasks)
    else:
        yield from _process_map(job, tasks, workers)


def _process_map(job: Callable, tasks: Iterable, workers: int) -> Iterator:
    # fork: workers inherit the imported packages (ProcTHOR's databases take seconds to load)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        try:
            for future in _windowed(lambda task: pool.submit(job, task), tasks, WINDOW * workers):
                yield future.result()
        except BrokenProcessPool:
            raise RoomspaceError(f"a worker process died (killed, or out of memory?); {RERUN}") from None


def _dask_map(job: Callable, tasks: Iterable, scheduler: str) -> Iterator:
    from distributed import Client

    try:
        client = Client(scheduler, timeout="20s", set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise RoomspaceError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
    with client:
        width = WINDOW * max(1, sum(client.nthreads().values()))
        for future in _windowed(lambda task: client.submit(job, task, pure=False), tasks, width):
            yield future.result()
