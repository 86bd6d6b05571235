"""Prompts: every item's story, question, options and answer format; self-contained definitions that match the checker."""

import json
import math
import re

import pytest
from handmade import handmade_scene

from pipeline.dataset.rows import to_row
from pipeline.errors import RoomspaceError
from pipeline.evaluate.prompts import make_prompt, make_prompts
from pipeline.spatial.relations import distance, relation_words
from pipeline.text.configs import Config
from pipeline.text.items import room_items
from pipeline.text.prompts import SHAPES_ONLY, STYLES, row_prompt


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [to_row(item) for config in (Config(5, 4, 9), Config(4, 3, 12))
            for item in room_items(handmade_scene(2), config)]


def pick(rows, **wanted) -> dict:
    return next(r for r in rows if all(r[k] == v for k, v in wanted.items()))


@pytest.mark.parametrize("style", [style for style in STYLES if style not in SHAPES_ONLY])  # shapes rows' alone
def test_every_prompt_holds_story_question_options_and_format(rows, style):
    prompts = list(make_prompts(rows, style))
    assert [p.id for p in prompts] == [r["id"] for r in rows]
    for prompt, row in zip(prompts, rows):
        assert row["story"] in prompt.text and row["question"] in prompt.text
        assert "Options: " + ", ".join(row["options"]) + "." in prompt.text
        assert "Answer:" in prompt.text
        assert prompt.messages == [{"role": "user", "content": prompt.text}] and prompt.image is None
        assert json.loads(json.dumps(prompt.record()))["id"] == row["id"]


def test_paper_prompts_carry_no_definitions_and_self_contained_ones_do(rows):
    row = pick(rows, setting="o2_d3_layout", view="top_down", d=9)
    paper, full = make_prompt(row, "paper").text, make_prompt(row).text
    assert "grid" not in paper and paper.startswith(row["story"])
    assert "9 by 9 grid" in full and full.index("grid") < full.index(row["story"])
    assert '"same place" means the same cell' in full
    assert full == row["prompt"] == row_prompt(row)  # the default is the row's own column


def test_rcc8_prompts_define_outlines_not_the_grid(rows):
    text = make_prompt(pick(rows, setting="rcc8", view="top_down")).text
    assert "Outlines are closed" in text and "grid" not in text


def test_definitions_follow_the_view(rows):
    top = make_prompt(pick(rows, setting="o2_layout", view="top_down")).text
    facing = make_prompt(pick(rows, setting="o2_layout", view="north_facing")).text
    assert "- north-west: A is in a column further west than B and a row further north." in top
    assert "- front-left: A is in a column further left than B and a row farther from the door." in facing
    assert '"in front of" means farther from the door' in facing
    assert "far-left corner: the left band of columns and the far band of rows" in facing
    assert "north-west corner: the west band of columns and the north band of rows" in top


def test_definitions_only_for_the_kinds_of_fact_in_the_story(rows):
    def defined(setting):
        return make_prompt(pick(rows, setting=setting, view="top_down", d=12)).text

    assert "against a wall when its cell is on the outer edge" in defined("tpp")
    assert "outer edge" not in defined("layout")
    assert "bands of 4 cells" in defined("layout")
    assert "bands of" not in defined("o2")
    assert "- close: at most 6 cells." in defined("o2_d2")
    assert "medium distance: more than 5.66 and at most 11.32 cells." in defined("o2_d3")
    assert "Distances are" not in defined("o2")


@pytest.mark.parametrize("d, scale", [(9, "D2"), (9, "D3"), (12, "D2"), (12, "D3")])
def test_printed_distance_bounds_classify_every_cell_distance_as_the_checker_does(rows, d, scale):
    row = pick(rows, setting="o2_d3" if scale == "D3" else "o2_d2", view="top_down", d=d)
    text = make_prompt(row).text
    bounds = {}
    for code in {"D2": ("D2C", "D2F"), "D3": ("D3C", "D3M", "D3F")}[scale]:
        label = relation_words(code, "top_down", "label")
        line = re.search(rf"- {label}: (.*) cells\.", text).group(1)
        bounds[code] = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]
    for di in range(d):
        for dj in range(d):
            length = math.hypot(di, dj)
            printed = next(c for c, b in bounds.items()
                           if (len(b) == 1 and (length <= b[0] if c.endswith("C") else length > b[0]))
                           or (len(b) == 2 and b[0] < length <= b[1]))
            assert printed == distance((0, 0), (di, dj), d, scale), (di, dj)


def test_an_unknown_style_is_refused(rows):
    with pytest.raises(RoomspaceError, match="unknown prompt style"):
        make_prompt(rows[0], "fancy")
