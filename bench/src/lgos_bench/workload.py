"""The graphs both servers serve, and the requests the load generator sends.

Every graph answers with the same text of ``tokens`` word tokens, streamed by
LGOS's ``ScriptedChatModel`` (with a native async ``_agenerate``) without
sleeping and with usage reported. The
variants add what the issue asks to price separately: three status events
(Responses commentary), two citations, and a client tool call. The idle graph
waits (bounded) so open streams can be counted for memory. ``lgos-bench
scale``'s background graph waits like a model call (``wait_graph``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph_openai_serve import status_event
from langgraph_openai_serve.testing import ScriptedChatModel

DEFAULT_TOKENS = 64
DEFAULT_IDLE_SECONDS = 30.0
DEFAULT_WAIT_SECONDS = 1.0
TOKENS_ENV = "LGOS_BENCH_TOKENS"
IDLE_ENV = "LGOS_BENCH_IDLE_SECONDS"
WAIT_ENV = "LGOS_BENCH_WAIT_SECONDS"
GATES_ENV = "LGOS_BENCH_GATES"
HOLD_POLL_SECONDS = 0.2

PLAIN = "bench-plain"
STATUS = "bench-status"
CITED = "bench-cited"
TOOL = "bench-tool"
IDLE = "bench-idle"
WAIT = "bench-wait"

STATUSES = ("Planning the answer", "Searching the notes", "Writing the answer")
"""The three status events the ``STATUS`` graph publishes before answering."""
TOOL_NAME = "get_weather"
TOOL_ARGS = {"city": "Oslo"}
TOOL_CALL_ID = "call_bench_weather"
CITATION_URL = "https://example.com/bench"

AnyGraph = Pregel[Any, Any, Any, Any]


@dataclass(frozen=True, slots=True)
class Workload:
    """What every server process builds its graphs from (read from the env)."""

    tokens: int = DEFAULT_TOKENS
    idle_seconds: float = DEFAULT_IDLE_SECONDS
    wait_seconds: float = DEFAULT_WAIT_SECONDS

    @classmethod
    def from_env(cls) -> Workload:
        return cls(
            tokens=int(os.environ.get(TOKENS_ENV, DEFAULT_TOKENS)),
            idle_seconds=float(os.environ.get(IDLE_ENV, DEFAULT_IDLE_SECONDS)),
            wait_seconds=float(os.environ.get(WAIT_ENV, DEFAULT_WAIT_SECONDS)),
        )

    def env(self) -> dict[str, str]:
        return {
            TOKENS_ENV: str(self.tokens),
            IDLE_ENV: str(self.idle_seconds),
            WAIT_ENV: str(self.wait_seconds),
        }


def answer_text(tokens: int) -> str:
    """``tokens`` words that ``split_tokens`` cuts into exactly ``tokens`` pieces."""
    return " ".join(f"word{index}" for index in range(tokens))


def _one_node(name: str, node: Any) -> AnyGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("answer", node)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name=name)


MODEL_NAME = "bench-scripted"
"""The ``model_name`` every reply carries in its ``response_metadata``, as
provider clients set it: LangChain's usage handler keeps its sums by it (and
counts nothing without it)."""


def _model(reply: AIMessage) -> ScriptedChatModel:
    # ScriptedChatModel has a native ``_agenerate``, as provider clients have:
    # without it LangChain would run every non-streaming call in the default
    # thread pool, a cost neither server should be charged for.
    return ScriptedChatModel(responder=lambda _messages: reply)


def _reply(text: str, **fields: Any) -> AIMessage:
    return AIMessage(
        content=text, response_metadata={"model_name": MODEL_NAME}, **fields
    )


def _citations(text: str) -> list[dict[str, Any]]:
    """Citations of the first and the last word (inclusive ``end_index``)."""
    first_end = text.find(" ") if " " in text else len(text)
    last_start = text.rfind(" ") + 1
    spans = [(0, first_end - 1), (last_start, len(text) - 1)]
    return [
        {
            "type": "citation",
            "url": f"{CITATION_URL}/{number}",
            "title": f"Bench source {number}",
            "start_index": start,
            "end_index": end,
            "cited_text": text[start : end + 1],
        }
        for number, (start, end) in enumerate(spans, start=1)
    ]


def build_graphs(workload: Workload) -> dict[str, AnyGraph]:
    """The graphs, keyed by model id; both servers call this at startup."""
    text = answer_text(workload.tokens)
    plain_model = _model(_reply(text))
    tool_model = _model(
        _reply(
            text,
            tool_calls=[
                {
                    "id": TOOL_CALL_ID,
                    "name": TOOL_NAME,
                    "args": TOOL_ARGS,
                    "type": "tool_call",
                }
            ],
        )
    )

    async def plain(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await plain_model.ainvoke(state["messages"])]}

    async def with_statuses(state: MessagesState) -> dict[str, list[BaseMessage]]:
        write = get_stream_writer()
        for description in STATUSES:
            write(status_event(description))
        return {"messages": [await plain_model.ainvoke(state["messages"])]}

    async def cited(state: MessagesState) -> dict[str, list[BaseMessage]]:
        reply = await plain_model.ainvoke(state["messages"])
        block = {"type": "text", "text": reply.text, "annotations": _citations(text)}
        return {"messages": [reply.model_copy(update={"content": [block]})]}

    async def tool_call(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await tool_model.ainvoke(state["messages"])]}

    async def idle(state: MessagesState) -> dict[str, list[BaseMessage]]:
        await asyncio.sleep(workload.idle_seconds)
        return {"messages": [AIMessage(content="done waiting")]}

    return {
        PLAIN: _one_node(PLAIN, plain),
        STATUS: _one_node(STATUS, with_statuses),
        CITED: _one_node(CITED, cited),
        TOOL: _one_node(TOOL, tool_call),
        IDLE: _one_node(IDLE, idle),
    }


def wait_graph(seconds: float, gates: Path) -> AnyGraph:
    """A run that waits ``seconds`` as a model call would, then answers
    ``"<pid> <start> <end>"``: the worker process that ran it and when its
    node started and ended (Unix seconds), read back from the stored Response.

    An input ``hold <tag>`` makes a run that holds its worker's slot
    instead: it leaves ``held-<tag>-<pid>-<n>`` in ``gates`` and waits until
    ``open-<tag>-<pid>`` or ``open-<tag>-all`` appears there. ``lgos-bench
    scale`` fills every slot of the fleet with these, queues the runs it
    measures behind them, then frees chosen workers at once.
    """

    async def wait(state: MessagesState) -> dict[str, list[BaseMessage]]:
        request = str(state["messages"][-1].content)
        if request.startswith("hold "):
            await _hold(gates, request.removeprefix("hold "))
            return {"messages": [AIMessage(content="released")]}
        started = time.time()
        await asyncio.sleep(seconds)
        answer = f"{os.getpid()} {started:.6f} {time.time():.6f}"
        return {"messages": [AIMessage(content=answer)]}

    return _one_node(WAIT, wait)


async def _hold(gates: Path, tag: str) -> None:
    pid = os.getpid()
    (gates / f"held-{tag}-{pid}-{uuid.uuid4().hex}").touch()
    opened = (gates / f"open-{tag}-{pid}", gates / f"open-{tag}-all")
    # Polled: the bench opens the gate from another process.
    while True:
        if any(path.exists() for path in opened):
            return
        await asyncio.sleep(HOLD_POLL_SECONDS)


def chat_body(model: str, *, stream: bool) -> bytes:
    """A Chat Completions request; streams ask for the usage chunk."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "Say something long."}],
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if model == TOOL:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": TOOL_NAME, "parameters": _TOOL_PARAMETERS},
            }
        ]
    return json.dumps(body).encode()


def responses_body(model: str, *, stream: bool) -> bytes:
    """A Responses request."""
    body: dict[str, Any] = {
        "model": model,
        "input": "Say something long.",
        "stream": stream,
    }
    if model == TOOL:
        body["tools"] = [
            {"type": "function", "name": TOOL_NAME, "parameters": _TOOL_PARAMETERS}
        ]
    return json.dumps(body).encode()


_TOOL_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
