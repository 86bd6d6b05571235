"""RoomSpace: a spatial-reasoning benchmark built from seeded ProcTHOR single-room houses.

One subpackage per stage, each a pure function of the records of the stages before it
(see docs/semantics.md): scene -> spatial -> text -> render -> dataset -> evaluate.
"""

__version__ = "0.1.0"
