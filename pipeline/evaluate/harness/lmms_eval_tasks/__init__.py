"""lmms-eval tasks for RoomSpace's vision configurations: this folder is what `--include_path` names
(see README.md here)."""

from __future__ import annotations

import re
from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent  # e.g. TaskManager(include_path=str(TASKS_DIR))
PLACEHOLDER = "OWNER/NAME"  # the YAMLs' dataset_path until a user says where their copy is
_DATASET_PATH = re.compile(r"^dataset_path: .*$", re.MULTILINE)


def write_tasks(source: str | Path, out: str | Path) -> Path:
    """A copy of these tasks in `out` whose dataset_path is `source` (a built folder, a Hub snapshot
    folder, or OWNER/NAME on the Hub); returns `out`, the path to give lmms-eval's --include_path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    local = Path(source).expanduser()
    location = str(local.resolve()) if local.exists() else str(source)
    for path in sorted(TASKS_DIR.iterdir()):
        if path.suffix == ".yaml":
            text = path.read_text(encoding="utf-8")
            (out / path.name).write_text(_DATASET_PATH.sub(lambda _: f"dataset_path: {location}", text),
                                         encoding="utf-8")
        elif path.name == "utils.py":
            (out / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return out
