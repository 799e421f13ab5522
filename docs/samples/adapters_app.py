from dataclasses import dataclass
from typing import Any, TypedDict

from fastapi import FastAPI
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphRegistry,
    GraphRequest,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel


class QAState(TypedDict):
    """The graph's own state: no `messages` list."""

    question: str
    history: list[BaseMessage]
    answer: str


@dataclass(frozen=True)
class Caller:
    """Per-request values the graph reads from its runtime context."""

    user: str
    locale: str


def request_to_input(request: GraphRequest, messages: list[BaseMessage]) -> QAState:
    *history, last = messages
    return {"question": last.text, "history": history, "answer": ""}


def context_factory(request: GraphRequest, settings: ClientSettings | None) -> Caller:
    return Caller(
        user=request.user or "anonymous",
        locale=request.metadata.get("locale", "en"),
    )


def output_to_message(output: QAState) -> AIMessage:
    return AIMessage(content=output["answer"])


# The stand-in model repeats its instructions and the question.
model = ScriptedChatModel(
    responder=lambda messages: f"{messages[0].text} Q: {messages[-1].text}"
)


async def answer(state: QAState, runtime: Runtime[Caller]) -> dict[str, Any]:
    caller = runtime.context
    prompt = [
        SystemMessage(f"[for {caller.user}, locale {caller.locale}]"),
        *state["history"],
        HumanMessage(state["question"]),
    ]
    reply = await model.ainvoke(prompt)
    return {"answer": reply.text}


builder = StateGraph(QAState, context_schema=Caller)
builder.add_node(answer)
builder.add_edge(START, "answer")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "qa": GraphConfig(
                graph=builder.compile(),
                description="Answers one question; its state has no messages.",
                request_to_input=request_to_input,
                context_factory=context_factory,
                output_to_message=output_to_message,
            )
        }
    ),
    app=app,
).bind_openai_api()
