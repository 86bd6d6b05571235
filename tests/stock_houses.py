"""Houses sampled with stock ProcTHOR, for tests/scene/test_fast_procthor.py to compare with the fast
equivalents' byte for byte. Stock sampling takes about two seconds of CPU a house, so the sha256 of
STOCK_HOUSES of them are kept in STOCK_DIGESTS, written from stock ProcTHOR by

    python tests/stock_houses.py --digests

and every test run samples the STOCK_CHECKED houses with stock ProcTHOR again, proving the file against
stock, in a background job (tests/background.py):

    python tests/stock_houses.py FOLDER

FOLDER/house-K.json holds house K of STOCK_SEED as bench/scenes.py compares them: the scene document
of `sample_scene(STOCK_SEED, K, stock_procthor=True)`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

STOCK_SEED = 101
STOCK_HOUSES = 30
STOCK_CHECKED = (0, 3, 4, 5)  # a Bathroom, a Bedroom, a LivingRoom and a Kitchen: 8 s of CPU
STOCK_DIGESTS = Path(__file__).resolve().parent / "scene" / "stock_houses.json"


def stock_house(index: int) -> str:
    from pipeline.scene.procthor.sampling import sample_scene
    from pipeline.scene.scene_file import dumps, scene_document

    return dumps(scene_document(*sample_scene(STOCK_SEED, index, stock_procthor=True)))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stock_digests() -> list[str]:
    """The sha256 of houses 0..STOCK_HOUSES-1 as STOCK_DIGESTS keeps them."""
    kept = json.loads(STOCK_DIGESTS.read_text(encoding="utf-8"))
    assert kept["seed"] == STOCK_SEED and len(kept["sha256"]) == STOCK_HOUSES, \
        f"{STOCK_DIGESTS} is not of STOCK_SEED and STOCK_HOUSES: run `python tests/stock_houses.py --digests`"
    return kept["sha256"]


def main(argv: list[str]) -> int:
    from pipeline.parallel import ordered_map

    if argv == ["--digests"]:
        texts = ordered_map(stock_house, range(STOCK_HOUSES), workers=2)
        kept = {"seed": STOCK_SEED, "sha256": [digest(text) for text in texts]}
        STOCK_DIGESTS.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
        return 0
    (folder,) = map(Path, argv)
    for index, text in zip(STOCK_CHECKED, ordered_map(stock_house, STOCK_CHECKED, workers=2)):
        (folder / f"house-{index}.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
