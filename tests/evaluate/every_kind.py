"""One small build holding every configuration kind of the registry, paper and balanced, made once per
test run and read by the harness tests (lm-eval, lmms-eval, inspect): a kind added to the registry is
in it, and so in every harness test, with no edit here."""

from pathlib import Path

from conftest import SCENE_SEED, made_once

from pipeline.dataset.build import BuildPlan, build
from pipeline.text.configs import parse_configs
from pipeline.evaluate.rows import open_rows
from pipeline.text.kinds import KINDS, added_kinds, kind_of

BASE = "n3_m2_d81"
ROOMS = 2


def every_kind(scenes: Path, request) -> Path:
    """The build (test split, ROOMS rooms) of BASE in every kind, and its balanced counterpart in every kind
    that has one (`build --balanced`): made once for the whole run (conftest.made_once)."""
    paper, balanced = parse_configs(f"{BASE},{BASE}_balanced")

    def make(folder: Path) -> None:
        out = folder / "roomspace-every-kind"
        plan = BuildPlan.asked(out.name, SCENE_SEED, ROOMS, (paper, balanced),
                               {kind.name: (paper, balanced) if kind.balanced else (paper,) for kind in added_kinds()})
        build(plan, scenes, out, workers=1, progress=False)

    return made_once(request, "harness-every-kind", make) / "roomspace-every-kind"


def read_by(built: Path, harness: str) -> list[str]:
    """The build's configurations whose kind names `harness` among those that read it: every such kind's,
    paper and balanced."""
    names = [name for name in open_rows(built).configs if harness in kind_of(name).harness]
    assert {kind_of(name) for name in names} == {kind for kind in KINDS.values() if harness in kind.harness}
    return names
