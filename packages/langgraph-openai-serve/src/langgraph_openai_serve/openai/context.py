"""Per-request context: request ids, API keys and one access-log line.

``RequestContextMiddleware`` wraps the whole OpenAI app. It gives every
response an ``X-Request-ID`` (echoing a valid incoming one), enforces the
optional API keys on every route but ``/health`` (a gateway key may name the
end user it acts for; no other caller may), turns an unexpected
exception into the 500 envelope, and logs one structured
``request.completed`` record with model, status, duration and, for streams,
how the stream ended. One middleware, one ``send`` wrapper per request.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from langgraph_openai_serve.api_keys import END_USER_HEADER, ApiKeys, EndUserError
from langgraph_openai_serve.batches.dispatch import INTERNAL_SCOPE_KEY
from langgraph_openai_serve.ids import random_hex
from langgraph_openai_serve.observability.http import route_template
from langgraph_openai_serve.observability.observer import NO_OBSERVER, Observer
from langgraph_openai_serve.observability.tracing import (
    end_server_span,
    start_server_span,
)
from langgraph_openai_serve.openai.auth import PRINCIPAL_STATE_KEY, bearer_token
from langgraph_openai_serve.openai.errors import error_response, logger, response_for

access_logger = logging.getLogger("langgraph_openai_serve.access")

REQUEST_ID_HEADER = b"x-request-id"
_LOG_STATE_KEY = "lgos_request"
_VALID_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
_PUBLIC_PATHS = frozenset({"/health"})
CLIENT_CLOSED = 499
"""The status counted for a request whose client left before any answer."""


@dataclass(slots=True)
class RequestLog:
    """What the access log says about one request; routes fill in the rest."""

    request_id: str
    method: str
    path: str
    started: float
    model: str | None = None
    status: int | None = None
    stream_outcome: str | None = None
    """completed, incomplete, failed or disconnected (streams only)."""


def request_log(request: Request) -> RequestLog | None:
    """The log record of ``request`` (``None`` outside the middleware)."""
    value = request.scope.get("state", {}).get(_LOG_STATE_KEY)
    return value if isinstance(value, RequestLog) else None


class RequestContextMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        api_keys: ApiKeys | None = None,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self.app = app
        self.api_keys = api_keys
        self.http = observer.http
        self.tracer = observer.tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        incoming = headers.get(REQUEST_ID_HEADER, b"")
        request_id = (
            incoming.decode() if _VALID_REQUEST_ID.fullmatch(incoming) else random_hex()
        )
        path = scope["path"][len(scope.get("root_path", "")) :] or "/"
        log = RequestLog(request_id, scope["method"], path, time.perf_counter())
        scope.setdefault("state", {})[_LOG_STATE_KEY] = log
        id_header = (REQUEST_ID_HEADER, request_id.encode())
        finished = False
        span = token = None
        if self.tracer is not None:
            span, token = start_server_span(self.tracer, scope)

        async def send_with_id(message: Message) -> None:
            nonlocal finished
            if message["type"] == "http.response.start":
                log.status = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            elif not message.get("more_body", False):
                finished = True
            await send(message)

        try:
            internal = INTERNAL_SCOPE_KEY in scope["state"]
            if path not in _PUBLIC_PATHS and not internal:
                caller = self._caller(scope, headers)
                if isinstance(caller, Response):
                    await caller(scope, receive, send_with_id)
                    return
                if caller is not None:
                    scope["state"][PRINCIPAL_STATE_KEY] = caller
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            # Starlette's server-error middleware answers in plain text and
            # re-raises; here every unexpected error becomes the envelope.
            if log.status is not None:
                logger.error("request.failed_after_start", exc_info=exc)
            else:
                await response_for(exc)(scope, receive, send_with_id)
        finally:
            if log.stream_outcome is None and log.status == 200 and not finished:
                log.stream_outcome = "disconnected"
            _log_completed(log)
            if self.http is not None or span is not None:
                route = route_template(scope)
                if self.http is not None:
                    self.http.observe(
                        route,
                        log.method,
                        log.status or CLIENT_CLOSED,
                        time.perf_counter() - log.started,
                    )
                if span is not None:
                    end_server_span(span, token, log.method, route, log.status)

    def _caller(
        self, scope: Scope, headers: dict[bytes, bytes]
    ) -> str | Response | None:
        """The request's principal (``None``: anonymous, when keys are not
        required), or the refusal to answer with."""
        end_users = (
            [value for name, value in scope["headers"] if name == _END_USER]
            if _END_USER in headers
            else []
        )
        holder = None
        if self.api_keys is not None:
            header = headers.get(b"authorization")
            token = bearer_token(header.decode("latin-1") if header else None)
            holder = self.api_keys.holder_for(token) if token else None
            if holder is None and self.api_keys.required:
                return _unauthorized()
        if not end_users:
            return holder.principal if holder is not None else None
        if holder is None or not holder.gateway:
            return _end_user_refused()
        if len(end_users) > 1:
            return _bad_end_user(f"Send one {END_USER_HEADER} header, not several.")
        try:
            return holder.acting_for(end_users[0].decode("latin-1"))
        except EndUserError as exc:
            return _bad_end_user(str(exc))


_END_USER = END_USER_HEADER.encode()


def _end_user_refused() -> Response:
    # A valid key that may not act for others: not a 401, which would say
    # the key itself is wrong.
    return error_response(
        403,
        f"Only a gateway key (LGOS_GATEWAY_KEYS) may name an end user in "
        f"{END_USER_HEADER}.",
        "invalid_request_error",
        param=END_USER_HEADER,
        code="end_user_not_allowed",
    )


def _bad_end_user(message: str) -> Response:
    return error_response(
        400,
        message,
        "invalid_request_error",
        param=END_USER_HEADER,
        code="invalid_end_user",
    )


def _unauthorized() -> Response:
    response = error_response(
        401,
        "Incorrect or missing API key. Send 'Authorization: Bearer <key>'.",
        "invalid_request_error",
        code="invalid_api_key",
    )
    response.headers["WWW-Authenticate"] = "Bearer"
    return response


def _log_completed(log: RequestLog) -> None:
    if not access_logger.isEnabledFor(logging.INFO):
        return  # the record and its fields are built only for a log that shows them
    duration_ms = round((time.perf_counter() - log.started) * 1000, 1)
    access_logger.info(
        "request.completed request_id=%s %s %s model=%s status=%s duration_ms=%s "
        "stream=%s",
        log.request_id,
        log.method,
        log.path,
        log.model,
        log.status,
        duration_ms,
        log.stream_outcome,
        extra={
            "request_id": log.request_id,
            "method": log.method,
            "path": log.path,
            "model": log.model,
            "status": log.status,
            "duration_ms": duration_ms,
            "stream_outcome": log.stream_outcome,
        },
    )
