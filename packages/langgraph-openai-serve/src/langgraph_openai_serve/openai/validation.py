"""What a request that pydantic rejected tells the client: message and ``param``.

Pydantic names the wrong field by a location that also holds union members
and validator steps (``("body", "messages", 0, "user", "content")``); OpenAI
names it by the path the client wrote (``messages[0].content``). This module
makes that translation and writes the message a client of the OpenAI API
expects; ``openai/errors.py`` puts the pair into the 400 envelope.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError

_REQUEST_PARTS = frozenset({"query", "path", "header", "cookie"})
_UNPARSEABLE_BODY = (
    "We could not parse the JSON body of your request. The body must be a JSON object."
)
# Top-level fields clients send that LGOS rejects on purpose, with the reason.
_UNSUPPORTED_HINTS = {
    "functions": "The deprecated 'functions' parameter is not supported; use 'tools'.",
    "function_call": "The deprecated 'function_call' parameter is not supported; "
    "use 'tool_choice'.",
}
_GENERATION_CONTROLS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "n",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "seed",
        "reasoning_effort",
        "response_format",
        "truncation",
        "service_tier",
        "stream_options",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_retention",
        "prompt_cache_options",
        "context_management",
    }
)
# Values LGOS refuses on purpose, by the param of the wrong value.
_VALUE_HINTS = {
    "reasoning.effort": "Reasoning effort is owned by the graph's own model "
    "configuration; 'reasoning' only takes a 'summary', which shows status "
    "updates as reasoning summaries.",
    "text.format.type": "'text.format.type' may be 'text', or 'json_schema' for "
    "a model that accepts structured output.",
    "response_format.type": "'response_format.type' may be 'text', or "
    "'json_schema' for a model that accepts structured output.",
}
_QUOTED = re.compile(r"'([^']+)'")
# Among errors at the same depth, the one that says most about the client's
# mistake wins: a wrong literal over an unsupported field over a missing one.
_ERROR_RANK = {
    "union_tag_invalid": 4,
    "item_type_invalid": 4,
    "literal_error": 3,
    "extra_forbidden": 2,
    "missing": 1,
}


def message_and_param(exc: RequestValidationError) -> tuple[str, str | None]:
    """The message and OpenAI ``param`` of the 400 that answers ``exc``."""
    errors = exc.errors()
    first = errors[0] if errors else {"type": "value_error", "loc": (), "msg": ""}
    if first["type"] in {"json_invalid", "model_attributes_type", "model_type"} or (
        first["type"] == "missing" and tuple(first["loc"]) == ("body",)
    ):
        return _UNPARSEABLE_BODY, None
    if first["loc"] and first["loc"][0] in _REQUEST_PARTS:
        param = ".".join(str(part) for part in first["loc"][1:]) or None
        return _message(first, param), param
    body = getattr(exc, "body", None)
    # A union reports one error per member; the deepest path is the member
    # the client meant (a list part rather than the plain-string alternative).
    first, param = max(
        ((error, wire_param(error["loc"], body)) for error in errors),
        key=lambda pair: (_depth(pair[1]), _ERROR_RANK.get(pair[0]["type"], 0)),
    )
    if first["type"] == "item_type_invalid":
        param = f"{param}.type" if param else "type"
    elif first["type"] == "union_tag_invalid":
        ctx: Any = first.get("ctx") or {}
        key = _QUOTED.search(str(ctx.get("discriminator", "")))
        if key:
            param = f"{param}.{key.group(1)}" if param else key.group(1)
    return _message(first, param), param


def unsupported_control(param: str, accepted: Sequence[str] = ()) -> str:
    """Why a generation control (or ``response_format``) is refused."""
    message = (
        f"Unsupported parameter: '{param}'. Generation controls are owned by the "
        "graph's own model configuration"
    )
    if accepted:
        return f"{message}; this model accepts {', '.join(accepted)}."
    return f"{message}."


def _message(error: Any, param: str | None) -> str:
    kind = error["type"]
    if kind == "extra_forbidden" and param is not None:
        if param in _UNSUPPORTED_HINTS:
            return _UNSUPPORTED_HINTS[param]
        if param in _GENERATION_CONTROLS:
            return unsupported_control(param)
        return f"Unrecognized request argument supplied: {param}"
    if kind == "missing":
        return f"Missing required parameter: '{param}'."
    if param in _VALUE_HINTS:
        return _VALUE_HINTS[param]
    msg = str(error.get("msg", "invalid value")).rstrip(".")
    return f"Invalid value for '{param}': {msg}."


def _depth(param: str | None) -> int:
    """How many segments ``param`` names (``input[0].content`` has three)."""
    return 0 if not param else 1 + param.count(".") + param.count("[")


def wire_param(loc: Sequence[int | str], body: Any) -> str | None:
    """The OpenAI ``param`` path (``messages[0].content``) of a pydantic loc.

    A loc also names union members and validator steps; walking the request
    body keeps only the segments the client actually wrote.
    """
    path = ""
    node = body
    items = list(loc)
    if items and items[0] == "body":
        items = items[1:]
    for index, part in enumerate(items):
        if isinstance(node, dict) and isinstance(part, str):
            if part in node:
                path = f"{path}.{part}" if path else part
                node = node[part]
            elif index == len(items) - 1 and part.isidentifier():
                path = f"{path}.{part}" if path else part  # a missing field
            # otherwise ``part`` is a union tag, not a key the client wrote
        elif isinstance(node, list) and isinstance(part, int):
            path = f"{path}[{part}]"
            node = node[part] if 0 <= part < len(node) else None
    return path or None
