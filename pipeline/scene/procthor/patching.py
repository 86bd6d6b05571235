"""The one way this project swaps a module or class attribute of ProcTHOR for the duration of a block."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def patched(owner: object, name: str, value: object) -> Iterator[None]:
    """`owner.name` is `value` inside the block; afterwards it is what it was (or absent again)."""
    had = hasattr(owner, name)
    original = getattr(owner, name, None)
    setattr(owner, name, value)
    try:
        yield
    finally:
        if had:
            setattr(owner, name, original)
        else:
            delattr(owner, name)
