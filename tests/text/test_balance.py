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
from pipeline.text.balance import TypePrior, TypeWeights, allowed, fr_question, fr_weights, type_prior, yn_question
from pipeline.text.configs import Config, parse_configs
from pipeline.text.items import RCC8_SETTING, ROWS_PER_ROOM, RoomItems, room_items

PAPER = Config(5, 4, 12)


def no_prior(codes) -> TypeWeights:
    """Every pair alike, every single relation a set: pairs drawn uniformly."""
    return TypeWeights([frozenset({code}) for code in codes], [1.0] * len(codes))
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
        rng = Random(2)
        drawn = Counter(answers[fr_question(answers, rng, TypeWeights([many, one], weights)).pair] for _ in range(4000))
        assert drawn[many] / 4000 == pytest.approx(share, abs=0.03)


def typed_rooms(count: int, seed: int) -> list:
    """Rooms as pipeline.text.prior reads them (RoomItems.askable): six pairs each, of three types;
    a pair's answer is north, east, south or west: north three times as likely where its subject
    is a bed, east where its object is a lamp, south five times where it is a chair and a lamp."""
    rng = Random(seed)
    sets = [frozenset({code}) for code in "NESW"]
    rooms = []
    for _ in range(count):
        types = {f"o{k}": rng.choice(["Bed", "Chair", "Lamp"]) for k in range(4)}
        answers = {}
        for pair in rng.sample([(a, b) for a in types for b in types if a != b], 6):
            leaning = [1.0] * 4
            leaning[0] += 2 * (types[pair[0]] == "Bed")
            leaning[1] += 2 * (types[pair[1]] == "Lamp")
            leaning[2] += 4 * ((types[pair[0]], types[pair[1]]) == ("Chair", "Lamp"))
            answers[pair] = rng.choices(sets, weights=leaning)[0]
        rooms.append(({"layout": answers}, types))
    return rooms


def expected_draws(rooms: list, prior: TypePrior) -> tuple[Counter, dict, dict]:
    """Over `rooms`, drawn as a build draws with `prior`: each FR set's chance; the FR sets asked
    about each (subject, object) types; per types and relation offered, the chance of a YN question
    and of its Yes."""
    sets, fr_by, yn_by = Counter(), {}, {}
    for askable, types in rooms:
        answers = askable["layout"]
        weights = prior.weights("layout", types.__getitem__)
        fr = fr_weights(answers, weights)
        for (pair, answer), weight in zip(answers.items(), fr):
            sets[answer] += weight / sum(fr)
            fr_by.setdefault((types[pair[0]], types[pair[1]]), Counter())[answer] += weight / sum(fr)
        both = allowed(DIRECTIONS, list(answers.values()))
        for code in both:
            sides = Counter(code in answer for answer in answers.values())
            chances = {pair: weights.yn_weight(pair, code, code in answer) / sides[code in answer]
                       for pair, answer in answers.items()}
            for pair, chance in chances.items():
                asked = yn_by.setdefault((types[pair[0]], types[pair[1]], code), [0.0, 0.0])
                asked[0] += chance / sum(chances.values()) / len(both)
                asked[1] += (code in answers[pair]) * chance / sum(chances.values()) / len(both)
    return sets, fr_by, yn_by


def test_the_fitted_weights_ask_every_set_alike_and_each_type_as_all():
    """pipeline.text.prior.fitted on rooms whose types lean to answers (`typed_rooms`), read back by
    TypePrior and drawn by the build's own weights: every set is asked alike, the sets asked about
    every pair of types are spread as over all, and every pair of types is Yes half the time to
    every relation offered; on other rooms of the same kind nearly so. Without the factors, the
    types tell the answer."""
    from pipeline.text.prior import fitted

    table = {"settings": fitted(typed_rooms(4000, seed=1), progress=lambda _: None)}
    unfitted = {"settings": {"layout": {**table["settings"]["layout"], **{
        f"{kind}_{role}": {} for kind in ("fr", "yn") for role in ("subject", "object", "pair")}}}}
    for rooms, within in ((typed_rooms(4000, seed=1), 0.01), (typed_rooms(4000, seed=2), 0.08)):  # fitted, other
        sets, fr_by, yn_by = expected_draws(rooms, TypePrior(table))
        assert [sets[answer] / len(rooms) for answer in sets] == pytest.approx([0.25] * 4, abs=0.01)
        for asked in fr_by.values():
            assert max(asked.values()) / sum(asked.values()) < 0.25 + within
        assert all(yes / asked == pytest.approx(0.5, abs=within) for asked, yes in yn_by.values())
    _, fr_by, yn_by = expected_draws(typed_rooms(4000, seed=2), TypePrior(unfitted))
    assert max(fr_by["Chair", "Lamp"].values()) / sum(fr_by["Chair", "Lamp"].values()) > 0.4
    assert max(yes / asked for asked, yes in yn_by.values()) > 0.6


def test_a_pair_is_drawn_by_its_types_factors():
    """Two pairs give the same answer; the one whose types' factors on it are lower is drawn less
    often, in FR and in YN alike (TypePrior: a factor per subject type, object type and pair of
    types, 1 for a type not in the table)."""
    sets = [frozenset({"N"}), frozenset({"S"})]
    yn_half = [1.0] * 2 * len(DIRECTIONS)
    yn_half[2 * DIRECTIONS.index("N")] = 0.5  # Yes to "N"
    table = {"settings": {"layout": {
        "sets": ["N", "S"], "weights": [1.0, 1.0],
        "fr_subject": {"Bed": [0.5, 1.0]}, "fr_object": {}, "fr_pair": {"Bed|Chair": [0.5, 1.0]},
        "yn_subject": {"Bed": yn_half}, "yn_object": {}, "yn_pair": {"Bed|Chair": yn_half}}}}
    weights = TypePrior(table).weights("layout", {"bed": "Bed", "chair": "Chair", "lamp": "Lamp", "sofa": "Sofa"}.get)
    typical, other = ("bed", "chair"), ("lamp", "sofa")
    assert weights.fr_weight(typical, sets[0]) == 0.25 and weights.fr_weight(other, sets[0]) == 1.0
    assert weights.yn_weight(typical, "N", True) == 0.25 and weights.yn_weight(typical, "N", False) == 1.0
    answers = {typical: sets[0], other: sets[0], ("chair", "lamp"): sets[1]}
    rng = Random(3)
    drawn = Counter(fr_question(answers, rng, weights).pair for _ in range(4000))
    assert drawn[other] == pytest.approx(4 * drawn[typical], rel=0.15) and drawn[typical] > 0
    yes = Counter()
    for _ in range(4000):
        asked = yn_question(answers, ["N"], rng, weights)
        yes[asked.pair] += 1
    # either answer's pairs weigh the mean of their factors: Yes (0.25 + 1) / 2 against No 1
    assert yes[other] == pytest.approx(4 * yes[typical], rel=0.15)
    assert (yes[other] + yes[typical]) / 4000 == pytest.approx(0.625 / 1.625, abs=0.03)


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
        rows = agent_items(scene, RoomItems(scene).told(BALANCED))
        assert rows == agent_items(scene, RoomItems(scene).told(BALANCED))
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


def test_an_agent_questions_weights_are_its_pairs_turned_to_the_facing_asked():
    """seen_weights: a question (a, b, facing) weighs a seen answer set, or a seen relation, by
    (a, b)'s factors on the plan set, or plan relation, it turns from; a seen set's FR weight is the
    mean of its turnings'."""
    from pipeline.spatial.frames import FACINGS, on_plan, seen_facing
    from pipeline.text.balance import seen_weights

    weights = type_prior().weights("o2_d2", {"a": "Fridge", "b": "Sofa"}.__getitem__)
    seen = seen_weights(weights, lambda key: key[2])
    assert sum(seen.weights) == pytest.approx(sum(weights.weights))
    assert len(set(weights.fr_factors(("a", "b")))) > 1  # the test says something: the factors differ
    for facing in FACINGS:
        for answer in weights.sets:
            turned = frozenset(seen_facing(code, facing) for code in answer)
            assert seen.fr_weight(("a", "b", facing), turned) / seen.weight(turned) == pytest.approx(
                weights.fr_weight(("a", "b"), answer) / weights.weight(answer))
            assert seen.weight(turned) == pytest.approx(sum(
                weights.weight(frozenset(on_plan(seen_facing(code, facing), other) for code in answer))
                for other in FACINGS) / len(FACINGS))
        for code in DIRECTIONS:
            for yes in (True, False):
                plan = weights.yn_weight(("a", "b"), on_plan(code, facing), yes)
                assert seen.yn_weight(("a", "b", facing), code, yes) == plan


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
    """pipeline.text.prior: per setting the answer sets of the askable pairs (RoomItems.askable),
    a weight per set, and factors per type key met in those rooms (FR: one per set; YN: Yes and No
    per relation), written one key a line and read back as the same table."""
    import json

    from conftest import SCENE_SEED

    from pipeline.scene.scene_file import load_scene, scene_path
    from pipeline.text.prior import dumps, fit

    rooms = range(4)
    table = fit(scenes, SCENE_SEED, rooms, PAPER, progress=lambda _: None)
    assert json.loads(dumps(table)) == table and set(table["settings"]) == set(SETTINGS)
    keys, given = set(), {setting: Counter() for setting in SETTINGS}
    for k in rooms:
        askable, named = RoomItems(load_scene(scene_path(scenes, SCENE_SEED, k))).askable(PAPER)
        keys |= set(named.values()) | {f"{a}|{b}" for a in named.values() for b in named.values()}
        for setting in SETTINGS:
            given[setting].update(",".join(c for c in DIRECTIONS if c in answer)
                                  for answer in askable[setting].values())
    for setting, entry in table["settings"].items():
        assert entry["sets"] == sorted(given[setting], key=lambda s: (s.count(",") + 1, entry["sets"].index(s)))
        assert len(entry["weights"]) == len(entry["sets"]) and max(entry["weights"]) == 1.0
        for role in ("subject", "object", "pair"):
            assert set(entry[f"fr_{role}"]) <= keys and set(entry[f"yn_{role}"]) <= keys
            assert all(len(f) == len(entry["sets"]) for f in entry[f"fr_{role}"].values())
            assert all(len(f) == 2 * len(DIRECTIONS) for f in entry[f"yn_{role}"].values())


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
