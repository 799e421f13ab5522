"""``simple``: one model call shaped by client runtime settings.

Demonstrates ``ClientSettings``: clients send
``metadata={"lgos_settings": '{"audience": "expert", "use_history": false}'}``
and ``GET /v1/models/simple`` advertises the schema and defaults. ``audience``
picks the system instruction; ``use_history=false`` sends the model only the
latest user turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph_openai_serve import ClientSettings
from pydantic import Field

Audience = Literal["general", "expert", "child"]

INSTRUCTIONS: dict[str, str] = {
    "general": "Answer for a general audience, in plain words without jargon.",
    "expert": "Answer for an expert audience, precisely and technically.",
    "child": "Answer for a child, in short sentences and simple words.",
}


class SimpleSettings(ClientSettings):
    """What a client may change per request."""

    audience: Audience = Field(default="general", description="Who the answer is for.")
    use_history: bool = Field(
        default=True,
        description="Let the model see earlier turns, not only the latest message.",
    )


def visible_history(
    messages: Sequence[BaseMessage], use_history: bool
) -> list[BaseMessage]:
    """All messages, or system messages plus the latest user turn."""
    if use_history:
        return list(messages)
    last_user = max(
        (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0
    )
    system = [m for m in messages[:last_user] if isinstance(m, SystemMessage)]
    return [*system, *messages[last_user:]]


def build_simple_graph(
    model: BaseChatModel,
) -> Pregel[MessagesState, SimpleSettings, MessagesState, MessagesState]:
    async def answer(
        state: MessagesState, runtime: Runtime[SimpleSettings]
    ) -> dict[str, list[BaseMessage]]:
        settings = runtime.context
        prompt = SystemMessage(content=INSTRUCTIONS[settings.audience])
        history = visible_history(state["messages"], settings.use_history)
        return {"messages": [await model.ainvoke([prompt, *history])]}

    builder = StateGraph(MessagesState, context_schema=SimpleSettings)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="simple")
