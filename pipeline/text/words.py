"""How a story names things: object names, articles, lists, and the words of each relation code."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.data import data_json
from pipeline.scene.records import SceneObject
from pipeline.spatial.relations import relation_words


def type_words(object_type: str) -> str:
    names = data_json("vocabulary.json")["object_names"]
    return names.get(object_type) or re.sub(r"(?<=[a-z])(?=[A-Z])", " ", object_type).lower()


def object_names(chosen: list[SceneObject], intro: list[int]) -> list[str]:
    """Names in o order: a type met once is named by its words, repeated types are numbered in story order."""
    words = [type_words(o.type) for o in chosen]
    counts = {w: words.count(w) for w in words}
    names = list(words)
    seen: dict[str, int] = {}
    for k in intro:
        if counts[words[k]] > 1:
            seen[words[k]] = seen.get(words[k], 0) + 1
            names[k] = f"{words[k]} {seen[words[k]]}"
    return names


def object_labels(prominent: Sequence[SceneObject], named: Mapping[str, str] | None = None) -> dict[str, str]:
    """{object id: name} of the prominent objects of a room that an image labels: every one of them.

    An object a story names keeps that name (`named`: {object id: name}); any other is called by
    its type words, numbered when the room holds more than one of its type: after the numbers the
    story uses ("chair 3" beside the story's "chair 1" and "chair 2"), else from 1, in the order of
    `prominent`, so that the k labels of a type are always "chair 1" to "chair k". Where a story
    names one object of a type the room holds several of by the bare type words (its only chair:
    "the chair"), no number beside it could make the labels 1 to k, so the others are "other
    chair" (vocabulary.json's `other_label`), numbered from 1 where there are several: left
    unlabelled, they would make "the chair" either of them in the picture. No two objects share a name.
    """
    named = dict(named or {})
    labels: dict[str, str] = {}
    words = {o.id: type_words(o.type) for o in prominent}
    for word in dict.fromkeys(words.values()):
        ids = [i for i, w in words.items() if w == word]
        taken = [named[i] for i in ids if i in named]
        others = [i for i in ids if i not in named]
        if word in taken:  # the story's bare name: the others of its type are the other ones
            other = data_json("vocabulary.json")["other_label"].format(words=word)
            labels.update((i, named[i]) for i in ids if i in named)
            labels.update((i, other if len(others) == 1 else f"{other} {k}") for k, i in enumerate(others, 1))
            continue
        following = max((int(name[len(word) + 1:]) for name in taken), default=0) + 1
        for i in ids:
            if i in named:
                labels[i] = named[i]
            elif len(ids) == 1:
                labels[i] = word
            else:
                labels[i] = f"{word} {following}"
                following += 1
    if len(set(labels.values())) != len(labels):
        raise ValueError(f"object names are not distinct: {sorted(labels.values())}")
    return labels


class Phrases:
    """How the story refers to each named object: "the bed" and "a bed", or "chair 1" for both."""

    def __init__(self, names: list[str], words: list[str]) -> None:
        self.numbered = {name for name, word in zip(names, words) if name != word}

    def ref(self, name: str) -> str:
        return name if name in self.numbered else f"the {name}"

    def intro(self, name: str) -> str:
        if name in self.numbered:
            return name
        return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def join_words(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sentence(text: str) -> str:
    return text[0].upper() + text[1:]


Words = Callable[[str, str, str], str]  # (code, view, field) -> words, as relations.relation_words


@dataclass(frozen=True)
class Wording:
    """The words a story is told in: how it refers to objects, and the words of each relation code."""

    phrases: Phrases
    words: Words = relation_words
    glossary: str = ""  # told after the frame: a twin's definitions of its invented words
