"""A JSONL stream cut into lines, none held past a cap.

The input file arrives as byte chunks of any size. Its lines are cut at
``\\n`` (a ``\\r`` before it is JSON whitespace) as the chunks arrive; a line
longer than the cap is dropped as it streams past, never gathered, so
memory holds at most the cap and one chunk whatever the file holds. Only
``\\n`` ends a line: a JSON string may hold U+2028 or a form feed, which
``str.splitlines`` would cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line over the cap, dropped as it streamed past."""

    size: int
    """Its length in bytes (without the newline), counted, never held."""


async def capped_lines(
    chunks: AsyncIterator[bytes], max_bytes: int
) -> AsyncIterator[bytes | LongLine]:
    """Each line of ``chunks`` without its ``\\n``, or a ``LongLine`` in its
    place when it is longer than ``max_bytes``."""
    line = bytearray()
    dropped = 0  # > 0: the current line is past the cap, and this long so far
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            size = end - start
            if dropped or len(line) + size > max_bytes:
                yield LongLine(dropped + len(line) + size)
            else:
                line += chunk[start:end]
                yield bytes(line)
            line.clear()
            dropped = 0
            start = end + 1
        rest = len(chunk) - start
        if dropped:
            dropped += rest
        elif len(line) + rest > max_bytes:
            dropped = len(line) + rest
            line = bytearray()  # give the memory back, not just empty it
        else:
            line += chunk[start:]
    if dropped:
        yield LongLine(dropped)
    elif line:
        yield bytes(line)
