"""A curriculum: explicit rungs, easiest first, and a schedule that moves along them on the running reward.

As reasoning-gym's curricula do (a dataset's difficulty as levels, raised or lowered by the trainer on
its scores), but the levels are whole rungs (pipeline.environment.rungs: configuration size, ladder
level, kind, setting, frame changes), so a step never lands on a combination no room has. The
schedule keeps the last `window` rewards of the current rung: once it holds `window` of them, a mean
at or above `up` moves to the next rung, at or below `down` to the previous one, and the window starts
again. Which item comes next is a pure function of the rewards recorded so far: each rung counts its
own items, so item k of a rung is always `Environment.item(k, rung)`, whatever came between.

The default rungs and schedule are data (pipeline/data/curriculum.json).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.data import data_json
from pipeline.environment.items import Environment, EnvironmentItem
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError


@dataclass(frozen=True)
class Schedule:
    window: int = 32  # rewards averaged before a move
    up: float = 0.8  # a mean at or above: the next rung
    down: float = 0.4  # at or below: the previous one

    def __post_init__(self) -> None:
        if self.window < 1 or not 0 <= self.down < self.up <= 1:
            raise RoomspaceError(f"a schedule needs window >= 1 and 0 <= down < up <= 1 (given {self})")


def default_rungs() -> tuple[Rung, ...]:
    return tuple(Rung(**fields) for fields in data_json("curriculum.json")["rungs"])


def default_schedule() -> Schedule:
    return Schedule(**data_json("curriculum.json")["schedule"])


class Curriculum:
    """Rungs, a position among them and the rewards of the current one (module docstring)."""

    def __init__(self, environment: Environment, rungs: Sequence[Rung | str] | None = None,
                 schedule: Schedule | None = None, start: int = 0) -> None:
        self.environment = environment
        self.rungs = tuple(environment.rung(rung) for rung in (rungs if rungs is not None else default_rungs()))
        if not self.rungs:
            raise RoomspaceError("a curriculum needs at least one rung")
        if not 0 <= start < len(self.rungs):
            raise RoomspaceError(f"no rung {start}: the curriculum has rungs 0 .. {len(self.rungs) - 1}")
        self.schedule = schedule or default_schedule()
        self.position = start
        self.rewards: deque[float] = deque(maxlen=self.schedule.window)
        self.served = [0] * len(self.rungs)  # items given so far, per rung

    @property
    def rung(self) -> Rung:
        return self.rungs[self.position]

    def next_item(self) -> EnvironmentItem:
        """The current rung's next item, its position on the curriculum in its metadata (`rung_index`)."""
        item = self.environment.item(self.served[self.position], self.rung)
        self.served[self.position] += 1
        return item

    def metadata(self, item: EnvironmentItem) -> dict:
        return {**item.metadata, "rung_index": self.rungs.index(item.rung)}

    def record(self, reward: float) -> int:
        """Record a reward of the current rung; returns the move made: +1 up, -1 down, 0 none."""
        if not 0 <= reward <= 1:
            raise RoomspaceError(f"a reward is between 0 and 1 (given {reward})")
        self.rewards.append(reward)
        if len(self.rewards) < self.schedule.window:
            return 0
        mean = sum(self.rewards) / len(self.rewards)
        move = 1 if mean >= self.schedule.up and self.position + 1 < len(self.rungs) else \
            -1 if mean <= self.schedule.down and self.position > 0 else 0
        if move:
            self.position += move
            self.rewards.clear()
        return move
