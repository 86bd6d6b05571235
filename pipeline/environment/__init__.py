"""RoomSpace as a training environment (docs/semantics.md section 23).

`items` makes any configuration's questions one at a time, each the row a build writes for its room
(the build's own per-room code path, pipeline.dataset.build.RoomWork); `rungs` names which questions;
`curriculum` moves along rungs on the running reward. The trainers' adapters, each importing its
library only when imported itself (`pip install roomspace[train]`): `reasoning_gym_dataset`,
`verifiers_environment`, `trl_dataset` and `verl_data`.
"""
