"""``background``: a long multi-step run for ``background=true``.

Demonstrates background Responses: the ``work`` node goes through a few
steps, publishing a ``status_event`` at each (commentary messages on
Responses), pausing between them; the ``answer`` node then reports through
the model. Submit with ``background=true``, poll ``GET /v1/responses/{id}``,
replay its events with ``?stream=true``, or cancel it. Clients set the pace
per request: ``metadata={"lgos_settings": '{"steps": 3, "step_seconds": 0.5}'}``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph_openai_serve import ClientSettings, status_event
from pydantic import Field

STEP_NAMES = (
    "Collecting the records",
    "Checking the totals",
    "Comparing with last month",
    "Drafting the report",
    "Reviewing the draft",
    "Formatting the tables",
    "Adding the charts",
    "Proofreading",
    "Packaging the report",
    "Filing the report",
)


class BackgroundSettings(ClientSettings):
    """The pace of one run."""

    steps: int = Field(
        default=4, ge=1, le=len(STEP_NAMES), description="How many steps."
    )
    step_seconds: float = Field(
        default=1.5, ge=0, le=60, description="Seconds each step takes."
    )


class BackgroundState(MessagesState):
    completed_steps: list[str]


def step_label(index: int, total: int) -> str:
    return f"Step {index}/{total}: {STEP_NAMES[index - 1]}"


def build_background_graph(
    model: BaseChatModel,
) -> Pregel[BackgroundState, BackgroundSettings, Any, Any]:
    async def work(
        state: BackgroundState, runtime: Runtime[BackgroundSettings]
    ) -> dict[str, Any]:
        settings = runtime.context
        write = get_stream_writer()
        done: list[str] = []
        for index in range(1, settings.steps + 1):
            label = step_label(index, settings.steps)
            write(status_event(label))
            await asyncio.sleep(settings.step_seconds)
            done.append(label)
        write(status_event(f"All {settings.steps} steps done", done=True))
        return {"completed_steps": done}

    async def answer(state: BackgroundState) -> dict[str, list[BaseMessage]]:
        steps = state.get("completed_steps", [])
        prompt = SystemMessage(
            content=f"Report that the job finished after {len(steps)} steps: "
            + "; ".join(steps)
            + "."
        )
        return {"messages": [await model.ainvoke([prompt, *state["messages"]])]}

    builder = StateGraph(BackgroundState, context_schema=BackgroundSettings)
    builder.add_node("work", work)
    builder.add_node("answer", answer)
    builder.add_edge(START, "work")
    builder.add_edge("work", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="background")
