"""Limits of the JSON LGOS parses from clients.

Neutral ground: the settings bound ``LGOS_MAX_JSON_DEPTH`` by the parser's
own limit, the OpenAI layer's body parser and the Batch API's line reader
measure depth the same way, so none of them imports another.
"""

from __future__ import annotations

import re

PARSER_MAX_DEPTH = 200
"""Nesting pydantic-core's JSON parser accepts; deeper is ``json_invalid``."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_A_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))


def too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects deeper than
    ``max_depth``. Free when it has too few brackets to; otherwise strings are
    cut out and innermost pairs removed one level per pass, at C speed."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_A_BRACKET)
    brackets = brackets.replace(b"{", b"[").replace(b"}", b"]")
    for _ in range(max_depth):
        brackets = brackets.replace(b"[]", b"")
        if not brackets:
            return False
    return b"[" in brackets


def too_many_elements(raw: bytes, max_elements: int) -> bool:
    """Whether the JSON text ``raw`` holds more than ``max_elements`` arrays
    and objects. Free when it has too few brackets to; otherwise counted with
    strings cut out, at C speed."""
    if raw.count(b"[") + raw.count(b"{") <= max_elements:
        return False
    outside = _STRING.sub(b"", raw)
    return outside.count(b"[") + outside.count(b"{") > max_elements
