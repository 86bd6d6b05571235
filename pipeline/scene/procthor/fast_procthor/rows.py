"""Rows of a ProcTHOR frame held as the frame and a mask, and `.sample()`'s draw on row positions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
from pandas.core.dtypes.cast import maybe_box_native
from procthor.generation.objects import ProceduralRoom


_frame_reads: dict[int, tuple[pd.DataFrame, dict]] = {}


def made_once(frame: pd.DataFrame) -> KeptRows:
    """All rows of `frame`, a frame made once per process and never changed, as KeptRows sharing its reads
    with every other KeptRows of it (the frame is held here with them)."""
    found = _frame_reads.get(id(frame))
    if found is None or found[0] is not frame:
        found = _frame_reads[id(frame)] = (frame, {})
    return KeptRows(frame, found[1])


class KeptRows:
    """A frame and which of its rows stock would still hold.

    After assigning such a frame (a room's `spawnable_assets` or `spawnable_asset_groups`, the
    paintings), stock only narrows it (boolean filters, `drop` of a row's label), each time a
    frame `take` over every column. Successive boolean filters keep the rows where all their
    masks hold, in frame order, with their labels; so the first frame is kept with one mask,
    narrowed in place. `reads` holds the columns and rows read so far: a frame made once per
    process (never changed) is given the same dict every time, so each is read once.
    """

    def __init__(self, frame: pd.DataFrame, reads: dict | None = None) -> None:
        self.frame = frame
        self.keep = np.ones(len(frame), dtype=bool)
        self._reads: dict[tuple, object] = {} if reads is None else reads

    def column(self, name: str) -> np.ndarray:
        """All of the frame's column `name` as numpy (a str column as an object array of str)."""
        key = ("column", name)
        if key not in self._reads:
            self._reads[key] = self.frame[name].to_numpy()
        return self._reads[key]

    def generator(self, position: int):
        """The `assetGroupGenerator` of row `position` (of a frame of asset groups)."""
        return self.column("assetGroupGenerator")[position]

    def kept(self) -> pd.DataFrame:
        """The frame stock would hold: the kept rows."""
        return self.frame if self.keep.all() else self.frame[self.keep]

    def record(self, position: int, with_index: bool = False) -> dict:
        """Row `position` as `to_dict(orient="records")` of its one-row frame gives it (after `reset_index()`
        if `with_index`: the index first, under its name). A new dict each time.

        `to_dict` yields Python scalars, numpy values boxed by `maybe_box_native`. A column's
        `tolist()` gives the same Python scalars (and other objects as they are), boxed here the
        same way; every row is read at once, a column at a time, when the first is asked for.
        """
        key = ("records", with_index)
        if key not in self._reads:
            columns = self.frame.columns.tolist()
            values = [map(maybe_box_native, self.frame[column].tolist()) for column in columns]
            if with_index:
                columns, values = [self.frame.index.name, *columns], [self.frame.index.tolist(), *values]
            self._reads[key] = [dict(zip(columns, row)) for row in zip(*values)] if columns else [{}] * len(self.frame)
        return dict(self._reads[key][position])

    def drawn(self, position: int) -> DrawnRow:
        """Row `position` as stock reads the one-row frame `.sample()` returns when it draws it."""
        return DrawnRow(self, position)


class DrawnRow:
    """A row drawn by `.sample()`, read as stock reads the one-row frame it returns: `row[column].iloc[0]`.

    That is the column's value at the row as the column's numpy array holds it (a numpy scalar of a
    numeric column, a str), which is what `iloc[0]` of the frame's column gives; `row[column]` is a
    sequence of that one value under `iloc`, the only way stock reads these frames (the wall
    objects, `get_wall_placement_info`). Making the frame and its column costs more than placing
    the object.
    """

    def __init__(self, rows: KeptRows, position: int) -> None:
        self._rows, self._position = rows, position

    def __getitem__(self, column: str) -> SimpleNamespace:
        return SimpleNamespace(iloc=(self._rows.column(column)[self._position],))


class KeptRowsAttribute:
    """A `ProceduralRoom` attribute held as KeptRows: assigning a frame keeps all of its rows, reading
    gives the kept ones (so stock code reading or assigning it sees what it would without the swap)."""

    def __init__(self, name: str) -> None:
        self.key = f"_kept_{name}"

    def __get__(self, room: ProceduralRoom | None, owner: type | None = None):
        return self if room is None else self.rows(room).kept()

    def __set__(self, room: ProceduralRoom, frame: pd.DataFrame) -> None:
        self.hold(room, KeptRows(frame))

    def hold(self, room: ProceduralRoom, rows: KeptRows) -> None:
        """The room's attribute is `rows`."""
        room.__dict__[self.key] = rows

    def rows(self, room: ProceduralRoom) -> KeptRows:
        return room.__dict__[self.key]


def sample_position(positions: np.ndarray) -> int:
    """The row that `.sample()` of the frame of these rows draws: pandas takes row
    `np.random.choice(len(frame), size=1, replace=False)[0]`, the same call as here."""
    return positions[np.random.choice(len(positions), size=1, replace=False)[0]]
