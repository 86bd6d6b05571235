"""Houses sampled with stock ProcTHOR, for tests/scene/test_fast_procthor.py to compare with the fast
equivalents' byte for byte: a background job (tests/background.py; stock sampling takes about two
seconds of CPU a house).

    python tests/stock_houses.py FOLDER

FOLDER/house-K.json holds house K of STOCK_SEED (K below STOCK_HOUSES) as bench/scenes.py compares
them: the scene document of `sample_scene(STOCK_SEED, K, stock_procthor=True)`.
"""

from __future__ import annotations

import sys
from pathlib import Path

STOCK_SEED = 101
STOCK_HOUSES = 30


def stock_house(index: int) -> str:
    from pipeline.scene.procthor.sampling import sample_scene
    from pipeline.scene.scene_file import dumps, scene_document

    return dumps(scene_document(*sample_scene(STOCK_SEED, index, stock_procthor=True)))


def main(folder: Path) -> int:
    from pipeline.parallel import ordered_map

    for index, text in enumerate(ordered_map(stock_house, range(STOCK_HOUSES), workers=2)):
        (folder / f"house-{index}.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
