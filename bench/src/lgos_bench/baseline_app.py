"""The hand-written baseline: ``uvicorn --factory lgos_bench.baseline_app:create_app``.

Plain FastAPI routes that read the JSON body without validating it, call
``graph.astream`` / ``graph.ainvoke`` directly and write the frames of
``baseline_wire`` through Starlette's ``StreamingResponse``. It is the floor
LGOS is measured against, not a product: it trusts every request.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from starlette.responses import Response, StreamingResponse

from lgos_bench import baseline_wire as wire
from lgos_bench.workload import STATUS, Workload, build_graphs

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _chat_messages(raw: list[dict[str, Any]]) -> list[BaseMessage]:
    return [
        SystemMessage(content=m["content"])
        if m["role"] in ("system", "developer")
        else HumanMessage(content=m["content"])
        for m in raw
    ]


def _json(body: Any) -> Response:
    return Response(wire.dumps(body), media_type="application/json")


def _sse(frames: Any) -> StreamingResponse:
    return StreamingResponse(
        frames, media_type="text/event-stream", headers=_SSE_HEADERS
    )


def create_app(workload: Workload | None = None) -> FastAPI:
    """The baseline app serving the same graphs as ``lgos_app``."""
    graphs = build_graphs(workload or Workload.from_env())
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> Response:
        data = [{"id": name, "object": "model", "owned_by": "bench"} for name in graphs]
        return _json({"object": "list", "data": data})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        model = body["model"]
        inputs = {"messages": _chat_messages(body["messages"])}
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return _sse(wire.chat_stream(graphs[model], inputs, model, usage))
        output = await graphs[model].ainvoke(inputs)
        return _json(wire.chat_completion(model, output["messages"][-1]))

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = json.loads(await request.body())
        model = body["model"]
        inputs = {"messages": [HumanMessage(content=body["input"])]}
        tools = body.get("tools") or []
        if body.get("stream"):
            statuses = model == STATUS
            frames = wire.responses_stream(
                graphs[model], inputs, model, tools, statuses
            )
            return _sse(frames)
        output = await graphs[model].ainvoke(inputs)
        return _json(wire.response_completed(model, output["messages"][-1], tools))

    return app
