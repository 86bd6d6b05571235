"""Balanced configurations: the paper's stories, each question's pair and YN candidate drawn so that
the candidate says nothing of the answer within a room; answers from the checker as ever."""

from collections import Counter
from itertools import combinations
from random import Random

import pytest
from handmade import handmade_scene

from pipeline.spatial.checker import answer_set
from pipeline.spatial.facts import SETTINGS, described_pairs, hops
from pipeline.spatial.relations import DIRECTIONS, VIEWS
from pipeline.spatial.topology import RCC8, rcc8_converse
from pipeline.testing.oracle import oracle_answer_set
from pipeline.text.balance import Likely, fr_question, type_prior, yn_question
from pipeline.text.configs import Config, parse_configs
from pipeline.text.items import RCC8_SETTING, ROWS_PER_ROOM, RoomItems, room_items

PAPER = Config(5, 4, 12)


def no_prior(codes) -> Likely:
    """Every pair alike, every single relation a set: pairs drawn uniformly."""
    even = [1 / len(codes)] * len(codes)
    return Likely([frozenset({code}) for code in codes], [1.0] * len(codes), lambda pair: even)
BALANCED = PAPER.as_balanced()
ROOMS = range(12)


@pytest.fixture(scope="module")
def rooms():
    made = []
    for index in ROOMS:
        room = RoomItems(handmade_scene(index))
        made.append((room(PAPER), room(BALANCED)))
    return made


def test_names_parse_and_the_default_family_has_its_counterpart():
    assert BALANCED.name == "n5_m4_d144_balanced" and Config.parse(BALANCED.name) == BALANCED
    assert BALANCED.paper == PAPER and parse_configs("balanced") == tuple(c.as_balanced() for c in parse_configs("default"))


def test_the_stories_are_the_papers_and_only_the_questions_differ(rooms):
    for paper, balanced in rooms:
        # rcc8 is asked only where two objects' footprints show more than one relation
        assert len(paper) == ROWS_PER_ROOM and len(balanced) in (ROWS_PER_ROOM, ROWS_PER_ROOM - len(VIEWS))
        told = {(i.setting, i.view): i.story for i in paper}
        assert all(i.story == told[i.setting, i.view] for i in balanced)
        assert {i.config for i in balanced} == {BALANCED.name} and all(BALANCED.name in i.id for i in balanced)
        assert all(i.facts == p.facts for i, p in zip(balanced, paper) if i.setting != RCC8_SETTING)


def test_no_question_asks_a_described_pair_and_every_answer_is_the_checkers(rooms):
    for _, balanced in rooms:
        names = [o.name for o in balanced[0].objects]
        described = {frozenset((names[a], names[b])) for a, b in described_pairs(PAPER.n, PAPER.m)}
        for item in (i for i in balanced if i.setting in SETTINGS):
            assert frozenset(item.query.pair) not in described
            assert set(item.answer_set) == answer_set(item.facts, names, item.query.pair, item.d)
            assert item.true_relation in item.answer_set and item.answer_set_size == len(item.answer_set)
            assert item.answer == ("Yes" if item.candidate in item.answer_set else "No") or item.question_type == "FR"


def test_the_checker_agrees_with_the_oracle_on_balanced_pairs(rooms):
    _, balanced = rooms[0]
    names = [o.name for o in balanced[0].objects]
    for item in (i for i in balanced if i.setting in ("o2", "layout") and i.view == "top_down"):
        assert set(item.answer_set) == oracle_answer_set(item.facts, names, item.query.pair, item.d)


def test_rcc8_questions_ask_where_two_pairs_of_the_same_types_differ(rooms):
    """A balanced rcc8 question asks two objects (never the floor), in a room where two pairs of the
    same two object types show different relations, one of which it offers; the Yes and No pairs are
    of those types, so the types say nothing of the answer."""
    asked_rooms = 0
    for _, balanced in rooms:
        asked = [i for i in balanced if i.setting == RCC8_SETTING]
        type_of = {o.name: o.type for o in balanced[0].objects}
        shown: dict[tuple, set] = {}
        for f in balanced[0].topology:
            if "room" not in (f.subject, f.object):
                shown.setdefault((type_of[f.subject], type_of[f.object]), set()).add(f.relation)
                shown.setdefault((type_of[f.object], type_of[f.subject]), set()).add(rcc8_converse(f.relation))
        differing = {types for types, relations in shown.items() if len(relations) > 1}
        assert len(asked) == (len(VIEWS) if differing else 0)
        asked_rooms += bool(asked)
        for item in asked:
            assert "room" not in item.query.pair and item.candidate in RCC8
            assert (type_of[item.query.subject], type_of[item.query.object]) in differing
            assert item.answer == ("Yes" if item.candidate == item.true_relation else "No")
    assert asked_rooms


def test_the_candidate_allows_both_answers_in_its_room():
    """yn_question: within a room, a drawn candidate is held by some pair's answer and not by another's,
    so over many draws each candidate is Yes about half the time."""
    answers = {("a", "b"): frozenset({"N", "NE"}), ("b", "a"): frozenset({"S", "SW"}),
               ("a", "c"): frozenset(DIRECTIONS), ("c", "a"): frozenset(DIRECTIONS), ("b", "c"): frozenset({"N"}),
               ("c", "b"): frozenset({"S"})}
    rng = Random(5)
    drawn = [yn_question(answers, DIRECTIONS, rng, no_prior(DIRECTIONS)) for _ in range(9000)]
    yes = Counter((d.candidate, d.candidate in answers[d.pair]) for d in drawn)
    assert {d.candidate for d in drawn} == set(DIRECTIONS) and not any(d.fallback for d in drawn)
    for candidate in DIRECTIONS:
        share = yes[candidate, True] / (yes[candidate, True] + yes[candidate, False])
        assert 0.43 < share < 0.57
    everything = {pair: frozenset(DIRECTIONS) for pair in answers}
    assert yn_question(everything, DIRECTIONS, rng, no_prior(DIRECTIONS)).fallback


def test_fr_draws_an_answer_set_by_its_weight_however_many_pairs_give_it():
    """A set given by five pairs is drawn as often as one given by one, where both weigh the same;
    three times as often where it weighs three times as much."""
    many, one = frozenset({"N"}), frozenset({"S"})
    answers = {**{(f"a{k}", "b"): many for k in range(5)}, ("c", "b"): one}
    for weights, share in (([1.0, 1.0], 0.5), ([3.0, 1.0], 0.75)):
        likely = Likely([many, one], weights, lambda pair: (0.5, 0.5))
        rng = Random(2)
        drawn = Counter(answers[fr_question(answers, rng, likely).pair] for _ in range(4000))
        assert drawn[many] / 4000 == pytest.approx(share, abs=0.03)


def test_set_weights_ask_every_common_set_alike():
    """pipeline.text.prior.choice_weights: rooms giving some of four sets (one in all rooms, one in
    80%, one in 60%, one in 5%), each set offered with a weight of its own per room. The fitted
    weights draw the three common sets equally often over the rooms, and the rare one (given by
    fewer than COMMON of the rooms) weighs as the heaviest."""
    import numpy as np

    from pipeline.text.prior import COMMON, choice_weights

    rng = np.random.default_rng(0)
    given = rng.random((3000, 4)) < [1.0, 0.8, 0.6, 0.05]
    offers = given * rng.uniform(0.5, 2.0, given.shape)
    assert given[:, 3].mean() < COMMON <= given[:, 2].mean()
    weights = choice_weights(offers, np.full(4, 0.25))
    taken = offers * weights
    drawn = (taken / taken.sum(axis=1, keepdims=True)).mean(axis=0)
    assert drawn[:3] == pytest.approx([drawn[:3].mean()] * 3, abs=0.002)
    assert weights[3] == weights.max() == 1.0
    unweighted = (offers / offers.sum(axis=1, keepdims=True)).mean(axis=0)
    assert unweighted[0] > 1.5 * unweighted[2]  # without them the set every room gives is drawn most


def test_a_pair_is_drawn_the_less_often_the_more_its_types_make_its_answer_likely():
    """Two pairs give the same answer; the one whose types usually give it is drawn less often (the
    type prior, pipeline.text.prior), in FR and in YN alike."""
    likely = type_prior().likely("layout", {"bed": "Bed", "toilet": "Toilet", "chair": "Chair", "lamp": "FloorLamp"}.get)
    typical, other = ("bed", "chair"), ("lamp", "toilet")
    answer = max(likely.sets, key=lambda held: likely.answer(typical, held) / likely.answer(other, held))
    assert likely.answer(typical, answer) > likely.answer(other, answer)
    answers = {typical: answer, other: answer, ("chair", "lamp"): frozenset(DIRECTIONS) - answer}
    rng = Random(3)
    drawn = Counter(fr_question(answers, rng, likely).pair for _ in range(4000))
    assert drawn[other] > drawn[typical] > 0
    yes = Counter()
    for _ in range(4000):
        asked = yn_question(answers, DIRECTIONS, rng, likely)
        if asked.pair != ("chair", "lamp"):
            yes[asked.pair] += 1
    assert yes[other] > yes[typical] > 0


def test_balanced_items_are_a_pure_function_of_room_and_config(rooms):
    assert room_items(handmade_scene(3), BALANCED) == rooms[3][1]


def test_twins_of_balanced_items_tell_each_question_from_its_own_pair(rooms):
    from pipeline.text.twins import twin_items

    _, balanced = rooms[2]
    twins = twin_items(balanced)
    assert [t.question_type for t in twins] == [i.question_type for i in balanced]
    for item, twin in zip(balanced, twins):
        assert twin.answer == item.answer and twin.answer_set == item.answer_set and twin.candidate == item.candidate
        assert twin.config == f"twin_{BALANCED.name}" and twin.query != item.query  # renamed
    stories = Counter((t.setting, t.view, t.story) for t in twins)
    assert len(stories) == len({(t.setting, t.view) for t in twins})  # FR and YN of a setting and view share one story


def test_balanced_agent_rows_ask_undescribed_pairs_from_the_stances_their_framing_allows():
    """Each FR and YN question of a balanced agent row is drawn apart: a pair no described pair states,
    asked from the egocentric observer (agent) or from its second object's cell facing any wall, even
    one that cell touches (the other framings); the answer is the checker's seen from that stance, and
    a YN question's other answer is had by a question of its framing facing the same wall."""
    from pipeline.spatial.frames import seen_set
    from pipeline.text.agents import AGENT, agent_items, walls_touched_by

    apart = against = 0
    for index in (1, 4, 7):
        scene = handmade_scene(index)
        rows = agent_items(scene, room_items(scene, BALANCED))
        assert rows == agent_items(scene, room_items(scene, BALANCED))
        names = [o.name for o in rows[0].objects]
        described = {frozenset((names[a], names[b])) for a, b in described_pairs(PAPER.n, PAPER.m)}
        cells = {o.name: (o.i, o.j) for o in rows[0].objects}
        hung = {(o.type, o.x, o.z) for o in scene.objects if o.wall_hung}
        floor = {o.name for o in rows[0].objects if (o.type, o.x, o.z) not in hung}
        for row in rows:
            assert row.config == f"agent_{BALANCED.name}" and frozenset(row.query.pair) not in described
            a, b = (names.index(name) for name in row.query.pair)
            assert row.hops == hops(PAPER.n, described_pairs(PAPER.n, PAPER.m), (a, b)) >= 2
            pose = row.question_pose
            if row.kind == "agent":
                assert pose == row.story_pose
            else:
                assert pose.at == row.query.pair[1] and (pose.i, pose.j) == cells[pose.at] and pose.at in floor
                against += pose.facing in walls_touched_by(cells[pose.at], row.d)
            variables = names + ([AGENT] if row.story_view == "agent" else [])
            assert row.answer_set == seen_set(answer_set(row.facts, variables, row.query.pair, row.d), pose.facing)
            if row.question_type == "YN":  # the other answer is had by a question of the framing facing that wall
                others = [(a, b) for a in names for b in names if a != b and frozenset((a, b)) not in described
                          and (row.kind == "agent" or b in floor)]
                assert any((row.candidate in seen_set(answer_set(row.facts, variables, pair, row.d), pose.facing))
                           != (row.answer == "Yes") for pair in others), row.id
        by_slot = {(r.setting, r.kind, r.question_type): r for r in rows}
        apart += sum((by_slot[s, k, "FR"].query, by_slot[s, k, "FR"].question_pose)
                     != (by_slot[s, k, "YN"].query, by_slot[s, k, "YN"].question_pose) for s, k, _ in by_slot)
    assert apart > 0
    assert against > 0  # the wall a stance's cell touches is asked too: left out, the wall named told the answer


def test_an_agent_questions_type_prior_is_its_pairs_turned_to_the_facing_asked():
    """seen_likely: a question (a, b, facing) makes a seen answer set as likely as (a, b)'s types make
    the plan set it turns from; a seen set's FR weight is the mean of its turnings'."""
    from pipeline.spatial.frames import FACINGS, on_plan, seen_facing
    from pipeline.text.balance import seen_likely

    likely = type_prior().likely("o2_d2", {"a": "Fridge", "b": "Sofa"}.__getitem__)
    seen = seen_likely(likely, lambda key: key[2])
    assert sum(seen.weights) == pytest.approx(sum(likely.weights)) and sum(seen.posterior(("a", "b", "E"))) == pytest.approx(1)
    for facing in FACINGS:
        for answer, k in likely.sets.items():
            turned = frozenset(seen_facing(code, facing) for code in answer)
            assert seen.answer(("a", "b", facing), turned) == pytest.approx(likely.posterior(("a", "b"))[k])
            assert seen.weight(turned) == pytest.approx(sum(
                likely.weight(frozenset(on_plan(seen_facing(code, facing), other) for code in answer))
                for other in FACINGS) / len(FACINGS))
        for code in DIRECTIONS:
            assert seen.holds(("a", "b", facing), code) == pytest.approx(likely.holds(("a", "b"), on_plan(code, facing)))
    assert seen.answer(("a", "b", "N"), frozenset({"N"})) != seen.answer(("a", "b", "S"), frozenset({"N"}))


def _picture(rng: Random, straight: int) -> dict:
    """A picture's clear pairs as pipeline.text.pictured gives them (both orders): eight diagonal pairs,
    NE-SW ones more than NW-SE ones, and `straight` pairs level on one axis."""
    from pipeline.spatial.relations import converse

    codes = [rng.choice(["NE", "NE", "NE", "SW", "NW", "SE"]) for _ in range(8)]
    codes += [rng.choice(["N", "E", "S", "W", "E", "W"]) for _ in range(straight)]
    rng.shuffle(codes)
    relations = {}
    for k, code in enumerate(codes):
        relations[f"a{k}", f"b{k}"], relations[f"b{k}", f"a{k}"] = code, converse(code)
    return relations


def test_a_pictures_fr_questions_ask_two_diagonal_pairs_per_straight_one_at_most():
    """relation_questions: a picture's straight pairs first (at most STRAIGHT_PER_PICTURE, each axis
    before another pair of it), then DIAGONALS_PER_STRAIGHT diagonal pairs per straight one, no pair
    twice; none at all in a picture without a straight pair (where the old draw, a straight relation
    STRAIGHT_WEIGHT times as likely as a diagonal among those present, still asked four diagonals)."""
    from pipeline.spatial.relations import converse, direction_signs
    from pipeline.text.balance import DIAGONALS_PER_STRAIGHT, STRAIGHT_PER_PICTURE, relation_questions

    def straight(code):
        return 0 in direction_signs(code)

    rng = Random(11)
    assert relation_questions(_picture(rng, 0), 4, rng) == []
    for count in range(1, 6):
        for straights in range(4):
            relations = _picture(rng, straights)
            asked = relation_questions(relations, count, rng)
            codes = [relations[pair] for pair in asked]
            level = sum(map(straight, codes))
            assert level == min(straights, STRAIGHT_PER_PICTURE, count)
            assert codes == sorted(codes, key=straight, reverse=True)  # the straight pairs first
            assert len(codes) - level == min(DIAGONALS_PER_STRAIGHT * level, count - level)
            assert len({frozenset(pair) for pair in asked}) == len(asked)
            axes = [frozenset({code, converse(code)}) for code in codes]
            assert len(set(axes[level:])) == min(2, len(axes) - level)  # both diagonal axes where it asks two
    picture = _picture(rng, 2)
    assert relation_questions(picture, 4, Random(3)) == relation_questions(picture, 4, Random(3))


def test_no_relation_answers_more_than_a_sixth_of_the_fr_questions_of_pictures_rich_in_diagonals():
    """Over many pictures, eight diagonal pairs each (NE-SW ones three to one) and a straight pair in
    one of five: each of the eight relations answers at most a sixth of the FR questions, give or take
    the draws' noise, although a diagonal is in every picture and a straight relation in few."""
    from pipeline.text.balance import relation_questions

    rng = Random(5)
    answers = Counter()
    for _ in range(3000):
        relations = _picture(rng, int(rng.random() < 0.2) + int(rng.random() < 0.05))
        answers.update(relations[pair] for pair in relation_questions(relations, 4, rng))
    total = sum(answers.values())
    assert 2000 < total < 2800 and max(answers.values()) / total < 1 / 6 + 0.02, answers
    assert all(answers[code] for code in ("N", "E", "S", "W", "NE", "SW", "NW", "SE"))


def test_the_type_prior_is_fitted_on_what_balanced_rooms_may_ask(scenes):
    """pipeline.text.prior: per setting the answer sets of every askable pair (RoomItems.askable) and
    their shares, overall and per type as subject and as object, written one type a line and read
    back as the same table."""
    import json

    from conftest import SCENE_SEED

    from pipeline.scene.scene_file import load_scene, scene_path
    from pipeline.text.prior import dumps, fit

    rooms = range(4)
    table = fit(scenes, SCENE_SEED, rooms, PAPER)
    assert json.loads(dumps(table)) == table and set(table["settings"]) == {*SETTINGS, RCC8_SETTING}
    types, given = set(), {setting: Counter() for setting in table["settings"]}
    for k in rooms:
        room = RoomItems(load_scene(scene_path(scenes, SCENE_SEED, k)))
        askable, named = room.askable(PAPER)
        types |= set(named.values())
        for setting, answers in askable.items():
            given[setting].update(",".join(c for c in (RCC8 if setting == RCC8_SETTING else DIRECTIONS) if c in answer)
                                  for answer in answers.values())
    for setting, entry in table["settings"].items():
        total = sum(given[setting].values())
        assert entry["sets"] == sorted(given[setting], key=lambda s: (s.count(",") + 1, entry["sets"].index(s)))
        assert entry["base"] == [round(given[setting][s] / total, 5) for s in entry["sets"]]
        assert set(entry["subject"]) <= types and set(entry["object"]) <= types
        assert all(len(shares) == len(entry["sets"]) for role in ("subject", "object") for shares in entry[role].values())
        if setting == RCC8_SETTING:
            assert all(answer in RCC8 for answer in entry["sets"])


def test_a_setting_whose_askable_pairs_are_all_nine_asks_no_yn_question(scenes):
    """Any YN question there would be Yes (every relation is possible): its FR question is asked, its
    YN question is not; every other setting and view asks both."""
    from conftest import SCENE_COUNT, SCENE_SEED

    from pipeline.scene.scene_file import load_scene, scene_path

    skipped = 0
    for k in range(SCENE_COUNT):
        room = RoomItems(load_scene(scene_path(scenes, SCENE_SEED, k)))
        askable, _ = room.askable(BALANCED)
        asked = Counter((i.setting, i.view, i.question_type) for i in room(BALANCED))
        for setting in SETTINGS:
            all_nine = all(len(answer) == len(DIRECTIONS) for answer in askable[setting].values())
            skipped += all_nine
            for view in VIEWS:
                assert asked[setting, view, "FR"] == 1 and asked[setting, view, "YN"] == (not all_nine)
    assert skipped > 0
