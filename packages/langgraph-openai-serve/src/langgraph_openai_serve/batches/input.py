"""The input file, read as a stream and checked line by line.

Each line is ``{"custom_id", "method", "url", "body"}``. A batch runs only
when every line is valid; otherwise it fails with ``errors.data`` naming the
code, the line and the parameter of each problem (up to ``MAX_ERRORS``).
Valid lines go to the store in groups as they are read, so memory holds one
group (``_GROUP`` lines, ``_GROUP_BYTES`` at most) and a digest of each
``custom_id`` (16 bytes, whatever its length), never the file; an error
quotes at most ``_SHOWN`` characters of what the line said.

What one line may cost is bounded by configuration, not by its author: a
line over ``Limits.line_bytes`` is dropped while it streams past
(``jsonl.py``) and one whose body nests deeper than ``Limits.depth`` is
refused before it is parsed. Both are errors of that line, like unparsable
JSON. Parsing a line takes up to about 25 times its size (``[{},{},...]``:
a 64-byte dict per three bytes) and the checks around it a few times more,
so a validation holds at most about ``27 * line_bytes`` (measured on a
worker: 26.7 MiB for a 1 MiB line). A group costs about three times its
bytes while the driver encodes it (15-18 MiB measured for lines near the
cap), and the digests about 100 bytes a line (5 MiB for 50,000).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.batches.jsonl import LongLine, capped_lines
from langgraph_openai_serve.batches.objects import batch_error
from langgraph_openai_serve.batches.protocol import BatchLine
from langgraph_openai_serve.compact_json import dumps
from langgraph_openai_serve.json_limits import PARSER_MAX_DEPTH, too_deep

MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_ERRORS = 100
_GROUP = 500
_GROUP_BYTES = 4 * 1024 * 1024
"""A group goes to the store once its bodies and ids reach this size,
whatever its count: 500 lines of a megabyte would otherwise sit in memory
together."""
_SHOWN = 64


@dataclass(frozen=True, slots=True)
class Limits:
    lines: int = MAX_LINES
    bytes: int = MAX_BYTES
    """Of the whole input file."""
    line_bytes: int = MAX_LINE_BYTES
    depth: int = PARSER_MAX_DEPTH
    """Nesting of arrays and objects in a line's body, as in a request's
    (``LGOS_MAX_JSON_DEPTH``); the line itself one more."""


@dataclass(slots=True)
class Validation:
    """What reading the input found."""

    total: int = 0
    model: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)


async def read_lines(
    content: AsyncIterator[bytes],
    *,
    endpoint: str,
    known_model: Callable[[str], bool],
    keep: Callable[[Sequence[BatchLine]], Awaitable[None]],
    limits: Limits,
) -> Validation:
    """Check every line of the file ``content`` (its bytes, in chunks of any
    size); hand valid ones to ``keep`` in groups until the first error."""
    result = Validation()
    seen: set[bytes] = set()
    group: list[BatchLine] = []
    group_bytes = 0
    number = 0
    async for text in capped_lines(content, limits.line_bytes):
        number += 1
        if not isinstance(text, LongLine) and not text.strip():
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
        checked = _check(text, number, endpoint, known_model, seen, limits)
        if isinstance(checked, dict):
            result.errors.append(checked)
            if len(result.errors) >= MAX_ERRORS:
                break
            continue
        custom_id, body = checked
        seen.add(_digest(custom_id))
        if result.model is None:
            result.model = body["model"]
        if not result.errors:
            request = dumps(body)
            group.append(BatchLine(result.total, number, custom_id, request))
            group_bytes += len(request) + len(custom_id)
            if len(group) >= _GROUP or group_bytes >= _GROUP_BYTES:
                await keep(group)
                group, group_bytes = [], 0
        result.total += 1
    if group and not result.errors:
        await keep(group)
    if result.total == 0 and not result.errors:
        result.errors.append(
            batch_error("empty_file", "The input file holds no requests.")
        )
    return result


def _check(
    text: bytes | LongLine,
    number: int,
    endpoint: str,
    known_model: Callable[[str], bool],
    seen: set[bytes],
    limits: Limits,
) -> tuple[str, dict[str, Any]] | dict[str, Any]:
    """``(custom_id, body)`` of a valid line, else its error."""
    if isinstance(text, LongLine):
        return batch_error(
            "line_too_large",
            f"The line is {text.size} bytes long, over the limit of "
            f"{limits.line_bytes} bytes.",
            line=number,
        )
    if too_deep(text, limits.depth + 1):
        return batch_error(
            "json_too_deep",
            "The line's body nests arrays and objects deeper than "
            f"{limits.depth} levels.",
            line=number,
        )
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
    if _digest(custom_id) in seen:
        return batch_error(
            "duplicate_custom_id",
            f"The custom_id {_shown(custom_id)} is used by an earlier line; "
            "each request needs its own.",
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
        name = _cut(extra[0])
        return _invalid(f"Unknown parameter '{name}'.", number, name)
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


def _digest(custom_id: str) -> bytes:
    return hashlib.blake2b(custom_id.encode(), digest_size=16).digest()


def _shown(value: Any) -> str:
    """``value`` quoted in an error, cut short: a line's value may be as long
    as the line, and up to ``MAX_ERRORS`` errors are kept and answered."""
    return f"'{_cut(value)}'" if isinstance(value, str) else _cut(json.dumps(value))


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
