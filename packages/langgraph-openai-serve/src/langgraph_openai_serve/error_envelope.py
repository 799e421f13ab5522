"""The shape of OpenAI's error envelope, ``{"error": {message, type, param,
code}}``: what every error answer of the API carries (``openai/errors.py``
maps exceptions onto it) and what a batch writes for a line its run never
answered (``batches/steps.py``)."""

from __future__ import annotations

from typing import Any

INTERNAL_ERROR_MESSAGE = "Internal server error"
"""What a client is told of an unexpected failure (details go to the log)."""


def error_body(
    message: str, type_: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The OpenAI error envelope as a plain dict."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}
