"""The LGOS app the UI's tests talk to: the core library serving small graphs.

Every graph answers through ``ScriptedChatModel`` so tokens really stream:

* ``echo``: client settings (an enum, a switch, a bounded integer, a string),
  a commentary status, and an answer that reports the settings, the
  ``conversation_id`` and how many messages the graph received.
* ``cite``: an answer with ``url_citation`` annotations.
* ``refuse`` / ``cut``: a refusal; an answer cut short (incomplete).
* ``tools``: server tools ``package_version`` (custom) and ``web_search``.
* ``refund``: one interrupt with choices and free text; answering ``wait``
  makes the resumed node sleep, so a second resume meets ``run_busy``.
* ``approvals``: two parallel interrupts answered in one batch.
* ``gate``: a pause presented as an MCP approval request
  (``interrupt_protocol="mcp_approval"``); approving resumes it with its own
  payload, which the answer names.
* ``chart``: accepts files; downloads the attached file from the Files API,
  uploads a "chart" (SVG, or a text report when asked for ``text``) and calls
  the client function ``display_file``; after the output, it answers.
* ``plain``: no features at all.
* ``background``: background runs; a commentary status, then an answer
  streamed slowly (``slow`` in the message: very slowly, to be cancelled);
  ``fail`` in the message makes the graph raise.
* ``refund_later``: ``refund`` with background runs.
* ``held``: a commentary status and the first words of its answer, then it
  waits until the test releases its ``Hold`` (a turn kept running for as
  long as the test needs), then the rest of the answer.

Every ``POST /v1/responses`` body is recorded in ``Recorder.bodies``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from fastapi import FastAPI
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.content import create_citation, create_text_block
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit.graphs import two_approvers_graph
from pydantic import Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REFUND_QUESTION = {
    "question": "How should the refund be handled?",
    "choices": ["approve", "reject"],
    "allow_other": True,
}
SOURCES = [
    {"url": "https://docs.example/lgos", "title": "LGOS docs"},
    {"url": "https://blog.example/graphs", "title": "Graphs blog"},
]


class EchoSettings(ClientSettings):
    audience: Literal["general", "beginner", "expert"] = "general"
    use_history: bool = False
    depth: int = Field(default=2, ge=1, le=5, description="How deep to go.")
    signature: str = "LGOS"


@dataclass(frozen=True)
class EchoContext:
    settings: EchoSettings
    conversation_id: str | None


@dataclass(frozen=True)
class ToolContext:
    selected: tuple[str, ...]


@dataclass
class FilesAccess:
    """Where the ``chart`` graph reaches the Files API (set by the fixture)."""

    url: str = ""
    key: str = ""


@dataclass
class Recorder:
    bodies: list[dict[str, Any]] = field(default_factory=list)


def _one_node(node: Any, **compile_kwargs: Any) -> Any:
    builder = StateGraph(MessagesState, **compile_kwargs.pop("builder", {}))
    builder.add_node("agent", node)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(**compile_kwargs)


def _last_human(messages: list[BaseMessage]) -> HumanMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def echo_graph() -> Any:
    async def agent(
        state: MessagesState, runtime: Runtime[EchoContext]
    ) -> dict[str, list[BaseMessage]]:
        get_stream_writer()(status_event("Reading your message"))
        settings = runtime.context.settings
        human = _last_human(state["messages"])
        text = (
            f"audience={settings.audience} use_history={settings.use_history} "
            f"depth={settings.depth} signature={settings.signature} "
            f"conversation={runtime.context.conversation_id} "
            f"seen={len(state['messages'])} said={human.text if human else ''}"
        )
        model = ScriptedChatModel(responder=lambda _: text)
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _one_node(agent, builder={"context_schema": EchoContext})


def echo_context(request: GraphRequest, settings: Any) -> EchoContext:
    return EchoContext(settings, request.metadata.get("conversation_id"))


def cite_graph() -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        get_stream_writer()(status_event("Searching the docs"))
        model = ScriptedChatModel(responder=lambda _: "See the docs and the blog.")
        reply = await model.ainvoke(state["messages"])
        citations = [
            create_citation(url=s["url"], title=s["title"], start_index=4, end_index=11)
            for s in SOURCES
        ]
        block = create_text_block(text=reply.text, annotations=citations)
        return {"messages": [AIMessage(content=[block], id=reply.id)]}

    return _one_node(agent)


def scripted_graph(reply: AIMessage) -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        model = ScriptedChatModel(responder=lambda _: reply)
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _one_node(agent)


def tools_graph() -> Any:
    def select(
        state: MessagesState, runtime: Runtime[ToolContext]
    ) -> dict[str, list[BaseMessage]]:
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": []}
        n = len(state["messages"])
        calls = []
        if "package_version" in runtime.context.selected:
            calls.append(
                {"id": f"pv_{n}", "name": "package_version", "args": {"__arg1": "lgos"}}
            )
        if "web_search" in runtime.context.selected:
            calls.append(
                {
                    "id": f"ws_{n}",
                    "name": "web_search",
                    "args": {"query": "lgos graphs"},
                }
            )
        return {"messages": [AIMessage(content="", tool_calls=calls)]} if calls else {}

    def run_tools(state: MessagesState) -> dict[str, list[BaseMessage]]:
        last = state["messages"][-1]
        results: list[BaseMessage] = []
        for call in last.tool_calls if isinstance(last, AIMessage) else []:
            output = (
                "lgos 1.2.3"
                if call["name"] == "package_version"
                else "LGOS docs: LGOS serves graphs."
            )
            results.append(
                ToolMessage(content=output, tool_call_id=call["id"], name=call["name"])
            )
        return {"messages": results}

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        outputs = [m.text for m in state["messages"] if isinstance(m, ToolMessage)]
        text = "Results: " + (" | ".join(outputs) if outputs else "none")
        model = ScriptedChatModel(responder=lambda _: text)
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "answer"

    builder = StateGraph(MessagesState, context_schema=ToolContext)
    builder.add_node("select", select)
    builder.add_node("tools", run_tools)
    builder.add_node("answer", answer)
    builder.add_edge(START, "select")
    builder.add_conditional_edges("select", route, ["tools", "answer"])
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile()


class Decision(MessagesState):
    decision: str
    second: str


def refund_graph(saver: InMemorySaver) -> Any:
    async def ask(state: Decision) -> dict[str, Any]:
        get_stream_writer()(status_event("Checking the order"))
        return {"decision": interrupt(REFUND_QUESTION)}

    async def answer(state: Decision) -> dict[str, list[BaseMessage]]:
        if state["decision"] == "wait":
            await asyncio.sleep(1.0)
        model = ScriptedChatModel(responder=lambda _: f"Refund {state['decision']}.")
        return {"messages": [await model.ainvoke([AIMessage(state["decision"])])]}

    builder = StateGraph(Decision)
    builder.add_node("ask", ask)
    builder.add_node("answer", answer)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=saver)


GATE_QUESTION = {"question": "Refund order 7?", "amount": "19.90 EUR"}


def gate_graph(saver: InMemorySaver) -> Any:
    async def ask(state: MessagesState) -> dict[str, Any]:
        approved = interrupt(GATE_QUESTION)
        return {"messages": [AIMessage(content=f"Refunded {approved['amount']}.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>'


def chart_graph(files: FilesAccess) -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            text = f"Shown: {last.text}"
            model = ScriptedChatModel(responder=lambda _: text)
            return {"messages": [await model.ainvoke(state["messages"])]}
        human = _last_human(state["messages"])
        blocks = human.content if human and isinstance(human.content, list) else []
        file_ids = [
            b["file_id"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "file"
        ]
        if not file_ids:
            model = ScriptedChatModel(responder=lambda _: "Attach a file to chart.")
            return {"messages": [await model.ainvoke(state["messages"])]}
        headers = {"Authorization": f"Bearer {files.key}"}
        async with httpx.AsyncClient(base_url=files.url, headers=headers) as http:
            data = (await http.get(f"/files/{file_ids[-1]}/content")).content
            as_text = human is not None and "text" in human.text
            name, body, mime = (
                (
                    "report.txt",
                    b"rows: " + str(data.count(b"\n")).encode(),
                    "text/plain",
                )
                if as_text
                else ("chart.svg", SVG, "image/svg+xml")
            )
            uploaded = await http.post(
                "/files",
                files={"file": (name, body, mime)},
                data={"purpose": "assistants"},
            )
            uploaded.raise_for_status()
        arguments = {
            "file_id": "file-missing"
            if "missing" in human.text
            else uploaded.json()["id"],
            "filename": name,
            "title": f"{len(data)} bytes charted",
        }
        call = {"id": f"call_show_{len(state['messages'])}", "name": "display_file"}
        return {
            "messages": [
                AIMessage(content="", tool_calls=[{**call, "args": arguments}])
            ]
        }

    return _one_node(agent)


def background_answer(said: str, seen: int) -> str:
    return (
        f"Background answer to {said!r} after {seen} messages, streamed one "
        "word at a time until the very end."
    )


def background_graph() -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        get_stream_writer()(status_event("Working in the background"))
        human = _last_human(state["messages"])
        said = human.text if human else ""
        if "fail" in said:
            raise RuntimeError("the background graph broke")
        text = background_answer(said, len(state["messages"]))
        delay = 0.3 if "slow" in said else 0.02
        model = ScriptedChatModel(responder=lambda _: text, token_delay=delay)
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _one_node(agent)


HELD_PROGRESS = "Holding the answer"
HELD_START = "The held answer begins here"
HELD_END = " and ends once the test lets it go."


class Hold:
    """The gate the ``held`` graph waits at, opened by the test.

    The graph runs on the server's event loop (another thread): it arms an
    ``asyncio.Event`` there and waits; ``release`` sets it from the test's
    thread. ``cancelled`` tells that a held run was cancelled at the gate
    (its client went away: a stopped answer)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._released = False
        self.reached = threading.Event()
        self.cancelled = threading.Event()

    def reset(self) -> None:
        with self._lock:
            self._gate, self._released = None, False
        self.reached.clear()
        self.cancelled.clear()

    def release(self) -> None:
        with self._lock:
            self._released = True
            gate = self._gate
        if gate is not None:
            loop, event = gate
            loop.call_soon_threadsafe(event.set)

    async def wait(self) -> None:
        event = asyncio.Event()
        with self._lock:
            self._gate = (asyncio.get_running_loop(), event)
            if self._released:
                event.set()
        self.reached.set()
        try:
            await event.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


def held_graph(hold: Hold) -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        get_stream_writer()(status_event(HELD_PROGRESS))
        # Two model calls stream the answer's halves; the answer is one message.
        start = ScriptedChatModel(responder=lambda _: HELD_START)
        first = await start.ainvoke(state["messages"])
        await hold.wait()
        end = ScriptedChatModel(responder=lambda _: HELD_END)
        last = await end.ainvoke(state["messages"])
        return {"messages": [AIMessage(content=first.text + last.text)]}

    return _one_node(agent)


def build_registry(files: FilesAccess, hold: Hold | None = None) -> GraphRegistry:
    saver = InMemorySaver()
    events = frozenset({GraphFeature.CLIENT_EVENTS})

    def paused(
        graph: Any, description: str, *more: GraphFeature, **options: Any
    ) -> GraphConfig:
        return GraphConfig(
            graph=graph,
            description=description,
            features={GraphFeature.INTERRUPTS, GraphFeature.CLIENT_EVENTS, *more},
            run_coordinator=InMemoryRunCoordinator(),
            **options,
        )

    length = AIMessage("Cut short", response_metadata={"finish_reason": "length"})
    refusal = AIMessage("", additional_kwargs={"refusal": "I won't do that."})
    return GraphRegistry(
        registry={
            "echo": GraphConfig(
                graph=echo_graph(),
                description="Echoes settings and what it saw.",
                features=events,
                client_settings=EchoSettings,
                context_factory=echo_context,
            ),
            "cite": GraphConfig(
                graph=cite_graph(), description="Answers with sources.", features=events
            ),
            "refuse": GraphConfig(
                graph=scripted_graph(refusal), description="Refuses."
            ),
            "cut": GraphConfig(graph=scripted_graph(length), description="Cut short."),
            "tools": GraphConfig(
                graph=tools_graph(),
                description="Server tools.",
                server_tools=["package_version", "web_search"],
                context_factory=lambda request, _: ToolContext(request.server_tools),
            ),
            "refund": paused(refund_graph(saver), "Asks how to refund."),
            "refund_later": paused(
                refund_graph(saver),
                "Refunds in the background.",
                GraphFeature.BACKGROUND,
            ),
            "approvals": paused(
                two_approvers_graph(
                    saver,
                    manager={"question": "Manager approval?", "choices": ["yes", "no"]},
                    finance={"question": "Finance comment?"},
                ),
                "Asks two approvers.",
            ),
            "gate": paused(
                gate_graph(saver),
                "Asks for an approval.",
                interrupt_protocol="mcp_approval",
            ),
            "chart": GraphConfig(
                graph=chart_graph(files),
                description="Charts an attached file.",
                features={GraphFeature.FILE_INPUTS},
                client_tools=["display_file"],
            ),
            "background": GraphConfig(
                graph=background_graph(),
                description="Answers in the background.",
                features={GraphFeature.BACKGROUND, GraphFeature.CLIENT_EVENTS},
            ),
            "plain": GraphConfig(
                graph=scripted_graph(AIMessage("Plain answer.")), description="Plain."
            ),
            "held": GraphConfig(
                graph=held_graph(hold or Hold()),
                description="Answers once the test lets it.",
                features=events,
            ),
        }
    )


class RecordResponses:
    """ASGI middleware keeping every ``POST /v1/responses`` JSON body."""

    def __init__(self, app: ASGIApp, recorder: Recorder) -> None:
        self.app = app
        self.recorder = recorder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/responses"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        self.recorder.bodies.append(json.loads(body))
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


UI_GATEWAY_KEY = "sk-chainlit-test-ui-gateway"
"""The key the UI calls LGOS with: a gateway key, as the stack's LiteLLM
gives it, so each signed-in user (or guest) it names is a tenant."""


def create_app(files: FilesAccess, recorder: Recorder, hold: Hold | None = None) -> Any:
    app = FastAPI()
    registry = build_registry(files, hold)
    settings = Settings(GATEWAY_KEYS=json.dumps({UI_GATEWAY_KEY: "gateway"}))
    LanggraphOpenaiServe(graphs=registry, app=app, settings=settings).bind_openai_api()
    return RecordResponses(app, recorder)
