"""A rung: which questions an environment asks, by configuration (kind, n, m, d, family), ladder level,
setting and frame changes; None asks any.

A rung's configuration is checked as a build checks it (a kind of no hard or balanced family has no
such configuration), its level against the ladder's (pipeline.spatial.ladder: 0 .. 3), its frame
changes against the kinds that tell stories from frames (their rows have `frame_changes`); each
refusal is one line naming what is valid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from pipeline.dataset.rows import kind_record
from pipeline.errors import RoomspaceError
from pipeline.spatial.ladder import REASONERS
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS, Kind, parse

LEVELS = tuple(range(len(REASONERS)))  # level k: answered exactly by the bounded reasoner R_k, 3 by search
FRAME_CHANGES = (0, 1, 2)


def _framed(kind: Kind) -> bool:
    """Its rows tell stories from frames: they say how many changes of frame a question asks."""
    return "frame_changes" in {field.name for field in dataclasses.fields(kind_record(kind))}


@dataclass(frozen=True)
class Rung:
    config: str  # a configuration's name: its kind's prefix and a base configuration (twin_n5_m4_d144)
    level: int | None = None
    setting: str | None = None
    frame_changes: int | None = None

    def __post_init__(self) -> None:
        kind, base = parse(self.config)
        for family, has in (("hard", base.hard), ("balanced", base.balanced)):
            if has and not getattr(kind, family):
                others = ", ".join(k.name for k in KINDS.values() if getattr(k, family))
                raise RoomspaceError(f"the {kind.name} kind has no {family} configurations (asked: {self.config}); "
                                     f"those with them: {others}")
        if self.level is not None and self.level not in LEVELS:
            raise RoomspaceError(f"no ladder level {self.level!r}; the levels are {', '.join(map(str, LEVELS))}")
        if self.frame_changes is not None:
            if not _framed(kind):
                framed = [k.name for k in KINDS.values() if _framed(k)]
                raise RoomspaceError(f"{self.config} tells no story from a frame, so it has no frame changes; "
                                     f"the kinds that do: {', '.join(framed)}")
            if self.frame_changes not in FRAME_CHANGES:
                raise RoomspaceError(f"no {self.frame_changes!r} frame changes; a question has "
                                     f"{', '.join(map(str, FRAME_CHANGES))}")

    @classmethod
    def of(cls, rung: Rung | str) -> Rung:
        return rung if isinstance(rung, Rung) else cls(rung)

    @cached_property  # asked at every item drawn: parsed once
    def kind(self) -> Kind:
        return parse(self.config)[0]

    @cached_property
    def base(self) -> Config:
        return parse(self.config)[1]

    @property
    def key(self) -> str:
        """The rung's name in the seeds of its items: its fields, in order."""
        return f"{self.config}/{self.level}/{self.setting}/{self.frame_changes}"

    def admits(self, row: Mapping | object) -> bool:
        """Whether a row (plain values, or the record it is made from) is one of the rung's questions."""
        value = row.get if isinstance(row, Mapping) else lambda name: getattr(row, name, None)
        return all(wanted is None or value(name) == wanted
                   for name, wanted in (("level", self.level), ("setting", self.setting),
                                        ("frame_changes", self.frame_changes)))

    def describe(self) -> str:
        asked = [f"{name} {value}" for name, value in (("level", self.level), ("setting", self.setting),
                                                         ("frame changes", self.frame_changes)) if value is not None]
        return self.config + (f" ({', '.join(asked)})" if asked else "")

    def metadata(self) -> dict:
        base = self.base
        return {"config": self.config, "kind": self.kind.name, "n": base.n, "m": base.m, "d": base.d,
                "level": self.level, "setting": self.setting, "frame_changes": self.frame_changes}
