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
from pipeline.text.prompts import SHAPES_ONLY, STYLES, definitions, row_prompt


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
    assert "- close: (difference in columns)² + (difference in rows)² at most 36, a distance of up to about 6 cells." \
        in defined("o2_d2")
    assert "- medium distance: that sum more than 32 and at most 128, a distance from about 5.7 to about 11.3 cells." \
        in defined("o2_d3")
    assert "Distances are" not in defined("o2")


SCALE_CODES = {"D2": ("D2C", "D2F"), "D3": ("D3C", "D3M", "D3F")}
STATED = {(9, "D2"): [20], (9, "D3"): [18, 72], (12, "D2"): [36], (12, "D3"): [32, 128]}  # the figures


def distance_lines(text: str, view: str, scale: str) -> dict[str, str]:
    """Each distance class's line in a prompt's definitions, by code."""
    return {code: re.search(rf"^- {re.escape(_label(code, view))}: (.*)$", text, re.M).group(1)
            for code in SCALE_CODES[scale]}


def _label(code: str, view: str) -> str:
    return relation_words(code, "north_facing" if view == "agent" else view, "label")


def pairs_by_squared_distance(d: int) -> dict[int, list[tuple[tuple[int, int], tuple[int, int]]]]:
    """Real pairs of cells of a d x d grid, by their squared centre distance, in both orders and from
    two corners."""
    found = {}
    for di in range(d):
        for dj in range(d):
            for a in ((0, 0), (d - 1 - di, d - 1 - dj)):
                b = (a[0] + di, a[1] + dj)
                found.setdefault(di * di + dj * dj, []).extend([(a, b), (b, a)])
    return found


@pytest.mark.parametrize("view", ["top_down", "north_facing", "agent"])
@pytest.mark.parametrize("d, scale", [(9, "D2"), (9, "D3"), (12, "D2"), (12, "D3")])
def test_stated_squared_bounds_classify_every_cell_pair_as_the_checker_does(rows, d, scale, view):
    """Each class is stated as whole bounds on (difference in columns)^2 + (difference in rows)^2: for every
    squared distance s of two real cells, the class whose bounds admit s is distance()'s. A bound stated as
    a rounded distance in cells ("at most 5.66 cells", the old wording) is not one: a decimal may appear
    only as the guide after "about"."""
    codes = frozenset(SCALE_CODES[scale])
    text = definitions("story", view, d, codes)
    if view != "agent":  # what the rows carry
        row = pick(rows, setting="o2_d3" if scale == "D3" else "o2_d2", view=view, d=d)
        assert text in make_prompt(row).text
    lines = distance_lines(text, view, scale)
    bounds = {}
    for code, line in lines.items():
        assert not re.search(r"at most \d+\.\d+ cells", line), line
        assert all(line[max(0, m.start() - 6):m.start()] == "about " for m in re.finditer(r"\d+\.\d+", line)), line
        bounds[code] = {word: int(n) for word, n in re.findall(r"(more than|at most) (\d+)(?![.\d])", line)}
    assert "(difference in columns)² + (difference in rows)²" in text
    stated = [b["at most"] for b in bounds.values() if "at most" in b]
    assert stated == STATED[d, scale]
    pairs = pairs_by_squared_distance(d)
    assert set(stated) <= set(pairs)  # every bound is a squared distance some pair of cells has
    close = SCALE_CODES[scale][0]
    for s in range(2 * (d - 1) ** 2 + 1):
        for a, b in pairs.get(s, []):  # none when s is not a sum of two squares
            assert (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 == s
            checker = distance(a, b, d, scale)
            assert (s <= bounds[close]["at most"]) == (checker == close), (s, a, b)
            assert [code for code, bound in bounds.items()
                    if bound.get("more than", -1) < s <= bound.get("at most", s)] == [checker], (s, a, b)
    for code, line in lines.items():  # the guide: each bound's distance in cells, rounded to 0.1
        guide = [float(x) for x in re.findall(r"about (\d+(?:\.\d+)?)", line)]
        assert guide == [round(math.sqrt(n), 1) for n in sorted(bounds[code].values())], line


def test_an_unknown_style_is_refused(rows):
    with pytest.raises(RoomspaceError, match="unknown prompt style"):
        make_prompt(rows[0], "fancy")
