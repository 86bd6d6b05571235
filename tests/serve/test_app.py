"""`roomspace serve` through Flask's test client (no browser; tests/serve/browser_check.py drives a real one): every
configuration of every kind and family browses from a build folder and from a Hub snapshot, pages read only
their row groups, bad requests get 4xx pages, a person's session resumes and `score` reads its file with the
numbers the results page shows, and nothing is written outside the predictions folder."""

import hashlib
import re
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from markupsafe import escape

from pipeline.cli import main
from pipeline.evaluate.report import evaluate, markdown
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import Sample, sample_ids
from pipeline.serve.app import PAGE, create_app
from pipeline.serve.catalogue import Catalogue
from pipeline.text.kinds import kind_of

PROBLEM = re.compile(r'id="problem">([^<]*)<')


def snapshot_of(built: Path, folder: Path) -> Path:
    """What `push` uploads: the card and data/, no manifest."""
    shutil.copytree(built / "data", folder / "data")
    shutil.copy(built / "README.md", folder)
    return folder


@pytest.fixture(scope="module")
def built(every_kind) -> Path:
    return every_kind[0]


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("layout", ["build", "snapshot"])
def test_every_configuration_of_every_kind_and_family_browses(built, tmp_path, layout):
    source = built if layout == "build" else snapshot_of(built, tmp_path / "snapshot")
    rows = open_rows(str(source))
    client = create_app(str(source), tmp_path / "answers").test_client()
    assert {kind_of(config).name for config in rows.configs} >= {"base", "vision", "twin", "map", "object_tasks"}
    assert any(config.endswith("_balanced") for config in rows.configs)
    assert any(config.endswith("_hard") for config in rows.configs)
    for config in rows.configs:
        page = client.get(f"/browse/{config}")
        assert page.status_code == 200, config
        count = rows.count([config])
        assert f"{count} question{'' if count == 1 else 's'};" in page.get_data(as_text=True)
        first = next(rows.rows([config]))
        shown = client.get(f"/question/{config}/{first['id']}")
        assert shown.status_code == 200 and first["id"] in shown.get_data(as_text=True), config
        if first.get("objects"):
            assert 'id="witness"' in shown.get_data(as_text=True), config
        pictured = next((row for row in rows.rows([config], ["id", "image"]) if row.get("image")), None)
        if pictured is not None:
            picture = client.get(f"/image/{config}/{pictured['id']}.png")
            assert picture.status_code == 200 and picture.data == pictured["image"]["bytes"], config
        else:
            assert not kind_of(config).images or config.startswith("object_tasks"), config


def test_filters_and_pages_read_only_the_row_groups_of_their_questions(built, tmp_path, monkeypatch):
    source = snapshot_of(built, tmp_path / "snapshot")
    config = "n3_m2_d81"
    (path,) = (source / "data" / config).glob("*.parquet")
    pq.write_table(pq.read_table(path), path, row_group_size=7)  # many row groups (a snapshot has no checksums)
    rows = open_rows(str(source))
    everything = list(rows.rows([config], ["id", "room_id", "setting", "question_type"]))
    assert len(everything) > 2 * PAGE
    client = create_app(str(source), tmp_path / "answers").test_client()
    client.get(f"/browse/{config}")  # the listing is made on the first page
    read = []
    real = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", lambda self, group, **kw: read.append(group) or
                        real(self, group, **kw))
    page = client.get(f"/browse/{config}?page=2").get_data(as_text=True)
    assert re.findall(r'class="muted">([^<]+)</td>', page) == [row["id"] for row in everything[PAGE:2 * PAGE]]
    assert sorted(set(read)) == list(range(PAGE // 7, (2 * PAGE - 1) // 7 + 1))
    setting = everything[0]["setting"]
    chosen = [row["id"] for row in everything if row["setting"] == setting and row["question_type"] == "YN"]
    page = client.get(f"/browse/{config}?setting={setting}&question_type=YN").get_data(as_text=True)
    assert f"{len(chosen)} question" in page
    assert re.findall(r'class="muted">([^<]+)</td>', page) == chosen[:PAGE]
    room = everything[-1]["room_id"]  # the last room's questions
    in_room = [row["id"] for row in everything if row["room_id"] == room]
    page = client.get(f"/browse/{config}?room={room}").get_data(as_text=True)
    assert in_room and re.findall(r'class="muted">([^<]+)</td>', page) == in_room[:PAGE]


def test_bad_requests_get_a_4xx_page_naming_the_problem(built, tmp_path):
    client = create_app(str(built), tmp_path / "answers").test_client()
    config = "n3_m2_d81"
    for url, code, says in [
        ("/browse/nothing", 404, "no configuration 'nothing'"),
        (f"/browse/{config}?page=0", 400, "page must be from 1"),
        (f"/browse/{config}?page=two", 400, "page must be a whole number"),
        (f"/browse/{config}?setting=upside_down", 400, "setting 'upside_down' is not one of"),
        (f"/browse/{config}?level=7", 400, "level '7' is not one of"),
        (f"/browse/{config}?room=s9-999999", 400, "has no questions of room 's9-999999'"),
        (f"/question/{config}/no-such-question", 404, "has no question"),
        (f"/image/{config}/no-such-question.png", 404, "has no picture"),
        ("/?kind=spaceship", 400, "no kind 'spaceship'"),
        ("/answer/a%20b", 400, "is no name for a person"),
            ("/answer/..%2Fetc", 404, "not found"),
        ("/answer/nobody", 400, "no answers of nobody"),
        ("/results?predictions=..%2Fmanifest.json", 400, "no predictions file"),
        ("/results?baseline=oracle", 400, "no baseline 'oracle'"),
        ("/static/../manifest.json", 404, "not found"),
    ]:
        page = client.get(url)
        text = page.get_data(as_text=True)
        assert page.status_code == code, (url, text)
        assert "Traceback" not in text and says in PROBLEM.search(text).group(1).replace("&#39;", "'"), (url, text)
    assert client.post("/answer", data={"name": "ann", "limit": "x"}).status_code == 400
    assert client.delete("/").status_code == 405
    assert client.get("/", headers={"Host": "attacker.example:8046"}).status_code == 403
    assert client.post("/answer", data={"name": "ann", "limit": "2"},
                       headers={"Origin": "http://attacker.example"}).status_code == 403
    assert not (tmp_path / "answers").exists()
    exposed = create_app(str(built), tmp_path / "answers", host="0.0.0.0").test_client()  # --host 0.0.0.0: any name
    assert exposed.get("/", headers={"Host": "lab-machine:8046"}).status_code == 200
    named = create_app(str(built), tmp_path / "answers", host="lab-machine").test_client()
    assert named.get("/", headers={"Host": "lab-machine:8046"}).status_code == 200
    assert named.get("/", headers={"Host": "attacker.example:8046"}).status_code == 403


def answer_form(row: dict, right: bool) -> dict:
    """What a person posts: the row's answer, or a wrong one."""
    if row["question_type"] == "YN":
        return {"choice": row["answer"] if right else {"Yes": "No", "No": "Yes"}[row["answer"]]}
    truth = [word.strip() for word in row["answer"].split(",")]
    others = [option for option in row["options"] if option not in truth]
    return {"choice": truth if right else truth + others[:1] if others else truth[1:]}


def test_a_person_answers_the_run_model_sample_resumes_and_score_reads_it(built, tmp_path, capsys):
    configs, limit, right = ["n3_m2_d81", "n8_m20_d81_hard"], 6, [True, False, True, True, False, True]
    answers, before = tmp_path / "answers", tree_digest(built)
    rows = open_rows(str(built))
    by_id = {row["id"]: row for row in rows.rows(configs)}
    client = create_app(str(built), answers).test_client()
    begun = client.post("/answer", data={"name": "ann", "limit": str(limit), "seed": "3", "config": configs})
    assert begun.status_code == 303 and begun.headers["Location"].endswith("/answer/ann")
    asked = []
    for k in range(limit):
        if k == 3:  # a new server: the session resumes from its file at the fourth question
            client = create_app(str(built), answers).test_client()
        page = client.get("/answer/ann").get_data(as_text=True)
        config, question = (re.search(rf'name="{name}" value="([^"]*)"', page).group(1)
                            for name in ("config", "question"))
        assert f'id="number">{k + 1}<' in page and str(escape(by_id[question]["prompt"])) in page
        assert 'id="answer"' not in page and 'id="answer-set"' not in page  # asked without its answer
        asked.append(question)
        done = client.post("/answer/ann", data={"config": config, "question": question, "shown": "0",
                                                 **answer_form(by_id[question], right[k])})
        assert done.status_code == 303
    assert asked == sample_ids(rows, configs, Sample(limit, 3))  # run-model's --limit 6 --seed 3
    assert 'id="done"' in client.get("/answer/ann").get_data(as_text=True)
    again = client.post("/answer/ann", data={"config": configs[0], "question": asked[0], "choice": "Yes"})
    assert again.status_code == 409 and "answered" in PROBLEM.search(again.get_data(as_text=True)).group(1)
    other = client.post("/answer", data={"name": "ann", "limit": "2", "seed": "3", "config": configs})
    assert other.status_code == 400 and "another name" in other.get_data(as_text=True)

    evaluation = evaluate(str(built), ",".join(configs), [answers / "human-ann.jsonl"], [], per_question=True)
    assert {name for group in evaluation.groups for name in group.overall.systems} == {"human:ann"}
    assert {q["id"]: q["correct"] for q in evaluation.questions} == dict(zip(asked, right))

    # score prints, score --html writes and the results page shows the same rows
    assert main(["score", str(built), "--config", ",".join(configs), "--predictions", str(answers / "human-ann.jsonl"),
                 "--quiet", "--html", str(tmp_path / "scores.html")]) == 0
    printed = capsys.readouterr().out
    assert printed == markdown(evaluation)
    page = client.get("/results?predictions=human-ann.jsonl").get_data(as_text=True)
    exported = (tmp_path / "scores.html").read_text()
    assert exported.startswith("<!doctype html>") and exported.count('src="data:image/png;base64,') >= 3
    lines = [line for line in printed.splitlines() if line.startswith("| human:ann |")]
    assert len(lines) > 5  # the overall table and every breakdown's
    for line in lines:
        cells = "<td>" + "</td>\n<td>".join(cell.strip() for cell in line.strip("|").split("|")) + "</td>"
        assert cells in page and cells in exported, line
    assert tree_digest(built) == before
    assert sorted(path.name for path in answers.iterdir()) == ["human-ann.jsonl"]  # plots drawn there are gone


def test_the_blind_guess_comes_once_fitted(built, tmp_path):
    app = create_app(str(built), tmp_path / "answers")
    client, config = app.test_client(), "n3_m2_d81_balanced"
    row = next(row for row in open_rows(str(built)).rows([config]) if row["question_type"] == "FR")
    assert 'id="fit-blind"' in client.get(f"/question/{config}/{row['id']}").get_data(as_text=True)
    assert not app.extensions["roomspace"].blind.wait(config, 0)  # browsing fits nothing
    assert "being fitted" in client.get(f"/question/{config}/{row['id']}?blind=1").get_data(as_text=True)
    assert app.extensions["roomspace"].blind.wait(config, 120)
    assert re.search(r'id="blind">majority: [^;]+; learned: ', client.get(f"/question/{config}/{row['id']}")
                     .get_data(as_text=True))


def test_the_server_lists_every_configuration_once_from_the_start(built, monkeypatch):
    rows = open_rows(str(built))
    made = []
    real = Catalogue._list
    monkeypatch.setattr(Catalogue, "_list", lambda self, config: made.append(config) or real(self, config))
    catalogue = Catalogue(rows)
    catalogue.warm().join(120)
    assert made == list(rows.configs)
    assert catalogue.listing(rows.configs[0]).table.num_rows == rows.count(rows.configs[:1]) and len(made) == len(
        rows.configs)


def test_a_person_answers_a_hub_snapshot_and_resumes(built, tmp_path):
    source, answers = str(snapshot_of(built, tmp_path / "snapshot")), tmp_path / "answers"
    config = "vision_n3_m2_d81_balanced"
    client = create_app(source, answers).test_client()
    assert client.post("/answer", data={"name": "bo", "limit": "3", "config": config}).status_code == 303
    page = client.get("/answer/bo").get_data(as_text=True)
    first = re.search(r'name="question" value="([^"]*)"', page).group(1)
    row = next(open_rows(source).rows([config], keep={first}))
    assert client.post("/answer/bo", data={"config": config, "question": first, "shown": "x",
                                           **answer_form(row, True)}).status_code == 303
    client = create_app(source, answers).test_client()
    page = client.get("/answer/bo").get_data(as_text=True)
    assert 'id="number">2<' in page and first not in page
    results = client.get("/results?predictions=human-bo.jsonl").get_data(as_text=True)  # score's warning shown
    assert 'id="warnings"' in results and "answers 1 of the 3 questions it asked" in results
    lines = (answers / "human-bo.jsonl").read_text().splitlines()
    assert len(lines) == 2 and '"seconds": null' in lines[1]  # a shown time that is not a time: none recorded


@pytest.mark.parametrize("argv", [
    ["serve", "BUILD", "--port", "0"],
    ["score", "BUILD", "--baseline", "random", "--config", "n3_m2_d81", "--html", "x.html", "--quiet"],
], ids=lambda argv: argv[0])
def test_without_the_serve_extra_a_command_names_it(built, tmp_path, argv):
    from test_light_install import run_light

    shim = tmp_path / "shim"
    shim.mkdir()
    done = run_light([str(built) if part == "BUILD" else part for part in argv], tmp_path, shim,
                     ["flask", "jinja2", "markdown_it", "werkzeug"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and \
        "pip install 'roomspace[serve]'" in done.stderr, done.stderr
    assert not (tmp_path / "x.html").exists()


def test_the_same_answer_posted_twice_at_once_is_written_once(built, tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from pipeline.evaluate.predictions import PredictionsWriter

    slow = PredictionsWriter.add  # a slow disk: every post reaches the write before the first has finished it
    monkeypatch.setattr(PredictionsWriter, "add", lambda self, record: time.sleep(0.2) or slow(self, record))
    app, config = create_app(str(built), tmp_path / "answers"), "n3_m2_d81"
    client = app.test_client()
    client.post("/answer", data={"name": "cy", "limit": "2", "config": config})
    page = client.get("/answer/cy").get_data(as_text=True)
    question = re.search(r'name="question" value="([^"]*)"', page).group(1)
    row = next(open_rows(str(built)).rows([config], keep={question}))
    form = {"config": config, "question": question, **answer_form(row, True)}
    with ThreadPoolExecutor(8) as pool:  # a double click, eight times over
        codes = sorted(pool.map(lambda _: app.test_client().post("/answer/cy", data=form).status_code, range(8)))
    assert codes == [303] + [409] * 7
    assert len((tmp_path / "answers" / "human-cy.jsonl").read_text().splitlines()) == 2
