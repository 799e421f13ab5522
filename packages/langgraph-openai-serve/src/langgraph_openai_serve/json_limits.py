"""Limits of the JSON parser every request body goes through.

Neutral ground: the settings bound ``LGOS_MAX_JSON_DEPTH`` by it and the
OpenAI layer's body parser relies on it, so neither imports the other.
"""

from __future__ import annotations

PARSER_MAX_DEPTH = 200
"""Nesting pydantic-core's JSON parser accepts; deeper is ``json_invalid``."""
