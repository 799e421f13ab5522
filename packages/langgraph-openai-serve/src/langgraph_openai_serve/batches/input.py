"""The input file, read as a stream and checked line by line.

Each line is ``{"custom_id", "method", "url", "body"}``. A batch runs only
when every line is valid; otherwise it fails with ``errors.data`` naming the
code, the line and the parameter of each problem (up to ``MAX_ERRORS``).
Valid lines go to the store in groups as they are read, so memory holds one
group and the set of ``custom_id`` values, never the file.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.batches.objects import batch_error
from langgraph_openai_serve.batches.protocol import BatchLine
from langgraph_openai_serve.compact_json import dumps

MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
MAX_ERRORS = 100
_GROUP = 500


@dataclass(frozen=True, slots=True)
class Limits:
    lines: int = MAX_LINES
    bytes: int = MAX_BYTES


@dataclass(slots=True)
class Validation:
    """What reading the input found."""

    total: int = 0
    model: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)


async def read_lines(
    lines: AsyncIterator[str],
    *,
    endpoint: str,
    known_model: Callable[[str], bool],
    keep: Callable[[Sequence[BatchLine]], Awaitable[None]],
    limits: Limits,
) -> Validation:
    """Check every line of ``lines``; hand valid ones to ``keep`` in groups
    until the first error."""
    result = Validation()
    seen: set[str] = set()
    group: list[BatchLine] = []
    number = 0
    async for text in lines:
        number += 1
        if not text.strip():
            continue
        if result.total >= limits.lines:
            result.errors.append(
                batch_error(
                    "too_many_requests",
                    f"A batch may hold at most {limits.lines} requests.",
                    line=number,
                )
            )
            break
        checked = _check(text, number, endpoint, known_model, seen)
        if isinstance(checked, dict):
            result.errors.append(checked)
            if len(result.errors) >= MAX_ERRORS:
                break
            continue
        custom_id, body = checked
        seen.add(custom_id)
        if result.model is None:
            result.model = body["model"]
        if not result.errors:
            group.append(BatchLine(result.total, number, custom_id, dumps(body)))
            if len(group) >= _GROUP:
                await keep(group)
                group = []
        result.total += 1
    if group and not result.errors:
        await keep(group)
    if result.total == 0 and not result.errors:
        result.errors.append(
            batch_error("empty_file", "The input file holds no requests.")
        )
    return result


def _check(
    text: str,
    number: int,
    endpoint: str,
    known_model: Callable[[str], bool],
    seen: set[str],
) -> tuple[str, dict[str, Any]] | dict[str, Any]:
    """``(custom_id, body)`` of a valid line, else its error."""
    try:
        line = json.loads(text)
    except ValueError:
        return batch_error(
            "invalid_json_line", "The line is not valid JSON.", line=number
        )
    if not isinstance(line, dict):
        return batch_error(
            "invalid_json_line", "The line is not a JSON object.", line=number
        )
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return _invalid("custom_id must be a non-empty string.", number, "custom_id")
    if custom_id in seen:
        return batch_error(
            "duplicate_custom_id",
            f"The custom_id '{custom_id}' is used by an earlier line; each "
            "request needs its own.",
            line=number,
            param="custom_id",
        )
    if line.get("method") != "POST":
        return _invalid("method must be 'POST'.", number, "method")
    if line.get("url") != endpoint:
        return batch_error(
            "mismatched_endpoint",
            f"url must be the batch's endpoint '{endpoint}', not "
            f"{_shown(line.get('url'))}.",
            line=number,
            param="url",
        )
    extra = sorted(set(line) - {"custom_id", "method", "url", "body"})
    if extra:
        return _invalid(f"Unknown parameter '{extra[0]}'.", number, extra[0])
    body = line.get("body")
    if not isinstance(body, dict):
        return _invalid("body must be a JSON object.", number, "body")
    model = body.get("model")
    if not isinstance(model, str) or not known_model(model):
        return batch_error(
            "model_not_found",
            f"The model {_shown(model)} does not exist.",
            line=number,
            param="body.model",
        )
    for flag in ("stream", "background"):
        if body.get(flag) is True:
            return _invalid(
                f"A batch request runs to its end: '{flag}' is not supported.",
                number,
                f"body.{flag}",
            )
    return custom_id, body


def _invalid(message: str, number: int, param: str) -> dict[str, Any]:
    return batch_error("invalid_request", message, line=number, param=param)


def _shown(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)
