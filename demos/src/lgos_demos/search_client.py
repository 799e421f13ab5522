"""The graphs' search client: SearXNG's JSON API (or the offline demo search).

The query travels in the URL, so it is bounded first (``search_query``): a
pasted document as the question must not become a URL that no client or
server accepts. Search engines weigh the first words anyway.
"""

from __future__ import annotations

import httpx

from lgos_demos.sources import Source, unique

MAX_QUERY_CHARS = 200
"""The longest query sent; longer text is cut at a word and ends with "…"."""


def search_query(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """``text`` as a search query: whitespace collapsed, at most ``limit``
    characters, cut at a word boundary and marked with "…" when shortened."""
    query = " ".join(text.split())
    if len(query) <= limit:
        return query
    cut = query[: limit - 1]
    if query[limit - 1] != " ":  # the cut ends inside a word: drop that word
        space = cut.rfind(" ")
        cut = cut[:space] if space > limit // 2 else cut
    return cut.rstrip() + "…"


class SearchError(Exception):
    """The search engine did not answer with results."""


class SearchClient:
    """``GET {base_url}/search?q=...&format=json``, results as sources."""

    def __init__(self, base_url: str, *, limit: int = 5, timeout: float = 15) -> None:
        self.base_url = base_url.rstrip("/")
        self.limit = limit
        self.timeout = timeout

    async def search(self, query: str) -> list[Source]:
        """The top results for ``query`` (bounded by ``search_query``); raises
        ``SearchError`` on failure."""
        params = {"q": search_query(query), "format": "json"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.get(f"{self.base_url}/search", params=params)
                response.raise_for_status()
                results = response.json().get("results")
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, AttributeError) as exc:
            raise SearchError(f"search at {self.base_url} failed: {exc}") from exc
        if not isinstance(results, list):
            raise SearchError(f"search at {self.base_url} returned no result list")
        found = (Source.from_result(result) for result in results)
        return unique(source for source in found if source is not None)[: self.limit]
