"""Labels on the offline images, read back from the PNG bytes: the caller's names, never overlapping,
inside the frame, each on its object or joined to it by a leader; and the palette PNGs are lossless."""

from __future__ import annotations

import io
from itertools import combinations

import numpy as np
import pytest
from conftest import ROOMSPACE_100, SCENE_COUNT, SCENE_SEED
from handmade import SIDE, room, thing
from PIL import Image
from shapely.geometry import Point, Polygon, box

from pipeline.errors import RoomspaceError
from pipeline.render.door import MIN_VISIBLE_PX, south_door_frame, south_door_image
from pipeline.render.labels import LABEL_PAD, label_font_px, text_height
from pipeline.render.job import offline_images
from pipeline.render.plan import plan_frame, top_down_image
from pipeline.render.png import LabelPlace, image_labels, label_places, png_bytes
from pipeline.render.style import colour, style
from pipeline.scene.records import Scene
from pipeline.scene.scene_file import load_house, load_scene, scene_path
from pipeline.text.configs import Config
from pipeline.text.items import room_items
from pipeline.text.pictured import story_labels
from pipeline.text.words import object_labels, type_words

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

    assert_legible(png, {i: names[i] for i in visible if i in names}, points_at)  # named and seen


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
def test_labels_of_roomspace_100_are_legible_and_point_at_their_objects(roomspace_100_scenes):
    seed, rooms = ROOMSPACE_100
    for index in range(rooms):
        path = scene_path(roomspace_100_scenes, seed, index)
        scene = load_scene(path)
        items = room_items(scene, VISION_BASE)  # as `make roomspace-100` draws its vision images: the stories' names
        names = story_labels(scene, items) if items else None
        check_room(scene, load_house(path), names)
        assert_numbered_1_to_k(scene, names or object_labels(scene.prominent))


# --------------------------------------------------------------------------- numbering


def assert_numbered_1_to_k(scene: Scene, labels: dict[str, str]) -> None:
    """Every prominent object is labelled, and the labels of each type are its bare words alone, its
    words numbered 1 to k, or its bare words beside "other <words>" (numbered 1 to k - 1 if several)."""
    assert set(labels) == {o.id for o in scene.prominent}
    by_word: dict[str, list[str]] = {}
    for obj in scene.prominent:
        by_word.setdefault(type_words(obj.type), []).append(labels[obj.id])
    for word, names in by_word.items():
        k = len(names)
        others = [f"other {word}"] if k == 2 else [f"other {word} {j}" for j in range(1, k)]
        assert sorted(names) in ([word], sorted(f"{word} {j}" for j in range(1, k + 1)),
                                 sorted([word, *others])), (word, names)


@pytest.mark.parametrize("index", range(SCENE_COUNT))
def test_story_labels_number_each_type_1_to_k(scenes, index):
    path = scene_path(scenes, SCENE_SEED, index)
    scene = load_scene(path)
    assert_numbered_1_to_k(scene, object_labels(scene.prominent))
    items = room_items(scene, VISION_BASE)
    if items:
        labels = story_labels(scene, items)
        assert_numbered_1_to_k(scene, labels)
        assert {labels[i] for i in labels} >= {o.name for o in items[0].objects}  # the stories' names, exactly


def test_a_type_the_story_names_bare_labels_the_others_as_other_ones():
    paintings = [thing(k, "Painting", 1.0 + k, 5.39, 0.6, 0.02, wall_hung=True) for k in range(3)]
    chairs = [thing(3 + k, "Chair", 1.0 + k, 2.0, 0.4, 0.4) for k in range(3)]
    scene, _ = room(*paintings, *chairs, thing(6, "Bed", 4.0, 4.0, 1.0, 1.5))
    # the story tells of one painting ("the painting") and two chairs ("chair 1", "chair 2")
    labels = object_labels(scene.prominent, {"obj|1": "painting", "obj|5": "chair 1", "obj|3": "chair 2"})
    assert labels == {"obj|0": "other painting 1", "obj|1": "painting", "obj|2": "other painting 2", "obj|3": "chair 2",
                      "obj|4": "chair 3", "obj|5": "chair 1", "obj|6": "bed"}
    # one other: "other painting", unnumbered
    assert object_labels(scene.prominent[1:], {"obj|1": "painting"})["obj|2"] == "other painting"
    assert_numbered_1_to_k(scene, labels)
    assert object_labels(scene.prominent) == {"obj|0": "painting 1", "obj|1": "painting 2", "obj|2": "painting 3",
                                              "obj|3": "chair 1", "obj|4": "chair 2", "obj|5": "chair 3", "obj|6": "bed"}


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


def test_labels_in_crowded_rooms_still_fit():
    scene, house = crowded_room(5)  # 33 labels: twice as many as any of 1,015 sampled rooms has objects
    check_room(scene, house)


def test_labels_shrink_rather_than_overlap_and_never_below_legible():
    scene, house = crowded_room(5)
    image, labels, places = south_door_image(scene, house)
    heights = {p.box[3] - p.box[1] - 2 * LABEL_PAD for p in places.values()}  # every box is a text line high
    assert len(heights) == 1
    # this crowd's labels fit only at a smaller font than the image's own, and not below the legible one
    least, largest = (text_height(label_font_px(*image.size, size)) for size in ("fewest_text_px", "text_px"))
    assert least <= heights.pop() < largest
    check_south_door(scene, house, png_bytes(image, "test", labels, places), object_labels(scene.prominent))
    with pytest.raises(RoomspaceError, match=r"^scene s7-000000 south_door: no room for 56 labels at \d+ px or more$"):
        south_door_image(*crowded_room(7))  # where legible labels cannot all fit, an error, not a cluttered image


def test_labels_are_legible_after_a_downscale_to_448_pixels(scenes):
    """Every label's box holds a text line text_px high once the image's longer side is shrunk to
    448 (fewest_text_px where the labels would not all fit at that size)."""
    spec = style()["labels"]
    for index in range(3):
        path = scene_path(scenes, SCENE_SEED, index)
        scene, house = load_scene(path), load_house(path)
        for image, _, places in (top_down_image(scene), south_door_image(scene, house)):
            shrink = spec["downscaled_to"] / max(image.size)
            assert text_height(label_font_px(*image.size)) * shrink >= spec["text_px"]
            line = {place.box[3] - place.box[1] - 2 * LABEL_PAD for place in places.values()}
            assert len(line) == 1 and line.pop() * shrink >= spec["fewest_text_px"]


def test_labels_name_only_prominent_objects_and_leave_out_the_unnamed():
    scene, house = room(thing(0, "Bed", 1.0, 1.0, 1.0, 1.0), thing(1, "Sofa", 4.0, 4.0, 1.0, 0.6))
    for png in offline_images(scene, house, names={"obj|0": "bed"}).values():
        assert image_labels(png) == {"obj|0": "bed"}  # the sofa is drawn, unlabelled
    with pytest.raises(RoomspaceError, match=r"prominent objects only \(unknown \['obj\|9'\]\)"):
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
