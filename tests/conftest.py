"""Fixtures shared by every test folder: ProcTHOR rooms are sampled once per test run."""

from pathlib import Path

import pytest

from pipeline.scene.scene_file import scene_path
from pipeline.scene.scene_folder import sample_scenes

SCENE_SEED = 45  # houses 0..3 are a Kitchen, a Bathroom, a LivingRoom and a Bedroom
SCENE_COUNT = 9
ROOMSPACE_100 = (0, 100)  # seed, houses: `make roomspace-100`'s rooms, read by the slow tests of every room of it


@pytest.fixture(scope="session")
def scenes(tmp_path_factory) -> Path:
    """Houses 0..SCENE_COUNT-1 of SCENE_SEED, sampled once; tests only read them."""
    out = tmp_path_factory.mktemp("scenes")
    sample_scenes(count=SCENE_COUNT, seed=SCENE_SEED, out=out, progress=False, workers=2)
    return out


@pytest.fixture(scope="session")
def roomspace_100_scenes(tmp_path_factory) -> Path:
    """Houses 0..99 of seed 0, as `make roomspace-100` samples them, sampled once for the slow tests that
    read them all (labels, pictured questions); tests only read them."""
    seed, count = ROOMSPACE_100
    out = tmp_path_factory.mktemp("roomspace-100-scenes")
    sample_scenes(count=count, seed=seed, out=out, progress=False, workers=2)
    return out


def linked_scenes(scenes: Path, folder: Path) -> Path:
    """`folder` holding links to the shared houses, so that a build sampling more (training houses)
    writes them there, never into the shared folder other tests read."""
    for index in range(SCENE_COUNT):
        (folder / scene_path(scenes, SCENE_SEED, index).name).symlink_to(scene_path(scenes, SCENE_SEED, index))
    return folder
