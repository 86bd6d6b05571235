"""RoomSpace: a spatial-reasoning benchmark built from seeded ProcTHOR single-room houses.

Stages, each a pure function of the previous stage's records (see ../shared/design.md):
scenes -> objects -> grid -> facts -> checker -> items -> dataset.
"""

__version__ = "0.1.0"
