"""The app a real uvicorn process serves for the over-TCP tests.

Graphs record what happened to them as files in ``LGOS_TEST_MARKER_DIR``,
because the test process cannot see this process's memory.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastapi import FastAPI
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe
from langgraph_openai_serve.testing import ScriptedChatModel


class _PausedAfterFirstToken(ScriptedChatModel):
    """Streams its first token, then waits for the test's release marker
    (named by the request's text) before the rest."""

    markers: Path

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        release = self.markers / f"{messages[-1].text}.release"
        first = True
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk
            while first and not release.exists():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            first = False


def _one_node(node) -> object:  # type: ignore[no-untyped-def]
    builder = StateGraph(MessagesState)
    builder.add_node("agent", node)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()


def registry() -> GraphRegistry:
    """The test graphs; ``lgos serve`` loads this as ``live_app:registry``."""
    markers = Path(os.environ["LGOS_TEST_MARKER_DIR"])
    words = ScriptedChatModel(responder=lambda _: "one two three four five")

    async def stream_words(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await words.ainvoke(state["messages"])]}

    paced = _PausedAfterFirstToken(
        responder=lambda _: "first then the rest", markers=markers
    )

    async def pause_after_first_token(
        state: MessagesState,
    ) -> dict[str, list[BaseMessage]]:
        return {"messages": [await paced.ainvoke(state["messages"])]}

    async def silent_until_released(
        state: MessagesState,
    ) -> dict[str, list[BaseMessage]]:
        # Silent until the test says so: it sees pings, or signals the
        # server, while the run is certainly in flight, however busy the
        # machine.
        tag = state["messages"][-1].text
        (markers / f"{tag}.started").touch()
        # The test process signals through a file: no event can cross over.
        while not (markers / f"{tag}.release").exists():  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        return {"messages": [AIMessage(content="done waiting")]}

    async def hang_until_cancelled(
        state: MessagesState,
    ) -> dict[str, list[BaseMessage]]:
        tag = state["messages"][-1].text
        (markers / f"{tag}.started").touch()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            (markers / f"{tag}.cancelled").touch()
            raise
        return {"messages": []}

    return GraphRegistry(
        registry={
            "words": GraphConfig(graph=_one_node(stream_words), description="words"),
            "paced": GraphConfig(
                graph=_one_node(pause_after_first_token), description="paced"
            ),
            "silent": GraphConfig(
                graph=_one_node(silent_until_released), description="silent"
            ),
            "hang": GraphConfig(
                graph=_one_node(hang_until_cancelled), description="hang"
            ),
        }
    )


def create_app() -> FastAPI:
    app = FastAPI()
    LanggraphOpenaiServe(graphs=registry(), app=app).bind_openai_api()
    return app
