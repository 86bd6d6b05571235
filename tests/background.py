"""Slow preparations made by a process of their own from the start of a test run, beside the tests.

Most tests keep one core busy. A preparation that takes minutes of its own (installing the lock's 1.6 GB)
is started once for the whole run when the tests are collected (by the first pytest-xdist worker, or the
only process), so it has the whole run to finish; tests/conftest.py runs the test files that wait for it
last. The fixture that hands it over waits for it in whichever worker runs them, and the folder it made is
deleted in the background after the module that read it; the session's end stops a job still running and
deletes what is left. A job is run as

    python tests/background.py FIXTURE FOLDER

which runs JOBS[FIXTURE] as `python SCRIPT FOLDER` (making FOLDER's contents or exiting non-zero saying why,
its output in FOLDER/job.log) and then writes its exit status to FOLDER/exit, which ends the wait.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
JOBS = {"wheel_envs": "wheel_envs.py", "stock_houses": "stock_houses.py"}  # fixture: its script in tests/
NICENESS = 5  # a little below the tests, yet with a share of the cores that ends it before the tests run out
EXIT, GROUP = "exit", "process-group"  # the files of a job's folder saying it ended (its status) and who runs it
POLL_SECONDS = 0.5


@dataclass
class BackgroundJob:
    fixture: str
    folder: Path  # the job's own, named after its fixture in the run's shared folder
    process: subprocess.Popen | None = None  # in the process that started it
    removal: subprocess.Popen | None = None

    @classmethod
    def of(cls, fixture: str, shared: Path) -> BackgroundJob:
        """The job of `fixture` in `shared` (pytest's base folder, shared by the run's workers)."""
        return cls(fixture, shared / f"roomspace-{fixture.replace('_', '-')}")

    def start(self) -> None:
        self.folder.mkdir()
        with (self.folder / "job.log").open("wb") as log:
            self.process = subprocess.Popen([sys.executable, __file__, self.fixture, str(self.folder)], stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            preexec_fn=lambda: os.nice(NICENESS))
        write_whole(self.folder / GROUP, str(self.process.pid))

    def ready(self) -> Path:
        """The folder, once made; the job's output in the message if it failed."""
        while not (self.folder / EXIT).exists():
            if not self.running():
                if (self.folder / EXIT).exists():  # it ended between the two looks
                    break
                raise AssertionError(f"{JOBS[self.fixture]} ended without an exit status (killed?): {self.folder}")
            time.sleep(POLL_SECONDS)
        status = int((self.folder / EXIT).read_text())
        if status:
            log = (self.folder / "job.log").read_text(errors="replace")
            raise AssertionError(f"{JOBS[self.fixture]} failed (exit {status}):\n{log[-3000:]}")
        return self.folder

    def running(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        try:
            os.killpg(int((self.folder / GROUP).read_text()), 0)
        except (FileNotFoundError, ProcessLookupError):  # not started yet by the worker that starts it, or ended
            return not (self.folder / GROUP).exists()
        return True

    def remove(self) -> None:
        """Stops the job if it still runs (a run interrupted) and deletes its folder in the background."""
        if self.removal is None:
            group = self.folder / GROUP
            if group.exists() and not (self.folder / EXIT).exists():
                try:
                    os.killpg(int(group.read_text()), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.removal = subprocess.Popen(["rm", "-rf", str(self.folder)])

    def close(self) -> None:
        self.remove()
        self.removal.wait()


def write_whole(path: Path, text: str) -> None:
    """The file whole, or absent: another worker may be reading it."""
    path.with_suffix(".tmp").write_text(text)
    os.replace(path.with_suffix(".tmp"), path)


def run(fixture: str, folder: Path) -> None:
    write_whole(folder / EXIT, str(subprocess.run([sys.executable, str(TESTS / JOBS[fixture]), str(folder)]).returncode))


if __name__ == "__main__":
    run(sys.argv[1], Path(sys.argv[2]))
