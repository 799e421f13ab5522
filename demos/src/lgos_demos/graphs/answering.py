"""Steps several demo graphs share: reading the question, answering from
sources with citations."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph_openai_serve import status_event

from lgos_demos.search_client import SearchClient, SearchError, search_query
from lgos_demos.sources import (
    SOURCES_INSTRUCTION,
    Source,
    cited_message,
    format_sources,
)


def last_user_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the latest user message."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


def sources_prompt(sources: Sequence[Source]) -> SystemMessage:
    """The system message listing ``sources`` as numbered blocks."""
    return SystemMessage(content=f"{SOURCES_INSTRUCTION}\n\n{format_sources(sources)}")


async def answer_from_sources(
    model: BaseChatModel, messages: Sequence[BaseMessage], sources: Sequence[Source]
) -> AIMessage:
    """The model's answer over ``sources``, its ``[n]`` markers cited."""
    reply = await model.ainvoke([sources_prompt(sources), *messages])
    return cited_message(reply, sources)


async def retrieve(search: SearchClient, query: str) -> list[Source]:
    """Search with status updates; a failed search finds nothing.

    A long question is searched by its beginning (``search_query``), and the
    status shows what was searched."""
    write = get_stream_writer()
    query = search_query(query)
    write(status_event(f"Searching the docs for “{query}”"))
    try:
        sources = await search.search(query)
    except SearchError:
        write(status_event("The search service is unavailable", done=True))
        return []
    noun = "source" if len(sources) == 1 else "sources"
    write(status_event(f"Found {len(sources)} {noun}", done=True))
    return sources
