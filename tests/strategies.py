"""Hypothesis strategies shared by the spatial-core tests: random rooms and fact sets."""

from __future__ import annotations

from hypothesis import strategies as st

from pipeline.spatial.facts import Fact
from pipeline.spatial.grid import GRID_SIZES, Raster
from pipeline.testing import synthetic


def rasters(n: int, d: int | None = None) -> st.SearchStrategy[Raster]:
    """A random room with n objects (pipeline.testing.synthetic), at grid size d or a drawn one."""
    sizes = st.just(d) if d is not None else st.sampled_from(GRID_SIZES)
    return st.builds(synthetic.random_raster, st.randoms(use_true_random=False), st.just(n), sizes)


def random_facts(names: list[str], max_facts: int) -> st.SearchStrategy[list[Fact]]:
    """Facts with arbitrary codes (pipeline.testing.synthetic): often contradictory, sometimes unsatisfiable."""
    return st.builds(synthetic.random_facts, st.randoms(use_true_random=False), st.just(names), st.just(max_facts))
