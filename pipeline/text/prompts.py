"""The prompt of a row: story, question, options and how to answer (templates: data/prompts.json).

Style "self-contained" (the default, and what every row carries in its `prompt` column) states
everything the answer depends on: for a story, the grid, what "the same place" means, the view's
words and the definitions of each kind of fact the story uses (regions, wall contact, distance
thresholds), all generated from relations.json so that they cannot drift from the checker; for
an rcc8 row, what touching and inside mean for outlines; for a pair question about a picture, that
directions compare the objects' centres and how near counts as level (`tolerance`); for a
composition row (pipeline.text.composition), the relations of its calculus by their definitions, under the row's names (eponymous or anonymous). Style "paper"
is the story-only prompt of the published RoomSpace evaluation. A shapes row (pipeline.text.shapes)
gives the definitions of its relation category; its self-contained prompt is SRT4LLM's simple
strategy, which style "simple" also names for every row, and styles "guiding" and "example" add that
strategy's hints or two worked cases (shapes rows only). An object task (pipeline.text.object_tasks) has one
prompt in every style: SpatialQA's rules in this project's words, its description or its picture,
and the task, answered as JSON steps. All are pure functions of a row's fields,
so a harness that reads only the dataset rebuilds the same text (tests/evaluate/test_prompts.py
checks it byte for byte).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.spatial.frames import OBSERVER
from pipeline.spatial.relations import (COMPASS, DIRECTIONS, REGIONS, WALL_CONTACT, direction_signs, distance_scale,
                                        kind, region_bands, relation_words)

STYLES = ("self-contained", "paper", "simple", "guiding", "example")
SHAPES_ONLY = ("guiding", "example")  # SRT4LLM's strategies that add sections of their own ({hints}, {examples})
DEFAULT_STYLE = "self-contained"
RCC8_SETTING = "rcc8"  # footprints in metres, YN questions about RCC-8 relations: an addition to RoomSpace
IMAGE_ONLY_SETTING = "none"  # the fact set of a vision row without a story
MARKED = "marked_"  # a balanced pair question's image name: the view's name so prefixed, its objects marked by letters
AGENT_VIEW = "agent"  # an egocentric story's words: an observer's, facing a wall only the story's frame knows
PAIR_KINDS = ("image", "centres", "image+centres")  # one pair question asked three ways: one relation holds
CENTRES_SETTING = "centres"  # a vision pair question's story: object centres in metres, as the image shows them
PAIR_MODALITIES = ("image", "text", "image+text")  # how a vision pair question is asked: image, centres, both
MAP_QUESTION = "MAP"  # a map row's question type (pipeline.text.maps): draw the room, answered by a map
PLAN_QUESTION = "PLAN"  # an object task's question type (pipeline.text.object_tasks): answered by a plan of steps
# How a perspective picture's pair questions read left and right (pipeline.text.pictured), stated in their prompts:
BEARING_MARGIN = 10.0  # degrees: a picture tells left from right when the centres' bearings differ this much
IN_LINE = 2.0  # degrees: balanced configurations read centres this close in bearing as one behind the other


def _templates() -> dict:
    return data_json("prompts.json")


def composition_setting(setting: str) -> dict | None:
    """A composition row's setting (pipeline/data/composition.json): its calculus, task and whether
    it is grounded in a room; None for any other setting."""
    return data_json("composition.json")["settings"].get(setting)


def shapes_setting(setting: str) -> dict | None:
    """A shapes row's setting, its relation category (pipeline/data/coordinates.json); None for any other."""
    return data_json("coordinates.json")["categories"].get(setting)


def row_kind(setting: str, modality: str | None) -> str:
    """story, rcc8, image+story, a pair question's image, centres or image+centres, or a composition
    row's composition, neighbourhood or grounded: which task, definitions and instructions a row's
    prompt needs."""
    calculus = composition_setting(setting)
    if calculus is not None:
        return "grounded" if calculus["grounded"] else calculus["task"]
    if shapes_setting(setting) is not None:
        return "shapes"
    if setting == IMAGE_ONLY_SETTING:
        return "image"
    if setting == CENTRES_SETTING:
        return "image+centres" if modality == "image+text" else "centres"
    if setting == RCC8_SETTING:
        return "rcc8"
    return "image+story" if modality == "image+story" else "story"


def _words(code: str, view: str, field: str) -> str:
    """A code's words in `view`; an egocentric story (AGENT_VIEW) uses the north-facing observer's words."""
    return relation_words(code, OBSERVER if view == AGENT_VIEW else view, field)


def _sign_lines(view: str, axes: dict, template: str, parts) -> str:
    """One line per code: its label and how its (column, row) parts read in `axes`."""
    lines = []
    for code, (column, row) in parts:
        lines.append(template.format(label=_words(code, view, "label"), column=axes["column"][str(column)],
                                     row=axes["row"][str(row)]))
    return "\n".join(lines)


def direction_definitions(view: str) -> str:
    defs = _templates()["definitions"]
    lines = _sign_lines(view, _templates()["axes"][view], defs["direction_line"],
                        ((code, direction_signs(code)) for code in DIRECTIONS))
    return defs["directions"].format(lines=lines)


def centre_definitions(view: str) -> str:
    defs = _templates()["definitions"]
    lines = _sign_lines(view, _templates()["centre_axes"][view], defs["centre_line"],
                        ((code, direction_signs(code)) for code in DIRECTIONS))
    return defs["centres"].format(lines=lines)


def region_definitions(view: str, d: int) -> str:
    defs, axes = _templates()["definitions"], _templates()["axes"][view]
    lines = [defs["region_line"].format(label=_words(code, view, "label"),
                                        column=axes["column_band"][region_bands(code)[0]],
                                        row=axes["row_band"][region_bands(code)[1]]) for code in REGIONS]
    return defs["regions"].format(band=d // 3, lines="\n".join(lines))


def wall_definition(view: str) -> str:
    tpp, ntpp = (_words(code, view, "phrase") for code in WALL_CONTACT)
    return _templates()["definitions"]["wall"].format(tpp=tpp, ntpp=ntpp)


def distance_definitions(scale: str, view: str, d: int) -> str:
    """The bounds of a scale, from relations.json's `within` (dist^2 <= p/q d^2): each stated exactly as the
    largest whole squared distance in the class, with the distance in cells rounded to 0.1 as a guide only."""
    defs = _templates()["definitions"]
    codes = [e for e in data_json("relations.json")["codes"] if e["kind"] == "distance" and e["scale"] == scale]
    lines, lower = [], None
    for entry in codes:
        upper = None if entry["within"] is None else squared_bound(entry["within"], d)
        lines.append(defs[_band_template(lower, upper)].format(
            label=_words(entry["code"], view, "label"), lower=lower, upper=upper,
            lower_cells=_about_cells(lower), upper_cells=_about_cells(upper)))
        lower = upper
    return defs["distance"].format(lines="\n".join(lines))


def squared_bound(within: Sequence[int], d: int) -> int:
    """The largest squared cell distance within [p, q] on a d x d grid: floor(p d^2 / q), since squared
    distances between cell centres are whole numbers (relations.distance compares q dist^2 <= p d^2)."""
    return within[0] * d * d // within[1]


def _about_cells(squared: int | None) -> str | None:
    """A squared bound's distance in cells, rounded to 0.1: a reader's guide, never what decides."""
    return None if squared is None else f"{round(math.sqrt(squared), 1):g}"


def _band_template(lower: object, upper: object) -> str:
    """The template of one class of a list of bounds: the first (no lower bound), the last (none above), or between."""
    return "distance_first" if lower is None else "distance_last" if upper is None else "distance_middle"


def definitions(row_kind_: str, view: str, d: int, relations: frozenset[str], marked: bool = False) -> str:
    """What the answer depends on, for a row of this kind whose story states these relation codes
    (`marked`: a pair question about a picture marked by letters, which reads centres in line)."""
    return _definitions(row_kind_, view, d, *_kinds_and_scales(frozenset(relations)), marked)


@lru_cache(maxsize=4096)  # a few thousand sets of codes over a build; reading them per row was a third of a prompt
def _kinds_and_scales(codes: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The kinds of relation among the codes, and the distance scales."""
    scales = tuple(sorted({distance_scale(code) for code in codes if kind(code) == "distance"}))
    return frozenset(kind(code) for code in codes), scales


@lru_cache(maxsize=None)  # keyed by what the text depends on: a few hundred texts, asked for every row of a build
def _definitions(row_kind_: str, view: str, d: int, kinds: frozenset[str], scales: tuple[str, ...],
                 marked: bool = False) -> str:
    defs, axes = _templates()["definitions"], _templates()["axes"][view]
    if row_kind_ == "rcc8":
        return defs["rcc8"]
    if row_kind_ in PAIR_KINDS:
        parts = [defs["view"][view], centre_definitions(view)]
        return "\n\n".join(parts if row_kind_ == "centres" else [*parts, tolerance(view, d, marked)])
    parts = [defs["grid"].format(d=d, columns=axes["columns"], rows=axes["rows"],
                                 same=_words("O", view, "label")),
             defs["view"][view], direction_definitions(view)]
    if "region" in kinds:
        parts.append(region_definitions(view, d))
    if "wall" in kinds:
        parts.append(wall_definition(view))
    for scale in scales:
        parts.append(distance_definitions(scale, view, d))
    return "\n\n".join(parts)


def tolerance(view: str, d: int, marked: bool) -> str:
    """How near two centres in a picture count as level or in line, and that no pair asked about is
    nearer than that without being level: the plan's axes, or a perspective picture's directions
    (BEARING_MARGIN apart, or with `marked`, IN_LINE) and distances ahead (pipeline.text.pictured)."""
    words = _templates()["definitions"]["tolerance"]
    if view == "top_down":
        return words["top_down"].format(d=d)
    across = words["in_line" if marked else "across"].format(margin=f"{BEARING_MARGIN:g}", in_line=f"{IN_LINE:g}")
    return words["perspective"].format(d=d, across=across)


@lru_cache(maxsize=None)
def calculus_definitions(calculus: str, naming: str) -> str:
    """A calculus's relations (pipeline/data/composition.json) under one naming, each by its definition."""
    words = data_json("composition.json")
    table = words["calculi"][calculus]
    lines = [words["definition_line"].format(name=table["names"][naming][code], x="x", y="y",
                                             definition=definition.format(x="x", y="y"))
             for code, definition in table["definitions"].items()]
    return "\n".join([table["opening"][naming], *lines])


def figure_text(name: str, kind: str, centre: Sequence[float], radius: float,
                corners: Sequence[Sequence[float]]) -> str:
    """A shape as a shapes row's story states it: a circle by its centre and radius, a rectangle or
    polygon by its corners, back to the first (pipeline/data/coordinates.json)."""
    words = data_json("coordinates.json")["figures"]
    if kind == "circle":
        return words[kind].format(name=name, centre=words["point"].format(x=centre[0], y=centre[1]),
                                  radius=f"{radius:.2f}")
    ring = [*corners, corners[0]]
    return words[kind].format(name=name, corners=", ".join(words["point"].format(x=x, y=y) for x, y in ring))


@lru_cache(maxsize=None)
def shapes_definitions(category: str) -> str:
    """What a shapes row's answer depends on: its category's relations and how they are read off."""
    words = data_json("coordinates.json")
    if category == "topological":
        return calculus_definitions("rcc8", "eponymous")
    if category == "directional":
        lines = [words["directional_line"].format(label=relation_words(code, "top_down", "label"),
                                                  low=(45 * k - 22.5) % 360, high=45 * k + 22.5)
                 for k, code in enumerate(COMPASS)]
        return words["directional_definitions"].format(lines="\n".join(lines))
    lines, lower = [], None
    for entry in words["distances"]:
        upper = entry["within"]
        lines.append(words[_band_template(lower, upper)].format(label=entry["code"], lower=lower, upper=upper))
        lower = upper
    return words["distance_definitions"].format(lines="\n".join(lines))


@lru_cache(maxsize=None)
def strategy_sections(category: str) -> dict[str, str]:
    """The guiding strategy's hints and the example strategy's two worked cases for a shapes category."""
    words = data_json("coordinates.json")
    entry = words["categories"][category]
    hints = words["hints_intro"].format(lines="\n".join(f"({k}) {hint}" for k, hint in enumerate(entry["hints"], 1)))
    option_words = dict(zip(COMPASS, (relation_words(code, "top_down", "label") for code in COMPASS)))
    cases = [words["example_case"].format(
        number=number, reasoning=case["reasoning"], answer=option_words.get(case["answer"], case["answer"]),
        shapes=" ".join(figure_text(name, shape["kind"], shape.get("centre", (0, 0)), shape.get("radius", 0.0),
                                    shape.get("corners", ())) for name, shape in zip("AB", case["shapes"])))
        for number, case in enumerate(entry["examples"], 1)]
    return {"hints": hints, "examples": words["example_intro"].format(cases="\n\n".join(cases))}


@lru_cache(maxsize=None)  # one text, asked for every moved agent row
def perspective_definitions() -> str:
    """How a question that moves you to another stance is answered: directions as seen from there."""
    defs = _templates()["definitions"]
    lines = _sign_lines(AGENT_VIEW, _templates()["axes"][AGENT_VIEW], defs["direction_line"],
                        ((code, direction_signs(code)) for code in DIRECTIONS))
    return defs["perspective"].format(lines=lines)


def prompt_text(style: str, *, story: str, question: str, options: Iterable[str], question_type: str, setting: str,
                view: str, d: int, relations: Iterable[str], modality: str | None = None,
                story_view: str | None = None, moved: bool = False, naming: str | None = None,
                image_name: str | None = None) -> str:
    """The prompt of one row in `style`; `relations` are the codes of the facts its story states.

    An agent row (pipeline.text.agents) tells its story in `story_view` and asks in `view`; when the
    question `moved` you to another stance, the prompt also says how its options are seen from there.
    A composition row names its calculus's relations in its `naming` (eponymous or anonymous). A
    pair question about a picture whose objects are marked by letters (`image_name` MARKED...) says so.
    """
    templates = _templates()
    if style not in templates["styles"]:
        raise RoomspaceError(f"unknown prompt style {style!r}; expected one of {', '.join(STYLES)}")
    if style in SHAPES_ONLY and shapes_setting(setting) is None:
        raise RoomspaceError(f"prompt style {style} is an SRT4LLM strategy, written for shapes rows only "
                             "(shapes_* configurations); give those with --config, or use self-contained or paper")
    if question_type == MAP_QUESTION:
        return map_prompt(style, story, question, options, view, d, relations)
    if question_type == PLAN_QUESTION:
        return plan_prompt(story, question, modality)
    kind_ = row_kind(setting, modality)
    calculus = composition_setting(setting)
    instructions = "relations" if calculus else "pair" if kind_ in (*PAIR_KINDS, "shapes") else "story"
    fields = {"story": story, "question": question, "options": ", ".join(options),
              "instructions": templates["instructions"][instructions][question_type],
              "task": templates["task"][kind_]}
    if (image_name or "").startswith(MARKED):  # a picture marked by letters (its text-only twin says no picture)
        fields["task"] = templates["task_marked"].get(kind_, fields["task"])
    if "{definitions}" in templates["styles"][style]:
        if calculus:
            fields["definitions"] = calculus_definitions(calculus["calculus"], naming)
        elif kind_ == "shapes":
            fields["definitions"] = shapes_definitions(setting)
        else:
            fields["definitions"] = definitions(kind_, story_view or view, d, frozenset(relations),
                                                (image_name or "").startswith(MARKED))
        if moved:
            fields["definitions"] += "\n\n" + perspective_definitions()
    if style in SHAPES_ONLY:
        fields.update(strategy_sections(setting))
    return _style_template(style).format(**fields)


def map_prompt(style: str, story: str, question: str, names: Iterable[str], view: str, d: int,
               relations: Iterable[str]) -> str:
    """A map question's prompt: the story's definitions (as for its FR and YN questions), the objects'
    numbers as the options (`names` in their order, numbered from 1), and how to write the map."""
    words = _templates()["map"]
    legend = ", ".join(words["legend"].format(number=number, name=name) for number, name in enumerate(names, 1))
    fields = {"story": story, "question": question, "options": legend, "task": words["task"],
              "instructions": words["instructions"].format(d=d, **words["sides"][view])}
    if "{definitions}" in _templates()["styles"][style]:
        fields["definitions"] = definitions("story", view, d, frozenset(relations))
    return _style_template(style).format(**fields)


def plan_prompt(story: str, question: str, modality: str | None) -> str:
    """An object task's prompt (pipeline/data/object_tasks.json): the task and the answer's format with
    an example, the description (a text row) or nothing (an image row: the picture comes with it), the
    rules SpatialQA's evaluation gives, in this project's words, then the task. Every style gives it
    alike: the task has no story-only form to compare with."""
    words = data_json("object_tasks.json")["prompt"]
    how = "image" if modality == "image" else "text"
    example = json.dumps(words["example"], indent=2)
    parts = [words["task"][how], words["format"].format(example=example)]
    if story:
        parts.append(story)
    parts += [words["rules"].format(source=words["source"][how]), words["ask"].format(question=question)]
    return "\n\n".join(parts)


@lru_cache(maxsize=None)
def _style_template(style: str) -> str:
    """A style's sections joined: formatting the whole once is formatting each (no value is formatted again)."""
    return "\n\n".join(_templates()["styles"][style])


def row_prompt(row: Mapping, style: str = DEFAULT_STYLE) -> str:
    """The prompt of a dataset row (a dict as read from Parquet)."""
    return prompt_text(style, story=row["story"], question=row["question"], options=row["options"],
                       question_type=row["question_type"], setting=row["setting"], view=row["view"], d=row["d"],
                       relations=(fact["relation"] for fact in row["facts"]), modality=row.get("modality"),
                       story_view=row.get("story_view"), moved=row.get("frame_changes", 0) > 0,
                       naming=row.get("naming"), image_name=row.get("image_name"))
