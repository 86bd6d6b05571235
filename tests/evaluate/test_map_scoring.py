"""Map questions through every command (build, validate, prompts, run-model, score, export, audit, push),
the map parser, the checker's verdicts with their partial credit and baselines, and the reward
that TRL's GRPO trainer calls, beside `score`'s verdicts on the same answers."""

import json
from pathlib import Path

import datasets
import pytest
from conftest import SCENE_SEED
from loopback import LoopbackChat, completion

from pipeline.cli import main
from pipeline.dataset.hub import upload_plan
from pipeline.dataset.rows import check_row
from pipeline.errors import RoomspaceError
from pipeline.evaluate.answers import parse_map
from pipeline.evaluate.report import evaluate
from pipeline.evaluate.reward import REWARD_COLUMNS, roomspace_exact_reward, roomspace_reward
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.score import SCORED, UNPARSEABLE, read_score_rows, score_item
from pipeline.spatial.facts import facts_held
from pipeline.text.targets import map_lines

BASE, MAP, TWIN_MAP = "n5_m4_d144", "map_n5_m4_d144", "twin_map_n5_m4_d144"
AGENT_MAP = "agent_map_n5_m4_d144"


@pytest.fixture(scope="module")
def built(scenes, tmp_path_factory) -> Path:
    """Two rooms of n5_m4_d144 with its twins, agents and maps (which adds the twin and egocentric maps), as
    `make roomspace-100` asks."""
    out = tmp_path_factory.mktemp("maps") / "roomspace-maps"
    assert main(["build", "--rooms", "2", "--seed", str(SCENE_SEED), "--scenes", str(scenes), "--out", str(out),
                 "--configs", BASE, "--twins", BASE, "--agents", BASE, "--maps", BASE, "--workers", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def rows(built) -> dict:
    """The map configuration's score rows and full rows, by id."""
    source = open_rows(built)
    return {"score": {row.id: row for row in read_score_rows(source, [MAP])},
            "full": {row["id"]: row for row in source.rows([MAP])}}


def moved(text: str, d: int, number: int, cell: tuple[int, int], objects: int) -> str:
    """The map `text` with object `number` put in `cell`."""
    cells = list(parse_map(text, objects, d).cells)
    cells[number - 1] = cell
    return "\n".join(map_lines(cells, d))


# --- the parser ---------------------------------------------------------------------------------


def test_the_parser_reads_one_map_after_the_answer_line_and_ignores_what_is_around_it():
    grid = map_lines([(0, 8), (3, 3), (3, 3)], 9)
    assert grid[0].split()[0] == "1" and grid[5].split()[3] == "23"  # top line first; a shared cell "23"
    text = "Reasoning:\n1 . .\nAnswer:\n```\n" + "\n".join(grid) + "\n```\n1 = bed, 2 = lamp, 3 = rug"
    assert parse_map(text, 3, 9).cells == ((0, 8), (3, 3), (3, 3))
    spaced = "Answer:\n\n" + "\n\n".join(grid)  # blank lines between rows do not cut the map
    assert parse_map(spaced, 3, 9).cells == ((0, 8), (3, 3), (3, 3))


@pytest.mark.parametrize("text, problem", [
    ("Answer: I cannot place them.", "draws no map"),
    ("Answer:\n{grid}\nor perhaps\n{grid}", "draws two maps"),
    ("Answer:\n{short}", "draws 8 rows, not 9"),
    ("Answer:\n{narrow}", "row 1 has 8 cells, not 9"),
    ("Answer:\n{two}", "draws object 3 0 times, not once"),
    ("Answer:\n{twice}", "draws object 1 2 times, not once"),
    ("Answer:\n{four}", "draws object 4; the objects are 1 to 3"),
])
def test_the_parser_refuses_what_is_not_one_map_of_every_object_once(text, problem):
    grid = map_lines([(0, 8), (3, 3), (3, 3)], 9)
    cells = [line.split() for line in grid]
    twice = "\n".join(" ".join(line if k else [*line[:-1], "1"]) for k, line in enumerate(cells))  # 1 also top right
    parts = {"grid": "\n".join(grid), "short": "\n".join(grid[1:]), "twice": twice,
             "narrow": "\n".join([" ".join(cells[0][1:]), *grid[1:]]),
             "two": "\n".join(map_lines([(0, 8), (3, 3)], 9)),
             "four": "\n".join(map_lines([(0, 8), (3, 3), (3, 3), (5, 5)], 9))}
    parsed = parse_map(text.format(**parts), 3, 9)
    assert not parsed.parsed and parsed.problem == problem


# --- the checker's verdicts ----------------------------------------------------------------------


def test_any_map_keeping_every_fact_is_right_and_a_broken_one_earns_the_share_it_keeps(rows):
    """Three maps of one story: the witness, another consistent map (the first object moved to the first
    other cell where every fact still holds), and one with an object moved off its facts."""
    row = next(r for r in rows["score"].values() if r.setting == "o2_d3" and r.view == "top_down")
    n, d = len(row.options), row.d
    witness = parse_map(row.answer, n, d).cells
    other = next([cell, *witness[1:]] for cell in ((i, j) for j in range(d) for i in range(d))
                 if cell != witness[0] and all(facts_held(row.facts, dict(zip(row.options, [cell, *witness[1:]])), d)))
    shifted = "\n".join(map_lines(other, d))
    corner = (0, 0) if witness[0] != (0, 0) else (d - 1, d - 1)
    broken = moved(row.answer, d, 1, corner, n)
    outcomes = {name: score_item(row, f"Reasoning first.\nAnswer:\n{text}")
                for name, text in (("witness", row.answer), ("shifted", shifted), ("broken", broken))}
    assert shifted != row.answer and all(outcomes[name].status[0, 0] == SCORED for name in outcomes)
    assert outcomes["witness"].correct[0, 0] and outcomes["shifted"].correct[0, 0]
    assert outcomes["witness"].jaccard[0, 0] == outcomes["shifted"].jaccard[0, 0] == 1.0
    held = facts_held(row.facts, dict(zip(row.options, parse_map(broken, n, d).cells)), d)
    assert not all(held) and not outcomes["broken"].correct[0, 0]
    assert outcomes["broken"].jaccard[0, 0] == pytest.approx(sum(held) / len(held)) and 0 <= sum(held) < len(held)
    unread = score_item(row, "Answer:\n" + "\n".join(row.answer.splitlines()[1:]))
    assert unread.status[0, 0] == UNPARSEABLE and not unread.correct[0, 0]


def scores(built: Path, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "scores.json"
    assert main(["score", str(built), *args, "--json", str(out), "--quiet"]) == 0
    return json.loads(out.read_text())


def test_baselines_draw_maps_the_checker_keeps_them_all(built, tmp_path, capsys):
    report = scores(built, tmp_path, "--config", MAP, "--baseline", "random", "--baseline", "regions",
                    "--baseline", "checker")
    (group,) = report["groups"]
    systems = group["overall"]["systems"]
    assert {name: m["map_items"] for name, m in systems.items()} == {"random": 32, "regions": 32, "checker": 32}
    assert systems["checker"]["map_consistent"]["value"] == systems["checker"]["map_facts"] == 1.0
    assert systems["random"]["map_facts"] < systems["regions"]["map_facts"] < 1.0
    assert systems["random"]["map_consistent"]["value"] < 1.0
    for setting in ("layout", "tpp"):  # their facts are about single objects: the regions baseline keeps them
        assert group["by"]["setting"][setting]["systems"]["regions"]["map_consistent"]["value"] == 1.0
    text = capsys.readouterr().out
    assert "### Maps (consistent: every stated fact holds" in text and "| checker | 32 | 100.0" in text
    assert "YN acc" not in text  # a configuration of maps alone has no YN or FR table


def test_the_twin_and_view_gaps_measure_maps(built):
    evaluation = evaluate(str(built), f"{MAP},{TWIN_MAP}", [], ["checker"])
    measured = {(gap.kind, gap.configs, gap.measure) for gap in evaluation.gaps}
    assert ("twin", f"{MAP} / {TWIN_MAP}", "maps consistent") in measured
    assert ("view", MAP, "maps consistent") in measured


def test_the_build_and_validate_refuse_a_witness_map_that_breaks_a_fact(rows):
    row = next(r for r in rows["full"].values() if r["setting"] == "o2_d3" and r["view"] == "top_down")
    for r in rows["full"].values():
        check_row(r)  # every stored witness keeps its facts
    d, n = row["d"], row["n"]
    corner = (0, 0) if parse_map(row["answer"], n, d).cells[0] != (0, 0) else (d - 1, d - 1)
    broken = moved(row["answer"], d, 1, corner, n)
    held = facts_held(rows["score"][row["id"]].facts, dict(zip(row["options"], parse_map(broken, n, d).cells)), d)
    fact = rows["score"][row["id"]].facts[held.index(False)]
    with pytest.raises(RoomspaceError, match=f"row {row['id']}: the stated fact \\({fact.subject} {fact.relation} "
                                             f"{fact.object}\\) does not hold on its witness map"):
        check_row({**row, "answer": broken})
    with pytest.raises(RoomspaceError, match=f"row {row['id']}: its answer is no map of its 5 objects \\(draws 11 rows"):
        check_row({**row, "answer": "\n".join(row["answer"].splitlines()[1:])})


def test_an_egocentric_map_is_judged_as_the_observer_sees_the_room(built, tmp_path):
    """The witness is right; the same room drawn north-up is wrong wherever the observer faces another wall;
    the baselines draw egocentric maps too."""
    source = open_rows(built)
    full = {row["id"]: row for row in source.rows([AGENT_MAP])}
    scored = {row.id: row for row in read_score_rows(source, [AGENT_MAP])}
    assert len(full) == 16 and {row["options"][-1] for row in full.values()} == {"you"}
    facings = set()
    for row_id, row in full.items():
        pose = row["story_pose"]
        facings.add(pose["facing"])
        north_up = "\n".join(map_lines([*((o["i"], o["j"]) for o in row["objects"]), (pose["i"], pose["j"])], row["d"]))
        witness, plan = (score_item(scored[row_id], f"Answer:\n{text}") for text in (row["answer"], north_up))
        assert witness.correct[0, 0] and witness.jaccard[0, 0] == 1.0
        assert plan.correct[0, 0] == (pose["facing"] == "N") and plan.status[0, 0] == SCORED
    assert facings != {"N"}
    report = scores(built, tmp_path, "--config", AGENT_MAP, "--baseline", "random", "--baseline", "regions",
                    "--baseline", "checker")
    systems = report["groups"][0]["overall"]["systems"]
    assert systems["checker"]["map_consistent"]["value"] == 1.0 and systems["checker"]["map_items"] == 16
    assert systems["random"]["map_facts"] < systems["regions"]["map_facts"] < 1.0


# --- the commands --------------------------------------------------------------------------------


def test_validate_prompts_audit_and_push_read_map_configurations(built, scenes, rows, capsys, monkeypatch):
    assert main(["validate", str(built), "--scenes", str(scenes), "--quiet"]) == 0
    assert "valid:" in capsys.readouterr().out
    assert main(["prompts", str(built), "--config", f"{MAP},{TWIN_MAP}"]) == 0
    prompts = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(prompts) == 64 and {p["id"]: p for p in prompts}.keys() >= rows["full"].keys()
    for prompt in prompts:
        if prompt["id"] in rows["full"]:
            assert prompt["messages"][0]["content"] == rows["full"][prompt["id"]]["prompt"]
    assert main(["audit", str(built)]) == 0
    yes_no, maps = capsys.readouterr().out.split("\nmaps: ")
    assert f"| {BASE} |" in yes_no and "map_" not in yes_no  # a map has no answer to guess, but a map to draw
    for config, count in ((MAP, 32), (TWIN_MAP, 32), (AGENT_MAP, 16)):
        assert f"| {config} | all | {count} | " in maps
    files = upload_plan(built)
    assert f"data/{MAP}/test-00000.parquet" in files and f"data/{TWIN_MAP}/test-00000.parquet" in files
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["push", str(built), "--repo", "someone/roomspace-maps"]) == 1
    assert "nothing was sent" in capsys.readouterr().err


def test_run_model_then_score_agree_with_score_item(built, rows, tmp_path):
    """A served model answers the map prompts in turn with the witness, a broken map and garbage;
    `score` reports what score_item says of each answer."""
    by_prompt = {row["prompt"]: row for row in rows["full"].values()}
    said = {}

    def respond(path, body):
        row = by_prompt[body["messages"][0]["content"]]
        kind = len(said) % 3
        text = ["Answer:\n" + row["answer"], "Answer:\n" + moved(row["answer"], row["d"], 2, (0, 0), row["n"]),
                "I would rather not."][kind]
        said[row["id"]] = text
        return 200, completion(body, text)

    chat = LoopbackChat(respond)
    try:
        predictions = tmp_path / "model.jsonl"
        assert main(["run-model", str(built), "--base-url", chat.root + "/v1", "--model", "loop", "--out",
                     str(predictions), "--config", MAP, "--concurrency", "1", "--quiet"]) == 0
    finally:
        chat.close()
    assert said.keys() == rows["full"].keys()
    outcomes = [score_item(rows["score"][k], text) for k, text in said.items()]
    (group,) = scores(built, tmp_path, "--config", MAP, "--predictions", str(predictions), "--name", "loop")["groups"]
    metrics = group["overall"]["systems"]["loop"]
    assert metrics["unparseable"] == sum(o.status[0, 0] == UNPARSEABLE for o in outcomes) >= 10
    assert metrics["map_consistent"]["value"] == pytest.approx(sum(o.correct[0, 0] for o in outcomes) / 32)
    assert metrics["map_facts"] == pytest.approx(sum(o.jaccard[0, 0] for o in outcomes) / 32)


def test_export_gives_the_map_as_target_and_the_prompt_only_rows(built, rows, capsys):
    assert main(["export", str(built), "--split", "test", "--config", MAP, "--format", "chat", "--maps"]) == 0
    for line in capsys.readouterr().out.splitlines():
        user, assistant = json.loads(line)["messages"]
        row = rows["full"][next(k for k, r in rows["full"].items() if r["prompt"] == user["content"])]
        assert assistant["content"] == "Answer:\n" + row["answer"]  # the map once: no cognitive map before it
        assert parse_map(assistant["content"], row["n"], row["d"]).cells == tuple((o["i"], o["j"]) for o in row["objects"])
    assert main(["export", str(built), "--split", "test", "--config", MAP, "--format", "prompt"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 32 and all(list(record) == ["prompt", *REWARD_COLUMNS] for record in records)
    first = records[0]
    assert first["prompt"] == [{"role": "user", "content": rows["full"][first["id"]]["prompt"]}]


# --- the reward ----------------------------------------------------------------------------------


def completions_for(row: dict) -> list[str]:
    """A right, a wrong (or partly right) and an unparseable answer to a row."""
    if row["question_type"] == "MAP":
        return ["Answer:\n" + row["answer"], "Answer:\n" + moved(row["answer"], row["d"], 1, (0, 0), row["n"]),
                "Answer:\n1 2 3"]
    if row["question_type"] == "YN":
        return [f"Answer: {row['answer']}", "Answer: " + ("No" if row["answer"] == "Yes" else "Yes"), "Answer: maybe"]
    first = row["answer"].split(", ")[0]
    outside = next(o for o in row["options"] if o not in row["answer"].split(", ")) if len(row["answer_set"]) < 9 \
        else first
    return [f"Answer: {row['answer']}", f"Answer: {first}, {outside}", "Answer: nowhere"]


def test_the_reward_is_the_score_of_each_completion_as_grpo_calls_it(built, tmp_path, capsys):
    assert main(["export", str(built), "--split", "test", "--config", f"{BASE},{MAP}", "--format", "prompt"]) == 0
    exported = tmp_path / "prompts.jsonl"
    exported.write_text(capsys.readouterr().out, encoding="utf-8")
    dataset = datasets.load_dataset("json", data_files=str(exported), split="train", cache_dir=str(tmp_path / "cache"))
    assert set(dataset.column_names) == {"prompt", *REWARD_COLUMNS}
    scored = {row.id: row for row in read_score_rows(open_rows(built), [BASE, MAP])}
    # GRPO repeats each prompt for its group of completions and passes every column but `prompt` alongside.
    batch = [(k, text) for k in range(len(dataset)) for text in completions_for(dataset[k])]
    columns = {name: [dataset[k][name] for k, _ in batch] for name in dataset.column_names if name != "prompt"}
    completions = [[{"role": "assistant", "content": text}] for _, text in batch]
    arguments = dict(prompts=[dataset[k]["prompt"] for k, _ in batch], completions=completions,
                     completion_ids=[[0]] * len(batch), trainer_state=None, **columns)
    partial, exact = roomspace_reward(**arguments), roomspace_exact_reward(**arguments)
    assert len(partial) == len(exact) == len(batch) == 3 * (68 + 32)
    for (k, text), reward, right in zip(batch, partial, exact):
        row = scored[dataset[k]["id"]]
        outcome = score_item(row, text)
        if outcome.status[0, 0] != SCORED:
            assert reward == right == 0.0
            continue
        assert right == float(outcome.correct[0, 0])
        assert reward == (right if row.question_type == "YN" else pytest.approx(float(outcome.jaccard[0, 0])))
    assert sum(exact[0::3]) == len(dataset)  # every right answer earns 1
    maps = [reward for (k, _), reward in zip(batch, partial) if dataset[k]["question_type"] == "MAP"]
    assert 0 < sum(maps[1::3]) < len(maps[1::3])  # a broken map earns the share of facts it keeps
    strings = roomspace_reward(prompts=None, completions=[text for _, text in batch[:6]],
                               **{name: values[:6] for name, values in columns.items()})
    assert strings == partial[:6]  # a standard (not conversational) dataset's completions are strings
