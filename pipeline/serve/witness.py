"""The checker's witness of a question, drawn as the d x d grid: the rasterised room, whose cells satisfy
every fact the story states (docs/semantics.md sections 3 and 9), so its relation of the asked objects is
always in the answer set. Rows of kinds with no story objects on the grid (compositions, shapes, plans)
have none."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placed:
    number: int  # the object's number on the grid, 1 ... n in the row's object order
    name: str
    cell: tuple[int, int]  # (i, j): i counts columns eastward, j rows northward
    asked: bool  # one of the question's two objects


@dataclass(frozen=True)
class WitnessGrid:
    d: int
    objects: tuple[Placed, ...]

    def rows(self) -> list[list[tuple[Placed, ...]]]:
        """The cells row by row from the north (j = d - 1) down, each row from the west (i = 0): the objects in each."""
        return [[tuple(o for o in self.objects if o.cell == (i, j)) for i in range(self.d)]
                for j in reversed(range(self.d))]


def witness_grid(row: dict) -> WitnessGrid | None:
    """The witness of a row with story objects on the grid; None for one without."""
    objects = row.get("objects") or ()
    if not objects or row.get("d") is None:
        return None
    query = row.get("query") or {}
    asked = {query.get("subject"), query.get("object")}
    return WitnessGrid(row["d"], tuple(Placed(k, o["name"], (o["i"], o["j"]), o["name"] in asked)
                                       for k, o in enumerate(objects, 1)))
