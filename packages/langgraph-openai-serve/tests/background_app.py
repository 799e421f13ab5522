"""Graphs for the PostgreSQL background tests (``lgos serve`` / ``lgos worker``
load ``background_app:registry``). Runs leave marker files so the tests can
count executions across processes."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from pathlib import Path
from typing import Any

from interrupt_graphs import QUESTION, Decision
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator
from langgraph_openai_serve.testing import ScriptedChatModel
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


def _graph(node: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("work", node)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile()


def _two_steps(first: Any, second: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile()


def _refund(markers: Path) -> GraphConfig:
    """An interrupt graph on PostgreSQL (checkpoints and leases), for resumes."""
    pool = AsyncConnectionPool(
        os.environ["LGOS_DATABASE_URL"],
        open=False,
        max_size=10,  # leases hold a connection each; checkpoints need more
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )

    async def ask(state: Decision) -> dict[str, Any]:
        return {"decision": interrupt(QUESTION)}

    async def answer(state: Decision) -> dict[str, Any]:
        (markers / f"answer-{state['decision']}-{uuid.uuid4().hex}").touch()
        return {"messages": [AIMessage(content=f"Refund {state['decision']}.")]}

    async def build_graph() -> Any:
        await pool.open()
        builder = StateGraph(Decision)
        builder.add_node("ask", ask)
        builder.add_node("answer", answer)
        builder.add_edge(START, "ask")
        builder.add_edge("ask", "answer")
        builder.add_edge("answer", END)
        return builder.compile(checkpointer=AsyncPostgresSaver(pool))

    return GraphConfig(
        graph=build_graph,
        description="refund approvals on PostgreSQL",
        features={GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND},
        run_coordinator=PostgresRunCoordinator(pool, max_concurrent_leases=4),
    )


def registry() -> GraphRegistry:
    markers = Path(os.environ["LGOS_TEST_MARKER_DIR"])
    model = ScriptedChatModel(
        responder=lambda messages: f"Finished {messages[-1].text}.", token_delay=0.02
    )

    async def work(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        (markers / f"run-{tag}-{os.getpid()}").touch()
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def wait_forever(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        (markers / f"started-{tag}").touch()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            (markers / f"cancelled-{tag}").touch()
            raise
        return {"messages": [AIMessage(content="never")]}

    async def fail(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("the database password is hunter2")

    async def hold(state: MessagesState) -> dict[str, Any]:
        # Runs until the test creates ``release-<tag>`` (or the run is stopped);
        # the signal comes from another process, so it is a file, not an Event.
        tag = state["messages"][-1].text
        (markers / f"started-{tag}-{os.getpid()}").touch()
        while not (markers / f"release-{tag}").exists():  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        (markers / f"done-{tag}-{os.getpid()}").touch()
        return {"messages": [AIMessage(content=f"Held {tag}.")]}

    async def crash(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        (markers / f"started-{tag}-{os.getpid()}").touch()
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-run
        return {}

    def node_marker(kind: str, node: str, tag: str) -> None:
        # One file per execution: ``enter`` before a node's work, ``done`` after.
        (markers / f"{kind}-{node}-{tag}-{os.getpid()}-{uuid.uuid4().hex}").touch()

    async def first_step(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        node_marker("enter", "first", tag)
        node_marker("done", "first", tag)
        return {"messages": [AIMessage(content="first done")]}

    async def second_step(state: MessagesState) -> dict[str, Any]:
        # Held until the test creates ``release-all``, so runs are in flight
        # when processes are killed.
        tag = state["messages"][0].text
        node_marker("enter", "second", tag)
        (markers / f"started-{tag}-{os.getpid()}").touch()
        while not (markers / "release-all").exists():  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        node_marker("done", "second", tag)
        return {"messages": [AIMessage(content=f"Both steps of {tag}.")]}

    # The fleet suite's graphs: a run that waits like a model call (about a
    # second of streamed tokens), and a foreground answer as long.
    slow_words = " ".join(f"w{i}" for i in range(20))
    talker = ScriptedChatModel(responder=lambda _: slow_words, token_delay=0.05)

    async def prepare(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        node_marker("enter", "prepare", tag)
        node_marker("done", "prepare", tag)
        return {"messages": [AIMessage(content="prepared")]}

    async def answer(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][0].text
        node_marker("enter", "answer", tag)
        reply = await talker.ainvoke(state["messages"][:1])
        node_marker("done", "answer", tag)
        return {"messages": [reply]}

    async def talk(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await talker.ainvoke(state["messages"])]}

    features = {GraphFeature.BACKGROUND}
    return GraphRegistry(
        registry={
            "job": GraphConfig(
                graph=_graph(work), description="job", features=features
            ),
            "forever": GraphConfig(
                graph=_graph(wait_forever), description="forever", features=features
            ),
            "boom": GraphConfig(
                graph=_graph(fail), description="boom", features=features
            ),
            "hold": GraphConfig(
                graph=_graph(hold), description="hold", features=features
            ),
            "steps": GraphConfig(
                graph=_two_steps(first_step, second_step),
                description="two steps",
                features=features,
            ),
            "refund": _refund(markers),
            "crash": GraphConfig(
                graph=_graph(crash), description="crash", features=features
            ),
            "fleet": GraphConfig(
                graph=_two_steps(prepare, answer),
                description="two steps, the second a second of tokens",
                features=features,
            ),
            "talk": GraphConfig(graph=_graph(talk), description="a second of tokens"),
        }
    )
