"""The Jinja2 templates of `roomspace serve` and of `score --html` (pipeline/serve/templates), autoescaped."""

from __future__ import annotations

from functools import cache

TEMPLATES = "templates"  # package data of pipeline.serve


@cache
def environment():
    from jinja2 import Environment, PackageLoader, select_autoescape

    return Environment(loader=PackageLoader("pipeline.serve", TEMPLATES), autoescape=select_autoescape(["html"]))
