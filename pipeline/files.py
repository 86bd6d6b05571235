"""Writing files so that a reader never sees half of one, and checking a folder before work starts."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from pipeline.errors import RoomspaceError


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """`write(temporary)` in the same folder, then one rename: the file is whole or absent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def writable_folder(out: Path) -> None:
    """Make `out` and prove it writable, before anything is computed for it."""
    if out.exists() and not out.is_dir():
        raise RoomspaceError(f"output folder {out} is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".roomspace-write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise RoomspaceError(f"cannot write to output folder {out}: {error.strerror or error}") from None


def write_json(path: Path, value) -> None:
    """Indented JSON with sorted keys, written atomically."""
    text = json.dumps(value, indent=2, sort_keys=True) + "\n"
    write_atomic(path, lambda target: target.write_text(text, encoding="utf-8"))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
