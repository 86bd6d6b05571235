"""The curriculum: its default rungs all have questions, and the schedule moves on the running reward."""

import pytest
from conftest import SCENE_SEED

from pipeline.environment.curriculum import Curriculum, Schedule, default_rungs
from pipeline.environment.items import Environment
from pipeline.environment.rungs import Rung
from pipeline.errors import RoomspaceError

POOL = 5  # rooms 0-4 of the shared scenes: room 4 has eight prominent objects (the hard rungs)


@pytest.fixture(scope="module")
def environment(scenes):
    return Environment(SCENE_SEED, POOL, scenes)


def test_every_default_rung_has_questions_of_its_rung(environment):
    rungs = default_rungs()
    assert len(rungs) >= 8
    for rung in rungs:
        item = environment.item(0, rung)
        assert rung.admits(item.row) and item.row["config"] == rung.config
    assert [r.level for r in rungs if r.config.endswith("_hard")] == [3, 3]
    assert {r.frame_changes for r in rungs} >= {1, 2}


def test_the_schedule_climbs_on_high_rewards_and_falls_back_on_low_ones(environment):
    rungs = [Rung("n3_m2_d81", level=0), Rung("n3_m2_d81", level=1), Rung("n4_m3_d81", level=2)]
    curriculum = Curriculum(environment, rungs, Schedule(window=4, up=0.75, down=0.25))
    seen, moves = [], []
    for reward in [1, 1, 1, 1, 1, 1, 0.5, 0, 0, 0]:
        item = curriculum.next_item()
        seen.append(curriculum.metadata(item)["rung_index"])
        assert item.row["level"] == curriculum.rung.level
        moves.append(curriculum.record(reward))
    # four 1s: up; then 1, 1, 0.5, 0 (mean 0.625) stays, and the window 0.5, 0, 0, 0 falls back
    assert seen == [0] * 4 + [1] * 6
    assert moves == [0, 0, 0, 1, 0, 0, 0, 0, 0, -1] and curriculum.position == 0
    assert curriculum.next_item() == environment.item(4, rungs[0])  # each rung counts its own items
    for _ in range(12):  # always right: up to the top rung, and no further
        curriculum.next_item()
        curriculum.record(1.0)
    assert curriculum.position == 2


def test_a_bad_schedule_or_reward_is_one_line():
    with pytest.raises(RoomspaceError, match="0 <= down < up <= 1"):
        Schedule(window=4, up=0.3, down=0.5)
    with pytest.raises(RoomspaceError, match="between 0 and 1"):
        Curriculum(Environment(SCENE_SEED, 1), ["n3_m2_d81"]).record(2.0)
