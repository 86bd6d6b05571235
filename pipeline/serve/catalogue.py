"""Where every question of a build lies, so that a page reads only the row groups its questions are in.

A configuration's `Listing` is built once, the first time it is asked for: the few columns a browser
filters by (FILTERS), read row group by row group from each of its Parquet files (each file checked
against the manifest's sha256 first, as every reader does), with each question's file, row group and
place in that row group. A page then filters the listing in memory and reads, from the row groups of
its questions alone, the columns it shows (`Catalogue.read`): a page of RoomSpace-10K reads a few row
groups, never a whole configuration. A shared file (pipeline.dataset.layout: the vision kinds' pictures
stored once) holds other configurations' rows too; the places count those, so a row group read whole
is indexed directly.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.dataset.layout import CONFIG, config_columns
from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import BenchmarkRows
from pipeline.parallel import usable_cores

FILTERS = ("setting", "view", "question_type", "level")  # what a configuration's questions are browsed by
LISTED = ("id", "room_id", *FILTERS)  # a listing's columns besides where each question lies
PLACE = ("file", "group", "offset")  # the file (its position in the configuration's files), row group, row in it


@dataclass(frozen=True)
class Listing:
    """One configuration's questions in row order: LISTED and PLACE columns, and each filter's values."""

    config: str
    table: pa.Table
    values: dict[str, tuple]  # filter -> its values in first-met order (None left out)

    def select(self, chosen: Mapping[str, object]) -> pa.Table:
        """The questions whose filters have the chosen values (a filter not chosen keeps every question)."""
        table = self.table
        for name, value in chosen.items():
            table = table.filter(pc.equal(table.column(name), pa.scalar(value, table.schema.field(name).type)))
        return table

    def position_of_room(self, room: str) -> int | None:
        """The first row of room id `room` in `table`, None when the configuration has no question of it."""
        found = pc.index(self.table.column("room_id"), room).as_py()
        return None if found < 0 else found

    def position(self, question: str) -> int | None:
        """The row of question id `question` in `table`, None when the configuration has no such question."""
        found = pc.index(self.table.column("id"), question).as_py()
        return None if found < 0 else found


class Catalogue:
    """The listings of a build's configurations, each made once (and safe to ask from several threads)."""

    def __init__(self, rows: BenchmarkRows) -> None:
        self.rows = rows
        self._listings: dict[str, Listing] = {}
        self._locks = {config: threading.Lock() for config in rows.configs}  # one listing made at a time each

    def listing(self, config: str) -> Listing:
        if config not in self.rows.configs:
            raise RoomspaceError(f"{self.rows.location} has no configuration {config}")
        with self._locks[config]:
            if config not in self._listings:
                self._listings[config] = self._list(config)
            return self._listings[config]

    def warm(self) -> threading.Thread:
        """Make every configuration's listing, in card order, in a thread of its own: started with the server,
        so that a configuration's first page seldom waits for its listing (a page asking for one still being
        made waits for it alone). A configuration that cannot be listed is left to the page that asks for it."""
        def make() -> None:
            for config in self.rows.configs:
                try:
                    self.listing(config)
                except RoomspaceError:
                    continue  # its page says why

        thread = threading.Thread(target=make, name="listings", daemon=True)
        thread.start()
        return thread

    def _list(self, config: str) -> Listing:
        self.rows.choose(config)  # a configuration whose files are not here (a partial Hub download) says so
        files = self.rows.files[config]
        for path in files:
            self.rows.sha256(path)
        with ThreadPoolExecutor(usable_cores()) as pool:  # Parquet decodes without the GIL: files side by side
            parts = [part for found in pool.map(lambda numbered: _file_listing(config, *numbered), enumerate(files))
                     for part in found]
        table = pa.concat_tables(parts, promote_options="default") if parts else _listed(
            pa.table({"id": pa.array([], pa.string())}), 0, 0, np.zeros(0, np.int32))
        values = {name: tuple(v for v in pc.unique(table.column(name)).to_pylist() if v is not None)
                  for name in FILTERS}
        return Listing(config, table, values)

    def read(self, config: str, places: pa.Table, columns: Sequence[str] | None = None) -> list[dict]:
        """The rows of `config` at the listing rows `places` (in their order), with `columns` (every column of
        the configuration when None): only the row groups they lie in are read."""
        files = self.rows.files[config]
        wanted: dict[tuple[int, int], list[int]] = {}
        for file, group, offset in zip(*(places.column(name).to_pylist() for name in PLACE)):
            wanted.setdefault((file, group), []).append(offset)
        found: dict[tuple[int, int, int], dict] = {}
        for (file, group), offsets in wanted.items():
            shard = _open(files[file])
            own, _ = config_columns(shard.schema_arrow, config, str(files[file]))
            names = [name for name in own if columns is None or name in columns]
            table = shard.read_row_group(group, columns=names).take(np.array(offsets, np.int32))
            for offset, row in zip(offsets, table.to_pylist()):
                found[file, group, offset] = row
        return [found[place] for place in zip(*(places.column(name).to_pylist() for name in PLACE))]

    def question(self, config: str, question: str, columns: Sequence[str] | None = None) -> dict | None:
        """One question of `config` by its id, None when it has none."""
        listing = self.listing(config)
        position = listing.position(question)
        return None if position is None else self.read(config, listing.table.slice(position, 1), columns)[0]


def _file_listing(config: str, number: int, path) -> list[pa.Table]:
    """The listing rows of `config` in one file (the `number`th of its files), a table per row group."""
    shard = _open(path)
    own, shared = config_columns(shard.schema_arrow, config, str(path))
    wanted = [name for name in LISTED if name in own]
    parts = []
    for group in range(shard.num_row_groups):
        table = shard.read_row_group(group, columns=wanted + ([CONFIG] if shared else []))
        offsets = np.arange(table.num_rows, dtype=np.int32)
        if shared:
            mine = pc.equal(table.column(CONFIG), config)
            table, offsets = table.filter(mine), offsets[mine.to_numpy(zero_copy_only=False)]
        parts.append(_listed(table, number, group, offsets))
    return parts


def _listed(table: pa.Table, file: int, group: int, offsets: np.ndarray) -> pa.Table:
    """A row group's questions as listing rows: LISTED (null where a configuration lacks a filter) and PLACE."""
    size = table.num_rows
    columns = {name: table.column(name) if name in table.column_names else pa.nulls(size, _TYPES.get(name, pa.string()))
               for name in LISTED}
    return pa.table({**columns, "file": np.full(size, file, np.int32), "group": np.full(size, group, np.int32),
                     "offset": offsets})


_TYPES = {"level": pa.int64()}  # a filter column's type where a configuration lacks it (null throughout)


def _open(path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as error:
        raise RoomspaceError(f"{path}: not a readable Parquet file ({error}); rebuild or re-download it") from None
