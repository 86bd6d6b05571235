"""Agent viewpoints: stories and questions told from poses, answered by the checker and turned into the asked frame."""

from collections import Counter

import numpy as np
import pytest
import shapely
from conftest import SCENE_COUNT, SCENE_SEED
from shapely.geometry import Point, Polygon

from pipeline.dataset.rows import check_row, records_table
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.checker import answer_set
from pipeline.spatial.facts import SETTINGS
from pipeline.spatial.frames import FACINGS, quarters, seen_facing, seen_set, turn
from pipeline.spatial.relations import DIRECTIONS, direction, relation_words
from pipeline.testing.oracle import oracle_answer_set
from pipeline.text.agents import (AGENT, CLEARANCE, FACED_WALL, FRAME_CHANGES, FRAMINGS, SPOTS, agent_items,
                                  camera_point, clearances)
from pipeline.text.configs import Config
from pipeline.text.items import RoomItems
from pipeline.text.pictured import _plan_picture, clear_pairs, first_person_poses
from pipeline.text.prompts import row_prompt

CONFIG = Config(5, 4, 12)
BALANCED = Config.parse("n5_m4_d144_balanced")


@pytest.fixture(scope="module", params=[CONFIG, BALANCED], ids=["paper", "balanced"])
def rooms(scenes, request):
    """Every room's agent rows, of the paper's configuration and of its balanced counterpart: the
    rules below hold for both (the balanced one draws which questions are asked: test_balance.py)."""
    found = []
    for index in range(SCENE_COUNT):
        scene = load_scene(scene_path(scenes, SCENE_SEED, index))
        made = RoomItems(scene)
        items = made(request.param)
        if items:
            found.append((scene, items, agent_items(scene, made.told(request.param))))
    assert len(found) >= 5
    return found


def plan_answer(row) -> frozenset[str]:
    variables = [o.name for o in row.objects] + ([AGENT] if any(AGENT in (f.subject, f.object) for f in row.facts)
                                                  else [])
    return answer_set(row.facts, variables, row.query.pair, row.d)


def test_every_kind_of_every_setting_is_asked_both_ways(rooms):
    for scene, items, rows in rooms:
        assert Counter((r.setting, r.kind, r.question_type) for r in rows) == Counter(
            {(s, k, q): 1 for s in SETTINGS for k in FRAMINGS for q in ("FR", "YN")})
        assert all(r.config == f"agent_{items[0].config}" and r.id.startswith(scene.room_id) for r in rows)
        assert len({r.id for r in rows}) == len(rows)


def test_answers_are_the_checkers_turned_into_the_question_frame(rooms):
    for _, _, rows in rooms:
        for row in rows:
            facing = row.question_pose.facing
            assert row.answer_set == seen_set(plan_answer(row), facing)
            assert row.true_relation in row.answer_set  # the witness invariant, in the asked frame
            cells = {o.name: (o.i, o.j) for o in row.objects}
            subject, reference = row.query.pair
            assert row.true_relation == seen_facing(direction(cells[subject], cells[reference]), facing)
            assert row.frame_changes == FRAME_CHANGES[row.kind]
            story_facing = row.story_pose.facing if row.story_pose else "N"
            assert row.frame_angle == 90 * min((quarters(facing) - quarters(story_facing)) % 4,
                                               (quarters(story_facing) - quarters(facing)) % 4)
            if row.question_type == "FR":
                assert row.answer == ", ".join(relation_words(c, "north_facing", "label") for c in row.answer_set)
            else:
                assert row.answer == ("Yes" if row.candidate in row.answer_set else "No")
            if row.kind == "agent":
                assert row.question_pose == row.story_pose and row.frame_angle == 0
            if row.path and row.path_decides:
                assert row.path[-1].composed == row.answer_set


def test_an_egocentric_story_places_the_observer_as_one_more_object(rooms):
    for _, _, rows in rooms:
        for row in rows:
            told = [f for f in row.facts if AGENT in (f.subject, f.object)]
            if row.story_view == "agent":
                assert len(told) == 3 and told[0].object is None  # its region, then two objects seen from it
                assert row.story_pose.at == ""
                assert "facing one of its walls" in row.story or "looking at one of its walls" in row.story
            else:
                assert told == []


def test_the_checker_agrees_with_the_oracle_on_agent_instances(rooms):
    checked = 0
    for _, _, rows in rooms[:3]:
        for row in rows:
            if row.question_type == "FR" and row.story_view == "agent" and row.setting in ("o2", "o2_layout"):
                variables = [o.name for o in row.objects] + [AGENT]
                assert plan_answer(row) == oracle_answer_set(row.facts, variables, row.query.pair, row.d)
                checked += 1
    assert checked >= 6


def test_turning_the_room_and_the_observer_together_changes_no_answer(rooms):
    """The story's relations all turned by q and the question's facing turned by q: the same words answer."""
    _, _, rows = rooms[0]
    for row in rows:
        if row.question_type != "FR":
            continue
        variables = [o.name for o in row.objects] + ([AGENT] if row.story_view == "agent" else [])
        for turns in (1, 2, 3):
            turned = [type(f)(f.subject, turn(f.relation, turns), f.object) for f in row.facts]
            facing = FACINGS[(quarters(row.question_pose.facing) + turns) % 4]
            assert seen_set(answer_set(turned, variables, row.query.pair, row.d), facing) == row.answer_set


def test_rows_fit_the_schema_and_their_prompts_rebuild_from_the_row(rooms):
    _, _, rows = rooms[0]
    table = records_table(rows, rows[0].config)
    for plain in table.to_pylist():
        check_row(plain)
        assert row_prompt(plain) == plain["prompt"]
        if plain["frame_changes"]:
            assert "imagine standing in the cell of the object it names" in plain["prompt"]


FORWARD = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}  # a facing as a step on the plan (i east, j north)
SEEN = {(1, 0): "front", (-1, 0): "back", (0, 1): "right", (0, -1): "left", (1, 1): "front-right",
        (1, -1): "front-left", (-1, 1): "back-right", (-1, -1): "back-left", (0, 0): "same place"}


def seen_from(offset: tuple[int, int], facing: str) -> str:
    """What an observer facing `facing` calls an object at `offset` (cells, plan axes): the signs of its
    offset ahead and to the right, the right hand being the facing turned a quarter clockwise."""
    (fi, fj), (di, dj) = FORWARD[facing], offset
    ahead, right = di * fi + dj * fj, di * fj - dj * fi
    return SEEN[((ahead > 0) - (ahead < 0), (right > 0) - (right < 0))]


def test_a_reader_facing_east_has_north_on_the_left():
    assert [seen_from(offset, "E") for offset in ((0, 1), (1, 0), (1, 1), (-1, -1))] == \
        ["left", "front", "front-left", "back-right"]


def test_the_relation_asked_is_what_the_questions_observer_sees(rooms):
    """Every row's true relation, in words, against the plan geometry seen from the question's facing;
    a single answer of an FR row too. Each facing is met."""
    facings = set()
    for _, _, rows in rooms:
        for row in rows:
            cells = {o.name: (o.i, o.j) for o in row.objects}
            (si, sj), (ri, rj) = (cells[name] for name in row.query.pair)
            seen = seen_from((si - ri, sj - rj), row.question_pose.facing)
            assert relation_words(row.true_relation, "north_facing", "label") == seen
            if row.question_type == "FR" and len(row.answer_set) == 1:
                assert row.answer == seen
            facings.add(row.question_pose.facing)
    assert facings == set(FACINGS)


def test_same_room_same_rows(rooms):
    scene, items, rows = rooms[0]
    assert agent_items(scene, RoomItems(scene).told(Config.parse(items[0].config))) == rows
    assert set(DIRECTIONS) >= {c for r in rows for c in r.answer_set}


@pytest.mark.parametrize("rooms", [CONFIG], indirect=True)  # the balanced rows' YN draw: test_balance.py
def test_yes_and_no_are_balanced_per_room_as_far_as_answer_sets_allow(rooms):
    for _, _, rows in rooms:
        yn = [r for r in rows if r.question_type == "YN"]
        could_be_no = sum(len(r.answer_set) < len(DIRECTIONS) for r in yn)
        assert sum(r.answer == "No" for r in yn) == min(len(yn) // 2, could_be_no)


def wall_ahead(side: float, point: tuple[float, float], facing: str) -> float:
    x, z = point
    return {"N": side - z, "E": side - x, "S": z, "W": x}[facing]


def test_questions_stand_at_floor_objects_facing_a_wall_their_cell_does_not_touch(rooms):
    """Never at a painting or TV on a wall; never facing the wall the stance's own cell touches (the
    paper's rows: balanced rows face any wall, test_balance.py); the question turns you only when it
    says so."""
    hung_in_stories = 0
    for scene, _, rows in rooms:
        hung = {(o.type, o.x, o.z) for o in scene.objects if o.wall_hung}
        hung_in_stories += sum((o.type, o.x, o.z) in hung for o in rows[0].objects)
        for row in rows:
            if row.kind == "agent":
                continue
            stood = next(o for o in row.objects if o.name == row.question_pose.at)
            assert (stood.type, stood.x, stood.z) not in hung, row.id
            touched = {"N": stood.j == row.d - 1, "E": stood.i == row.d - 1, "S": stood.j == 0, "W": stood.i == 0}
            assert not touched[row.question_pose.facing] or row.config.endswith(BALANCED.name), row.id
            assert "now in front of you" not in row.question
            if row.story_pose is not None:  # door and agent_moved: a turn is said exactly when made
                turned = row.question_pose.facing != row.story_pose.facing
                assert ("to face the wall that is now" in row.question) == turned, row.question
                assert ("without turning" in row.question or "kept facing" in row.question) == (not turned)
            else:
                assert f"facing the {dict(N='north', E='east', S='south', W='west')[row.question_pose.facing]} wall" \
                    in row.question
    assert hung_in_stories > 0  # the rooms have wall-hung story objects to avoid


def test_the_egocentric_observer_stands_where_a_camera_can(rooms):
    """In free floor space (CLEARANCE from every footprint and wall, measured with Shapely), FACED_WALL
    from the wall faced, in a cell that holds no story object; further first-person stances likewise,
    in other cells."""
    for scene, items, rows in rooms:
        observer = next(r.story_pose for r in rows if r.kind == "agent")
        assert (observer.i, observer.j) not in {(o.i, o.j) for o in items[0].objects}
        poses = first_person_poses(scene, observer, CONFIG.d)
        assert poses[0] == observer and len(poses) >= 2
        for pose in poses:
            x, z = camera_point(scene, pose, CONFIG.d)
            cell = scene.side / CONFIG.d
            assert (int(x // cell), int(z // cell)) == (pose.i, pose.j)
            assert wall_ahead(scene.side, (x, z), pose.facing) >= FACED_WALL
            assert min(x, z, scene.side - x, scene.side - z) >= CLEARANCE
            assert all(Point(x, z).distance(Polygon(o.footprint)) >= CLEARANCE - 1e-9 for o in scene.objects)
        assert all((p.i, p.j) != (observer.i, observer.j) for p in poses[1:])


def test_clearances_are_shapelys_distances_to_the_nearest_footprint_or_wall(scenes):
    """Every point a camera may stand at (SPOTS of every cell, d 9 and 12) is as far from what is nearest
    as Shapely measures it (0 inside a footprint): measuring each footprint only from the points its
    bounding box is near passes over no footprint nearer than the rest."""
    for index in range(SCENE_COUNT):
        scene = load_scene(scene_path(scenes, SCENE_SEED, index))
        for d in (9, 12):
            cell = scene.side / d
            points = np.array([((i + u) * cell, (j + v) * cell) for i in range(d) for j in range(d)
                               for u in SPOTS for v in SPOTS])
            x, z = points[:, 0], points[:, 1]
            walls = np.minimum.reduce([x, z, scene.side - x, scene.side - z])
            footprints = [shapely.distance(shapely.points(points), Polygon(o.footprint)) for o in scene.objects]
            assert np.allclose(clearances(scene, points), np.minimum.reduce([walls, *footprints]), rtol=0, atol=1e-9)


def test_balanced_first_person_stances_promising_one_object_behind_another_come_first(rooms):
    """With `in_line` (balanced configurations) the same stances, those whose plan shows a pair one
    straight in front of the other (front or behind: N or S in the observer's codes) first."""
    promising = 0
    for scene, _, rows in rooms:
        observer = next(r.story_pose for r in rows if r.kind == "agent")
        poses = first_person_poses(scene, observer, CONFIG.d, in_line=True)
        assert poses[0] == observer and sorted(map(repr, poses)) == sorted(
            map(repr, first_person_poses(scene, observer, CONFIG.d)))
        behind = [any(code in ("N", "S") for code in clear_pairs(
            scene, _plan_picture(scene, camera_point(scene, pose, CONFIG.d), pose.facing), CONFIG.d, True).values())
            for pose in poses[1:]]
        assert behind == sorted(behind, reverse=True)
        promising += behind[0]
    assert promising > 0
