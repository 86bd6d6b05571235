"""Agent viewpoints: the `agent_<base>` configurations (docs/semantics.md section 16).

An observer stands in the room facing a wall (a `Pose`); directions and regions are said as
they see them (pipeline.spatial.frames). Made from a room's stories of a base configuration
(items.RoomItems.told), per setting, each asked as FR and YN:

* `plan`: the base top-down story; the question puts you at one of the story's floor objects
  facing a wall named on the plan ("If you stood at the bed facing the west wall, where would the
  lamp be?"). One change of frame.
* `door`: the base door-view story (you at the door, facing north); the question moves you to a
  floor object and turns you to a wall named as you see it from the door, or says you do not
  turn. Two changes: from the door's frame to the room, from the room to the new stance.
* `agent`: an egocentric story told from a stance a camera can take (`stances`), known only by
  its region ("you stand in the far-left corner of the room, facing one of its walls"): every
  fact in your words, and two
  facts relating objects to you, the observer being one more object of the network. Its
  question is asked in the same frame (no change).
* `agent_moved`: the same story, the question moving you to an object and a wall named in the
  story's frame (two changes).

A moved question faces a wall its object's cell does not touch, so that something can be ahead.
The checker answers in plan codes (the observer `AGENT` a cell variable like any object); the
answer set, `true_relation`, `continuous_relation` and the reasoning path are then turned into
the question's frame (the plan codes said as the observer facing the question's wall sees them,
in the north-facing view's words). Every choice is drawn from seeds of the room and configuration.

A balanced configuration's rows (agent_<config>_balanced, docs/semantics.md section 17) tell the
same stories; their questions are drawn target first among every pair and stance a framing may ask
(`_BalancedDraws`), so that what a question shows without its story says little of its answer;
their moved questions may face any wall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache, partial
from random import Random
from typing import NamedTuple

import numpy as np

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.scene.records import Scene
from pipeline.seeding import derive_seed
from pipeline.spatial.checker import Answers, answer_set, answer_sets_together
from pipeline.spatial.difficulty import layout_decides, tightness
from pipeline.spatial.facts import Fact, described_pairs, hops
from pipeline.spatial.frames import FACINGS, OBSERVER, TOP_DOWN, facing_between, seen_facing, seen_set
from pipeline.spatial.grid import Cell
from pipeline.spatial.reasoning import PathStep, reasoning_path
from pipeline.spatial.relations import DIRECTIONS, converse, direction, direction_of_points, region, relation_words
from pipeline.text.balance import UNIFORM, fr_question, seen_weights, type_prior, yn_question
from pipeline.text.configs import Config
from pipeline.text.items import (Item, Query, Told, asked_no, beyond_local, fr_row, ladder_fields, shared_items,
                                 yn_row)
from pipeline.text.kinds import KINDS, Room
from pipeline.text.prompts import AGENT_VIEW
from pipeline.text.stories import Teller, sentences, written_path
from pipeline.text.words import Phrases, Wording, sentence, type_words

KIND = KINDS["agent"]
AGENT = "you"  # the observer's name in the fact network and the stories
FRAMINGS = ("plan", "door", "agent", "agent_moved")  # an agent row's `kind`: how its story and question are framed
FRAME_CHANGES = {"plan": 1, "door": 2, "agent": 0, "agent_moved": 2}
STORY_VIEW = {"plan": TOP_DOWN, "door": OBSERVER, "agent": AGENT_VIEW, "agent_moved": AGENT_VIEW}
TOLD_ABOUT_YOU = 2  # objects related to the observer in an egocentric story
# Where an observer with a camera may stand (docs/semantics.md section 16): a point of their cell at
# least CLEARANCE from every footprint and wall, and FACED_WALL from the wall faced.
CLEARANCE = 0.3  # m
FACED_WALL = 1.5  # m
SPOTS = (0.5, 0.3, 0.7, 0.1, 0.9)  # a cell's points tried, as fractions of its side (centre first)
SEEN_CONE = math.radians(35)  # an object centre this close to straight ahead, and NEAR_AHEAD ahead ...
NEAR_AHEAD = 1.0  # m ... is surely in a first-person picture (its field of view is at least 70 degrees)
SEE_AT_LEAST = 3  # a stance is drawn among those that see this many prominent objects (or the most any sees)
REACH_SLACK = 1e-9  # m: far above a distance's rounding error, so no footprint nearer than one found is passed over
AHEAD = {"N": (0.0, 1.0), "E": (1.0, 0.0), "S": (0.0, -1.0), "W": (-1.0, 0.0)}  # a facing's unit step (x, z)


@dataclass(frozen=True)
class Pose:
    """Where an observer stands and the wall they face."""

    at: str  # the object stood at, "door", or "" where the story tells only the region
    region: str  # the region of the cell stood in (a plan code)
    i: int  # the cell stood in
    j: int
    facing: str  # N, E, S or W: the wall faced



@dataclass(frozen=True)
class Stance:
    """Where a camera can stand: a pose, the point of its cell it stands at and what it sees."""

    pose: Pose
    point: tuple[float, float]  # x east, z north, metres: inside the pose's cell, clear of every footprint
    seen: int  # prominent objects whose centres lie in the SEEN_CONE, NEAR_AHEAD or more ahead


@dataclass(frozen=True)
class AgentItem(Item):
    """A row of an agent configuration: an Item whose story and question are told from frames."""

    kind: str  # plan, door, agent or agent_moved (module docstring)
    story_view: str  # the story's words: top_down, north_facing (from the door) or agent (from story_pose)
    story_pose: Pose | None  # the story's observer; None for a top-down story
    question_pose: Pose  # the observer the question asks you to be; its facing turns the answer
    frame_changes: int  # 0, 1 or 2
    frame_angle: int  # degrees between the story's facing (north for the plan) and the question's


RECORD = AgentItem


def rows(room: Room, config: Config) -> tuple[AgentItem, ...]:
    told = shared_items(room).told(config)
    return () if told is None else agent_items(room.scene, told)


def agent_items(scene: Scene, told: Told) -> tuple[AgentItem, ...]:
    """A room's agent rows of one base configuration, per setting of its stories (items.RoomItems.told).
    A hard configuration's (docs/semantics.md section 22): each framing's questions drawn among those only
    search answers in the framing's own facts, none where there is none."""
    framings = Framings(scene, told)
    base, config, rng = framings.base, framings.config, framings.rng
    wording = data_json("agents.json")
    door = _door(scene, base.d)
    drawn = _BalancedDraws(base, framings.objects, framings.floor, told.facts, framings.you_facts,
                           framings.observer) if base.balanced else None
    slots = []  # per setting and kind: each question type's fields (YN's None: not asked), and the framing's draws
    for setting in told.facts:
        stories = {"plan": told.story(setting, TOP_DOWN), "door": told.story(setting, OBSERVER)}
        egocentric = framings.egocentric_story(setting)
        for kind in FRAMINGS:
            asked = Random(derive_seed(scene.room_id, config, setting, kind))
            story_pose = {"plan": None, "door": door}.get(kind, framings.observer)
            # a row's fields, given its question's pose, pair and plan answer
            fields = partial(framings.fields, setting, kind, stories.get(kind, egocentric), story_pose)
            if drawn:  # FR and YN ask a pair and stance each, the YN candidate drawn with its own
                questions = drawn.questions(setting, kind, asked)
                if questions is None:  # a hard framing with no question only search answers: skipped
                    continue
                fr, yn, candidate = questions
                slots.append((dict(fields(*fr), hops=drawn.hops(fr[1])),
                              yn and dict(fields(*yn), hops=drawn.hops(yn[1])), candidate, asked))
                continue
            if kind == "agent":
                both = framings.egocentric_question(setting, egocentric)
            else:
                names, cells = framings.names, framings.cells
                stood = asked.choice(framings.floor)
                asked_about = asked.choice([name for name in names if name != stood])
                i, j = cells[stood]
                facing = asked.choice([f for f in FACINGS if f not in walls_touched_by((i, j), base.d)])
                query = (asked_about, stood)
                variables = names + ([AGENT] if STORY_VIEW[kind] == AGENT_VIEW else [])
                both = fields(Pose(stood, region((i, j), base.d), i, j, facing), query,
                              answer_set(framings.story_facts(setting, kind), variables, query, base.d))
            slots.append((both, both, None, asked))
    if not base.balanced:  # as many No as Yes per room
        ask_no = asked_no([yn["answer_set"] for _, yn, _, _ in slots], rng)
    out = []
    for k, (fr, yn, candidate, asked) in enumerate(slots):
        if not base.balanced:
            answer = yn["answer_set"]
            candidate = asked.choice(tuple(c for c in DIRECTIONS if c not in answer) if k in ask_no else answer)
        fr_text, yn_text = _questions(fr["kind"], wording, fr["query"].pair, fr["question_pose"], fr["story_pose"],
                                      framings.said, candidate, asked)
        if yn is not None and fr is not yn:  # a balanced row's YN question asks its own pair and stance
            yn_text = _questions(yn["kind"], wording, yn["query"].pair, yn["question_pose"], yn["story_pose"],
                                 framings.said, candidate, asked)[1]
        out.append(fr_row(AgentItem, fr, fr["id"], fr_text))
        if yn is not None:
            out.append(yn_row(AgentItem, yn, yn["id"], yn_text, candidate))
    return tuple(out)


class Framings:
    """What a room's agent rows of one base configuration share, whatever they ask (`agent_items`): the
    stories' objects, the egocentric stories' observer and the facts about you, drawn in this order from
    the room and configuration's seed (its draw goes on to the paper's YN answers), and the words they
    are told in. An egocentric map question (pipeline.text.agent_maps) needs no more than these."""

    def __init__(self, scene: Scene, told: Told) -> None:
        self.scene, self.told = scene, told
        self.base = base = Config.parse(told.shared["config"])
        self.config = KIND.config_name(base)
        self.objects = objects = told.shared["objects"]
        self.names = names = [o.name for o in objects]
        self.cells = {o.name: (o.i, o.j) for o in objects}
        self.centres = {o.name: (o.x, o.z) for o in objects}
        hung = {(o.type, o.x, o.z) for o in scene.objects if o.wall_hung}
        self.floor = [o.name for o in objects if (o.type, o.x, o.z) not in hung] or names  # a question stands at these
        self.said = _observer_wording(objects, "N")  # codes already turned into a question's frame, in its words
        self.rng = Random(derive_seed(scene.room_id, self.config))
        self.observer = observer = _story_observer(scene, objects, base.d, self.rng)
        cells = self.cells
        cells[AGENT] = (observer.i, observer.j)
        about_you = tuple(sorted(self.rng.sample(range(len(names)), TOLD_ABOUT_YOU)))
        self.you_facts = (Fact(AGENT, observer.region, None),
                          *(Fact(names[k], direction(cells[names[k]], cells[AGENT]), AGENT) for k in about_you))
        self.teller = Teller(_observer_wording(objects, observer.facing))  # the egocentric stories' words
        # what a row shares with the base's rows of its story (a balanced one's hops are its own pair's)
        self.common = {**told.shared, "hops": hops(base.n, described_pairs(base.n, base.m))}
        self._paths: dict[tuple, tuple] = {}  # `_path`'s, by its arguments

    def egocentric_story(self, setting: str) -> str:
        """The setting's facts and the facts about you, every one in your words (`teller`, in the
        observer's wording), the objects introduced in the stories' order; your region in the frame sentence."""
        rng = Random(derive_seed(self.scene.room_id, self.config, setting, "story"))
        teller, order = self.teller, self.told.shared["story_order"]
        return " ".join(filter(None, [
            teller.opening(self.scene.room_type, self.scene.side, rng),
            observer_frame(self.observer, rng),
            teller.objects(order, rng),
            *teller.told(sentences(self.told.facts[setting] + self.you_facts[1:], order), AGENT_VIEW, rng),
        ]))

    def egocentric_question(self, setting: str, story: str) -> dict:
        """The fields of the paper's egocentric question of a setting (the `agent` framing, told `story`):
        its pair (o_1, o_n) asked from the story's observer."""
        observer, query = self.observer, (self.names[0], self.names[-1])
        return self.fields(setting, "agent", story, observer, observer, query, self._egocentric_answers[setting])

    @cached_property
    def _egocentric_answers(self) -> dict[str, frozenset[str]]:
        """Every setting's plan answer of the egocentric question's pair, found together (checker.Answers: the
        settings' facts bound each other's answers, so most need no search of their own)."""
        query = (self.names[0], self.names[-1])
        return Answers(self.names + [AGENT], query, self.base.d).answer_sets(
            {setting: self.story_facts(setting, "agent") for setting in self.told.facts})

    def story_facts(self, setting: str, kind: str) -> tuple[Fact, ...]:
        """The facts a framing's story states: the setting's, and the facts about you if told from you."""
        return self.told.facts[setting] + (self.you_facts if STORY_VIEW[kind] == AGENT_VIEW else ())

    def fields(self, setting: str, kind: str, story: str, story_pose: Pose | None, question_pose: Pose,
               query: tuple[str, str], plan_answer: frozenset[str]) -> dict:
        """The fields of an agent row of `kind` asking `query` from `question_pose`: its answer set (the
        plan answer `plan_answer` turned to the question's facing), relations, path and difficulty."""
        story_facts = self.story_facts(setting, kind)
        facing = question_pose.facing
        answer = seen_set(plan_answer, facing)
        subject, reference = query
        plan_path, path, path_text = self._path(story_facts, query, facing)
        d, cells, centres = self.base.d, self.cells, self.centres
        return dict(
            self.common, id=f"{self.common['room_id']}-{self.config}-{setting}-{kind}", config=self.config,
            view=OBSERVER, setting=setting, facts=story_facts, story=story, answer_set=answer,
            answer_set_size=len(answer), true_relation=seen_facing(direction(cells[subject], cells[reference]), facing),
            continuous_relation=seen_facing(direction_of_points(centres[subject], centres[reference]), facing),
            query=Query(subject, reference), path=path,
            path_text=path_text,
            path_decides=bool(path) and path[-1].composed == answer,
            tightness=round(tightness(story_facts, d), 6),
            layout_decides=layout_decides(story_facts, query, plan_answer, d),
            **ladder_fields(story_facts, query, plan_answer, d, plan_path, lambda held: seen_set(held, facing)),
            kind=kind, story_view=STORY_VIEW[kind], story_pose=story_pose, question_pose=question_pose,
            frame_changes=FRAME_CHANGES[kind],
            frame_angle=facing_between(story_pose.facing if story_pose else "N", facing),
        )

    def _path(self, facts: tuple[Fact, ...], query: tuple[str, str], facing: str
              ) -> tuple[tuple[PathStep, ...], tuple[PathStep, ...], str]:
        """A question's reasoning path on the plan, that path in the question's frame, and in words: found
        once per room for the settings and framings whose facts have the same direction facts (the path
        goes by those alone), as the base rows find theirs."""
        links = tuple(fact for fact in facts if fact.relation in DIRECTIONS)
        key = (links, query, facing)
        if key not in self._paths:
            plan_path = reasoning_path(links, *query)
            path = tuple(_turned_step(step, facing) for step in plan_path)
            self._paths[key] = plan_path, path, written_path(path, query[0], self.said, OBSERVER) if path else ""
        return self._paths[key]


class _BalancedDraws:
    """A balanced agent configuration's questions (docs/semantics.md section 17): per setting and
    framing, the question's target is drawn first and a question of the room that has it found
    after, among every question the framing may ask: a pair no described pair states, asked from
    every floor object facing every wall (the egocentric framing: from the story's observer). FR
    and YN draw apart, as the base's balanced items do (pipeline.text.balance), each answer seen
    from the question's stance; the type weights weigh pairs as seen facing that way.

    A hard configuration's (docs/semantics.md section 22) are drawn so, every type weight 1, among
    the pairs whose answer set R2 does not give in the framing's own facts (the egocentric framings'
    with the facts about you: `items.beyond_local`), a YN question offering only relations R2 leaves
    open; a framing with no such pair, or whose pairs allow no YN candidate, asks none."""

    def __init__(self, config: Config, objects: Sequence, floor: Sequence[str], told: Mapping[str, tuple[Fact, ...]],
                 you_facts: tuple[Fact, ...], observer: Pose) -> None:
        names = [o.name for o in objects]
        self.n, self.described, self.hard = config.n, described_pairs(config.n, config.m), config.hard
        self.position = {name: k for k, name in enumerate(names)}
        described = {(names[a], names[b]) for pair in self.described for a, b in (pair, pair[::-1])}
        every = [(a, b) for a in names for b in names if a != b]
        self.pairs = [pair for pair in every if pair not in described]  # asked from the observer
        # asked from a floor object (the pair's second); where no undescribed pair ends at one, any pair
        # that does (but in a hard configuration, which never asks a described pair)
        self.moved = [pair for pair in self.pairs if pair[1] in floor] or (
            [] if self.hard else [pair for pair in every if pair[1] in floor])
        self.observer = observer
        self.poses = {name: Pose(name, region((o.i, o.j), config.d), o.i, o.j, "N") for name, o in zip(names, objects)}
        # the facts of the plan and door framings' stories, and of the egocentric framings' (with yours)
        stories = {"plan": told, "agent": {setting: facts + you_facts for setting, facts in told.items()}}
        self.local: dict[str, dict[str, dict]] | None = None  # a hard configuration's: what R2 leaves open
        if self.hard:
            once = [(a, b) for k, a in enumerate(names) for b in names[k + 1:] if (a, b) not in described]
            found = {story: {setting: beyond_local(facts, once, config.d) for setting, facts in by_setting.items()}
                     for story, by_setting in stories.items()}
            answers, local = ({story: {setting: {pair: getattr(settled, part) for pair, settled in held.items()}
                                       for setting, held in by_setting.items()} for story, by_setting in found.items()}
                              for part in ("exact", "local"))
            self.local = {kind: local[_story_of(kind)] for kind in FRAMINGS}
            self.weights = {setting: UNIFORM for setting in told}
        else:
            asked = list(dict.fromkeys(self.pairs + self.moved))
            answers = {"plan": _plan_answers(names, told, asked, config.d),
                       "agent": _plan_answers(names + [AGENT], stories["agent"], asked, config.d)}
            type_of = dict(zip(names, (o.type for o in objects))).__getitem__
            self.weights = {setting: seen_weights(type_prior().weights(setting, type_of), lambda key: key[2])
                            for setting in told}
        self.answers = {kind: answers[_story_of(kind)] for kind in FRAMINGS}

    def questions(self, setting: str, kind: str, rng: Random) -> tuple[tuple, tuple | None, str] | None:
        """The FR and the YN question of a setting and framing, each (question pose, pair, plan
        answer set), and the YN question's candidate; a hard configuration's YN question None where
        its pairs allow no candidate, and both None where it has no pair to ask."""
        plan = self.answers[kind][setting]
        if kind == "agent":
            keys = [(*pair, self.observer.facing) for pair in self.pairs if pair in plan]
        else:
            # any wall, even one the stance's cell touches: were those left out, the wall named would
            # tell the answer (standing against a wall, what is asked about mostly lies away from it)
            keys = [(*pair, facing) for pair in self.moved if pair in plan for facing in FACINGS]
        if not keys:
            return None
        seen = {key: frozenset(seen_set(plan[key[:2]], key[2])) for key in keys}
        offered = self.local and {key: frozenset(seen_set(self.local[kind][setting][key[:2]], key[2])) for key in keys}
        fr = fr_question(seen, rng, self.weights[setting])
        # YN: both answers had among questions facing one wall, so that the wall named says nothing of it
        yn = yn_question(seen, DIRECTIONS, rng, self.weights[setting], lambda key: key[2], offered=offered)
        fr_key, yn_key = fr.pair, yn.pair
        asked_yn = None if self.hard and yn.fallback else (self._pose(kind, yn_key), yn_key[:2], plan[yn_key[:2]])
        return (self._pose(kind, fr_key), fr_key[:2], plan[fr_key[:2]]), asked_yn, yn.candidate

    def hops(self, pair: tuple[str, str]) -> int:
        """The described pairs between a pair's objects (items.py's hops; the paper's agent rows keep
        their story's question's, whatever pair they ask)."""
        return hops(self.n, self.described, (self.position[pair[0]], self.position[pair[1]]))

    def _pose(self, kind: str, key: tuple[str, str, str]) -> Pose:
        return self.observer if kind == "agent" else replace(self.poses[key[1]], facing=key[2])


def _story_of(kind: str) -> str:
    """Whose facts a framing's story states: the base story's ("plan": the plan and door framings) or
    the egocentric story's, with the facts about you ("agent")."""
    return "agent" if STORY_VIEW[kind] == AGENT_VIEW else "plan"


def _plan_answers(variables: Sequence[str], facts: dict[str, tuple[Fact, ...]], pairs: Sequence[tuple[str, str]],
                  d: int) -> dict[str, dict[tuple[str, str], frozenset[str]]]:
    """Per setting, each pair's answer set on the plan, found together (checker.answer_sets_together;
    (b, a)'s the converse of (a, b)'s)."""
    once = [(a, b) for k, (a, b) in enumerate(pairs) if (b, a) not in pairs[:k]]
    out: dict[str, dict[tuple[str, str], frozenset[str]]] = {setting: {} for setting in facts}
    for (a, b), sets in zip(once, answer_sets_together([Answers(variables, pair, d) for pair in once], facts)):
        for setting, answer in sets.items():
            out[setting][a, b], out[setting][b, a] = answer, frozenset(map(converse, answer))
    return out


def walls_touched_by(cell: Cell, d: int) -> tuple[str, ...]:
    """The walls (N, E, S, W) a cell touches: those of the border rows and columns it lies in."""
    i, j = cell
    return tuple(wall for wall, on in (("N", j == d - 1), ("E", i == d - 1), ("S", j == 0), ("W", i == 0)) if on)


def half_view(side: float, point: tuple[float, float], facing: str) -> float:
    """Half the horizontal field of view (radians) of a first-person camera at `point` facing
    `facing`: wide enough to take in the wall faced, between 35 and 65 degrees."""
    x, z = point
    ahead = {"N": side - z, "E": side - x, "S": z, "W": x}[facing]
    across = max(x, side - x) if facing in "NS" else max(z, side - z)
    return min(max(math.atan2(across, max(ahead, 0.3)), math.radians(35)), math.radians(65))


def clearances(scene: Scene, points: np.ndarray) -> np.ndarray:
    """Per point (x, z), its distance to the nearest footprint of any object (0 inside one) or wall. A
    footprint is measured only from the points its bounding box is not farther from than the nearest
    footprint or wall found so far (REACH_SLACK over it): from the others it is farther still, so their
    distance is the same number as measured from every footprint, by the same operations, a tenth of them.
    A box's distance is measured only where neither of its axes' is farther (a hypotenuse is no shorter
    than a side, rounded too). Each footprint's edges are measured together: numpy's matmul over the
    stacked edges makes, per edge, the call `rel @ edge` (and `edge @ edge`) would make alone, the same
    BLAS kernel on the same numbers (its kernels round otherwise than an elementwise product and sum,
    and one point takes another kernel than several)."""
    x, z = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
    nearest = np.minimum.reduce([x, scene.side - x, z, scene.side - z])
    # (object, corner, xz): a footprint has four corners (the scene schema)
    corners = np.array([obj.footprint for obj in scene.objects], dtype=float).reshape(-1, 4, 2)
    edges = np.roll(corners, -1, axis=1) - corners  # corner k to corner k + 1
    turn = edges[:, 0, 0] * edges[:, 1, 1] - edges[:, 0, 1] * edges[:, 1, 0]
    orientations = np.where(turn >= 0, 1.0, -1.0)  # counter-clockwise corners or not
    lengths = np.maximum(np.matmul(edges[..., None, :], edges[..., None])[..., 0, 0], 1e-12)  # edge @ edge
    low, high = corners.min(axis=1), corners.max(axis=1)
    across = np.maximum(np.maximum(low[:, :1] - x, x - high[:, :1]), 0.0)  # (object, point): from its box, in x
    along = np.maximum(np.maximum(low[:, 1:] - z, z - high[:, 1:]), 0.0)  # and in z
    for corner, edge, orientation, length, dx, dz in zip(corners, edges, orientations, lengths, across, along):
        reach = nearest + REACH_SLACK
        boxed = np.flatnonzero((dx <= reach) & (dz <= reach))
        near = boxed[np.hypot(dx[boxed], dz[boxed]) <= reach[boxed]]
        if not len(near):
            continue
        rx, rz = x[near] - corner[:, :1], z[near] - corner[:, 1:]  # each point from each corner: (corner, point)
        ex, ez = edge[:, :1], edge[:, 1:]  # (corner, 1): broadcast over the points
        inside = np.all(orientation * (ex * rz - ez * rx) >= 0, axis=0)
        t = np.clip(np.matmul(np.stack([rx, rz], axis=-1), edge[..., None])[..., 0] / length[:, None], 0.0, 1.0)
        closest = np.minimum(nearest[near], np.minimum.reduce(np.hypot(rx - t * ex, rz - t * ez)))
        closest[inside] = 0.0
        nearest[near] = closest
    return nearest


class StanceRow(NamedTuple):
    """A stance as plain values (`stance_rows`): its cell, facing, point and what it sees."""

    i: int
    j: int
    facing: str
    point: tuple[float, float]
    seen: int


@lru_cache(maxsize=8)
def stances(scene: Scene, d: int) -> tuple[Stance, ...]:
    """Every pose a first-person camera may take, in cell and facing order (`stance_rows`), as records."""
    return tuple(Stance(Pose("", region((i, j), d), i, j, facing), point, seen)
                 for i, j, facing, point, seen in stance_rows(scene, d))


@lru_cache(maxsize=8)
def stance_rows(scene: Scene, d: int) -> tuple[StanceRow, ...]:
    """Every pose a first-person camera may take, in cell and facing order: per cell, the point of
    SPOTS x SPOTS farthest from every footprint and wall (the first of equals), where that is at least
    CLEARANCE; per facing, where the faced wall is FACED_WALL away or more. Every cell and facing at
    once, each number by the same operations as one at a time: (i + u) * s, then the wall's and each
    centre's offsets from the point. Plain values, not records: the story's observer is drawn among
    them (`_story_observer`), and only the one drawn needs its Pose."""
    s, w = scene.side / d, scene.side
    i, j, u, v = (np.ravel(a) for a in np.meshgrid(np.arange(d), np.arange(d), SPOTS, SPOTS, indexing="ij"))
    spots = len(SPOTS) ** 2
    grid = np.stack([(i + u) * s, (j + v) * s], axis=1).reshape(d * d, spots, 2)
    clear = clearances(scene, grid.reshape(-1, 2)).reshape(d * d, spots)
    best = np.argmax(clear, axis=1)
    cells = np.flatnonzero(clear[np.arange(d * d), best] >= CLEARANCE)
    x, z = grid[cells, best[cells]].T
    centres = np.array([(o.x, o.z) for o in scene.prominent]).reshape(-1, 2)
    offset_x, offset_z = centres[:, 0] - x[:, None], centres[:, 1] - z[:, None]  # a cell's row: each centre's
    walls = {"N": w - z, "E": w - x, "S": z, "W": x}  # each point's distance to the wall faced
    walled, seen = {}, {}
    for facing in FACINGS:
        ax, az = AHEAD[facing]
        ahead = offset_x * ax + offset_z * az
        across = offset_x * az - offset_z * ax
        walled[facing] = (walls[facing] >= FACED_WALL).tolist()  # Python's values: read one at a time below
        seen[facing] = np.sum((ahead >= NEAR_AHEAD) & (np.abs(across) <= ahead * math.tan(SEEN_CONE)), axis=1).tolist()
    out = []
    for k, (index, point) in enumerate(zip(cells.tolist(), zip(x.tolist(), z.tolist()))):
        ci, cj = divmod(index, d)
        out.extend(StanceRow(ci, cj, facing, point, seen[facing][k]) for facing in FACINGS if walled[facing][k])
    return tuple(out)


def drawn_stances(candidates: Sequence[StanceRow], rng: Random) -> list[StanceRow]:
    """`candidates` in a drawn order: those that see SEE_AT_LEAST prominent objects (or as many as
    any does) first, each part shuffled."""
    enough = min(SEE_AT_LEAST, max((c.seen for c in candidates), default=0))
    first = [c for c in candidates if c.seen >= enough]
    rest = [c for c in candidates if c.seen < enough]
    rng.shuffle(first)
    rng.shuffle(rest)
    return first + rest


def camera_point(scene: Scene, pose: Pose, d: int) -> tuple[float, float]:
    """Where the first-person camera of an observer's pose stands (x, z metres), from `stances`."""
    for stance in stances(scene, d):
        if stance.pose == pose:
            return stance.point
    raise RoomspaceError(f"room {scene.room_id}: no camera can stand in cell ({pose.i}, {pose.j}) facing {pose.facing}")


def _story_observer(scene: Scene, objects: Sequence, d: int, rng: Random) -> Pose:
    """The egocentric story's observer: a stance a camera can take (`stances`) in a cell that holds
    no story object (of `objects`), drawn by `drawn_stances` (told only by its region), a facing."""
    taken = {(o.i, o.j) for o in objects}
    free = [c for c in stance_rows(scene, d) if (c.i, c.j) not in taken]
    if not free:
        raise RoomspaceError(f"room {scene.room_id}: no cell clear of its objects' footprints and cells for an observer")
    i, j, facing, _, _ = drawn_stances(free, rng)[0]
    return Pose("", region((i, j), d), i, j, facing)


def _door(scene: Scene, d: int) -> Pose:
    """The door view's observer: the cell of the door's centre on the south border row, facing north."""
    door = next(o for o in scene.openings if o.kind == "door")
    i = min(int((door.start[0] + door.end[0]) / 2 / scene.side * d), d - 1)
    return Pose("door", region((i, 0), d), i, 0, "N")


def _observer_wording(objects: Sequence, facing: str) -> Wording:
    """Relation words as an observer facing `facing` says them (the north-facing view's words), of
    the story's `objects` and you."""
    phrases = Phrases([o.name for o in objects] + [AGENT], [type_words(o.type) for o in objects] + [""])
    return Wording(phrases, lambda code, view, field: relation_words(seen_facing(code, facing), OBSERVER, field))


def observer_frame(observer: Pose, rng: Random) -> str:
    """The sentence that places you, by your region in your own words, facing one of the walls."""
    place = relation_words(seen_facing(observer.region, observer.facing), OBSERVER, "phrase")
    return sentence(rng.choice(data_json("agents.json")["frame"]).format(place=place))


def _questions(kind: str, wording: dict, query: tuple[str, str], pose: Pose, story_pose: Pose | None,
               words: Wording, candidate: str, rng: Random) -> tuple[str, str]:
    """The FR and YN questions of a row."""
    subject, reference = (words.phrases.ref(name) for name in query)
    relation = words.words(candidate, OBSERVER, "phrase")  # `words` says codes as they are: the candidate is turned
    if kind == "agent":
        same = wording["same"]
        return (sentence(rng.choice(same["FR"]).format(a=subject, b=reference)),
                sentence(rng.choice(same["YN"]).format(a=subject, b=reference, relation=relation)))
    if story_pose is None:
        moved = rng.choice(wording["pose"][TOP_DOWN]).format(x=reference, wall=wording["walls"][TOP_DOWN][pose.facing])
    else:  # the wall as the story's observer sees it before moving; facing ahead is no turn
        turn = seen_facing(pose.facing, story_pose.facing)
        stances = wording["pose"]["observer"]["ahead" if turn == "N" else "turned"]
        moved = rng.choice(stances).format(x=reference, wall=wording["walls"]["observer"].get(turn, ""))
    return (sentence(rng.choice(wording["question"]["FR"]).format(pose=moved, z=subject)),
            sentence(rng.choice(wording["question"]["YN"]).format(pose=moved, z=subject, relation=relation)))


def _turned_step(step: PathStep, facing: str) -> PathStep:
    """A path step composed on the plan, said in the question's frame."""
    fact = Fact(step.fact.subject, seen_facing(step.fact.relation, facing), step.fact.object)
    return PathStep(fact, step.reached, seen_set(step.composed, facing))
