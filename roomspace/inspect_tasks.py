"""The inspect_ai task `roomspace/roomspace`, loaded by the package's `inspect_ai` entry point.

inspect names a task after the top-level import package defining it when it counts that package as
installed (in site-packages, or an editable install whose metadata it finds), and leaves the name
bare otherwise (an editable install run from the checkout, where setuptools' roomspace.egg-info
hides the editable marker). The task is therefore defined in this package, named `roomspace`, and
given the full name `roomspace/roomspace` where inspect would add no prefix: the same name in every
install. What it does is `pipeline.evaluate.harness.inspect_tasks.roomspace`.
"""

from __future__ import annotations

import inspect as signatures

from inspect_ai import Task, task
from inspect_ai._util.package import get_installed_package_name  # the rule inspect names tasks by

from pipeline.evaluate.harness import inspect_tasks

PACKAGE = __name__.split(".")[0]
TASK_NAME = f"{PACKAGE}/roomspace"


def roomspace(*args, **kwargs) -> Task:
    return inspect_tasks.roomspace(*args, **kwargs)


roomspace.__doc__ = inspect_tasks.roomspace.__doc__
roomspace.__signature__ = signatures.signature(inspect_tasks.roomspace)  # inspect reads the -T parameters here
roomspace = task(name="roomspace" if get_installed_package_name(roomspace) == PACKAGE else TASK_NAME)(roomspace)
