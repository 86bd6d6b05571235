"""A predictions file, as `run-model` writes it and `score` reads it: JSON lines, "\\n"-separated.

The first line may be a header, {"roomspace_predictions": {...}} (`RunHeader`), saying what made the
answers: the model and its server, the decoding settings, the prompt style, the data asked (the
build's manifest sha256, the sha256 of the files read, the split and configurations, the sample)
and roomspace's version. `score` names a system by its model, scores a recorded sample as that
sample, and warns when the header and the build it is given disagree. Every other line is one
answer: {"id", "prediction"[, "sample"][, "truncated"][, "tokens"][, "error"], "model"}, "tokens"
being the completion tokens the endpoint counted. Files without a header (older runs, inspect
logs, hand-made files) are read the same way.

`run-model` writes the header first, then appends each answer the moment it has it, one whole line
per write (`PredictionsWriter`): an interrupted run leaves a file `score` reads. A finished run sorts
the file into prompt order, then sample order, in one atomic rename.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from pipeline import __version__
from pipeline.data import data_text
from pipeline.errors import RoomspaceError
from pipeline.evaluate.sample import Sample
from pipeline.files import write_atomic

HEADER = "roomspace_predictions"  # the key of a header line
TEMPLATE_FILES = ("prompts.json", "relations.json")  # what a prompt made at run time (style paper) is made from


@dataclass(frozen=True)
class RunHeader:
    """What produced a predictions file's answers (its first line)."""

    model: str  # as sent with each request
    server: str  # the chat-completions address asked
    temperature: float
    max_tokens: int | None  # the answer length limit sent; None: none was sent
    samples: int  # answers per prompt
    style: str  # the prompt style (pipeline.text.prompts.STYLES)
    templates_sha256: str  # of TEMPLATE_FILES: the paper style's prompts are made from them; the default
    #                        style sends the rows' own prompt column, which data_sha256 covers
    source: str  # the build, snapshot or Hub id, as given
    split: str
    configs: tuple[str, ...]  # the configurations asked
    manifest_sha256: str | None  # of the build's manifest.json; None for a Hub snapshot
    data_sha256: str  # of the files the configurations were read from (BenchmarkRows.data_sha256)
    sample: Sample | None  # --limit and --seed; None: every question of the configurations
    roomspace: str = __version__

    def line(self) -> str:
        return json.dumps({HEADER: asdict(self)}, ensure_ascii=False)

    @classmethod
    def of(cls, value: object, where: str) -> RunHeader:
        """The header a line's {HEADER: value} holds; fields it does not know (a newer roomspace's) are skipped."""
        try:
            known = {f.name for f in fields(cls)}
            values = {name: part for name, part in value.items() if name in known}
            values["configs"] = tuple(values["configs"])
            if values.get("sample") is not None:
                values["sample"] = Sample(**values["sample"])
            return cls(**values)
        except (AttributeError, KeyError, TypeError, RoomspaceError) as error:
            raise RoomspaceError(f"{where}: not a predictions header ({type(error).__name__}: {error})") from None


def templates_sha256() -> str:
    import hashlib

    return hashlib.sha256("".join(data_text(name) for name in TEMPLATE_FILES).encode()).hexdigest()


def header_of(record: object) -> object | None:
    """The header value of a parsed line, or None when the line is an answer."""
    if isinstance(record, dict) and HEADER in record and "id" not in record:
        return record[HEADER]
    return None


def read_header(path: Path) -> RunHeader | None:
    """The header on the first line of a predictions file, None when it has none (or is empty)."""
    try:
        with open(path, encoding="utf-8-sig", newline="\n") as lines:
            first = lines.readline()
    except FileNotFoundError:
        raise RoomspaceError(f"predictions file {path} does not exist") from None
    except UnicodeDecodeError:
        raise RoomspaceError(f"predictions file {path} is not UTF-8 text") from None
    try:
        value = header_of(json.loads(first))
    except ValueError:
        return None
    return None if value is None else RunHeader.of(value, f"{path}:1")


def first_model(path: Path) -> str | None:
    """The model a predictions file names: its header's, else its first answer's "model" field."""
    header = read_header(path)
    if header is not None:
        return header.model
    with open(path, encoding="utf-8-sig", newline="\n") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                return None
            if isinstance(record, dict) and "id" in record:
                model = record.get("model")
                return model if isinstance(model, str) and model.strip() else None
    return None


class PredictionsWriter:
    """A predictions file being written: the header at once, then every answer appended as it comes,
    a whole line per write() on a file opened for appending (a reader, or a killed run, never sees
    part of one), then `finish` sorts it."""

    def __init__(self, path: Path, header: RunHeader | None, begin: bool = True) -> None:
        """`begin`: start the file anew (its header alone); else add to the answers already in it (a person's
        session resumed by `roomspace serve`)."""
        self.path = path
        if begin:
            first = b"" if header is None else (header.line() + "\n").encode("utf-8")
            write_atomic(path, lambda target: target.write_bytes(first))
        self.lock = threading.Lock()
        self.descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)

    def add(self, record: Mapping) -> None:
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self.lock:
            written = os.write(self.descriptor, data)
            while written < len(data):  # a short write (a full disk is an OSError instead): write the rest
                written += os.write(self.descriptor, data[written:])

    def close(self) -> None:
        os.close(self.descriptor)

    def finish(self, order: Sequence[str]) -> None:
        """Close, then rewrite the file sorted: the header, then answers in `order` of ids, then sample."""
        self.close()
        position = {item: k for k, item in enumerate(order)}
        data = self.path.read_bytes().split(b"\n")[:-1]
        head = [line for line in data[:1] if header_of(json.loads(line)) is not None]

        def key(line: bytes) -> tuple[int, int]:
            record = json.loads(line)
            return position[record["id"]], record.get("sample", 0)

        answers = sorted(data[len(head):], key=key)
        write_atomic(self.path, lambda target: target.write_bytes(b"".join(line + b"\n" for line in head + answers)))
