"""Uncertainty for the score tables: Wilson intervals for rates, paired cluster bootstrap for gaps,
McNemar's exact test for two systems' right/wrong answers to the same items.

A rate over n items with s successes (s may be fractional: the mean over repeated rounds) gets
the Wilson score interval, which stays inside [0, 1] and is sensible at 0 % and 100 %. A gap
between two systems or conditions on the same items (an item against its twin, one view against
the other) is paired: rooms are resampled with replacement, every pair of a drawn room kept, and
the 2.5 and 97.5 percentiles of the resampled gaps are the interval. Rooms are the unit because
the items of one room share its objects and layout; the draws come from a seeded generator, so
the interval is reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
BOOTSTRAP_DRAWS = 2000


@dataclass(frozen=True)
class Rate:
    value: float
    low: float  # 95 % interval
    high: float
    round_sd: float | None = None  # the standard deviation over repeated rounds, where there are several


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a rate of `successes` in `n` (n > 0)."""
    p = successes / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 / (1 + Z95 ** 2 / n) * math.sqrt(max(p * (1 - p) / n + Z95 ** 2 / (4 * n * n), 0.0))
    # At 0 % and 100 % the interval touches its end exactly (floats would miss it by an ulp).
    return (0.0 if p == 0 else max(0.0, centre - half)), (1.0 if p == 1 else min(1.0, centre + half))


def rate(per_item: np.ndarray, per_round: np.ndarray | None = None) -> Rate | None:
    """The mean of per-item scores in [0, 1] with its interval; `per_round` holds each round's rate."""
    if per_item.size == 0:
        return None
    low, high = wilson(float(per_item.sum()), int(per_item.size))
    sd = float(np.std(per_round, ddof=1)) if per_round is not None and per_round.size > 1 else None
    return Rate(float(per_item.mean()), low, high, sd)


@dataclass(frozen=True)
class PairedGap:
    pairs: int
    rooms: int
    first: float  # mean score of the first condition over the pairs
    second: float
    difference: float  # first - second
    low: float  # 95 % paired bootstrap interval of the difference
    high: float
    p: float = 1.0  # two-sided: twice the smaller share of resampled differences at or beyond 0 on either side


def paired_gap(first: np.ndarray, second: np.ndarray, rooms: np.ndarray, seed: int) -> PairedGap | None:
    """first[k] and second[k] are one pair's scores, rooms[k] its room; None without pairs."""
    if first.size == 0:
        return None
    room_ids, room_of = np.unique(rooms, return_inverse=True)
    count = np.bincount(room_of, minlength=room_ids.size).astype(float)
    first_sum = np.bincount(room_of, weights=first, minlength=room_ids.size)
    second_sum = np.bincount(room_of, weights=second, minlength=room_ids.size)
    generator = np.random.default_rng(seed)
    draws = generator.integers(0, room_ids.size, size=(BOOTSTRAP_DRAWS, room_ids.size))
    cells = (np.arange(BOOTSTRAP_DRAWS)[:, None] * room_ids.size + draws).ravel()  # how often each draw takes each room
    weight = np.bincount(cells, minlength=BOOTSTRAP_DRAWS * room_ids.size).reshape(BOOTSTRAP_DRAWS, -1).astype(float)
    differences = (weight @ first_sum - weight @ second_sum) / (weight @ count)
    low, high = np.percentile(differences, [2.5, 97.5])
    a, b = float(first.mean()), float(second.mean())
    p = min(1.0, 2 * min(float((differences <= 0).mean()), float((differences >= 0).mean())))
    return PairedGap(int(first.size), int(room_ids.size), a, b, a - b, float(low), float(high), p)


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """McNemar's exact two-sided p for paired right/wrong outcomes: the binomial test at 1/2 of the
    discordant pairs (`first_only` right only in the first, `second_only` only in the second); 1 without any."""
    n = first_only + second_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(first_only, second_only) + 1))
    return min(1.0, 2 * tail / 2 ** n)
