"""Rows of a ProcTHOR frame held as the frame and a mask, and `.sample()`'s draw on row positions."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.core.dtypes.cast import maybe_box_native
from procthor.generation.objects import ProceduralRoom


class KeptRows:
    """A frame and which of its rows stock would still hold.

    After assigning such a frame (a room's `spawnable_assets` or `spawnable_asset_groups`, the
    paintings), stock only narrows it (boolean filters, `drop` of a row's label), each time a
    frame `take` over every column. Successive boolean filters keep the rows where all their
    masks hold, in frame order, with their labels; so the first frame is kept with one mask,
    narrowed in place.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.keep = np.ones(len(frame), dtype=bool)
        self._columns: dict[str, np.ndarray] = {}

    def column(self, name: str) -> np.ndarray:
        """All of the frame's column `name` as numpy (a str column as an object array of str)."""
        if name not in self._columns:
            self._columns[name] = self.frame[name].to_numpy()
        return self._columns[name]

    def kept(self) -> pd.DataFrame:
        """The frame stock would hold: the kept rows."""
        return self.frame if self.keep.all() else self.frame[self.keep]

    def record(self, position: int, with_index: bool = False) -> dict:
        """Row `position` as `to_dict(orient="records")` of its one-row frame gives it (after `reset_index()`
        if `with_index`: the index first, under its name).

        `to_dict` yields Python scalars, numpy values boxed by `maybe_box_native`; `iloc[position]`
        gives the row's values, boxed here the same way, in column order.
        """
        out = {self.frame.index.name: self.frame.index[position]} if with_index else {}
        out.update(zip(self.frame.columns.tolist(), map(maybe_box_native, self.frame.iloc[position].tolist())))
        return out


class KeptRowsAttribute:
    """A `ProceduralRoom` attribute held as KeptRows: assigning a frame keeps all of its rows, reading
    gives the kept ones (so stock code reading or assigning it sees what it would without the swap)."""

    def __init__(self, name: str) -> None:
        self.key = f"_kept_{name}"

    def __get__(self, room: ProceduralRoom | None, owner: type | None = None):
        return self if room is None else self.rows(room).kept()

    def __set__(self, room: ProceduralRoom, frame: pd.DataFrame) -> None:
        room.__dict__[self.key] = KeptRows(frame)

    def rows(self, room: ProceduralRoom) -> KeptRows:
        return room.__dict__[self.key]


def records(frame: pd.DataFrame) -> list[dict]:
    """`frame.to_dict(orient="records")`, read a column at a time.

    `to_dict` iterates the rows (numpy values as Python scalars, `item()`) and boxes the values of
    object columns with `maybe_box_native`; a column's `tolist()` gives the same Python scalars,
    and boxing every value is the same (it leaves Python scalars and other objects as they are).
    """
    columns = frame.columns.tolist()
    if not columns:
        return [{} for _ in range(len(frame))]
    values = [map(maybe_box_native, frame[column].tolist()) for column in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def sample_position(positions: np.ndarray) -> int:
    """The row that `.sample()` of the frame of these rows draws: pandas takes row
    `np.random.choice(len(frame), size=1, replace=False)[0]`, the same call as here."""
    return positions[np.random.choice(len(positions), size=1, replace=False)[0]]
