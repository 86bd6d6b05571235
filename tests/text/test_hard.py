"""The hard configurations: larger stories, every question one only the checker's search answers (the agent
kind's in the facts its own stories state)."""

import dataclasses
from collections import Counter

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan
from pipeline.errors import RoomspaceError
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.score import SCORED, ScoreRow, score_item
from pipeline.scene.scene_file import load_scene, scene_path
from pipeline.spatial.checker import answer_set, holding, propagated_answer, propagated_holding, refutation_effort
from pipeline.spatial.facts import HARD_SETTINGS, Fact, described_pairs
from pipeline.spatial.frames import OBSERVER, TOP_DOWN, seen_set
from pipeline.spatial.ladder import story_variables
from pipeline.spatial.relations import DIRECTIONS, REGIONS, alike
from pipeline.spatial.topology import ROOM
from pipeline.text.agents import AGENT, FRAMINGS, agent_items
from pipeline.text.configs import HARD_N, Config, parse_configs
from pipeline.text.items import (CONSISTENCY_FORM, FORMS, REGION_LABELS, REGIONS_FORM, RELATION_FORM, RoomItems,
                                 beyond_local)
from pipeline.text.prompts import AGENT_VIEW

HARD = parse_configs("hard")


@pytest.fixture(scope="module")
def hard_rows(scenes) -> dict:
    """Every room's rows of both hard configurations, by (room, configuration)."""
    rooms = [load_scene(scene_path(scenes, SCENE_SEED, index)) for index in range(SCENE_COUNT)]
    return {(scene.index, config.name): (scene, RoomItems(scene)(config)) for scene in rooms for config in HARD}


@pytest.fixture(scope="module")
def hard_agent_rows(scenes) -> list[tuple]:
    """Per room and hard configuration: the scene, its stories (RoomItems.told), its base rows and its agent rows."""
    found = []
    for index in range(SCENE_COUNT):
        scene = load_scene(scene_path(scenes, SCENE_SEED, index))
        items = RoomItems(scene)
        for config in HARD:
            told = items.told(config)
            found.append((scene, config, told, items(config), () if told is None else agent_items(scene, told)))
    return found


def test_hard_configurations_are_named_and_parsed_as_their_family():
    assert [c.name for c in HARD] == ["n8_m20_d81_hard", "n8_m20_d144_hard"]
    assert all(Config.parse(c.name) == c and c.balanced and c.hard for c in HARD)
    assert Config(5, 4, 12).as_hard() == HARD[1]
    with pytest.raises(RoomspaceError, match="balanced=True"):
        Config(8, 20, 12, hard=True)


def test_every_hard_pair_question_is_one_only_search_answers(hard_rows):
    rows = [row for _, made in hard_rows.values() for row in made if row.form == RELATION_FORM]
    assert {row.setting for row in rows} == set(HARD_SETTINGS) and {"Yes", "No"} <= {row.answer for row in rows}
    for row in rows:
        variables = story_variables(row.facts, row.query.pair)
        exact = answer_set(row.facts, variables, row.query.pair, row.d)
        local = propagated_answer(row.facts, variables, row.query.pair, row.d)
        assert tuple(c for c in DIRECTIONS if c in exact) == row.answer_set and local > exact
        assert row.level == 3 and row.search_effort >= 2 and frozenset(row.bounded.local) == local
        assert row.search_effort == refutation_effort(row.facts, variables, row.query.pair, local - exact, row.d)
        if row.question_type == "YN":
            # a Yes is a relation the story allows; a No one only search rules out: R2 answers it wrongly
            assert row.candidate in (exact if row.answer == "Yes" else local - exact)


def claims_of(row) -> tuple[str, list[Fact]]:
    """A whole-story row's claims: the kind's codes it chooses among, each as a fact about its object or pair."""
    obj = None if row.query.object == ROOM else row.query.object
    codes = row.option_codes or alike(row.candidate)
    return obj, [Fact(row.query.subject, code, obj) for code in codes]


def test_every_whole_story_question_is_answered_by_the_story_and_its_no_only_by_search(hard_rows):
    rows = [row for _, made in hard_rows.values() for row in made if row.form != RELATION_FORM]
    assert {(row.form, row.question_type) for row in rows} == {(REGIONS_FORM, "FR"), (CONSISTENCY_FORM, "YN")}
    assert {"Yes", "No"} <= {row.answer for row in rows if row.form == CONSISTENCY_FORM}
    for row in rows:
        obj, claims = claims_of(row)
        variables = story_variables(row.facts, (row.query.subject, obj or row.query.subject))
        exact = {c.relation for c, held in zip(claims, holding(row.facts, variables, claims, row.d)) if held}
        local = {c.relation for c, held in zip(claims, propagated_holding(row.facts, variables, claims, row.d))
                 if held}
        assert set(row.answer_set) == exact and set(row.bounded.local) == local and exact <= local
        if row.form == REGIONS_FORM:
            assert row.options == REGION_LABELS[row.view] and row.option_codes == REGIONS
            assert local > exact and row.level == 3 and row.search_effort >= 2 and row.query.object == ROOM
        else:
            assert row.candidate in (exact if row.answer == "Yes" else local - exact)
        assert row.true_relation in exact  # the room itself is one layout the story allows
        assert row.id.endswith(f"-{row.form}-{row.question_type}") and "\nOptions: " in row.prompt


def test_a_regions_question_is_scored_by_its_region_words(hard_rows):
    row = next(row for _, made in hard_rows.values() for row in made if row.form == REGIONS_FORM)
    scored = ScoreRow.of({**dataclasses.asdict(row), "bounded": row.bounded})
    labels = dict(zip(row.option_codes, row.options))
    exact = ", ".join(labels[code] for code in row.answer_set)
    assert score_item(scored, f"I reason...\nAnswer: {exact}").correct[0, 0]
    # R2's set keeps a region the story excludes: the r2 baseline's answer is not exact
    r2 = ", ".join(labels[code] for code in row.bounded.local)
    outcome = score_item(scored, f"Answer: {r2}")
    assert outcome.status[0, 0] == SCORED and not outcome.correct[0, 0] and 0 < outcome.jaccard[0, 0] < 1
    assert score_item(scored, "Answer: north-west").status[0, 0] != SCORED  # a direction names no region


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
    plan = BuildPlan.asked("hard", SCENE_SEED, 2, parse_configs("n5_m4_d144,hard"),
                           {"twin": HARD, "agent": HARD[1:], "vision": HARD[1:]})
    assert [o.name for o in plan.outputs] == ["n5_m4_d144", "n8_m20_d81_hard", "n8_m20_d144_hard",
                                              "vision_n8_m20_d144_hard", "twin_n8_m20_d81_hard",
                                              "twin_n8_m20_d144_hard", "agent_n8_m20_d144_hard",
                                              "vision_agent_n8_m20_d144_hard"]
    assert main(["build", "--rooms", "1", "--scenes", str(scenes), "--out", str(tmp_path / "a"),
                 "--configs", "n5_m4_d144", "--maps", "n8_m20_d144_hard"]) == 1
    assert "the map kind has no hard configurations" in capsys.readouterr().err


def test_hard_vision_rows_ask_the_hard_questions_with_their_pictures_and_nothing_else(scenes, tmp_path):
    # room 4 of the shared scenes has eight objects and questions only search answers
    out = tmp_path / "hard-vision"
    assert main(["build", "--rooms", "5", "--seed", str(SCENE_SEED), "--scenes", str(scenes), "--out", str(out),
                 "--configs", "n8_m20_d144_hard", "--vision", "n8_m20_d144_hard", "--agents", "n8_m20_d144_hard",
                 "--quiet"]) == 0
    source = open_rows(out)
    base = {row["id"].replace("n8_m20_d144_hard", "vision_n8_m20_d144_hard"): row
            for row in source.rows(["n8_m20_d144_hard"])}
    vision = list(source.rows(["vision_n8_m20_d144_hard"]))
    # a consistency question's Yes may come from a claim whose kind R2 gets exactly: it needs a layout all the same
    assert vision and all(row["modality"] == "image+story" for row in vision)
    assert all(row["level"] == 3 for row in vision if row["form"] != CONSISTENCY_FORM or row["answer"] == "No")
    assert {row["id"] for row in vision} <= set(base)
    assert all(row["answer_set"] == base[row["id"]]["answer_set"] for row in vision)
    # the agent rows likewise: each with its story's picture, whatever it shows, and no question about a picture alone
    agent = {row["id"].replace(row["config"], f"vision_{row['config']}"): row
             for row in source.rows(["agent_n8_m20_d144_hard"])}
    pictured = list(source.rows(["vision_agent_n8_m20_d144_hard"]))
    assert pictured and {row["id"] for row in pictured} == set(agent)
    assert all(row["modality"] == "image+story" and row["pair"] is None and row["level"] == 3 for row in pictured)
    assert {row["image_name"] for row in pictured} == {"top_down", "south_door", "first_person"}
    assert all(row["answer_set"] == agent[row["id"]]["answer_set"] for row in pictured)
    card = (out / "README.md").read_text()
    assert "| kind | FR | mean FR answer-set size | YN Yes | YN No | settings without FR" in card
    # the card counts the whole-story questions per setting and form, apart from the pair questions' FR answer sets
    section = card.split("### n8_m20_d144_hard\n", 1)[1].split("\n### ", 1)[0]
    counted = Counter()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 7 and cells[1] in FORMS:
            counted[cells[0], cells[1]] += sum(int(cells[k]) for k in (2, 4, 5))
    assert counted and counted == Counter((row["setting"], row["form"]) for row in base.values()
                                          if row["form"] != RELATION_FORM)
    sizes = Counter(row["answer_set_size"] for row in base.values()
                    if row["question_type"] == "FR" and row["form"] == RELATION_FORM and row["setting"] == "chain_d2")
    chain_d2 = next(line for line in section.splitlines() if line.startswith("| chain_d2 |"))
    assert f"| {', '.join(f'{size}: {sizes[size]}' for size in sorted(sizes))} |" in chain_d2


def test_every_hard_agent_question_is_one_only_search_answers_in_its_own_facts(hard_agent_rows):
    rows = [row for *_, made in hard_agent_rows for row in made]
    assert {row.kind for row in rows} == set(FRAMINGS) and {row.setting for row in rows} == set(HARD_SETTINGS)
    assert {"Yes", "No"} <= {row.answer for row in rows}
    for row in rows:
        names = [o.name for o in row.objects]
        # the egocentric framings' facts are the story's and those about you: R2 and the answer are theirs
        assert any(AGENT in (f.subject, f.object) for f in row.facts) == (row.story_view == AGENT_VIEW)
        pair = row.query.pair
        assert AGENT not in pair and tuple(sorted(map(names.index, pair))) not in described_pairs(row.n, row.m)
        variables = story_variables(row.facts, pair)
        exact = answer_set(row.facts, variables, pair, row.d)
        local = propagated_answer(row.facts, variables, pair, row.d)
        facing = row.question_pose.facing
        assert local > exact and row.answer_set == seen_set(exact, facing) and row.form == RELATION_FORM
        assert row.level == 3 and row.search_effort >= 2 and row.bounded.local == seen_set(local, facing)
        if row.question_type == "YN":  # a No is a relation only search rules out, as seen facing the question's wall
            assert row.candidate in seen_set(exact if row.answer == "Yes" else local - exact, facing)


def test_each_agent_framing_asks_where_its_own_facts_leave_a_pair_beyond_r2(hard_agent_rows):
    differ = 0
    for scene, config, told, _, rows in hard_agent_rows:
        # the facts about you, as an egocentric row states them after the story's
        you = next((row.facts[len(told.facts[row.setting]):] for row in rows if row.story_view == AGENT_VIEW), None)
        if you is None:
            continue
        objects = told.shared["objects"]
        names = [o.name for o in objects]
        hung = {(o.type, o.x, o.z) for o in scene.objects if o.wall_hung}
        floor = {o.name for o in objects if (o.type, o.x, o.z) not in hung}  # where a moved question stands
        described = described_pairs(config.n, config.m)
        once = [(names[a], names[b]) for a in range(config.n) for b in range(a + 1, config.n)
                if (a, b) not in described]
        for setting, facts in told.facts.items():
            plan, egocentric = beyond_local(facts, once, config.d), beyond_local(facts + you, once, config.d)
            differ += set(plan) != set(egocentric)
            asked = {row.kind for row in rows if row.setting == setting and row.question_type == "FR"}
            assert ("agent" in asked) == bool(egocentric)
            assert ("agent_moved" in asked) == any(pair[1] in floor for pair in egocentric)
            assert ("plan" in asked) == ("door" in asked) == any(pair[1] in floor for pair in plan)
    assert differ  # the facts about you decide some pair the story leaves to search (or the other way)


def test_hard_agent_rows_retell_the_hard_stories_and_skip_what_has_none(hard_agent_rows):
    for scene, config, told, base, rows in hard_agent_rows:
        if len(scene.prominent) < config.n:
            assert told is None and not rows and not base
            continue
        for row in base:  # the base's questions are told after the same stories, whatever they ask
            assert row.story == told.story(row.setting, row.view)
        for row in rows:
            if row.kind in ("plan", "door"):
                assert row.story == told.story(row.setting, TOP_DOWN if row.kind == "plan" else OBSERVER)
            assert row.config == f"agent_{config.name}" and row.id.startswith(f"{scene.room_id}-agent_{config.name}-")
        assert len({row.id for row in rows}) == len(rows) and agent_items(scene, told) == rows
