"""``GET /health``: the process is up and its graphs are registered."""

from __future__ import annotations

from fastapi import APIRouter

from langgraph_openai_serve.openai.error_docs import PUBLIC_ROUTE, error_responses

router = APIRouter()


@router.get("/health", responses=error_responses(base=PUBLIC_ROUTE))
async def health() -> dict[str, str]:
    return {"status": "ok"}
