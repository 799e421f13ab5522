"""Citations attached to a final ``AIMessage``, offset into its text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage

from langgraph_openai_serve.graph.errors import GraphError


@dataclass(frozen=True, slots=True)
class Citation:
    """A URL citation; ``end_index`` is inclusive, as OpenAI's is."""

    url: str
    title: str
    start_index: int
    end_index: int


def citation_slice(start_index: int, end_index: int, content: str) -> slice:
    """Convert an inclusive citation span into a validated Python slice.

    Raises:
        ValueError: the span does not lie inside ``content``.
    """
    stop = end_index + 1
    if not 0 <= start_index < stop <= len(content):
        raise ValueError(
            f"citation span {start_index}..{end_index} is outside a text of "
            f"{len(content)} characters"
        )
    return slice(start_index, stop)


def citations_from_message(message: AIMessage) -> tuple[Citation, ...]:
    """Every LangChain citation of ``message``, offset into ``message.text``.

    Raises:
        GraphError: a citation's span or ``cited_text`` does not match its text.
    """
    if isinstance(message.content, str):
        return ()
    return tuple(_citations(message.content))


def _citations(content: list[Any]) -> Iterator[Citation]:
    offset = 0
    for block in content:
        if isinstance(block, str):
            offset += len(block)
            continue
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = block.get("text", "")
        for annotation in block.get("annotations") or ():
            if annotation.get("type") != "citation" or not annotation.get("url"):
                continue
            yield _offset_citation(annotation, text, offset)
        offset += len(text)


def _offset_citation(annotation: dict[str, Any], text: str, offset: int) -> Citation:
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if not isinstance(start, int) or not isinstance(end, int):
        raise GraphError("A citation needs integer start_index and end_index.")
    try:
        span = citation_slice(start, end, text)
    except ValueError as exc:
        raise GraphError(f"Invalid citation for {annotation['url']}: {exc}") from exc
    cited = annotation.get("cited_text")
    if cited is not None and text[span] != cited:
        raise GraphError(
            f"Citation for {annotation['url']} names {cited!r} but its span "
            f"covers {text[span]!r}."
        )
    return Citation(
        url=annotation["url"],
        title=annotation.get("title") or "",
        start_index=start + offset,
        end_index=end + offset,
    )
