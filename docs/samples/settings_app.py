from typing import Any, Literal

from fastapi import FastAPI
from langchain_core.messages import SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from pydantic import Field


class TutorSettings(ClientSettings):
    """What a client may change per request; every field needs a default."""

    audience: Literal["child", "general", "expert"] = "general"
    max_sentences: int = Field(default=3, ge=1, le=10)


# The stand-in model repeats the instructions it was given.
model = ScriptedChatModel(responder=lambda messages: messages[0].text)


async def explain(
    state: MessagesState, runtime: Runtime[TutorSettings]
) -> dict[str, Any]:
    settings = runtime.context
    instructions = SystemMessage(
        f"Explain for a {settings.audience} audience "
        f"in at most {settings.max_sentences} sentences."
    )
    return {"messages": [await model.ainvoke([instructions, *state["messages"]])]}


builder = StateGraph(MessagesState, context_schema=TutorSettings)
builder.add_node(explain)
builder.add_edge(START, "explain")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "tutor": GraphConfig(
                graph=builder.compile(),
                description="Explains things for the audience you choose.",
                client_settings=TutorSettings,
            )
        }
    ),
    app=app,
).bind_openai_api()
