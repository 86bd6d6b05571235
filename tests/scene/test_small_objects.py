"""Small objects on and in the furniture, placed offline (docs/semantics.md section 21).

Checked on the shared rooms (conftest.py) from the records alone: every object lies inside its
surface or compartment, under the shelf above, no two boxes meet, a load's centre lies over its
carrier, what goes where is ProcTHOR's table, levels and supports chain up to the furniture; the
placement is a pure function of the scene, the scene files without it are the files of before, and
`roomspace scenes --small-objects` writes it into the records, houses untouched.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest
from conftest import SCENE_COUNT, SCENE_SEED

from pipeline import cli
from pipeline.scene.scene_file import house_sha256, load_house, load_scene, scene_path
from pipeline.scene.small_objects import INSIDE, bottoms, place_small_objects, rules, small_objects_of
from pipeline.typed_json import to_json

REPO = Path(__file__).resolve().parents[2]
TOL = 1e-6


@pytest.fixture(scope="session")
def rooms(scenes):
    """(scene, house, small objects) of every shared room."""
    out = []
    for k in range(SCENE_COUNT):
        path = scene_path(scenes, SCENE_SEED, k)
        scene, house = load_scene(path), load_house(path)
        out.append((scene, house, place_small_objects(scene, house)))
    return out


def own_frame(obj):
    """(origin, unit across, unit ahead) of a furniture piece's footprint: corner 0, to corner 1, to corner 3."""
    (x0, z0), (x1, z1), _, (x3, z3) = obj.footprint
    across = ((x1 - x0) / obj.size[0], (z1 - z0) / obj.size[0])
    ahead = ((x3 - x0) / obj.size[2], (z3 - z0) / obj.size[2])
    return (x0, z0), across, ahead


def local_rect(obj, small):
    """A small object's rectangle (u0, u1, v0, v1) in its furniture's frame, from its centre, yaw and size."""
    origin, across, ahead = own_frame(obj)
    turn = round(((small.yaw - obj.yaw) % 360) / 90) % 4
    assert abs(((small.yaw - obj.yaw) % 360) - 90 * turn) < 1e-3 or turn == 0 and abs((small.yaw - obj.yaw) % 360 - 360) < 1e-3
    width, depth = (small.size[0], small.size[2]) if turn % 2 == 0 else (small.size[2], small.size[0])
    dx, dz = small.x - origin[0], small.z - origin[1]
    u, v = dx * across[0] + dz * across[1], dx * ahead[0] + dz * ahead[1]
    return u - width / 2, u + width / 2, v - depth / 2, v + depth / 2


def furniture_of(scene, objects, small):
    """The furniture piece a small object stands on, however high its stack."""
    by_id = {o.id: o for o in objects}
    while small.support in by_id:
        small = by_id[small.support]
    return next(o for o in scene.objects if o.id == small.support), small


def test_objects_lie_inside_their_surface_or_compartment_and_under_the_shelf_above(rooms):
    spec = rules()
    placed = 0
    for scene, house, objects in rooms:
        heights = bottoms(house)
        for small in objects:
            furniture, base = furniture_of(scene, objects, small)
            entry = spec["receptacles"][furniture.type]
            parts = {p["name"]: p for p in (*entry["surfaces"], *entry.get("compartments", ()))}
            part = parts[base.part]
            width, height, depth = furniture.size
            u0, u1, v0, v1 = local_rect(furniture, small)
            if base.inside:  # a compartment: x0, x1, y0, y1, z0, z1
                x0, x1, y0, y1, z0, z1 = part["box"]
                ceiling = heights[furniture.id] + y1 * height
            else:
                x0, x1, _, z0, z1 = part["box"]
                ceiling = None if part["below"] is None else heights[furniture.id] + part["below"] * height
            assert x0 * width - TOL <= u0 and u1 <= x1 * width + TOL, (scene.room_id, small)
            assert z0 * depth - TOL <= v0 and v1 <= z1 * depth + TOL, (scene.room_id, small)
            if ceiling is not None:
                assert small.y + small.size[1] <= ceiling + TOL, (scene.room_id, small)
            placed += 1
    assert placed > 50


def test_no_two_boxes_meet(rooms):
    gap = rules()["gap"]
    for scene, _, objects in rooms:
        by_id = {o.id: o for o in objects}
        for a, b in combinations(objects, 2):
            fa, _ = furniture_of(scene, objects, a)
            fb, _ = furniture_of(scene, objects, b)
            if fa.id != fb.id:
                continue
            ra, rb = local_rect(fa, a), local_rect(fa, b)
            across = ra[0] < rb[1] + gap - TOL and rb[0] < ra[1] + gap - TOL and ra[2] < rb[3] + gap - TOL \
                and rb[2] < ra[3] + gap - TOL
            up = a.y < b.y + b.size[1] - TOL and b.y < a.y + a.size[1] - TOL
            # an object in an open bowl or pot sits inside its carrier's box, contents inside their container's
            nested = b.id in ancestors(a, by_id) or a.id in ancestors(b, by_id)
            assert not (across and up) or nested, (scene.room_id, a.id, b.id)


def ancestors(small, by_id) -> set[str]:
    """The small objects a small object rests on or is inside, down to the furniture."""
    found = set()
    while small.support in by_id:
        small = by_id[small.support]
        found.add(small.id)
    return found


def test_loads_rest_on_their_carrier_and_levels_chain(rooms):
    spec = rules()
    levels = set()
    for scene, _, objects in rooms:
        by_id = {o.id: o for o in objects}
        furniture_ids = {o.id for o in scene.objects}
        for small in objects:
            levels.add(small.level)
            assert 1 <= small.level <= 3
            if small.support in furniture_ids:
                assert small.level == 1 and small.part is not None
                continue
            carrier = by_id[small.support]
            assert small.level == carrier.level + 1
            if small.inside:
                assert small.part == INSIDE and carrier.type in spec["containers"]
                continue
            assert small.part is None and carrier.type in spec["carriers"]
            relation = spec["carriers"][carrier.type]["relation"]
            expected = carrier.y + (carrier.size[1] if relation == "on" else 0.25 * carrier.size[1])
            assert math.isclose(small.y, expected, abs_tol=2e-6), (scene.room_id, small)
            if spec["carriers"][carrier.type].get("closed_only"):
                assert carrier.closed
            furniture, _ = furniture_of(scene, objects, small)
            cu0, cu1, cv0, cv1 = local_rect(furniture, carrier)
            u0, u1, v0, v1 = local_rect(furniture, small)
            centre = ((u0 + u1) / 2, (v0 + v1) / 2)
            assert cu0 - TOL <= centre[0] <= cu1 + TOL and cv0 - TOL <= centre[1] <= cv1 + TOL
    assert levels == {1, 2, 3}


def test_what_goes_where_is_procthors_table(rooms):
    from procthor.databases import objects_in_receptacles, placement_annotations

    spec = rules()
    closed = set()
    for scene, _, objects in rooms:
        furniture = {o.id: o for o in scene.objects}
        for small in objects:
            annotations = placement_annotations.loc[small.type]
            assert annotations[f"in{scene.room_type}s"] > 0 and small.type not in spec["skip_types"]
            if small.support in furniture:
                assert small.type in objects_in_receptacles[furniture[small.support].type]
            assert (small.closed is not None) == (small.type in spec["containers"])
            if small.closed:
                closed.add(small.type)
            if small.type in spec["placed_closed"]:
                assert small.size[1] == spec["placed_closed"][small.type]
    compartments = {small.part for _, _, objects in rooms for small in objects if small.inside}
    assert {"fridge", INSIDE} <= compartments and compartments & {"cabinet", "top left drawer", "top right drawer",
                                                                  "drawer"}
    assert closed


def test_a_pure_function_of_the_scene_in_any_process(scenes, rooms):
    scene, house, objects = rooms[0]
    assert place_small_objects(scene, house) == objects
    code = ("import json, sys; from pipeline.scene.scene_file import load_scene, load_house; "
            "from pipeline.scene.small_objects import place_small_objects; from pipeline.typed_json import to_json; "
            f"p = {str(scene_path(scenes, SCENE_SEED, 0))!r}; "
            "print(json.dumps(to_json(place_small_objects(load_scene(p), load_house(p)))))")
    for hash_seed in ("0", "123"):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"}, cwd=REPO)
        assert json.loads(done.stdout) == json.loads(json.dumps(to_json(objects)))


def test_scene_files_without_them_are_unchanged(scenes):
    """The feature off: a record's small_objects is None and its file has no such key."""
    for k in range(SCENE_COUNT):
        path = scene_path(scenes, SCENE_SEED, k)
        assert load_scene(path).small_objects is None
        assert "small_objects" not in json.loads(path.read_text())["record"]


def test_scenes_command_records_them_and_leaves_houses_alone(scenes, rooms, tmp_path):
    for k in range(2):
        shutil.copy(scene_path(scenes, SCENE_SEED, k), scene_path(tmp_path, SCENE_SEED, k))
    before = [house_sha256(scene_path(tmp_path, SCENE_SEED, k)) for k in range(2)]
    assert cli.main(["scenes", "--count", "2", "--seed", str(SCENE_SEED), "--out", str(tmp_path), "--quiet",
                     "--small-objects", "--workers", "1"]) == 0
    for k in range(2):
        path = scene_path(tmp_path, SCENE_SEED, k)
        written = load_scene(path)
        assert written.small_objects == rooms[k][2]
        assert house_sha256(path) == before[k]
        assert small_objects_of(written, load_house(path)) == rooms[k][2]
        original = load_scene(scene_path(scenes, SCENE_SEED, k))
        assert written.__class__(**{**written.__dict__, "small_objects": None}) == original
