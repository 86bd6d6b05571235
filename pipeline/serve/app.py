"""`roomspace serve`: a build or a Hub snapshot in a browser (Flask, server-side Jinja2 templates, no script).

* Browse: the configurations by kind; a configuration's questions filtered by setting, view, question
  type and level, a page at a time (pipeline.serve.catalogue reads only the row groups a page needs);
  a question with its story, picture, options, answer set, reasoning path, the witness grid
  (pipeline.serve.witness) and, once asked for, the blind baselines' guesses (pipeline.serve.blind).
* Answer: a person answers the seeded sample `run-model --limit N --seed S` asks, shown the model's own
  prompt and picture, each answer appended to `human-NAME.jsonl` in the predictions folder as it is
  given (pipeline.serve.person); the same name resumes.
* Results: `score`'s report of any predictions files in that folder and any baselines
  (pipeline.serve.html_report), people beside models beside baselines.

Safe by default: the command binds 127.0.0.1; requests naming another host than the one served are
refused (a page of another site cannot reach it through DNS rebinding), and so are form posts from
another origin; only the build's rows and pictures are served, by configuration and question id, never
by path; nothing is written outside the predictions folder; a bad request gets a 4xx page naming the
problem, never a traceback.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.errors import RoomspaceError
from pipeline.evaluate.baselines import BASELINES
from pipeline.evaluate.rows import BenchmarkRows, open_rows
from pipeline.evaluate.sample import Sample
from pipeline.serve.blind import BlindGuesses
from pipeline.serve.catalogue import FILTERS, Catalogue
from pipeline.serve.person import (CHOICE_TYPES, AlreadyAnswered, Session, begin, predictions_path, prediction_of,
                                   resume)
from pipeline.serve.templating import TEMPLATES
from pipeline.serve.witness import witness_grid
from pipeline.text.kinds import KINDS, kind_of

PAGE = 25  # questions per page
LISTED_COLUMNS = ("id", "question")  # read for a page's questions besides the listing's
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
EVERY_ADDRESS = ("0.0.0.0", "::")  # --host binding every address: reached by names it cannot know, so any is let in
DEFAULT_SAMPLE = 20  # questions a person is offered to answer


@dataclass
class Served:
    """What the application serves and keeps: the build, its listings, the blind guesses, the people's sessions."""

    rows: BenchmarkRows
    catalogue: Catalogue
    blind: BlindGuesses
    predictions: Path  # the one folder written to
    hosts: tuple[str, ...] | None  # the host names requests may name; None: any (bound to every address)
    sessions: dict[str, Session] = field(default_factory=dict)
    opening: threading.Lock = field(default_factory=threading.Lock)  # one session begun or resumed at a time


def create_app(source: str, predictions: Path, split: str = DATASET_SPLIT, host: str = LOCAL_HOSTS[0],
               warm: bool = False):
    """The application serving `source` (a build folder, a Hub snapshot folder or OWNER/NAME), writing only
    into `predictions`; `warm`: begin making every configuration's listing at once (Catalogue.warm)."""
    from flask import Flask

    rows = open_rows(source, split)
    bound = host.strip("[]").lower()
    hosts = None if bound in EVERY_ADDRESS else tuple(dict.fromkeys((*LOCAL_HOSTS, bound)))
    served = Served(rows, Catalogue(rows), BlindGuesses(rows), predictions.resolve(), hosts)
    app = Flask("pipeline.serve", template_folder=TEMPLATES, static_folder=None)
    app.extensions["roomspace"] = served
    if warm:
        served.catalogue.warm()
    _routes(app, served)
    _guards(app, served)
    return app


def _guards(app, served: Served) -> None:
    from urllib.parse import urlsplit

    from flask import render_template, request
    from werkzeug.exceptions import BadRequest, Forbidden, HTTPException

    @app.before_request
    def same_site():
        if served.hosts is not None and urlsplit(f"//{request.host}").hostname not in served.hosts:
            raise Forbidden(f"this server answers requests to {', '.join(served.hosts)} only, not {request.host}")
        origin = request.headers.get("Origin")
        if request.method == "POST" and origin is not None and origin.split("://", 1)[-1] != request.host:
            raise Forbidden(f"a form posted from {origin} is refused: post from this site's own pages")

    @app.errorhandler(RoomspaceError)
    def refused(error):
        return _error_page(BadRequest(str(error)))

    @app.errorhandler(HTTPException)
    def http_error(error):
        return _error_page(error)

    @app.errorhandler(Exception)
    def unexpected(error):
        print(f"roomspace serve: error: {request.method} {request.full_path}: {type(error).__name__}: {error}",
              file=sys.stderr)
        return render_template("error.html", code=500, title="Internal error",
                               message=f"{type(error).__name__}: {error}"), 500

    def _error_page(error: HTTPException):
        return render_template("error.html", code=error.code, title=error.name, message=error.description), error.code


def _routes(app, served: Served) -> None:
    from flask import Response, abort, redirect, render_template, request, url_for

    rows, catalogue = served.rows, served.catalogue

    def config_or_404(config: str) -> str:
        if config not in rows.configs:
            abort(404, f"{rows.location} has no configuration {config!r}")
        return config

    @app.get("/")
    def index():
        kind = request.args.get("kind") or None
        if kind is not None and kind not in KINDS:
            abort(400, f"no kind {kind!r}; the kinds are {', '.join(KINDS)}")
        configs = [(config, kind_of(config).name) for config in rows.configs]
        kinds = list(dict.fromkeys(name for _, name in configs))
        shown = [(config, name) for config, name in configs if kind is None or name == kind]
        return render_template("index.html", rows=rows, configs=shown, kinds=kinds, kind=kind,
                               sessions=_sessions(served))

    @app.get("/browse/<config>")
    def browse(config: str):
        listing = catalogue.listing(config_or_404(config))
        chosen = _chosen_filters(request.args, listing.values)
        room = request.args.get("room", "").strip()
        if room and listing.position_of_room(room) is None:
            abort(400, f"{config} has no questions of room {room!r} (a room id such as s0-000042)")
        selected = listing.select({**chosen, **({"room_id": room} if room else {})})
        pages = max(1, math.ceil(selected.num_rows / PAGE))
        page = _whole(request.args.get("page", "1"), "page", 1, pages)
        shown = selected.slice((page - 1) * PAGE, PAGE)
        questions = catalogue.read(config, shown, LISTED_COLUMNS)
        listed = [{**place, **question} for place, question in zip(shown.to_pylist(), questions)]
        return render_template("browse.html", config=config, kind=kind_of(config).name, listing=listing,
                               chosen={**chosen, **({"room": room} if room else {})}, filters=FILTERS, questions=listed, page=page, pages=pages,
                               total=selected.num_rows, values=_sorted_values(listing.values))

    @app.get("/question/<config>/<question>")
    def question(config: str, question: str):
        row = catalogue.question(config_or_404(config), question)
        if row is None:
            abort(404, f"{config} has no question {question!r}")
        if request.args.get("blind"):
            served.blind.fit(config)
        image = row.get("image")
        return render_template("question.html", config=config, row=row, has_image=bool(image and image.get("bytes")),
                               grid=witness_grid(row), guess=served.blind.guess(config, question, row["question_type"]))

    @app.get("/image/<config>/<question>.png")
    def image(config: str, question: str):
        row = catalogue.question(config_or_404(config), question, ("id", "image"))
        if row is None or not row.get("image") or not row["image"].get("bytes"):
            abort(404, f"{config} has no picture for {question!r}")
        return Response(row["image"]["bytes"], mimetype="image/png",
                        headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/answer")
    def answer_start():
        return render_template("answer_start.html", rows=rows, sessions=_sessions(served), limit=DEFAULT_SAMPLE,
                               folder=served.predictions)

    @app.post("/answer")
    def answer_begin():
        form = request.form
        name = form.get("name", "").strip()
        configs = rows.choose(",".join(form.getlist("config")) or None)
        sample = Sample(_whole(form.get("limit", ""), "limit", 1, None), _whole(form.get("seed", "0"), "seed", 0, None))
        with served.opening:
            served.sessions[name] = begin(rows, catalogue, served.predictions, name, configs, sample)
        return redirect(url_for("answer", name=name), 303)

    def session_of(name: str) -> Session:
        predictions_path(served.predictions, name)  # the name is checked before any file is looked for
        with served.opening:
            if name not in served.sessions:
                served.sessions[name] = resume(rows, catalogue, served.predictions, name)
            return served.sessions[name]

    @app.get("/answer/<name>")
    def answer(name: str):
        session = session_of(name)
        asked = session.next()
        if asked is None:
            return render_template("answer_done.html", session=session)
        config, question = asked
        row = catalogue.question(config, question, ("id", "prompt", "image", "question_type", "options"))
        image = row.get("image")
        return render_template("answer.html", session=session, config=config, row=row, shown=time.time(),
                               has_image=bool(image and image.get("bytes")),
                               choice=row["question_type"] in CHOICE_TYPES,
                               number=len(session.answered) + 1)

    @app.post("/answer/<name>")
    def answer_record(name: str):
        session = session_of(name)
        config, question = request.form.get("config", ""), request.form.get("question", "")
        if (config, question) not in session.questions:
            abort(400, f"{question!r} of {config!r} is not a question of {name}'s sample")
        if question in session.answered:
            abort(409, f"{name} has answered {question} already; answers are not changed")
        row = catalogue.question(config, question, ("id", "question_type", "options"))
        prediction = prediction_of(row, request.form.getlist("choice"), request.form.get("text", ""))
        shown = _seconds(request.form.get("shown", ""))
        try:
            session.record(question, prediction, None if shown is None else max(0.0, time.time() - shown))
        except AlreadyAnswered as error:  # the same question posted twice at once
            abort(409, str(error))
        return redirect(url_for("answer", name=name), 303)

    @app.get("/results")
    def results():
        from pipeline.evaluate.report import evaluate
        from pipeline.evaluate.score import name_systems
        from pipeline.serve.html_report import report_parts

        files = _prediction_files(served)
        asked_files = request.args.getlist("predictions")
        unknown = [name for name in asked_files if name not in files]
        if unknown:
            abort(400, f"no predictions file {unknown[0]!r} in {served.predictions}")
        baselines = request.args.getlist("baseline")
        wrong = [name for name in baselines if name not in BASELINES]
        if wrong:
            abort(400, f"no baseline {wrong[0]!r}; the baselines are {', '.join(BASELINES)}")
        configs = ",".join(request.args.getlist("config")) or None
        body = plots = warnings = None
        if asked_files or baselines:
            systems = name_systems([files[name] for name in asked_files])
            if configs is None:  # the configurations the files were asked, not the whole build
                configs = _asked_configs(systems.values())
            evaluation = evaluate(rows.location, configs, systems, baselines, split=rows.split)
            body, plots = report_parts(evaluation, _scratch(served))
            warnings = evaluation.warnings
        return render_template("results.html", rows=rows, files=list(files), asked_files=asked_files,
                               baselines=BASELINES, asked_baselines=baselines,
                               asked_configs=request.args.getlist("config"),
                               body=body, plots=plots, warnings=warnings)


def _chosen_filters(args, values: dict[str, tuple]) -> dict[str, object]:
    """The filters a query string chooses, each checked against the configuration's values."""
    from werkzeug.exceptions import BadRequest

    chosen = {}
    for name in FILTERS:
        text = args.get(name, "")
        if not text:
            continue
        found = {str(value): value for value in values[name]}
        if text not in found:
            raise BadRequest(f"{name} {text!r} is not one of this configuration's: "
                             f"{', '.join(found) or 'it has none'}")
        chosen[name] = found[text]
    return chosen


def _sorted_values(values: dict[str, tuple]) -> dict[str, list]:
    """Each filter's values to offer: numbers ascending, words in the order the build writes them."""
    return {name: sorted(found) if all(isinstance(v, int) for v in found) else list(found)
            for name, found in values.items()}


def _whole(text: str, name: str, least: int, most: int | None) -> int:
    from werkzeug.exceptions import BadRequest

    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number, got {text!r}") from None
    if value < least or (most is not None and value > most):
        raise BadRequest(f"{name} must be from {least}" + (f" to {most}" if most is not None else " up") +
                         f", got {value}")
    return value


def _seconds(text: str) -> float | None:
    """The time a question was shown (a form's hidden field), None when it is not a time."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _prediction_files(served: Served) -> dict[str, Path]:
    """The predictions files in the folder by name (people's and any a run-model wrote there; caches left out)."""
    if not served.predictions.is_dir():
        return {}
    return {path.name: path for path in sorted(served.predictions.glob("*.jsonl"))
            if not path.name.endswith(".cache.jsonl")}


def _sessions(served: Served) -> list[tuple[str, str]]:
    """(name, file name) of every person's file in the predictions folder."""
    return [(path.name.removeprefix("human-").removesuffix(".jsonl"), path.name)
            for path in _prediction_files(served).values() if path.name.startswith("human-")]


def _asked_configs(paths) -> str | None:
    """The configurations the files' headers say were asked (None, every one, when a file has no header)."""
    from pipeline.evaluate.predictions import read_header

    asked: list[str] = []
    for path in paths:
        header = read_header(path)
        if header is None:
            return None
        asked += header.configs
    return ",".join(dict.fromkeys(asked))


def _scratch(served: Served) -> Path:
    """Where the results page draws its plots for a moment: inside the predictions folder, the one written to."""
    served.predictions.mkdir(parents=True, exist_ok=True)
    return served.predictions
