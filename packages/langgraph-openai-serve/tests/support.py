"""Graph builders and helpers shared by the tests (fixtures live in
conftest.py)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import BaseMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry
from langgraph_openai_serve.testing import Reply, ScriptedChatModel

GOLDEN = Path(__file__).parent / "golden"


def one_node_graph(node: Any, *, name: str = "agent") -> Any:
    """START -> ``node`` -> END over ``MessagesState``."""
    builder = StateGraph(MessagesState)
    builder.add_node(name, node)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile()


def single_model_graph(model: ScriptedChatModel, *, name: str = "agent") -> Any:
    """One node that calls ``model`` on the conversation."""

    async def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    return one_node_graph(call_model, name=name)


def scripted_graph(*replies: Reply, **model_options: Any) -> Any:
    return single_model_graph(ScriptedChatModel(replies=replies, **model_options))


def planner_graph(planner_tags: Sequence[str] = ()) -> Any:
    """A planner model call, then an answer model call in another node."""
    planner = ScriptedChatModel(replies=["PLAN: think first"]).with_config(
        tags=list(planner_tags)
    )
    answerer = ScriptedChatModel(replies=["The answer is 42."])

    async def plan(state: MessagesState) -> dict[str, list[BaseMessage]]:
        await planner.ainvoke(state["messages"])
        return {"messages": []}

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("plan", plan)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def config(graph: Any, **options: Any) -> GraphConfig:
    return GraphConfig(
        graph=graph, description=options.pop("description", "test"), **options
    )


def hello_registry() -> GraphRegistry:
    """One graph, ``m``, that answers "Hi."."""
    return GraphRegistry(registry={"m": config(scripted_graph("Hi."))})


def status_graph(*updates: dict[str, Any], answer: str = "Done.") -> Any:
    """Publishes ``updates`` through the stream writer, then streams ``answer``."""
    model = ScriptedChatModel(replies=[answer] * 4)

    async def work(state: MessagesState) -> dict[str, list[BaseMessage]]:
        writer = get_stream_writer()
        for update in updates:
            writer(update)
        return {"messages": [await model.ainvoke(state["messages"])]}

    return one_node_graph(work)


def chat_sse_payloads(*frames: str) -> list[str]:
    """The ``data:`` payloads of Chat SSE text, checking the framing."""
    text = "".join(frames)
    assert text.endswith("\n\n")
    events = text.removesuffix("\n\n").split("\n\n")
    assert all(event.startswith("data: ") for event in events)
    return [event.removeprefix("data: ") for event in events]


def sse_events(transcript: str) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE transcript, checking each ``event:`` name."""
    events = []
    for frame in transcript.split("\n\n"):
        lines = [line for line in frame.splitlines() if not line.startswith(":")]
        if not lines:
            continue
        name = next(line[7:] for line in lines if line.startswith("event: "))
        data = json.loads(next(line[6:] for line in lines if line.startswith("data: ")))
        assert data["type"] == name
        events.append(data)
    return events


def assert_golden(name: str, transcript: str) -> None:
    """Compare with ``golden/<name>``; ``LGOS_UPDATE_GOLDEN=1`` rewrites it."""
    path = GOLDEN / name
    if os.environ.get("LGOS_UPDATE_GOLDEN") == "1":
        path.write_text(transcript)
    assert transcript == path.read_text()


def normalize_ids(transcript: str) -> str:
    """Replace generated ids and timestamps with stable ordinal placeholders."""
    seen: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in seen:
            prefix = match.group(1)
            count = sum(1 for key in seen if key.startswith(prefix))
            seen[token] = f"{prefix}_{count}"
        return seen[token]

    # Interrupt runs: resp_lg_<run>_<scope tag+nonce>, call_lg_<interrupt id>.
    transcript = re.sub(r"\b(resp_lg|call_lg)_[0-9a-f_]+\b", placeholder, transcript)
    transcript = re.sub(
        r"\b(resp|msg|fc|ctco|ctc|chatcmpl)[_-][0-9a-f]{32}\b", placeholder, transcript
    )
    return re.sub(
        r'"created(_at)?":\d+', lambda m: f'"created{m.group(1) or ""}":0', transcript
    )


async def error_body(call: Any, status: int) -> dict[str, Any]:
    """The error envelope's body of an SDK ``call`` that must fail with
    ``status``."""
    with pytest.raises(openai.APIStatusError) as caught:
        await call
    assert caught.value.status_code == status
    body: dict[str, Any] = caught.value.body  # type: ignore[assignment]
    return body
