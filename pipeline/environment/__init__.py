"""RoomSpace as a training environment (docs/semantics.md section 23).

`items` makes any configuration's questions one at a time, each the row a build writes for its room
(the build's own per-room code path, pipeline.dataset.build.RoomWork); `rungs` names which questions.
"""
