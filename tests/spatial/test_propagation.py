"""The compiled loops' image of a domain (pipeline.spatial.propagation._image): stopped early where
what is asked of its target is settled, what it shows agrees with the whole image."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pipeline.spatial.propagation import _image, tables

SIZE, WIDTH = 81, 2  # the 9 x 9 grid's cells: two words


def as_words(bits: int) -> np.ndarray:
    return np.array([bits & (2**64 - 1), bits >> 64], dtype=np.uint64)


def as_int(words: np.ndarray) -> int:
    return int(words[0]) | int(words[1]) << 64


bitsets = st.integers(0, 2**SIZE - 1)


@given(st.lists(bitsets, min_size=SIZE, max_size=SIZE), bitsets, bitsets)
def test_image_settles_what_the_whole_image_does(rows, values, target):
    relation = np.stack([as_words(row) for row in rows])
    whole = 0
    for v in range(SIZE):
        if values >> v & 1:
            whole |= rows[v]
    out = np.empty(WIDTH, dtype=np.uint64)
    met = _image(tables(relation), as_words(values), as_words(target), True, out)
    assert met == bool(whole & target)
    assert as_int(out) & ~whole == 0  # never more than the image
    covered = _image(tables(relation), as_words(values), as_words(target), False, out)
    assert covered == (target & ~whole == 0)
    # met with the target, what was made is the whole image's part of it: a revision narrows the same
    assert as_int(out) & target == whole & target
    if not covered:
        assert as_int(out) == whole
