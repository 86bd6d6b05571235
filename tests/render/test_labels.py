"""Labels on the offline images, read back from the PNG bytes: the caller's names, never overlapping,
inside the frame, each on its object or joined to it by a leader; and the palette PNGs are lossless."""

from __future__ import annotations

import io
from itertools import combinations

import numpy as np
import pytest
from conftest import SCENE_COUNT, SCENE_SEED
from handmade import SIDE, room, thing
from PIL import Image
from shapely.geometry import Point, Polygon, box

from pipeline.errors import RoomspaceError
from pipeline.render.door import MIN_VISIBLE_PX, south_door_frame, south_door_image
from pipeline.render.job import offline_images
from pipeline.render.plan import plan_frame, top_down_image
from pipeline.render.png import LabelPlace, image_labels, label_places, png_bytes
from pipeline.render.style import colour
from pipeline.scene.records import Scene
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.scene.scene_folder import sample_scenes
from pipeline.text.configs import Config
from pipeline.text.items import room_items
from pipeline.text.pictured import story_labels
from pipeline.text.words import object_labels

ROOMSPACE_100 = (0, 100)  # seed, rooms
VISION_BASE = Config(5, 4, 12)  # `make roomspace-100`'s vision configuration is vision_n5_m4_d144


def decoded(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def assert_legible(png: bytes, expected: dict[str, str], points_at) -> None:
    """The labels are `expected` ({object id: label}); their boxes are drawn, disjoint and inside the
    image; `points_at(object id, place)` holds for each."""
    labels, places = image_labels(png), label_places(png)
    assert labels == expected and set(places) == set(labels)
    pixels = decoded(png)
    height, width = pixels.shape[:2]
    border = np.array(colour("label_border"), dtype=np.uint8)
    for object_id, place in places.items():
        x0, y0, x1, y1 = place.box
        assert 0 <= x0 < x1 < width and 0 <= y0 < y1 < height, (object_id, place.box)
        # the box is drawn where recorded, and nothing drawn later crosses its outline
        outline = np.concatenate([pixels[y0, x0 : x1 + 1], pixels[y1, x0 : x1 + 1], pixels[y0 : y1 + 1, x0], pixels[y0 : y1 + 1, x1]])
        assert (outline == border).all(), object_id
        assert points_at(object_id, place), (object_id, place)
    for (a, pa), (b, pb) in combinations(places.items(), 2):
        apart = pa.box[2] < pb.box[0] or pb.box[2] < pa.box[0] or pa.box[3] < pb.box[1] or pb.box[3] < pa.box[1]
        assert apart, (a, pa.box, b, pb.box)


def check_top_down(scene: Scene, png: bytes, names: dict[str, str]) -> None:
    """Every prominent object is labelled, on its footprint or with a dot on its footprint."""
    frame = plan_frame(scene)
    shapes = {o.id: Polygon([frame.pixel(x, z) for x, z in o.footprint]).buffer(1.5) for o in scene.objects}
    # a wall-hung object is drawn as a bar five pixels thick around its footprint
    shapes.update({o.id: shapes[o.id].buffer(2.5) for o in scene.objects if o.wall_hung})

    def points_at(object_id: str, place: LabelPlace) -> bool:
        if place.dot is None:
            return shapes[object_id].contains(box(*place.box))
        return shapes[object_id].contains(Point(place.dot))

    assert_legible(png, names, points_at)


def check_south_door(scene: Scene, house: dict, png: bytes, names: dict[str, str]) -> None:
    """Every prominent object with enough visible pixels is labelled, on its pixels or with a dot on one."""
    owner = south_door_frame(scene, house).object_of_pixel
    index = {o.id: k for k, o in enumerate(scene.objects)}
    shown = np.bincount(owner[owner >= 0], minlength=len(scene.objects))
    visible = {o.id for k, o in enumerate(scene.objects) if o.prominent and shown[k] >= MIN_VISIBLE_PX}

    def points_at(object_id: str, place: LabelPlace) -> bool:
        if place.dot is None:
            x0, y0, x1, y1 = place.box
            return bool((owner[y0 : y1 + 1, x0 : x1 + 1] == index[object_id]).all())
        return owner[place.dot[1], place.dot[0]] == index[object_id]

    assert_legible(png, {i: names[i] for i in visible}, points_at)


def check_room(scene: Scene, house: dict, names: dict[str, str] | None = None, grid: int | None = None) -> None:
    images = offline_images(scene, house, grid, names)
    expected = names or object_labels(scene.prominent)
    check_top_down(scene, images["top_down"], expected)
    check_south_door(scene, house, images["south_door"], expected)


# --------------------------------------------------------------------------- ProcTHOR rooms


@pytest.mark.parametrize("index", range(SCENE_COUNT))
def test_labels_of_sampled_rooms_are_legible_and_point_at_their_objects(scenes, index):
    path = scene_path(scenes, SCENE_SEED, index)
    scene, house = load_scene(path), load_house(path)
    check_room(scene, house)
    # the caller's names, whatever they are: here each object gets another's default label
    defaults = object_labels(scene.prominent)
    ids = sorted(defaults)
    check_room(scene, house, {i: defaults[j] for i, j in zip(ids, ids[1:] + ids[:1])}, grid=12)


@pytest.mark.slow
def test_labels_of_roomspace_100_are_legible_and_point_at_their_objects(tmp_path):
    seed, rooms = ROOMSPACE_100
    sample_scenes(count=rooms, seed=seed, out=tmp_path, progress=False, workers=2)
    for index in range(rooms):
        path = scene_path(tmp_path, seed, index)
        scene = load_scene(path)
        items = room_items(scene, VISION_BASE)  # as `make roomspace-100` draws its vision images: the stories' names
        check_room(scene, load_house(path), story_labels(scene, items) if items else None)


# --------------------------------------------------------------------------- made-up rooms


TYPES = ("Chair", "SideTable", "Painting", "HousePlant", "GarbageCan", "LaundryHamper", "ShelvingUnit")


def crowded_room(rows: int) -> tuple[Scene, dict]:
    """rows x rows small objects packed over the floor, and paintings along the north wall."""
    step = SIDE / rows
    things = [thing(k, TYPES[k % len(TYPES)], step * (k % rows + 0.5), step * (k // rows + 0.5), 0.3, 0.3,
                    height=0.3 + 0.1 * (k % 5)) for k in range(rows * rows)]
    things += [thing(rows * rows + k, "Painting", 0.4 + 0.6 * k, SIDE - 0.01, 0.5, 0.02, height=0.5, bottom=1.4,
                     wall_hung=True) for k in range(8)]
    return room(*things)


@pytest.mark.parametrize("rows", [5, 6])
def test_labels_in_crowded_rooms_still_fit(rows):
    scene, house = crowded_room(rows)
    check_room(scene, house)


def test_labels_shrink_rather_than_overlap():
    scene, house = crowded_room(7)  # 55 objects seen from the door: too many for the style's font size
    image, labels, places = south_door_image(scene, house)
    _, _, roomy = south_door_image(*crowded_room(5))
    assert max(p.box[3] - p.box[1] for p in places.values()) < min(p.box[3] - p.box[1] for p in roomy.values())
    check_south_door(scene, house, png_bytes(image, "test", labels, places), object_labels(scene.prominent))


def test_names_must_name_exactly_the_prominent_objects():
    scene, house = room(thing(0, "Bed", 1.0, 1.0, 1.0, 1.0), thing(1, "Sofa", 4.0, 4.0, 1.0, 0.6))
    with pytest.raises(RoomspaceError, match=r"missing \['obj\|1'\], unknown \[\]"):
        offline_images(scene, house, names={"obj|0": "bed"})
    with pytest.raises(RoomspaceError, match=r"unknown \['obj\|9'\]"):
        offline_images(scene, house, names={"obj|0": "bed", "obj|1": "sofa", "obj|9": "lamp"})


# --------------------------------------------------------------------------- palette PNGs


def test_offline_images_are_palette_pngs_with_the_same_pixels(scenes):
    path = scene_path(scenes, SCENE_SEED, 0)
    scene, house = load_scene(path), load_house(path)
    for image, labels, places in (top_down_image(scene, grid=12), south_door_image(scene, house)):
        png = png_bytes(image, "test", labels, places)
        assert Image.open(io.BytesIO(png)).mode == "P"
        assert (decoded(png) == np.asarray(image)).all()


def test_images_of_many_colours_stay_rgb_and_lossless():
    noise = np.random.default_rng(0).integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
    png = png_bytes(Image.fromarray(noise, "RGB"), "test")
    assert Image.open(io.BytesIO(png)).mode == "RGB"
    assert (decoded(png) == noise).all()
