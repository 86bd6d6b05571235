"""A benchmark's rows wherever a user has them: a built folder, a Hub snapshot, or OWNER/NAME on the Hub.

One split is read at a time: `test`, the benchmark, unless another is asked for (`train` and
`validation`, where the build has them).

* A built folder (`roomspace build --out`): its manifest lists every configuration and shard; an
  unfinished build is refused, and so is a file that no longer matches the sha256 the manifest
  lists (checked once per file, before its first rows are read: only the shards read are hashed).
* A Hub snapshot (what `push` uploads: README.md and data/<config>/*.parquet, no manifest): the
  card's YAML header lists the configurations, their files per split and the default one.
* `OWNER/NAME`: the dataset repository is fetched (or found in the local Hugging Face cache) with
  `huggingface_hub.snapshot_download`, then read as a Hub snapshot. Offline and not cached, it is
  a one-line error.

Rows are read shard by shard and column by column (`batches`), so scoring a 10K build never
holds more than one shard's chosen columns at once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.dataset.layout import questions
from pipeline.dataset.manifest import (DATASET_SPLIT, MANIFEST, build_configs, build_splits, listed_checksums,
                                       read_manifest, shard_files)
from pipeline.errors import RoomspaceError
from pipeline.files import file_sha256

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
CARD = "README.md"
ROWS_AT_ONCE = 64  # file rows read, and question rows turned into dicts, together by `rows`


@dataclass(frozen=True)
class BenchmarkRows:
    location: str  # as the user gave it
    configs: tuple[str, ...]  # every configuration, in card order
    files: dict[str, tuple[Path, ...]]  # configuration -> its Parquet files of `split`, in row order
    default: str | None  # the configuration the card marks as default
    split: str = DATASET_SPLIT
    splits: tuple[str, ...] = (DATASET_SPLIT,)  # every split the source has
    checksums: dict[Path, str] = field(default_factory=dict)  # a build's files as its manifest lists them
    manifest_sha256: str | None = None  # of a build's manifest.json; None for a Hub snapshot
    _hashed: dict[Path, str] = field(default_factory=dict, compare=False, repr=False)  # files checked or hashed

    def choose(self, configs: str | None) -> tuple[str, ...]:
        """`configs` (comma-separated names) checked against what is here; None means every one. A
        configuration the card declares but whose files are not here (a Hub snapshot downloaded in
        part) is refused only when chosen."""
        if configs is None:
            names = self.configs
        else:
            names = tuple(dict.fromkeys(part.strip() for part in configs.split(",") if part.strip()))
            if not names:
                raise RoomspaceError("no configuration given")
        for name in names:
            if name not in self.configs:
                raise RoomspaceError(f"{self.location} has no configuration {name}; it has {', '.join(self.configs)}")
        absent = [name for name in names if not self.files[name]]
        if absent:
            held = [name for name in self.configs if self.files[name]]
            others = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
            choice = f", or choose among those it holds with --config: {', '.join(held)}" if held else ""
            raise RoomspaceError(f"{self.location}: no Parquet files of configuration {absent[0]}{others} are here; "
                                 f"download them{choice}")
        return names

    def batches(self, config: str, columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
        """The configuration's questions, a row each, one shard at a time; only `columns` (those a
        question has), a vision question with its image (pipeline.dataset.layout)."""
        yield from self._read(config, columns, None)

    def sha256(self, path: Path) -> str:
        """A file's sha256, computed once; a build's file must be the one its manifest lists."""
        if path not in self._hashed:
            listed = self.checksums.get(path)
            if listed is not None and not path.is_file():
                raise RoomspaceError(f"{path}: listed in {MANIFEST} but missing; re-run the build command to redo it")
            found = file_sha256(path)
            if listed is not None and found != listed:
                raise RoomspaceError(f"{path}: its sha256 differs from the one {MANIFEST} lists (damaged, edited or "
                                     "trimmed by hand); re-run the build command to redo it (`roomspace validate` "
                                     "checks the whole build)")
            self._hashed[path] = found
        return self._hashed[path]

    def data_sha256(self, configs: Sequence[str]) -> str:
        """sha256 of the files `configs` are read from (each file's configuration, name and sha256): what
        answers to these configurations were answers to."""
        listing = "".join(f"{config}/{path.name} {self.sha256(path)}\n" for config in configs
                          for path in self.files[config])
        return hashlib.sha256(listing.encode()).hexdigest()

    def _read(self, config: str, columns: Sequence[str] | None, file_rows: int | None) -> Iterator[pa.Table]:
        for path in self.files[config]:
            if path in self.checksums:
                self.sha256(path)  # a build's file is checked against its manifest before it is read
            try:
                # a file may hold other configurations' rows too (pipeline.dataset.layout): only this one's are read
                yield from questions(pq.ParquetFile(path), columns, file_rows, config, str(path))
            except (OSError, pa.ArrowException) as error:
                raise RoomspaceError(f"{path}: not a readable Parquet file ({error}); "
                                     "rebuild or re-download it") from None

    def rows(self, configs: Sequence[str], columns: Sequence[str] | None = None,
             keep: Collection[str] | None = None) -> Iterator[dict]:
        """Question dicts, made a few at a time: a vision shard's images never all become Python objects at once.
        With `keep`, only the questions whose ids it holds (a sample), in row order."""
        kept = None if keep is None else pa.array(list(keep), pa.string())
        for config in configs:
            for table in self._read(config, columns if kept is None or columns is None else [*columns, "id"],
                                    ROWS_AT_ONCE):
                if kept is not None:
                    table = table.filter(pc.is_in(table.column("id"), value_set=kept))
                    if columns is not None and "id" not in columns:
                        table = table.drop_columns(["id"])
                for batch in table.to_batches(max_chunksize=ROWS_AT_ONCE):
                    yield from batch.to_pylist()

    def count(self, configs: Sequence[str]) -> int:
        """How many questions the configurations hold (their ids are read)."""
        return sum(table.num_rows for config in configs for table in self.batches(config, ["id"]))

    def ids(self, configs: Sequence[str]) -> set[str]:
        """The id of every row of `configs`: reads only the id column."""
        return {i for config in configs for table in self.batches(config, ["id"])
                for i in table.column("id").to_pylist()}


def open_rows(location: str | Path, split: str = DATASET_SPLIT) -> BenchmarkRows:
    """One split of the benchmark at `location`: a built folder, a Hub snapshot folder, or a Hub id OWNER/NAME."""
    path = Path(location)
    if path.is_dir():
        if (path / MANIFEST).exists():
            return _built(str(location), path, split)
        if (path / CARD).exists():
            return _snapshot(str(location), path, split)
        raise RoomspaceError(f"{location} is not a roomspace build or Hub snapshot (no {MANIFEST} or {CARD})")
    if path.exists():
        raise RoomspaceError(f"{location} is a file, not a roomspace build folder")
    if HUB_ID.fullmatch(str(location)):
        return _snapshot(str(location), _download(str(location)), split)
    raise RoomspaceError(f"{location} is neither a folder nor a Hub dataset id OWNER/NAME")


def _no_split(location: str, split: str, splits: Sequence[str]) -> RoomspaceError:
    return RoomspaceError(f"{location} has no {split} split; it has {', '.join(splits)} "
                          "(train and validation come from `roomspace build --train-rooms N --validation-rooms M`)")


def _built(location: str, out: Path, split: str) -> BenchmarkRows:
    manifest = read_manifest(out)
    if split not in build_splits(manifest):
        raise _no_split(location, split, build_splits(manifest))
    configs = build_configs(manifest)
    files = {config: tuple(shard_files(out, manifest, config, split)) for config in configs}
    return BenchmarkRows(location, configs, files, configs[0] if configs else None, split, build_splits(manifest),
                         listed_checksums(out, manifest), file_sha256(out / MANIFEST))


def _snapshot(location: str, folder: Path, split: str) -> BenchmarkRows:
    import yaml  # a dependency of huggingface_hub and datasets

    text = (folder / CARD).read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    try:
        entries = yaml.safe_load(match.group(1))["configs"] if match else None
        configs = {entry["config_name"]: entry for entry in entries}
    except (yaml.YAMLError, KeyError, TypeError):
        configs = None
    if not configs:
        raise RoomspaceError(f"{location}: its {CARD} declares no configurations (not a roomspace dataset card)")
    files = {}
    splits = tuple(dict.fromkeys(part.get("split", DATASET_SPLIT) for entry in configs.values()
                                 for part in entry.get("data_files", [])))
    for name, entry in configs.items():
        parts = entry.get("data_files", [])
        patterns = [part["path"] for part in parts if part.get("split", DATASET_SPLIT) == split]
        if not patterns:
            raise _no_split(location, split, list(dict.fromkeys(part.get("split", DATASET_SPLIT) for part in parts)))
        files[name] = tuple(sorted({p for pattern in patterns for p in folder.glob(pattern)}))  # () if not downloaded
    default = next((name for name, entry in configs.items() if entry.get("default")), None)
    return BenchmarkRows(location, tuple(configs), files, default, split, splits)


def _download(repo: str) -> Path:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=[CARD, "data/**"]))
    except Exception as error:  # offline, unknown repository, no access: all end the command the same way
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RoomspaceError(f"cannot get the dataset {repo} from the Hugging Face Hub ({reason}); "
                             "check the name and the network, or give a local folder") from None
