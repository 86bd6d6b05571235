"""The package's data files (pipeline/data/): templates, vocabularies and rules kept out of the code."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def data_text(name: str) -> str:
    return resources.files("pipeline").joinpath("data", name).read_text(encoding="utf-8")


@cache
def data_json(name: str):
    return json.loads(data_text(name))
