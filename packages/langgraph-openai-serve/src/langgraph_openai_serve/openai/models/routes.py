"""``GET /models`` and ``GET /models/{model}`` with the ``lgos`` extension."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.graph.client_settings import contract_for
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.state import serve_state
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)

OWNED_BY = "langgraph-openai-serve"


def model_object(
    model_id: str,
    config: GraphConfig,
    created: int,
    *,
    detail: bool,
    stores_responses: bool = False,
) -> dict[str, Any]:
    """An OpenAI Model object plus LGOS's namespaced discovery extension.

    ``stores_responses``: the deployment keeps Responses, so a client may
    chain turns with ``previous_response_id`` instead of replaying them
    (shown only when true)."""
    lgos: dict[str, Any] = {
        "description": config.description,
        "features": sorted(feature.value for feature in config.features),
        "server_tools": list(config.server_tools),
        "client_tools": list(config.client_tools),
    }
    if config.supports(GraphFeature.INTERRUPTS):
        lgos["interrupt_protocol"] = config.interrupt_protocol
    if stores_responses:
        lgos["stores_responses"] = True
    if detail and config.generation_controls:
        lgos["generation_controls"] = sorted(
            c.value for c in config.generation_controls
        )
    if detail and config.client_settings is not None:
        lgos["client_settings"] = contract_for(config.client_settings).descriptor()
    return {
        "id": model_id,
        "object": "model",
        "created": created,
        "owned_by": OWNED_BY,
        "lgos": lgos,
    }


@router.get("/models", response_model=None, responses=error_responses())
async def list_models(request: Request) -> Response:
    """Every registered graph, with its description, features and tools."""
    state = serve_state(request)
    data = [
        model_object(
            model_id,
            config,
            state.created,
            detail=False,
            stores_responses=state.responses is not None,
        )
        for model_id, config in state.registry.registry.items()
    ]
    return json_response({"object": "list", "data": data})


@router.get("/models/{model}", response_model=None, responses=error_responses())
async def retrieve_model(model: str, request: Request) -> Response:
    """One graph with the complete ``lgos`` extension."""
    state = serve_state(request)
    config = state.registry.get_graph(model)
    stores = state.responses is not None
    return json_response(
        model_object(model, config, state.created, detail=True, stores_responses=stores)
    )
