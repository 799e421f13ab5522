"""An app written the way the reference documents it, served by real uvicorn.

Every construct below is the reference's own usage (``hosted_tools``, a
``ClientSettings`` model used as ``context_schema``, ``status_event`` with a
namespace, citations built with LangChain's content helpers, an async
``checkpoint_scope`` resolver, and the reference's Chat route
``create_chat_completion`` mounted on the host app with its dependencies). Deprecated
names warn in this process; the tests check the warnings in-process and the
behaviour over TCP.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    status_event,
)
from langgraph_openai_serve.chat_completions import (
    checkpoint_scope_dependency,
    create_chat_completion,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from pydantic import Field
from support import one_node_graph


class PublicSettings(ClientSettings):
    use_history: bool = Field(default=True, title="Use conversation history")


def settings_graph() -> Any:
    async def answer(
        state: MessagesState, runtime: Runtime[PublicSettings]
    ) -> dict[str, list[BaseMessage]]:
        seen = len(state["messages"]) if runtime.context.use_history else 1
        return {"messages": [AIMessage(content=f"I read {seen} message(s).")]}

    builder = StateGraph(MessagesState, context_schema=PublicSettings)
    builder.add_node("agent", answer)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()


def _status_graph() -> Any:
    model = ScriptedChatModel(responder=lambda _: "Your audio is ready.")

    async def generate(state: MessagesState) -> dict[str, list[BaseMessage]]:
        writer = get_stream_writer()
        writer(status_event("Generating audio", namespace=("media",)))
        # Perform the long-running work.
        writer(status_event("Audio ready", done=True, namespace=("media",)))
        return {"messages": [await model.ainvoke(state["messages"])]}

    return one_node_graph(generate)


def cited_message() -> AIMessage:
    """The reference's citation example, verbatim."""
    return AIMessage(
        content=[
            create_text_block(
                text="Read the source [1].",
                annotations=[
                    create_citation(
                        url="https://example.com/source",
                        title="Example source",
                        start_index=9,
                        end_index=14,
                        cited_text="source",
                    )
                ],
            )
        ]
    )


def _cited_graph() -> Any:
    async def cite(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [cited_message()]}

    return one_node_graph(cite)


def _failing_graph() -> Any:
    model = ScriptedChatModel(replies=["partial answer"])

    async def answer_then_fail(state: MessagesState) -> dict[str, list[BaseMessage]]:
        await model.ainvoke(state["messages"])
        raise RuntimeError("secret detail")

    return one_node_graph(answer_then_fail)


async def _scripted_answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
    model = ScriptedChatModel(replies=["Hello from the host route."])
    return {"messages": [await model.ainvoke(state["messages"])]}


def _hosted_input(request: GraphRequest, messages: list[BaseMessage]) -> Any:
    # Reference-era adapters read ``request.hosted_tools``.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        selected = ", ".join(request.hosted_tools) or "none"
    return {"messages": [*messages, AIMessage(content=f"Selected: {selected}.")]}


def _echo_graph() -> Any:
    async def echo(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content=state["messages"][-1].text)]}

    return one_node_graph(echo)


def registry() -> GraphRegistry:
    return GraphRegistry(
        registry={
            "settings": GraphConfig(
                graph=settings_graph(),
                description="Reads the public settings.",
                client_settings=PublicSettings,
            ),
            "status": GraphConfig(
                graph=_status_graph(),
                description="Graph that reports media-generation status.",
                features={GraphFeature.CLIENT_EVENTS},
            ),
            "cited": GraphConfig(graph=_cited_graph(), description="Cites."),
            "failing": GraphConfig(graph=_failing_graph(), description="Fails."),
            "scripted": GraphConfig(
                graph=one_node_graph(_scripted_answer),
                description="Streams a scripted answer and reports usage.",
            ),
            "hosted": GraphConfig(
                graph=_echo_graph(),
                description="Echoes its selected hosted tools.",
                hosted_tools=["lgos_lookup"],
                request_to_input=_hosted_input,
            ),
            "interruptible": GraphConfig(
                graph=refund_graph(InMemorySaver(), Counter()),
                description="Asks before refunding.",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=InMemoryRunCoordinator(),
            ),
        }
    )


async def tenant_scope(request: Request) -> str:
    """A server-trusted scope: here a header a trusted proxy would set."""
    return request.headers.get("x-tenant", "default")


def create_app() -> FastAPI:
    app = FastAPI()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        graphs = registry()
    server = LanggraphOpenaiServe(graphs, app, checkpoint_scope=tenant_scope)
    server.bind_openai_api()
    _add_host_routes(app)
    return app


def _add_host_routes(app: FastAPI) -> None:
    # The reference's Chat route, mounted on the host app as it is.
    app.post("/host/v1/chat/completions", response_model=None)(create_chat_completion)

    @app.get("/host/scope")
    async def host_scope(
        scope: Annotated[str, Depends(checkpoint_scope_dependency)],
    ) -> dict[str, str]:
        return {"scope": scope}
