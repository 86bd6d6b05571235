"""One ready prompt per dataset row: story, question, options and how to answer (templates: data/prompts.json).

Style "plain" is the row as a reader sees it. Style "guided" adds the task and the definitions the
checker uses -- the grid, and for each kind of fact in the story its meaning on the grid -- all
generated from relations.json, so the definitions cannot drift from the answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.spatial.relations import (DIRECTIONS, REGIONS, WALL_CONTACT, direction_signs, distance_scale, kind,
                                        region_bands, relation_words)

STYLES = ("plain", "guided")


@dataclass(frozen=True)
class Prompt:
    id: str
    prompt: str  # the whole text; `messages` sends it as one user turn, which every chat model accepts

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt}]

    def record(self) -> dict:
        return {"id": self.id, "prompt": self.prompt, "messages": self.messages}


def _templates() -> dict:
    return data_json("prompts.json")


def direction_definitions(view: str) -> str:
    axes = _templates()["axes"][view]
    line = _templates()["definitions"]["direction_line"]
    lines = []
    for code in DIRECTIONS:
        column, row = direction_signs(code)
        lines.append(line.format(label=relation_words(code, view, "label"),
                                 column=axes["column"][str(column)], row=axes["row"][str(row)]))
    return _templates()["definitions"]["directions"].format(lines="\n".join(lines))


def region_definitions(view: str, d: int) -> str:
    axes = _templates()["axes"][view]
    line = _templates()["definitions"]["region_line"]
    lines = []
    for code in REGIONS:
        column, row = region_bands(code)
        lines.append(line.format(label=relation_words(code, view, "label"),
                                 column=axes["column_band"][column], row=axes["row_band"][row]))
    return _templates()["definitions"]["regions"].format(band=d // 3, lines="\n".join(lines))


def wall_definition(view: str) -> str:
    tpp, ntpp = (relation_words(code, view, "phrase") for code in WALL_CONTACT)
    return _templates()["definitions"]["wall"].format(tpp=tpp, ntpp=ntpp)


def distance_definitions(scale: str, view: str, d: int) -> str:
    """The bounds of a scale in cells, from relations.json's `within` (dist^2 <= p/q d^2)."""
    defs = _templates()["definitions"]
    codes = [e for e in data_json("relations.json")["codes"] if e["kind"] == "distance" and e["scale"] == scale]
    lines, lower = [], None
    for entry in codes:
        label = relation_words(entry["code"], view, "label")
        upper = None if entry["within"] is None else _bound(d * math.sqrt(entry["within"][0] / entry["within"][1]))
        template = "distance_first" if lower is None else "distance_last" if upper is None else "distance_middle"
        lines.append(defs[template].format(label=label, lower=lower, upper=upper))
        lower = upper
    return defs["distance"].format(lines="\n".join(lines))


def _bound(value: float) -> str:
    """A threshold rounded up to 0.01: cell-centre distances are square roots of integers <= 2 * 12^2,
    at least 0.02 apart, so none falls between the exact threshold and the printed one."""
    return f"{math.ceil(value * 100 - 1e-9) / 100:g}"


def definitions(row: dict) -> str:
    """The grid and view, directions, then the definitions of the other kinds of fact the story uses."""
    view, d = row["view"], row["d"]
    defs, axes = _templates()["definitions"], _templates()["axes"][view]
    codes = {fact["relation"] for fact in row["facts"]}
    kinds = {kind(code) for code in codes}
    parts = [defs["grid"].format(d=d, columns=axes["columns"], rows=axes["rows"]), defs["view"][view],
             direction_definitions(view)]
    if "region" in kinds:
        parts.append(region_definitions(view, d))
    if "wall" in kinds:
        parts.append(wall_definition(view))
    for scale in sorted({distance_scale(code) for code in codes if kind(code) == "distance"}):
        parts.append(distance_definitions(scale, view, d))
    return "\n\n".join(parts)


def make_prompt(row: dict, style: str) -> Prompt:
    templates = _templates()
    if style not in templates["styles"]:
        raise RoomspaceError(f"unknown prompt style {style!r}; expected one of {', '.join(STYLES)}")
    fields = {
        "story": row["story"], "question": row["question"], "options": ", ".join(row["options"]),
        "instructions": templates["instructions"][row["question_type"]], "task": templates["task"],
    }
    if style == "guided":
        fields["definitions"] = definitions(row)
    text = "\n\n".join(section.format(**fields) for section in templates["styles"][style])
    return Prompt(row["id"], text)


def make_prompts(rows: list[dict], style: str) -> list[Prompt]:
    return [make_prompt(row, style) for row in rows]
