"""The exact consistency checker (docs/semantics.md section 9).

The question: which of the nine directions of query[0] relative to query[1] leave the facts
satisfiable on the d x d grid. Variables are objects, values are cells, constraints are facts.

How it stays exact and fast:
- every relation is a precomputed table over value pairs, held as bitsets (Python ints, and rows
  of 64-bit words for the compiled loops): row v of a table is the set of values of B compatible
  with A = v, so revising a domain is a few bitwise ORs and ANDs;
- search is backtracking that keeps the network arc consistent (MAC) after every choice; both,
  and R2's path closure, run compiled (pipeline.spatial.propagation);
- directions, regions and NTPP are each a conjunction of one condition on i and one on j, so a
  problem with only those facts splits into two independent problems over d values, and its
  answer is the product of the two axes' answers. TPP ("on some border row OR column") and
  distances couple the axes; a problem with either is searched jointly over cells, with the
  axis answers (which ignore the coupling facts, so they over-approximate) as candidates and
  the axis domains as a first pruning;
- one search per still-open candidate set rather than per direction: each solution found
  settles its direction, and the last search refutes all the rest at once;
- answers are memoised on the fact set, so a story's FR and YN questions in both views cost
  one solve;
- many fact sets over the same objects (a room's settings in every configuration of one n and
  d) are answered through `Answers`, a configuration's settings as one batch: a solution of a
  fact set solves every subset of it, so the directions of a known superset's answer need no
  search, and no search is spent outside a known subset's answer;
- several pairs of the same objects asked of the same fact sets (a balanced configuration's
  askable pairs) are answered together (`answer_sets_together`): every solution found for one
  pair settles a direction of each of the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce
from itertools import accumulate
from operator import and_, or_
from types import ModuleType
from typing import TypeVar

import numpy as np

from pipeline.errors import RoomspaceError
from pipeline.spatial.facts import Fact
from pipeline.spatial.grid import GRID_SIZES, check_grid_size
from pipeline.spatial.relations import (BINARY_CODES, DIRECTIONS, DISTANCE_SCALES, DISTANCES, REGIONS, UNARY_CODES,
                                        band, converse, direction, direction_signs, distance, holds, is_binary,
                                        region_bands)

Arc = tuple[int, int]  # (a, b): a constraint between a and b, seen from a
K = TypeVar("K")
_SIGN_VALUES = (-1, 0, 1)  # the three relations of one axis: sign(x_A - x_B)
_SIGNS = {code: direction_signs(code) for code in DIRECTIONS}  # per axis, what a direction says
_BANDS = {code: region_bands(code) for code in REGIONS}
_DISTANCES = frozenset(DISTANCES)
_CONVERSE = {code: converse(code) for code in BINARY_CODES}
_CODE_INDEX = {code: k for k, code in enumerate(BINARY_CODES)}
_CELLS = {d: [(i, j) for i in range(d) for j in range(d)] for d in GRID_SIZES}  # value i*d + j


def answer_set(facts: Iterable[Fact], variables: Sequence[str], query: tuple[str, str], d: int) -> frozenset[str]:
    """Every direction R such that the facts plus "query[0] is R of query[1]" are satisfiable."""
    variables = tuple(variables)
    (constraints,) = _checked([tuple(facts)], variables, query, d)
    return _answer(constraints, variables, (query[0], query[1]), d, frozenset(), frozenset(DIRECTIONS))


def pair_answer(facts: Iterable[Fact], query: tuple[str, str], d: int) -> frozenset[str]:
    """`answer_set` of facts naming the two asked objects alone (R0's, a layout's): the same few stories
    recur in every room, so each is solved once, memoised with the two objects renamed."""
    if query[0] == query[1]:
        raise RoomspaceError(f"query {query} relates {query[0]!r} to itself")
    return _pair_answer(frozenset(_between(facts, query)), d)


def pair_holding(facts: Iterable[Fact], subject: str, obj: str | None, claims: Iterable[Fact],
                 d: int) -> tuple[bool, ...]:
    """`holding` of claims about `subject` (and `obj`, unless None) given facts naming those alone:
    memoised with them renamed, as `pair_answer` is."""
    named = (subject,) if obj is None else (subject, obj)
    return _pair_holding(frozenset(_between(facts, named)), _between(claims, named), len(named), d)


_PAIR = ("a", "b")  # the asked objects' names in the memos of two-object stories


def _between(facts: Iterable[Fact], named: Sequence[str]) -> tuple[tuple[int, str, int | None], ...]:
    """The facts with each object named by its position in `named` (a RoomspaceError for any other)."""
    position = {name: k for k, name in enumerate(named)}
    try:
        return tuple((position[f.subject], f.relation, None if f.object is None else position[f.object])
                     for f in facts)
    except KeyError as other:
        raise RoomspaceError(f"a fact names {other.args[0]!r}, not one of {tuple(named)}") from None


def _named(facts: Iterable[tuple[int, str, int | None]]) -> list[Fact]:
    return [Fact(_PAIR[a], relation, None if b is None else _PAIR[b]) for a, relation, b in facts]


@lru_cache(maxsize=4096)
def _pair_answer(facts: frozenset[tuple[int, str, int | None]], d: int) -> frozenset[str]:
    return answer_set(_named(facts), _PAIR, _PAIR, d)


@lru_cache(maxsize=4096)
def _pair_holding(facts: frozenset[tuple[int, str, int | None]], claims: tuple[tuple[int, str, int | None], ...],
                  count: int, d: int) -> tuple[bool, ...]:
    return holding(_named(facts), _PAIR[:count], _named(claims), d)


Constraint = tuple[str, str, str | None]  # a fact as a plain tuple: cheap to hash and compare


def _checked(fact_sets: Sequence[tuple[Fact, ...]], variables: tuple[str, ...], query: tuple[str, str] | None,
             d: int) -> list[frozenset[Constraint]]:
    """The fact sets validated, as constraints: each pair stated from the subject that sorts first
    (a pair stated either way is one constraint). A fact several sets hold (a story's settings
    share theirs) is validated and converted once."""
    distinct = {id(fact): fact for facts in fact_sets for fact in facts}
    _validate(tuple(distinct.values()), variables, query, d)
    constraint = {key: (f.subject, f.relation, f.object) if f.object is None or f.subject < f.object
                  else (f.object, _CONVERSE[f.relation], f.subject) for key, f in distinct.items()}
    return [frozenset(constraint[id(fact)] for fact in facts) for facts in fact_sets]


class Answers:
    """Answer sets of many fact sets over the same objects, query and grid, each helped by those
    answered before. Adding facts only removes solutions, so a fact set's answer holds every
    direction of a known superset's answer (those need no search) and lies within a known
    subset's answer: where the two bounds meet, nothing is solved at all."""

    def __init__(self, variables: Sequence[str], query: tuple[str, str], d: int) -> None:
        self.variables, self.query, self.d = tuple(variables), (query[0], query[1]), d
        self._known: dict[frozenset[Constraint], frozenset[str]] = {}
        self._last: list[frozenset[Constraint]] = []  # the fact sets of the last batch

    def answer_sets(self, fact_sets: Mapping[K, Iterable[Fact]]) -> dict[K, frozenset[str]]:
        """The answers of a batch of fact sets (a configuration's settings), asked in the order that
        bounds them best: those the axes decide alone (no TPP, no distance) first, then the
        others from the most facts down. The bounds are sought in this batch and the last one
        only (the build asks a configuration just after the one with a pair more): comparing
        with every set known cost more than the solving it saved."""
        (answers,) = answer_sets_together((self,), fact_sets)
        return answers

    def _bounds(self, constraints: frozenset[Constraint],
                bounds: list[frozenset[Constraint]]) -> tuple[frozenset[str], frozenset[str]]:
        """What the known answers of `bounds` say of the answer of `constraints`: the directions it
        holds (a superset's), and those it lies within (a subset's)."""
        solved, within = frozenset(), frozenset(DIRECTIONS)
        for known in bounds:
            if constraints <= known:
                solved |= self._known[known]
            elif known <= constraints:
                within &= self._known[known]
        return solved, within


def answer_sets_together(answers: Sequence[Answers],
                         fact_sets: Mapping[K, Iterable[Fact]]) -> list[dict[K, frozenset[str]]]:
    """`Answers.answer_sets` of each of several `Answers` over the same objects and grid (one per
    asked pair of a room), the same answers, found together: the network of a fact set is made
    once for every query, and a solution found while one query's directions are sought settles the
    directions of every other pair in it, so those need no search of their own."""
    first = answers[0]
    if any(other.variables != first.variables or other.d != first.d for other in answers):
        raise RoomspaceError("answers found together must be over the same objects and grid")
    checked = dict(zip(fact_sets, _checked([tuple(facts) for facts in fact_sets.values()], first.variables,
                                           first.query, first.d)))
    for other in answers[1:]:
        _validate((), other.variables, other.query, other.d)
    bounds = [list(known._last) for known in answers]
    found: list[dict[K, frozenset[str]]] = [{} for _ in answers]
    for key in sorted(checked, key=lambda key: (_coupled(checked[key]), -len(checked[key]))):
        constraints, sought = checked[key], []
        for k, known in enumerate(answers):
            if constraints not in known._known:
                solved, within = known._bounds(constraints, bounds[k])
                if solved == within:
                    known._known[constraints] = solved
                else:
                    sought.append((k, solved, within))
        if len(sought) == 1:
            ((k, solved, within),) = sought
            answers[k]._known[constraints] = _answer(constraints, first.variables, answers[k].query, first.d,
                                                     solved, within)
        elif sought:
            (ks, solved, within) = zip(*sought)
            queries = tuple(answers[k].query for k in ks)
            for k, answer in zip(ks, _answers(constraints, first.variables, queries, first.d, solved, within)):
                answers[k]._known[constraints] = answer
        for k, known in enumerate(answers):
            found[k][key] = known._known[constraints]
            bounds[k].append(constraints)
    for known in answers:
        known._last = list(checked.values())
    return [{key: answered[key] for key in fact_sets} for answered in found]


def forget_answers() -> None:
    """Clear the memos of answers, so that the next calls are timed cold (the benchmark)."""
    _answer.cache_clear()
    _propagated.cache_clear()
    _closure.cache_clear()
    _refutation_effort.cache_clear()
    _holding.cache_clear()
    _propagated_holding.cache_clear()
    _axis_network.cache_clear()
    _axis_answer.cache_clear()
    _story.cache_clear()
    _settled_pairs.cache_clear()
    _settled_claims.cache_clear()
    _pair_answer.cache_clear()
    _pair_holding.cache_clear()


def _coupled(constraints: frozenset[Constraint]) -> bool:
    """TPP ("on some border row OR column") and distances tie the two axes together."""
    return any(relation == "TPP" or relation in _DISTANCES for _, relation, _ in constraints)


def _validate(facts: tuple[Fact, ...], variables: tuple[str, ...], query: tuple[str, str] | None, d: int) -> None:
    check_grid_size(d)
    if len(set(variables)) != len(variables):
        raise RoomspaceError(f"variables {variables} name an object twice")
    known = set(variables)
    if query is not None:  # None: no pair asked (claims, checked as facts)
        if len(query) != 2 or not set(query) <= known:
            raise RoomspaceError(f"query {query} must name two of the variables {variables}")
        if query[0] == query[1]:
            raise RoomspaceError(f"query {query} relates {query[0]!r} to itself")
    for fact in facts:
        binary = is_binary(fact.relation)  # raises on an unknown code
        if fact.subject not in known:
            raise RoomspaceError(f"fact {fact} is about {fact.subject!r}, which is not a variable")
        if binary and fact.object not in known:
            raise RoomspaceError(f"fact {fact} relates to {fact.object!r}, which is not a variable")
        if binary and fact.object == fact.subject:
            raise RoomspaceError(f"fact {fact} relates {fact.subject!r} to itself")
        if not binary and fact.object is not None:
            raise RoomspaceError(f"fact {fact}: {fact.relation!r} describes one object, not a pair")


@lru_cache(maxsize=4096)
def _answer(facts: frozenset[Constraint], variables: tuple[str, ...], query: tuple[str, str], d: int,
            solved: frozenset[str], within: frozenset[str]) -> frozenset[str]:
    (answer,) = _answers(facts, variables, (query,), d, (solved,), (within,))
    return answer


def _answers(facts: frozenset[Constraint], variables: tuple[str, ...], queries: Sequence[tuple[str, str]], d: int,
             solved: Sequence[frozenset[str]], within: Sequence[frozenset[str]]) -> tuple[frozenset[str], ...]:
    """The answer of each query (a pair of the variables): every direction its pair takes in some
    solution of the facts; the `solved` ones are known to, and none lies outside `within`."""
    unary, binary, pairs = _network(facts, variables, queries)
    (_, i_signs), (_, j_signs) = (_solve_axis(axis, unary, binary, pairs, d) for axis in (0, 1))
    answers = [frozenset(code for code in _axis_product(i, j) if code in held)
               for i, j, held in zip(i_signs, j_signs, within)]
    sought = [k for k, candidates in enumerate(answers) if candidates != solved[k]]
    if _coupled(facts) and sought:
        # the story's joint network, made once for its answers and R2's (`_propagated`)
        joint = _solve_joint(_story(facts, variables, d).network, [answers[k] for k in sought],
                             [solved[k] for k in sought], [pairs[k] for k in sought], d)
        for k, answer in zip(sought, joint):
            answers[k] = answer
    return tuple(answers)


def _network(facts: Iterable[Constraint], variables: tuple[str, ...], queries: Sequence[tuple[str, str]]
             ) -> tuple[list[list[str]], dict[Arc, list[str]], list[tuple[int, int]]]:
    """The facts as codes per variable (unary) and per pair (a, b), a < b ("a is <code> of b"), and
    the queries as pairs of variable positions."""
    index = {name: k for k, name in enumerate(variables)}
    unary: list[list[str]] = [[] for _ in variables]
    binary: dict[Arc, list[str]] = {}
    for subject, relation, obj in facts:
        a = index[subject]
        if obj is None:
            unary[a].append(relation)
            continue
        b = index[obj]
        code = relation if a < b else _CONVERSE[relation]
        binary.setdefault((min(a, b), max(a, b)), []).append(code)
    return unary, binary, [(index[query[0]], index[query[1]]) for query in queries]


def _axis_product(i_signs: frozenset[int], j_signs: frozenset[int]) -> frozenset[str]:
    """The directions whose sign on each axis is one of that axis's."""
    return frozenset(code for code, (si, sj) in _SIGNS.items() if si in i_signs and sj in j_signs)


# ---------------------------------------------------------------------------------------------
# Bounded reasoning (docs/semantics.md section 22): what is decided before any search.


def propagated_answer(facts: Iterable[Fact], variables: Sequence[str], query: tuple[str, str], d: int,
                      exact: Iterable[str] | None = None) -> frozenset[str]:
    """R2, every fact propagated without search: the directions of query[0] relative to query[1]
    that neither axis rules out, each axis reasoned exactly (its orderings, bands and bounds are
    difference constraints), nor the path closure over atoms keeps out (`_closure`), nor arc
    consistency over cells wipes out once "query[0] is R of query[1]" is added. Always holds the
    exact answer; given it (`exact`, which then must be the checker's), its directions are not
    propagated again, and the closure is not made where arc consistency alone leaves no more."""
    variables = tuple(variables)
    (constraints,) = _checked([tuple(facts)], variables, query, d)
    return _propagated(constraints, variables, (query[0], query[1]), d, None if exact is None else frozenset(exact))


@lru_cache(maxsize=4096)
def _propagated(facts: frozenset[Constraint], variables: tuple[str, ...], query: tuple[str, str], d: int,
                exact: frozenset[str] | None) -> frozenset[str]:
    unary, binary, ((q0, qn),) = _network(facts, variables, (query,))
    (_, (i_signs,)), (_, (j_signs,)) = (_solve_axis(axis, unary, binary, [(q0, qn)], d) for axis in (0, 1))
    candidates = _axis_product(i_signs, j_signs)
    if not _coupled(facts) or not candidates or candidates == exact:
        return candidates  # the axes are exact on facts that do not couple them
    known, held = frozenset(), candidates
    if exact is not None:  # its directions: no propagation wipes them out
        network = _story(facts, variables, d).network  # the joint network, made once for every pair asked
        if network is None:
            return frozenset()
        known = candidates & exact
        held = known | _query_survivors(candidates - known, *network, q0, qn, d)
        if held == exact:
            return held
    closure = _closure(facts, variables, d)
    if closure is None:
        return frozenset()
    domains, links, closed = closure
    words = _cell_words(domains, d)
    return known | {code for code in held - known if _closure_claim(words, links, closed, q0, qn, code, d) is not None}


def _query_survivors(candidates: frozenset[str], domains: list[int], arcs: dict[Arc, _Relation], links: Links,
                     q0: int, qn: int, d: int) -> frozenset[str]:
    """The candidates whose query constraint leaves the arc consistent domains without a wipe-out."""
    return frozenset(code for code in candidates
                     if _propagate(list(domains), _query_links(links, arcs, q0, qn, frozenset((code,)), d), (q0, qn)))


@lru_cache(maxsize=256)
def _closure(facts: frozenset[Constraint], variables: tuple[str, ...], d: int
             ) -> tuple[tuple[int, ...], Links, dict[Arc, int]] | None:
    """A story's network closed under arc and path consistency together (`_path_closure`): the
    domains, the links of every pair's closed constraint, and every pair's atoms. None on a wipe-out.
    Made once per story, whatever pair is asked."""
    story = _story(facts, variables, d)
    if story.network is None:
        return None
    domains = list(story.network[0])  # the story's, narrowed here
    closed = _path_closure(domains, story.binary, d)
    return None if closed is None else (tuple(domains), *closed)


def refutation_effort(facts: Iterable[Fact], variables: Sequence[str], query: tuple[str, str | None],
                      refuted: Iterable[str], d: int) -> int:
    """R3's search effort: the branch decisions (values tried) of the checker's search, over cells
    from the arc-consistent network, that shows no solution puts query[0] in any of the `refuted`
    relations to query[1] (directions or distance classes), or, query[1] None, in any of the
    `refuted` regions or wall relations. 0 when propagation alone refutes them (or there are none);
    a RoomspaceError when one of them has a solution."""
    variables = tuple(variables)
    (constraints,) = _checked([tuple(facts)], variables, None if query[1] is None else query, d)
    if query[0] not in variables:
        raise RoomspaceError(f"query {query} must name one of the variables {variables}")
    return _refutation_effort(constraints, variables, (query[0], query[1]), frozenset(refuted), d)


@lru_cache(maxsize=1024)
def _refutation_effort(facts: frozenset[Constraint], variables: tuple[str, ...], query: tuple[str, str | None],
                       refuted: frozenset[str], d: int) -> int:
    if not refuted:
        return 0
    story = _story(facts, variables, d)
    if story.network is None:
        return 0
    index = {name: k for k, name in enumerate(variables)}
    held, tried = story.search(index[query[0]], query[1] and index[query[1]], refuted)
    if held:
        raise RoomspaceError(f"{query[0]} may be {sorted(refuted)} of {query[1] or 'the room'}: not refuted")
    return tried


def split_refutes(facts: Iterable[Fact], variables: Sequence[str], query: tuple[str, str | None], code: str,
                  d: int) -> bool:
    """Whether R2 with one case split refutes "query[0] is <code> (of query[1])": over R2's closure
    (`_closure`) with it added and arc consistent, some object each of whose cells, taken alone,
    leaves arc consistency a wipe-out (or arc consistency wipes out at once). A measure of the
    reasoning a refutation needs (bench/ladder.py), sound but not complete: False does not mean the
    claim can hold."""
    variables = tuple(variables)
    (constraints,) = _checked([tuple(facts)], variables, None if query[1] is None else query, d)
    closure = _story(constraints, variables, d).closure()
    if closure is None:
        return True
    index = {name: k for k, name in enumerate(variables)}
    a, b = index[query[0]], None if query[1] is None else index[query[1]]
    claimed = _closure_claim(*closure, a, b, code, d)
    if claimed is None:
        return True
    words, links = claimed
    for x, row in enumerate(_ints(words)):
        cells = [value for value in range(row.bit_length()) if row >> value & 1]
        if len(cells) > 1 and not any(_arc_consistent(_only(words, x, value), links, (x,)) for value in cells):
            return True
    return False


def _only(words: np.ndarray, x: int, value: int) -> np.ndarray:
    """A copy of the domains (as words) with x's narrowed to the one value."""
    taken = words.copy()
    taken[x] = 0
    taken[x, value // 64] = np.uint64(1) << np.uint64(value % 64)
    return taken


# ---------------------------------------------------------------------------------------------
# Claims: one fact more than a story states, about one object (a region or wall relation) or a
# pair (a direction or distance class). Whether a story and a claim can hold together is what a
# whole-story question asks (docs/semantics.md section 22).


def holding(facts: Iterable[Fact], variables: Sequence[str], claims: Sequence[Fact], d: int) -> tuple[bool, ...]:
    """Exact: for each claim, whether it and every fact can hold together on the d x d grid. A
    solution found for one claim settles every other claim it satisfies, so only the claims that
    cannot hold need a search of their own."""
    variables = tuple(variables)
    story, *claimed = _checked([tuple(facts), *((claim,) for claim in claims)], variables, None, d)
    return _holding(story, variables, tuple(constraint for (constraint,) in claimed), d)


def propagated_holding(facts: Iterable[Fact], variables: Sequence[str], claims: Sequence[Fact],
                       d: int) -> tuple[bool, ...]:
    """R2 of each claim: whether it survives the story's closure (`_closure`, as `propagated_answer`
    makes it): a pair's claim must be one of the atoms the closure leaves the pair, and arc
    consistency over cells with the claim added must not wipe out. Holds `holding`'s every True."""
    variables = tuple(variables)
    story, *claimed = _checked([tuple(facts), *((claim,) for claim in claims)], variables, None, d)
    return _propagated_holding(story, variables, tuple(constraint for (constraint,) in claimed), d)


@lru_cache(maxsize=256)
def _holding(facts: frozenset[Constraint], variables: tuple[str, ...], claims: tuple[Constraint, ...],
             d: int) -> tuple[bool, ...]:
    unary, binary, _ = _network(facts, variables, ())
    network = _story_network(unary, binary, d)
    if network is None:
        return (False,) * len(claims)
    ends = _claim_ends(claims, variables)
    held: list[bool | None] = [None] * len(claims)
    domains, arcs, links = network
    words = _cell_words(domains, d)
    for k, (a, b, code) in enumerate(ends):
        if held[k] is None:
            claimed = _with_claim(words, arcs, links, a, b, frozenset((code,)), d)
            solution = None if claimed is None else _search(*claimed)
            if solution is None:
                held[k] = False
                continue
            for other, (p, q, other_code) in enumerate(ends):
                if held[other] is None and _satisfied(solution, p, q, other_code, d):
                    held[other] = True
    return tuple(held)


@lru_cache(maxsize=256)
def _propagated_holding(facts: frozenset[Constraint], variables: tuple[str, ...], claims: tuple[Constraint, ...],
                        d: int) -> tuple[bool, ...]:
    closure = _closure(facts, variables, d)
    if closure is None:
        return (False,) * len(claims)
    domains, links, closed = closure
    words = _cell_words(domains, d)
    return tuple(_closure_claim(words, links, closed, a, b, code, d) is not None
                 for a, b, code in _claim_ends(claims, variables))


def _claim_ends(claims: Sequence[Constraint], variables: tuple[str, ...]) -> list[tuple[int, int | None, str]]:
    """Each claim as (subject's position, object's position or None, code)."""
    index = {name: k for k, name in enumerate(variables)}
    return [(index[subject], None if obj is None else index[obj], code) for subject, code, obj in claims]


def _with_claim(words: np.ndarray, arcs: dict[Arc, _Relation], links: Links, a: int, b: int | None,
                codes: frozenset[str], d: int) -> tuple[np.ndarray, Links] | None:
    """Arc consistent domains (as words, `_cell_words`) below `words` with "a is one of the `codes`
    (of b)" added, and the links that hold it; None on a wipe-out."""
    if b is None:
        return _with_unary(words, links, a, codes, d)
    trial, query_links = words.copy(), _query_links(links, arcs, a, b, codes, d)
    return (trial, query_links) if _arc_consistent(trial, query_links, (a, b)) else None


def _with_unary(words: np.ndarray, links: Links, a: int, codes: frozenset[str], d: int
                ) -> tuple[np.ndarray, Links] | None:
    """`_with_claim` of a claim about a alone: one of the region or wall `codes`."""
    trial = words.copy()
    trial[a] &= _unary_words(codes, d)
    return (trial, links) if trial[a].any() and _arc_consistent(trial, links, (a,)) else None


def _closure_claim(words: np.ndarray, links: Links, closed: dict[Arc, int], a: int, b: int | None, code: str,
                   d: int) -> tuple[np.ndarray, Links] | None:
    """`_with_claim` of "a is <code> (of b)" over a story's closure (`_closure`: its domains as `words`,
    links and atoms), R2's test of a claim. A pair's code is a union of atoms: met with the pair's
    closed constraint, it is the atoms of both (none: a wipe-out), one relation per set of atoms
    (shared by every story), not a relation made per check."""
    if b is None:
        return _with_unary(words, links, a, frozenset((code,)), d)
    atoms = _relation_atoms(closed, a, b, d) & _code_atoms(code, d)
    if not atoms:
        return None
    trial, query_links = words.copy(), links.with_query(a, b, _atoms_relation(atoms, d),
                                                         _atoms_relation(_converse_atoms(atoms, d), d))
    return (trial, query_links) if _arc_consistent(trial, query_links, (a, b)) else None


def _cell_words(domains: Sequence[int], d: int) -> np.ndarray:
    """Domains over the cells as the compiled loops read them: rows of words, as wide as every cell relation's."""
    return _words(domains, -(-d * d // 64))


@lru_cache(maxsize=None)
def _unary_words(codes: frozenset[str], d: int) -> np.ndarray:
    """The cells where one of the region or wall codes holds, as a row of words (`_cell_words`)."""
    unary = _joint_tables(d).unary
    return _cell_words([reduce(or_, (unary[code] for code in codes), 0)], d)[0]


def _satisfied(solution: Sequence[int], a: int, b: int | None, code: str, d: int) -> bool:
    """Whether a solution (a variable left several values is unconstrained: any of them will do)
    has a claim hold."""
    if b is None:
        return bool(solution[a] & _joint_tables(d).unary[code])
    return bool(_cell_relation(code, d).image(solution[a]) & solution[b])


# ---------------------------------------------------------------------------------------------
# One story asked many things (a hard configuration's pairs and claims): the same answers as
# `answer_set`, `propagated_answer`, `refutation_effort`, `holding` and `propagated_holding`,
# found together on one network. A solution found for one question shows, with each of its
# one-object moves, some of what every other question asks; where it does, neither R2's
# propagation nor a search of its own is needed: R2 is sound, so what holds R2 keeps.


@dataclass(frozen=True)
class Settled:
    """A pair of a story as the checker settles it: the exact answer set (`answer_set`), R2's
    (`propagated_answer`), and the branch decisions refuting what R2 leaves beyond the exact set
    (`refutation_effort`; 0 where R2 is exact)."""

    exact: frozenset[str]
    local: frozenset[str]
    effort: int


@dataclass(frozen=True)
class SettledClaim:
    """A claim about a story as the checker settles it: whether it can hold with every fact
    (`holding`), and whether R2 keeps it (`propagated_holding`)."""

    holds: bool
    local: bool


def settled_pairs(facts: Iterable[Fact], variables: Sequence[str], queries: Sequence[tuple[str, str]],
                  d: int) -> tuple[Settled, ...]:
    """Each pair's exact answer, R2's and the effort refuting R2's rest, together (section comment)."""
    variables = tuple(variables)
    (constraints,) = _checked([tuple(facts)], variables, queries[0], d)
    for query in queries[1:]:
        _validate((), variables, query, d)
    return _settled_pairs(constraints, variables, tuple((q[0], q[1]) for q in queries), d)


def settled_claims(facts: Iterable[Fact], variables: Sequence[str], claims: Sequence[Fact],
                   d: int) -> tuple[SettledClaim, ...]:
    """Whether each claim can hold with the story, and whether R2 keeps it, together (section comment)."""
    variables = tuple(variables)
    story, *claimed = _checked([tuple(facts), *((claim,) for claim in claims)], variables, None, d)
    return _settled_claims(story, variables, tuple(constraint for (constraint,) in claimed), d)


@dataclass(frozen=True)
class _Witness:
    """A solution of a story (each variable's value), with each variable's moves as words: the values
    it may take, the others staying (each such move a solution too; an unconstrained variable keeps its
    domain); and, per pair asked, the codes it shows."""

    values: np.ndarray
    words: np.ndarray

    def shows(self, a: int, b: int, bound: bool, d: int) -> int:
        """The binary codes (a bitset in BINARY_CODES' order) this solution or one of its moves has a
        take to b (`propagation.shown`): where `bound`, one of the two moving while the other stays,
        else both at once."""
        return _compiled().shown(self.words, self.values, a, b, bound, *_code_tables(d))


def _witness(words: np.ndarray, arcs: dict[Arc, _Relation], links: Links, a: int, b: int | None,
             codes: frozenset[str], d: int) -> tuple[_Witness | None, int]:
    """A solution of a network (its domains as `words`) with "a is one of the `codes` (of b)", with
    its moves in the network, or None; and the branch decisions its search tried."""
    claimed = _with_claim(words, arcs, links, a, b, codes, d)
    if claimed is None:
        return None, 0
    solution, claimed_links = claimed
    found, tried = _compiled().search(solution, *claimed_links.network)
    if not found:
        return None, tried
    values = _compiled().highest(solution)
    moves = np.empty_like(words)
    _compiled().moves(words, links.start, links.to, links.relations, values, moves)
    return _Witness(values, moves), tried


class _Story:
    """One story's network, made once for everything asked of it, its closure (R2's, made when first
    needed), and the witnesses its searches have found."""

    def __init__(self, facts: frozenset[Constraint], variables: tuple[str, ...], d: int) -> None:
        self.facts, self.variables, self.d = facts, variables, d
        unary, self.binary, _ = _network(facts, variables, ())  # the stated codes of each pair (`_network`)
        self.network = _story_network(unary, self.binary, d)
        self.words = None if self.network is None else _cell_words(self.network[0], d)  # its domains
        self.witnesses: list[_Witness] = []
        self.moved = [0] * len(variables)  # per variable, the values some witness's moves give it
        self._shown: dict[Arc, tuple[int, int]] = {}  # per pair: the witnesses read so far, the codes they show
        self._closure: tuple[np.ndarray, Links, dict[Arc, int]] | None = None

    def closure(self) -> tuple[np.ndarray, Links, dict[Arc, int]] | None:
        """`_closure`'s domains (as words), links and atoms; None on a wipe-out."""
        if self._closure is None:
            closure = _closure(self.facts, self.variables, self.d)
            if closure is None:
                return None
            domains, links, closed = closure
            self._closure = _cell_words(domains, self.d), links, closed
        return self._closure

    def kept(self, a: int, b: int | None, code: str) -> bool:
        """R2 of "a is <code> (of b)" (`propagated_answer`, `propagated_holding`)."""
        return _closure_claim(*self.closure(), a, b, code, self.d) is not None

    def shown(self, a: int, b: int | None, code: str) -> bool:
        """Whether a witness shows "a is <code> (of b)"."""
        if b is None:  # one object's claim: what the witnesses' moves give it at once
            return bool(self.moved[a] & _joint_tables(self.d).unary[code])
        return bool(self.shown_codes(a, b) >> _CODE_INDEX[code] & 1)

    def shown_codes(self, a: int, b: int) -> int:
        """The binary codes (a bitset in BINARY_CODES' order) that a witness shows of a to b: where a
        fact binds the two, one moving while the other stays, else both at once. Each witness is read
        once per pair, when the pair is first asked about after it was found."""
        read, codes = self._shown.get((a, b), (0, 0))
        if read < len(self.witnesses):
            bound = (a, b) in self.network[1]
            codes = reduce(or_, (witness.shows(a, b, bound, self.d) for witness in self.witnesses[read:]), codes)
            self._shown[a, b] = len(self.witnesses), codes
        return codes

    def search(self, a: int, b: int | None, codes: frozenset[str]) -> tuple[bool, int]:
        """Search for a solution with "a is one of `codes` (of b)", kept as a witness if found; whether
        one was, and the branch decisions tried (`refutation_effort`'s count when none is)."""
        _, arcs, links = self.network
        witness, tried = _witness(self.words, arcs, links, a, b, codes, self.d)
        if witness is not None:
            self.witnesses.append(witness)
            self.moved = [moved | moves for moved, moves in zip(self.moved, _ints(witness.words))]
        return witness is not None, tried


@lru_cache(maxsize=256)
def _story(facts: frozenset[Constraint], variables: tuple[str, ...], d: int) -> _Story:
    return _Story(facts, variables, d)


@lru_cache(maxsize=256)
def _settled_pairs(facts: frozenset[Constraint], variables: tuple[str, ...], queries: tuple[tuple[str, str], ...],
                   d: int) -> tuple[Settled, ...]:
    unary, binary, pairs = _network(facts, variables, queries)
    (_, i_signs), (_, j_signs) = (_solve_axis(axis, unary, binary, pairs, d) for axis in (0, 1))
    axes = [_axis_product(i, j) for i, j in zip(i_signs, j_signs)]
    if not _coupled(facts):
        return tuple(Settled(held, held, 0) for held in axes)  # the axes are exact on facts that do not couple them
    story = _story(facts, variables, d)
    if story.network is None or story.closure() is None:
        return tuple(Settled(frozenset(), frozenset(), 0) for _ in pairs)
    settled = []
    for (a, b), candidates in zip(pairs, axes):
        shown = story.shown_codes(a, b)
        found = {code for code in candidates if shown >> _CODE_INDEX[code] & 1}
        local = frozenset(found) | {code for code in candidates - found if story.kept(a, b, code)}
        effort = 0
        while open_codes := local - found:
            held, tried = story.search(a, b, open_codes)
            if not held:
                effort = tried  # R2's rest, refuted by one search: `refutation_effort`'s
                break
            shown = story.shown_codes(a, b)
            found |= {code for code in open_codes if shown >> _CODE_INDEX[code] & 1}
        settled.append(Settled(frozenset(found), local, effort))
    return tuple(settled)


@lru_cache(maxsize=256)
def _settled_claims(facts: frozenset[Constraint], variables: tuple[str, ...], claims: tuple[Constraint, ...],
                    d: int) -> tuple[SettledClaim, ...]:
    story = _story(facts, variables, d)
    if story.network is None or story.closure() is None:
        return (SettledClaim(False, False),) * len(claims)
    settled = []
    for a, b, code in _claim_ends(claims, variables):
        if story.shown(a, b, code):
            settled.append(SettledClaim(True, True))
        elif not story.kept(a, b, code):
            settled.append(SettledClaim(False, False))
        else:
            settled.append(SettledClaim(story.search(a, b, frozenset((code,)))[0], True))
    return tuple(settled)


# ---------------------------------------------------------------------------------------------
# Relations over values as bitsets.


class _Relation:
    """A binary relation over values 0..size-1: rows[v] is the bitset of the values related to v.
    Made from its rows or from its rows as words (`words`), each form made from the other when
    first needed."""

    __slots__ = ("_rows", "_width", "_images", "_words", "_tables")

    def __init__(self, rows: Iterable[int] | None = None, *, words: np.ndarray | None = None):
        self._rows = None if rows is None else tuple(rows)
        self._words = words
        self._tables: np.ndarray | None = None
        size = len(self._rows) if words is None else len(words)
        # _images[p][chunk]: the union of the rows of the values width*p + k for the bits k of
        # chunk, filled on first use, so that image() costs one lookup per chunk of its
        # argument. An axis (at most 12 values) is a single chunk. Dicts of ints, which the
        # cyclic garbage collector does not track: tables as lists were most of what every full
        # collection traversed (about 900,000 slots, 90 ms each).
        self._width = size if size <= 12 else 8
        chunks = -(-size // self._width)
        self._images: list[dict[int, int]] = [{} for _ in range(chunks)]

    @property
    def rows(self) -> tuple[int, ...]:
        if self._rows is None:
            self._rows = tuple(_ints(self._words))
        return self._rows

    def image(self, values: int) -> int:
        """The values related to at least one of `values`."""
        if values & (values - 1) == 0:
            return self.rows[values.bit_length() - 1] if values else 0
        if len(self._images) == 1:
            return self._images[0].get(values) or self._fill(0, values)
        out = 0
        for p, chunk in enumerate(values.to_bytes(len(self._images), "little")):
            if chunk:
                out |= self._images[p].get(chunk) or self._fill(p, chunk)
        return out

    @property
    def words(self) -> np.ndarray:
        """The rows as rows of 64-bit words (pipeline.spatial.propagation)."""
        if self._words is None:
            self._words = _words(self._rows, -(-len(self._rows) // 64))
        return self._words

    @property
    def tables(self) -> np.ndarray:
        """The rows as the compiled propagation reads them (`propagation.tables`), made once."""
        if self._tables is None:
            self._tables = _compiled().tables(self.words)
        return self._tables

    def _fill(self, p: int, chunk: int) -> int:
        # An empty image (0) reads as "not filled yet" and is recomputed: rare, and still exact.
        first = self._width * p
        image = reduce(or_, (self.rows[first + k] for k in range(self._width) if chunk >> k & 1))
        self._images[p][chunk] = image
        return image


def _meet(relations: Sequence[_Relation]) -> _Relation:
    """Related in every one of the relations."""
    if len(relations) == 1:
        return relations[0]
    return _Relation(words=np.bitwise_and.reduce([r.words for r in relations]))


def _join(relations: Sequence[_Relation]) -> _Relation:
    """Related in at least one of the relations."""
    if len(relations) == 1:
        return relations[0]
    return _Relation(words=np.bitwise_or.reduce([r.words for r in relations]))


def _bits(values: Iterable[int]) -> int:
    return sum(1 << v for v in values)


# ---------------------------------------------------------------------------------------------
# One axis: values 0..d-1, the coordinate i (axis 0) or j (axis 1).


@dataclass(frozen=True)
class _AxisTables:
    full: int
    interior: int  # NTPP on this axis: 0 < k < d-1
    band: tuple[int, int, int]  # the values of each third


@lru_cache(maxsize=None)
def _axis_tables(d: int) -> _AxisTables:
    return _AxisTables(
        full=_bits(range(d)),
        interior=_bits(range(1, d - 1)),
        band=tuple(_bits(k for k in range(d) if band(k, d) == b) for b in range(3)),
    )


@lru_cache(maxsize=None)
def _axis_relation(signs: tuple[int, ...], d: int) -> _Relation:
    """x related to y when sign(x - y) is each of the signs (several facts on one pair)."""
    return _Relation(_bits(y for y in range(d) if all((x > y) - (x < y) == s for s in signs)) for x in range(d))


def _solve_axis(
    axis: int, unary: list[list[str]], binary: dict[Arc, list[str]], pairs: Sequence[tuple[int, int]], d: int
) -> tuple[tuple[int, ...], list[frozenset[int]]]:
    """Arc-consistent domains of one axis, and the signs each query pair can take on it.

    Uses the facts that are one condition per axis: regions, NTPP, directions. Exact for a
    problem of only those facts; an over-approximation when TPP or distances also constrain it.
    """
    tables = _axis_tables(d)
    domains = []
    for codes in unary:
        domain = tables.full
        for code in codes:
            if code in _BANDS:
                domain &= tables.band[_BANDS[code][axis]]
            elif code == "NTPP":
                domain &= tables.interior
        domains.append(domain)
    pair_signs = []
    for pair, codes in sorted(binary.items()):
        signs = tuple(sorted({_SIGNS[c][axis] for c in codes if c in _SIGNS}))
        if signs:
            pair_signs.append((pair, signs))
    problem = (tuple(domains), tuple(pair_signs))
    return _axis_network(*problem, d)[0], [_axis_answer(*problem, q0, qn, d) for q0, qn in pairs]


@lru_cache(maxsize=1024)
def _axis_network(
    unary_domains: tuple[int, ...], pair_signs: tuple[tuple[Arc, tuple[int, ...]], ...], d: int
) -> tuple[tuple[int, ...], dict[Arc, _Relation], Links, bool]:
    """One axis's problem without its query: a domain per variable and the signs of x_a - x_b each
    pair allows, made arc consistent (the domains, the arcs and links, and whether none was wiped
    out). Memoised: settings that differ only in distances or TPP (o2, o2_d2 and o2_d3) share it,
    and so do the queries about every pair of one fact set."""
    domains = list(unary_domains)
    arcs = {}
    for (a, b), signs in pair_signs:
        arcs[(a, b)] = _axis_relation(signs, d)
        arcs[(b, a)] = _axis_relation(tuple(-s for s in reversed(signs)), d)
    links = Links(arcs, len(domains))
    consistent = all(domains) and _propagate(domains, links, range(len(domains)))
    return tuple(domains), arcs, links, consistent


@lru_cache(maxsize=4096)
def _axis_answer(
    unary_domains: tuple[int, ...], pair_signs: tuple[tuple[Arc, tuple[int, ...]], ...], q0: int, qn: int, d: int
) -> frozenset[int]:
    """The signs of x_q0 - x_qn on one axis's problem (`_axis_network`).

    No search is needed: unary sets and the relations <, =, > are min-closed (the pairwise
    minimum of two solutions of a constraint is one too), and for min-closed constraints arc
    consistency decides satisfiability: if no domain is empty, every variable at its least
    value is a solution (Jeavons and Cooper 1995, "Tractable constraints on ordered domains").
    The query "sign is s" is min-closed too, so each sign costs one propagation (the three in
    one compiled call, `propagation.query_survivors`).
    """
    domains, arcs, links, consistent = _axis_network(unary_domains, pair_signs, d)
    if not consistent:
        return frozenset()
    forwards, backwards = _sign_tables(d) if (q0, qn) not in arcs else (
        # each sign met with the fact on the pair, as `_with_query` meets a query with it
        np.stack([_meet([arcs[pair], _axis_relation((sign * s,), d)]).tables for s in _SIGN_VALUES])
        for pair, sign in (((q0, qn), 1), ((qn, q0), -1)))
    held = _compiled().query_survivors(links.words(domains), links.start, links.to, links.relations, q0, qn,
                                       forwards, backwards)
    return frozenset(s for k, s in enumerate(_SIGN_VALUES) if held >> k & 1)


@lru_cache(maxsize=None)
def _sign_tables(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The queries "the sign of x_q0 - x_qn is s", s in _SIGN_VALUES' order, as `query_survivors` reads
    them: seen from q0, and from qn."""
    return tuple(np.stack([_axis_relation((sign * s,), d).tables for s in _SIGN_VALUES]) for sign in (1, -1))


# ---------------------------------------------------------------------------------------------
# The joint problem: values are cells, cell (i, j) is value i*d + j.


@dataclass(frozen=True)
class _JointTables:
    unary: dict[str, int]  # region and wall codes: the cells where they hold
    binary: dict[str, tuple[int, ...]]  # direction and distance codes: rows over cells
    column: tuple[int, ...]  # the cells with i = k
    row: tuple[int, ...]  # the cells with j = k

    def product(self, i_values: int, j_values: int) -> int:
        """The cells (i, j) with i among i_values and j among j_values."""
        columns = reduce(or_, (m for k, m in enumerate(self.column) if i_values >> k & 1), 0)
        rows = reduce(or_, (m for k, m in enumerate(self.row) if j_values >> k & 1), 0)
        return columns & rows


@lru_cache(maxsize=None)
def _joint_tables(d: int) -> _JointTables:
    cells = _CELLS[d]
    rows = {code: [0] * len(cells) for code in BINARY_CODES}
    # One pass over cell pairs: each pair has exactly one direction and one code per scale.
    for v, a in enumerate(cells):
        for w, b in enumerate(cells):
            bit = 1 << w
            rows[direction(a, b)][v] |= bit
            for scale in DISTANCE_SCALES:
                rows[distance(a, b, d, scale)][v] |= bit
    return _JointTables(
        unary={code: _bits(v for v, c in enumerate(cells) if holds(code, d, c)) for code in UNARY_CODES},
        binary={code: tuple(r) for code, r in rows.items()},
        column=tuple(_bits(i * d + j for j in range(d)) for i in range(d)),
        row=tuple(_bits(i * d + j for i in range(d)) for j in range(d)),
    )


@lru_cache(maxsize=None)
def _cell_relation(code: str, d: int) -> _Relation:
    return _Relation(_joint_tables(d).binary[code])


@lru_cache(maxsize=None)
def _code_tables(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Every binary code's cell relation as the compiled checks read it (`_Relation.tables`), in
    BINARY_CODES' order, and each code's converse's index."""
    return (np.stack([_cell_relation(code, d).tables for code in BINARY_CODES]),
            np.array([_CODE_INDEX[_CONVERSE[code]] for code in BINARY_CODES], dtype=np.int64))


@lru_cache(maxsize=512)
def _all_of(codes: frozenset[str], d: int) -> _Relation:
    """Cells related by every one of the codes: the facts on one pair."""
    return _meet([_cell_relation(c, d) for c in sorted(codes)])


@lru_cache(maxsize=None)
def _any_of(codes: frozenset[str], d: int) -> _Relation:
    """Cells related by at least one of the codes: the query's open directions."""
    return _join([_cell_relation(c, d) for c in sorted(codes)])


# ---------------------------------------------------------------------------------------------
# Path consistency over atoms (R2): what a pair of objects may be to each other, as a set of
# atoms, an atom being one direction with one distance class on each scale (a bitset over
# atoms). A triple's closure meets a pair's atoms with the composition of the two other
# pairs' atoms on the grid.


@dataclass(frozen=True)
class _AtomTables:
    codes: tuple[frozenset[str], ...]  # per atom: its direction and distance codes
    of_code: dict[str, tuple[int, ...]]  # per direction and distance class: its atoms
    every: int  # the bitset of all atoms
    # As the compiled closure reads them (pipeline.spatial.propagation.path_closure): [x, y] the atoms z of
    # (a, c) where x holds of (a, b) and y of (b, c); per atom, the atom of the pair the other way round
    # (`_converse_atoms` too); each atom's cells as words.
    compose: np.ndarray
    converses: np.ndarray
    cell_words: np.ndarray


@lru_cache(maxsize=None)
def _atom_tables(d: int) -> _AtomTables:
    """The atoms of the d x d grid and their weak composition, read off every triple of cells."""
    tables = _joint_tables(d)
    size = d * d
    keys = [(direction(a, b), *(distance(a, b, d, scale) for scale in DISTANCE_SCALES))
            for a in _CELLS[d] for b in _CELLS[d]]
    kinds = sorted(set(keys), key=lambda key: (DIRECTIONS.index(key[0]), key[1:]))
    atom = {key: x for x, key in enumerate(kinds)}
    of_pair = np.array([atom[key] for key in keys]).reshape(size, size)
    composed = np.zeros((len(kinds),) * 3, dtype=bool)
    for b in range(size):
        composed[of_pair[:, b, None], of_pair[None, b, :], of_pair] = True
    cells = [_meet([_Relation(tables.binary[code]) for code in key]) for key in kinds]
    return _AtomTables(
        codes=tuple(frozenset(key) for key in kinds),
        of_code={code: tuple(x for x, key in enumerate(kinds) if code in key) for code in BINARY_CODES},
        every=_bits(range(len(kinds))),
        compose=(composed.astype(np.int64) << np.arange(len(kinds))).sum(axis=2),
        converses=np.array([atom[(converse(key[0]), *key[1:])] for key in kinds], dtype=np.int64),
        cell_words=np.stack([relation.words for relation in cells]),
    )


@lru_cache(maxsize=4096)
def _converse_atoms(atoms: int, d: int) -> int:
    converses = _atom_tables(d).converses
    return _bits(int(converses[x]) for x in range(atoms.bit_length()) if atoms >> x & 1)


@lru_cache(maxsize=None)
def _code_atoms(code: str, d: int) -> int:
    """The atoms of one direction or distance class, as a bitset."""
    return _bits(_atom_tables(d).of_code[code])


@lru_cache(maxsize=1024)
def _atoms_relation(atoms: int, d: int) -> _Relation:
    """The cell pairs where one of the atoms holds."""
    return _Relation(words=_compiled().joined(atoms, _atom_tables(d).cell_words))


def _relation_atoms(closed: dict[Arc, int], a: int, b: int, d: int) -> int:
    """The atoms of a's relation to b in a closure kept per pair (a, b), a < b."""
    return closed[a, b] if a < b else _converse_atoms(closed[b, a], d)


def _path_closure(domains: list[int], binary: dict[Arc, list[str]], d: int) -> tuple[Links, dict[Arc, int]] | None:
    """Every pair's atoms under path consistency and arc consistency together, to their common
    fixpoint (`propagation.path_closure`): a pair keeps the atoms its facts allow that some cells of
    the two domains take, each triple's composition narrows them, and a pair's atoms, as a
    constraint on cells, narrow the domains in turn. `domains` are narrowed in place. The links of
    every pair's atoms as a constraint on cells, and the atoms; None on a wipe-out. A pair's atoms
    lie within its facts' (`stated`), so as a constraint on cells they are the facts' met with the closure's."""
    atoms = _atom_tables(d)
    n = len(domains)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    stated = np.zeros((n, n), dtype=np.int64)
    for a, b in pairs:  # the atoms holding every code stated of the pair
        stated[a, b] = reduce(and_, (_code_atoms(code, d) for code in binary.get((a, b), ())), atoms.every)
    closed = np.full((n, n), atoms.every, dtype=np.int64)
    words = _words(domains, atoms.cell_words.shape[2])
    size, width = atoms.cell_words.shape[1:]
    links = n * (n - 1)  # the compiled closure fills them: every variable linked to every other
    start, to = np.empty(n + 1, dtype=np.int64), np.empty(max(1, links), dtype=np.int64)
    relations = np.empty((max(1, links), -(-size // 4), 16, width), dtype=np.uint64)
    if not _compiled().path_closure(words, stated, closed, atoms.compose, atoms.converses, atoms.cell_words, start,
                                    to, relations):
        return None
    domains[:] = _ints(words)
    return Links.laid_out(start, to[:links], relations[:links]), {(a, b): int(closed[a, b]) for a, b in pairs}


def _joint_network(unary: list[list[str]], binary: dict[Arc, list[str]],
                   axis_domains: Sequence[tuple[int, ...]], d: int
                   ) -> tuple[list[int], dict[Arc, _Relation], Links] | None:
    """The joint problem over cells made arc consistent: each variable's cells within its axis
    domains and unary facts, each pair's facts as one relation both ways, and the links; None
    on a wipe-out."""
    tables = _joint_tables(d)
    domains = []
    for k, codes in enumerate(unary):
        domain = tables.product(axis_domains[0][k], axis_domains[1][k])
        for code in codes:
            domain &= tables.unary[code]
        domains.append(domain)
    arcs = {}
    for (a, b), codes in binary.items():
        arcs[(a, b)] = _all_of(frozenset(codes), d)
        arcs[(b, a)] = _all_of(frozenset(_CONVERSE[c] for c in codes), d)
    links = Links(arcs, len(domains))
    if not all(domains) or not _propagate(domains, links, range(len(domains))):
        return None
    return domains, arcs, links


def _story_network(unary: list[list[str]], binary: dict[Arc, list[str]], d: int
                   ) -> tuple[list[int], dict[Arc, _Relation], Links] | None:
    """`_joint_network` of the facts alone, no query: within their axes' arc consistent domains."""
    return _joint_network(unary, binary, tuple(_solve_axis(axis, unary, binary, [], d)[0] for axis in (0, 1)), d)


def _solve_joint(
    network: tuple[list[int], dict[Arc, _Relation], Links] | None,
    candidates: Sequence[frozenset[str]],
    solved: Sequence[frozenset[str]],
    pairs: Sequence[tuple[int, int]],
    d: int,
) -> list[frozenset[str]]:
    """The directions of each query pair over all solutions of the facts (their joint network,
    `_joint_network`), by search over cells, within the pair's candidates; the `solved` ones are
    known to have solutions. Every solution found settles its direction for every pair."""
    if network is None:
        return [frozenset()] * len(pairs)
    domains, arcs, links = network
    if not arcs:
        # Unary facts only: the query pair may take any cell of each domain.
        return [frozenset(c for c in held if domains[q0] & _cell_relation(_CONVERSE[c], d).image(domains[qn]))
                for held, (q0, qn) in zip(candidates, pairs)]
    # Search for a solution whose direction is still open; each one found settles, for every pair,
    # its direction and each one the pair takes when one of its ends moves to another value of its
    # domain that keeps every fact on it, the other variables where the solution has them (each
    # such move is a solution too); the search that finds none refutes all the open directions at once.
    found = [set(known) for known in solved]
    words = _cell_words(domains, d)
    for k, (q0, qn) in enumerate(pairs):
        while open_codes := candidates[k] - found[k]:
            witness, _ = _witness(words, arcs, links, q0, qn, open_codes, d)
            if witness is None:
                break
            for settled, held, (a, b) in zip(found, candidates, pairs):
                shown = witness.shows(a, b, True, d)
                settled |= {code for code in held if shown >> _CODE_INDEX[code] & 1}
    return [frozenset(settled) for settled in found]


# ---------------------------------------------------------------------------------------------
# Search over bitset domains, shared by both kinds of problem.


_NO_RELATION = np.zeros((0, 16, 1), dtype=np.uint64)  # a query's where there is none


class Links:
    """A network's constraints as each variable sees them (a's: each b it constrains, with the
    relation seen from a), and at most one constraint more, a query's, between two variables,
    replacing any fact between them: held as the arrays the compiled propagation reads
    (pipeline.spatial.propagation)."""

    __slots__ = ("start", "to", "relations", "query")

    def __init__(self, arcs: dict[Arc, _Relation], n: int) -> None:
        by_variable: list[list[tuple[int, _Relation]]] = [[] for _ in range(n)]
        for (a, b), relation in arcs.items():
            by_variable[a].append((b, relation))
        self.start = np.array([0, *accumulate(map(len, by_variable))], dtype=np.int64)
        self.to = np.array([b for links in by_variable for b, _ in links], dtype=np.int64)
        tables = [relation.tables for links in by_variable for _, relation in links]
        # filled row by row: for a few small arrays, NumPy's stack costs more than the copying
        self.relations = np.empty((len(tables), *tables[0].shape) if tables else (0, 1, 16, 1), dtype=np.uint64)
        for k, table in enumerate(tables):
            self.relations[k] = table
        self.query: tuple[int, int, np.ndarray, np.ndarray] = (-1, -1, _NO_RELATION, _NO_RELATION)

    @staticmethod
    def laid_out(start: np.ndarray, to: np.ndarray, relations: np.ndarray,
                 query: tuple[int, int, np.ndarray, np.ndarray] = (-1, -1, _NO_RELATION, _NO_RELATION)) -> Links:
        """Links given as the arrays the compiled loops read (`network`), as a closure leaves them."""
        links = Links.__new__(Links)
        links.start, links.to, links.relations, links.query = start, to, relations, query
        return links

    def with_query(self, q0: int, qn: int, forward: _Relation, backward: _Relation) -> Links:
        """These links with the constraint between q0 and qn `forward` (seen from q0) and `backward`."""
        return Links.laid_out(self.start, self.to, self.relations, (q0, qn, forward.tables, backward.tables))

    @property
    def network(self) -> tuple:
        """The arrays the compiled loops read (pipeline.spatial.propagation's `_NETWORK`, after the domains)."""
        return self.start, self.to, self.relations, *self.query

    def words(self, domains: Sequence[int]) -> np.ndarray:
        """The domains as rows of words, as wide as the relations' (those of no constraint: the domains')."""
        return _words(domains, self.relations.shape[3] if len(self.relations) else
                      self.query[2].shape[2] if self.query[0] >= 0 else
                      -(-max(1, *(value.bit_length() for value in domains)) // 64))


def _words(domains: Sequence[int], width: int) -> np.ndarray:
    """Bitsets as rows of `width` 64-bit words."""
    size = 8 * width
    return np.frombuffer(bytearray(b"".join(value.to_bytes(size, "little") for value in domains)),
                         dtype=np.uint64).reshape(len(domains), width)


def _ints(words: np.ndarray) -> list[int]:
    """Rows of words as bitsets."""
    raw, size = words.tobytes(), 8 * words.shape[1]
    return [int.from_bytes(raw[k:k + size], "little") for k in range(0, len(raw), size)]


def _with_query(
    links: Links, arcs: dict[Arc, _Relation], q0: int, qn: int, forward: _Relation, backward: _Relation
) -> Links:
    """The links of `arcs` with the query constraint added (met with any fact on the pair)."""
    if (q0, qn) in arcs:
        forward, backward = _meet([arcs[(q0, qn)], forward]), _meet([arcs[(qn, q0)], backward])
    return links.with_query(q0, qn, forward, backward)


def _query_links(links: Links, arcs: dict[Arc, _Relation], q0: int, qn: int, codes: frozenset[str], d: int) -> Links:
    """The links with the query "q0 is one of `codes` of qn" added (`_with_query`)."""
    return _with_query(links, arcs, q0, qn, _any_of(codes, d), _any_of(frozenset(_CONVERSE[c] for c in codes), d))


@lru_cache(maxsize=None)
def _compiled() -> ModuleType:
    """pipeline.spatial.propagation, imported when first used: numba takes about half a second to
    import, which a command that reads the checker's tables but solves nothing need not pay."""
    from pipeline.spatial import propagation
    return propagation


def _propagate(domains: list[int], links: Links, changed: Iterable[int]) -> bool:
    """Make the domains arc consistent in place, from the variables whose domains `changed` (or
    whose constraints are new); False on a wipe-out."""
    words = links.words(domains)
    consistent = _arc_consistent(words, links, changed)
    domains[:] = _ints(words)
    return consistent


def _arc_consistent(words: np.ndarray, links: Links, changed: Iterable[int]) -> bool:
    """`_propagate` of domains given as words (`Links.words`), in place (`propagation.propagate`)."""
    return _compiled().propagate(words, *links.network, np.fromiter(changed, dtype=np.int64))


def _search(words: np.ndarray, links: Links, tried: list[int] | None = None) -> list[int] | None:
    """A solution below these arc-consistent domains (as words, `Links.words`: left as the solution
    where there is one), or None; `tried`, when given, counts the values tried (the branch decisions;
    `propagation.search`). Every constrained variable of a solution has a single value; a variable
    without constraints keeps its (non-empty) domain, as any of its values will do."""
    found, count = _compiled().search(words, *links.network)
    if tried is not None:
        tried[0] += count
    return _ints(words) if found else None
