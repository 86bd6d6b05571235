"""Configurations: the (n, m, d) of a base configuration and its published name, n5_m4_d144 (docs/semantics.md section 7).

A configuration is the paper's, or its balanced counterpart (n5_m4_d144_balanced): the same rooms,
objects and stories, but each question's pair and YN candidate drawn so that nothing a question
shows without its story predicts its answer (pipeline.text.balance). A hard configuration
(n8_m20_d144_hard, docs/semantics.md section 22) is drawn as a balanced one, from stories of its own
(`pipeline.spatial.facts.HARD_SETTINGS`) and among the pairs only search answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.errors import RoomspaceError
from pipeline.spatial.facts import described_pairs
from pipeline.spatial.grid import GRID_SIZES

SWEEP_N = range(3, 8)  # the paper's sweep: n from 3 to 7, every valid m, d in 9 and 12


BALANCED = "_balanced"  # the name's suffix of a balanced configuration
HARD = "_hard"  # ... and of a hard one


@dataclass(frozen=True)
class Config:
    n: int
    m: int
    d: int
    balanced: bool = False  # questions drawn by pipeline.text.balance, not as the paper draws them
    hard: bool = False  # drawn so (balanced too), from the hard stories, among the pairs only search answers

    def __post_init__(self) -> None:
        if self.d not in GRID_SIZES:
            raise RoomspaceError(f"grid side d={self.d} (domain {self.d * self.d}) is not one of {GRID_SIZES}")
        if self.hard and not self.balanced:
            raise RoomspaceError("a hard configuration draws its questions as a balanced one does: give balanced=True")
        described_pairs(self.n, self.m)  # raises when m is out of range for n

    @property
    def name(self) -> str:
        family = HARD if self.hard else BALANCED if self.balanced else ""
        return f"n{self.n}_m{self.m}_d{self.d * self.d}{family}"

    @property
    def family(self) -> str:
        """paper, balanced or hard: how its questions are drawn (the build's time is reported per family)."""
        return "hard" if self.hard else "balanced" if self.balanced else "paper"

    def as_balanced(self) -> Config:
        return Config(self.n, self.m, self.d, balanced=True)

    def as_hard(self) -> Config:
        """The hard configuration of this one's grid (HARD_N objects, HARD_M described pairs)."""
        return Config(HARD_N, HARD_M, self.d, balanced=True, hard=True)

    @property
    def paper(self) -> Config:
        """The paper's configuration of the same (n, m, d): a balanced one tells its stories."""
        return Config(self.n, self.m, self.d)

    @classmethod
    def parse(cls, text: str) -> Config:
        match = re.fullmatch(r"n(\d+)_m(\d+)_d(\d+)(%s|%s)?" % (BALANCED, HARD), text.strip())
        if not match:
            raise RoomspaceError(f"configuration {text!r} is not of the form n5_m4_d144, n5_m4_d144{BALANCED} "
                                 f"or n8_m20_d144{HARD}")
        n, m, domain = map(int, match.groups()[:3])
        sides = {d * d: d for d in GRID_SIZES}
        if domain not in sides:
            raise RoomspaceError(f"configuration {text!r}: domain d{domain} is not one of "
                                 + ", ".join(f"d{size}" for size in sides))
        family = match.group(4)
        return cls(n, m, sides[domain], balanced=family is not None, hard=family == HARD)


DEFAULT_CONFIGS = (Config(5, 4, 9), Config(5, 4, 12))
# The hard stories' size: eight objects (two rooms in three have them), twenty of the 27 pairs that are
# not the asked one described; measured, fewer pairs leave fewer questions only search answers.
HARD_N, HARD_M = 8, 20


def sweep() -> tuple[Config, ...]:
    return tuple(Config(n, m, d) for n in SWEEP_N for m in range(n - 1, n * (n - 1) // 2) for d in GRID_SIZES)


def parse_configs(text: str) -> tuple[Config, ...]:
    """A comma-separated list of configuration names, or "sweep", or "default", or "balanced" or
    "hard" (the default configurations' balanced and hard counterparts)."""
    named = {"default": DEFAULT_CONFIGS, "sweep": sweep(), "balanced": tuple(c.as_balanced() for c in DEFAULT_CONFIGS),
             "hard": tuple(c.as_hard() for c in DEFAULT_CONFIGS)}
    configs: list[Config] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        configs.extend(named[part] if part in named else (Config.parse(part),))
    if not configs:
        raise RoomspaceError("no configuration given")
    return tuple(dict.fromkeys(configs))
