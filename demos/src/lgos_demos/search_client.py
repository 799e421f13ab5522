"""The graphs' search client: SearXNG's JSON API (or the offline demo search)."""

from __future__ import annotations

import httpx

from lgos_demos.sources import Source, unique


class SearchError(Exception):
    """The search engine did not answer with results."""


class SearchClient:
    """``GET {base_url}/search?q=...&format=json``, results as sources."""

    def __init__(self, base_url: str, *, limit: int = 5, timeout: float = 15) -> None:
        self.base_url = base_url.rstrip("/")
        self.limit = limit
        self.timeout = timeout

    async def search(self, query: str) -> list[Source]:
        """The top results for ``query``; raises ``SearchError`` on failure."""
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.get(
                    f"{self.base_url}/search", params={"q": query, "format": "json"}
                )
                response.raise_for_status()
                results = response.json().get("results")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise SearchError(f"search at {self.base_url} failed: {exc}") from exc
        if not isinstance(results, list):
            raise SearchError(f"search at {self.base_url} returned no result list")
        found = (Source.from_result(result) for result in results)
        return unique(source for source in found if source is not None)[: self.limit]
