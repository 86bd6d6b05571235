"""Training targets and cognitive maps: what a model fine-tuned on a row should write (data/training.json).

Both are pure functions of a dataset row (a dict as read from Parquet), like the row's prompt, so
they are computed where they are needed (`roomspace export`) rather than stored: the test split's
files stay as they were, and every split of every configuration kind has them alike.

* `target_text`: the reasoning, then the answer line in the form pipeline.evaluate.answers reads.
  Where the row's reasoning path decides the answer set (`path_decides`), the path alone; where it
  does not, the path (if the story has one), the story's other facts about the objects it runs
  through (the query pair's when there is no path: regions, wall contact, distances, shortcuts),
  the grid's edges, and the set they leave. A YN target then says whether the asked relation is in
  that set; an rcc8 target names the footprints' relation; a vision pair question's, the relation
  of the two centres. In a twin row the path keeps the story's invented words and the other facts
  are in the familiar words its glossary defines.
* `cognitive_map`: the rasterised scene as text, the d x d grid with o_1 ... o_n numbered 1 ... n
  in their snapped cells, in the row's view (the same picture in both views: north is the far
  wall; only the words of its caption differ). An agent row's answer is in the frame of the
  observer its question poses (pipeline.spatial.frames): its map is turned so that the wall faced
  is at the top, and its other facts are said in that frame, as its path and answer are.

A map question's target (pipeline.text.maps) is its answer, the witness map, after "Answer:".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.data import data_json
from pipeline.spatial.frames import quarters, seen_facing, turn_cell
from pipeline.spatial.relations import DIRECTIONS, relation_words
from pipeline.text.prompts import MAP_QUESTION, PAIR_KINDS, PLAN_QUESTION, RCC8_SETTING, row_kind
from pipeline.text.words import sentence


def _words() -> dict:
    return data_json("training.json")


def ref(name: str) -> str:
    """How stories refer to a named object: "chair 1" (numbered) as it is, "the bed" otherwise
    (pipeline.text.words.Phrases, whose type words a row does not carry)."""
    return name if name.rsplit(" ", 1)[-1].isdigit() else f"the {name}"


def facing(row: Mapping) -> str:
    """The wall faced by the observer the row's question poses: north unless it is an agent row."""
    return (row.get("question_pose") or {}).get("facing", "N")


def fact_text(fact: Mapping, view: str, facing_: str = "N") -> str:
    """One stated fact (in plan codes) in the view's familiar words, as an observer facing `facing_`
    says it: "the bed is in the north-west corner"."""
    words = _words()["target"]
    relation = relation_words(seen_facing(fact["relation"], facing_), view, "phrase")
    if fact["object"] is None:
        return words["fact"].format(subject=ref(fact["subject"]), relation=relation)
    return words["pair_fact"].format(subject=ref(fact["subject"]), relation=relation, object=ref(fact["object"]))


def other_facts(row: Mapping) -> list[Mapping]:
    """The story's facts beside the path's links that concern the story objects the path runs through
    (the query pair when the story has no path), in story order. An agent story's facts about its
    observer are left out: the map and the target speak of the story's objects."""
    links = [step["fact"] for step in row["path"]]
    on_path = {row["query"]["subject"], row["query"]["object"], *(step["reached"] for step in row["path"])}
    on_path &= {obj["name"] for obj in row["objects"]}
    return [fact for fact in row["facts"] if fact not in links
            and fact["subject"] in on_path and (fact["object"] is None or fact["object"] in on_path)]


def conclusion(row: Mapping, prefix: str) -> str:
    """The answer set as a sentence: "<prefix> chair 2 is south-west of or west of the counter."."""
    words, view = _words()["target"], row["view"]
    subject, obj = ref(row["query"]["subject"]), ref(row["query"]["object"])
    if len(row["answer_set"]) == len(DIRECTIONS):
        return words["any"].format(prefix=prefix, subject=subject, object=obj)
    phrases = [relation_words(code, view, "phrase") for code in row["answer_set"]]
    relations = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]
    return words["so"].format(prefix=prefix, subject=subject, relations=relations, object=obj)


def reasoning(row: Mapping) -> list[str]:
    """The sentences before the YN verdict and the answer line."""
    words, view = _words()["target"], row["view"]
    kind = row_kind(row["setting"], row.get("modality"))
    if row.get("naming") is not None:  # a composition row (pipeline.text.composition)
        return [composition_reasoning(row)]
    if row.get("shape_kind") is not None:  # a shapes row (pipeline.text.shapes): its one relation
        return [data_json("coordinates.json")["target"].format(answer=row["answer"])]
    if kind == "rcc8":
        code = row["true_relation"]
        label = next(entry["label"] for entry in data_json("rcc8.json")["codes"] if entry["code"] == code)
        regions = [words["floor"] if name == "room" else words["footprint"].format(name=ref(name))
                   for name in (row["query"]["subject"], row["query"]["object"])]
        verdict = words["rcc8_yes"] if row["candidate"] == code else words["rcc8_no"].format(code=row["candidate"])
        return [sentence(words["rcc8"].format(a=regions[0], b=regions[1], relation=label, code=code)), verdict]
    if kind in PAIR_KINDS:
        return [words["centres"].format(subject=ref(row["query"]["subject"]), object=ref(row["query"]["object"]),
                                        relation=relation_words(row["continuous_relation"], view, "phrase"))]
    sentences = [row["path_text"]] if row["path_text"] else []
    if not row["path_decides"]:
        facts = words["fact_join"].join(fact_text(fact, view, facing(row)) for fact in other_facts(row))
        if facts:
            template = words["facts"] if row["path"] else words["no_path"]
            sentences.append(template.format(facts=facts, subject=ref(row["query"]["subject"]),
                                             object=ref(row["query"]["object"])))
        sentences.append(conclusion(row, words["grid"].format(d=row["d"])))
    return sentences


def composition_reasoning(row: Mapping) -> str:
    """What a composition row's stated relations allow, before its answer (pipeline/data/composition.json)."""
    words = data_json("composition.json")["target"]
    first, second = row["arguments"]
    if len(row["premises"]) == 2:
        return words["composition"].format(x=first, z=second, relations=row["answer"])
    name = row["options"][list(row["option_codes"]).index(row["premises"][0])]
    return words["neighbourhood"].format(relation=f"{name}({first}, {second})", relations=row["answer"])


def target_text(row: Mapping) -> str:
    """What a model should answer the row's prompt with: reasoning, then "Answer: ..." (module docstring);
    for a map question, its witness map after the answer line; for a plan question (pipeline.text.object_tasks),
    its gold plan as the prompt asks for it, JSON steps inside <ans></ans>."""
    words = _words()["target"]
    if row["question_type"] == MAP_QUESTION:
        return words["map_answer"].format(map=row["answer"])
    if row["question_type"] == PLAN_QUESTION:
        return row["answer"]
    sentences = reasoning(row)
    if row["question_type"] == "YN" and row["setting"] != RCC8_SETTING:
        verdict = words["yes"] if row["candidate"] in row["answer_set"] else words["no"]
        sentences.append(sentence(verdict.format(relation=relation_words(row["candidate"], row["view"], "label"))))
    return " ".join(sentence(s) for s in sentences) + "\n" + words["answer"].format(answer=row["answer"])


def map_lines(cells: Sequence[tuple[int, int]], d: int) -> list[str]:
    """The d x d grid as text, a line per row of cells from the top (j = d - 1) down, a token per cell
    from the left (i = 0), space-separated: object k of `cells` (numbered from 1) in its cell, the
    numbers of objects sharing a cell written together ("13"), "." in an empty cell; tokens padded to
    one width. The form the map question's answer takes, which pipeline.evaluate.answers.parse_map reads."""
    empty = _words()["map"]["empty"]
    drawn: dict[tuple[int, int], str] = {}
    for number, cell in enumerate(cells, 1):
        drawn[cell] = drawn.get(cell, "") + str(number)
    width = max(map(len, drawn.values()), default=1)
    rows = [[empty.rjust(width)] * d for _ in range(d)]  # rows[j][i]: every cell empty, then the drawn ones
    for (i, j), numbers in drawn.items():
        rows[j][i] = numbers.rjust(width)
    return [" ".join(row) for row in reversed(rows)]


def read_map(lines: Sequence[str], objects: int, d: int) -> tuple[tuple[tuple[int, int], ...] | None, str | None]:
    """A map as `map_lines` writes it, read back: (the cells of objects 1 ... `objects`, None), i from
    the left of a line and j from the last line up; or (None, what is wrong) when the lines are not d
    rows of d tokens holding every object exactly once (a token's digits: one object each)."""
    rows = [line.split() for line in lines]
    if len(rows) != d:
        return None, f"draws {len(rows)} rows, not {d}"
    found: dict[int, list[tuple[int, int]]] = {}
    empty = _words()["map"]["empty"]
    for k, row in enumerate(rows):
        if len(row) != d:
            return None, f"row {k + 1} has {len(row)} cells, not {d}"
        for i, token in enumerate(row):
            if token != empty and not token.isdecimal():
                return None, f"row {k + 1} has the cell {token!r}, neither {empty} nor objects' numbers"
            for digit in "" if token == empty else token:
                found.setdefault(int(digit), []).append((i, d - 1 - k))
    strange = sorted(set(found) - set(range(1, objects + 1)))
    if strange:
        return None, f"draws object {strange[0]}; the objects are 1 to {objects}"
    for number in range(1, objects + 1):
        times = len(found.get(number, ()))
        if times != 1:
            return None, f"draws object {number} {times} times, not once"
    return tuple(found[number][0] for number in range(1, objects + 1)), None


def cognitive_map(row: Mapping) -> str:
    """The row's rasterised scene as a text grid with a legend (module docstring); "" for a row
    without story objects (a vision pair question)."""
    words, d = _words()["map"], row["d"]
    if not row["objects"]:
        return ""
    turns = -quarters(facing(row))  # the wall faced goes to the top, as seen_facing turns the codes
    grid = map_lines([turn_cell((obj["i"], obj["j"]), turns, d) for obj in row["objects"]], d)
    legend = words["legend_join"].join(words["legend"].format(number=number, name=obj["name"])
                                       for number, obj in enumerate(row["objects"], 1))
    pose = row.get("question_pose")
    caption = words["observer"].format(d=d, wall=words["walls"][pose["facing"]]) if pose else words[row["view"]].format(d=d)
    return "\n".join([caption, *grid, legend])
