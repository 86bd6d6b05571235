"""Configuration kinds: every kind of configuration a build writes, declared once here.

A configuration's name is its kind's prefix and a base configuration's name (`twin_n5_m4_d144`:
the kind `twin` of the base n5_m4_d144). Each kind names the module that makes its rows: the
module has `RECORD`, the row record (pipeline.dataset.rows derives its Arrow, Hugging Face and JSON
schemas), and `rows(room, config)`, one room's rows of the kind for one base configuration (`room`
is a `Room`: the scene and the rows of other kinds of the same room, each made once). The module
is imported only by the build, so that reading this registry costs nothing: the evaluator reads it
too, for what a configuration is, how its files hold questions, and what `score` compares it with.

A new kind is one entry in KINDS and one module. Nothing outside this module tests a
configuration name's prefix: `parse` and `config_name` do (tests/text/test_kinds.py greps for it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol

from pipeline.errors import RoomspaceError
from pipeline.text.configs import Config


@dataclass(frozen=True)
class Comparison:
    """A paired gap `score` reports: this kind's questions against the same questions of another kind
    of the same base (matched by room, setting, view, question type and frames)."""

    label: str  # the gap's name in the report
    other: str  # the other kind
    names: tuple[str, str]  # (first, second) condition names: the gap is first - second
    first_is_other: bool  # the other kind's score comes first (the original before its twin)
    modality: str | None = None  # only this kind's questions asked in this modality


@dataclass(frozen=True)
class Kind:
    name: str
    prefix: str  # a configuration's name: prefix + the base configuration's name
    module: str  # the module with RECORD and rows(room, config) (module docstring)
    summary: str  # what its rows are, in a few words: `build --help`
    option: str | None  # the build option asking for it (`--twins CONFIGS`); None: base, or made from `made_from`
    made_from: tuple[str, ...] = ()  # a kind made for every base that has all of these kinds, in the first's order
    images: bool = False  # its questions carry images (pipeline.dataset.layout: each PNG stored once)
    # its images are the room's views (plan, door, first person), which other such kinds show too: the
    # configurations of these kinds of one base and of its balanced counterpart share their files, each PNG
    # stored once (pipeline.dataset.manifest.data_folder)
    shared_images: bool = False
    compared: Comparison | None = None
    # the harnesses that read it: lm_eval (text) or lmms_eval and vlmevalkit (images), and inspect
    harness: tuple[str, ...] = ("lm_eval", "inspect")
    questions: tuple[str, ...] = ("YN", "FR")  # the question types its rows ask: a harness task each
    balanced: bool = False  # its questions have a balanced counterpart, <config>_balanced (`build --balanced`)
    hard: bool = False  # and hard configurations, n8_m20_d144_hard (`build --hard`: docs/semantics.md section 22)

    def config_name(self, base: Config | str) -> str:
        return f"{self.prefix}{base if isinstance(base, str) else base.name}"

    def maker(self):
        """The module that makes this kind's rows (imported now: the builder's business only)."""
        return import_module(self.module)




def _with_image(other: str) -> Comparison:
    """A question asked with its image and its story against the same question with the story alone."""
    return Comparison("image+story vs story", other, ("image+story", "story"), False, "image+story")

# Card order: the order a build writes and lists its configurations in.
KINDS = {kind.name: kind for kind in (
    Kind("base", "", "pipeline.text.items", "the paper's items: a story and FR and YN questions per setting and view",
         None, balanced=True, hard=True),
    Kind("vision", "vision_", "pipeline.dataset.vision",
         "multimodal rows, each question with its rendered image (each PNG stored once: about 20 KB per room)",
         "--vision", images=True, shared_images=True, balanced=True, hard=True, compared=_with_image("base"),
         harness=("lmms_eval", "vlmevalkit", "inspect")),
    Kind("twin", "twin_", "pipeline.text.twins",
         "the same items with invented object and relation words (defined in each story)", "--twins", balanced=True,
         hard=True, compared=Comparison("twin", "base", ("original", "twin"), True)),
    Kind("agent", "agent_", "pipeline.text.agents",
         "stories and questions told from an observer facing a wall", "--agents", balanced=True, hard=True),
    Kind("vision_agent", "vision_agent_", "pipeline.dataset.vision_agent",
         "those rows with their images", None,
         made_from=("agent", "vision"), images=True, shared_images=True, balanced=True, hard=True,
         compared=_with_image("agent"), harness=("lmms_eval", "vlmevalkit", "inspect")),
    Kind("map", "map_", "pipeline.text.maps",
         "the paper's stories, each asking for a map of the room: any map on which every stated fact holds is right",
         "--maps", questions=("MAP",)),
    Kind("twin_map", "twin_map_", "pipeline.text.twin_maps", "those map questions told in invented words", None,
         made_from=("map", "twin"), compared=Comparison("twin", "map", ("original", "twin"), True),
         questions=("MAP",)),
    Kind("agent_map", "agent_map_", "pipeline.text.agent_maps",
         "the egocentric stories' map questions: the room drawn as the observer sees it, the observer in it",
         None, made_from=("map", "agent"), questions=("MAP",)),
    Kind("composition", "composition_", "pipeline.text.composition",
         "RCC-8 and direction compositions and conceptual neighbourhoods (the tables, in the first room) and "
         "compositions of each room's footprint relations, each under the calculus's names and invented ones",
         "--compositions", questions=("FR",)),
    Kind("shapes", "shapes_", "pipeline.text.shapes",
         "two objects of the room given only by coordinates (circles, rectangles, polygons), asked their "
         "topological, directional or distance relation", "--shapes", questions=("FR",)),
    Kind("object_tasks", "object_tasks_", "pipeline.dataset.object_tasks",
         "multi-step tasks on the small objects of a piece of furniture (pick one up, take one out): a plan of "
         "steps with their preconditions, asked with a description and with a close labelled picture",
         "--object-tasks", images=True, harness=("lmms_eval", "vlmevalkit", "inspect"), questions=("PLAN",)),
)}
BASE = KINDS["base"]


def parse(name: str) -> tuple[Kind, Config]:
    """A configuration's kind and base configuration: "vision_agent_n5_m4_d144" -> (vision_agent, n5_m4_d144).
    A name of no kind is a RoomspaceError."""
    kind = max((k for k in KINDS.values() if name.startswith(k.prefix)), key=lambda k: len(k.prefix))
    try:
        return kind, Config.parse(name.removeprefix(kind.prefix))
    except RoomspaceError as error:
        raise RoomspaceError(f"{name!r} is no configuration ({error}); a configuration is a base like n5_m4_d144 "
                             f"or one with a kind's prefix: {', '.join(k.prefix for k in KINDS.values() if k.prefix)}") from None


def kind_of(name: str) -> Kind:
    return parse(name)[0]


def added_kinds() -> tuple[Kind, ...]:
    """The kinds a build adds on request (its options), in card order."""
    return tuple(kind for kind in KINDS.values() if kind.option)


class Room(Protocol):
    """What a kind's `rows` is given: one room, and what its kinds make of it, each thing made once."""

    scene: object  # pipeline.scene.records.Scene
    house: dict  # its ProcTHOR house (the scene file's), read when first asked for
    renderer: object  # pipeline.render.job.Renderer: what draws its pictures

    def rows(self, kind: str, config: Config) -> Sequence:
        """The room's rows of another kind for this base configuration."""

    def shared(self, key: tuple, make: Callable[[], object]) -> object:
        """make(), made once per room and key: what several kinds or configurations use (renders, labels)."""
