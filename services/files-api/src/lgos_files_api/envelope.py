"""The OpenAI error envelope, and the one table that maps errors onto it.

Every exception that leaves a route becomes ``{"error": {message, type, param,
code}}`` here and nowhere else. Store failures keep their detail in the log;
the client learns only that the store is unavailable (``/health`` too).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lgos_files_api.errors import (
    AuthenticationError,
    FileMissingError,
    FilesApiError,
    FileTooLargeError,
    InvalidRequestError,
    StoreError,
    TooManyUploadsError,
    UploadStalledError,
)

logger = logging.getLogger("lgos_files_api")

INVALID = "invalid_request_error"


def error_response(
    status_code: int,
    message: str,
    type_: str = INVALID,
    *,
    param: str | None = None,
    code: str | None = None,
) -> Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return Response(
        json.dumps(body), status_code=status_code, media_type="application/json"
    )


def response_for(exc: Exception) -> Response:
    """Map any exception to its envelope response (the single table)."""
    if isinstance(exc, AuthenticationError):
        return error_response(401, exc.message, code=exc.code)
    if isinstance(exc, FileMissingError):
        return error_response(404, exc.message, param=exc.param)
    if isinstance(exc, FileTooLargeError):
        return error_response(413, exc.message, param=exc.param, code="file_too_large")
    if isinstance(exc, TooManyUploadsError):
        # As OpenAI's rate limits answer: the SDKs wait Retry-After and retry.
        response = error_response(
            429, exc.message, "requests", code="rate_limit_exceeded"
        )
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, UploadStalledError):
        response = error_response(408, exc.message, code="upload_timeout")
        response.headers["Connection"] = "close"
        return response
    if isinstance(exc, InvalidRequestError):
        return error_response(400, exc.message, param=exc.param)
    if isinstance(exc, StoreError):
        logger.error("store.failed: %s", exc.message)
        return error_response(
            503, "The file store is unavailable; try again later.", "server_error"
        )
    if isinstance(exc, FilesApiError):
        return error_response(400, exc.message, param=exc.param)
    if isinstance(exc, RequestValidationError):
        return _validation_response(exc)
    if isinstance(exc, ClientDisconnect):
        # Nobody reads this answer; it only ends the request quietly.
        return error_response(400, "The client disconnected during the request.")
    if isinstance(exc, HTTPException):
        return _http_response(exc)
    logger.error("request.failed", exc_info=exc)
    return error_response(500, "Internal server error", "server_error")


async def _handle(request: Request, exc: Exception) -> Response:
    return response_for(exc)


def install_error_handlers(app: FastAPI) -> None:
    """Route every error of ``app`` through the envelope table."""
    for exc_class in (
        FilesApiError,
        RequestValidationError,
        HTTPException,
        ClientDisconnect,
    ):
        app.add_exception_handler(exc_class, _handle)
    app.add_middleware(CatchAllErrorsMiddleware)


class CatchAllErrorsMiddleware:
    """Answers an unexpected exception with the 500 envelope.

    Starlette's own server-error middleware answers in plain text. Once a
    response has started (a content stream), the error is logged and the
    connection ends: the status line is already gone.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch_start(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch_start)
        except Exception as exc:
            if started:
                logger.error("request.failed_after_start", exc_info=exc)
                return
            await response_for(exc)(scope, receive, send)


def _http_response(exc: HTTPException) -> Response:
    messages = {404: "Not found.", 405: "Method not allowed."}
    message = messages.get(exc.status_code, str(exc.detail))
    type_ = INVALID if exc.status_code < 500 else "server_error"
    return error_response(exc.status_code, message, type_)


def _validation_response(exc: RequestValidationError) -> Response:
    errors = exc.errors()
    first: dict[str, Any] = dict(errors[0]) if errors else {"loc": (), "msg": ""}
    # ("query", "limit") -> "limit": the name the client wrote.
    names = [part for part in first["loc"] if isinstance(part, str)]
    param = names[-1] if len(names) > 1 else None
    detail = str(first.get("msg", "invalid value")).rstrip(".")
    message = f"Invalid value for '{param}': {detail}." if param else f"{detail}."
    return error_response(400, message, param=param)
