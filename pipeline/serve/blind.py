"""The blind baselines' guesses at a question (`roomspace audit`'s majority and learned priors, fitted on
other rooms: pipeline.evaluate.audit), made a configuration at a time in a thread of their own when a
person asks for them (`fit`): no page waits for a fit, and browsing alone fits nothing (on RoomSpace-10K a
fit reads the configuration's every question)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from pipeline.dataset.audit import AUDITED, BlindUnavailable, blind_answers
from pipeline.errors import RoomspaceError
from pipeline.evaluate.audit import fitting_rows, read_questions
from pipeline.evaluate.rows import BenchmarkRows


@dataclass(frozen=True)
class Guess:
    """What the blind baselines say of one question, or why they say nothing yet."""

    majority: str | None = None
    learned: str | None = None
    note: str | None = None  # set when there is no guess: being fitted, not answerable blind, unavailable


class BlindGuesses:
    def __init__(self, rows: BenchmarkRows, seed: int = 0) -> None:
        self.rows, self.seed = rows, seed
        self._answers: dict[str, dict[str, tuple] | str] = {}  # configuration -> id -> guesses, or why none
        self._fitted: dict[str, threading.Event] = {}  # configuration -> set when its fit has ended
        self._lock = threading.Lock()

    def guess(self, config: str, question: str, question_type: str) -> Guess | None:
        """The guesses at a question; None when its configuration's baselines have not been asked for (`fit`)."""
        if question_type not in AUDITED:
            return Guess(note=f"no blind baseline answers {question_type} questions (`roomspace audit` judges maps "
                              "by their own prior, plans have none)")
        with self._lock:
            answers = self._answers.get(config)
        if answers is None:
            return None
        if isinstance(answers, str):
            return Guess(note=answers)
        majority, learned = answers.get(question, (None, None))
        return Guess(majority, None if learned is None else str(learned))

    def fit(self, config: str) -> None:
        """Begin fitting `config`'s blind baselines (once), in a thread of their own."""
        with self._lock:
            if config in self._answers:
                return
            self._answers[config] = "being fitted on this configuration's other rooms: reload in a moment"
            self._fitted[config] = threading.Event()
        threading.Thread(target=self._fit, args=(config,), daemon=True).start()

    def wait(self, config: str, timeout: float) -> bool:
        """Whether `config`'s fit, once begun, has ended within `timeout` seconds (for tests and benchmarks)."""
        with self._lock:
            fitted = self._fitted.get(config)
        return fitted is not None and fitted.wait(timeout)

    def _fit(self, config: str) -> None:
        try:
            fitting, _ = fitting_rows(self.rows)
            questions = read_questions(self.rows, [config])[config]
            fitted = read_questions(fitting, [config])[config] if fitting is not None else None
            found: dict[str, tuple] | str = blind_answers(questions, fitted, self.seed)
        except (BlindUnavailable, RoomspaceError) as error:
            found = f"unavailable: {error}"
        with self._lock:
            self._answers[config] = found
            self._fitted[config].set()
