"""The Jinja2 templates of `roomspace serve` and of `score --html` (pipeline/serve/templates), autoescaped."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, select_autoescape

TEMPLATES = "templates"  # package data of pipeline.serve


@cache
def environment() -> Environment:
    return Environment(loader=PackageLoader("pipeline.serve", TEMPLATES), autoescape=select_autoescape(["html"]))
