"""The reference answer: the checker's question put to python-constraint, fact by fact.

Slow (backtracking with forward checking over every cell), so used only by the tests and the
benchmark, as the oracle the checker must agree with and the speed it is measured against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from pipeline.errors import RoomspaceError
from pipeline.spatial.facts import Fact
from pipeline.spatial.grid import check_grid_size
from pipeline.spatial.relations import DIRECTIONS, holds, is_binary


def oracle_answer_set(
    facts: Iterable[Fact], variables: Sequence[str], query: tuple[str, str], d: int
) -> frozenset[str]:
    """Every direction R for which python-constraint finds a solution of the facts plus the query."""
    try:
        from constraint import FunctionConstraint, Problem
    except ImportError:
        raise RoomspaceError(
            "the oracle needs python-constraint2 (`pip install python-constraint2`, in the test extra)"
        ) from None
    check_grid_size(d)
    facts = tuple(facts)
    for fact in facts:
        is_binary(fact.relation)  # raises on an unknown code
    cells = [(i, j) for i in range(d) for j in range(d)]
    # The search asks millions of times whether a fact holds of cells it has tried before: `holds` is
    # asked once for each (most of the oracle's time went to asking it again).
    holding = cache(lambda code, *cells: holds(code, d, *cells))
    answers = set()
    for relation in DIRECTIONS:
        problem = Problem()
        problem.addVariables(list(variables), cells)
        for fact in facts:
            if fact.object is None:
                constraint = FunctionConstraint(lambda a, code=fact.relation: holding(code, a))
                problem.addConstraint(constraint, [fact.subject])
            else:
                constraint = FunctionConstraint(lambda a, b, code=fact.relation: holding(code, a, b))
                problem.addConstraint(constraint, [fact.subject, fact.object])
        problem.addConstraint(
            FunctionConstraint(lambda a, b, code=relation: holding(code, a, b)), [query[0], query[1]]
        )
        if problem.getSolution() is not None:
            answers.add(relation)
    return frozenset(answers)
