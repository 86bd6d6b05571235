"""Egocentric map questions: the map questions of the agent kind's egocentric stories
(pipeline.text.maps, pipeline.text.agents; docs/semantics.md section 18).

Kind `agent_map`, made for a base configuration that has both maps and agents: per room and setting,
the story an observer tells standing in the room facing one of its walls (the `agent` framing's:
every fact in the observer's words, the observer one more object of the story) asks for the d x d
map of the room as the observer sees it, the observer drawn in it. The story never says which wall
is north, so the map is drawn in the observer's frame: its first line is the row of cells along the
wall faced, its last the row along the wall behind, each line from the wall on the left to the wall
on the right. That is the plan turned so that the faced wall is at the top (pipeline.spatial.frames:
every cell by `turn_cell(cell, -quarters(facing), d)`, every code by `seen_facing`), which turns no
answer: a fact holds on the turned cells exactly when it holds on the plan's.

The rows are `AgentMapItem`s with question type MAP and view `agent`, in that frame throughout:

* `facts` are the story's facts as the story states them, each code the plan's seen facing the
  observer's wall (`facts_held` checks a drawn map against them as they are, like any map row's);
* `options` are the story's objects in o order, then the observer (`you`): the map writes them as
  1 ... n and n + 1, so n is at most 8;
* `answer` is the witness, the rasterised scene and the observer's cell, turned;
* `answer_set`, `true_relation`, `path` and the rest are the agent FR row's, already said in the
  observer's frame; `objects` stay on the plan (their cells and metres, as in every agent row), and
  `story_pose` says where the observer stands on the plan and which wall they face.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.spatial.facts import Fact
from pipeline.spatial.frames import quarters, seen_facing, turn_cell
from pipeline.text.agents import AGENT, AgentItem, Framings, Pose
from pipeline.text.configs import Config
from pipeline.text.items import Item, init_fields, shared_items
from pipeline.text.kinds import KINDS, Room
from pipeline.text.maps import asked_map
from pipeline.text.prompts import AGENT_VIEW

KIND = KINDS["agent_map"]


@dataclass(frozen=True)
class AgentMapItem(Item):
    """A map question of an egocentric story (module docstring)."""

    story_pose: Pose  # the story's observer on the plan: their region, cell and the wall they face


RECORD = AgentMapItem


def rows(room: Room, config: Config) -> tuple[AgentMapItem, ...]:
    """The room's egocentric map questions, made from its egocentric stories alone (agents.Framings): not
    from its agent rows, whose question texts draw on every framing's answers in the room."""
    told = shared_items(room).told(config)
    if told is None:
        return ()
    framings, name = Framings(room.scene, told), KIND.config_name(config)
    return tuple(_map_of(framings.egocentric_question(setting, framings.egocentric_story(setting)), name)
                 for setting in told.facts)


def agent_map_item(row: AgentItem, config: str) -> AgentMapItem:
    """The map question of an egocentric agent row's story, in the observer's frame (module docstring)."""
    return _map_of(init_fields(row, AgentMapItem), config)


def _map_of(question: Mapping, config: str) -> AgentMapItem:
    """The map question of an egocentric story, made from the fields of its FR question (`question`)."""
    pose, d = question["story_pose"], question["d"]
    turns = -quarters(pose.facing)
    facts = tuple(Fact(f.subject, seen_facing(f.relation, pose.facing), f.object) for f in question["facts"])
    placed = [*((obj.name, turn_cell((obj.i, obj.j), turns, d)) for obj in question["objects"]),
              (AGENT, turn_cell((pose.i, pose.j), turns, d))]
    return asked_map(AgentMapItem, {**question, "facts": facts}, config, AGENT_VIEW, placed)
