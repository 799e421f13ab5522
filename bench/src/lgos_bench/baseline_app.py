"""The hand-written baseline: ``uvicorn --factory lgos_bench.baseline_app:create_app``.

Plain FastAPI routes that read the JSON body without validating it, call
``graph.astream`` / ``graph.ainvoke`` directly and write the frames of
``baseline_wire`` through Starlette's ``StreamingResponse``. It is the floor
LGOS is measured against, not a product: it trusts every request.

Two baselines are built from it:

- **plain** (``create_app``): the answer's usage is its final message's, the
  last model call's only;
- **same work** (``create_same_work_app``): usage the way LGOS reports it,
  summed over every model call of the graph run, private ``nostream`` ones
  included, by LangChain's own ``UsageMetadataCallbackHandler`` attached to
  the run's config: what a hand-written endpoint that reports usage as
  LGOS does has to pay for, LangChain's callback machinery included.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.runnables import RunnableConfig
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


class RunUsage(UsageMetadataCallbackHandler):
    """LangChain's usage handler, its code unchanged, set up as cheaply as
    LangChain allows: inline, and skipping the events it has no use for
    (the flags LGOS's collector sets). As shipped the handler is not inline,
    so every callback event of a run, each streamed token's included, would
    be handed to the default thread pool: a baseline no careful person would
    keep, and one LGOS would beat by its cost alone."""

    run_inline = True
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_chat_model = True
    ignore_custom_event = True
    ignore_retry = True

    def total(self, _message: AIMessage | None = None) -> UsageMetadata | None:
        """Usage summed over every model (the handler keeps one sum per
        ``model_name``); ``None`` when no call reported any."""
        return functools.reduce(add_usage, self.usage_metadata.values(), None)


Counting = Callable[[], tuple[RunnableConfig | None, wire.UsageOf]]
"""Per request: the run's config and where its answer's usage comes from."""


def usage_from_message() -> tuple[RunnableConfig | None, wire.UsageOf]:
    return None, wire.message_usage


def usage_over_every_call() -> tuple[RunnableConfig | None, wire.UsageOf]:
    handler = RunUsage()
    return {"callbacks": [handler]}, handler.total


def _json(body: Any) -> Response:
    return Response(wire.dumps(body), media_type="application/json")


def _sse(frames: Any) -> StreamingResponse:
    return StreamingResponse(
        frames, media_type="text/event-stream", headers=_SSE_HEADERS
    )


def create_app(workload: Workload | None = None) -> FastAPI:
    """The plain baseline serving the same graphs as ``lgos_app``."""
    return _app(workload, usage_from_message)


def create_same_work_app(workload: Workload | None = None) -> FastAPI:
    """The same-work baseline: usage over every model call (``RunUsage``)."""
    return _app(workload, usage_over_every_call)


def _app(workload: Workload | None, counting: Counting) -> FastAPI:
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
        config, usage_of = counting()
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            frames = wire.chat_stream(
                graphs[model], inputs, model, usage, config, usage_of
            )
            return _sse(frames)
        output = await graphs[model].ainvoke(inputs, config)
        message = output["messages"][-1]
        return _json(wire.chat_completion(model, message, usage_of(message)))

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = json.loads(await request.body())
        model = body["model"]
        inputs = {"messages": [HumanMessage(content=body["input"])]}
        tools = body.get("tools") or []
        config, usage_of = counting()
        if body.get("stream"):
            statuses = model == STATUS
            frames = wire.responses_stream(
                graphs[model], inputs, model, tools, statuses, config, usage_of
            )
            return _sse(frames)
        output = await graphs[model].ainvoke(inputs, config)
        message = output["messages"][-1]
        usage = usage_of(message)
        return _json(wire.response_completed(model, message, tools, usage))

    return app
