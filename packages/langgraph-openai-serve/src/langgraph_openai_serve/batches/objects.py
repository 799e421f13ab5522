"""The wire shapes of the Batch API: the Batch object and the output lines.

Field by field as OpenAI's ``openai.types.Batch``; every ``*_at`` is present
(``None`` until it happens), ``request_counts`` and ``usage`` are added by
the store from its counters.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from langgraph_openai_serve.batches.protocol import Usage
from langgraph_openai_serve.ids import random_hex

BATCH_ENDPOINTS = ("/v1/responses", "/v1/chat/completions")
COMPLETION_WINDOW = "24h"


def new_batch_id(now: float) -> str:
    """``batch_`` + 12 hex digits of milliseconds + 12 random ones: ids sort
    by creation, so a page is a key range."""
    return f"batch_{int(now * 1000):012x}{secrets.token_hex(6)}"


def new_batch(
    *,
    endpoint: str,
    input_file_id: str,
    metadata: dict[str, str] | None,
    output_expires_after: dict[str, Any] | None,
    window_seconds: float,
) -> dict[str, Any]:
    now = time.time()
    created = int(now)
    return {
        "id": new_batch_id(now),
        "object": "batch",
        "endpoint": endpoint,
        "model": None,
        "errors": None,
        "input_file_id": input_file_id,
        "completion_window": COMPLETION_WINDOW,
        "status": "validating",
        "output_file_id": None,
        "error_file_id": None,
        "created_at": created,
        "in_progress_at": None,
        "expires_at": created + int(window_seconds),
        "finalizing_at": None,
        "completed_at": None,
        "failed_at": None,
        "expired_at": None,
        "cancelling_at": None,
        "cancelled_at": None,
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
        "metadata": metadata,
        "output_expires_after": output_expires_after,
    }


def errors_list(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """``Batch.errors``: OpenAI's list of ``BatchError``."""
    return {"object": "list", "data": errors}


def batch_error(
    code: str, message: str, *, line: int | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"code": code, "message": message, "param": param, "line": line}


def output_line(
    custom_id: str, status_code: int, request_id: str | None, body: Any
) -> dict[str, Any]:
    """One line of the output or error file for a request that ran: its
    status, request id and body (the Response or ChatCompletion object, or
    the error envelope)."""
    return {
        "id": f"batch_req_{random_hex()}",
        "custom_id": custom_id,
        "response": {
            "status_code": status_code,
            "request_id": request_id,
            "body": body,
        },
        "error": None,
    }


def usage_of(body: Any) -> Usage:
    """The tokens a Response or ChatCompletion object reports."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return Usage()
    if "prompt_tokens" in usage:  # Chat Completions
        return Usage(
            input_tokens=_int(usage.get("prompt_tokens")),
            output_tokens=_int(usage.get("completion_tokens")),
            cached_tokens=_int(
                _detail(usage, "prompt_tokens_details", "cached_tokens")
            ),
            reasoning_tokens=_int(
                _detail(usage, "completion_tokens_details", "reasoning_tokens")
            ),
        )
    return Usage(
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        cached_tokens=_int(_detail(usage, "input_tokens_details", "cached_tokens")),
        reasoning_tokens=_int(
            _detail(usage, "output_tokens_details", "reasoning_tokens")
        ),
    )


def _detail(usage: dict[str, Any], group: str, name: str) -> Any:
    details = usage.get(group)
    return details.get(name) if isinstance(details, dict) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def decoded(raw: bytes) -> Any:
    """A response body as JSON (bodies that are not JSON stay text)."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
