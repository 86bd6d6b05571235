"""`score`'s report as HTML: its Markdown (pipeline.evaluate.report.markdown, the very text `score` prints,
so the page and the command show the same numbers) rendered with its tables, then its plots
(pipeline.evaluate.plots) inline as PNG data URIs: one file that opens anywhere (`score --html F`), and
the results page of `roomspace serve`."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from pipeline.evaluate.plots import write_plots
from pipeline.evaluate.prompts import png_data_uri
from pipeline.evaluate.report import Evaluation, markdown
from pipeline.files import write_atomic
from pipeline.serve.templating import environment


@dataclass(frozen=True)
class Plot:
    name: str  # its file name under `score --plots`
    uri: str  # the PNG as a data URI


def report_parts(evaluation: Evaluation, scratch: Path | None = None) -> tuple[str, list[Plot]]:
    """(the report's HTML, its plots); the plots are drawn in a temporary folder inside `scratch` (the
    system's temporary folder when None), removed before this returns."""
    # html off: text in the report (a system's name, an unparseable answer) is shown, never run as markup
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown(evaluation))
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        plots = [Plot(path.name, png_data_uri(path.read_bytes())) for path in write_plots(evaluation, Path(folder))]
    return body, plots


def write_html(path: Path, evaluation: Evaluation) -> None:
    """The report as one self-contained HTML file, with the warnings `score` prints on stderr."""
    body, plots = report_parts(evaluation)
    page = environment().get_template("report.html").render(title=f"Scores on {evaluation.location}", body=body,
                                                            plots=plots, warnings=evaluation.warnings)
    write_atomic(path, lambda target: target.write_text(page, encoding="utf-8"))
