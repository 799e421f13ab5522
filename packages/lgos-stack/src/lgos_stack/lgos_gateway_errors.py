"""A LiteLLM callback: LGOS's own error, readable, through the gateway.

LiteLLM hands a backend's error on as one string: ``litellm.BadRequestError:
OpenAIException - {"error": {...}}`` (Responses) or ``litellm.APIError:
APIError: OpenAIException - <message>`` (Chat Completions), followed by a line
about fallbacks, so a person reads LiteLLM's plumbing or raw JSON (e.g. LGOS's
413 for a body past ``LGOS_MAX_REQUEST_BYTES``). This callback answers with
the backend's own message instead, with the same status (and the envelope's
type and param when there is one). LiteLLM puts the status in the envelope's
``code``; LGOS's own code (``interrupt_state_conflict``, ``run_busy``...)
travels in ``provider_specific_fields.error.code``. Other errors pass
unchanged.

Like ``lgos_gateway_auth.py`` this file runs inside LiteLLM only: the native
stack copies it beside LiteLLM's ``config.yaml`` and compose mounts it beside
its gateway configuration; ``litellm_settings.callbacks`` names
``lgos_gateway_errors.readable_errors``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import HTTPException
from litellm.integrations.custom_logger import CustomLogger

_ENVELOPE = '{"error"'
_WRAPPED = re.compile(
    r"OpenAIException - (?P<message>.+?)(?:\n\nLiteLLM: .*)?\Z", re.DOTALL
)


def readable_error(text: str) -> dict[str, Any] | None:
    """The backend's error inside LiteLLM's text: its envelope's ``error``
    object, else ``{"message": ...}`` unwrapped; ``None`` if neither."""
    error = backend_error(text)
    if error is not None:
        return error
    wrapped = _WRAPPED.search(text)
    if wrapped is None:
        return None
    return {"message": wrapped.group("message").strip()}


def backend_error(text: str) -> dict[str, Any] | None:
    """The first OpenAI error envelope's ``error`` object inside ``text``."""
    start = text.find(_ENVELOPE)
    while start != -1:
        try:
            found, _ = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            found = None
        error = found.get("error") if isinstance(found, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error
        start = text.find(_ENVELOPE, start + 1)
    return None


class ReadableErrors(CustomLogger):  # type: ignore[misc]  # LiteLLM's, untyped here
    async def async_post_call_failure_hook(
        self,
        request_data: dict[str, Any],
        original_exception: Exception,
        user_api_key_dict: Any,
        traceback_str: str | None = None,
    ) -> HTTPException | None:
        status = getattr(original_exception, "status_code", None)
        if not isinstance(status, int) or not 400 <= status <= 599:
            return None
        text = getattr(original_exception, "message", None) or str(original_exception)
        error = readable_error(str(text))
        if error is None:
            return None
        # LiteLLM answers with the message, this type and param, and the
        # status as the envelope's code; the whole detail (LGOS's own code
        # among it) goes along as the envelope's provider_specific_fields.
        readable = HTTPException(status_code=status, detail={"error": error})
        readable.type = error.get("type")  # type: ignore[attr-defined]
        readable.param = error.get("param")  # type: ignore[attr-defined]
        return readable


readable_errors = ReadableErrors()
