"""A house's bytes depend on (seed, index) only, whatever else the sampling process does (docs/semantics.md section 1).

ProcTHOR draws from the process-global `random` and `numpy.random` states, so any other thread
of the process drawing from them while a house is sampled would change the house; a Dask worker
runs its tasks beside its own event-loop threads. The reference bytes are the session's shared
rooms (conftest.py: SCENE_SEED, sampled by single-threaded worker processes).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import SCENE_SEED

import pipeline.scene.procthor.single_threaded as single_threaded
from pipeline.errors import RoomspaceError
from pipeline.scene.procthor import sampling
from pipeline.scene.procthor.single_threaded import run_single_threaded
from pipeline.scene.scene_file import dumps, scene_document, scene_path
from pipeline.scene.scene_folder import sample_scenes

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ROOMS = (0, 1, 2)
DASK_SEED, DASK_COUNT = 3, 6
DASK_STARTUP = 180  # seconds the cluster may take to come up before the test gives up
CHILD_ENV = {**os.environ, "PYTHONHASHSEED": "0"}


def canonical_bytes(seed: int, index: int) -> str:
    house, scene = sampling.sample_scene(seed, index)
    return dumps(scene_document(house, scene))


def stored(folder: Path, index: int, seed: int = SCENE_SEED) -> str:
    return scene_path(folder, seed, index).read_text(encoding="utf-8")


@pytest.fixture
def no_helper_left():
    """Tests that may start sampling's helper process leave none behind, so later tests start clean."""
    yield
    with single_threaded._lock:
        helper, single_threaded._helper = single_threaded._helper, None
    if helper is not None:
        with helper.lock:
            helper.close()


class DrawingThread(threading.Thread):
    """Draws from the global `random` and `numpy.random` states until stopped, as a Dask worker's threads may."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="global-rng-drawer")
        self.running = threading.Event()
        self.stopping = threading.Event()
        self.draws = 0

    def run(self) -> None:
        self.running.set()
        while not self.stopping.is_set():
            random.random()
            np.random.random()
            self.draws += 1


def test_a_thread_drawing_from_the_global_rngs_changes_nothing(scenes, no_helper_left):
    drawer = DrawingThread()
    drawer.start()
    try:
        assert drawer.running.wait(timeout=60), "the drawing thread did not start"
        sampled = {}
        for k in ROOMS:
            before = drawer.draws
            sampled[k] = canonical_bytes(SCENE_SEED, k)
            assert drawer.draws > before, "the drawing thread made no draw while the house was sampled"
    finally:
        drawer.stopping.set()
        drawer.join()
    for k in ROOMS:
        assert sampled[k] == stored(scenes, k), f"house {k} changed while another thread drew from the global RNGs"


def test_same_bytes_in_any_order_and_in_fresh_processes(scenes, tmp_path, no_helper_left):
    """In this process in either order, and in fresh processes whatever their PYTHONHASHSEED (ProcTHOR's
    material choice hashes strings): the shared rooms' bytes."""
    forward = {k: canonical_bytes(SCENE_SEED, k) for k in ROOMS}
    backward = {k: canonical_bytes(SCENE_SEED, k) for k in reversed(ROOMS)}
    assert forward == backward
    for k in ROOMS:
        assert forward[k] == stored(scenes, k)
    # Two fresh processes at once: one sampling process (--workers 1) with PYTHONHASHSEED unset, two forked
    # ones (--workers 2) with it set to another value than make's 0.
    runs = []
    for workers, hash_seed in ((1, None), (2, "123")):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
        if hash_seed is not None:
            env["PYTHONHASHSEED"] = hash_seed
        out = tmp_path / f"workers{workers}"
        command = [sys.executable, "-m", "pipeline.cli", "scenes", "--count", str(len(ROOMS)), "--seed",
                   str(SCENE_SEED), "--out", str(out), "--workers", str(workers), "--quiet"]
        runs.append((workers, hash_seed, out, subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE,
                                                               text=True)))
    for workers, hash_seed, out, process in runs:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert sorted(p.name for p in out.iterdir()) == [scene_path(out, SCENE_SEED, k).name for k in ROOMS]
        for k in ROOMS:
            assert stored(out, k) == forward[k], \
                f"house {k} differs in a fresh process (--workers {workers}, PYTHONHASHSEED {hash_seed or 'unset'})"


# --------------------------------------------------------------------------- a real Dask cluster


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(processes: list[subprocess.Popen]) -> None:
    """Terminate the cluster's processes and everything they started (nanny -> worker -> helper)."""
    import psutil

    tree = []
    for process in processes:
        try:
            tree += psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    # the workers (started after the scheduler) first, while their scheduler can still hear them
    # leave: a worker stopped after it waits out its timeouts trying to reach it (10 s of teardown)
    for group in (processes[1:], processes[:1]):
        for process in group:
            if process.poll() is None:
                process.terminate()
        for process in group:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    _, alive = psutil.wait_procs(tree, timeout=30)
    for child in alive:
        child.kill()
    psutil.wait_procs(alive, timeout=30)


@pytest.fixture
def dask_cluster(request, tmp_path_factory) -> str:
    """A `dask scheduler` and two `dask worker ADDRESS --nthreads 1` processes, as README.md says; its address."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask")
    processes: list[subprocess.Popen] = []
    request.addfinalizer(lambda: _stop(processes))

    def start(name: str, *args: str) -> None:
        log = (logs / f"{name}.log").open("w")
        request.addfinalizer(log.close)
        processes.append(subprocess.Popen([str(BIN / "dask"), *args], cwd=logs, env=CHILD_ENV,
                                          stdout=log, stderr=subprocess.STDOUT))

    address = f"tcp://127.0.0.1:{_free_port()}"
    start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard")
    for k in range(2):
        start(f"worker{k}", "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
              "--local-directory", str(logs / f"worker{k}"))
    with Client(address, timeout=DASK_STARTUP, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=DASK_STARTUP)
    return address


@pytest.mark.slow
def test_a_dask_cluster_writes_the_local_bytes(dask_cluster, tmp_path, no_helper_left):
    sample_scenes(count=DASK_COUNT, seed=DASK_SEED, out=tmp_path / "local", progress=False, workers=1)
    sample_scenes(count=DASK_COUNT, seed=DASK_SEED, out=tmp_path / "dask", progress=False, scheduler=dask_cluster)
    local = [scene_path(tmp_path / "local", DASK_SEED, k) for k in range(DASK_COUNT)]
    remote = [scene_path(tmp_path / "dask", DASK_SEED, k) for k in range(DASK_COUNT)]
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == [p.name for p in remote]
    differ = [p.name for p, q in zip(local, remote) if p.read_bytes() != q.read_bytes()]
    assert not differ, f"the Dask cluster wrote other bytes than the local run for {differ}"


# --------------------------------------------------------------------------- the helper process


@pytest.fixture
def another_thread():
    """A thread that waits, so that this process has more than one."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join()


def test_the_helper_runs_jobs_passes_errors_and_a_dead_one_is_one_line(another_thread, no_helper_left):
    helper = run_single_threaded(os.getpid)
    assert helper != os.getpid() and run_single_threaded(os.getpid) == helper  # one helper, reused
    with pytest.raises(ValueError, match="invalid literal"):
        run_single_threaded(int, "x")
    assert run_single_threaded(os.getpid) == helper  # an error in a job leaves the helper running
    with pytest.raises(RoomspaceError) as died:
        run_single_threaded(os._exit, 1)
    assert "helper process" in str(died.value) and "\n" not in str(died.value)
    assert run_single_threaded(os.getpid) not in (helper, os.getpid())  # the next call starts another
