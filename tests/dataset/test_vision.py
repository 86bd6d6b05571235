"""Vision rows: images labelled with the stories' names; image+story rows keep the checker's
answers; pair questions, asked as image, text and image+text, answer what the scene shows."""

from __future__ import annotations

import dataclasses
import io
import re
from collections import Counter, defaultdict

import numpy as np
import pyarrow.parquet as pq
import pytest
from datasets import Dataset
from handmade import SIDE, room, thing
from PIL import Image

from pipeline.dataset.rows import check_row, features_of_config, records_table, row_json, write_parquet
from pipeline.dataset.layout import questions
from pipeline.dataset.vision import stored_rows, vision_questions, vision_rows
from pipeline.errors import RoomspaceError
from pipeline.render.door import south_door_sightings
from pipeline.render.job import offline_images
from pipeline.render.png import image_labels
from pipeline.spatial.relations import direction_of_points
from pipeline.text.configs import Config
from pipeline.text.items import room_items
from pipeline.text.pictured import (IN_LINE, MARKED, MARKER_LETTERS, PAIRS_PER_VIEW, Picture, _letters, clear_pairs,
                                    markers, story_labels)
from pipeline.text.prompts import PAIR_MODALITIES, row_prompt

CONFIG = Config(5, 4, 12)
# Five types, each once, centres well apart on both axes, all low enough to be seen from the door.
LAYOUT = [("Bed", 1.0, 4.3), ("Sofa", 4.4, 4.0), ("Desk", 2.6, 2.7), ("Dresser", 0.9, 1.2), ("Toilet", 4.2, 1.4)]
CENTRE = re.compile(r"(?:The centre of (?P<a>.+) is at|(?P<b>.+) has its centre at) \((?P<x>[-\d.]+), (?P<y>[-\d.]+)\)\.")


def layout_room(layout=LAYOUT, **kwargs):
    return room(*(thing(k, kind, x, z, 0.7, 0.6, height=kwargs.get("height", 0.5))
                  for k, (kind, x, z) in enumerate(layout)))


def rows_of(scene, house, config=CONFIG):
    """(items, images, questions): the questions of the room's vision rows, each with the image it is sent with."""
    items = room_items(scene, config)
    images = offline_images(scene, house, names=story_labels(scene, items))
    return items, images, vision_questions(vision_rows(scene, items, images, south_door_sightings(scene, house)))


@pytest.fixture(scope="module")
def made():
    scene, house = layout_room()
    return (scene, house, *rows_of(scene, house))


def stated_centres(story: str) -> dict[str, tuple[float, float]]:
    found = {}
    for match in filter(None, map(CENTRE.fullmatch, re.split(r"(?<=\.) ", story))):
        name = (match["a"] or match["b"]).removeprefix("the ").removeprefix("The ")
        found[name[0].lower() + name[1:]] = (float(match["x"]), float(match["y"]))
    return found


def test_images_carry_the_stories_names(made):
    scene, _, items, images, rows = made
    names = story_labels(scene, items)
    assert {o.name for o in items[0].objects} <= set(names.values())
    assert image_labels(images["top_down"]) == names  # every prominent object, as the stories name them
    assert image_labels(images["south_door"]).items() <= names.items()


def test_every_item_gets_an_image_and_keeps_its_answers(made):
    _, _, items, images, rows = made
    story_rows = [r for r in rows if r["modality"] == "image+story"]
    assert len(story_rows) == len(items)  # every object of LAYOUT is seen from the door
    by_id = {item.id.replace(item.config, f"vision_{item.config}"): item for item in items}
    for row in story_rows:
        item = by_id[row["id"]]
        assert row["config"] == "vision_n5_m4_d144" and row["pair"] is None
        assert (row["story"], row["answer"], row["answer_set"]) == (item.story, item.answer, list(item.answer_set))
        expected = "top_down" if item.view == "top_down" else "south_door"
        assert row["image_name"] == expected and row["image"]["bytes"] == images[expected]
    assert len({r["id"] for r in rows}) == len(rows)


def test_pair_questions_are_asked_three_ways_with_one_answer(made):
    scene, _, _, images, rows = made
    asked = defaultdict(dict)
    for row in rows:
        if row["modality"] != "image+story":
            check_row(row)
            asked[row["view"], row["pair"], row["question_type"]][row["modality"]] = row
    views = Counter(view for view, _, _ in asked)
    assert views == {"top_down": 2 * PAIRS_PER_VIEW, "north_facing": 2 * PAIRS_PER_VIEW}  # of 9 clear pairs each
    centres = {o.id: (o.x, o.z) for o in scene.prominent}
    names = image_labels(images["top_down"])
    by_name = {names[i]: centres[i] for i in names}
    for (view, _, question_type), three in asked.items():
        assert set(three) == set(PAIR_MODALITIES)
        same = {(r["question"], r["answer"], tuple(r["answer_set"]), r["candidate"], tuple(r["options"]))
                for r in three.values()}
        assert len(same) == 1
        row = three["image"]
        truth = direction_of_points(by_name[row["query"]["subject"]], by_name[row["query"]["object"]])
        assert row["answer_set"] == [truth] == [row["continuous_relation"]] == [row["true_relation"]]
        if question_type == "YN":
            assert row["answer"] == ("Yes" if row["candidate"] == truth else "No")
        # the image rows carry the view's image; the text row none, its story the centres instead
        image_name = "top_down" if view == "top_down" else "south_door"
        assert three["image"]["image"]["bytes"] == three["image+text"]["image"]["bytes"] == images[image_name]
        assert three["text"]["image"] is None
        assert three["text"]["story"] == three["image+text"]["story"] != row["story"]
        assert three["image"]["setting"] == "none" and three["text"]["setting"] == "centres"
        stated = stated_centres(three["text"]["story"])
        assert set(stated) == set(image_labels(images[image_name]).values())  # what the image labels
        assert direction_of_points(stated[row["query"]["subject"]], stated[row["query"]["object"]]) == truth
        assert len({r["prompt"] for r in three.values()}) == 3


def test_yes_and_no_are_balanced_per_view(made):
    *_, rows = made
    for view in ("top_down", "north_facing"):
        yn = [r for r in rows if r["modality"] == "image" and r["view"] == view and r["question_type"] == "YN"]
        assert Counter(r["answer"] for r in yn) == {"Yes": PAIRS_PER_VIEW // 2, "No": PAIRS_PER_VIEW // 2}


def test_a_question_per_row_each_png_stored_once(made, tmp_path):
    scene, house, items, images, asked = made
    by_image = vision_rows(scene, items, images, south_door_sightings(scene, house))
    ids = {name: f"{scene.room_id}-vision_n5_m4_d144-{name}" for name in ("top_down", "south_door")}
    assert [(i.id, i.image_name, i.image) for i in by_image] == [(ids[name], name, images[name]) for name in ids]
    stored = stored_rows(by_image)
    assert [row_json(row) for row in stored] == asked and len(asked) == sum(len(i.items) for i in by_image)
    for row in asked:  # every question names its image, and carries it unless it is asked without it
        assert row["image_id"] == ids[row["image_name"]]
        png = {"bytes": images[row["image_name"]], "path": f"{scene.room_id}/{row['image_name']}.png"}
        assert row["image"] == (None if row["modality"] == "text" else png)
    path = tmp_path / "vision.parquet"
    write_parquet(records_table(stored, "vision_n5_m4_d144"), path)
    (read,) = questions(pq.ParquetFile(path))
    assert read.to_pylist() == asked
    # each PNG once in the file: the image column holds the two PNGs and an index per question
    group = pq.ParquetFile(path).metadata.row_group(0)
    chunk = next(group.column(k) for k in range(group.num_columns) if group.column(k).path_in_schema == "image.bytes")
    assert chunk.total_uncompressed_size < len(images["top_down"]) + len(images["south_door"]) + 8 * len(asked) + 200

    loaded = Dataset.from_parquet(str(path), cache_dir=str(tmp_path / "cache"))  # as load_dataset reads a config
    assert loaded.features == features_of_config("vision_n5_m4_d144") and len(loaded) == len(asked)
    for row, question in zip(loaded, asked):
        if question["image"] is None:
            assert row["image"] is None
            continue
        original = Image.open(io.BytesIO(question["image"]["bytes"]))
        assert isinstance(row["image"], Image.Image)  # decoded by datasets.Image()
        assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(original.convert("RGB")))


def test_repeated_types_are_numbered_so_every_pair_can_be_asked():
    scene, house = room(*(thing(k, "Chair", x, z, 0.5, 0.5, height=0.5) for k, (_, x, z) in enumerate(LAYOUT)))
    items, images, rows = rows_of(scene, house)
    labels = image_labels(images["top_down"])
    assert sorted(labels.values()) == [f"chair {k}" for k in range(1, 6)]
    assert sum(r["modality"] == "image" for r in rows) == 2 * 2 * PAIRS_PER_VIEW


def test_no_pair_question_hangs_on_a_few_centimetres():
    moved = [*LAYOUT[:4], ("Toilet", LAYOUT[3][1] + 0.05, 1.4)]  # 5 cm east of the dresser: not for an image
    scene, house = layout_room(moved)
    *_, rows = rows_of(scene, house)
    pairs = {frozenset(r["query"].values()) for r in rows if r["modality"] == "image"}
    assert pairs and frozenset({"dresser", "toilet"}) not in pairs
    cell = scene.side / CONFIG.d
    for row in rows:
        if row["modality"] == "image" and row["view"] == "top_down":
            a, b = (next(o for o in scene.prominent if o.type.lower() == row["query"][k]) for k in ("subject", "object"))
            assert all(d < 1e-6 or d >= cell for d in (abs(a.x - b.x), abs(a.z - b.z)))


def test_a_pair_the_door_view_shows_the_other_way_round_is_not_asked_from_the_door():
    """The bed is west of the sofa on the plan, but from the door, far beyond the near sofa, it
    appears to the sofa's right: asked about on the plan, never from the door."""
    layout = [("Bed", 0.5, 4.9), ("Sofa", 1.1, 0.5), ("Desk", 4.4, 2.7), ("Dresser", 3.0, 4.4), ("Toilet", 4.5, 0.8)]
    scene, house = layout_room(layout)
    camera, seen = south_door_sightings(scene, house)
    bed, sofa = scene.prominent[:2]
    assert bed.x < sofa.x and seen[bed.id].bearing > seen[sofa.id].bearing
    names = {o.id: o.type.lower() for o in scene.prominent}
    plan = clear_pairs(scene, Picture("top_down", names), CONFIG.d)
    door = clear_pairs(scene, Picture("south_door", names, camera, seen), CONFIG.d)
    assert plan[bed, sofa] == "NW" and (bed, sofa) not in door
    *_, rows = rows_of(scene, house)
    assert all({"bed", "sofa"} != set(r["query"].values()) for r in rows if r["view"] == "north_facing" and r["pair"] is not None)


def test_balanced_pictures_read_one_object_straight_behind_another():
    """From the door the bed stands straight behind the desk, both on the camera's column and over a
    cell apart ahead: the balanced configurations read the pair in line (bearings less than IN_LINE
    apart) and ask it, north, first among the door view's FR questions (a straight pair); the paper's
    never read an alignment across a perspective picture. Moved 20 cm east the bed is still nearly in
    line but not straight north of the desk: asked by neither."""
    layout = [("Bed", SIDE / 2, 4.3), ("Sofa", 0.8, 4.0), ("Desk", SIDE / 2, 2.2), ("Dresser", 0.9, 1.2),
              ("Toilet", 4.4, 1.3)]
    for east, shown in ((0.0, "N"), (0.2, None)):
        scene, house = layout_room([("Bed", SIDE / 2 + east, 4.3), *layout[1:]])
        camera, seen = south_door_sightings(scene, house)
        bed, desk = scene.prominent[0], scene.prominent[2]
        assert abs(seen[bed.id].bearing - seen[desk.id].bearing) < IN_LINE
        picture = Picture("south_door", {o.id: o.type.lower() for o in scene.prominent}, camera, seen)
        assert (bed, desk) not in clear_pairs(scene, picture, CONFIG.d)
        assert clear_pairs(scene, picture, CONFIG.d, in_line=True).get((bed, desk)) == shown
    scene, house = layout_room(layout)
    items = room_items(scene, CONFIG.as_balanced())
    images = offline_images(scene, house, names=story_labels(scene, items))
    marks = markers(scene)
    marked = offline_images(scene, house, names=marks)
    rows = vision_questions(vision_rows(scene, items, images, south_door_sightings(scene, house), marked))
    door_fr = sorted((r for r in rows if r["view"] == "north_facing" and r["modality"] == "image"
                      and r["question_type"] == "FR"), key=lambda r: r["pair"])
    bed, desk = marks[scene.prominent[0].id], marks[scene.prominent[2].id]
    assert {door_fr[0]["query"]["subject"], door_fr[0]["query"]["object"]} == {bed, desk}
    assert door_fr[0]["answer_set"] == (["N"] if door_fr[0]["query"]["subject"] == bed else ["S"])
    assert door_fr[0]["image_name"] == MARKED + "south_door"
    # its prompt says the picture marks objects by letters, made again from the row as the harnesses make it
    assert "marked with a letter" in door_fr[0]["prompt"] and "with its name" not in door_fr[0]["prompt"]
    assert row_prompt(door_fr[0]) == door_fr[0]["prompt"]


def test_an_object_the_view_hides_is_not_asked_about_in_that_view():
    near = thing(0, "Dresser", 2.7, 1.2, 2.4, 0.5, height=2.2)  # hides the low bed behind it from the door
    things = [near, thing(1, "Bed", 2.7, 2.2, 0.6, 0.4, height=0.3), thing(2, "Sofa", 0.8, 4.4, 0.9, 0.6),
              thing(3, "Desk", 4.6, 4.2, 0.7, 0.6), thing(4, "Toilet", 4.6, 0.6, 0.5, 0.5)]
    scene, house = room(*things)
    items, images, rows = rows_of(scene, house, Config(5, 4, 9))
    assert "bed" in image_labels(images["top_down"]).values()
    assert "bed" not in image_labels(images["south_door"]).values()
    for row in rows:
        if row["view"] == "north_facing":
            assert "bed" not in row["query"].values(), row["id"]
    door_items = [i for i in items if i.view == "north_facing" and "bed" not in i.query.pair]
    assert sum(r["modality"] == "image+story" and r["view"] == "north_facing" for r in rows) == len(door_items)


def test_images_without_labels_give_story_rows_only(made):
    scene, house, items, images, _ = made
    bare = {}
    for name, png in images.items():  # as AI2-THOR's images: pixels, no record of what is labelled
        buffer = io.BytesIO()
        Image.open(io.BytesIO(png)).save(buffer, "PNG")
        bare[name] = buffer.getvalue()
        assert image_labels(bare[name]) is None
    door = south_door_sightings(scene, house)
    assert {r["modality"] for r in vision_questions(vision_rows(scene, items, bare, door))} == {"image+story"}


def test_same_room_same_rows(made):
    scene, house, items, images, rows = made
    assert vision_questions(vision_rows(scene, items, images, south_door_sightings(scene, house))) == rows


def test_bad_input(made):
    scene, house, items, images, _ = made
    door = south_door_sightings(scene, house)
    with pytest.raises(RoomspaceError, match="no south_door image"):
        vision_rows(scene, items, {"top_down": images["top_down"]}, door)
    with pytest.raises(RoomspaceError, match="not an image"):
        vision_rows(scene, items, {"top_down": b"junk", "south_door": images["south_door"]}, door)
    assert vision_rows(scene, (), images, door) == []


def test_markers_give_every_prominent_object_its_own_letter_drawn_from_the_room():
    scene, _ = layout_room()
    marks = markers(scene)
    assert sorted(marks) == sorted(o.id for o in scene.prominent) and markers(scene) == marks
    assert sorted(marks.values()) == sorted(MARKER_LETTERS[:len(scene.prominent)])
    # N is left out, so that no letter reads as the plan compass's N
    assert [_letters(k) for k in (0, 12, 13, 24, 25, 26, 49, 50, 649, 650)] == [
        "A", "M", "O", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
    assert not any("N" in _letters(k) for k in range(2000))
