"""A build folder's manifest.json: the one reader and writer, and where each shard lives.

The manifest records the build's identity (what makes two builds the same build), every shard
written so far with its files' sha256 and row counts and its statistics, and whether the build
is complete. Readers that only need the listing (the evaluation commands) import this module
alone: it needs neither the builder nor the row schemas.

A shard's entry is a record, `ShardEntry`, its statistics `Stats` per configuration (made by
pipeline.dataset.card.room_stats): both are declared here, read and written through
pipeline.typed_json, so a damaged entry is refused when the manifest is read, naming the shard and
the field. The identity, the house check and `complete` stay plain JSON values.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pipeline.errors import RoomspaceError
from pipeline.files import write_atomic
from pipeline.text.kinds import parse
from pipeline.typed_json import JSONMismatch, from_json, to_json

MANIFEST = "manifest.json"
DATASET_SPLIT = "test"  # the benchmark: what evaluation reads unless told otherwise
TRAINING_SPLITS = ("train", "validation")  # optional, of rooms disjoint from the test rooms (pipeline.dataset.build)
SPLITS = (*TRAINING_SPLITS, DATASET_SPLIT)  # card order
REBUILD = "delete the folder and re-run its build command"


class Counts:
    """A record of counts: `a + b` adds two of them field by field, a mapping key by key (a's keys
    first, in their order, then b's new ones), and a section one of them lacks (None) is the other's.
    Counts only, so that shards add up to the same sums in any grouping. `+` makes a new record and
    changes neither; a record is changed only while it is counted (`room_stats`)."""

    def __add__(self, other: Self) -> Self:
        return _total([self, other])

    @classmethod
    def total(cls, records: Iterable[Self]) -> Self:
        """`sum(records, cls())`, each section added up once: `sum` makes the running total again at every
        record (a shard's statistics, 100 rooms' of each configuration, took a quarter of its writing)."""
        return _total([cls(), *records])


def _total(parts: list) -> Any:
    """The parts added up in order, as `Counts.__add__` says; those that are None are left out."""
    present = [part for part in parts if part is not None]
    if len(present) < 2:
        return present[0] if present else None
    first = present[0]
    if isinstance(first, Counts):
        return type(first)(**{f.name: _total([getattr(part, f.name) for part in present])
                              for f in dataclasses.fields(first)})
    if isinstance(first, dict):
        by_key: dict[Any, list] = {}
        for part in present:
            for key, value in part.items():
                by_key.setdefault(key, []).append(value)
        return {key: _total(values) for key, values in by_key.items()}
    return sum(present)


# The statistics of a configuration over some rooms (the card's). Field names are manifest.json's keys.

@dataclass
class SettingCounts(Counts):
    """One setting's questions."""

    rows: int = 0
    yes: int = 0  # YN questions answered Yes
    no: int = 0
    sizes: dict[str, int] = field(default_factory=dict)  # FR questions by answer-set size ("3": 12)
    # Once the setting has FR questions: how many the reasoning path and the layout decide, and their
    # summed tightness in millionths (counts, so that they add up).
    path_decides: int | None = None
    layout_decides: int | None = None
    tightness_millionths: int | None = None
    asked: dict[str, int] | None = None  # the rcc8 setting's YN questions by the asked pair's relation
    levels: dict[str, int] | None = None  # its questions on the difficulty ladder by level ("0" ... "3"), if any
    # A hard setting's whole-story questions by form. The counts above include them, but for `sizes` and
    # the FR path, layout and tightness counts: those are its pair questions' alone.
    forms: dict[str, QuestionCounts] | None = None


@dataclass
class PairCounts(Counts):
    """An image's pair questions, each counted once (in its first modality)."""

    FR: int = 0
    Yes: int = 0  # YN pair questions answered Yes
    No: int = 0
    answers: dict[str, int] | None = None  # FR pair questions by their answer, once there are any


@dataclass
class QuestionCounts(Counts):
    """The questions of one way of asking: an agent framing's (pipeline.text.agents.FRAMINGS), a hard
    setting's whole-story form's (pipeline.text.items.FORMS)."""

    FR: int = 0
    Yes: int = 0
    No: int = 0
    sizes: int = 0  # the FR questions' answer-set sizes, summed


@dataclass
class MapCounts(Counts):
    """One setting's map questions (question type MAP): what a drawn map must keep."""

    maps: int = 0
    facts: int = 0  # the stories' stated facts, summed
    pair_facts: int = 0  # of them, those relating two objects (directions, distances)
    objects: int = 0  # the objects a map draws, summed (an egocentric story's observer among them)
    tightness_millionths: int = 0  # the stories' tightness (pipeline/spatial/difficulty.py), summed


@dataclass
class Stats(Counts):
    """One configuration's statistics over some rooms; `Stats()` is none."""

    rooms: int = 0  # rooms with rows
    skipped_rooms: int = 0  # rooms with fewer than n prominent objects: no rows
    rows: int = 0  # questions
    room_types: dict[str, int] = field(default_factory=dict)
    hops: dict[str, int] = field(default_factory=dict)  # the first setting's top-down FR questions by hops
    settings: dict[str, SettingCounts] = field(default_factory=dict)
    topology: dict[str, int] = field(default_factory=dict)  # footprint relations (RCC-8), once per room
    # An image kind's section (Kind.images): the images its questions go with, and its pair questions by
    # modality, by image and answer, and the rooms that have any.
    images: int | None = None
    pair_modalities: dict[str, int] | None = None
    pair_rooms: int | None = None
    pair_questions: dict[str, PairCounts] | None = None
    # An agent kind's section (its questions are pipeline.text.agents.AgentItem): by framing, and by
    # frame changes and the angle turned ("1 changes, 90 degrees").
    agent_kinds: dict[str, QuestionCounts] | None = None
    frame_angles: dict[str, int] | None = None
    # A map kind's section (Kind.questions asks MAP): its questions by setting, not counted as FR questions.
    maps: dict[str, MapCounts] | None = None


@dataclass(frozen=True)
class Listed:
    """A shard file as the manifest lists it."""

    sha256: str
    rows: int  # file rows: questions


@dataclass(frozen=True)
class ShardEntry:
    """One shard's entry in the manifest: its rooms, its files (a Parquet file per configuration or, for
    configurations that share their images, per such group: `shard_path`) and its statistics per
    configuration."""

    rooms: tuple[int, int]  # house indices: start and stop
    files: dict[str, Listed]
    stats: dict[str, Stats]


def data_folder(config: str) -> str:
    """The folder of a configuration's files, relative to the build folder: data/<config>, or, for a
    kind whose images other kinds show too (Kind.shared_images: the vision kinds), data/images-<base>,
    shared by every such configuration of the base and its balanced counterpart. A shard of that
    folder is one file holding all their rows, each configuration's in turn, so that a PNG several of
    them show is stored once (pipeline.dataset.layout); each configuration reads its own rows."""
    kind, base = parse(config)
    return f"data/images-{base.paper.name}" if kind.shared_images else f"data/{config}"


def shard_path(config: str, shard: int, split: str = DATASET_SPLIT) -> str:
    """Where shard `shard` of `split` of configuration `config` lives, relative to the build folder."""
    return f"{data_folder(config)}/{split}-{shard:05d}.parquet"


def shard_key(split: str, shard: int) -> str:
    """A shard's key in the manifest: its number for a test shard (as builds without training splits
    have always written it), "train-3" for a training split's."""
    return str(shard) if split == DATASET_SPLIT else f"{split}-{shard}"


def key_split(key: str) -> tuple[str, int]:
    """(split, shard) of a manifest key: `shard_key` undone."""
    split, _, shard = key.rpartition("-")
    return split or DATASET_SPLIT, int(shard)


def read_manifest(out: Path, complete: bool = True) -> dict:
    """The manifest of the build in `out`, its shard entries as `ShardEntry` records; with `complete`,
    an unfinished build is refused too. A damaged shard entry is a one-line RoomspaceError naming it."""
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        manifest["identity"]["rooms"], manifest["identity"]["configs"], manifest["shards"]
    except (OSError, ValueError, KeyError, TypeError):
        raise RoomspaceError(f"{out} is not a roomspace build (no readable {MANIFEST})") from None
    if complete and manifest.get("complete") is not True:
        raise RoomspaceError(f"{out} is an unfinished build; re-run its build command to complete it")
    if not isinstance(manifest["shards"], dict):
        raise RoomspaceError(f"{out / MANIFEST}: its shards are not a mapping of shard keys to entries; {REBUILD}")
    manifest["shards"] = {key: _shard_entry(out, key, entry) for key, entry in manifest["shards"].items()}
    return manifest


def _shard_entry(out: Path, key: str, entry: object) -> ShardEntry:
    try:
        return from_json(ShardEntry, entry)
    except JSONMismatch as mismatch:
        raise RoomspaceError(f"{out / MANIFEST}: shard {key}'s entry is damaged ({mismatch}); {REBUILD}") from None


def write_manifest(out: Path, manifest: dict) -> None:
    """Write `manifest` (`read_manifest`'s shape: shard entries as records) as `files.write_json` writes
    its JSON, each shard's entry laid out once (`_entry_text`): a build writes its manifest after every
    shard, and laying out every entry again each time took a 10K build about 8 s of its main process."""
    head = json.dumps({**manifest, "shards": {}}, indent=2, sort_keys=True)
    shards = ",\n".join(f"    {json.dumps(key)}: {_entry_text(key, entry)}"
                         for key, entry in sorted(manifest["shards"].items()))
    text = head.replace(_NO_SHARDS, f'\n  "shards": {{\n{shards}\n  }}', 1) if shards else head
    write_atomic(out / MANIFEST, lambda target: target.write_text(text + "\n", encoding="utf-8"))


_NO_SHARDS = '\n  "shards": {}'  # where the entries go in the manifest's text laid out without them
# Each shard key's entry and its text as it stands in the manifest (two levels in: its lines after the
# first indented by four spaces more than alone), held while the manifest holds the same record: a
# written shard's entry is never changed, and a manifest read again holds new records.
_entry_texts: dict[str, tuple[ShardEntry, str]] = {}


def _entry_text(key: str, entry: ShardEntry) -> str:
    held = _entry_texts.get(key)
    if held is None or held[0] is not entry:
        held = _entry_texts[key] = entry, json.dumps(to_json(entry), indent=2, sort_keys=True).replace("\n", "\n    ")
    return held[1]


def build_configs(manifest: dict) -> tuple[str, ...]:
    """Every configuration the build writes, in card order."""
    return tuple(manifest["identity"]["configs"])


def build_splits(manifest: dict) -> tuple[str, ...]:
    """The splits the build writes, in card order: the test split, and the training splits its identity
    gives rooms (`train_rooms`, `validation_rooms`)."""
    identity = manifest["identity"]
    return tuple(split for split in SPLITS if split == DATASET_SPLIT or identity.get(f"{split}_rooms"))


def shard_files(out: Path, manifest: dict, config: str, split: str = DATASET_SPLIT) -> list[Path]:
    """The Parquet files of one configuration and split, in shard order, as the manifest lists them (a
    file shared with other configurations too: `data_folder`)."""
    prefix = f"{data_folder(config)}/"
    entries = sorted((key_split(key)[1], entry) for key, entry in manifest["shards"].items()
                     if key_split(key)[0] == split)
    return [out / path for _, entry in entries for path in entry.files if path.startswith(prefix)]


def listed_checksums(out: Path, manifest: dict) -> dict[Path, str]:
    """Every file the manifest lists (under `out`) -> its sha256 as listed."""
    return {out / path: listed.sha256 for entry in manifest["shards"].values()
            for path, listed in entry.files.items()}
