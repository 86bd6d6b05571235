"""Every picture of RoomSpace-100 (issue 45), `make test-pictures` (not a test_*.py: never collected by
default; 6-11 minutes on 2 cores, too long for `make test`, which checks a few rooms the same way in
tests/dataset/test_pictured_build.py).

RoomSpace-100's picture kinds, built as `make roomspace-100` builds them (seed 0, rooms 0-99): the vision,
vision_agent and object-task configurations of n5_m4_d144 and of its balanced and hard counterparts
where the kind has them (`family`, as `build --balanced --hard` asks). Over every picture:
tests/pictures.py's checks (no unlabelled object of a labelled type, no overlapping labels or
crossing leaders, no label over another object asked about, every coloured object of a lettered
picture lettered, no first-person camera close to an object filling much of its picture); every
image-only question answers what its picture shows, its prompt stating the tolerances
(tests/dataset/test_pictured_build.py's reading, over all 100 rooms); and every object-task picture
draws each thing in or on a small object in or on it, with no overlapping labels or crossing leaders.
"""

from __future__ import annotations

import pytest
from conftest import ROOMSPACE_100
from pictures import build_picture_problems, held_problems, label_problems
from test_pictured_build import check_build

from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.rows import open_rows
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.small_objects import small_objects_of
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS
from pipeline.text.object_tasks import views

BASE = Config(5, 4, 12)  # `make roomspace-100`'s --vision, --agents and --object-tasks n5_m4_d144


def family(kind: str) -> list[Config]:
    """The configurations `build --balanced --hard` asks of a kind for BASE (pipeline.cli's cmd_build)."""
    balanced, hard = KINDS[kind].balanced, KINDS[kind].hard
    return [BASE, *([BASE.as_balanced()] if balanced else []), *([BASE.as_hard()] if hard else [])]


@pytest.fixture(scope="module")
def roomspace_100(roomspace_100_scenes, tmp_path_factory):
    seed, rooms = ROOMSPACE_100
    out = tmp_path_factory.mktemp("pictures") / "roomspace-100-pictures"
    plan = BuildPlan.asked(out.name, seed, rooms, family("base"),
                           {kind: family(kind) for kind in ("vision", "agent", "object_tasks")})
    build(plan, roomspace_100_scenes, out, workers=2, progress=False)
    return out


@pytest.mark.pictures
def test_no_picture_of_roomspace_100_has_a_label_to_misread(roomspace_100, roomspace_100_scenes, capsys):
    checked, problems, measures = build_picture_problems(roomspace_100, roomspace_100_scenes, ROOMSPACE_100[0])
    with capsys.disabled():
        print(f"\nRoomSpace-100 pictures checked {dict(checked)}; {measures}; problems {len(problems)}")
        print("\n".join(problems[:20]))
    assert problems == []


@pytest.mark.pictures
def test_every_image_only_question_of_roomspace_100_answers_what_its_picture_shows(roomspace_100,
                                                                                   roomspace_100_scenes, capsys):
    checked, problems = check_build(roomspace_100, roomspace_100_scenes, ROOMSPACE_100[0])
    with capsys.disabled():
        print(f"\n{ROOMSPACE_100[1]} rooms: checked {dict(checked)}; contradictions {len(problems)}")
    assert problems == []
    assert checked["rooms with two first-person images or more"] == ROOMSPACE_100[1]


@pytest.mark.pictures
def test_every_object_task_picture_of_roomspace_100_shows_what_holds_what(roomspace_100, roomspace_100_scenes,
                                                                          capsys):
    seed = ROOMSPACE_100[0]
    config = KINDS["object_tasks"].config_name(BASE)
    pictures = {}
    for row in open_rows(roomspace_100).rows([config], ("image_id", "image_name", "room_index", "image")):
        if row["image"] is not None:
            pictures.setdefault(row["image_id"], row)
    problems, held = [], 0
    for image_id, row in sorted(pictures.items()):
        path = scene_path(roomspace_100_scenes, seed, row["room_index"])
        scene, house = load_scene(path), load_house(path)
        small = small_objects_of(scene, house)
        view = next(v for v in views(scene, small) if v.image_name == row["image_name"])
        mine = [obj for obj in small if obj.id in set(view.ids.values())]
        problems += label_problems(row["image"]["bytes"], image_id)
        found, counts = held_problems(house, view, mine)
        problems += [f"room {row['room_index']} {problem}" for problem in found]
        held += counts["in"]
    with capsys.disabled():
        print(f"\nRoomSpace-100 object-task pictures: {len(pictures)}, things in a small object {held}; "
              f"problems {len(problems)}")
    assert pictures and held and problems == []
