"""Numbered sources in a prompt, and citations for the markers in an answer.

Graphs that retrieve show the model their sources as numbered blocks::

    Sources:

    [1] Quick start — LGOS
    URL: http://127.0.0.1:8002/docs/lgos#quick-start
    With Python 3.11+ and uv ...

and ask it to cite them as ``[1]``. ``cite()`` then turns each marker in the
answer into a LangChain citation whose URL is exactly the retrieved one; a
marker naming no source is left as plain text, so no URL is ever invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.messages.content import create_citation, create_text_block

_MARKER = re.compile(r"\[(\d{1,3})\]")
_BLOCK_START = re.compile(r"^\[(\d{1,3})\][ \t]+(\S.*)$", re.MULTILINE)
_URL_LINE = re.compile(r"^URL:[ \t]*(\S+)[ \t]*$", re.MULTILINE)

SOURCES_INSTRUCTION = (
    "Answer from the numbered sources below only. After each sentence that "
    "uses a source, cite it as [n]. If the sources do not answer the "
    "question, say so."
)


@dataclass(frozen=True, slots=True)
class Source:
    """One retrieved document: where it is, what it is called, what it says."""

    url: str
    title: str
    snippet: str

    @classmethod
    def from_result(cls, result: Any) -> Source | None:
        """A source from a SearXNG-style result mapping, if it has a URL."""
        if not isinstance(result, dict) or not isinstance(result.get("url"), str):
            return None
        title = result.get("title")
        snippet = result.get("content")
        return cls(
            url=result["url"],
            title=title if isinstance(title, str) and title else result["url"],
            snippet=snippet if isinstance(snippet, str) else "",
        )


def format_sources(sources: Sequence[Source]) -> str:
    """The numbered ``Sources:`` section of a prompt."""
    if not sources:
        return "Sources: none were found."
    blocks = [
        f"[{number}] {source.title}\nURL: {source.url}\n{source.snippet}".rstrip()
        for number, source in enumerate(sources, 1)
    ]
    return "Sources:\n\n" + "\n\n".join(blocks)


def read_sources(text: str) -> list[Source]:
    """The numbered blocks of a ``format_sources`` text, in order."""
    found: list[Source] = []
    starts = list(_BLOCK_START.finditer(text))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[start.end() : end]
        url = _URL_LINE.search(body)
        snippet = _URL_LINE.sub("", body).strip()
        found.append(
            Source(
                url=url.group(1) if url else "", title=start.group(2), snippet=snippet
            )
        )
    return found


def cite(text: str, sources: Sequence[Source]) -> list[Any]:
    """Citations for every ``[n]`` marker that names one of ``sources``.

    Each citation spans its sentence up to and including the marker.
    """
    citations: list[Any] = []
    previous_end = 0
    for marker in _MARKER.finditer(text):
        number = int(marker.group(1))
        if not 1 <= number <= len(sources):
            continue
        start = _sentence_start(text, marker.start(), previous_end)
        previous_end = marker.end()
        source = sources[number - 1]
        citations.append(
            create_citation(
                url=source.url,
                title=source.title,
                start_index=start,
                end_index=marker.end() - 1,
                cited_text=text[start : marker.end()],
            )
        )
    return citations


def cited_message(reply: AIMessage, sources: Sequence[Source]) -> AIMessage:
    """``reply`` with citations attached to its text (unchanged without any)."""
    text = reply.text
    citations = cite(text, sources)
    if not citations:
        return reply
    block: dict[str, Any] = dict(create_text_block(text=text, annotations=citations))
    return AIMessage(
        content=[block],
        id=reply.id,
        response_metadata=reply.response_metadata,
        usage_metadata=reply.usage_metadata,
    )


def unique(sources: Iterable[Source]) -> list[Source]:
    """``sources`` without repeated URLs, first occurrence kept."""
    seen: dict[str, Source] = {}
    for source in sources:
        seen.setdefault(source.url, source)
    return list(seen.values())


def _sentence_start(text: str, marker_start: int, floor: int) -> int:
    start = floor
    for boundary in (". ", "! ", "? ", "\n"):
        found = text.rfind(boundary, floor, marker_start)
        if found != -1:
            start = max(start, found + len(boundary))
    while start < marker_start and text[start].isspace():
        start += 1
    return start
