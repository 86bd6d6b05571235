"""Plots and the report of a pooled sweep: the pool's name, and every file named from it, stays short."""

import json
from pathlib import Path

import pytest
from conftest import SCENE_SEED as SEED

from pipeline.cli import main
from pipeline.dataset.build import BuildPlan, build
from pipeline.evaluate.score import groups, pooled_name
from pipeline.text.configs import parse_configs

SWEEP = [config.name for config in parse_configs("sweep")]


@pytest.fixture(scope="module")
def sweep(scenes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build") / "roomspace-sweep-test"
    build(BuildPlan.asked("roomspace-sweep-test", SEED, 2, parse_configs("sweep")), scenes, out, workers=1, progress=False)
    return out


def test_a_pools_name_counts_its_configurations_rather_than_listing_them():
    (group,) = groups([], SWEEP, pool=True)
    assert len(SWEEP) == 70 and group.name == pooled_name(SWEEP) == "pooled: 70 configurations"
    assert group.configs == tuple(SWEEP)
    assert pooled_name(SWEEP[:1]) == "pooled: 1 configuration"


def test_score_pool_plots_a_sweep_build(sweep, tmp_path, capsys):
    """`score SWEEP --pool --plots DIR`, as the README recommends for the n and m plots, failed with
    '[Errno 36] File name too long': the pooled plot's file name listed all 70 configurations."""
    plots, scores = tmp_path / "plots", tmp_path / "scores.json"
    assert main(["score", str(sweep), "--baseline", "random", "--pool", "--plots", str(plots), "--json", str(scores),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    table = captured.out
    assert "plot:" not in captured.err  # --quiet: no line per plot (issue 43 printed 42)
    assert "## pooled: 70 configurations (" in table and "### pooled: 70 configurations by n" in table
    assert "Pooled configurations: " + ", ".join(SWEEP) + "." in table  # the list, once
    names = sorted(p.name for p in plots.iterdir())
    assert "pooled-70-configurations-yn_accuracy-vs-n.png" in names and "pooled-70-configurations-fr_exact-vs-m.png" in names
    assert max(len(name) for name in names) < 60
    (group,) = json.loads(scores.read_text())["groups"]
    assert group["name"] == "pooled: 70 configurations" and group["configs"] == SWEEP


def test_the_gaps_plot_has_a_panel_per_measure_a_comparison_has_and_none_empty(tmp_path):
    """gaps.png had a panel for every comparison and every measure of any comparison: mostly empty."""
    from types import SimpleNamespace

    from pipeline.evaluate.plots import gap_panels, gaps_plot

    def gap(kind, measure, system):
        return SimpleNamespace(kind=kind, configs="a vs b", measure=measure, system=system,
                               result=SimpleNamespace(difference=0.1, low=0.0, high=0.2))
    gaps = [gap("twin", "YN accuracy", "random"), gap("twin", "FR exact", "random"),
            gap("image+story vs story", "YN accuracy", "random"), gap("image+story vs story", "YN accuracy", "majority")]
    assert gap_panels(gaps) == [("twin", "a vs b", "YN accuracy"), ("twin", "a vs b", "FR exact"),
                                ("image+story vs story", "a vs b", "YN accuracy")]  # not 2 x 2 with one empty
    written = gaps_plot(SimpleNamespace(gaps=gaps), tmp_path / "gaps.png")
    assert written.read_bytes().startswith(b"\x89PNG")
