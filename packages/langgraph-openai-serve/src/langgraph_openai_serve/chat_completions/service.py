"""The reference's Chat service and FastAPI dependencies, for host routes.

A host app can serve Chat Completions from its own route the way the
reference's route does: ``decode_chat_request`` -> ``prepare_run`` ->
``generate_completion`` or ``stream_owner.start(stream_completion(...))``;
``create_chat_completion`` is that route, ready to mount. The service drives
the graph and encodes exactly as ``/chat/completions`` does; a failure after
the stream started ends it with the coded error chunk and ``[DONE]``. Errors
before it started are raised (``InvalidRequestError``,
``GraphNotFoundError``); the host app's handlers decide their response.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import StreamingResponse
from langchain_core.messages import BaseMessage
from openai.types.chat import ChatCompletion

from langgraph_openai_serve.graph.completion import run_to_completion
from langgraph_openai_serve.graph.errors import GraphError
from langgraph_openai_serve.graph.events import RunCompleted
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.graph.runner import PreparedRun, run_graph
from langgraph_openai_serve.graph.runner import prepare_run as _prepare
from langgraph_openai_serve.openai.chat.decode import (
    check_graph_serves_chat,
    decode_chat_request,
)
from langgraph_openai_serve.openai.chat.encode import (
    ChatStreamEncoder,
    completion_body,
    stream_frames,
)
from langgraph_openai_serve.openai.chat.schemas import ChatCompletionRequest
from langgraph_openai_serve.openai.state import CheckpointScope, resolve_scope

GraphRun = PreparedRun
"""A graph run resolved and adapted, not started (``prepare_run``)."""


async def prepare_run(
    graph_request: GraphRequest,
    messages: list[BaseMessage],
    graph_registry: GraphRegistry,
) -> GraphRun:
    """Resolve ``graph_request.model``'s graph and run its input and context
    adapters, before any output.

    Raises:
        GraphNotFoundError: no graph is registered under the model.
        InvalidRequestError: an adapter refused the request.
    """
    config = graph_registry.get_graph(graph_request.model)
    return await _prepare(config, graph_request, messages)


async def generate_completion(
    chat_request: ChatCompletionRequest, run: GraphRun
) -> ChatCompletion:
    """Run the graph to its final message: one ``chat.completion``.

    Raises:
        GraphError: the run paused (an interrupt graph) or broke the contract.
    """
    completed, _ = await run_to_completion(run)
    if not isinstance(completed, RunCompleted):
        raise GraphError("A Chat Completions run paused.")
    body = completion_body(chat_request.model, completed.answer, completed.usage)
    return ChatCompletion.model_validate(body)


async def stream_completion(
    chat_request: ChatCompletionRequest, run: GraphRun
) -> AsyncGenerator[str, None]:
    """Stream the run as Chat Completions SSE text, ending with ``[DONE]``."""
    options = chat_request.stream_options
    encoder = ChatStreamEncoder(
        chat_request.model,
        include_usage=bool(options is not None and options.include_usage),
    )
    frames = stream_frames(run_graph(run, stream=True), encoder)
    async with aclosing(frames):
        async for frame in frames:
            yield frame.decode()


async def checkpoint_scope_dependency(request: Request) -> str:
    """The server-trusted checkpoint scope of ``request``: what the server's
    ``checkpoint_scope`` resolver returns, on a host route or a mounted one.

    Raises:
        GraphConfigurationError: the resolver returned no non-empty string.
    """
    state = getattr(request.app.state, "lgos", None)
    resolver: CheckpointScope = (
        state.checkpoint_scope
        if state is not None
        else request.app.state.checkpoint_scope
    )
    return await resolve_scope(resolver, request)


class StreamOwner:
    """Owns the response bodies a request started, closing them when the
    request ends (``Depends(stream_owner_dependency, scope="request")``).

    A body the client abandoned is closed then, so its graph run is
    cancelled at once instead of whenever the garbage collector finds it.
    """

    def __init__(self) -> None:
        self._bodies: list[AsyncGenerator[str, None]] = []

    def start(
        self, body: AsyncGenerator[str, None], run: GraphRun | None = None
    ) -> AsyncIterator[str]:
        """Own ``body`` (the stream of ``run``) and return it to respond with."""
        self._bodies.append(body)
        return body

    async def aclose(self) -> None:
        """Close every body still open."""
        bodies, self._bodies = self._bodies, []
        for body in bodies:
            await body.aclose()


async def stream_owner_dependency() -> AsyncIterator[StreamOwner]:
    """A request-scoped ``StreamOwner``; use with ``scope="request"`` so it
    outlives the streamed response."""
    owner = StreamOwner()
    try:
        yield owner
    finally:
        await owner.aclose()


async def graph_registry_dependency(request: Request) -> GraphRegistry:
    """The registry ``LanggraphOpenaiServe`` put on the app serving
    ``request`` (``app.state.graph_registry``)."""
    registry: GraphRegistry = request.app.state.graph_registry
    return registry


async def create_chat_completion(
    chat_request: ChatCompletionRequest,
    graph_registry: Annotated[GraphRegistry, Depends(graph_registry_dependency)],
    stream_owner: Annotated[
        StreamOwner, Depends(stream_owner_dependency, scope="request")
    ],
) -> StreamingResponse | ChatCompletion:
    """The reference's Chat route, to mount on a host app
    (``app.post(path, response_model=None)(create_chat_completion)``).

    Raises:
        GraphNotFoundError: no graph is registered as ``chat_request.model``.
        InvalidRequestError: the model uses interrupts or the request selects
            a server tool (both Responses only), or the conversation or an
            adapter is invalid; ``param`` says where.
    """
    config = graph_registry.get_graph(chat_request.model)
    check_graph_serves_chat(config, chat_request)
    graph_request, messages = decode_chat_request(
        chat_request, file_inputs=config.supports(GraphFeature.FILE_INPUTS)
    )
    run = await prepare_run(graph_request, messages, graph_registry)
    if chat_request.stream:
        body = stream_owner.start(stream_completion(chat_request, run), run)
        return StreamingResponse(body, media_type="text/event-stream")
    return await generate_completion(chat_request, run)
