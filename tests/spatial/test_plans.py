"""Plans that take one object from a furniture piece (pipeline.spatial.plans, docs/semantics.md section 21):
the gold plan on hand-made views, checked by the independent runner, which refuses wrong plans."""

from __future__ import annotations

import pytest

from pipeline.spatial.plans import OPEN, PICK_UP, REMOVE, Thing, check_plan, closure, gold_plan, reduction


def furniture(name: str, opens: bool = False) -> Thing:
    return Thing(name, "Desk", None, None, None, None, None, opens=opens, closed=opens, lid=False, movable=False)


def compartment(name: str, of: str) -> Thing:
    return Thing(name, "Compartment", None, None, None, None, of, opens=True, closed=True, lid=False, movable=False)


def on(name: str, support: str, part: str | None = None, relation: str = "on", **opens) -> Thing:
    return Thing(name, "Book", support, relation, part, None, None, opens=bool(opens), closed=opens.get("closed", False),
                 lid=opens.get("lid", False), movable=True)


def inside(name: str, holder: str, **opens) -> Thing:
    return Thing(name, "Cup", None, None, None, holder, None, opens=bool(opens), closed=opens.get("closed", False),
                 lid=opens.get("lid", False), movable=True)


# A laptop with a book on it (keys and a stapler on the book) and a tissue box on it; a mug beside it.
DESK = (furniture("desk"), on("laptop", "desk", "top"), on("book", "laptop"), on("stapler", "book"),
        on("keys", "book"), on("tissue box", "laptop"), on("mug", "desk", "top"))


def test_loads_first_then_the_target_with_direct_needs():
    plan = gold_plan(DESK, "laptop")
    assert plan == ((REMOVE, "stapler", "book", ()), (REMOVE, "keys", "book", ()), (REMOVE, "book", "laptop", (0, 1)),
                    (REMOVE, "tissue box", "laptop", ()), (PICK_UP, "laptop", "desk", (2, 3)))
    assert check_plan(DESK, "laptop", plan) is None
    assert gold_plan(DESK, "mug") == ((PICK_UP, "mug", "desk", ()),)  # a distractor next to the stack: one step


def test_closed_compartments_and_a_box_lid():
    view = (furniture("dresser"), compartment("top drawer", "dresser"), inside("pen", "top drawer"),
            on("box", "dresser", "top", closed=True, lid=True), on("book", "box"), on("cd", "book"),
            inside("cup", "box"), on("plate", "dresser", "top"))
    assert gold_plan(view, "pen") == ((OPEN, "top drawer", None, ()), (PICK_UP, "pen", "top drawer", (0,)))
    plan = gold_plan(view, "cup")
    assert plan == ((REMOVE, "cd", "book", ()), (REMOVE, "book", "box", (0,)), (OPEN, "box", None, (1,)),
                    (PICK_UP, "cup", "box", (2,)))
    assert check_plan(view, "cup", plan) is None


def test_loads_inside_a_closed_container_need_it_open():
    view = (furniture("counter"), on("microwave", "counter", "top", closed=True, lid=False),
            inside("plate", "microwave"), on("fork", "plate"))
    plan = gold_plan(view, "plate")
    # the fork is enclosed by the microwave too; taking the plate needs the microwave open only through it
    assert plan == ((OPEN, "microwave", None, ()), (REMOVE, "fork", "plate", (0,)), (PICK_UP, "plate", "microwave", (1,)))
    assert check_plan(view, "plate", plan) is None


def test_the_fridge_is_its_own_compartment():
    view = (furniture("fridge", opens=True), inside("egg", "fridge"))
    assert gold_plan(view, "egg") == ((OPEN, "fridge", None, ()), (PICK_UP, "egg", "fridge", (0,)))


@pytest.mark.parametrize("wrong, problem", [
    (((PICK_UP, "laptop", "desk", ()),), "rests on it"),  # taken at once
    (((REMOVE, "book", "laptop", ()), (REMOVE, "tissue box", "laptop", ()), (PICK_UP, "laptop", "desk", (0, 1))),
     "rests on it"),  # the book's loads left on it
    (((REMOVE, "stapler", "book", ()), (REMOVE, "keys", "book", ()), (REMOVE, "book", "laptop", (0,)),
      (REMOVE, "tissue box", "laptop", ()), (PICK_UP, "laptop", "desk", (2, 3))), "rests on it"),  # a need missing
    (((REMOVE, "stapler", "book", ()), (REMOVE, "keys", "book", ()), (REMOVE, "book", "laptop", (0, 1)),
      (REMOVE, "tissue box", "laptop", ()), (REMOVE, "mug", "desk", ()), (PICK_UP, "laptop", "desk", (2, 3))),
     "not needed"),  # a distractor moved
    (((REMOVE, "stapler", "laptop", ()), (REMOVE, "keys", "book", ()), (REMOVE, "book", "laptop", (0, 1)),
      (REMOVE, "tissue box", "laptop", ()), (PICK_UP, "laptop", "desk", (2, 3))), "not on or in"),
    (((PICK_UP, "laptop", "desk", (1,)), (REMOVE, "book", "laptop", ())), "last step"),
])
def test_the_runner_refuses_wrong_plans(wrong, problem):
    assert problem in check_plan(DESK, "laptop", wrong)


def test_closure_and_reduction():
    needs = [(), (0,), (0, 1), (2, 0)]
    assert closure(needs) == {(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)}
    assert reduction(needs) == [(), (0,), (1,), (2,)]
    assert reduction([(), (), (0, 1)]) == [(), (), (0, 1)]
