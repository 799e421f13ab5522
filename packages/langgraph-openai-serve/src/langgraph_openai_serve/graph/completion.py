"""Ending a graph run: a non-streaming run driven to its completion, and
what a run watch records when a run ends (streamed runs' encoders call
``watch_end`` themselves)."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from langgraph_openai_serve.graph.errors import GraphError, RunTimeoutError
from langgraph_openai_serve.graph.events import RunCompleted, RunPaused
from langgraph_openai_serve.graph.runner import PreparedRun, run_graph
from langgraph_openai_serve.graph.server_tools import ServerToolCall, ServerToolResult
from langgraph_openai_serve.observability.runs import RunWatch


def watch_end(watch: RunWatch, event: RunCompleted | RunPaused) -> None:
    """Tell ``watch`` how the run ended: completed, incomplete (the answer
    stopped early) or paused."""
    if type(event) is RunPaused:
        watch.finish("paused", event.usage)
    else:
        assert isinstance(event, RunCompleted)
        complete = event.answer.stop == "complete"
        watch.finish("completed" if complete else "incomplete", event.usage)


async def run_to_completion(
    run: PreparedRun,
    *,
    time_limit: float | None = None,
    watch: RunWatch | None = None,
) -> tuple[RunCompleted | RunPaused, tuple[ServerToolCall | ServerToolResult, ...]]:
    """Drive a non-streaming run: its completion (or pause) and server-tool
    activity; ``watch`` records how it went.

    Raises:
        RunTimeoutError: the run outlived ``time_limit`` seconds; the graph
            was cancelled.
    """
    if watch is None:
        return await _complete_within(run, time_limit)
    watch.start()
    try:
        ended, activity = await _complete_within(run, time_limit)
    except asyncio.CancelledError:
        watch.cut()
        raise
    except BaseException as exc:
        watch.finish("failed", error=exc)
        raise
    for event in activity:
        if type(event) is ServerToolResult:
            watch.tool(event.name, event.failed)
    watch_end(watch, ended)
    return ended, activity


async def _complete_within(
    run: PreparedRun, time_limit: float | None
) -> tuple[RunCompleted | RunPaused, tuple[ServerToolCall | ServerToolResult, ...]]:
    if time_limit is None:
        return await _complete(run)
    deadline = asyncio.timeout(time_limit)
    try:
        async with deadline:
            return await _complete(run)
    except TimeoutError:
        if deadline.expired():
            raise RunTimeoutError(time_limit) from None
        raise


async def _complete(
    run: PreparedRun,
) -> tuple[RunCompleted | RunPaused, tuple[ServerToolCall | ServerToolResult, ...]]:
    activity: list[ServerToolCall | ServerToolResult] = []
    # aclosing: finish the generators here, not later in asyncio's finalizer.
    async with aclosing(run_graph(run, stream=False)) as events:
        async for event in events:
            if isinstance(event, RunCompleted | RunPaused):
                return event, tuple(activity)
            if isinstance(event, ServerToolCall | ServerToolResult):
                activity.append(event)
    raise GraphError("The graph run ended without completing.")
