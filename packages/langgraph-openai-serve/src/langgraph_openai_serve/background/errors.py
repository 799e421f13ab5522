"""Errors of background Responses.

They belong to the background package, not to ``graph/`` (which knows no
Responses): ``ResponseNotFoundError`` and ``IdempotencyKeyReusedError`` are
``LGOSError`` subclasses the OpenAI surface maps to envelopes in its one table
(``openai/errors.py``).
"""

from __future__ import annotations

from langgraph_openai_serve.graph.errors import LGOSError


class ResponseNotFoundError(LGOSError, LookupError):
    """Unknown, foreign-scope and foreground ids share this one answer."""

    def __init__(self, response_id: str) -> None:
        super().__init__(f"No response '{response_id}' was found.")
        self.response_id = response_id


class IdempotencyKeyReusedError(LGOSError):
    """The ``Idempotency-Key`` was already used with a different request body."""

    def __init__(self, key: str) -> None:
        super().__init__(
            "This Idempotency-Key was already used with a different request body."
        )
        self.key = key
