"""The OpenAI application's routes, error handlers and middleware.

``install_openai`` turns the app the services built into the OpenAI API:
every surface's router, the error envelope for every route, the request
context middleware (request ids, API keys, the access log) and CORS, and
the request bodies in the OpenAPI document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from langgraph_openai_serve.api_keys import ApiKeys
from langgraph_openai_serve.observability.observer import Observer
from langgraph_openai_serve.openai import health
from langgraph_openai_serve.openai.batches import routes as batch_routes
from langgraph_openai_serve.openai.batches.schemas import BatchCreateRequest
from langgraph_openai_serve.openai.chat import routes as chat_routes
from langgraph_openai_serve.openai.chat.schemas import ChatCompletionRequest
from langgraph_openai_serve.openai.context import RequestContextMiddleware
from langgraph_openai_serve.openai.conversations import routes as conversation_routes
from langgraph_openai_serve.openai.errors import install_error_handlers
from langgraph_openai_serve.openai.models import routes as model_routes
from langgraph_openai_serve.openai.request_body import document_bodies
from langgraph_openai_serve.openai.responses import routes as response_routes
from langgraph_openai_serve.openai.responses import stored as stored_routes
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.routing import add_routes

ROUTERS = (
    model_routes.router,
    chat_routes.router,
    response_routes.router,
    stored_routes.router,
    conversation_routes.router,
    batch_routes.router,
    health.router,
)


def install_openai(
    app: FastAPI,
    *,
    api_keys: ApiKeys | None,
    observer: Observer,
    cors_origins: list[str],
    keeps_responses: bool,
) -> None:
    """Serve the OpenAI API on ``app`` (``keeps_responses``: a response
    store is on, so ``store: true`` is documented as accepted)."""
    install_error_handlers(
        app, [route for router in ROUTERS for route in router.routes]
    )
    # Added last = outermost: CORS answers preflights before auth runs.
    app.add_middleware(RequestContextMiddleware, api_keys=api_keys, observer=observer)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["*"],
            expose_headers=["X-Request-ID"],
        )
    for router in ROUTERS:
        add_routes(app, router)
    document_bodies(
        app,
        ChatCompletionRequest,
        ResponseCreateRequest,
        *conversation_routes.BODY_MODELS,
        BatchCreateRequest,
        adjust=_allow_store if keeps_responses else None,
    )


def _allow_store(schema: dict[str, Any]) -> None:
    """A server that keeps Responses accepts ``store: true``."""
    schema["ResponseCreateRequest"]["properties"]["store"].pop("enum", None)
