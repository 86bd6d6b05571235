"""RoomSpace under its distribution's name, for tools that find a package's tasks by that name.

The generator and the evaluator live in `pipeline`; this package holds only what a harness must
find as `roomspace` (inspect_ai: `inspect eval roomspace/roomspace`, see roomspace/inspect_tasks.py).
"""
