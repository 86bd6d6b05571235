"""Free-text model answers -> relation codes (FR) or Yes/No (YN); anything ambiguous does not parse.

The words are those of relations.json in either view (labels such as "north-west" or
"front-left", phrases such as "in front of and to the left of"), the codes themselves ("NW"),
and a vertical and a horizontal word side by side ("behind-left", "left front"), which is how
the table builds its diagonal labels. Only the final answer line is read (`answer_line`): what
follows the last "Answer:" on its line (or the next line with anything on it), or without such a
mark the last line with anything on it, so reasoning before it, and anything written after it, is
ignored: a reward can be earned only by the answer given.

Parsing refuses rather than guesses: a negation or a hedge (a model writing "not north" or
"maybe west" has not named a set), "north and west" outside the table's own phrases (one
diagonal or two relations?), no relation at all, or both Yes and No, each give a problem and
the answer is counted as unparseable, never scored.

A row that names its options' codes (`option_codes`: the composition kind's relation names, its
own or invented ones) is read by those names alone (`parse_named`): a name, with or without its
arguments, as "TPPi(x, z)". Arguments the other way round name the converse relation, as Cohn and
Blackwell read them: "TPPi(z, x)" is TPP(x, z), "DC(z, x)" is DC(x, z); a relation between other
things ("EC(x, y)") is a problem. A name of three letters or more is read in any case ("TPPI"),
a shorter one as written ("N", "PO").

A map (question type MAP, pipeline.text.maps) is read by `parse_map`, from after the last "Answer:"
too: exactly one block of d lines of d space-separated tokens, "." for an empty cell and digits for
the objects in a cell (each digit one object, 1 ... n), each object exactly once. Lines around the
block that are not map rows (a legend, a code fence) are ignored; a second block, a row of another
length, a missing or repeated object or a number no object has is a problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from functools import cache

from pipeline.data import data_json
from pipeline.errors import RoomspaceError
from pipeline.spatial.relations import DIRECTIONS, VIEWS, converse, direction_signs, relation_words
from pipeline.text.targets import read_map

ANSWER_MARK = re.compile(r"\banswer\s*:", re.IGNORECASE)
TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|[,;:/|.()]")  # words, and the marks that separate list items
FILLER = frozenset({"the", "to", "of"})  # dropped from text and vocabulary alike: "to the left of" = "left"
NEGATIONS = frozenset({"not", "no", "never", "cannot", "none", "neither", "nor", "impossible"})
HEDGES = frozenset({"maybe", "perhaps", "probably", "unsure", "unclear", "either"})
POLAR = {"yes": True, "no": False}
MAP_ROW = re.compile(r"[ \t]*(?:(?:\.|\d+)[ \t]+)*(?:\.|\d+)[ \t]*")  # a line of map cells


@dataclass(frozen=True)
class ParsedAnswer:
    relations: tuple[str, ...] = ()  # FR: the codes named, canonical order
    yes: bool | None = None  # YN
    cells: tuple[tuple[int, int], ...] = ()  # MAP: the (i, j) cell of objects 1 ... n
    problem: str | None = None  # why the text did not parse; None when it did

    @property
    def parsed(self) -> bool:
        return self.problem is None


def tokens(text: str) -> list[str]:
    """Lower-case words and separators, without filler; a direction code written in capitals stays the code."""
    words = TOKEN.findall(text.replace("\u2019", "'"))
    return [w if w in DIRECTIONS else w.lower() for w in words if w.lower() not in FILLER or w in DIRECTIONS]


@cache
def vocabulary() -> dict[tuple[str, ...], str]:
    """Word sequences -> code, from every label and phrase of both views, plus the codes themselves."""
    vocab: dict[tuple[str, ...], str] = {}
    for code in DIRECTIONS:
        vocab[(code,)] = code
        for view in VIEWS:
            for field in ("label", "phrase"):
                words = tuple(tokens(relation_words(code, view, field)))
                variants = [words, words[:-1]] if words[-1] == "as" else [words]  # "in the same place (as)"
                if field == "label":
                    variants.append(("".join(words),))  # "northwest"
                for variant in variants:
                    if vocab.setdefault(variant, code) != code:
                        raise RoomspaceError(f"relation words {' '.join(variant)!r} name two codes")
    return vocab


def mentions(words: list[str]) -> list[tuple[str, int, int]]:
    """(code, start, end) of each relation named, longest match first, left to right."""
    vocab = vocabulary()
    longest = max(map(len, vocab))
    found, k = [], 0
    while k < len(words):
        for size in range(min(longest, len(words) - k), 0, -1):
            code = vocab.get(tuple(words[k:k + size]))
            if code is not None:
                found.append((code, k, k + size))
                k += size
                break
        else:
            k += 1
    return found


def joined(found: list[tuple[str, int, int]], words: list[str]) -> tuple[list[str], str | None]:
    """Codes, a vertical and a horizontal word side by side merged into their diagonal; with a
    problem when the two are joined by "and" (one diagonal, or a list of two relations?)."""
    codes: list[str] = []
    k = 0
    while k < len(found):
        code, first, end = found[k]
        if k + 1 < len(found):
            following, start, last = found[k + 1]
            signs = direction_signs(code), direction_signs(following)
            vertical = next((s for s in signs if s[0] == 0 and s[1] != 0), None)
            horizontal = next((s for s in signs if s[0] != 0 and s[1] == 0), None)
            if vertical and horizontal and not {words[first], words[start]} & set(DIRECTIONS):  # "N W": a list
                if words[end:start] == ["and"]:
                    return codes, f"ambiguous {' '.join(words[first:last])!r}"
                if not words[end:start]:
                    codes.append(next(c for c in DIRECTIONS if direction_signs(c) == (horizontal[0], vertical[1])))
                    k += 2
                    continue
        codes.append(code)
        k += 1
    return codes, None


def answer_part(text: str) -> str:
    marks = list(ANSWER_MARK.finditer(text))
    return text[marks[-1].end():] if marks else text


def answer_line(text: str) -> str:
    """The final answer line: what follows the last "Answer:" on its line (the next line that has
    anything, when nothing does), or without such a mark the text's last line that has anything.
    A relation or a Yes written anywhere else, before or after, is not read."""
    marks = list(ANSWER_MARK.finditer(text))
    lines = [line for line in (text[marks[-1].end():] if marks else text).splitlines() if line.strip()]
    return (lines[0] if marks else lines[-1]) if lines else ""


def parse_relations(text: str) -> ParsedAnswer:
    words = tokens(answer_line(text))
    refused = _refusal(words, negations=True)
    if refused:
        return ParsedAnswer(problem=refused)
    codes, ambiguous = joined(mentions(words), words)
    if ambiguous:
        return ParsedAnswer(problem=ambiguous)
    if not codes:
        return ParsedAnswer(problem="names no relation")
    return ParsedAnswer(relations=tuple(c for c in DIRECTIONS if c in set(codes)))


def parse_yes_no(text: str) -> ParsedAnswer:
    words = tokens(answer_line(text))
    refused = _refusal(words, negations=False)  # "No, it can't." is a plain No
    if refused:
        return ParsedAnswer(problem=refused)
    said = {POLAR[w] for w in words if w in POLAR}
    if len(said) != 1:
        return ParsedAnswer(problem="says both Yes and No" if said else "says neither Yes nor No")
    return ParsedAnswer(yes=said.pop())


def _refusal(words: list[str], negations: bool) -> str | None:
    bad = sorted({w for w in words if w in HEDGES or negations and (w in NEGATIONS or w.endswith("n't"))})
    return f"hedged or negated ({', '.join(bad)})" if bad else None


def parse_map(text: str, objects: int, d: int) -> ParsedAnswer:
    """A drawn map of `objects` objects on the d x d grid: their cells, i from the left of a line, j
    from the bottom line up (module docstring)."""
    blocks: list[list[str]] = []
    previous = False
    for line in answer_part(text).splitlines():
        if not line.strip():
            continue  # blank lines neither start nor end a block
        is_row = MAP_ROW.fullmatch(line) is not None
        if is_row:
            if not previous:
                blocks.append([])
            blocks[-1].append(line)
        previous = is_row
    if len(blocks) != 1:
        return ParsedAnswer(problem="draws two maps" if blocks else "draws no map")
    cells, problem = read_map(blocks[0], objects, d)
    return ParsedAnswer(cells=cells or (), problem=problem)


@cache
def converses() -> dict[str, str]:
    """Every relation code whose converse an answer may name: the directions and RCC-8 (pipeline/data/rcc8.json)."""
    return {**{code: converse(code) for code in DIRECTIONS},
            **{entry["code"]: entry["converse"] for entry in data_json("rcc8.json")["codes"]}}


@cache
def _name_pattern(names: tuple[str, ...]) -> re.Pattern:
    """A relation name, whole, and the arguments written after it, if any."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9])(%s)(?![A-Za-z0-9])(?:\s*\(\s*([^(),]*?)\s*,\s*([^(),]*?)\s*\))?"
                      % alternatives, re.IGNORECASE)


def _argument(text: str) -> str:
    return " ".join(text.lower().removeprefix("the ").split())


def parse_named(text: str, names: Mapping[str, str], arguments: Sequence[str] | None = None) -> ParsedAnswer:
    """The codes an answer names by `names` (name -> code, in the codes' order), the converse of
    one written with `arguments` the other way round (module docstring)."""
    words = tokens(answer_line(text))
    refused = _refusal(words, negations=True)
    if refused:
        return ParsedAnswer(problem=refused)
    by_name = {name.lower(): name for name in names}
    asked = tuple(map(_argument, arguments)) if arguments else None
    named = set()
    for match in _name_pattern(tuple(names)).finditer(answer_line(text)):
        name = by_name[match.group(1).lower()]
        if match.group(1) != name and len(name) < 3:
            continue  # "po", "n": a short name counts only as written
        code = names[name]
        if match.group(2) is not None and asked is not None:
            written = (_argument(match.group(2)), _argument(match.group(3)))
            if written == asked[::-1]:
                code = converses()[code]
            elif written != asked:
                return ParsedAnswer(problem=f"{match.group(0)!r} relates other things than "
                                            f"{arguments[0]} and {arguments[1]}")
        named.add(code)
    if not named:
        return ParsedAnswer(problem="names no relation")
    return ParsedAnswer(relations=tuple(code for code in names.values() if code in named))


def parse_answer(text: str, question_type: str, names: Mapping[str, str] | None = None,
                 arguments: Sequence[str] | None = None) -> ParsedAnswer:
    """An answer to a question of this type; `names` (option -> code) and `arguments` for a row that names its codes."""
    if question_type == "FR":
        return parse_relations(text) if names is None else parse_named(text, names, arguments)
    if question_type == "YN":
        return parse_yes_no(text)
    raise RoomspaceError(f"unknown question type {question_type!r}; expected FR or YN")
