"""lm-evaluation-harness tasks for RoomSpace: this folder is what `--include_path` names (see
README.md here). The task YAMLs are generated from the kinds registry by pipeline.evaluate.harness.tasks."""

from __future__ import annotations

from pathlib import Path

from pipeline.evaluate.harness.tasks import LM_EVAL, source_tasks

__all__ = ["TASKS_DIR", "write_tasks"]
TASKS_DIR = LM_EVAL.folder  # the tasks of the configurations `make roomspace-100` writes: e.g. TaskManager(include_path=str(TASKS_DIR))


def write_tasks(source: str | Path, out: str | Path) -> Path:
    """The tasks of the text configurations at `source` (a built folder, a Hub snapshot folder, or
    OWNER/NAME on the Hub) in `out`, with `source` as their roomspace_source (no --metadata needed);
    returns `out`, the path to give lm_eval's --include_path."""
    return source_tasks(source, out, LM_EVAL)
