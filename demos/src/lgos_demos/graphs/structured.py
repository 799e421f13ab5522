"""``structured``: a graph that lets the client tune its model and ask for
structured output.

It declares every generation control and ``GraphFeature.STRUCTURED_OUTPUT``
(``registry.py``), so LGOS validates ``temperature``, ``top_p``, the output
limit, ``stop``, ``seed``, the penalties and a JSON schema format, and hands
them over in the protocol-neutral ``GraphRequest``. ``generation_context``
(the ``context_factory``) passes them to the node, which binds them to its
chat model: the options as model keyword arguments, the schema as the
model's own ``response_format``. The model's text streams as the answer
(the JSON itself, when a schema was asked for), and LGOS checks it against
the schema before the Response completes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GenerationOptions,
    GraphRequest,
    OutputSchema,
)


@dataclass(frozen=True, slots=True)
class GenerationContext:
    """What the request asks of the model."""

    options: GenerationOptions
    output_schema: OutputSchema | None = None

    def model_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the chat model: the controls set, and a
        Chat Completions ``response_format`` when a schema was asked for."""
        kwargs = self.options.model_kwargs()
        if self.output_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": self.output_schema.name,
                    "schema": dict(self.output_schema.schema),
                    "strict": bool(self.output_schema.strict),
                },
            }
        return kwargs


def generation_context(
    request: GraphRequest, settings: ClientSettings | None
) -> GenerationContext:
    return GenerationContext(request.generation, request.output_schema)


def build_structured_graph(
    model: BaseChatModel,
) -> Pregel[MessagesState, GenerationContext, MessagesState, MessagesState]:
    async def answer(
        state: MessagesState, runtime: Runtime[GenerationContext]
    ) -> dict[str, list[BaseMessage]]:
        bound = model.bind(**runtime.context.model_kwargs())
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=GenerationContext)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()
