"""A person answering a build's questions: the seeded sample `run-model --limit N --seed S` asks, written
to a predictions file `score` reads as the system `human:NAME`.

The file (`human-NAME.jsonl` in the predictions folder) starts with the header run-model writes
(pipeline.evaluate.predictions.RunHeader: the configurations, the sample, the build's manifest and data
sha256), naming the person as the model; every answer is appended the moment it is given, a whole line
per write, with the seconds the question was on screen. Opening the same name again resumes at the first
question of the sample not yet answered; a file of that name that answers another sample or build is
refused, never overwritten. The person sees the model's prompt (the row's `prompt` column and its image):
the human row and the model rows answer the same thing.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import RoomspaceError
from pipeline.evaluate.predictions import PredictionsWriter, RunHeader, header_of, read_header, templates_sha256
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.evaluate.sample import Sample, sample_ids
from pipeline.serve.catalogue import Catalogue
from pipeline.text.prompts import DEFAULT_STYLE

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")  # a person's name: also part of a file name
SYSTEM = "human:{name}"  # the model a person's file names: `score`'s system
SERVER = "a person in roomspace serve"  # where a run-model file names its endpoint
CHOICE_TYPES = ("YN", "FR")  # answered by choosing options; other question types (maps, plans) by writing text
# what a session's file must share with the session asked for to be resumed (the build by its data, however its
# folder is spelled)
SAME_RUN = ("model", "server", "split", "configs", "data_sha256", "sample")


def predictions_path(folder: Path, name: str) -> Path:
    if not NAME.fullmatch(name):
        raise RoomspaceError(f"{name!r} is no name for a person: use 1-40 letters, digits, '-' or '_', "
                             "starting with a letter or digit")
    return folder / f"human-{name}.jsonl"


class AlreadyAnswered(RoomspaceError):
    """A second answer to a question: answers are not changed."""


@dataclass
class Session:
    """A person's answers to one sample: the questions (configuration, id) in sample order, those answered."""

    name: str
    path: Path
    header: RunHeader
    questions: tuple[tuple[str, str], ...]
    answered: set[str] = field(default_factory=set)
    # one answer written at a time: two posts of the same question (a double click) never write two lines
    _writing: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def system(self) -> str:
        return self.header.model

    def next(self) -> tuple[str, str] | None:
        """The first question of the sample not answered yet; None when every one is."""
        return next((asked for asked in self.questions if asked[1] not in self.answered), None)

    def record(self, question: str, prediction: str, seconds: float | None) -> None:
        """Append one answer to the file at once (a whole line per write, as run-model writes)."""
        if question not in {asked for _, asked in self.questions}:
            raise RoomspaceError(f"{question} is not a question of {self.name}'s sample "
                                 f"{self.header.sample.describe()}")
        with self._writing:
            if question in self.answered:
                raise AlreadyAnswered(f"{self.name} has answered {question} already; answers are not changed")
            writer = PredictionsWriter(self.path, self.header, begin=False)
            try:
                writer.add({"id": question, "prediction": prediction, "model": self.system,
                            "seconds": None if seconds is None else round(seconds, 1)})
            finally:
                writer.close()
            self.answered.add(question)


def begin(rows: BenchmarkRows, catalogue: Catalogue, folder: Path, name: str, configs: Sequence[str],
          sample: Sample) -> Session:
    """A new session of `name` on the sample of `configs`, or the one its file holds when it asks the same
    sample of the same build (resumed)."""
    path = predictions_path(folder, name)
    header = RunHeader(SYSTEM.format(name=name), SERVER, 0.0, None, 1, DEFAULT_STYLE, templates_sha256(), rows.location,
                       rows.split, tuple(configs), rows.manifest_sha256, rows.data_sha256(configs), sample)
    if path.exists():
        session = resume(rows, catalogue, folder, name)
        if any(getattr(session.header, part) != getattr(header, part) for part in SAME_RUN):
            raise RoomspaceError(f"{path.name} holds {name}'s answers to {_asked(session.header)}, not to "
                                 f"{_asked(header)}; resume that one, or answer this one under another name")
        return session
    folder.mkdir(parents=True, exist_ok=True)
    PredictionsWriter(path, header).close()
    return Session(name, path, header, _questions(rows, catalogue, header))


def resume(rows: BenchmarkRows, catalogue: Catalogue, folder: Path, name: str) -> Session:
    """The session `name`'s file holds, at the first question it has not answered."""
    path = predictions_path(folder, name)
    if not path.exists():
        raise RoomspaceError(f"no answers of {name} in {folder} yet: begin a session on the answer page")
    header = read_header(path)
    if header is None or header.sample is None:
        raise RoomspaceError(f"{path.name} is not a person's session (no header naming its sample)")
    missing = [config for config in header.configs if config not in rows.configs]
    if missing:
        raise RoomspaceError(f"{path.name} answers configurations this build lacks: {', '.join(missing)}")
    if header.split != rows.split or header.data_sha256 != rows.data_sha256(header.configs):
        raise RoomspaceError(f"{path.name} answers {header.source} ({header.split} split), not the build served "
                             "here; serve that build to resume it")
    return Session(name, path, header, _questions(rows, catalogue, header), _answered(path))


def _asked(header: RunHeader) -> str:
    return f"the sample {header.sample.describe()} of {', '.join(header.configs)} of {header.source}"


def _questions(rows: BenchmarkRows, catalogue: Catalogue, header: RunHeader) -> tuple[tuple[str, str], ...]:
    """The sample's questions in sample order, each with its configuration."""
    ids = sample_ids(rows, header.configs, header.sample)
    wanted = pa.array(ids, pa.string())
    config_of: dict[str, str] = {}
    for config in header.configs:
        listed = catalogue.listing(config).table.column("id")
        config_of.update(dict.fromkeys(listed.filter(pc.is_in(listed, value_set=wanted)).to_pylist(), config))
    return tuple((config_of[question], question) for question in ids)


def _answered(path: Path) -> set[str]:
    """The ids a predictions file has an answer line for (a last line cut short is not one)."""
    answered = set()
    with open(path, encoding="utf-8", newline="\n") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith("\n"):
                break
            try:
                record = json.loads(line)
            except ValueError:
                raise RoomspaceError(f"{path}:{number}: not a JSON line (edited by hand?); mend or remove it") from None
            if header_of(record) is None:
                answered.add(record["id"])
    return answered


def prediction_of(row: dict, chosen: Sequence[str], written: str) -> str:
    """The answer text a person's choice makes, in the words `score` parses: YN "Yes" or "No", FR the chosen
    options in their order, comma-separated; a map or a plan as written."""
    if row["question_type"] not in CHOICE_TYPES:
        if not written.strip():
            raise RoomspaceError("write an answer in the box (the prompt says its form)")
        return written
    allowed = ("Yes", "No") if row["question_type"] == "YN" else tuple(row["options"])
    unknown = [choice for choice in chosen if choice not in allowed]
    if unknown or not chosen:
        raise RoomspaceError(f"choose {'Yes or No' if row['question_type'] == 'YN' else 'one or more options'} "
                             f"of {', '.join(allowed)}" + (f" (not {unknown[0]!r})" if unknown else ""))
    if row["question_type"] == "YN" and len(chosen) > 1:
        raise RoomspaceError("choose one of Yes and No")
    return ", ".join(option for option in allowed if option in chosen)
