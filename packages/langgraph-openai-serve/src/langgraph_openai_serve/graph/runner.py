"""The one graph runner: LangGraph stream in, neutral run events out.

Streaming and non-streaming requests share this code; non-streaming runs only
skip the token subscription. Which model text is answer text follows
``GraphConfig.streamable_node_names`` and LangGraph's ``nostream`` tag, and
the streamed text must equal the final message's text (assistant text parity).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability, StreamMode

from langgraph_openai_serve.graph.answer import Answer
from langgraph_openai_serve.graph.config import AnyGraph, GraphConfig
from langgraph_openai_serve.graph.durable import (
    DurableThread,
    plan_durable_run,
    with_checkpointer,
)
from langgraph_openai_serve.graph.errors import (
    GraphConfigurationError,
    GraphError,
)
from langgraph_openai_serve.graph.events import (
    RunCompleted,
    RunEvent,
    RunPaused,
    TextDelta,
)
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.generation import check_answer
from langgraph_openai_serve.graph.interrupts import (
    InterruptPlan,
    discard_run,
    pending_interrupts,
    plan_interrupt_run,
)
from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.graph.server_tools import (
    ServerToolTracker,
    replayed_call_ids,
)
from langgraph_openai_serve.graph.status import read_status
from langgraph_openai_serve.graph.token_tap import TEXT_MODE, TokenTap, tapped
from langgraph_openai_serve.graph.usage import UsageCollector, counting

_NO_OUTPUT: Any = object()


class StreamParityError(GraphError):
    """The streamed answer text differs from the final message's text."""


RUN_NAME = "lgos.graph_run"


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """Everything needed to start one graph run, built before any output."""

    config: GraphConfig
    graph: AnyGraph
    request: GraphRequest
    input: Any
    context: Any
    callbacks: tuple[BaseCallbackHandler, ...] = ()
    """Server-wide handlers (Langfuse) added to the registered ones."""
    request_id: str | None = None
    replayed_call_ids: frozenset[str] = frozenset()
    interrupt: InterruptPlan | None = None
    durable: DurableThread | None = None


async def prepare_run(
    config: GraphConfig,
    request: GraphRequest,
    messages: list[BaseMessage],
    *,
    callbacks: tuple[BaseCallbackHandler, ...] = (),
    request_id: str | None = None,
    interrupt_thread: str | None = None,
    answers: Mapping[str, Any] | None = None,
    durable_thread: str | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    scope: str | None = None,
) -> PreparedRun:
    """Resolve the graph and run the adapters.

    ``scope`` is the server-trusted tenant of the request: the adapters (and
    so the graph's runtime context) see it as ``request.scope``.

    A ``durable_thread`` (not with ``interrupt_thread``) checkpoints the run
    after every node, with the graph's checkpointer or else ``checkpointer``
    (without either the run is not durable); when an earlier attempt left
    checkpoints there, the run resumes from them and ignores ``messages``.

    Adapter errors (``InvalidRequestError`` included) surface here, before a
    response has started.
    """
    if scope is not None and request.scope != scope:
        request = replace(request, scope=scope)
    graph = await config.resolve_graph()
    plan = (
        await plan_interrupt_run(graph, interrupt_thread, answers)
        if interrupt_thread is not None
        else None
    )
    durable = None
    if durable_thread is not None and plan is None:
        checkpointed = with_checkpointer(graph, checkpointer)
        if checkpointed is not None:
            graph = checkpointed
            durable = await plan_durable_run(graph, durable_thread)
    if plan is not None and plan.resume is not None:
        graph_input: Any = Command(resume=dict(plan.resume))
    elif durable is not None and durable.resumed:
        graph_input = None  # LangGraph continues from the last checkpoint
    else:
        graph_input = await config.build_input(request, messages)
    context = await config.build_context(request)
    if context is not None and graph.context_schema is None:
        raise GraphConfigurationError(
            "The graph received a runtime context but declares no context_schema."
        )
    return PreparedRun(
        config=config,
        graph=graph,
        request=request,
        input=graph_input,
        context=context,
        callbacks=callbacks,
        request_id=request_id,
        replayed_call_ids=(
            replayed_call_ids(messages) if request.server_tools else frozenset()
        ),
        interrupt=plan,
        durable=durable,
    )


def _runnable_config(run: PreparedRun) -> RunnableConfig:
    config = run.config.runnable_config(*run.callbacks)
    if run.callbacks or run.config.runtime_callbacks:
        # Tracing callbacks see one stably named run with LGOS's identifiers.
        metadata = {"lgos_model": run.request.model}
        if run.request_id is not None:
            metadata["lgos_request_id"] = run.request_id
        conversation = run.request.metadata.get("conversation_id")
        if conversation:
            metadata["langfuse_session_id"] = conversation
        config["run_name"] = RUN_NAME
        config["metadata"] = metadata
    if run.interrupt is not None:
        config["configurable"] = {"thread_id": run.interrupt.thread_id}
    elif run.durable is not None:
        config["configurable"] = {"thread_id": run.durable.thread_id}
    return config


def run_graph(
    run: PreparedRun, *, stream: bool, statuses: bool = False
) -> AsyncGenerator[RunEvent, None]:
    """Drive the graph once; yield text deltas (streaming) and the completion.

    With ``statuses`` (streaming only, graphs declaring
    ``GraphFeature.CLIENT_EVENTS``) published ``status_event()`` updates are
    yielded too. Nothing runs before the first event is asked for. A run
    without an interrupt plan is the driving generator itself, not one
    wrapped in another: every event (every token of a stream) crosses one
    generator less.

    Raises:
        StreamParityError: streamed text does not equal the final text.
        GraphError / GraphConfigurationError: the output breaks the contract.
    """
    plan = run.interrupt
    if plan is not None:
        return _run_planned(run, plan, stream=stream, statuses=statuses)
    parts, usage = _astream(run, stream=stream, statuses=statuses)
    return _drive(run, parts, usage, stream=stream)


def _astream(
    run: PreparedRun, *, stream: bool, statuses: bool
) -> tuple[AsyncIterator[Any], UsageCollector]:
    """The graph's LangGraph stream (not started yet) and the collector its
    model calls are counted with (``_drive`` attaches it).

    A streamed run whose only other output is its final state takes its
    answer text from a ``TokenTap`` (its collector) instead of the
    ``messages`` mode."""
    modes = _stream_modes(run, stream=stream, statuses=statuses)
    tap = modes == _TAPPABLE
    parts = run.graph.astream(
        run.input,
        _runnable_config(run),
        context=run.context,
        stream_mode=_VALUES_ONLY if tap else modes,
        durability=_durability(run),
    )
    if tap:
        collector = TokenTap(run.config.streamable_node_names)
        return tapped(parts, collector), collector
    return parts, UsageCollector()


_TAPPABLE: list[StreamMode] = ["values", "messages"]
_VALUES_ONLY: list[StreamMode] = ["values"]


async def _run_planned(
    run: PreparedRun, plan: InterruptPlan, *, stream: bool, statuses: bool
) -> AsyncGenerator[RunEvent, None]:
    """An interrupt run: its batch still pending, or the graph driven with
    its checkpoint discarded unless a pause or completion came out."""
    if plan.existing:
        yield RunPaused(plan.existing, "", None)
        return
    parts, usage = _astream(run, stream=stream, statuses=statuses)
    settled = False
    try:
        driven = _drive(run, parts, usage, stream=stream, plan=plan)
        async with aclosing(driven) as events:
            async for event in events:
                # The checkpoint must survive once a pause or completion is out.
                settled = settled or isinstance(event, RunPaused | RunCompleted)
                yield event
    finally:
        if not settled:
            # Failed or cancelled before producing a batch: nothing to resume.
            await asyncio.shield(discard_run(run.graph, plan.thread_id))


async def _drive(
    run: PreparedRun,
    parts: AsyncIterator[Any],
    usage: UsageCollector,
    *,
    stream: bool,
    plan: InterruptPlan | None = None,
) -> AsyncGenerator[RunEvent, None]:
    answer_nodes = run.config.streamable_node_names
    streamed: list[str] = []
    output = _NO_OUTPUT
    tools = (
        ServerToolTracker(frozenset(run.request.server_tools), run.replayed_call_ids)
        if run.request.server_tools
        else None
    )
    # The graph's model calls are counted while it runs (``counting``).
    with counting(usage):
        async for mode, data in parts:
            if mode == TEXT_MODE:
                streamed.append(data)
                yield TextDelta(data)
                continue
            if mode == "values":
                output = data
                continue
            if mode == "updates":
                if tools is not None:
                    for event in tools.read(data):
                        yield event
                continue
            if mode == "custom":
                status = read_status(data)
                if status is not None:
                    yield status
                continue
            chunk, metadata = data
            if not isinstance(chunk, AIMessageChunk):
                continue
            if (
                answer_nodes is not None
                and metadata["langgraph_node"] not in answer_nodes
            ):
                continue
            text = chunk.text
            if text:
                streamed.append(text)
                yield TextDelta(text)
    if plan is not None:
        where: RunnableConfig = {"configurable": {"thread_id": plan.thread_id}}
        pending = pending_interrupts(await run.graph.aget_state(where))
        if pending:
            plan.check_new_batch(pending)
            yield RunPaused(pending, "".join(streamed), usage.total)
            return
    if output is _NO_OUTPUT:
        raise GraphError("The graph finished without producing output.")
    if tools is not None:
        tools.finish()
    answer = Answer.from_message(await run.config.render_output(output))
    if run.request.output_schema is not None:
        check_answer(answer, run.request.output_schema)
    if stream:
        if not streamed:
            if answer.text:
                yield TextDelta(answer.text)
        elif "".join(streamed) != answer.text:
            raise StreamParityError(
                "The streamed answer text differs from the final message text; "
                "check streamable_node_names, nostream tags or output_to_message."
            )
    if plan is not None:
        await discard_run(run.graph, plan.thread_id)  # terminal: nothing to keep
    yield RunCompleted(answer, usage.total)


def _durability(run: PreparedRun) -> Durability | None:
    if run.interrupt is not None:
        return "exit"  # an interrupt run persists only when it pauses or finishes
    if run.durable is not None:
        return "sync"  # each node's checkpoint is written before the next starts
    return None


def _stream_modes(
    run: PreparedRun, *, stream: bool, statuses: bool
) -> list[StreamMode]:
    modes: list[StreamMode] = ["values"]
    if stream:
        modes.append("messages")
        if statuses and run.config.supports(GraphFeature.CLIENT_EVENTS):
            modes.append("custom")
    if run.request.server_tools:
        modes.append("updates")
    return modes
