"""Request ``metadata``: OpenAI's limits and LGOS's reserved prefix."""

from __future__ import annotations

from collections.abc import Set

RESERVED_PREFIX = "lgos_"
MAX_PAIRS = 16
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 512


def check_metadata(
    value: dict[str, str] | None, *, reserved: Set[str]
) -> dict[str, str] | None:
    """Validate limits; only the ``reserved`` ``lgos_`` keys are allowed.

    Raises:
        ValueError: with a message naming the offending key.
    """
    if value is None:
        return None
    if len(value) > MAX_PAIRS:
        raise ValueError(f"metadata may hold at most {MAX_PAIRS} key-value pairs")
    for key, item in value.items():
        if len(key) > MAX_KEY_CHARS:
            raise ValueError(f"metadata key {key!r} exceeds {MAX_KEY_CHARS} characters")
        if len(item) > MAX_VALUE_CHARS:
            raise ValueError(
                f"metadata value for {key!r} exceeds {MAX_VALUE_CHARS} characters"
            )
        if key.startswith(RESERVED_PREFIX) and key not in reserved:
            raise ValueError(
                f"metadata keys starting with {RESERVED_PREFIX!r} are reserved; "
                f"{key!r} is not one LGOS accepts here"
            )
    return value
