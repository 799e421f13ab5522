"""Errors of kept and background Responses.

They belong here, not to ``graph/`` (which knows no Responses):
``ResponseNotFoundError`` and ``IdempotencyKeyReusedError`` are ``LGOSError``
subclasses the OpenAI surface maps to envelopes in its one table
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


class PreviousResponseNotFoundError(ResponseNotFoundError):
    """``previous_response_id`` names no stored Response of the caller's scope."""

    def __init__(self, response_id: str) -> None:
        LGOSError.__init__(
            self, f"Previous response with id '{response_id}' not found."
        )
        self.response_id = response_id


class ResponseInProgressError(LGOSError):
    """A background Response still queued or running cannot be deleted."""

    def __init__(self, response_id: str) -> None:
        super().__init__(
            f"Response '{response_id}' has not finished; wait for it or cancel it."
        )
        self.response_id = response_id
