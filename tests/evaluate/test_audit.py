"""The shortcut audit: blind baselines see no story or image, never score a room they were fitted on,
and find a shortcut where there is one."""

from random import Random

import pytest
from conftest import SCENE_SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.dataset.audit import (ALL_SETTINGS, AUDIT_COLUMNS, MAP_AUDIT_COLUMNS, Question, audit_cells, blind_answers,
                                    blind_features, map_audit_cells, map_question_of, object_type, over_limits,
                                    question_of)
from pipeline.evaluate.audit import audit_source
from pipeline.spatial.relations import region
from pipeline.text.configs import parse_configs
from pipeline.text.targets import map_lines

CONFIG = "n3_m2_d81"


def question(k: int, candidate: str, answer: str, setting: str = "o2", room: int | None = None) -> Question:
    row = {"id": f"q{k}", "room_id": f"s0-{k if room is None else room:06d}", "config": CONFIG, "setting": setting,
           "view": "top_down", "question_type": "YN", "answer": answer, "answer_set": ("N",), "candidate": candidate,
           "options": ("Yes", "No"), "question": f"Is the chair {k % 3 + 1} north of the bed?",
           "query": {"subject": f"chair {k % 3 + 1}", "object": "bed"}}
    return question_of(row)


def test_a_candidate_that_gives_the_answer_is_found_and_a_coin_is_not():
    rng = Random(0)
    told = [question(k, c, "Yes" if c in "NE" else "No") for k, c in enumerate(rng.choice("NESW") for _ in range(400))]
    coin = [question(k, rng.choice("NESW"), rng.choice(["Yes", "No"])) for k in range(400)]
    for questions, low, high in ((told, 1.0, 1.0), (coin, 0.35, 0.65)):
        answers = blind_answers(questions, None, seed=1)
        (cell, overall) = audit_cells(questions, answers)
        assert cell.setting == "o2" and overall.setting == ALL_SETTINGS and cell.questions == 400
        assert low <= cell.majority <= high and low <= cell.learned <= high


def test_no_question_is_answered_by_a_baseline_fitted_on_its_room():
    # Every question of a room has the same answer, and rooms alternate: a baseline that saw the room
    # would score 100%; one fitted on the other rooms can only guess the key's majority.
    questions = [question(k, "N", "Yes" if (k // 4) % 2 else "No", room=k // 4) for k in range(400)]
    answers = blind_answers(questions, None, seed=3)
    (cell, _) = audit_cells(questions, answers)
    assert cell.majority < 0.7 and cell.learned < 0.7


def map_question(k: int, bed: tuple[int, int], chair: tuple[int, int], room: int | None = None):
    """A map question of a story stating the regions of a bed and chair 1, drawn at those cells (d = 9)."""
    row = {"id": f"m{k}", "room_id": f"s0-{k if room is None else room:06d}", "config": "map_n3_m2_d81",
           "setting": "layout", "view": "top_down", "question_type": "MAP", "options": ("bed", f"chair {k % 2 + 1}"),
           "answer": "\n".join(map_lines([bed, chair], 9)), "d": 9,
           "facts": [{"subject": "bed", "relation": region(bed, 9), "object": None},
                     {"subject": f"chair {k % 2 + 1}", "relation": region(chair, 9), "object": None}]}
    return map_question_of(row)


def test_the_blind_map_puts_each_type_where_it_stands_most_often_in_other_rooms():
    rng = Random(2)
    # Beds stand in the north-west corner in every room, chairs anywhere: the blind map keeps every bed's fact
    # and a chair's about as often as the chair's region is its type's most frequent one.
    questions = [map_question(k, (rng.randrange(3), 6 + rng.randrange(3)), (rng.randrange(9), rng.randrange(9)))
                 for k in range(200)]
    (cell, overall) = map_audit_cells(questions, None, seed=1)
    assert (cell.setting, overall.setting, cell.questions) == ("layout", ALL_SETTINGS, 200)
    assert 0.5 <= cell.blind_facts < 0.75 and 0.0 < cell.blind_consistent < 0.5
    assert cell.chance_facts < 0.25 and cell.chance_consistent < 0.05  # a region is a ninth of the room
    # every room puts its bed in a corner of its own: a map fitted on the room would keep it, one fitted on others not
    cornered = [map_question(k, (8 * (k // 4 % 2), 8 * (k // 8 % 2)), (4, 4), room=k // 4) for k in range(400)]
    (cell, _) = map_audit_cells(cornered, None, seed=3)
    assert cell.blind_consistent < 0.75 and cell.blind_facts < 0.9


def test_the_features_hold_no_story_and_names_lose_their_numbers():
    assert "story" not in AUDIT_COLUMNS and "image" not in AUDIT_COLUMNS and "prompt" not in AUDIT_COLUMNS
    assert "story" not in MAP_AUDIT_COLUMNS and "prompt" not in MAP_AUDIT_COLUMNS and "question" not in MAP_AUDIT_COLUMNS
    assert object_type("chair 2") == "chair" and object_type("floor lamp") == "floor lamp"
    features = blind_features(question(4, "N", "Yes"))
    assert "types=chair|bed" in features and "w=north" in features and "candidate=N" in features


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "roomspace-audit"
    build(BuildPlan.asked(out.name, SCENE_SEED, 9, parse_configs(CONFIG)), scenes, out, workers=1, progress=False)
    return out


def test_the_paper_configuration_shows_its_rcc8_shortcut_and_fails_the_limits(built, capsys):
    cells, map_cells, fitted_on, notes = audit_source(str(built), None)
    assert notes == []  # YN and FR questions: every configuration has its lines
    assert map_cells == []  # no map configuration
    assert fitted_on.startswith("each half")
    by = {(c.setting, c.question_type): c for c in cells}
    assert by["rcc8", "YN"].questions == 18 and by[ALL_SETTINGS, "FR"].questions == 9 * 8 * 2  # 8 settings, 2 views
    assert by["rcc8", "YN"].blind >= 0.75  # the offered relation nearly gives the answer
    assert over_limits(cells, 0.55, None, least=10)
    assert main(["audit", str(built), "--max-yn", "55", "--min-questions", "10"]) == 1
    assert "cells pass the limits" in capsys.readouterr().err
    assert main(["audit", str(built), "--max-yn", "100", "--max-fr", "100"]) == 0
    assert f"| {CONFIG} | rcc8 | 18 |" in capsys.readouterr().out


def test_answers_kept_to_a_few_ids_are_the_answers_they_get_among_all():
    # `score` on a sample asks the baselines for its questions alone; they are fitted on every question as before
    rng = Random(5)
    questions = [question(k, rng.choice("NESW"), rng.choice(["Yes", "No"]), room=k // 3) for k in range(300)]
    every = blind_answers(questions, None, seed=2)
    kept = {q.id for q in questions[::7]}
    assert blind_answers(questions, None, seed=2, keep=kept) == {k: every[k] for k in kept}
