"""``RequestRoute``: request-only endpoints skip FastAPI's request handler;
every other endpoint, and the OpenAPI document, stay FastAPI's."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from langgraph_openai_serve.routing import RequestRoute, add_routes
from starlette.responses import JSONResponse, Response

pytestmark = pytest.mark.anyio

router = APIRouter(route_class=RequestRoute)


@router.post("/echo", summary="Echo the body")
async def echo(request: Request) -> Response:
    # FastAPI's handler opens its dependency exit stacks in the scope.
    handled = "fastapi_inner_astack" in request.scope
    return JSONResponse({"body": (await request.body()).decode(), "fastapi": handled})


@router.get("/items/{item_id}")
async def item(item_id: int, request: Request) -> Response:
    return JSONResponse(
        {"item_id": item_id, "fastapi": "fastapi_inner_astack" in request.scope}
    )


@router.get("/plain-dict")
async def plain_dict(request: Request) -> dict[str, int]:
    return {"answer": 42}


async def _client() -> httpx.AsyncClient:
    app = FastAPI()
    add_routes(app, router)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    )


async def test_a_request_only_endpoint_answers_without_fastapis_handler():
    async with await _client() as client:
        response = await client.post("/echo", content=b"hello")

    assert response.json() == {"body": "hello", "fastapi": False}


async def test_an_endpoint_with_parameters_still_has_them_solved_and_validated():
    async with await _client() as client:
        solved = await client.get("/items/7")
        refused = await client.get("/items/seven")

    assert solved.json() == {"item_id": 7, "fastapi": True}
    assert refused.status_code == 422


async def test_an_endpoint_returning_data_is_still_serialized_by_fastapi():
    async with await _client() as client:
        response = await client.get("/plain-dict")

    assert response.json() == {"answer": 42}


async def test_request_only_routes_keep_their_openapi_operations():
    async with await _client() as client:
        document = (await client.get("/openapi.json")).json()

    assert document["paths"]["/echo"]["post"]["summary"] == "Echo the body"
    assert "/items/{item_id}" in document["paths"]
