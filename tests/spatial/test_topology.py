"""RCC-8 between footprints, the topology metadata and the rcc8 setting's questions."""

import dataclasses
import re
from random import Random

import pytest
import shapely
from handmade import box, handmade_scene
from shapely.geometry import Polygon

from pipeline.scene.footprints import walls_touched
from pipeline.spatial.topology import (RCC8, ROOM, floor, neighbours, rcc8, rcc8_converse, snapped_footprint,
                                       topology_facts)
from pipeline.text.configs import Config
from pipeline.text.items import RCC8_SETTING, room_items


def region(*corners) -> Polygon:
    return Polygon(snapped_footprint(corners))


def square(x0, y0, x1, y1) -> Polygon:
    return region((x0, y0), (x1, y0), (x1, y1), (x0, y1))


@pytest.mark.parametrize("a, b, expected", [
    (square(0, 0, 1, 1), square(2, 0, 3, 1), "DC"),
    (square(0, 0, 1, 1), square(1.0000000001, 0, 2, 1), "EC"),  # float noise below the grid still touches
    (square(0, 0, 1, 1), square(1, 1, 2, 2), "EC"),  # a corner is enough
    (square(0, 0, 1, 1), square(0.5, 0.5, 2, 2), "PO"),
    (square(0, 0, 1, 1), region((1, 0), (1, 1), (0, 1), (0, 0.0000000002)), "EQ"),  # same square, other start
    (square(0, 0, 1, 1), square(0, 0, 2, 2), "TPP"),
    (square(0.5, 0.5, 1, 1), square(0, 0, 2, 2), "NTPP"),
    (square(0, 0, 2, 2), square(1, 1, 2, 1.5), "TPPi"),
    (square(0, 0, 2, 2), square(0.5, 0.5, 1, 1), "NTPPi"),
    (square(0, 0, 1, 1), square(1.0004, 0, 2, 1), "EC"),  # within half a millimetre: snapped together
    (square(0, 0, 1, 1), square(1.002, 0, 2, 1), "DC"),  # two millimetres apart stay apart
])
def test_each_relation_on_constructed_footprints(a, b, expected):
    assert rcc8(a, b) == expected
    assert rcc8(b, a) == rcc8_converse(expected)


def by_predicates(a: Polygon, b: Polygon) -> str:
    """The RCC-8 recipe of docs/semantics.md section 10: EQ first, then DC, EC, TPP/NTPP, their converses, PO."""
    if a.equals(b):
        return "EQ"
    if a.disjoint(b):
        return "DC"
    if a.touches(b):
        return "EC"
    if a.within(b):
        return "TPP" if a.boundary.intersects(b.boundary) else "NTPP"
    if b.within(a):
        return "TPPi" if a.boundary.intersects(b.boundary) else "NTPPi"
    return "PO"


def test_the_matrix_reading_agrees_with_the_predicates_on_random_footprints():
    rng = Random(3)
    seen = set()
    for _ in range(3000):
        shapes = []
        for _ in range(2):  # coarse positions, so contact, containment and equality all happen
            x, z = rng.randint(0, 8) / 4, rng.randint(0, 8) / 4
            w, d = rng.randint(1, 8) / 4, rng.randint(1, 8) / 4
            shapes.append(Polygon(snapped_footprint(box(x, z, w, d, rng.choice([0, 90, 45, 30])))))
        if rng.random() < 0.05:  # the same footprint, from another corner
            shapes[1] = Polygon(shapes[0].exterior.coords[2:-1] + shapes[0].exterior.coords[:2])
        relation = rcc8(*shapes)
        assert relation == by_predicates(*shapes)
        seen.add(relation)
    assert seen == set(RCC8)


def test_snapped_footprints_are_on_the_millimetre_grid_and_close_to_the_original():
    corners = box(1.23456789, 2.3456789, 0.8, 0.5, 33.0)
    snapped = snapped_footprint(corners)
    assert all(round(v, 3) == v for point in snapped for v in point)
    assert Polygon(snapped).hausdorff_distance(Polygon(corners)) < 0.001
    assert Polygon(snapped).exterior.is_ccw


def test_topology_facts_cover_every_pair_and_the_room():
    footprints = [box(1, 1, 1, 1, 0), box(1.5, 1, 1, 1, 0), box(0.25, 4, 0.5, 0.5, 0)]
    facts = topology_facts(["a", "b", "c"], [snapped_footprint(f) for f in footprints], 5.0)
    assert [(f.subject, f.relation, f.object) for f in facts] == [
        ("a", "PO", "b"), ("a", "DC", "c"), ("b", "DC", "c"),
        ("a", "NTPP", ROOM), ("b", "NTPP", ROOM), ("c", "TPP", ROOM)]
    assert rcc8(floor(5.0), Polygon(snapped_footprint(footprints[2]))) == "TPPi"


def rotated_room(index: int):
    """A handmade room whose second object is turned by 30 degrees, so some story states corners."""
    scene = handmade_scene(index, count=5)
    turned = scene.objects[1]
    footprint = box(turned.x, turned.z, turned.size[0], turned.size[2], 30.0)
    turned = dataclasses.replace(turned, yaw=30.0, footprint=footprint, walls=walls_touched(footprint, scene.side))
    return dataclasses.replace(scene, objects=(scene.objects[0], turned, *scene.objects[2:]))


def stated_footprints(story: str, names: list[str]) -> dict[str, Polygon]:
    """Read each object's footprint back from the words of an rcc8 story, as a reader would."""
    out = {}
    for text in re.split(r"(?<=\.)\s+(?=[A-Z])", story):
        for name in names:
            ref = name if re.search(r" \d+$", name) else f"the {name}"
            if re.match(rf"(The footprint of )?{re.escape(ref)} (covers|takes up|is the polygon|stands on)",
                        text, re.IGNORECASE):
                rest = re.sub(re.escape(ref), "", text, flags=re.IGNORECASE)
                numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", rest)]
                if "corners" in text:
                    out[name] = Polygon(list(zip(numbers[::2], numbers[1::2])))
                else:
                    x0, x1, y0, y1 = numbers
                    out[name] = shapely.box(x0, y0, x1, y1)
    return out


def test_rcc8_questions_are_answered_by_the_footprints_the_story_states():
    asked = set()
    for index in range(30):
        scene = rotated_room(index)
        items = room_items(scene, Config(5, 4, 9))
        rcc8_items = [i for i in items if i.setting == RCC8_SETTING]
        assert [i.view for i in rcc8_items] == ["top_down", "north_facing"]
        assert sorted(i.answer for i in rcc8_items) == ["No", "Yes"]
        for item in rcc8_items:
            names = [o.name for o in item.objects]
            stated = stated_footprints(item.story, names) | {ROOM: shapely.box(0, 0, scene.side, scene.side)}
            assert set(stated) == set(names) | {ROOM}
            truth = rcc8(stated[item.query.subject], stated[item.query.object])
            assert item.answer_set == (truth,) and item.true_relation == truth and item.answer_set_size == 1
            assert (item.candidate == truth) == (item.answer == "Yes")
            assert item.candidate == truth or item.candidate in neighbours(truth)
            assert item.facts == () and item.hops == 0 and item.path == ()
            pairs = {(f.subject, f.object): f.relation for f in item.topology}
            pair = (item.query.subject, item.query.object)
            assert pairs.get(pair) == truth or rcc8_converse(pairs.get(pair[::-1], "")) == truth
            asked.add(truth)
        assert any("corners" in i.story for i in rcc8_items)
    assert len(asked) >= 3  # not only the ubiquitous DC and NTPP


def test_every_row_carries_the_rooms_topology():
    scene = handmade_scene(2, count=6)
    items = room_items(scene, Config(6, 7, 12))
    first = items[0]
    names = [o.name for o in first.objects]
    assert first.topology == topology_facts(names, [o.footprint for o in first.objects], scene.side)
    assert len(first.topology) == 6 * 5 // 2 + 6
    assert all(item.topology == first.topology for item in items)
