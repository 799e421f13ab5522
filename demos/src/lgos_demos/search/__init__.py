"""Offline web search: SearXNG's JSON search API over a bundled corpus.

``lgos-demo-search`` serves ``GET /search?q=...&format=json`` answering
``{"query", "number_of_results", "results": [{"url", "title", "content", ...}],
...}`` like SearXNG, and serves the documents themselves under ``/docs/``.
Point ``DEMO_SEARCH_URL`` at a real SearXNG (JSON format enabled) instead.
"""
