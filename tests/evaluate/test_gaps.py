"""Paired gaps on hand-made items: pairing by (room, setting, view, question type) or by pair question,
every kind, intervals."""

import numpy as np
import pytest

from pipeline.evaluate.gaps import paired_gaps
from pipeline.evaluate.score import Outcomes, ScoreRow
from pipeline.evaluate.stats import paired_gap, wilson


def item(config, room, setting, view, question_type="YN", modality=None, pair=None) -> ScoreRow:
    return ScoreRow(f"{room}-{config}-{setting}-{view}-{modality}-{pair}-{question_type}", room, config, setting, view,
                    question_type, "Yes", ("N",), "N", ("Yes", "No"), 5, 4, 12, 4, 1, modality, pair, None, None, None)


def outcomes(correct: list[bool]) -> Outcomes:
    result = Outcomes.empty(len(correct))
    result.correct[:, 0] = correct
    return result


ROOMS = [f"s0-{k:06d}" for k in range(4)]


X = "n5_m4_d144"  # a base configuration; the others are its kinds


def test_every_kind_pairs_the_same_items_and_measures_the_difference():
    rows, correct = [], []

    def add(row, right):
        rows.append(row)
        correct.append(right)

    for room in ROOMS:
        for view in ("top_down", "north_facing"):
            for setting in ("o2", "layout"):
                add(item(X, room, setting, view), view == "top_down")  # top-down right, door view wrong
                add(item(f"twin_{X}", room, setting, view), False)  # every twin wrong
                add(item(f"vision_{X}", room, setting, view, modality="image+story"), True)
            for pair in range(3):  # each pair question three ways: right from text, from images when pair > 0
                add(item(f"vision_{X}", room, "none", view, modality="image", pair=pair), pair > 0)
                add(item(f"vision_{X}", room, "centres", view, modality="text", pair=pair), True)
                add(item(f"vision_{X}", room, "centres", view, modality="image+text", pair=pair), pair == 2)
    found = {gap.kind: gap for gap in paired_gaps(rows, [X, f"vision_{X}", f"twin_{X}"], {"m": outcomes(correct)}, 0)
             if gap.configs in (f"{X} / twin_{X}", X, f"vision_{X} / {X}", f"vision_{X}") and gap.measure == "YN accuracy"
             and (gap.kind, gap.configs) != ("view", f"vision_{X}")}
    assert found["twin"].result.pairs == 16 and found["twin"].result.difference == pytest.approx(0.5)
    assert found["view"].result.pairs == 8 and found["view"].result.difference == pytest.approx(1.0)
    assert found["image+story vs story"].result.difference == pytest.approx(0.5)
    image = found["image vs text"].result
    assert image.pairs == 24 and image.first == pytest.approx(2 / 3) and image.second == 1.0
    assert found["image+text vs text"].result.difference == pytest.approx(-2 / 3)
    assert found["image+text vs image"].result.difference == pytest.approx(1 / 3 - 2 / 3)
    assert all(g.result.rooms == 4 for g in found.values())


def test_bootstrap_intervals_are_seeded_and_contain_the_difference():
    rng = np.random.default_rng(3)
    first, second = rng.random(200) < 0.7, rng.random(200) < 0.5
    rooms = np.repeat(np.arange(20), 10)
    one = paired_gap(first.astype(float), second.astype(float), rooms, seed=5)
    assert one == paired_gap(first.astype(float), second.astype(float), rooms, seed=5)
    assert one.low < one.difference < one.high and one.rooms == 20 and one.pairs == 200


def test_wilson_stays_inside_zero_and_one():
    assert wilson(0, 10)[0] == 0 and 0 < wilson(0, 10)[1] < 0.35
    assert wilson(10, 10)[1] == 1 and 0.65 < wilson(10, 10)[0] < 1
    low, high = wilson(50, 100)
    assert low == pytest.approx(1 - high) and 0.39 < low < 0.41


def test_a_balanced_twin_is_paired_with_its_balanced_original():
    base = f"{X}_balanced"
    rows, correct = [], []
    for room in ROOMS:
        for view in ("top_down", "north_facing"):
            rows += [item(base, room, "o2", view), item(f"twin_{base}", room, "o2", view)]
            correct += [True, False]
    configs = [X, base, f"twin_{base}"]
    found = [g for g in paired_gaps(rows, configs, {"m": outcomes(correct)}, 0) if g.kind == "twin"]
    assert {g.configs for g in found} == {f"{base} / twin_{base}"}
    assert found[0].result.pairs == 8 and found[0].result.difference == pytest.approx(1.0)
