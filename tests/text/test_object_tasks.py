"""Object tasks (pipeline.text.object_tasks, docs/semantics.md section 21) on the shared rooms: every
candidate task's gold plan passes the independent runner (pipeline.spatial.plans.check_plan), the
descriptions state exactly what rests on what, the rows carry their plan as the answer, and the
room's tasks are drawn one per bucket of plan length, purely."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.small_objects import place_small_objects
from pipeline.spatial.plans import PICK_UP, check_plan
from pipeline.text.configs import Config
from pipeline.text.object_tasks import (bucket, chosen_tasks, depth, description, plan_of, refer, task_items, views,
                                        words)
from pipeline.text.prompts import PLAN_QUESTION

CONFIG = Config.parse("n5_m4_d144")


@pytest.fixture(scope="module")
def rooms(scenes):
    out = []
    for k in range(SCENE_COUNT):
        path = scene_path(scenes, SCENE_SEED, k)
        scene = load_scene(path)
        out.append((scene, place_small_objects(scene, load_house(path))))
    return out


def test_every_candidate_plan_is_right_and_minimal(rooms):
    checked, sizes = 0, set()
    for scene, small in rooms:
        for view in views(scene, small):
            for thing in view.things:
                if not thing.movable:
                    continue
                plan = plan_of(view, thing.name)
                steps = tuple((s.action, s.object, s.source, s.needs) for s in plan)
                assert check_plan(view.things, thing.name, steps) is None, (scene.room_id, thing.name, steps)
                assert plan[-1].action == PICK_UP and plan[-1].object == thing.name
                sizes.add(len(plan))
                checked += 1
    assert checked > 50 and {1, 2, 3, 4, 5, 6} <= sizes


def test_descriptions_state_exactly_what_rests_on_what(rooms):
    text = words()["description"]
    for scene, small in rooms:
        for view in views(scene, small):
            told = description(view)
            numbered = {t.name for t in view.things if re.search(r" \d+$", t.name)}
            furniture = view.name

            def ref(name):
                return refer(name, name in numbered)

            expected = []
            for t in view.things[1:]:
                if t.on == furniture:
                    expected.append(text["on_furniture"].format(x=ref(t.name), part=t.part, furniture=furniture))
                elif t.on is not None:
                    key = "on" if t.relation == "on" else "in_carrier"
                    expected.append(text[key].format(x=ref(t.name), y=ref(t.on)))
                elif t.inside == furniture:
                    expected.append(text["in_itself"].format(x=ref(t.name), furniture=furniture))
                elif t.inside is not None and not any(o.name == t.inside and o.movable for o in view.things):
                    expected.append(text["in_compartment"].format(x=ref(t.name), y=t.inside, furniture=furniture))
                elif t.inside is not None:
                    expected.append(text["in_container"].format(x=ref(t.name), y=ref(t.inside)))
                if t.opens and t.movable:
                    expected.append(text["closed" if t.closed else "open"].format(y=ref(t.name)))
                elif t.opens:
                    expected.append(text["compartment_closed"].format(y=t.name, furniture=furniture))
            if view.things[0].opens:
                expected.append(text["furniture_closed"].format(furniture=furniture))
            sentences = re.split(r"(?<=\.) ", told)
            assert sorted(s[0].upper() + s[1:] for s in expected) == sorted(sentences[1:]), (scene.room_id, told)


def test_rows_carry_their_plan(rooms):
    rows = [row for scene, small in rooms for row in task_items(scene, small, CONFIG)]
    assert rows and len({row.id for row in rows}) == len(rows)
    for text_row, image_row in zip(rows[::2], rows[1::2]):
        assert (text_row.modality, image_row.modality) == ("text", "image")
        assert text_row.plan == image_row.plan and image_row.story == "" and text_row.story
        assert text_row.image is None and image_row.image is None  # the build draws the picture
    for row in rows:
        assert row.question_type == PLAN_QUESTION and row.config == "object_tasks_n5_m4_d144"
        answer = json.loads(re.fullmatch(r"<ans>(.*)</ans>", row.answer).group(1))
        assert [step["content"] for step in answer.values()] == list(row.answer_set) == [s.content for s in row.plan]
        assert [step["precondition"] for step in answer.values()] == [[f"step{k + 1}" for k in s.needs]
                                                                      for s in row.plan]
        assert row.answer_set_size == len(row.plan) and row.hops == depth(row.plan)
        named = {s.object for s in row.plan} | {s.source for s in row.plan if s.source}
        assert named <= set(row.options)
        movable = [t.name for t in row.things if t.movable]
        assert set(row.distractors) == set(movable) - {s.object for s in row.plan}
        goal = next(t for t in row.things if t.name == row.target)
        assert row.setting == ("take_out" if goal.inside else "pick_up")
        assert row.question.startswith("Take " if goal.inside else "Pick up ")
        if row.modality == "text":
            assert row.story in row.prompt
        assert "<ans></ans>" in row.prompt and row.question in row.prompt


def test_one_task_per_bucket_drawn_purely(rooms):
    for scene, small in rooms:
        room_views = views(scene, small)
        tasks = chosen_tasks(scene.room_id, room_views)
        buckets = [bucket(len(plan)) for _, _, plan in tasks]
        assert buckets == sorted(set(buckets))
        assert chosen_tasks(scene.room_id, views(scene, small)) == tasks
        assert task_items(scene, small, CONFIG) == task_items(scene, small, CONFIG)
