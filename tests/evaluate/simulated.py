"""A simulated model for testing the scorer: the right answers, with seeded noise that depends on the row's kind."""

from random import Random

from pipeline.seeding import derive_seed


def row_kind(row: dict) -> str:
    """story, twin, image+story or image."""
    if row["config"].startswith("twin_"):
        return "twin"
    return row.get("modality") or "story"


def simulated_predictions(rows: list[dict], noise: dict[str, float], seed: int = 0) -> list[dict]:
    """The row's answer, except with probability noise[kind] (0 for a kind not given) a random option."""
    out = []
    for row in rows:
        rng = Random(derive_seed(seed, "simulated", row["id"]))
        wrong = rng.random() < noise.get(row_kind(row), 0.0)
        out.append({"id": row["id"], "prediction": rng.choice(row["options"]) if wrong else row["answer"]})
    return out
