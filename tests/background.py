"""Slow preparations made by a process of their own from the start of a test run, beside the tests.

Most tests keep one core busy. A preparation that takes minutes of its own (installing the lock's 1.6 GB,
sampling houses with stock ProcTHOR) is started when the tests are collected, below the tests' priority,
so it takes the cores they leave; the fixture that hands it over waits for it, and the folder it made is
deleted in the background after the module that read it. tests/conftest.py starts a job when a collected
test asks for its fixture and ends every job with the session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
JOBS = {"wheel_envs": "wheel_envs.py", "stock_houses": "stock_houses.py"}  # fixture: its script in tests/, run as
# `python SCRIPT FOLDER`, which makes FOLDER's contents or exits non-zero saying why
NICENESS = 10  # below the tests themselves


@dataclass
class BackgroundJob:
    folder: Path  # the job's own: what the script makes, and its output in job.log
    process: subprocess.Popen
    removal: subprocess.Popen | None = None

    @classmethod
    def start(cls, fixture: str) -> BackgroundJob:
        folder = Path(tempfile.mkdtemp(prefix=f"roomspace-{fixture.replace('_', '-')}-"))
        with (folder / "job.log").open("wb") as log:
            process = subprocess.Popen([sys.executable, str(TESTS / JOBS[fixture]), str(folder)], stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       preexec_fn=lambda: os.nice(NICENESS))
        return cls(folder, process)

    def ready(self) -> Path:
        """The folder, once made; the job's output in the message if it failed."""
        if self.process.wait():
            log = (self.folder / "job.log").read_text(errors="replace")
            raise AssertionError(f"{self.process.args[1]} failed (exit {self.process.returncode}):\n{log[-3000:]}")
        return self.folder

    def remove(self) -> None:
        """Deletes the folder in the background (`close` waits for it)."""
        if self.removal is None:
            if self.process.poll() is None:  # still running (a run interrupted): it and its children are stopped
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.removal = subprocess.Popen(["rm", "-rf", str(self.folder)])

    def close(self) -> None:
        self.remove()
        self.removal.wait()
