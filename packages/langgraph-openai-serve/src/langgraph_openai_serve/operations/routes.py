"""The operations routes, outside the OpenAI prefix and without API keys.

One router, served by ``lgos serve``'s host app (``install``) and by ``lgos
worker``'s health port (``operations_app``), so every process of a fleet
answers the same paths:

- ``GET /health/live``: 200 while the process answers; checks nothing else,
  so an orchestrator restarts only a process that is stuck, never one whose
  database is down.
- ``GET /health/ready``: 200 when the process should get work; 503 with a
  reason code (``starting``, ``draining``, ``postgres_unavailable``...)
  otherwise, never an error's text (``readiness.py``).

- ``GET /metrics``: the process's Prometheus metrics (``observability/``),
  when metrics are on (``LGOS_METRICS_ENABLED``).
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import JSONResponse, Response

from langgraph_openai_serve.observability.exposition import MetricsSource
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.routing import add_routes

router = APIRouter(include_in_schema=False)

metrics_router = APIRouter(include_in_schema=False)

_READINESS_STATE_KEY = "lgos_readiness"
_METRICS_STATE_KEY = "lgos_metrics"
_NO_STORE = {"Cache-Control": "no-store"}


def install(
    app: FastAPI, readiness: Readiness, metrics: MetricsSource | None = None
) -> None:
    """Serve the operations routes on ``app`` with ``readiness``'s verdict,
    and ``GET /metrics`` from ``metrics`` unless it is ``None``."""
    setattr(app.state, _READINESS_STATE_KEY, readiness)
    add_routes(app, router)
    if metrics is not None:
        setattr(app.state, _METRICS_STATE_KEY, metrics)
        add_routes(app, metrics_router)


def operations_app(
    readiness: Readiness, metrics: MetricsSource | None = None
) -> FastAPI:
    """A bare app serving only the operations routes (a worker's health port)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    install(app, readiness, metrics)
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


@metrics_router.get("/metrics")
async def metrics(request: Request) -> Response:
    source: MetricsSource = getattr(request.app.state, _METRICS_STATE_KEY)
    body, content_type = await source.render(request.headers.get("accept", ""))
    return Response(body, headers={"Content-Type": content_type})
