"""The operations routes, outside the OpenAI prefix and without API keys.

One router, served by ``lgos serve``'s host app (``install``) and by ``lgos
worker``'s health port (``operations_app``), so every process of a fleet
answers the same paths:

- ``GET /health/live``: 200 while the process answers; checks nothing else,
  so an orchestrator restarts only a process that is stuck, never one whose
  database is down.
- ``GET /health/ready``: 200 when the process should get work; 503 with the
  reason (starting, draining, a dependency that fails) otherwise.

Add further operations routes (``/metrics``) to ``router`` here.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import JSONResponse

from langgraph_openai_serve.operations.readiness import Readiness

router = APIRouter(include_in_schema=False)

_READINESS_STATE_KEY = "lgos_readiness"
_NO_STORE = {"Cache-Control": "no-store"}


def install(app: FastAPI, readiness: Readiness) -> None:
    """Serve the operations routes on ``app`` with ``readiness``'s verdict."""
    setattr(app.state, _READINESS_STATE_KEY, readiness)
    app.include_router(router)


def operations_app(readiness: Readiness) -> FastAPI:
    """A bare app serving only the operations routes (a worker's health port)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    install(app, readiness)
    return app


def readiness_of(request: Request) -> Readiness:
    readiness: Readiness = getattr(request.app.state, _READINESS_STATE_KEY)
    return readiness


@router.get("/health/live")
async def live() -> JSONResponse:
    return JSONResponse({"status": "alive"}, headers=_NO_STORE)


@router.get("/health/ready")
async def ready(request: Request) -> JSONResponse:
    verdict = await readiness_of(request).verdict()
    return JSONResponse(
        verdict.body(), status_code=200 if verdict.ready else 503, headers=_NO_STORE
    )
