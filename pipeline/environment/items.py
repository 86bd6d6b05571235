"""Items on demand: any configuration's questions, one at a time, each the row a build writes.

An `Environment` holds a bounded pool of rooms: houses 0 .. rooms-1 of its seed, read from a scene
folder or sampled as first needed (ProcTHOR offline, as `roomspace build` samples a missing scene)
into that folder, or into a folder of its own when given none. A room's rows of a configuration are
made by the build's own per-room code path (pipeline.dataset.build.RoomWork: each kind's `rows`), and
a row drawn is turned into plain values as the build's Parquet files hold them (`plain_row`), so room
k's rows are those of room k of a build of the same seed, byte for byte, and scoring, the reward and
every harness read them alike. Only the rows drawn are converted: a room's records are filtered by
the rung on their fields, and a row is converted each time it is drawn, not kept: kept, its many small
lists are objects Python's cyclic collector goes through again and again, which costs more than
converting it again (map_n5_m4_d81 from 50 rooms: 11.9 ms of CPU a room with the rows kept, 8.8 without).

Item i of a rung (pipeline.environment.rungs: a configuration and, optionally, a ladder level, a setting
and a number of frame changes) is a pure function of (seed, rooms, rung, i): a room drawn from the pool
with a generator seeded by them, then one of that room's rows the rung admits; a room with none is
drawn again (the draw's number is in the seed too). Rooms made are kept in memory, the most recently
used `kept_rooms` of them.

Pictures are drawn only for the kinds whose questions carry them, and only for an environment asked
for them (`pictures=True`): their renderer is checked then, in one line.
"""

from __future__ import annotations

import gc
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from pipeline.dataset.build import RoomWork
from pipeline.dataset.rows import plain_row
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError
from pipeline.evaluate.export import prompt_record
from pipeline.evaluate.reward import roomspace_reward
from pipeline.render.job import Renderer
from pipeline.scene.scene_file import scene_path
from pipeline.scene.scene_folder import ensure_scene
from pipeline.seeding import derive_seed

KEPT_ROOMS = 256  # rooms whose rows stay in memory: a room of every kind is a few MB with its pictures
MAX_DRAWS = 1000  # rooms drawn for one item before a rung with no question in the pool is an error


@dataclass(frozen=True)
class EnvironmentItem:
    """One item: its number in its rung's stream, the rung, and the row a build writes for it."""

    index: int
    rung: Rung
    row: dict = field(compare=False, repr=False)  # plain values, as a build's file reads back (image: {bytes, path})

    @property
    def metadata(self) -> dict:
        """What a trainer's record carries beside the prompt: the row's id and place, and the rung."""
        return {"id": self.row["id"], "config": self.rung.config, "room_index": self.row["room_index"],
                "item_index": self.index, "rung": self.rung.metadata(), "level": self.row.get("level")}

    def record(self) -> dict:
        """The item as `roomspace export --format prompt` writes a row: its chat messages (`prompt`, with
        its image for a vision row) and the scoring fields the reward reads."""
        return prompt_record(self.row)

    def scoring(self) -> dict:
        """The scoring fields alone: what a trainer keeps beside the prompt to reward a completion."""
        return {name: value for name, value in self.record().items() if name != "prompt"}

    def reward(self, completion) -> float:
        return reward_of(self.scoring(), completion)


def reward_of(scoring: Mapping, completion) -> float:
    """A completion's reward, as `roomspace_reward` gives it (pipeline.evaluate.reward): YN right or wrong,
    FR the Jaccard of the named set, a map its facts held, a plan its mean F1; 0 for an unread answer."""
    return roomspace_reward(completions=[completion], **{name: [value] for name, value in scoring.items()})[0]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (if it runs) while a room's rows are made: they are some
    hundred thousand objects freed by their reference counts (no cycle: gc.collect() finds none after 20
    rooms of each text kind), and each collection the allocations set off would traverse every room kept
    too, a third of the time of making them. Paused only that long: the host's own objects are collected
    as before."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


class Environment:
    """A pool of rooms and their rows on demand (module docstring)."""

    def __init__(self, seed: int = 0, rooms: int = 100, scenes: str | Path | None = None, pictures: bool = False,
                 renderer: Renderer = Renderer(), kept_rooms: int = KEPT_ROOMS) -> None:
        if rooms < 1:
            raise RoomspaceError(f"an environment's pool needs at least one room (asked: {rooms})")
        self.seed, self.rooms, self.pictures, self.renderer = seed, rooms, pictures, renderer
        if pictures:
            renderer.check()  # Blender missing: one line now, not at the first picture
        self._own_folder = None if scenes is not None else tempfile.TemporaryDirectory(prefix="roomspace-scenes-")
        self.scenes = Path(scenes if scenes is not None else self._own_folder.name)
        self._kept: OrderedDict[int, RoomWork] = OrderedDict()
        self._kept_rooms = kept_rooms

    def rung(self, rung: Rung | str) -> Rung:
        """A rung (or a configuration's name) checked against this environment: its kind's pictures."""
        rung = Rung.of(rung)
        if rung.kind.images and not self.pictures:
            raise RoomspaceError(f"{rung.config} asks questions about pictures: make the environment with "
                                 "pictures=True (Environment(..., pictures=True))")
        return rung

    def room_rows(self, index: int, rung: Rung | str) -> tuple[dict, ...]:
        """Room `index`'s rows of a rung (of a configuration: all of them), as a build of this seed writes them
        for that room: a pool's questions one room at a time, none drawn twice."""
        rung = self.rung(rung)
        if not 0 <= index < self.rooms:
            raise RoomspaceError(f"room {index} is outside this environment's pool of rooms 0 .. {self.rooms - 1}")
        with collector_paused():
            return tuple(self._row(index, rung, position) for position in self._admitted(index, rung))

    def item(self, index: int, rung: Rung | str) -> EnvironmentItem:
        """Item `index` of a rung: a pure function of (seed, rooms, rung, index) (module docstring)."""
        rung = self.rung(rung)
        with collector_paused():
            return self._drawn(index, rung)

    def _drawn(self, index: int, rung: Rung) -> EnvironmentItem:
        empty: set[int] = set()  # rooms drawn that have no question of the rung
        for draw in range(MAX_DRAWS):
            rng = Random(derive_seed("environment item", self.seed, self.rooms, rung.key, index, draw))
            room = rng.randrange(self.rooms)
            admitted = self._admitted(room, rung)
            if admitted:
                return EnvironmentItem(index, rung, self._row(room, rung, rng.choice(admitted)))
            empty.add(room)
            if len(empty) == self.rooms:
                break
        raise RoomspaceError(f"no question of {rung.describe()} in {len(empty)} rooms of the pool of {self.rooms} "
                             f"rooms of seed {self.seed}: ask another rung or a larger pool")

    def items(self, rung: Rung | str, count: int | None = None, start: int = 0) -> Iterator[EnvironmentItem]:
        """Items start, start + 1, ... of a rung (`count` of them, or without end)."""
        index = start
        while count is None or index < start + count:
            yield self.item(index, rung)
            index += 1

    def _records(self, index: int, rung: Rung) -> tuple:
        """Room `index`'s row records of the rung's configuration, as the build makes them."""
        return self._room(index).rows(rung.kind.name, rung.base)

    def _admitted(self, index: int, rung: Rung) -> list[int]:
        """The positions of room `index`'s records of the rung's configuration that the rung admits, found once."""
        return self._room(index).shared(("environment admitted", rung), lambda: [
            position for position, record in enumerate(self._records(index, rung)) if rung.admits(record)])

    def _row(self, index: int, rung: Rung, position: int) -> dict:
        """The plain row of room `index`'s record at `position` of the rung's configuration."""
        return plain_row(self._records(index, rung)[position])

    def _room(self, index: int) -> RoomWork:
        if index in self._kept:
            self._kept.move_to_end(index)
            return self._kept[index]
        scene = ensure_scene(self.scenes, self.seed, index)
        room = RoomWork(scene, scene_path(self.scenes, self.seed, index), self.renderer)
        self._kept[index] = room
        if len(self._kept) > self._kept_rooms:
            self._kept.popitem(last=False)
        return room
