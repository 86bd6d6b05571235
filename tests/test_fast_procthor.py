"""The fast rectangle merge must give ProcTHOR the same sets, in the same iteration order, as the stock one."""

from random import Random

import pytest
from procthor.generation.objects import OrthogonalPolygon
from shapely.geometry import box

from pipeline.fast_procthor import STOCK_JOIN, installed, join_neighboring_rectangles


def free_space(seed: int, holes: int) -> OrthogonalPolygon:
    """A room with furniture-like boxes cut out: the shape ProcTHOR merges rectangles over."""
    rng = Random(seed)
    room = box(0, 0, 6, 6)
    for _ in range(holes):
        x, z = round(rng.uniform(0, 5), 2), round(rng.uniform(0, 5), 2)
        room = room.difference(box(x, z, round(x + rng.uniform(0.3, 1.5), 2), round(z + rng.uniform(0.3, 1.5), 2)))
    return OrthogonalPolygon(room)


def merge_rounds(polygon: OrthogonalPolygon, join) -> list[list[tuple]]:
    """Every round of get_all_rectangles' loop, as the ordered list its set iterates in."""
    rounds, current = [], polygon.get_neighboring_rectangles()
    while True:
        candidates = join(polygon, current)
        rounds.append(list(candidates))
        merged = current | candidates
        if len(merged) == len(current):
            return rounds
        current = merged


@pytest.mark.parametrize("seed, holes", [(s, 1 + s % 4) for s in range(20)])
def test_same_rectangles_in_the_same_order(seed, holes):
    polygon = free_space(seed, holes)
    assert merge_rounds(polygon, join_neighboring_rectangles) == merge_rounds(polygon, STOCK_JOIN)


def test_installed_only_inside_the_block():
    polygon = free_space(3, 4)
    with installed():
        assert OrthogonalPolygon._join_neighboring_rectangles is join_neighboring_rectangles
        fast = polygon.get_all_rectangles()
    assert OrthogonalPolygon._join_neighboring_rectangles is STOCK_JOIN
    assert list(fast) == list(polygon.get_all_rectangles())


def stock_and_fast(index: int) -> tuple[str, str]:
    from pipeline.scenes import dumps, sample_scene, scene_document

    return tuple(dumps(scene_document(*sample_scene(101, index, stock_merge=stock))) for stock in (True, False))


def test_thirty_houses_are_byte_identical_to_stock_procthor():
    from pipeline.parallel import ordered_map

    for index, (stock, fast) in enumerate(ordered_map(stock_and_fast, range(30), workers=2)):
        assert stock == fast, f"house {index} differs"
