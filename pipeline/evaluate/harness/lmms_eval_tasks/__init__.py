"""lmms-eval tasks for RoomSpace's configurations with images: this folder is what `--include_path`
names, once its rows are named (see README.md here). The task YAMLs are generated from the kinds
registry by pipeline.evaluate.harness.tasks."""

from __future__ import annotations

from pathlib import Path

from pipeline.evaluate.harness.tasks import LMMS_EVAL, PLACEHOLDER, source_tasks

__all__ = ["PLACEHOLDER", "TASKS_DIR", "write_tasks"]
TASKS_DIR = LMMS_EVAL.folder  # the tasks of the configurations `make roomspace-100` writes, rows unnamed


def write_tasks(source: str | Path, out: str | Path) -> Path:
    """The tasks of the configurations at `source` (a built folder, a Hub snapshot folder, or
    OWNER/NAME on the Hub) that lmms-eval reads, in `out`, their dataset_path `source`; returns `out`,
    the path to give lmms-eval's --include_path."""
    return source_tasks(source, out, LMMS_EVAL)
