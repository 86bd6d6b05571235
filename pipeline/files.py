"""Writing files so that a reader never sees half of one, checking a folder before work starts, and
holding a folder so that two runs never write into it at once."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pipeline.errors import RoomspaceError


STALE_SECONDS = 600  # a temporary file this old is no write in progress: one takes milliseconds
TEMPORARY = re.compile(r"\..+\.(\d+)\.tmp")  # what write_atomic names its temporary files: .NAME.PID.tmp


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """`write(temporary)` in the same folder, then one rename: the file is whole or absent. A failed
    write (a full disk, a read-only folder) is a RoomspaceError naming the file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(temporary)
        os.replace(temporary, path)
    except OSError as error:
        raise RoomspaceError(f"cannot write {path}: {error.strerror or error}; free the space or fix the "
                             "permissions, then re-run the same command") from None
    finally:
        temporary.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temporaries(folder: Path) -> None:
    """Delete the temporary files killed runs left in a folder others may be writing to (a scene
    folder shared with Dask workers): only those of no live process here, older than STALE_SECONDS."""
    now = time.time()
    for path in folder.glob(".*.tmp"):
        match = TEMPORARY.fullmatch(path.name)
        try:
            old = now - path.stat().st_mtime > STALE_SECONDS
        except FileNotFoundError:
            continue  # its writer just renamed it
        if match and old and not _alive(int(match.group(1))):
            path.unlink(missing_ok=True)


def check_folder_path(folder: Path, role: str) -> None:
    """A one-line error when `folder` is a file, a broken link or a link loop rather than a folder."""
    if os.path.lexists(folder) and not folder.is_dir():
        raise RoomspaceError(f"{role} {folder} is not a folder (a file, a broken link or a link loop); "
                             "choose another path")


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold `folder` for this process: a second run into it stops at once, naming the holder.

    An exclusive `flock` on the folder itself: nothing is written into it for the lock, and the
    kernel releases it when the process ends however it ends, so a killed run never leaves the
    folder locked.
    """
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RoomspaceError(f"{folder} is being written by {_holder(folder)}; wait for it to finish or "
                                 "choose another folder") from None
        yield
    finally:
        os.close(descriptor)


def _holder(folder: Path) -> str:
    """Which process holds the folder's lock, from /proc/locks where there is one."""
    inode = os.stat(folder).st_ino
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return "another process"
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
            return f"process {fields[4]}"
    return "another process"


def writable_folder(out: Path) -> None:
    """Make `out` and prove it writable, before anything is computed for it."""
    check_folder_path(out, "output folder")
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
