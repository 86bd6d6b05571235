"""The configuration kinds' registry: one entry per kind, and nothing outside it reads a name's prefix."""

import dataclasses
import re
from pathlib import Path

import pytest

from pipeline.errors import RoomspaceError
from pipeline.text.configs import Config
from pipeline.text.kinds import BASE, KINDS, added_kinds, kind_of, parse

REPO = Path(__file__).resolve().parents[2]
BASE_CONFIG = Config(5, 4, 12)


@pytest.mark.parametrize("kind", KINDS.values(), ids=lambda kind: kind.name)
def test_every_kind_names_its_configurations_and_reads_them_back(kind):
    name = kind.config_name(BASE_CONFIG)
    assert parse(name) == (kind, BASE_CONFIG)
    assert name.endswith(BASE_CONFIG.name) and name == kind.prefix + "n5_m4_d144"


@pytest.mark.parametrize("kind", KINDS.values(), ids=lambda kind: kind.name)
def test_every_kind_has_a_module_with_its_record_and_rows(kind):
    module = kind.maker()
    assert dataclasses.is_dataclass(module.RECORD) and callable(module.rows)
    assert all(other in KINDS for other in kind.made_from)
    assert kind.compared is None or kind.compared.other in KINDS
    if kind.images:  # a question per row with the image it goes with (pipeline.dataset.layout)
        assert {"image", "image_id"} <= {f.name for f in dataclasses.fields(module.RECORD)}


def test_the_longest_prefix_decides_and_bad_names_are_one_line_errors():
    assert kind_of("vision_agent_n5_m4_d144").name == "vision_agent"
    assert kind_of("agent_n5_m4_d144").name == "agent" and kind_of("n5_m4_d144") is BASE
    assert kind_of("twin_map_n5_m4_d144").name == "twin_map" and kind_of("map_n5_m4_d144").name == "map"
    for bad in ("vision_n5_m4", "robot_n5_m4_d144", "twin_twin_n5_m4_d144"):
        with pytest.raises(RoomspaceError, match="is no configuration"):
            parse(bad)
    assert {kind.option for kind in added_kinds()} == {"--vision", "--twins", "--agents", "--compositions", "--shapes", "--maps",
                                                           "--object-tasks"}


# A string literal that is a kind's prefix, or a call testing or cutting a configuration name's start.
PREFIXES = sorted({kind.prefix for kind in KINDS.values() if kind.prefix}, key=len, reverse=True)
LITERAL = re.compile(r"""f?["'](?:%s)(?:\{|["'])""" % "|".join(map(re.escape, PREFIXES)))
CALLS = re.compile(r"\.(?:startswith|removeprefix)\((?:[A-Z_]*PREFIX|f?[\"'](?:%s))" % "|".join(map(re.escape, PREFIXES)))


def test_no_code_outside_the_registry_reads_a_configuration_prefix():
    registry = REPO / "pipeline" / "text" / "kinds.py"
    found = []
    for path in sorted((REPO / "pipeline").rglob("*.py")) + sorted((REPO / "bench").rglob("*.py")):
        if path == registry:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if LITERAL.search(line) or CALLS.search(line) or re.search(r"\b[A-Z_]*_PREFIX\s*=", line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "configuration prefixes read outside pipeline/text/kinds.py:\n" + "\n".join(found)


def test_the_grep_sees_what_it_forbids():
    assert LITERAL.search('name = f"twin_{config}"') and LITERAL.search("x = 'vision_'")
    assert CALLS.search('if config.startswith("agent_"):') and CALLS.search("c.removeprefix(VISION_PREFIX)")
    assert not LITERAL.search('"vision_agent rows"') and not CALLS.search('path.startswith("data/")')


def test_the_kinds_that_draw_questions_have_balanced_counterparts():
    assert {kind.name for kind in KINDS.values() if kind.balanced} >= {"base", "vision", "twin", "agent", "vision_agent"}
    assert not KINDS["map"].balanced  # a map question is the same whatever the sampler: no counterpart to build
