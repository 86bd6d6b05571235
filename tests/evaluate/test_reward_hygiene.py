"""Reward hygiene (issue 44): the reward reads only the final answer line, naming every option earns only
that answer's Jaccard, and an empty or unread answer earns 0."""

import pytest

from pipeline.evaluate.answers import parse_relations, parse_yes_no
from pipeline.evaluate.reward import roomspace_exact_reward, roomspace_reward

OPTIONS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west", "same place")
FR = {"question_type": "FR", "answer": "north-west, west", "answer_set": ("W", "NW"), "candidate": None,
      "options": OPTIONS, "d": 9, "facts": None}
YN = {"question_type": "YN", "answer": "Yes", "answer_set": ("NW",), "candidate": "NW", "options": ("Yes", "No"),
      "d": 9, "facts": None}


def reward(row: dict, text: str) -> float:
    return roomspace_reward(completions=[text], **{name: [value] for name, value in row.items()})[0]


@pytest.mark.parametrize("text, read", [
    ("Answer: north-west, west\nOr perhaps every direction: north, south, east.", ("W", "NW")),
    ("It might be north, or east, or south.\nAnswer: west, north-west", ("W", "NW")),
    ("Answer:\n\nwest, north-west\n(north was ruled out)", ("W", "NW")),
    ("North is out, south too.\nSo it is west.", ("W",)),  # no mark: the last line with anything on it
])
def test_only_the_final_answer_line_is_read(text, read):
    assert parse_relations(text).relations == read
    assert reward(FR, text) == len(read) / 2


def test_a_yes_or_no_outside_the_answer_line_is_not_read():
    assert parse_yes_no("No doubt about it.\nAnswer: Yes").yes is True
    assert parse_yes_no("Answer: Yes\nNo, wait.").yes is True  # before: both Yes and No, unread
    assert reward(YN, "Answer: Yes\nNo, wait.") == 1.0


def test_naming_every_option_earns_its_jaccard_and_no_more():
    everything = "Answer: " + ", ".join(OPTIONS)
    assert reward(FR, everything) == pytest.approx(2 / 9)
    assert roomspace_exact_reward(completions=[everything], **{k: [v] for k, v in FR.items()}) == [0.0]
    assert reward(FR, "Answer: north-west, west") == 1.0
    assert reward(FR, "Answer: west") == 0.5


@pytest.mark.parametrize("text", ["", "   \n\n", "Answer:", "I cannot tell.", "Answer: maybe west",
                                  "Answer: not north"])
def test_an_empty_or_unparseable_answer_earns_nothing(text):
    assert reward(FR, text) == 0.0
    assert reward(YN, text) == 0.0
