"""Paired comparisons of one system under two conditions on the same items, with 95 % intervals.

* twin: each item of a configuration against its name-swapped twin (twin_<config>): the drop
  measures reliance on familiar words.
* view: each item asked top-down against the same item asked from the door (north-facing).
* image+story vs story: each vision_<config> item that has its story against the same item of
  <config> without the image.
* image vs story: each image-only item of vision_<config> (no story, the room's query pair)
  against the story items of <config> about the same room, view and question type (their mean
  over the eight settings): what the picture alone gives, against what the stories give.

Pairs are matched by (room, setting, view, question type), never by position. Intervals are
paired bootstrap intervals over rooms (pipeline.evaluate.stats), seeded from --seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.evaluate.score import Outcomes, ScoreRow
from pipeline.evaluate.stats import PairedGap, paired_gap
from pipeline.seeding import derive_seed
from pipeline.text.prompts import IMAGE_ONLY_SETTING, RCC8_SETTING

TWIN_PREFIX, VISION_PREFIX = "twin_", "vision_"
MEASURES = (("YN", "YN accuracy"), ("FR", "FR exact"))


@dataclass(frozen=True)
class Gap:
    kind: str  # twin, view, image+story vs story, image vs story
    configs: str  # what is compared, e.g. "n5_m4_d144 / twin_n5_m4_d144"
    system: str
    measure: str  # "YN accuracy" or "FR exact"
    first: str  # the first condition's name; difference = first - second
    second: str
    result: PairedGap


Key = tuple[str, str, str, str]  # room, setting, view, question type


def _positions(rows: Sequence[ScoreRow], config: str, modality: str | None = None) -> dict[Key, int]:
    return {(r.room_id, r.setting, r.view, r.question_type): k for k, r in enumerate(rows)
            if r.config == config and (modality is None or r.modality == modality)}


def _pairs(configs: Sequence[str], rows: Sequence[ScoreRow]) -> list[tuple[str, str, str, str, list]]:
    """(kind, configs label, first name, second name, [(room, question type, first positions, second positions)])."""
    found = []
    for config in configs:
        if not config.startswith((TWIN_PREFIX, VISION_PREFIX)) and TWIN_PREFIX + config in configs:
            original, twin = _positions(rows, config), _positions(rows, TWIN_PREFIX + config)
            found.append(("twin", f"{config} / {TWIN_PREFIX}{config}", "original", "twin",
                          [(key[0], key[3], [k], [twin[key]]) for key, k in original.items() if key in twin]))
        by_view: dict[tuple, dict[str, int]] = {}
        for (room, setting, view, question_type), k in _positions(rows, config).items():
            by_view.setdefault((room, setting, question_type), {})[view] = k
        found.append(("view", config, "top_down", "north_facing",
                      [(key[0], key[2], [views["top_down"]], [views["north_facing"]])
                       for key, views in by_view.items() if len(views) == 2]))
        base = config.removeprefix(VISION_PREFIX)
        if config.startswith(VISION_PREFIX) and base in configs:
            story = _positions(rows, base)
            with_story = _positions(rows, config, "image+story")
            found.append(("image+story vs story", f"{config} / {base}", "image+story", "story",
                          [(key[0], key[3], [k], [story[key]]) for key, k in with_story.items() if key in story]))
            stories: dict[tuple, list[int]] = {}
            for (room, setting, view, question_type), k in story.items():
                if setting != RCC8_SETTING:
                    stories.setdefault((room, view, question_type), []).append(k)
            found.append(("image vs story", f"{config} / {base}", "image", "story (mean of its settings)",
                          [(key[0], key[3], [k], stories[key[0], key[2], key[3]])
                           for key, k in _positions(rows, config, "image").items()
                           if key[1] == IMAGE_ONLY_SETTING and (key[0], key[2], key[3]) in stories]))
    return found


def paired_gaps(rows: Sequence[ScoreRow], configs: Sequence[str], systems: dict[str, Outcomes], seed: int) -> list[Gap]:
    gaps = []
    for kind, label, first_name, second_name, pairs in _pairs(configs, rows):
        for question_type, measure in MEASURES:
            chosen = [pair for pair in pairs if pair[1] == question_type]
            if not chosen:
                continue
            rooms = np.array([pair[0] for pair in chosen])
            for system, outcomes in systems.items():
                score = outcomes.correct.mean(axis=1)  # per item, the mean over rounds
                first = np.array([score[pair[2]].mean() for pair in chosen])
                second = np.array([score[pair[3]].mean() for pair in chosen])
                result = paired_gap(first, second, rooms, derive_seed(seed, "gap", kind, label, system, measure))
                gaps.append(Gap(kind, label, system, measure, first_name, second_name, result))
    return gaps
