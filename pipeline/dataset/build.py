"""The main job: rooms -> scenes -> items -> rows -> Parquet shards and the dataset card.

Work is cut into shards of SHARD_ROOMS consecutive rooms of one split. Each shard's files are written
atomically and recorded with their sha256 in manifest.json, so an interrupted build re-run with
the same command redoes only what is missing. Rooms are computed in worker processes but
collected in room order, so the bytes do not depend on the number of workers.

The test split is rooms 0..N-1 of the seed. The optional train and validation splits are rooms of
the same seed from indices no test split reaches (SPLIT_FIRST_ROOM), so they are other houses by
construction; `check_houses` compares the houses' hashes all the same. A build without them
writes exactly what it wrote before they existed.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from pathlib import Path

import pyarrow as pa
from tqdm import tqdm

from pipeline import __version__
from pipeline.dataset.card import (COUNTED, FRAMED, MAPPED, PICTURED, ConfigSize, Measured, counts_topology,
                                   dataset_card, file_size, room_stats, written_size)
from pipeline.dataset.layout import SHARED_GROUP_ROOMS, question_columns, shared_table, table_questions
from pipeline.dataset.manifest import (DATASET_SPLIT, MANIFEST, SPLITS, TRAINING_SPLITS, Listed, ShardEntry, Stats,
                                       key_split, read_manifest, shard_files, shard_key, shard_path, write_manifest)
from pipeline.dataset.rows import (CHECKED, MAP_CHECKED, PLAN_CHECKED, check_row, items_table, kind_record, read_rows,
                                   records_table, write_parquet, write_row_groups)
from pipeline.errors import RoomspaceError
from pipeline.files import (check_folder_path, file_sha256, folder_lock, remove_stale_temporaries, writable_folder,
                            write_atomic)
from pipeline.parallel import ordered_map
from pipeline.render.job import Renderer
from pipeline.scene.scene_file import house_sha256, load_house, scene_path
from pipeline.scene.scene_folder import ensure_scene
from pipeline.text.configs import Config
from pipeline.text.items import Item
from pipeline.text.kinds import BASE, KINDS, Kind, parse
from pipeline.text.prompts import MAP_QUESTION, PLAN_QUESTION

READ = frozenset((*CHECKED, *COUNTED, *PICTURED, *FRAMED))  # a question's fields the checks and statistics read
MAP_READ = READ | {*MAP_CHECKED, *MAPPED}  # and a map question's (a kind whose Kind.questions ask MAP)
PLAN_READ = READ | set(PLAN_CHECKED)  # and a plan question's (PLAN)
TOPOLOGY = "topology"  # of the fields read, read only for the questions whose statistics count it (`counts_topology`)
SHARD_ROOMS = 100  # rooms per shard: the unit of atomic output and of resumption
MAX_ROOMS = 10 ** 8  # a sane bound: far beyond any sweep, and refused before anything is made
# Room k of a split is house SPLIT_FIRST_ROOM[split] + k of the seed. No split reaches MAX_ROOMS rooms,
# so no house index is in two splits (and RoomSpace-100 stays the first 100 test rooms of 1K).
SPLIT_FIRST_ROOM = {DATASET_SPLIT: 0, "train": MAX_ROOMS, "validation": 2 * MAX_ROOMS}
EXAMPLES = (("o2_d2_layout", "top_down", "FR"), ("o2", "north_facing", "YN"), ("tpp", "north_facing", "FR"),
            ("rcc8", "top_down", "YN"))


@dataclass(frozen=True)
class Part:
    """One shard of one split: the unit of atomic output and of resumption."""

    split: str
    shard: int
    rooms: range  # house indices

    @property
    def key(self) -> str:
        return shard_key(self.split, self.shard)


@dataclass(frozen=True)
class Output:
    """One configuration a build writes: a kind (pipeline.text.kinds) of a base configuration."""

    kind: Kind
    config: Config

    @property
    def name(self) -> str:
        return self.kind.config_name(self.config)


@dataclass(frozen=True)
class BuildPlan:
    name: str
    seed: int
    rooms: int
    outputs: tuple[Output, ...]  # in card order: `BuildPlan.asked` orders them
    shard_rooms: int = SHARD_ROOMS
    train_rooms: int = 0
    validation_rooms: int = 0
    renderer: Renderer = Renderer()  # what draws the image kinds' pictures

    @classmethod
    def asked(cls, name: str, seed: int, rooms: int, configs: Sequence[Config],
              added: Mapping[str, Sequence[Config]] | None = None, **sizes) -> BuildPlan:
        """The plan of base `configs` and, per kind a build adds on request (its option), the base
        configurations that get it (`added`, by kind name); a kind made from others is made for every
        base that has them all. Outputs come in card order: by kind, then as asked."""
        bases = {BASE.name: tuple(configs), **{kind: tuple(chosen) for kind, chosen in (added or {}).items()}}
        unknown = set(bases) - {BASE.name} - {kind.name for kind in KINDS.values() if kind.option}
        if unknown:
            raise RoomspaceError(f"no kind {', '.join(sorted(unknown))} is added on request")
        for kind_name, chosen in bases.items():
            if not KINDS[kind_name].hard and any(config.hard for config in chosen):
                raise RoomspaceError(f"the {kind_name} kind has no hard configurations (asked: "
                                     f"{', '.join(c.name for c in chosen if c.hard)}); those with them: "
                                     f"{', '.join(kind.name for kind in KINDS.values() if kind.hard)}")
        outputs = []
        for kind in KINDS.values():
            first, *others = kind.made_from or (kind.name,)
            chosen = [c for c in bases.get(first, ()) if all(c in bases.get(other, ()) for other in others)]
            outputs.extend(Output(kind, config) for config in dict.fromkeys(chosen))
        return cls(name, seed, rooms, tuple(outputs), **sizes)

    def identity(self) -> dict:
        """What makes two builds the same build, that is what determines the bytes of its shards and
        manifest: a folder holding another identity is refused. The name (the folder's) is not in it:
        it goes only into the card, written when the build finishes, so a build folder renamed or
        copied is resumed. The training splits' sizes are there only when asked for, the renderer only
        when it is not the offline one (with its settings): a test-only offline build's identity is
        unchanged, and two renderers' images never mix in one folder."""
        training = {f"{split}_rooms": count for split, count in self.split_rooms.items() if split in TRAINING_SPLITS}
        renderer = self.renderer.identity()
        return {"seed": self.seed, "rooms": self.rooms, "shard_rooms": self.shard_rooms,
                "configs": self.names, "roomspace": __version__, **training,
                **({} if renderer is None else {"renderer": renderer})}

    @property
    def split_rooms(self) -> dict[str, int]:
        """Rooms per split the build writes, in card order."""
        counts = {"train": self.train_rooms, "validation": self.validation_rooms, DATASET_SPLIT: self.rooms}
        return {split: counts[split] for split in SPLITS if counts[split] or split == DATASET_SPLIT}

    def parts(self) -> list[Part]:
        """Every shard of every split; the test split's first."""
        parts = []
        for split in sorted(self.split_rooms, key=lambda s: s != DATASET_SPLIT):
            first, count = SPLIT_FIRST_ROOM[split], self.split_rooms[split]
            for shard in range(-(-count // self.shard_rooms)):
                start = shard * self.shard_rooms
                parts.append(Part(split, shard, range(first + start, first + min(start + self.shard_rooms, count))))
        return parts

    @property
    def names(self) -> list[str]:
        """Every configuration the build writes, in card order."""
        return [output.name for output in self.outputs]

    @classmethod
    def from_identity(cls, identity: dict, name: str = "") -> BuildPlan:
        """The plan named `name` whose `identity()` this is (a manifest's): its configurations asked
        again, so that names out of card order or a kind without what it is made from give other
        `names`. A name that is no configuration is a RoomspaceError."""
        bases: dict[str, list[Config]] = {}
        for written in identity["configs"]:
            kind, config = parse(written)
            bases.setdefault(kind.name, []).append(config)
        added = {kind: chosen for kind, chosen in bases.items() if KINDS[kind].option}
        return cls.asked(name, identity["seed"], identity["rooms"], bases.get(BASE.name, ()), added,
                         shard_rooms=identity["shard_rooms"], train_rooms=identity.get("train_rooms", 0),
                         validation_rooms=identity.get("validation_rooms", 0),
                         renderer=Renderer.from_identity(identity.get("renderer")))


@dataclass
class RoomResult:
    """A room's rows per output, made in the worker: cheap to send back. The text outputs' rows are
    one table, one output after another: made at once, they cost a fraction of one table each."""

    index: int
    texts: pa.Table | None  # None once `packed`
    text_rows: dict[str, int]  # each text output's number of rows, in the order of `texts`
    own_tables: dict[str, pa.Table]  # the outputs whose rows have a schema of their own (a record other than Item)
    stats: dict[str, Stats]
    scene_seconds: float
    item_seconds: float
    family_seconds: Counter = field(default_factory=Counter)  # of item_seconds, per configuration family
    spilled: bytes | None = None  # `packed` without a file to write: the text rows as the file SpilledRoom writes
    batches: dict[str, range] | None = None  # the record batches of each text output in its file (or `spilled`)

    def table(self, name: str) -> pa.Table:
        """One output's rows: its own table, or a slice of `texts` (made here, not in the worker: a
        slice is sent with its whole table)."""
        if name in self.own_tables:
            return self.own_tables[name]
        starts = dict(zip(self.text_rows, accumulate(self.text_rows.values(), initial=0)))
        return self.texts.slice(starts[name], self.text_rows[name])

    @property
    def tables(self) -> dict[str, pa.Table]:
        return {name: self.table(name) for name in [*self.text_rows, *self.own_tables]}

    def packed(self, spill: Path | None = None) -> RoomResult:
        """The result sent back to the main process: its text rows as the Arrow IPC file that
        SpilledRoom reads (a text output's rows its own record batches), made in the worker, so that
        the main process, which every worker waits on, does not make it. A local worker writes the
        file itself, to `spill` (`spill_path`), and sends back only where its batches lie: a default
        build's rows, about 1 MB a room, sent through a pipe held each worker about 4 ms a room and
        cost the main process about 1 ms. Without `spill` (a Dask worker, which need not see the
        build's folder) the file's bytes are sent, and the main process writes them there. The file is
        written through a buffer: written straight, a system call a column's buffer, it took a worker
        2.2-2.7 ms of CPU a room, against 1.0-1.2 ms."""
        sink = pa.BufferOutputStream() if spill is None else pa.output_stream(str(spill), compression=None,
                                                                             buffer_size=SPILL_BUFFER_BYTES)
        batches, written = {}, 0
        with pa.ipc.new_file(sink, self.texts.schema) as writer:
            for name in self.text_rows:
                parts = self.table(name).to_batches()
                for batch in parts:
                    writer.write_batch(batch)
                batches[name] = range(written, written + len(parts))
                written += len(parts)
        if spill is None:
            self.spilled = sink.getvalue().to_pybytes()
        else:
            sink.close()
        self.texts, self.batches = None, batches
        return self


SPILLED = ".room-{}.tmp"  # a room's text rows waiting for their shard (`RoomResult.packed`, `SpilledRoom`)
SPILL_BUFFER_BYTES = 1 << 20  # a room's file is written a MiB at a time: a default build's is about 1 MB


def spill_path(out: Path, index: int) -> Path:
    return out / SPILLED.format(index)


@dataclass
class SpilledRoom:
    """A room's result in the main process, its text rows on disk until its shard is written: a
    shard of the sweep's rooms held whole (about 16 MB of rows each) takes gigabytes. The file is
    Arrow IPC, a text output's rows its own record batches, read back alone."""

    index: int
    path: Path
    batches: dict[str, range]  # the record batches of each text output
    own_tables: dict[str, pa.Table]
    stats: dict[str, Stats]

    @classmethod
    def of(cls, result: RoomResult, path: Path) -> SpilledRoom:
        """A `packed` result's text rows in `path`: written there now, if the worker sent their bytes."""
        if result.spilled is not None:
            with pa.OSFile(str(path), "wb") as sink:
                sink.write(result.spilled)
        return cls(result.index, path, result.batches, result.own_tables, result.stats)

    def table(self, name: str) -> pa.Table:
        return self.own_tables[name] if name in self.own_tables else self._text_tables[name]

    @cached_property
    def _text_tables(self) -> dict[str, pa.Table]:
        """Every text output's rows, the file read once, mapped: opening it again for each output, its
        footer read every time, took a fifth of a shard's writing. A table is a view of the mapping, its
        pages the file's, which the system may drop and read again (not rows held in memory); the file
        is closed at once (the mapping lasts while a table refers to it), so a shard of many rooms holds
        no file open, and the file may be removed."""
        with pa.memory_map(str(self.path)) as source:
            reader = pa.ipc.open_file(source)
            return {name: pa.Table.from_batches([reader.get_batch(k) for k in batches], schema=reader.schema)
                    for name, batches in self.batches.items()}


class RoomWork:
    """One room as its kinds' modules see it (pipeline.text.kinds.Room): each kind's rows of each
    base configuration, and whatever kinds share (renders, labels, the base items' maker), made once."""

    def __init__(self, scene, house_file: Path, renderer: Renderer = Renderer()) -> None:
        self.scene = scene
        self.renderer = renderer
        self._house_file = house_file
        self._made: dict[tuple, object] = {}

    @property
    def house(self) -> dict:
        return self.shared(("house",), lambda: load_house(self._house_file))

    def rows(self, kind: str, config: Config) -> tuple:
        return self.shared(("rows", kind, config), lambda: tuple(KINDS[kind].maker().rows(self, config)))

    def shared(self, key: tuple, make):
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]


def room_job(seed: int, index: int, scenes_dir: Path, outputs: tuple[Output, ...],
             renderer: Renderer = Renderer()) -> RoomResult:
    """Everything one room contributes: its scene (sampled if missing), then its rows per output."""
    start = time.perf_counter()
    scene = ensure_scene(scenes_dir, seed, index)
    sampled = time.perf_counter()
    room = RoomWork(scene, scene_path(scenes_dir, seed, index), renderer)
    family_seconds = Counter()
    # Configurations with more described pairs first: the checker then answers those with fewer
    # (subsets of their facts) from the solutions already found.
    for config in sorted(dict.fromkeys(output.config for output in outputs), key=lambda c: -c.m):
        with _timed(family_seconds, config.family):
            room.rows(BASE.name, config)
    texts, own_tables = {}, {}
    for output in outputs:
        with _timed(family_seconds, output.config.family):
            rows = room.rows(output.kind.name, output.config)
        if kind_record(output.kind) is Item:  # base and twin rows make one table at once, the others their own
            texts[output.name] = rows
        else:
            own_tables[output.name] = records_table(rows, output.name)
    text_table = items_table([item for rows in texts.values() for item in rows])
    result = RoomResult(index, text_table, {name: len(rows) for name, rows in texts.items()}, own_tables, {},
                        sampled - start, 0.0, family_seconds)
    for output in outputs:
        with _timed(family_seconds, output.config.family):
            # The checks and statistics read the questions as written: plain values, as `validate` reads them back.
            table = result.table(output.name)
            read = MAP_READ if MAP_QUESTION in output.kind.questions else \
                PLAN_READ if PLAN_QUESTION in output.kind.questions else READ
            columns = [c for c in question_columns(table.schema) if c in read]
            questions = table_questions(table, [c for c in columns if c != TOPOLOGY]).to_pylist()
            if TOPOLOGY in columns:  # half of a room's reading, every row's, where the statistics count a few
                topology = table.column(TOPOLOGY)
                for k, question in enumerate(questions):
                    if counts_topology(question):
                        question[TOPOLOGY] = topology[k].as_py()
            for question in questions:
                check_row(question)
            result.stats[output.name] = room_stats(output.kind, questions, scene.room_type)
    result.item_seconds = time.perf_counter() - sampled
    return result


@contextmanager
def _timed(seconds: Counter, key: str):
    """Adds the seconds the block takes to seconds[key]."""
    begun = time.perf_counter()
    try:
        yield
    finally:
        seconds[key] += time.perf_counter() - begun


def _room_job(args: tuple) -> RoomResult:
    """`room_job` of (seed, index, scenes_dir, outputs, renderer), packed to the file `spill` if not None."""
    *job, spill = args
    return room_job(*job).packed(spill)


@dataclass
class BuildReport:
    out: Path
    rows: dict[str, int] = field(default_factory=dict)  # the test split's, per configuration
    training_rows: dict[str, dict[str, int]] = field(default_factory=dict)  # per training split and configuration
    houses: dict | None = None  # `check_houses`, for a build with training splits
    rooms_built: int = 0
    scene_seconds: float = 0.0
    item_seconds: float = 0.0
    family_seconds: Counter = field(default_factory=Counter)  # of item_seconds, per configuration family
    write_seconds: float = 0.0  # the main process's, spilling rooms and writing shards (and reading their sizes)
    card_seconds: float = 0.0  # the main process's, writing the card (its audit's workers waited for)
    wall_seconds: float = 0.0


def check_folder(out: Path, plan: BuildPlan) -> dict:
    """The folder's manifest, resumed, or a new one written now, before any shard, so that a run
    killed at any moment can be resumed; another build or foreign files there are an error.
    Called under the folder's lock, after its temporary files are removed."""
    if (out / MANIFEST).exists():
        manifest = read_manifest(out, complete=False)
        differs = identity_difference(manifest["identity"], plan.identity())
        if differs:
            raise RoomspaceError(f"{out} holds a different build: {differs}; choose another --out or remove it")
        manifest["identity"] = plan.identity()  # an older build's identity also held its folder's name (FORMER)
        return manifest
    foreign = sorted(p.name for p in out.iterdir())
    if foreign:
        raise RoomspaceError(f"{out} is not empty and holds no roomspace build (it has {', '.join(foreign[:3])}); "
                             "choose another --out")
    manifest = {"identity": plan.identity(), "complete": False, "shards": {}}
    write_manifest(out, manifest)
    return manifest


# Identity fields as the build command spells them, for the message naming the one that differs.
IDENTITY_OPTIONS = {"seed": "--seed", "rooms": "--rooms", "shard_rooms": "--shard-rooms", "train_rooms": "--train-rooms",
                    "validation_rooms": "--validation-rooms", "roomspace": "roomspace version", "renderer": "--renderer"}
FORMER = ("name",)  # fields older builds put in their identity that determine none of their bytes: passed over


def identity_difference(held: dict, asked: dict) -> str | None:
    """The first field in which a folder's build identity (`held`) differs from the plan's (`asked`),
    as "its --seed is 3, this command's 0"; None for the same build."""
    for key in dict.fromkeys([*asked, *held]):
        theirs, ours = held.get(key), asked.get(key)
        if key in FORMER or theirs == ours:
            continue
        if key == "configs" and isinstance(theirs, list):
            return _configs_difference(theirs, ours)
        if key.endswith("_rooms"):  # a training split's size is there only when the build has it
            theirs, ours = theirs or 0, ours or 0
        if key == "renderer":  # there only for a renderer other than the offline one, with its settings
            theirs, ours = (Renderer.from_identity(value).describe() for value in (theirs, ours))
        return f"its {IDENTITY_OPTIONS.get(key, key)} is {theirs}, this command's {ours}"
    return None


def _configs_difference(theirs: list, ours: list) -> str:
    def listed(names: list) -> str:
        return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    missing, extra = [c for c in ours if c not in theirs], [c for c in theirs if c not in ours]
    parts = ([f"lack {listed(missing)}, which this command asks for"] if missing else []) + \
            ([f"have {listed(extra)}, which this command does not ask for"] if extra else [])
    return f"its configurations {' and '.join(parts) or 'come in another order'}"


def shard_done(out: Path, manifest: dict, key: str) -> bool:
    entry = manifest["shards"].get(key)
    if entry is None:
        return False
    return all((out / path).exists() and file_sha256(out / path) == listed.sha256
               for path, listed in entry.files.items())


def build(plan: BuildPlan, scenes_dir: Path, out: Path, workers: int = 1, progress: bool = True,
          scheduler: str | None = None) -> BuildReport:
    """Build (or finish building) `plan` into `out`, with `workers` local processes or on the Dask
    scheduler at `scheduler`; the bytes written are the same either way. Interrupted (SIGINT,
    SIGTERM), the exception says on its way out what was kept."""
    started = time.perf_counter()
    for split, count in plan.split_rooms.items():
        if count > MAX_ROOMS:
            option = "--rooms" if split == DATASET_SPLIT else f"--{split}-rooms"
            raise RoomspaceError(f"{option} {count} is more than {MAX_ROOMS} rooms; build in parts of at most that")
    check_folder_path(out, "output folder")
    check_folder_path(scenes_dir, "scene folder")
    if any(output.kind.images for output in plan.outputs):
        plan.renderer.check()  # Blender missing: one line now, not in a worker
    if (out / MANIFEST).exists() and _finished(out, plan):
        return _report(out, plan, read_manifest(out), started)  # nothing to do: nothing is written
    created = not out.exists()
    writable_folder(out)
    with folder_lock(out):
        try:
            for stale in out.rglob(".*.tmp"):  # left by a killed run (the lock says none is running)
                stale.unlink()
            manifest = check_folder(out, plan)
            Path(scenes_dir).mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(Path(scenes_dir))
            report = BuildReport(out)
            measured = _write_shards(plan, scenes_dir, out, manifest, report, workers, progress, scheduler)
            finishing = time.perf_counter()
            finish(out, plan, manifest, report, Path(scenes_dir), workers, measured)
            report.card_seconds = time.perf_counter() - finishing
        except BaseException:
            if created and _nothing_kept(out):
                shutil.rmtree(out, ignore_errors=True)  # leave no folder behind that holds nothing of the build
            raise
    report.wall_seconds = time.perf_counter() - started
    return report


def _write_shards(plan: BuildPlan, scenes_dir: Path, out: Path, manifest: dict, report: BuildReport, workers: int,
                  progress: bool, scheduler: str | None) -> Measured:
    """Every shard not yet written, in order; tasks are made as workers take them, not up front; returns
    the sizes of the files written (`write_shard`).
    A finished shard is written by a thread of its own (`ShardWriter`) while this one takes the next
    rooms' results: written here, it held back the tasks the workers are handed next, and they stood
    idle through most of it (a 400-room build's workers waited 1.9-2.0 s each between rooms, 1.0-1.1 s
    with the thread)."""
    parts = plan.parts()
    todo = [part for part in parts if not shard_done(out, manifest, part.key)]
    spills = scheduler is None  # local workers write their rooms' files themselves: they see this folder
    tasks = ((plan.seed, k, scenes_dir, plan.outputs, plan.renderer, spill_path(out, k) if spills else None)
             for part in todo for k in part.rooms)
    owner = (part for part in todo for _ in part.rooms)  # results come back in task order
    pending: dict[str, list[SpilledRoom]] = {}
    total = sum(len(part.rooms) for part in parts)
    with tqdm(total=total, initial=total - sum(len(part.rooms) for part in todo), unit="room", desc=plan.name,
              disable=not progress, smoothing=0.1) as bar, ShardWriter(out, plan, manifest, report) as writer, \
            closing(ordered_map(_room_job, tasks, workers, scheduler)) as results:
        try:
            for result in results:
                spilling = time.perf_counter()
                part = next(owner)
                pending.setdefault(part.key, []).append(SpilledRoom.of(result, spill_path(out, result.index)))
                report.rooms_built += 1
                report.scene_seconds += result.scene_seconds
                report.item_seconds += result.item_seconds
                report.family_seconds.update(result.family_seconds)
                bar.update()
                report.write_seconds += time.perf_counter() - spilling
                writer.record_written()
                if len(pending[part.key]) == len(part.rooms):
                    writer.write(part, pending.pop(part.key))
            writer.record_written(block=True)
        except KeyboardInterrupt as stop:  # a shard being written is not kept: the rerun writes it again
            stop.kept = f"{len(manifest['shards'])} of {len(parts)} shards are kept in {out}"
            raise
        finally:
            results.close()  # the workers' rooms in hand finished (and their files written)
            writer.abandon()  # and the shard in hand
            for room in out.glob(SPILLED.format("*")):  # rooms never written into a shard
                room.unlink()
    return writer.sizes


class ShardWriter:
    """Writes one shard at a time in a thread of its own (`write_shard`: most of it in Arrow, without
    the interpreter's lock), with its files' sizes, and records each written shard in the manifest, in
    order, from the build's thread, removing its rooms' files. Leaving it waits for the shard in hand, so
    no thread outlives the build; a shard whose writing failed raises when it is recorded."""

    def __init__(self, out: Path, plan: BuildPlan, manifest: dict, report: BuildReport) -> None:
        self.out, self.plan, self.manifest, self.report = out, plan, manifest, report
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="shard-writer")
        self.writing: tuple[Part, list[SpilledRoom], Future] | None = None
        self.sizes: dict[tuple[Path, str], ConfigSize] = {}  # of the shards recorded
        self.seconds = 0.0  # the thread's, writing shards: added to the report's write_seconds when done

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *raised) -> None:
        self.abandon()
        self.thread.shutdown()
        self.report.write_seconds += self.seconds

    def write(self, part: Part, rooms: list[SpilledRoom]) -> None:
        """Writes `part` from its rooms' results, once the shard before it is recorded."""
        self.record_written(block=True)
        self.writing = part, rooms, self.thread.submit(self._timed_write, part, rooms)

    def record_written(self, block: bool = False) -> None:
        """The shard in hand, if written (or, with `block`, once written), into the manifest."""
        if self.writing is None or not (block or self.writing[2].done()):
            return
        part, rooms, future = self.writing
        self.writing = None
        try:
            self.manifest["shards"][part.key], sizes = future.result()
            self.sizes.update(sizes)
            write_manifest(self.out, self.manifest)
        finally:
            for room in rooms:
                room.path.unlink()

    def abandon(self) -> None:
        """Waits for the shard in hand, if any, without recording it."""
        if self.writing is not None:
            wait([self.writing[2]])
            self.writing = None

    def _timed_write(self, part: Part, rooms: list[SpilledRoom]) -> tuple[ShardEntry, Measured]:
        begun = time.perf_counter()
        try:
            return write_shard(self.out, self.plan, part, rooms)
        finally:
            self.seconds += time.perf_counter() - begun


def _nothing_kept(out: Path) -> bool:
    names = {path.name for path in out.iterdir()}
    if not names <= {MANIFEST}:
        return False
    return MANIFEST not in names or not read_manifest(out, complete=False)["shards"]


def _finished(out: Path, plan: BuildPlan) -> bool:
    """A complete build of this plan, every file as the manifest says: re-running it writes nothing."""
    try:
        manifest = read_manifest(out)
    except RoomspaceError:
        return False
    return (identity_difference(manifest["identity"], plan.identity()) is None
            and all(shard_done(out, manifest, part.key) for part in plan.parts()))


def _report(out: Path, plan: BuildPlan, manifest: dict, started: float) -> BuildReport:
    report = BuildReport(out)
    _count_rows(plan, manifest, report)
    report.wall_seconds = time.perf_counter() - started
    return report


def _stats(plan: BuildPlan, manifest: dict, split: str = DATASET_SPLIT) -> dict[str, Stats]:
    entries = [entry for key, entry in manifest["shards"].items() if key_split(key)[0] == split]
    return {name: Stats.total(entry.stats[name] for entry in entries) for name in plan.names}


def _rows(plan: BuildPlan, manifest: dict, split: str = DATASET_SPLIT) -> dict[str, int]:
    return {name: stats.rows for name, stats in _stats(plan, manifest, split).items()}


def _count_rows(plan: BuildPlan, manifest: dict, report: BuildReport) -> None:
    report.rows = _rows(plan, manifest)
    report.training_rows = {split: _rows(plan, manifest, split) for split in plan.split_rooms if split != DATASET_SPLIT}
    report.houses = manifest.get("houses")


def check_houses(scenes_dir: Path, plan: BuildPlan) -> dict:
    """No house of a training split is a test house, or in the other training split, compared by the
    sha256 of the house JSON (rooms differ by construction: this checks that different house indices
    did give different houses). Returns the counts the card and the build's output state."""
    owner: dict[str, str] = {}
    for part in sorted(plan.parts(), key=lambda p: p.split != DATASET_SPLIT):
        for index in part.rooms:
            digest = house_sha256(scene_path(scenes_dir, plan.seed, index))
            if owner.setdefault(digest, part.split) != part.split:
                raise RoomspaceError(f"house {index} of the {part.split} split equals a house of the "
                                     f"{owner[digest]} split (same house JSON); report it: the splits must not share houses")
    return {"houses": dict(plan.split_rooms), "distinct": len(owner)}


def write_shard(out: Path, plan: BuildPlan, part: Part, results: list[SpilledRoom]) -> tuple[ShardEntry, Measured]:
    """A shard's files: a file per configuration, or one for the configurations sharing a folder
    (pipeline.dataset.manifest.data_folder), a row group per SHARED_GROUP_ROOMS rooms holding their
    rows in turn (layout.shared_table); and each configuration's sizes in them for the card
    (card.written_size, a shared file's read back: card.file_size), taken now, while the workers make
    rooms: read by the card after them, a 10K build's files took about 15 s of one core."""
    files, stats, shared, sizes = {}, {}, {}, {}
    for output in plan.outputs:
        name = output.name
        path = shard_path(name, part.shard, part.split)
        if output.kind.shared_images:
            shared.setdefault(path, []).append(name)
            files.setdefault(path, None)  # listed where its first configuration comes
        else:
            table = pa.concat_tables([result.table(name) for result in results]).combine_chunks()
            files[path] = Listed(write_parquet(table, out / path), table.num_rows)
            sizes[out / path, name] = written_size(table, out / path)
        stats[name] = Stats.total(result.stats[name] for result in results)
    for path, names in shared.items():
        blocks = [results[k:k + SHARED_GROUP_ROOMS] for k in range(0, len(results), SHARED_GROUP_ROOMS)]
        groups = (shared_table({name: pa.concat_tables([result.table(name) for result in block]) for name in names})
                  for block in blocks)
        files[path] = Listed(*write_row_groups(groups, out / path))
        sizes.update(((out / path, name), file_size(out / path, name)) for name in names)
    return ShardEntry((part.rooms.start, part.rooms.stop), files, stats), sizes


def finish(out: Path, plan: BuildPlan, manifest: dict, report: BuildReport, scenes_dir: Path,
           workers: int = 1, measured: Measured | None = None) -> None:
    """The house check of a build with training splits, the card from the manifest's statistics (its
    audit's configurations fitted by `workers` local processes at once, the build's workers being done;
    the sizes of files `measured` already not read again); then the build is marked complete."""
    if len(plan.split_rooms) > 1:
        manifest["houses"] = check_houses(scenes_dir, plan)
    _count_rows(plan, manifest, report)
    examples = []
    first_rows = read_rows(shard_files(out, manifest, plan.names[0])[:1])
    for setting, view, question_type in EXAMPLES:
        examples.extend([r for r in first_rows if (r["setting"], r["view"], r["question_type"]) ==
                         (setting, view, question_type)][:1])
    card = dataset_card(plan.name, plan.seed, plan.split_rooms,
                        {split: _stats(plan, manifest, split) for split in plan.split_rooms}, examples,
                        {config: {split: shard_files(out, manifest, config, split) for split in plan.split_rooms}
                         for config in plan.names}, manifest.get("houses"),
                        None if plan.renderer.identity() is None else plan.renderer.describe(), workers, measured)
    write_atomic(out / "README.md", lambda target: target.write_text(card, encoding="utf-8"))
    manifest["complete"] = True
    write_manifest(out, manifest)
