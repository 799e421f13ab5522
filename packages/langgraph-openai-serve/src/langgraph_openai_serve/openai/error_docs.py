"""The error answers each route documents in the OpenAPI schema.

Documentation only: ``errors.py`` builds the envelopes. Each route lists the
statuses it can answer with ``error_responses(...)``; every one carries the
``ErrorResponse`` schema, and the ``default`` entry stands for anything else
(FastAPI then adds no 422 of its own, which LGOS never sends).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    message: str
    type: str
    """``invalid_request_error`` or ``server_error``."""
    param: str | None
    """The offending parameter (``input[0].content``), when there is one."""
    code: str | None


class ErrorResponse(BaseModel):
    """The OpenAI error envelope."""

    error: ErrorDetail


_WHEN = {
    400: "The request is malformed: a bad field, query parameter or body.",
    401: "A missing or unknown API key (only when LGOS_API_KEYS is set).",
    404: "Unknown model, Response id (in the caller's scope) or path.",
    405: "The path does not serve this method; see the Allow header.",
    409: "The interrupt run is busy or the answers do not match its pause.",
    413: "The request body is larger than LGOS_MAX_REQUEST_BYTES.",
    422: "The Idempotency-Key was already used with another body.",
    500: "An unexpected error; details are only in the server's log.",
    503: "No database connection is free; retry after Retry-After seconds.",
    504: "The run exceeded LGOS_RUN_TIMEOUT and was cancelled.",
}
EVERY_ROUTE = (401, 404, 405, 500, 503)
"""Statuses any authenticated route may answer."""
PUBLIC_ROUTE = (405, 500)
"""Statuses a route outside the key check (health) may answer."""


def error_responses(
    *statuses: int, base: tuple[int, ...] = EVERY_ROUTE
) -> dict[int | str, dict[str, Any]]:
    """FastAPI ``responses=`` documenting ``statuses`` (plus ``base``) with
    the envelope schema."""
    documented: dict[int | str, dict[str, Any]] = {
        status: {"model": ErrorResponse, "description": _WHEN[status]}
        for status in sorted({*base, *statuses})
    }
    documented["default"] = {"model": ErrorResponse, "description": "Any error."}
    return documented
