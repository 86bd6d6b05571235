"""Prompts as a model receives them: the row's text (pipeline.text.prompts) and, for vision rows, its image.

Messages follow the OpenAI chat format that vLLM, Ollama, LM Studio and hosted APIs accept: a
text-only prompt is one user turn holding a string; a prompt with an image is one user turn
holding two content parts, the image (a PNG data URI) and then the text.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pipeline.text.prompts import DEFAULT_STYLE, row_prompt


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    image: bytes | None = None  # PNG, for the rows of vision_* configurations

    @property
    def messages(self) -> list[dict]:
        if self.image is None:
            return [{"role": "user", "content": self.text}]
        return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": png_data_uri(self.image)}},
                                             {"type": "text", "text": self.text}]}]

    def record(self) -> dict:
        return {"id": self.id, "prompt": self.text, "messages": self.messages}


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def prompt_columns(style: str = DEFAULT_STYLE) -> list[str]:
    """The columns `make_prompt` reads in `style` (vision rows also have `image`, agent rows their frames,
    composition rows their naming)."""
    if style == DEFAULT_STYLE:
        return ["id", "prompt", "image"]
    return ["id", "image", "story", "question", "options", "question_type", "setting", "view", "d", "facts",
            "modality", "story_view", "frame_changes", "naming", "image_name"]


def make_prompt(row: Mapping, style: str = DEFAULT_STYLE) -> Prompt:
    """The prompt of a dataset row; the default style is the row's own `prompt` column."""
    text = row["prompt"] if style == DEFAULT_STYLE else row_prompt(row, style)
    image = row.get("image")
    return Prompt(row["id"], text, None if image is None else image["bytes"])


def make_prompts(rows: Iterable[Mapping], style: str = DEFAULT_STYLE) -> Iterator[Prompt]:
    return (make_prompt(row, style) for row in rows)
