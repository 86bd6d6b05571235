"""ordered_map: results in task order, and local processes bounded by the tasks and the machine's cores."""

import os

import pytest

import pipeline.parallel as parallel
from pipeline.parallel import ordered_map, usable_cores


@pytest.fixture
def started(monkeypatch, tmp_path):
    """Counts the worker processes the executor starts (each runs the initializer once) and the
    processes asked of it; an executor asked for more than `most` fails before it forks any."""
    log = tmp_path / "workers.log"
    original, executor = parallel.worker_setup, parallel.ProcessPoolExecutor
    asked: list[int] = []

    def counted_setup() -> None:
        with open(log, "a") as file:  # in the worker: one line each
            file.write(f"{os.getpid()}\n")
        original()

    class Bounded(executor):
        def __init__(self, max_workers, *args, **kwargs):
            asked.append(max_workers)
            assert max_workers <= started.most, f"asked for {max_workers} worker processes"
            super().__init__(max_workers, *args, **kwargs)

    def started() -> tuple[list[int], int]:
        return asked, len(log.read_text().split()) if log.exists() else 0

    started.most = usable_cores()
    monkeypatch.setattr(parallel, "worker_setup", counted_setup)
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Bounded)
    return started


@pytest.mark.parametrize("tasks", [1, 3, 40])
def test_a_thousand_workers_start_no_more_processes_than_tasks_or_cores(started, monkeypatch, tasks):
    """`--workers 1000` forked about 205 processes for a 6-room build (41 s instead of 3 s)."""
    for cores in (2, 4):
        monkeypatch.setattr(parallel, "usable_cores", lambda: cores)  # the same on any machine
        started.most = cores
        results = list(ordered_map(abs, (-k for k in range(tasks)), workers=1000))  # a generator: not counted up front
        assert results == list(range(tasks))
    asked, processes = started()
    expected = [n for n in (min(tasks, 2), min(tasks, 4)) if n > 1]  # one task or one core: run here, no process
    assert asked == expected and processes == sum(expected)


def test_results_come_in_task_order_whatever_the_workers(started):
    tasks = list(range(-50, 50))
    assert list(ordered_map(abs, tasks, workers=1)) == list(ordered_map(abs, tasks, workers=7)) == [abs(t) for t in tasks]
    asked, processes = started()
    assert asked == ([min(7, usable_cores())] if usable_cores() > 1 else []) and processes == sum(asked)
