"""The search service's routes: ``/search``, ``/docs/{document}``, ``/health``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from lgos_demos.search.corpus import Corpus

ENGINE = "lgos-demo"


def create_app(corpus: Corpus | None = None, *, limit: int = 8) -> FastAPI:
    """The service over ``corpus`` (default: the bundled documents)."""
    documents = corpus if corpus is not None else Corpus.bundled()
    app = FastAPI(title="LGOS demo search", docs_url=None, redoc_url=None)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "sections": len(documents.sections)}

    @app.get("/search", response_model=None)
    async def search(
        request: Request,
        q: str = Query(default=""),
        format: str = Query(default="html"),
    ) -> JSONResponse | PlainTextResponse:
        if format != "json":
            # SearXNG answers 403 for a format its settings do not enable.
            return PlainTextResponse("Only format=json is enabled.", status_code=403)
        if not q.strip():
            return JSONResponse(
                {"error": "the q parameter is required"}, status_code=400
            )
        base = str(request.base_url).rstrip("/")
        hits = documents.search(q, limit=limit)
        results = [
            {
                "url": base + hit.section.path(),
                "title": hit.section.title,
                "content": hit.snippet,
                "engine": ENGINE,
                "engines": [ENGINE],
                "positions": [rank],
                "score": hit.score,
                "category": "general",
            }
            for rank, hit in enumerate(hits, 1)
        ]
        return JSONResponse(
            {
                "query": q,
                "number_of_results": len(results),
                "results": results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": [],
            }
        )

    @app.get("/docs")
    async def listing(request: Request) -> dict[str, list[str]]:
        base = str(request.base_url).rstrip("/")
        return {"documents": [f"{base}/docs/{slug}" for slug in documents.documents]}

    @app.get("/docs/{document}", response_model=None)
    async def document(document: str) -> PlainTextResponse:
        text = documents.documents.get(document)
        if text is None:
            return PlainTextResponse("No such document.", status_code=404)
        return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")

    return app
