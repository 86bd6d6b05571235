"""The shapes kind's rows (pipeline/text/shapes.py): two objects of a room given only as coordinates, one
question per shape kind and relation category, the answer read off the stated numbers; the SRT4LLM
prompt strategies as styles."""

import dataclasses
import re
from collections import Counter

import pytest
from conftest import SCENE_SEED

from pipeline.data import data_json
from pipeline.dataset.build import RoomWork
from pipeline.dataset.rows import check_row, records_table
from pipeline.errors import RoomspaceError
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.figures import CIRCLE, POLYGON, RECTANGLE, direction_of, gap, rcc8_of
from pipeline.spatial.relations import COMPASS
from pipeline.spatial.topology import RCC8
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS
from pipeline.text.prompts import prompt_text, row_prompt
from pipeline.text.shapes import ASKED, CATEGORIES, SHAPE_KINDS, ShapeItem, shape_of

CONFIG = Config(5, 4, 12)
NAME = KINDS["shapes"].config_name(CONFIG)
WORDS = data_json("coordinates.json")


def room(scenes, index: int, plants: bool = False):
    """A test room's scene and shapes rows; with `plants`, two round plants stand in for its first two
    floor objects (round assets are few: a test room may have no two)."""
    path = scene_path(scenes, SCENE_SEED, index)
    scene = load_scene(path)
    if plants:
        first, second = [o for o in scene.prominent if not o.wall_hung][:2]
        potted = {o.id: dataclasses.replace(o, type="HousePlant", size=(0.4, 1.2, 0.44)) for o in (first, second)}
        scene = dataclasses.replace(scene, objects=tuple(potted.get(o.id, o) for o in scene.objects))
    work = RoomWork(scene, path)
    return work.scene, work.rows("shapes", CONFIG)


@pytest.fixture(scope="module")
def rooms(scenes) -> list[tuple]:
    return [room(scenes, index) for index in range(9)] + [room(scenes, index, plants=True) for index in (0, 1)]


def test_up_to_two_relations_per_kind_and_category_about_two_figures_of_that_kind(rooms):
    seen, twice = set(), 0
    for scene, rows in rooms:
        asked = Counter((row.shape_kind, row.setting) for row in rows)
        assert set(asked) <= {(k, c) for k in SHAPE_KINDS for c in CATEGORIES} and max(asked.values()) <= ASKED
        for shape_kind, category in asked:  # each question of a kind and category asks about another relation
            answers = [row.true_relation for row in rows if (row.shape_kind, row.setting) == (shape_kind, category)]
            assert len(answers) == len(set(answers))
        twice += sum(count == ASKED for count in asked.values())
        kinds = {o.id: shape_of(o) for o in scene.prominent if not o.wall_hung}
        for row in rows:
            seen.add((row.shape_kind, row.setting))
            a, b = row.figures
            assert (a.name, b.name) == ("A", "B") and a.kind == b.kind == row.shape_kind
            drawn = [kinds.get(f.object_id, "floor") for f in (a, b)]
            if row.shape_kind == CIRCLE:
                assert drawn == [CIRCLE, CIRCLE]
            elif row.shape_kind == RECTANGLE:
                assert set(drawn) <= {RECTANGLE, "floor"} and ("floor" not in drawn or row.setting == "topological")
            else:
                assert POLYGON in drawn and CIRCLE not in drawn and "floor" not in drawn
            check_row(vars(row))
    assert {kind for kind, _ in seen} == set(SHAPE_KINDS) and twice  # every kind asked, circles where plants stand
    circles = [(scene, row) for scene, rows in rooms[-2:] for row in rows if row.shape_kind == CIRCLE]
    assert {row.setting for _, row in circles} == set(CATEGORIES)
    for scene, row in circles:  # a circle's radius is half its box's mean side: 0.21 for the plants' 0.4 by 0.44
        sizes = {o.id: o.size for o in scene.objects}
        assert all(f.radius == round((sizes[f.object_id][0] + sizes[f.object_id][2]) / 4, 2) for f in row.figures)


def test_the_answer_is_read_off_the_stated_numbers(rooms):
    margins = WORDS["margins"]
    for _, rows in rooms:
        for row in rows:
            a, b = row.figures
            numbers = [float(n) for n in re.findall(r"-?\d+\.\d\d", row.story)]
            stated = [n for f in (a, b) for n in ((*f.centre, f.radius) if f.kind == CIRCLE
                                                  else (*(c for corner in f.corners for c in corner), *f.corners[0]))]
            assert numbers == stated  # the story gives exactly the figures' numbers, rings closed
            (answer,) = row.answer_set
            if row.setting == "topological":
                assert answer == rcc8_of(a, b) and row.options == RCC8 and row.arguments == ("A", "B")
            elif row.setting == "directional":
                code, margin = direction_of(a, b)
                assert answer == code and margin >= margins["degrees"] and row.answer == row.options[COMPASS.index(code)]
            else:
                bounds = [e["within"] for e in WORDS["distances"] if e["within"] is not None]
                assert all(abs(gap(a, b) - bound) >= margins["metres"] for bound in bounds)
                assert answer == next(e["code"] for e in WORDS["distances"]
                                      if e["within"] is None or gap(a, b) <= e["within"])
            assert row.true_relation == answer and row.question_type == "FR"


def test_the_strategies_are_styles_of_every_shapes_row(rooms):
    _, rows = rooms[0]
    for row in rows:
        stored = records_table([row], NAME).to_pylist()[0]
        assert row.prompt == row_prompt(stored) == row_prompt(stored, "simple")
        guiding, example = row_prompt(stored, "guiding"), row_prompt(stored, "example")
        hints, cases = WORDS["categories"][row.setting]["hints"], WORDS["categories"][row.setting]["examples"]
        assert all(hint in guiding for hint in hints) and not any(hint in row.prompt for hint in hints)
        assert all(case["reasoning"] in example for case in cases) and example.count("Case ") == 2
        assert guiding.replace(guiding[guiding.index("Points to watch"):guiding.index("Question:")], "") == \
            row.prompt  # guiding adds its hints and nothing else
    base = dict(story="s", question="q", options=("Yes", "No"), question_type="YN", setting="o2", view="top_down",
                d=12, relations=())
    with pytest.raises(RoomspaceError, match="shapes rows only"):
        prompt_text("guiding", **base)


def test_rows_are_a_pure_function_of_the_room(scenes, rooms):
    scene, rows = room(scenes, 3)
    assert rows == rooms[3][1] and all(isinstance(row, ShapeItem) for row in rows)
