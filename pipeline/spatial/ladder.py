"""The difficulty ladder: bounded reasoners and the level of a question (docs/semantics.md section 22).

Each reasoner is a sound relaxation of the exact checker: the directions it leaves open for the
asked pair always hold the exact answer set, and each holds the next one's.

- R0, stated: only the facts about the two asked objects themselves (a fact between them, each
  one's region and wall facts), solved exactly;
- R1, chain: R0's answer met with the composition of the direction facts along the shortest chain
  from one asked object to the other (`reasoning.reasoning_path`);
- R2, local: every fact, propagated without search (`checker.propagated_answer`): each axis
  reasoned exactly, then arc consistency over cells and path consistency over direction-and-distance
  atoms to a common fixpoint, and arc consistency again with the asked direction added;
- R3, search: the exact checker; its effort on a question is the branch decisions its search
  needs to refute what R2 leaves open (`checker.refutation_effort`).

A question's level is the least k whose R_k answers it exactly: 0 when the asked objects' own
facts give the answer set, 3 when only search does.

A whole-story question asks which claims of one kind (an object's regions, its wall relation, a
pair's distance class on one scale) can hold together with the story (`claim_rung`): R0 solves the
asked objects' own facts with each claim exactly, R1 is R0 (a chain composes directions, not places
or distances), R2 keeps a claim that survives the story's closure (`checker.propagated_holding`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pipeline.spatial.checker import (Settled, pair_answer, pair_holding, propagated_answer, propagated_holding,
                                      refutation_effort)
from pipeline.spatial.facts import Fact
from pipeline.spatial.reasoning import PathStep, reasoning_path
from pipeline.spatial.relations import DIRECTIONS, in_canonical_order

REASONERS = ("stated", "chain", "local", "search")  # R0 ... R3: level k is answered by REASONERS[k]
BOUNDED = REASONERS[:-1]  # the reasoners short of the checker, each a `score --baseline` (r0, r1, r2)


@dataclass(frozen=True)
class Bounded:
    """What each bounded reasoner leaves open for a question's pair, in the row's frame and
    canonical order: a baseline answers FR with its set, YN Yes unless its set rules the candidate out."""

    stated: tuple[str, ...]
    chain: tuple[str, ...]
    local: tuple[str, ...]


@dataclass(frozen=True)
class Rung:
    """A question's place on the ladder."""

    bounded: Bounded  # in plan codes
    level: int  # 0-3: the least k whose R_k gives the exact answer set
    effort: int  # branch decisions the checker's search needs to refute what R2 leaves open (0 below level 3)


def story_variables(facts: Sequence[Fact], query: tuple[str, str]) -> tuple[str, ...]:
    """The objects a story's facts and question name, in order of first mention: an object no fact
    names constrains nothing, so these are all the variables the reasoners need."""
    named = (name for fact in facts for name in (fact.subject, fact.object) if name is not None)
    return tuple(dict.fromkeys((*named, *query)))


def stated_answer(facts: Sequence[Fact], query: tuple[str, str], d: int) -> frozenset[str]:
    """R0: the exact answer of the facts about the asked objects alone."""
    own = [fact for fact in facts if fact.subject in query and (fact.object is None or fact.object in query)]
    return pair_answer(own, query, d)


def chain_answer(facts: Sequence[Fact], query: tuple[str, str], d: int) -> frozenset[str]:
    """R1: R0 met with the composition along the shortest chain of direction facts."""
    return stated_answer(facts, query, d) & _composed(reasoning_path(facts, *query))


def _composed(path: Sequence[PathStep]) -> frozenset[str]:
    """What a chain composes to: its last step's directions; all nine without a chain."""
    return frozenset(path[-1].composed if path else DIRECTIONS)


def rung(facts: Sequence[Fact], query: tuple[str, str], exact: Sequence[str], d: int,
         path: Sequence[PathStep] | None = None, settled: Settled | None = None) -> Rung:
    """The bounded reasoners' answers to a question whose exact answer set is `exact`, its level
    and search effort; R2's answer and the effort are `settled`'s where the checker has settled the
    pair already (`checker.settled_pairs`, for this query)."""
    variables = story_variables(facts, query)
    exact = frozenset(exact)
    stated = stated_answer(facts, query, d)
    chain = stated & _composed(reasoning_path(facts, *query) if path is None else path)
    # R2 lies between the exact answer and R1's (tests/spatial/test_ladder.py): where R1 is exact, so is R2
    local = (chain if chain == exact else settled.local if settled is not None
             else propagated_answer(facts, variables, query, d, exact))
    level = next((k for k, held in enumerate((stated, chain, local)) if held == exact), len(BOUNDED))
    tried = (0 if level < len(BOUNDED) else settled.effort if settled is not None
             else refutation_effort(facts, variables, query, local - exact, d))
    return Rung(Bounded(*(in_canonical_order(held) for held in (stated, chain, local))), level, tried)


def claim_rung(facts: Sequence[Fact], subject: str, obj: str | None, codes: Sequence[str], exact: Sequence[str],
               d: int, local: Iterable[str] | None = None) -> Rung:
    """The bounded reasoners' answers to a whole-story question: which of `codes` (one kind of
    relation of `subject`, to `obj` or, None, in the room) can hold together with the story, the
    exact ones being `exact`; its level and search effort, as `rung` gives a pair question's. `local`,
    where known (`checker.settled_claims`), is those of `codes` R2 keeps."""
    query = (subject, obj)
    own = [fact for fact in facts if fact.subject in query and (fact.object is None or fact.object in query)]
    claims = [Fact(subject, code, obj) for code in codes]
    stated = _held(codes, pair_holding(own, subject, obj, claims, d))
    variables = story_variables(facts, (subject, obj or subject))
    local = (stated if stated == frozenset(exact) else frozenset(local) if local is not None
             else _held(codes, propagated_holding(facts, variables, claims, d)))
    exact = frozenset(exact)
    level = next((k for k, held in enumerate((stated, stated, local)) if held == exact), len(BOUNDED))
    tried = refutation_effort(facts, variables, query, local - exact, d) if level == len(BOUNDED) else 0
    return Rung(Bounded(*(tuple(code for code in codes if code in held) for held in (stated, stated, local))),
                level, tried)


def _held(codes: Sequence[str], held: Sequence[bool]) -> frozenset[str]:
    return frozenset(code for code, kept in zip(codes, held) if kept)
