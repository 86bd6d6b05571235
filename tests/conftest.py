"""Fixtures shared by every test folder: ProcTHOR rooms are sampled once per test run."""

import fcntl
import shutil
from pathlib import Path

import pytest
from background import JOBS, BackgroundJob

from pipeline.dataset.build import BuildPlan, build
from pipeline.scene.scene_file import scene_path
from pipeline.scene.scene_folder import sample_scenes
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

SCENE_SEED = 45  # houses 0..3 are a Kitchen, a Bathroom, a LivingRoom and a Bedroom
SCENE_COUNT = 9
ROOMSPACE_100 = (0, 100)  # seed, houses: `make roomspace-100`'s rooms, read by the slow tests of every room of it
BACKGROUND_JOBS = pytest.StashKey[dict[str, BackgroundJob]]()


# The test files of the most seconds (CPU, measured with issue 47's `make test`), run first so that no long one
# is left to one worker at the end (`make test` runs pytest-xdist in collection order, --no-loadscope-reorder);
# the files waiting for a background job run last, which gives the job the whole run.
SLOWEST_FILES = ("dataset/test_reliability.py", "spatial/test_checker.py", "evaluate/test_inspect.py",
                 "render/test_labels.py", "evaluate/test_score.py", "scene/test_determinism.py",
                 "evaluate/test_plots.py", "spatial/test_ladder.py", "dataset/test_pictured_build.py",
                 "environment/test_environment_items.py", "dataset/test_image_storage.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test file's tests together in their order: SLOWEST_FILES first, in theirs, the files waiting for a
    background job last."""
    tests = Path(__file__).parent
    waiting = {item.path for item in items if any(fixture in JOBS for fixture in item.fixturenames)}

    def rank(item: pytest.Item) -> tuple[bool, int]:
        name = item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else ""
        return item.path in waiting, SLOWEST_FILES.index(name) if name in SLOWEST_FILES else len(SLOWEST_FILES)

    items.sort(key=rank)


def shared_folder(config: pytest.Config) -> Path:
    """pytest's base folder of the run, which holds the folders of its pytest-xdist workers."""
    base = config._tmp_path_factory.getbasetemp()
    return base.parent if hasattr(config, "workerinput") else base


def pytest_collection_finish(session: pytest.Session) -> None:
    """The background jobs (tests/background.py) of the fixtures the collected tests ask for, started now by
    the first pytest-xdist worker (`make test` runs two, each collecting every test), or the only process."""
    asked = sorted({name for item in session.items for name in item.fixturenames if name in JOBS})
    jobs = {name: BackgroundJob.of(name, shared_folder(session.config)) for name in asked}
    if getattr(session.config, "workerinput", {}).get("workerid", "gw0") == "gw0":
        for job in jobs.values():
            job.start()
    session.config.stash[BACKGROUND_JOBS] = jobs


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker waits for the deletions it started; the run's own process (the only one, or pytest-xdist's
    controller, which ends after its workers) stops the jobs still running and deletes what is left."""
    if hasattr(session.config, "workerinput"):
        for job in session.config.stash.get(BACKGROUND_JOBS, {}).values():
            if job.removal is not None:
                job.close()
        return
    for fixture in JOBS:
        job = BackgroundJob.of(fixture, shared_folder(session.config))
        if job.folder.exists():
            job.close()


def made_in_background(request: pytest.FixtureRequest):
    """The folder of the background job of the fixture asking, once made; deleted after its module."""
    job = request.config.stash[BACKGROUND_JOBS][request.fixturename]
    yield job.ready()
    job.remove()


@pytest.fixture(scope="module")
def wheel_envs(request: pytest.FixtureRequest) -> Path:
    """tests/wheel_envs.py's folder: the wheel, and fresh environments holding it, light and whole."""
    yield from made_in_background(request)


@pytest.fixture(scope="module")
def stock_houses(request: pytest.FixtureRequest) -> Path:
    """tests/stock_houses.py's folder: houses sampled with stock ProcTHOR."""
    yield from made_in_background(request)


def made_once(request: pytest.FixtureRequest, name: str, make) -> Path:
    """The folder `name` of the run's shared folder, made by `make(folder)` once for the whole run: by the
    first pytest-xdist worker to ask, the other waiting for it (a lock beside it), not by each."""
    folder = shared_folder(request.config) / name
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = folder.with_suffix(".made")
        if not made.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed making it left
            folder.mkdir()
            make(folder)
            made.touch()
    return folder


@pytest.fixture(scope="session")
def scenes(request) -> Path:
    """Houses 0..SCENE_COUNT-1 of SCENE_SEED, sampled once; tests only read them."""
    return made_once(request, "scenes", lambda out: sample_scenes(count=SCENE_COUNT, seed=SCENE_SEED, out=out,
                                                                   progress=False, workers=2))


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


# Every kind a build writes, of every family it has: rooms 0-4 of SCENE_SEED (room 4 has eight prominent
# objects, so the hard configurations have questions), n3_m2_d81, its balanced counterpart and the hard
# configuration of its grid. Read by the environment's tests (tests/environment).
EVERY_KIND_ROOMS = 5
EVERY_KIND_FAMILIES = (Config(3, 2, 9), Config(3, 2, 9, balanced=True), Config(3, 2, 9).as_hard())


def kind_configs(kind) -> list[Config]:
    """The configurations of EVERY_KIND_FAMILIES this kind has."""
    return [c for c in EVERY_KIND_FAMILIES if (not c.balanced or kind.balanced) and (not c.hard or kind.hard)]


@pytest.fixture(scope="session")
def every_kind(scenes, request) -> tuple[Path, Path]:
    """(a build of every kind, its scene folder), built once; tests only read them."""

    def make(folder: Path) -> None:
        out, linked = folder / "every-kind", folder / "scenes"
        linked.mkdir()
        added = {kind.name: kind_configs(kind) for kind in KINDS.values() if kind.option}
        plan = BuildPlan.asked(out.name, SCENE_SEED, EVERY_KIND_ROOMS, kind_configs(KINDS["base"]), added)
        build(plan, linked_scenes(scenes, linked), out, workers=2, progress=False)

    folder = made_once(request, "every-kind", make)
    return folder / "every-kind", folder / "scenes"
