"""Paired comparisons of one system under two conditions on the same items, with 95 % intervals.

* a kind's comparison (pipeline.text.kinds): twin, each item of a configuration against its
  name-swapped twin (twin_<config>), whose drop measures reliance on familiar words; image+story
  vs story, each vision_<config> (vision_agent_<config>) item that has its story against the same
  item of <config> (agent_<config>) without the image.
* view: each item asked top-down against the same item asked from the door (north-facing).
* image vs text, image+text vs text, image+text vs image: each pair question of vision_<config>
  asked with the image alone, the centres in metres alone, and both (the same question and
  answer): what the picture gives against the same facts in words.

Pairs are matched by (room, setting, view, question type, and for agent rows their frames), and
pair questions by (room, pair, view, question type), never by position. Intervals are
paired bootstrap intervals over rooms (pipeline.evaluate.stats), seeded from --seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.evaluate.score import NO_ANSWER, Outcomes, ScoreRow
from pipeline.evaluate.stats import PairedGap, paired_gap
from pipeline.seeding import derive_seed
from pipeline.text.kinds import KINDS, Comparison, parse
from pipeline.text.prompts import PAIR_MODALITIES

MEASURES = (("YN", "YN accuracy"), ("FR", "FR exact"), ("MAP", "maps consistent"))  # by question type
MODALITY_GAPS = (("image", "text"), ("image+text", "text"), ("image+text", "image"))


@dataclass(frozen=True)
class Gap:
    kind: str  # twin, view, image+story vs story, or two modalities of the pair questions
    configs: str  # what is compared, e.g. "n5_m4_d144 / twin_n5_m4_d144"
    system: str
    measure: str  # "YN accuracy", "FR exact" or "maps consistent"
    first: str  # the first condition's name; difference = first - second
    second: str
    result: PairedGap


Key = tuple[str, str, str, str, tuple]  # room, setting, view, question type, agent frames (story view, changes)


def _positions(rows: Sequence[ScoreRow], config: str, modality: str | None = None) -> dict[Key, int]:
    """Key -> position; an agent configuration's four kinds of a setting differ by their frames. Pair
    questions are matched by `_pair_positions`."""
    return {(r.room_id, r.setting, r.view, r.question_type, (r.story_view, r.frame_changes)): k
            for k, r in enumerate(rows)
            if r.config == config and r.pair is None and (modality is None or r.modality == modality)}


def _pair_positions(rows: Sequence[ScoreRow], config: str, modality: str) -> dict[tuple, int]:
    """(room, pair, view, question type) -> position, for the pair questions asked in `modality`."""
    return {(r.room_id, r.pair, r.view, r.question_type): k for k, r in enumerate(rows)
            if r.config == config and r.modality == modality and r.pair is not None}


def _compared(rows: Sequence[ScoreRow], config: str, other: str, compared: Comparison) -> tuple:
    """A kind's comparison (pipeline.text.kinds) of `config` with `other`, the first condition first."""
    mine, theirs = _positions(rows, config, compared.modality), _positions(rows, other)
    first, second, label = (theirs, mine, f"{other} / {config}") if compared.first_is_other else \
        (mine, theirs, f"{config} / {other}")
    return (compared.label, label, *compared.names,
            [(key[0], key[3], [k], [second[key]]) for key, k in first.items() if key in second])


def _pairs(configs: Sequence[str], rows: Sequence[ScoreRow]) -> list[tuple[str, str, str, str, list]]:
    """(kind, configs label, first name, second name, [(room, question type, first positions, second positions)]),
    each configuration's in the order: comparisons it comes first in, views, its own comparison, modalities."""
    found = []
    for config in configs:
        kind, base = parse(config)
        for other_kind in KINDS.values():  # kinds compared with this one, this one's score first
            compared = other_kind.compared
            if compared and compared.first_is_other and compared.other == kind.name \
                    and other_kind.config_name(base) in configs:
                found.append(_compared(rows, other_kind.config_name(base), config, compared))
        by_view: dict[tuple, dict[str, int]] = {}
        for (room, setting, view, question_type, frames), k in _positions(rows, config).items():
            by_view.setdefault((room, setting, question_type, frames), {})[view] = k
        found.append(("view", config, "top_down", "north_facing",
                      [(key[0], key[2], [views["top_down"]], [views["north_facing"]])
                       for key, views in by_view.items() if len(views) == 2]))
        compared = kind.compared
        if compared and not compared.first_is_other and KINDS[compared.other].config_name(base) in configs:
            found.append(_compared(rows, config, KINDS[compared.other].config_name(base), compared))
        if kind.images:
            asked = {modality: _pair_positions(rows, config, modality) for modality in PAIR_MODALITIES}
            for first, second in MODALITY_GAPS:
                found.append((f"{first} vs {second}", config, first, second,
                              [(key[0], key[3], [k], [asked[second][key]])
                               for key, k in asked[first].items() if key in asked[second]]))
    return found


def paired_gaps(rows: Sequence[ScoreRow], configs: Sequence[str], systems: dict[str, Outcomes], seed: int) -> list[Gap]:
    gaps = []
    for kind, label, first_name, second_name, pairs in _pairs(configs, rows):
        for question_type, measure in MEASURES:
            chosen = [pair for pair in pairs if pair[1] == question_type]
            if not chosen:
                continue
            rooms = np.array([pair[0] for pair in chosen])
            asked = [k for pair in chosen for k in (*pair[2], *pair[3])]
            for system, outcomes in systems.items():
                if (outcomes.status[asked] == NO_ANSWER).all() and not outcomes.correct[asked].any():
                    continue  # no answer to this question type (the regions and direct baselines): no gap to show
                score = outcomes.correct.mean(axis=1)  # per item, the mean over rounds
                first = np.array([score[pair[2]].mean() for pair in chosen])
                second = np.array([score[pair[3]].mean() for pair in chosen])
                result = paired_gap(first, second, rooms, derive_seed(seed, "gap", kind, label, system, measure))
                gaps.append(Gap(kind, label, system, measure, first_name, second_name, result))
    return gaps
