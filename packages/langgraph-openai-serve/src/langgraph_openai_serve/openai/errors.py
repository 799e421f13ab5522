"""The OpenAI error envelope, and the one table that maps errors onto it.

Every exception that leaves a route becomes ``{"error": {message, type,
param, code}}`` here and nowhere else; once a stream has started, an error is
its in-band failure instead (``openai/stream_failure.py``). The family, with
the status, ``code`` and ``[param]`` each answers (``type`` is
``server_error`` on the 5xx rows, ``requests`` on the 429, as OpenAI's
rate limits have it, else ``invalid_request_error``)::

    Exception
    ├── LGOSError                         500 unless a subclass answers
    │   ├── GraphNotFoundError            404 model_not_found [model]
    │   ├── InvalidRequestError           its status_code (400), code, [param]
    │   ├── RunBusyError                  409 run_busy
    │   ├── InterruptStateConflictError   409 interrupt_state_conflict [input]
    │   ├── PausedRunNotFoundError        404 response_not_found [previous_response_id]
    │   ├── RunTimeoutError               504 run_timeout
    │   ├── GraphConfigurationError       500 (a startup error, not a route's)
    │   ├── GraphError                    500 (a run broke the output contract)
    │   │   └── StructuredOutputError     500 invalid_structured_output (the
    │   │                                     answer does not match its schema)
    │   ├── ResponseNotFoundError         404 response_not_found
    │   │   └── PreviousResponseNotFoundError
    │   │                                 404 previous_response_not_found
    │   │                                     [previous_response_id]
    │   ├── ResponseInProgressError       409 response_in_progress
    │   ├── IdempotencyKeyReusedError     422 idempotency_key_reused [Idempotency-Key]
    │   ├── BatchNotFoundError            404 batch_not_found
    │   ├── ConversationNotFoundError     404 conversation_not_found
    │   │   └── RequestConversationNotFoundError
    │   │                                 404 conversation_not_found [conversation]
    │   ├── ConversationItemNotFoundError 404 item_not_found
    │   └── ConversationLockedError       400 conversation_locked [conversation]
    ├── ContextOverflowError (LangChain)  400 context_length_exceeded
    ├── RequestValidationError (FastAPI)  400, [param] from openai/validation.py
    ├── HTTPException (Starlette)         its status (404, 405 with Allow)
    ├── OperationalError (psycopg)        503 database_unavailable, Retry-After
    │   └── PoolTimeout (psycopg_pool)    503 server_busy, Retry-After
    ├── InterfaceError (psycopg)          503 database_unavailable, Retry-After
    ├── DatabaseTimeout (LGOS's deadline) 503 database_unavailable, Retry-After
    ├── LimitReached (admission)          429 rate_limit_exceeded (a tenant's
    │                                     limit) or 503 server_overloaded (the
    │                                     process's), Retry-After, x-ratelimit-*
    └── any other exception               500 server_error, details only logged

The table below names the module (``graph``, ``responses``, ``batches``,
``conversations``: their ``errors.py``) each LGOS error lives in.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from langchain_core.exceptions import ContextOverflowError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

from langgraph_openai_serve.batches import errors as batches
from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.conversations import errors as conversations
from langgraph_openai_serve.error_envelope import INTERNAL_ERROR_MESSAGE, error_body
from langgraph_openai_serve.graph import errors as graph
from langgraph_openai_serve.graph.generation import StructuredOutputError
from langgraph_openai_serve.observability.admission import refused
from langgraph_openai_serve.openai.validation import message_and_param
from langgraph_openai_serve.operations.admission import LimitReached
from langgraph_openai_serve.operations.outages import (
    RETRY_AFTER_SECONDS,
    Fault,
    database_fault,
)
from langgraph_openai_serve.responses import errors as responses

logger = logging.getLogger("langgraph_openai_serve")

UNAVAILABLE: dict[Fault, str] = {
    "server_busy": "The server has no free database connection right now; "
    "retry shortly.",
    "database_unavailable": "The server's database is unavailable right now; "
    "retry shortly.",
}
# A 404 and a 405 answer in these words, whatever detail the exception carries.
_HTTP_MESSAGES = {404: "Not found.", 405: "Method not allowed."}


def error_response(
    status_code: int,
    message: str,
    type_: str,
    *,
    param: str | None = None,
    code: str | None = None,
) -> Response:
    """An OpenAI error envelope response."""
    body = error_body(message, type_, param=param, code=code)
    return json_response(body, status_code)


def internal_error_response() -> Response:
    """The generic 500: details go to the log, never to the client."""
    return error_response(500, INTERNAL_ERROR_MESSAGE, "server_error")


@dataclass(frozen=True, slots=True)
class _Envelope:
    status: int
    code: str
    param: str | None = None


# Domain errors with a fixed answer: the message is the exception's own.
_TABLE: dict[type[Exception], _Envelope] = {
    graph.GraphNotFoundError: _Envelope(404, "model_not_found", "model"),
    graph.RunBusyError: _Envelope(409, "run_busy"),
    graph.InterruptStateConflictError: _Envelope(
        409, "interrupt_state_conflict", "input"
    ),
    graph.PausedRunNotFoundError: _Envelope(
        404, "response_not_found", "previous_response_id"
    ),
    responses.ResponseNotFoundError: _Envelope(404, "response_not_found"),
    responses.PreviousResponseNotFoundError: _Envelope(
        404, "previous_response_not_found", "previous_response_id"
    ),
    responses.ResponseInProgressError: _Envelope(409, "response_in_progress"),
    conversations.ConversationNotFoundError: _Envelope(404, "conversation_not_found"),
    batches.BatchNotFoundError: _Envelope(404, "batch_not_found"),
    conversations.RequestConversationNotFoundError: _Envelope(
        404, "conversation_not_found", "conversation"
    ),
    conversations.ConversationItemNotFoundError: _Envelope(404, "item_not_found"),
    conversations.ConversationLockedError: _Envelope(
        400, "conversation_locked", "conversation"
    ),
    responses.IdempotencyKeyReusedError: _Envelope(
        422, "idempotency_key_reused", "Idempotency-Key"
    ),
    ContextOverflowError: _Envelope(400, "context_length_exceeded"),
}
# Errors of the server's own limits: the message is the exception's own.
_SERVER_TABLE: dict[type[Exception], _Envelope] = {
    graph.RunTimeoutError: _Envelope(504, "run_timeout"),
    StructuredOutputError: _Envelope(500, "invalid_structured_output"),
}


def _table_entry(exc: Exception) -> tuple[_Envelope, str] | None:
    # The nearest class of ``exc`` in the table answers, with the message of
    # ``exc`` (or that class's name when it has none).
    for exc_class in type(exc).__mro__:
        envelope = _TABLE.get(exc_class)
        if envelope is not None:
            return envelope, str(exc) or exc_class.__name__
    return None


def server_failure(exc: BaseException | None) -> tuple[str, str] | None:
    """The ``code`` and message of one of the server's own failures that a
    client is told about (the server table), ``None`` for anything else."""
    entry = _SERVER_TABLE.get(type(exc)) if isinstance(exc, Exception) else None
    return None if entry is None else (entry.code, str(exc))


def refusal(exc: Exception) -> tuple[str, str] | None:
    """The ``code`` and message a request is refused with when ``exc`` is one
    of the table's domain errors; ``None`` for any other exception."""
    entry = _table_entry(exc)
    return None if entry is None else (entry[0].code, entry[1])


def response_for(exc: Exception) -> Response:
    """Map any exception to its envelope response (the single table)."""
    entry = _table_entry(exc)
    if entry is not None:
        envelope, message = entry
        return error_response(
            envelope.status,
            message,
            "invalid_request_error",
            param=envelope.param,
            code=envelope.code,
        )
    limit = _SERVER_TABLE.get(type(exc))
    if limit is not None:
        return error_response(limit.status, str(exc), "server_error", code=limit.code)
    if isinstance(exc, RequestValidationError):
        message, param = message_and_param(exc)
        return error_response(400, message, "invalid_request_error", param=param)
    if isinstance(exc, graph.InvalidRequestError):
        return error_response(
            exc.status_code,
            exc.message,
            "invalid_request_error",
            param=exc.param,
            code=exc.code,
        )
    if isinstance(exc, HTTPException):
        return _http_response(exc)
    if isinstance(exc, LimitReached):
        return refused_for_limit(exc)
    fault = database_fault(exc)
    if fault is not None:
        logger.warning("request.%s: %s", fault, exc)
        return _unavailable(fault)
    logger.error("request.failed", exc_info=exc)
    return internal_error_response()


def _unavailable(fault: Fault) -> Response:
    response = error_response(503, UNAVAILABLE[fault], "server_error", code=fault)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def refused_for_limit(exc: LimitReached) -> Response:
    """A tenant's limit: 429, with OpenAI's rate-limit headers for its
    requests running at once (the limit, none left, free again when a run
    ends); the process's: 503. Counted by the limit met."""
    refused(exc.limit)
    if exc.by_tenant:
        response = error_response(429, str(exc), "requests", code="rate_limit_exceeded")
        if exc.limit == "tenant_runs":
            response.headers["x-ratelimit-limit-requests"] = str(exc.allowed)
            response.headers["x-ratelimit-remaining-requests"] = "0"
            response.headers["x-ratelimit-reset-requests"] = f"{exc.retry_after}s"
    else:
        response = error_response(
            503, str(exc), "server_error", code="server_overloaded"
        )
    response.headers["Retry-After"] = str(exc.retry_after)
    return response


async def _handle(request: Request, exc: Exception) -> Response:
    return response_for(exc)


def install_error_handlers(app: FastAPI, routes: Sequence[BaseRoute] = ()) -> None:
    """Route every error of ``app`` through the envelope table (unexpected
    exceptions reach ``RequestContextMiddleware``, which uses it too).

    ``routes``: the app's routes, so a 405 names in ``Allow`` the methods of
    every route of its path (Starlette names the first route's only, and
    ``GET`` and ``DELETE /responses/{id}`` are two routes)."""
    handled = (RequestValidationError, graph.InvalidRequestError, LimitReached)
    for exc_class in (*handled, *_TABLE, *_SERVER_TABLE):
        app.add_exception_handler(exc_class, _handle)
    served = [route for route in routes if isinstance(route, Route) and route.methods]

    async def http_error(request: Request, exc: Exception) -> Response:
        response = response_for(exc)
        if isinstance(exc, HTTPException) and exc.status_code == 405:
            allowed: set[str] = set()
            for route in served:
                if route.matches(request.scope)[0] != Match.NONE:
                    allowed |= route.methods or set()
            if allowed:
                response.headers["Allow"] = ", ".join(sorted(allowed))
        return response

    app.add_exception_handler(HTTPException, http_error)


def install_http_error_handler(app: FastAPI) -> None:
    """Answer ``app``'s own 404 and 405 (paths outside the OpenAI mount)
    with the envelope; used on the host app LGOS creates."""
    app.add_exception_handler(HTTPException, _handle)


def _http_response(exc: HTTPException) -> Response:
    message = _HTTP_MESSAGES.get(exc.status_code) or str(exc.detail)
    type_ = "invalid_request_error" if exc.status_code < 500 else "server_error"
    response = error_response(exc.status_code, message, type_)
    if exc.headers:  # e.g. the ``Allow`` of a 405
        response.headers.update(exc.headers)
    return response
