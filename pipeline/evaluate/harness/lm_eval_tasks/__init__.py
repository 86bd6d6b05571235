"""lm-evaluation-harness tasks for RoomSpace: this folder is what `--include_path` names (see README.md here)."""

from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent  # e.g. TaskManager(include_path=str(TASKS_DIR))
