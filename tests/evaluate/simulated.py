"""A simulated model for testing the scorer: the checker's answers with seeded noise."""

from random import Random

from pipeline.seeding import derive_seed


def simulated_predictions(rows: list[dict], noise: float, twin_noise: float, seed: int = 0) -> list[dict]:
    """The right answer, except with probability `noise` (`twin_noise` on twin_* rows) a random option."""
    out = []
    for row in rows:
        rng = Random(derive_seed(seed, "simulated", row["id"]))
        wrong = rng.random() < (twin_noise if row["config"].startswith("twin_") else noise)
        out.append({"id": row["id"], "prediction": rng.choice(row["options"]) if wrong else row["answer"]})
    return out
