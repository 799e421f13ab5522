"""Durable runs (background runs on PostgreSQL use them): checkpointed after
every node, a run stopped mid-graph resumes after its last completed node.

In process, with LangGraph's own ``InMemorySaver``; the PostgreSQL backend,
real workers and their faults are in ``test_background_recovery.py`` and
``test_background_faults.py``."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRequest
from langgraph_openai_serve.graph.durable import durable_thread_id
from langgraph_openai_serve.graph.events import RunCompleted
from langgraph_openai_serve.graph.runner import prepare_run, run_graph

pytestmark = pytest.mark.anyio


class TwoSteps:
    """A two-node graph whose second node waits until ``release`` is set."""

    def __init__(self) -> None:
        self.entered: Counter[str] = Counter()
        self.completed: Counter[str] = Counter()
        self.second_entered = asyncio.Event()
        self.release = asyncio.Event()
        builder = StateGraph(MessagesState)
        builder.add_node("first", self.first)
        builder.add_node("second", self.second)
        builder.add_edge(START, "first")
        builder.add_edge("first", "second")
        builder.add_edge("second", END)
        self.graph = builder.compile()

    async def first(self, state: MessagesState) -> dict[str, Any]:
        self.entered["first"] += 1
        self.completed["first"] += 1
        return {"messages": [AIMessage(content="first done")]}

    async def second(self, state: MessagesState) -> dict[str, Any]:
        self.entered["second"] += 1
        self.second_entered.set()
        await self.release.wait()
        self.completed["second"] += 1
        return {"messages": [AIMessage(content="Both steps.")]}


async def _prepare(steps: TwoSteps, saver: InMemorySaver, thread: str) -> Any:
    config = GraphConfig(graph=steps.graph, description="two steps")
    return await prepare_run(
        config,
        GraphRequest(model="steps"),
        [HumanMessage(content="go")],
        durable_thread=thread,
        checkpointer=saver,
    )


async def _drain(run: Any) -> list[Any]:
    return [event async for event in run_graph(run, stream=True)]


async def test_a_stopped_durable_run_resumes_after_its_completed_node():
    steps, saver = TwoSteps(), InMemorySaver()
    thread = durable_thread_id("scope", "steps", "resp_1")
    first_attempt = await _prepare(steps, saver, thread)
    stopped = asyncio.create_task(_drain(first_attempt))
    await steps.second_entered.wait()
    stopped.cancel()  # a worker stop: the run task is cancelled mid-node
    with pytest.raises(asyncio.CancelledError):
        await stopped

    steps.release.set()
    second_attempt = await _prepare(steps, saver, thread)
    events = await _drain(second_attempt)

    assert first_attempt.durable.resumed is False
    assert second_attempt.durable.resumed is True
    assert isinstance(events[-1], RunCompleted)
    assert events[-1].answer.text == "Both steps."
    assert steps.completed == {"first": 1, "second": 1}
    assert steps.entered == {"first": 1, "second": 2}


async def test_a_graph_with_its_own_checkpointer_keeps_it():
    steps, backend_saver = TwoSteps(), InMemorySaver()
    own = InMemorySaver()
    steps.graph = steps.graph.copy(update={"checkpointer": own})
    steps.release.set()

    run = await _prepare(steps, backend_saver, durable_thread_id("s", "m", "r"))
    await _drain(run)

    assert run.graph.checkpointer is own
    assert [c async for c in own.alist(None)] != []
    assert [c async for c in backend_saver.alist(None)] == []


async def test_without_a_checkpointer_a_run_is_not_durable():
    steps = TwoSteps()
    config = GraphConfig(graph=steps.graph, description="two steps")

    run = await prepare_run(
        config,
        GraphRequest(model="steps"),
        [HumanMessage(content="go")],
        durable_thread=durable_thread_id("s", "m", "r"),
    )

    assert run.durable is None
