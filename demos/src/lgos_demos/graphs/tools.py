"""The server tools the graphs own: ``package_version`` and ``web_search``.

Both are ordinary LangChain tools executed by the graph's ``ToolNode``. The
model sees ``package_version`` as a function with one string argument:
``langchain-openai`` cannot read custom-tool calls back from Chat Completions,
and many OpenAI-compatible providers have no custom tools, while LGOS still
presents the call to Responses clients as the ``custom`` tool they selected.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from langchain_core.tools import BaseTool, tool
from langgraph.config import get_stream_writer
from langgraph_openai_serve import status_event

from lgos_demos.search_client import SearchClient, SearchError, search_query
from lgos_demos.sources import Source

WEB_SEARCH = "web_search"
PACKAGE_VERSION = "package_version"


def package_version_tool() -> BaseTool:
    @tool(PACKAGE_VERSION)
    def package_version(package: str) -> str:
        """Which version of a Python package is installed on the server."""
        name = package.strip()
        get_stream_writer()(status_event(f"Looking up the installed version of {name}"))
        try:
            return f"{name} {metadata.version(name)} is installed."
        except (metadata.PackageNotFoundError, ValueError):
            return f"{name} is not installed."

    return package_version


def web_search_tool(search: SearchClient) -> BaseTool:
    @tool(WEB_SEARCH, response_format="content_and_artifact")
    async def web_search(query: str) -> tuple[str, list[dict[str, Any]]]:
        """Search the web; returns page titles and links."""
        write = get_stream_writer()
        query = search_query(query)
        write(status_event(f"Searching the web for “{query}”"))
        try:
            sources = await search.search(query)
        except SearchError:
            write(status_event("The search service is unavailable", done=True))
            return "The search service is unavailable.", []
        noun = "result" if len(sources) == 1 else "results"
        write(status_event(f"Found {len(sources)} {noun}", done=True))
        listing = "\n".join(f"- {s.title}: {s.url}" for s in sources)
        found = [
            {"url": s.url, "title": s.title, "content": s.snippet} for s in sources
        ]
        return listing or "No results.", found

    return web_search


def sources_of(artifact: Any) -> list[Source]:
    """The sources a ``web_search`` call kept as its artifact (SearXNG-shaped
    results: ``url``, ``title``, ``content``)."""
    if not isinstance(artifact, list):
        return []
    found = (Source.from_result(item) for item in artifact)
    return [source for source in found if source is not None]
