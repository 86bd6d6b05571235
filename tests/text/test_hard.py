"""The hard configurations: larger stories, every question one only the checker's search answers."""

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan
from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import open_rows
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.checker import answer_set, propagated_answer
from pipeline.spatial.facts import HARD_SETTINGS, described_pairs
from pipeline.spatial.ladder import story_variables
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.configs import HARD_N, Config, parse_configs
from pipeline.text.items import RoomItems

HARD = parse_configs("hard")


@pytest.fixture(scope="module")
def hard_rows(scenes) -> dict:
    """Every room's rows of both hard configurations, by (room, configuration)."""
    rooms = [load_scene(scene_path(scenes, SCENE_SEED, index)) for index in range(SCENE_COUNT)]
    return {(scene.index, config.name): (scene, RoomItems(scene)(config)) for scene in rooms for config in HARD}


def test_hard_configurations_are_named_and_parsed_as_their_family():
    assert [c.name for c in HARD] == ["n8_m20_d81_hard", "n8_m20_d144_hard"]
    assert all(Config.parse(c.name) == c and c.balanced and c.hard for c in HARD)
    assert Config(5, 4, 12).as_hard() == HARD[1]
    with pytest.raises(RoomspaceError, match="balanced=True"):
        Config(8, 20, 12, hard=True)


def test_every_hard_question_is_one_only_search_answers(hard_rows):
    rows = [row for _, made in hard_rows.values() for row in made]
    assert {row.setting for row in rows} == set(HARD_SETTINGS) and {"Yes", "No"} <= {row.answer for row in rows}
    for row in rows:
        variables = story_variables(row.facts, row.query.pair)
        exact = answer_set(row.facts, variables, row.query.pair, row.d)
        local = propagated_answer(row.facts, variables, row.query.pair, row.d)
        assert tuple(c for c in DIRECTIONS if c in exact) == row.answer_set and local > exact
        assert row.level == 3 and row.search_effort >= 2 and frozenset(row.bounded.local) == local
        if row.question_type == "YN":
            # a Yes is a relation the story allows; a No one only search rules out: R2 answers it wrongly
            assert row.candidate in (exact if row.answer == "Yes" else local - exact)


def test_hard_stories_state_chain_directions_and_every_pairs_distance(hard_rows):
    for (_, config), (_, made) in hard_rows.items():
        for row in made:
            names = [o.name for o in row.objects]
            stated = {frozenset((f.subject, f.object)): f for f in row.facts if f.relation in DIRECTIONS}
            pairs = described_pairs(row.n, row.m)
            assert set(stated) == {frozenset((names[a], names[b])) for a, b in pairs[:row.n - 1]}
            scale = "D2" if row.setting == "chain_d2" else "D3"
            assert sum(f.relation.startswith(scale) for f in row.facts) == len(pairs) == len(row.facts) - (row.n - 1)
            assert not any(f.object is None for f in row.facts)


def test_a_room_without_enough_objects_asks_no_hard_question(hard_rows):
    small = [made for scene, made in hard_rows.values() if len(scene.prominent) < HARD_N]
    assert small and not any(small)


def test_hard_configurations_come_with_the_kinds_that_have_them(scenes, tmp_path, capsys):
    plan = BuildPlan.asked("hard", SCENE_SEED, 2, parse_configs("n5_m4_d144,hard"), {"twin": HARD})
    assert [o.name for o in plan.outputs] == ["n5_m4_d144", "n8_m20_d81_hard", "n8_m20_d144_hard",
                                              "twin_n8_m20_d81_hard", "twin_n8_m20_d144_hard"]
    assert main(["build", "--rooms", "1", "--scenes", str(scenes), "--out", str(tmp_path / "a"),
                 "--configs", "n5_m4_d144", "--agents", "n8_m20_d144_hard"]) == 1
    assert "the agent kind has no hard configurations" in capsys.readouterr().err


def test_hard_vision_rows_ask_the_hard_questions_with_their_pictures_and_nothing_else(scenes, tmp_path):
    # room 4 of the shared scenes has eight objects and questions only search answers
    out = tmp_path / "hard-vision"
    assert main(["build", "--rooms", "5", "--seed", str(SCENE_SEED), "--scenes", str(scenes), "--out", str(out),
                 "--configs", "n5_m4_d144", "--vision", "n5_m4_d144", "--hard", "--quiet"]) == 0
    source = open_rows(out)
    base = {row["id"].replace("n8_m20_d144_hard", "vision_n8_m20_d144_hard"): row
            for row in source.rows(["n8_m20_d144_hard"])}
    vision = list(source.rows(["vision_n8_m20_d144_hard"]))
    assert vision and all(row["modality"] == "image+story" and row["level"] == 3 for row in vision)
    assert {row["id"] for row in vision} <= set(base)
    assert all(row["answer_set"] == base[row["id"]]["answer_set"] for row in vision)
